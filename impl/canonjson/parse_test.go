package canonjson_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
)

// Documents serde_json::from_slice accepts, with their compact re-serialization (the same
// in both modes: no numbers that the modes treat differently).
//
// Spec: ENC-013, ENC-014, ENC-018, ENC-019, ENC-023
func TestParseAccepts(t *testing.T) {
	for in, want := range map[string]string{
		"null":                         "null",
		" \t\r\n true \t\r\n":          "true",
		"false\r":                      "false",
		`"\u00e9\u00E9"`:               `"éé"`,
		`"\ud83d\ude00"`:               `"😀"`,
		`"\uD83D\uDE00"`:               `"😀"`,
		`"\/\"\\\b\f\n\r\t"`:           `"/\"\\\b\f\n\r\t"`,
		`"\u0000\u001F\u007f"`:         "\"\\u0000\\u001f\x7f\"",
		`"\u2028 \u0041"`:              "\"\u2028 A\"",
		"\"é😀\u2029\x7f\"":             "\"é😀\u2029\x7f\"",
		"[ 1 , [ ] , { } , \"\" ]":     `[1,[],{},""]`,
		`{ "a" : { "b" : [ null ] } }`: `{"a":{"b":[null]}}`,
		`{"\u0074ype":1,"type":2}`:     `{"type":2}`,
		"0":                            "0",
		"[-1,0.5,1e-7]":                "[-1,0.5,1e-7]",
	} {
		for _, m := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
			v, err := canonjson.ParseValue([]byte(in), m)
			if err != nil {
				t.Errorf("%v %q: %v", m, in, err)
				continue
			}
			if got := string(v.JSON()); got != want {
				t.Errorf("%v %q: got %q, want %q", m, in, got, want)
			}
		}
	}
}

// Inputs serde_json rejects, with the offset of the offending byte as serde_json reports
// it (its peek position); -1 means "do not check the offset".
//
// Spec: ENC-013, ENC-014, ENC-015, ENC-016, ENC-017, ENC-018, ENC-019, ENC-020, ERR-020
func TestParseRejects(t *testing.T) {
	cases := []struct {
		name, in string
		offset   int
	}{
		{"empty", "", 0},
		{"only whitespace", " \n", 2},
		{"BOM", "\xef\xbb\xbf{}", 0},
		{"BOM before whitespace", "\xef\xbb\xbf 1", 0},
		{"trailing value", "1 2", 2},
		{"trailing garbage", "{} x", 3},
		{"trailing NUL", "1\x00", 1},
		{"second document", "{}{}", 2},
		{"form feed is not whitespace", "\f1", 0},
		{"vertical tab is not whitespace", "1\v", 1},
		{"NBSP is not whitespace", "\u00a01", 0},
		{"comment", "/**/1", 0},
		{"single quotes", "'a'", 0},
		{"bare word", "nul", 3},
		{"wrong case literal", "True", 0},
		{"literal prefix", "nulll", 4},
		{"trailing comma in array", "[1,]", 3},
		{"trailing comma in object", `{"a":1,}`, 7},
		{"leading comma", "[,1]", 1},
		{"missing comma", "[1 2]", 3},
		{"unquoted key", "{a:1}", 1},
		{"numeric key", "{1:1}", 1},
		{"missing colon", `{"a" 1}`, 5},
		{"missing value", `{"a":}`, 5},
		{"unclosed array", "[1", 2},
		{"unclosed object", `{"a":1`, 6},
		{"unclosed string", `"abc`, 4},
		{"mismatched bracket", "[1}", 2},
		{"leading zero", "01", 1},
		{"negative leading zero", "-01", 2},
		{"double zero", "00", 1},
		{"leading dot", ".5", 0},
		{"trailing dot", "1.", 2},
		{"dot before exponent", "1.e5", 2},
		{"leading plus", "+1", 0},
		{"bare minus", "-", 1},
		{"minus space", "- 1", 1},
		{"empty exponent", "1e", 2},
		{"signed empty exponent", "1e+", 3},
		{"double sign exponent", "1e+-1", 3},
		{"hex number", "0x10", 1},
		{"NaN", "NaN", 0},
		{"Infinity", "Infinity", 0},
		{"negative Infinity", "-Infinity", 1},
		{"invalid escape", `"\a"`, 2},
		{"escaped single quote", `"\'"`, 2},
		{"uppercase U escape", `"\U0041"`, 2},
		{"short unicode escape", `"\u12"`, -1},
		{"non-hex unicode escape", `"\u12G4"`, -1},
		{"lone high surrogate", `"\ud800"`, -1},
		{"lone low surrogate", `"\udc00"`, -1},
		{"high surrogate then char", `"\ud800x"`, -1},
		{"high surrogate then BMP escape", `"\ud800\u0041"`, -1},
		{"two high surrogates", `"\ud800\ud800"`, -1},
		{"high surrogate then other escape", `"\ud800\n"`, -1},
		{"reversed pair", `"\udc00\ud800"`, -1},
		{"invalid UTF-8 in string", "\"a\xffb\"", 2},
		{"truncated UTF-8 in string", "\"\xc3\"", 1},
		{"overlong UTF-8", "\"\xc0\xaf\"", 1},
		{"UTF-8 encoded surrogate", "\"\xed\xa0\x80\"", 1},
		{"UTF-8 beyond U+10FFFF", "\"\xf4\x90\x80\x80\"", 1},
		{"invalid UTF-8 after escape", "\"\\n\xff\"", 3},
		{"invalid UTF-8 in key", "{\"\xff\":1}", 2},
		{"invalid UTF-8 outside strings", "[1,\xff]", 3},
		{"raw newline in string", "\"a\nb\"", 2},
		{"raw tab in string", "\"\t\"", 1},
		{"raw control after escape", "\"\\t\x01\"", 3},
	}
	for c := byte(0); c < 0x20; c++ {
		cases = append(cases, struct {
			name, in string
			offset   int
		}{fmt.Sprintf("raw control 0x%02x", c), "[\"x" + string(rune(c)) + "\"]", 3})
	}
	for _, tc := range cases {
		_, err := canonjson.Parse([]byte(tc.in))
		var se *canonjson.SyntaxError
		if !errors.As(err, &se) || !errors.Is(err, canonjson.ErrSyntax) {
			t.Errorf("%s %q: got %v, want a *SyntaxError wrapping ErrSyntax", tc.name, tc.in, err)
			continue
		}
		if errors.Is(err, canonjson.ErrRecursionLimit) {
			t.Errorf("%s %q: unexpected recursion-limit error", tc.name, tc.in)
		}
		if tc.offset >= 0 && se.Offset != tc.offset {
			t.Errorf("%s %q: offset %d, want %d (%v)", tc.name, tc.in, se.Offset, tc.offset, err)
		}
		for _, m := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
			if _, err := canonjson.ParseValue([]byte(tc.in), m); !errors.Is(err, canonjson.ErrSyntax) {
				t.Errorf("%s %q: ParseValue(%v) accepted it", tc.name, tc.in, m)
			}
		}
	}
}

func nested(open, close string, depth int, inner string) string {
	return strings.Repeat(open, depth) + inner + strings.Repeat(close, depth)
}

// serde_json starts a depth budget at 128 and refuses the container that brings it to
// zero, so 127 nested containers pass and the 128th opening bracket is refused.
//
// Spec: ENC-021, ERR-020
func TestNestingLimit(t *testing.T) {
	ok := []string{
		nested("[", "]", 127, ""),
		nested("[", "]", 127, "1"),
		nested(`{"a":`, "}", 127, "null"),
		nested(`[{"a":`, "}]", 63, "[]") + "",
	}
	for _, doc := range ok {
		if _, err := canonjson.Parse([]byte(doc)); err != nil {
			t.Errorf("%d bytes nested: %v", len(doc), err)
		}
		for _, m := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
			v, err := canonjson.ParseValue([]byte(doc), m)
			if err != nil {
				t.Errorf("ParseValue %v: %v", m, err)
			} else if string(v.JSON()) != doc {
				t.Errorf("ParseValue %v: did not re-serialize to itself", m)
			}
		}
	}
	bad := []struct {
		doc    string
		offset int
	}{
		{nested("[", "]", 128, ""), 127},
		{nested("[", "]", 128, "1"), 127},
		{nested(`{"a":`, "}", 128, "null"), 127 * 5},
		{nested(`[{"a":`, "}]", 64, "[]"), 63*6 + 1}, // the 128th container is the 64th "{"
		{nested("[", "]", 1000, ""), 127},
		{strings.Repeat("[", 200), 127}, // limit hit before the missing brackets
	}
	for _, tc := range bad {
		_, err := canonjson.Parse([]byte(tc.doc))
		var se *canonjson.SyntaxError
		if !errors.Is(err, canonjson.ErrRecursionLimit) || !errors.Is(err, canonjson.ErrSyntax) || !errors.As(err, &se) {
			t.Errorf("%.20s…: got %v, want a recursion-limit syntax error", tc.doc, err)
			continue
		}
		if se.Offset != tc.offset {
			t.Errorf("%.20s…: offset %d, want %d", tc.doc, se.Offset, tc.offset)
		}
		for _, m := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
			if _, err := canonjson.ParseValue([]byte(tc.doc), m); !errors.Is(err, canonjson.ErrRecursionLimit) {
				t.Errorf("ParseValue %v: got %v", m, err)
			}
		}
	}
	// An error earlier in the document wins over the limit later in it.
	if _, err := canonjson.Parse([]byte("[x," + nested("[", "]", 200, "") + "]")); errors.Is(err, canonjson.ErrRecursionLimit) {
		t.Errorf("earlier syntax error should be reported, got %v", err)
	}
	// FromNode applies the same limit to hand-built trees.
	root := &canonjson.Node{Kind: canonjson.NodeArray}
	n := root
	for range 127 {
		child := &canonjson.Node{Kind: canonjson.NodeArray}
		n.Elems = []*canonjson.Node{child}
		n = child
	}
	if _, err := canonjson.FromNode(root, canonjson.Lossy); !errors.Is(err, canonjson.ErrRecursionLimit) {
		t.Errorf("FromNode at 128 levels: got %v", err)
	}
	if _, err := canonjson.FromNode(root.Elems[0], canonjson.Lossy); err != nil {
		t.Errorf("FromNode at 127 levels: %v", err)
	}
}

// The syntax tree keeps document order, duplicate keys, decoded strings and raw tokens.
//
// Spec: ENC-022, ENC-023
func TestParseTree(t *testing.T) {
	n, err := canonjson.Parse([]byte(` {"b":1.50,"a":[true,"x\u0041"],"b":-0, "\u0062":null} `))
	if err != nil {
		t.Fatal(err)
	}
	if n.Kind != canonjson.NodeObject || len(n.Members) != 4 {
		t.Fatalf("got %+v", n)
	}
	keys := []string{"b", "a", "b", "b"}
	for i, k := range keys {
		if n.Members[i].Key != k {
			t.Errorf("member %d key %q, want %q", i, n.Members[i].Key, k)
		}
	}
	if v := n.Members[0].Value; v.Kind != canonjson.NodeNumber || v.Text != "1.50" {
		t.Errorf("raw token lost: %+v", v)
	}
	if v := n.Members[2].Value; v.Kind != canonjson.NodeNumber || v.Text != "-0" {
		t.Errorf("raw token lost: %+v", v)
	}
	arr := n.Members[1].Value
	if arr.Kind != canonjson.NodeArray || len(arr.Elems) != 2 || arr.Elems[0].Kind != canonjson.NodeBool ||
		!arr.Elems[0].Bool || arr.Elems[1].Kind != canonjson.NodeString || arr.Elems[1].Text != "xA" {
		t.Errorf("array: %+v", arr)
	}
	if n.Members[3].Value.Kind != canonjson.NodeNull {
		t.Errorf("null: %+v", n.Members[3].Value)
	}
}

// Duplicate keys: the last one wins, in both modes, and keys are then sorted bytewise.
//
// Spec: ENC-003, ENC-022
func TestDuplicateKeysLastWins(t *testing.T) {
	in := `{"a":1,"b":{"x":1,"x":[2]},"a":3,"\u0061":"last"}`
	want := `{"a":"last","b":{"x":[2]}}`
	for _, m := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
		v, err := canonjson.ParseValue([]byte(in), m)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(v.JSON()); got != want {
			t.Errorf("%v: got %s, want %s", m, got, want)
		}
		if a, ok := v.Get("a"); !ok || a.StringValue() != "last" {
			t.Errorf("%v: Get(a) = %v, %v", m, a, ok)
		}
	}
	v := canonjson.Object(
		canonjson.Entry{Key: "k", Value: canonjson.Uint(1)},
		canonjson.Entry{Key: "a", Value: canonjson.Null()},
		canonjson.Entry{Key: "k", Value: canonjson.Uint(2)},
	)
	if got := string(v.JSON()); got != `{"a":null,"k":2}` {
		t.Errorf("Object: got %s", got)
	}
}

// The arbitrary_precision private number object (reference anchor A-PRESERVE,
// docs/reference-anchors.md).
//
// Spec: ENC-026, ENC-027
func TestPrivateNumberObject(t *testing.T) {
	const key = `"$serde_json::private::Number"`
	for _, tc := range []struct {
		in, preserve, lossy string // "" = rejected
	}{
		{`{` + key + `:"1E5"}`, `1e+5`, `{` + key + `:"1E5"}`},
		{`{` + key + `:"-0"}`, `0`, `{` + key + `:"-0"}`},
		{`[{ ` + key + ` : "1.50" }]`, `[1.50]`, `[{` + key + `:"1.50"}]`},
		{`{"$serde_json::private::Numb\u0065r":"7"}`, `7`, `{` + key + `:"7"}`},
		{`{` + key + `:"1e400"}`, `1e+400`, `{` + key + `:"1e400"}`},
		{`{"a":1,` + key + `:"1"}`, `{` + key + `:"1","a":1}`, `{` + key + `:"1","a":1}`},
		{`{` + key + `:"abc"}`, "", `{` + key + `:"abc"}`},
		{`{` + key + `:" 1"}`, "", `{` + key + `:" 1"}`},
		{`{` + key + `:""}`, "", `{` + key + `:""}`},
		{`{` + key + `:1}`, "", `{` + key + `:1}`},
		{`{` + key + `:null}`, "", `{` + key + `:null}`},
		{`{` + key + `:"1","a":2}`, "", `{` + key + `:"1","a":2}`},
		{`{` + key + `:"1",` + key + `:"2"}`, "", `{` + key + `:"2"}`},
	} {
		for _, m := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
			want := tc.preserve
			if m == canonjson.Lossy {
				want = tc.lossy
			}
			v, err := canonjson.ParseValue([]byte(tc.in), m)
			if want == "" {
				if !errors.Is(err, canonjson.ErrSyntax) {
					t.Errorf("%v %s: got %s, %v; want a syntax error", m, tc.in, v.JSON(), err)
				}
			} else if err != nil || string(v.JSON()) != want {
				t.Errorf("%v %s: got %s, %v; want %s", m, tc.in, v.JSON(), err, want)
			}
			// FromNode on the mode-free tree agrees with ParseValue.
			n, err := canonjson.Parse([]byte(tc.in))
			if err != nil {
				t.Fatalf("Parse %s: %v", tc.in, err)
			}
			v, err = canonjson.FromNode(n, m)
			if want == "" {
				if err == nil {
					t.Errorf("FromNode %v %s: accepted as %s", m, tc.in, v.JSON())
				}
			} else if err != nil || string(v.JSON()) != want {
				t.Errorf("FromNode %v %s: got %s, %v; want %s", m, tc.in, v.JSON(), err, want)
			}
		}
	}
}

func TestFromNodeRejectsMalformedTrees(t *testing.T) {
	for name, n := range map[string]*canonjson.Node{
		"nil":          nil,
		"bad kind":     {Kind: 99},
		"nil member":   {Kind: canonjson.NodeObject, Members: []canonjson.Member{{Key: "a"}}},
		"nil element":  {Kind: canonjson.NodeArray, Elems: []*canonjson.Node{nil}},
		"bad token":    {Kind: canonjson.NodeNumber, Text: "1."},
		"empty token":  {Kind: canonjson.NodeNumber},
		"padded token": {Kind: canonjson.NodeNumber, Text: " 1"},
	} {
		for _, m := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
			if _, err := canonjson.FromNode(n, m); err == nil {
				t.Errorf("%s %v: accepted", name, m)
			}
		}
	}
}

// A reused Parser gives the same trees and errors as Parse, and the strings of an earlier
// document survive the parses that recycle its nodes.
//
// Spec: ENC-013, ENC-017, ENC-018
func TestParserReuse(t *testing.T) {
	docs := []string{
		`{"type":"invoke","list":[1,"two",{"three":[3.5e-7,null,true]}],"esc":"a\nb\u00e9"}`,
		`[1,2`, // an error leaves nothing behind
		`"just a string with \"escapes\" and é"`,
		`{"a":{"b":{"c":[[],[{}],{"d":-0}]}}}`,
		strings.Repeat(`[{"k":"v","n":12.375},`, 2000) + `0` + strings.Repeat(`]`, 1) + "x", // error deep into a large document
		strings.Repeat(`{"id":1,"name":"item","tags":["a","bb",-7]},`, 2000),                // trailing comma
		`[` + strings.Repeat(`{"id":1,"name":"item","tags":["a","bb",-7]},`, 2000) + `{}]`,
		`{"\u0074ype":1,"type":2,"x":"y"}`,
	}
	var p canonjson.Parser
	var firstKey, firstText string
	for round := range 3 {
		for i, doc := range docs {
			got, gotErr := p.Parse([]byte(doc))
			want, wantErr := canonjson.Parse([]byte(doc))
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("round %d doc %d: Parser error %v, Parse error %v", round, i, gotErr, wantErr)
			}
			if gotErr != nil {
				continue
			}
			if g, w := treeString(got), treeString(want); g != w {
				t.Fatalf("round %d doc %d: Parser tree\n%s\nParse tree\n%s", round, i, g, w)
			}
			if round == 0 && i == 0 {
				firstKey, firstText = got.Members[2].Key, got.Members[2].Value.Text
			}
		}
	}
	if firstKey != "esc" || firstText != "a\nb\u00e9" {
		t.Errorf("strings of the first document changed after reuse: %q, %q", firstKey, firstText)
	}
}

// treeString writes a syntax tree with kinds, document order and duplicates visible.
func treeString(n *canonjson.Node) string {
	var b strings.Builder
	var walk func(n *canonjson.Node)
	walk = func(n *canonjson.Node) {
		switch n.Kind {
		case canonjson.NodeArray:
			fmt.Fprintf(&b, "[%d:", len(n.Elems))
			for _, e := range n.Elems {
				walk(e)
				b.WriteByte(',')
			}
			b.WriteByte(']')
		case canonjson.NodeObject:
			fmt.Fprintf(&b, "{%d:", len(n.Members))
			for _, m := range n.Members {
				fmt.Fprintf(&b, "%q=", m.Key)
				walk(m.Value)
				b.WriteByte(',')
			}
			b.WriteByte('}')
		default:
			fmt.Fprintf(&b, "%v(%v,%q)", n.Kind, n.Bool, n.Text)
		}
	}
	walk(n)
	return b.String()
}
