package main

import (
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

var modes = []canonjson.Mode{canonjson.Preserve, canonjson.Lossy}

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
			t := vectorfmt.CanonicalJSONTest{Case: b.newCase(row.meta, exp.err)}
			t.Input, t.InputHex = b.inputField(row.input)
			if exp.err == "" {
				t.Output = b.text(exp.out)
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
