package main

import (
	"errors"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

var modes = []canonjson.Mode{canonjson.Preserve, canonjson.Lossy}

// outcome is what the implementation did with one input.
type outcome struct {
	out string
	err string // error kind name, empty on success
}

func buildCanonicalJSON(c *checker) (string, any, *fileBuilder) {
	b := newFileBuilder(vectorfmt.CanonicalJSONFile, c)
	type key struct {
		op   canonOp
		mode canonjson.Mode
	}
	groups := map[key]*vectorfmt.CanonicalJSONGroup{}
	var order []key
	for _, op := range []canonOp{canonValue, canonPayload} {
		for _, m := range modes {
			k := key{op, m}
			typ := vectorfmt.CanonicalValueType
			if op == canonPayload {
				typ = vectorfmt.CanonicalPayloadType
			}
			groups[k] = &vectorfmt.CanonicalJSONGroup{Type: typ, Mode: m.String(), Tests: []vectorfmt.CanonicalJSONTest{}}
			order = append(order, k)
		}
	}
	for _, row := range canonicalCases {
		lossy := row.lossy
		if lossy.isZero() {
			lossy = row.preserve
		}
		if (row.preserve != lossy) != hasFlag(row.flags, "ModeDependent") {
			b.failf("%q: ModeDependent flag does not match the expectations", row.comment)
		}
		for _, m := range modes {
			exp := row.preserve
			if m == canonjson.Lossy {
				exp = lossy
			}
			var got outcome
			if row.op == canonValue {
				got = implCanonicalValue([]byte(row.input), m)
			} else {
				got = implCanonicalPayload([]byte(row.input), m)
			}
			final := reconcile(b, row.comment+" ["+m.String()+"]", exp, got)
			tc := b.newCase(row.meta, final.err)
			t := vectorfmt.CanonicalJSONTest{Case: tc}
			t.Input, t.InputHex = b.inputField(row.input)
			if final.err == "" {
				t.Output = b.text(final.out)
			}
			g := groups[key{row.op, m}]
			g.Tests = append(g.Tests, t)
		}
	}
	doc := vectorfmt.CanonicalJSON{}
	for _, k := range order {
		doc.TestGroups = append(doc.TestGroups, *groups[k])
	}
	doc.Header = b.header()
	return b.name, doc, b
}

// reconcile compares the implementation's outcome with the table's expectation, records any
// disagreement, and returns the table's expectation as the outcome to publish.
func reconcile(b *fileBuilder, what string, exp expect, got outcome) outcome {
	switch {
	case exp.err != "":
		if got.err != exp.err {
			b.failf("%s: expected error %s, implementation gave %s", what, exp.err, describe(got))
		}
		return outcome{err: exp.err}
	default:
		if got.err != "" || got.out != exp.out {
			b.failf("%s: expected output %q, implementation gave %s", what, clip(exp.out), describe(got))
		}
		return outcome{out: exp.out}
	}
}

func describe(o outcome) string {
	if o.err != "" {
		return "error " + o.err
	}
	return "output " + quoteClip(o.out)
}

func quoteClip(s string) string { return "\"" + clip(s) + "\"" }

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

func hasFlag(fs []string, f string) bool {
	for _, x := range fs {
		if x == f {
			return true
		}
	}
	return false
}

// implCanonicalValue reads input as a JSON value and writes it back canonically.
func implCanonicalValue(input []byte, m canonjson.Mode) outcome {
	v, err := canonjson.ParseValue(input, m)
	if err != nil {
		return outcome{err: canonjsonKind(err)}
	}
	return outcome{out: string(v.JSON())}
}

// canonjsonKind maps a canonjson error to its protocol-level kind (Serialization).
func canonjsonKind(err error) string {
	if errors.Is(err, canonjson.ErrSyntax) {
		return "Serialization"
	}
	return "unexpected(" + err.Error() + ")"
}
