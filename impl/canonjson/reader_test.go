package canonjson_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/splashv5/conform/impl/canonjson"
)

// Reading any Value token by token describes it exactly: the tokens rebuild an Equal
// Value and, written back with their keys and separators, spell its canonical text; the
// greatest token depth is the value's depth. The same holds for the deferred form, read
// in place from the received text.
//
// Spec: ENC-052
func TestPropertyReaderRebuildsValue(t *testing.T) {
	// A canonical container is always deferred, so the deferred reading below is exercised
	// whenever the generator draws one (about a third of the cases).
	for _, m := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
		if !deferredForm(t, `{"a":[1,"x",true],"b":{"c":null}}`, m).IsDeferred() {
			t.Fatalf("%s: a canonical container was not deferred", m)
		}
	}
	shared := new(canonjson.Reader) // reused across cases, as a receiver would
	cases, deferred := 0, 0
	rapid.Check(t, func(t *rapid.T) {
		cases++
		v := valueGen(3).Draw(t, "v")
		text := string(v.JSON())
		check := func(form string, x canonjson.Value, m canonjson.Mode, want canonjson.Value) {
			r := canonjson.NewReader(x)
			if rapid.Bool().Draw(t, "reuse") {
				shared.Reset(x)
				r = shared
			}
			got, out, depth, err := canonjson.RebuildFromReader(r, m)
			if err != nil {
				t.Fatalf("%s %s %s: %v", form, m, text, err)
			}
			if !canonjson.Equal(got, want) {
				t.Fatalf("%s %s %s: tokens rebuild %s", form, m, text, got.JSON())
			}
			if out != text {
				t.Fatalf("%s %s %s: tokens write back %s", form, m, text, out)
			}
			if !x.WithinDepth(depth) || x.WithinDepth(depth-1) {
				t.Fatalf("%s %s %s: greatest token depth %d is not the value's depth", form, m, text, depth)
			}
		}
		check("built", v, canonjson.Preserve, v)
		if k := v.Kind(); k != canonjson.KindArray && k != canonjson.KindObject {
			return
		}
		for _, m := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
			// The verifier gives up on keys with escapes, and in Lossy mode on floats
			// that are not Lossy fixed points: such text is parsed, not deferred.
			d := deferredForm(t, text, m)
			if !d.IsDeferred() {
				continue
			}
			deferred++
			want := v
			if m == canonjson.Lossy {
				want = d
			}
			check("deferred", d, m, want)
		}
	})
	if deferred == 0 {
		t.Fatalf("no deferred form in %d cases: the deferred reading is not exercised", cases)
	}
}

// deferredForm returns the value of text as a receiver gets it: read with ParseDeferring
// under m, deferred when its text is canonical.
func deferredForm(t interface{ Fatalf(string, ...any) }, text string, m canonjson.Mode) canonjson.Value {
	var ps canonjson.Parser
	n, err := ps.ParseDeferring([]byte(`{"value":`+text+`}`), "value", m)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	outer, err := canonjson.FromNode(n, m)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	v, _ := outer.Get("value")
	return v
}

// dump lists the token stream of r, one token a line: its depth, its key when it has
// one, and the token (a string quoted Go-style, with its escapes decoded).
func dump(r *canonjson.Reader) []string {
	var out []string
	for r.Next() {
		line := strconv.Itoa(r.Depth()) + " "
		if k := r.Key(); k != "" {
			line += k + ": "
		}
		switch r.Kind() {
		case canonjson.TokenNull:
			line += "null"
		case canonjson.TokenBool:
			line += strconv.FormatBool(r.Bool())
		case canonjson.TokenNumber:
			line += r.NumberText()
		case canonjson.TokenString:
			line += strconv.Quote(r.Str())
		case canonjson.TokenBeginArray:
			line += "["
		case canonjson.TokenEndArray:
			line += "]"
		case canonjson.TokenBeginObject:
			line += "{"
		case canonjson.TokenEndObject:
			line += "}"
		}
		out = append(out, line)
	}
	if err := r.Err(); err != nil {
		out = append(out, "error: "+err.Error())
	}
	return out
}

// The token stream of hand-picked values, read built and deferred.
//
// Spec: ENC-005, ENC-006, ENC-052
func TestReaderTokens(t *testing.T) {
	for _, tc := range []struct {
		text     string
		want     []string
		parsedAs string // "built" when the verifier gives up on the text, so it is not deferred
	}{
		// Scalars at the top level: one token.
		{`null`, []string{"1 null"}, ""},
		{`true`, []string{"1 true"}, ""},
		{`false`, []string{"1 false"}, ""},
		{`-12`, []string{"1 -12"}, ""},
		{`1.5e-7`, []string{"1 1.5e-7"}, ""},
		{`"a\"b"`, []string{`1 "a\"b"`}, ""},
		// Empty and nested empty containers.
		{`[]`, []string{"1 [", "1 ]"}, ""},
		{`{}`, []string{"1 {", "1 }"}, ""},
		{`[[],{},[[]],[{}]]`, []string{"1 [", "2 [", "2 ]", "2 {", "2 }", "2 [", "3 [", "3 ]", "2 ]", "2 [", "3 {", "3 }", "2 ]", "1 ]"}, ""},
		{`{"a":{},"b":[],"c":{"d":[]}}`, []string{"1 {", "2 a: {", "2 }", "2 b: [", "2 ]", "2 c: {", "3 d: [", "3 ]", "2 }", "1 }"}, ""},
		// Every escape the writer produces, and text around and between escapes.
		{`["\"","\\","\b\f\n\r\t","\u0000\u0001\u000b\u001f","x\ty","é\u0007😀\"","plain é"]`, []string{
			"1 [", `2 "\""`, `2 "\\"`, `2 "\b\f\n\r\t"`, `2 "\x00\x01\v\x1f"`, `2 "x\ty"`, `2 "é\a😀\""`, `2 "plain é"`, "1 ]",
		}, ""},
		// Keys: on member values and begin tokens, never on elements or end tokens.
		{`{"a":[1,{"b":null}],"c":"s","d":{"e":true}}`, []string{
			"1 {", "2 a: [", "3 1", "3 {", "4 b: null", "3 }", "2 ]", "2 c: \"s\"", "2 d: {", "3 e: true", "2 }", "1 }",
		}, ""},
		{`[{"k":[{"k":0}]},"k"]`, []string{"1 [", "2 {", "3 k: [", "4 {", "5 k: 0", "4 }", "3 ]", "2 }", `2 "k"`, "1 ]"}, ""},
		// Keys with escapes: written for a built Value, never in verified text.
		{`{"\u0000\"":[],"\n":1}`, []string{"1 {", "2 \x00\": [", "2 ]", "2 \n: 1", "1 }"}, "built"},
	} {
		built, err := canonjson.ParseValue([]byte(tc.text), canonjson.Preserve)
		if err != nil {
			t.Fatal(err)
		}
		if string(built.JSON()) != tc.text {
			t.Fatalf("%s is not canonical", tc.text)
		}
		if got := dump(canonjson.NewReader(built)); !slicesEqual(got, tc.want) {
			t.Errorf("built %s:\n got %q\nwant %q", tc.text, got, tc.want)
		}
		if tc.text[0] != '[' && tc.text[0] != '{' {
			continue
		}
		d := deferredForm(t, tc.text, canonjson.Preserve)
		if d.IsDeferred() != (tc.parsedAs == "") {
			t.Fatalf("%s: deferred %v", tc.text, d.IsDeferred())
		}
		if got := dump(canonjson.NewReader(d)); !slicesEqual(got, tc.want) {
			t.Errorf("deferred %s:\n got %q\nwant %q", tc.text, got, tc.want)
		}
	}
}

func slicesEqual(a, b []string) bool { return strings.Join(a, "\n") == strings.Join(b, "\n") }

// Accessors answer for the current token only, and the zero Reader reads nothing.
func TestReaderAccessors(t *testing.T) {
	var zero canonjson.Reader
	if zero.Next() || zero.Kind() != canonjson.TokenNone || zero.Err() != nil || zero.Depth() != 0 {
		t.Fatal("the zero Reader has tokens")
	}
	r := canonjson.NewReader(deferredForm(t, `{"a":"x\ny","b":2.5,"c":true}`, canonjson.Preserve))
	if r.Kind() != canonjson.TokenNone || r.Key() != "" || r.Str() != "" {
		t.Fatal("a token before the first Next")
	}
	r.Next() // {
	r.Next() // "a"
	if r.Str() != "x\ny" || r.NumberText() != "" || r.Bool() || string(r.AppendStr([]byte("<"))) != "<x\ny" {
		t.Fatalf("string token: Str %q NumberText %q", r.Str(), r.NumberText())
	}
	r.Next() // 2.5
	if r.NumberText() != "2.5" || r.Str() != "" || string(r.AppendStr([]byte("<"))) != "<" || r.Key() != "b" {
		t.Fatalf("number token: NumberText %q Str %q Key %q", r.NumberText(), r.Str(), r.Key())
	}
	r.Next() // true
	if !r.Bool() || r.NumberText() != "" {
		t.Fatal("bool token")
	}
	r.Next() // }
	if r.Kind() != canonjson.TokenEndObject || r.Bool() || r.Key() != "" || r.Depth() != 1 {
		t.Fatalf("end token: %v key %q depth %d", r.Kind(), r.Key(), r.Depth())
	}
	if r.Next() || r.Kind() != canonjson.TokenNone || r.Next() || r.Err() != nil {
		t.Fatal("tokens after the end")
	}
	for k, want := range map[canonjson.TokenKind]string{
		canonjson.TokenNone: "none", canonjson.TokenNull: "null", canonjson.TokenBool: "bool",
		canonjson.TokenNumber: "number", canonjson.TokenString: "string",
		canonjson.TokenBeginArray: "begin-array", canonjson.TokenEndArray: "end-array",
		canonjson.TokenBeginObject: "begin-object", canonjson.TokenEndObject: "end-object",
		canonjson.TokenKind(42): "TokenKind(42)",
	} {
		if k.String() != want {
			t.Errorf("TokenKind %d is %q, want %q", uint8(k), k.String(), want)
		}
	}
}

// Skip moves from a begin token to its end token, over strings that hold brackets and
// escaped quotes, and does nothing on other tokens.
func TestReaderSkip(t *testing.T) {
	text := `[{"a":"]}\"[{","b":[1,[2,"\\"]]},3,[[]],{"c":{"d":"}"}}]`
	for _, form := range []string{"built", "deferred"} {
		v, err := canonjson.ParseValue([]byte(text), canonjson.Preserve)
		if err != nil {
			t.Fatal(err)
		}
		if form == "deferred" {
			if v = deferredForm(t, text, canonjson.Preserve); !v.IsDeferred() {
				t.Fatal("not deferred")
			}
		}
		r := canonjson.NewReader(v)
		var got []string
		for r.Next() {
			kind, depth := r.Kind(), r.Depth()
			if kind == canonjson.TokenBeginObject || kind == canonjson.TokenBeginArray && depth == 3 {
				r.Skip()
			}
			if kind == canonjson.TokenNumber {
				r.Skip() // nothing
			}
			got = append(got, fmt.Sprintf("%d %v>%v %q", depth, kind, r.Kind(), r.Key()))
		}
		want := []string{
			`1 begin-array>begin-array ""`, `2 begin-object>end-object ""`, `2 number>number ""`,
			`2 begin-array>begin-array ""`, `3 begin-array>end-array ""`, `2 end-array>end-array ""`,
			`2 begin-object>end-object ""`, `1 end-array>end-array ""`,
		}
		if !slicesEqual(got, want) || r.Err() != nil {
			t.Errorf("%s:\n got %q\nwant %q (err %v)", form, got, want, r.Err())
		}
	}
	// Skipping a member's value: the next token is the next member.
	r := canonjson.NewReader(deferredForm(t, `{"a":{"x":[1]},"b":2}`, canonjson.Preserve))
	r.Next()
	r.Next()
	if r.Key() != "a" {
		t.Fatalf("key %q", r.Key())
	}
	r.Skip()
	if r.Kind() != canonjson.TokenEndObject || r.Depth() != 2 || r.Key() != "" {
		t.Fatalf("after Skip: %v depth %d key %q", r.Kind(), r.Depth(), r.Key())
	}
	if !r.Next() || r.Key() != "b" || r.NumberText() != "2" || r.Depth() != 2 {
		t.Fatalf("after the skipped member: %v key %q", r.Kind(), r.Key())
	}
}

// Strings a Reader returns stay valid when it is Reset to another value, even though the
// Reader reuses the buffer it writes a built value's encoding into.
func TestReaderStringsOutliveReset(t *testing.T) {
	r := canonjson.NewReader(canonjson.Array(canonjson.String("first"), canonjson.Uint(11)))
	r.Next()
	r.Next()
	s := r.Str()
	r.Next()
	n := r.NumberText()
	for _, other := range []string{"second", "third!"} {
		r.Reset(canonjson.Array(canonjson.String(other), canonjson.Uint(22)))
		if got := dump(r); !slicesEqual(got, []string{"1 [", `2 "` + other + `"`, "2 22", "1 ]"}) {
			t.Fatalf("after Reset: %q", got)
		}
	}
	if s != "first" || n != "11" {
		t.Fatalf("strings from before Reset changed to %q and %q", s, n)
	}
}
