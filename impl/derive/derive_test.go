package derive

import (
	"errors"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
)

func parse(t *testing.T, s string) *canonjson.Node {
	t.Helper()
	n, err := canonjson.Parse([]byte(s))
	if err != nil {
		t.Fatalf("Parse(%s): %v", s, err)
	}
	return n
}

var (
	direct           = Context{Mode: canonjson.Preserve}
	directLossy      = Context{Mode: canonjson.Lossy}
	bufferedPreserve = Context{Mode: canonjson.Preserve, Buffered: true}
	bufferedLossy    = Context{Mode: canonjson.Lossy, Buffered: true}
)

// sample mirrors a small serde struct:
//
//	struct Sample { version: u16, name: String, #[serde(default)] count: u32, #[serde(default)] note: Option<String> }
type sample struct {
	Version uint16
	Name    string
	Count   uint32
	Note    *string
}

var sampleStruct = Struct{Name: "Sample", Fields: []Field{
	{Name: "version"}, {Name: "name"}, {Name: "count", Default: true}, {Name: "note", Default: true},
}}

func decodeSample(n *canonjson.Node, c Context, deny bool) (sample, error) {
	s := sampleStruct
	s.DenyUnknown = deny
	var out sample
	err := s.Decode(n, func(i int, v *canonjson.Node) error {
		var err error
		switch i {
		case 0:
			out.Version, err = U16(v, c)
		case 1:
			out.Name, err = String(v)
		case 2:
			out.Count, err = U32(v, c)
		case 3:
			if IsNull(v) {
				out.Note = nil
				return nil
			}
			var s string
			s, err = String(v)
			out.Note = &s
		}
		return err
	})
	return out, err
}

// Spec: ENC-023, ENC-044, ENC-045, ENC-046, ENC-047, ENC-049
func TestStructRules(t *testing.T) {
	note := func(s string) *string { return &s }
	tests := []struct {
		name  string
		input string
		deny  bool
		want  *sample // nil: an error is expected
	}{
		{"object in declaration order", `{"version":5,"name":"a","count":2,"note":"n"}`, false, &sample{5, "a", 2, note("n")}},
		{"object in any order", `{"note":"n","count":2,"name":"a","version":5}`, false, &sample{5, "a", 2, note("n")}},
		{"missing default and option fields take defaults", `{"version":5,"name":"a"}`, false, &sample{5, "a", 0, nil}},
		{"null for an Option field is None", `{"version":5,"name":"a","note":null}`, false, &sample{5, "a", 0, nil}},
		{"null for a non-Option field is an error", `{"version":5,"name":"a","count":null}`, false, nil},
		{"null for a required field is an error", `{"version":5,"name":null}`, false, nil},
		{"missing required field", `{"version":5}`, false, nil},
		{"duplicate field", `{"version":5,"name":"a","name":"b"}`, false, nil},
		{"duplicate default field", `{"version":5,"name":"a","count":1,"count":1}`, false, nil},
		{"unknown field ignored", `{"version":5,"x":{"deep":[1,2]},"name":"a"}`, false, &sample{5, "a", 0, nil}},
		{"unknown field denied", `{"version":5,"x":1,"name":"a"}`, true, nil},
		{"duplicate unknown fields ignored", `{"version":5,"x":1,"x":2,"name":"a"}`, false, &sample{5, "a", 0, nil}},
		{"keys are case-sensitive", `{"Version":5,"name":"a"}`, false, nil},
		{"case variant is unknown under deny", `{"version":5,"name":"a","Name":"b"}`, true, nil},
		{"escaped key spelling matches", `{"\u0076ersion":5,"n\u0061me":"a"}`, false, &sample{5, "a", 0, nil}},
		{"escaped duplicate is a duplicate", `{"version":5,"name":"a","\u006eame":"b"}`, false, nil},
		{"positional array", `[5,"a",2,"n"]`, false, &sample{5, "a", 2, note("n")}},
		{"positional array leaves off trailing defaults", `[5,"a"]`, false, &sample{5, "a", 0, nil}},
		{"positional array leaves off one default", `[5,"a",7]`, false, &sample{5, "a", 7, nil}},
		{"positional array too short", `[5]`, false, nil},
		{"positional array empty", `[]`, false, nil},
		{"positional array too long", `[5,"a",2,"n",true]`, false, nil},
		{"positional array under deny", `[5,"a"]`, true, &sample{5, "a", 0, nil}},
		{"string is not a struct", `"x"`, false, nil},
		{"null is not a struct", `null`, false, nil},
		{"number is not a struct", `5`, false, nil},
		{"wrong field type", `{"version":"5","name":"a"}`, false, nil},
		{"string field given a number", `{"version":5,"name":1}`, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeSample(parse(t, tt.input), direct, tt.deny)
			if tt.want == nil {
				if err == nil {
					t.Fatalf("decoded %+v, want an error", got)
				}
				if !errors.Is(err, ErrDecode) {
					t.Fatalf("error %v does not wrap ErrDecode", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got.Version != tt.want.Version || got.Name != tt.want.Name || got.Count != tt.want.Count ||
				(got.Note == nil) != (tt.want.Note == nil) || (got.Note != nil && *got.Note != *tt.want.Note) {
				t.Fatalf("got %+v, want %+v", got, *tt.want)
			}
		})
	}
}

func TestStructErrorPath(t *testing.T) {
	_, err := decodeSample(parse(t, `{"version":70000,"name":"a"}`), direct, false)
	var de *Error
	if !errors.As(err, &de) || de.Path != "version" {
		t.Fatalf("error %v: want path \"version\"", err)
	}
}

// Spec: ENC-042, ENC-043
func TestUint(t *testing.T) {
	type want struct {
		v  uint64
		ok bool
	}
	tests := []struct {
		token string
		bits  int
		c     Context
		want  want
	}{
		{"0", 8, direct, want{0, true}},
		{"255", 8, direct, want{255, true}},
		{"256", 8, direct, want{0, false}},
		{"65535", 16, direct, want{65535, true}},
		{"65536", 16, direct, want{0, false}},
		{"4294967295", 32, direct, want{4294967295, true}},
		{"4294967296", 32, direct, want{0, false}},
		{"18446744073709551615", 64, direct, want{18446744073709551615, true}},
		{"18446744073709551616", 64, direct, want{0, false}},
		{"5.0", 32, direct, want{0, false}},
		{"5e0", 32, direct, want{0, false}},
		{"5E0", 32, direct, want{0, false}},
		{"-1", 32, direct, want{0, false}},
		{"-1", 32, bufferedPreserve, want{0, false}},
		// -0 is the float -0.0 everywhere except in buffered content of an
		// arbitrary_precision build, where it is the integer 0.
		{"-0", 16, direct, want{0, false}},
		{"-0", 16, directLossy, want{0, false}},
		{"-0", 16, bufferedLossy, want{0, false}},
		{"-0", 16, bufferedPreserve, want{0, true}},
		{"-0", 64, bufferedPreserve, want{0, true}},
	}
	for _, tt := range tests {
		n := &canonjson.Node{Kind: canonjson.NodeNumber, Text: tt.token}
		v, err := Uint(n, tt.c, tt.bits)
		if tt.want.ok != (err == nil) || (err == nil && v != tt.want.v) {
			t.Errorf("Uint(%s, %+v, %d) = %d, %v; want %d ok=%v", tt.token, tt.c, tt.bits, v, err, tt.want.v, tt.want.ok)
		}
	}
	for _, in := range []string{`"5"`, `true`, `null`, `[5]`, `{}`} {
		if _, err := U32(parse(t, in), bufferedPreserve); err == nil {
			t.Errorf("U32(%s) accepted a non-number", in)
		}
	}
}

var formats = []string{"text", "json"}

// Spec: ENC-051, MSG-006
func TestUnitEnum(t *testing.T) {
	tests := []struct {
		input string
		c     Context
		want  int // -1: error
	}{
		{`"text"`, direct, 0},
		{`"json"`, direct, 1},
		{`"Text"`, direct, -1},
		{`"TEXT"`, direct, -1},
		{`"bytes"`, direct, -1},
		{`"\u0074ext"`, direct, 0},
		{`{"json":null}`, direct, 1},
		{`{"json":null}`, bufferedLossy, 1},
		{`{"json":{}}`, direct, -1},
		{`{"json":{}}`, bufferedLossy, 1},
		{`{"json":[]}`, bufferedLossy, -1},
		{`{"json":0}`, bufferedLossy, -1},
		{`{"json":null,"text":null}`, bufferedLossy, -1},
		{`{}`, bufferedLossy, -1},
		{`{"bogus":null}`, direct, -1},
		{`0`, bufferedLossy, -1},
		{`1`, direct, -1},
		{`null`, direct, -1},
		{`["text"]`, direct, -1},
	}
	for _, tt := range tests {
		got, err := UnitEnum(parse(t, tt.input), tt.c, formats)
		if tt.want < 0 {
			if err == nil {
				t.Errorf("UnitEnum(%s, %+v) = %d, want an error", tt.input, tt.c, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("UnitEnum(%s, %+v) = %d, %v; want %d", tt.input, tt.c, got, err, tt.want)
		}
	}
}

func TestIdentifier(t *testing.T) {
	tests := []struct {
		input string
		c     Context
		want  int
	}{
		{`"json"`, direct, 1},
		{`"json"`, bufferedPreserve, 1},
		{`1`, direct, -1},
		{`1`, bufferedPreserve, 1},
		{`0`, bufferedLossy, 0},
		{`2`, bufferedLossy, -1},
		{`-0`, bufferedPreserve, -1},
		{`1.0`, bufferedPreserve, -1},
		{`{"json":null}`, bufferedPreserve, -1},
		{`null`, bufferedPreserve, -1},
		{`"JSON"`, bufferedPreserve, -1},
	}
	for _, tt := range tests {
		got, err := Identifier(parse(t, tt.input), tt.c, formats)
		if tt.want < 0 {
			if err == nil {
				t.Errorf("Identifier(%s, %+v) = %d, want an error", tt.input, tt.c, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Identifier(%s, %+v) = %d, %v; want %d", tt.input, tt.c, got, err, tt.want)
		}
	}
}

var states = Tagged{Name: "OperationStatus", Tag: "state", Variants: []string{"running", "succeeded", "failed", "cancelled"}}

// Spec: ENC-045, ENC-049, ENC-050
func TestTagged(t *testing.T) {
	tests := []struct {
		name     string
		input    string
		c        Context
		variant  int // -1: error
		bodyJSON string
	}{
		{"tag first", `{"state":"failed","message":"m"}`, direct, 2, `{"message":"m"}`},
		{"tag last", `{"message":"m","state":"failed"}`, direct, 2, `{"message":"m"}`},
		{"tag in the middle", `{"a":1,"state":"failed","b":2}`, direct, 2, `{"a":1,"b":2}`},
		{"escaped tag key", `{"\u0073tate":"running"}`, direct, 0, `{}`},
		{"duplicate tag", `{"state":"running","state":"running"}`, direct, -1, ""},
		{"duplicate tag differing", `{"state":"running","x":1,"state":"failed"}`, direct, -1, ""},
		{"missing tag", `{"message":"m"}`, direct, -1, ""},
		{"case-different tag key", `{"State":"running"}`, direct, -1, ""},
		{"unknown variant", `{"state":"pending"}`, direct, -1, ""},
		{"numeric tag directly", `{"state":1}`, direct, -1, ""},
		{"numeric tag in buffered content", `{"state":1,"payload":null}`, bufferedLossy, 1, `{"payload":null}`},
		{"null tag", `{"state":null}`, bufferedLossy, -1, ""},
		{"array form", `["failed","m"]`, direct, 2, `["m"]`},
		{"array form with tag only", `["running"]`, direct, 0, `[]`},
		{"empty array", `[]`, direct, -1, ""},
		{"array form with numeric tag directly", `[0]`, direct, -1, ""},
		{"array form with numeric tag buffered", `[0]`, bufferedPreserve, 0, `[]`},
		{"string", `"running"`, direct, -1, ""},
		{"null", `null`, direct, -1, ""},
		// Buffering a body converts its numbers; Lossy cannot hold 1e400.
		{"out-of-range number in the body, preserve", `{"state":"running","x":1e400}`, direct, 0, `{"x":1e400}`},
		{"out-of-range number in the body, lossy", `{"state":"running","x":1e400}`, directLossy, -1, ""},
		{"out-of-range number in an array body, lossy", `["running",[1e400]]`, directLossy, -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, body, bc, err := states.Split(parse(t, tt.input), tt.c)
			if tt.variant < 0 {
				if err == nil {
					t.Fatalf("Split = %d, want an error", v)
				}
				return
			}
			if err != nil {
				t.Fatalf("Split: %v", err)
			}
			if v != tt.variant {
				t.Fatalf("variant %d, want %d", v, tt.variant)
			}
			if !bc.Buffered || bc.Mode != tt.c.Mode {
				t.Fatalf("body context %+v: want buffered in mode %v", bc, tt.c.Mode)
			}
			if got := nodeJSON(body); got != tt.bodyJSON {
				t.Fatalf("body %s, want %s", got, tt.bodyJSON)
			}
		})
	}
}

func TestUnitBody(t *testing.T) {
	for _, tt := range []struct {
		input string
		ok    bool
	}{
		{`{}`, true},
		{`{"payload":5,"message":"x"}`, true},
		{`[]`, true},
		{`[1]`, false},
	} {
		if err := UnitBody(parse(t, tt.input)); (err == nil) != tt.ok {
			t.Errorf("UnitBody(%s) = %v, want ok=%v", tt.input, err, tt.ok)
		}
	}
}

var payloadEnum = Adjacent{Name: "ToolPayload", Tag: "format", Content: "value", Variants: formats}

// Spec: ENC-045, ENC-050, MSG-010
func TestAdjacent(t *testing.T) {
	tests := []struct {
		name     string
		input    string
		c        Context
		deny     bool
		variant  int // -1: error
		content  string
		buffered bool
	}{
		{"tag then content", `{"format":"text","value":"x"}`, direct, false, 0, `"x"`, false},
		{"content then tag is buffered", `{"value":"x","format":"text"}`, direct, false, 0, `"x"`, true},
		{"unknown keys skipped", `{"a":1,"format":"json","b":2,"value":null,"c":3}`, direct, false, 1, `null`, false},
		{"unknown keys denied", `{"format":"json","value":null,"c":3}`, direct, true, -1, "", false},
		{"duplicate tag", `{"format":"text","value":"x","format":"text"}`, direct, false, -1, "", false},
		{"duplicate content", `{"format":"text","value":"x","value":"y"}`, direct, false, -1, "", false},
		{"duplicate content first", `{"value":"x","value":"y","format":"text"}`, direct, false, -1, "", false},
		{"missing content", `{"format":"text"}`, direct, false, -1, "", false},
		{"missing tag", `{"value":"x"}`, direct, false, -1, "", false},
		{"empty object", `{}`, direct, false, -1, "", false},
		{"unknown format", `{"format":"bytes","value":"x"}`, direct, false, -1, "", false},
		{"format as a map", `{"format":{"text":null},"value":"x"}`, direct, false, 0, `"x"`, false},
		{"format as a map with an empty map, buffered", `{"format":{"text":{}},"value":"x"}`, bufferedLossy, false, 0, `"x"`, true},
		{"format as a map with an empty map, direct", `{"format":{"text":{}},"value":"x"}`, direct, false, -1, "", false},
		{"numeric format in a map", `{"format":0,"value":"x"}`, bufferedLossy, false, -1, "", false},
		{"array form", `["text","x"]`, direct, false, 0, `"x"`, false},
		{"array form numeric tag buffered", `[1,{"a":1}]`, bufferedPreserve, false, 1, `{"a":1}`, true},
		{"array form numeric tag directly", `[1,{"a":1}]`, direct, false, -1, "", false},
		{"array form too short", `["text"]`, direct, false, -1, "", false},
		{"array form too long", `["text","x","y"]`, direct, false, -1, "", false},
		{"content-first out-of-range number in lossy", `{"value":[1e400],"format":"json"}`, directLossy, false, -1, "", false},
		{"string", `"text"`, direct, false, -1, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := payloadEnum
			a.DenyUnknown = tt.deny
			v, content, cc, err := a.Split(parse(t, tt.input), tt.c)
			if tt.variant < 0 {
				if err == nil {
					t.Fatalf("Split = %d, want an error", v)
				}
				return
			}
			if err != nil {
				t.Fatalf("Split: %v", err)
			}
			if v != tt.variant || nodeJSON(content) != tt.content || cc.Buffered != tt.buffered {
				t.Fatalf("Split = %d %s buffered=%v; want %d %s buffered=%v", v, nodeJSON(content), cc.Buffered, tt.variant, tt.content, tt.buffered)
			}
		})
	}
}

// Spec: ENC-022, ENC-048
func TestSeqMapString(t *testing.T) {
	var got []string
	if err := Seq(parse(t, `["a","b"]`), func(_ int, e *canonjson.Node) error {
		s, err := String(e)
		got = append(got, s)
		return err
	}); err != nil || strings.Join(got, ",") != "a,b" {
		t.Fatalf("Seq = %v, %v", got, err)
	}
	err := Seq(parse(t, `["a",1]`), func(_ int, e *canonjson.Node) error { _, err := String(e); return err })
	var de *Error
	if !errors.As(err, &de) || de.Path != "[1]" {
		t.Fatalf("Seq error %v: want path [1]", err)
	}
	if err := Seq(parse(t, `{}`), func(int, *canonjson.Node) error { return nil }); err == nil {
		t.Fatal("Seq accepted an object")
	}
	keys := ""
	if err := Map(parse(t, `{"b":1,"a":2,"b":3}`), func(k string, _ *canonjson.Node) error { keys += k; return nil }); err != nil || keys != "bab" {
		t.Fatalf("Map visited %q, %v; want document order with duplicates", keys, err)
	}
	if err := Map(parse(t, `[]`), func(string, *canonjson.Node) error { return nil }); err == nil {
		t.Fatal("Map accepted an array")
	}
}

func TestValueUsesMode(t *testing.T) {
	n := parse(t, `[1.50,-0]`)
	p, err := Value(n, bufferedPreserve)
	if err != nil || string(p.JSON()) != `[1.50,0]` {
		t.Fatalf("preserve: %s, %v", p.JSON(), err)
	}
	l, err := Value(n, bufferedLossy)
	if err != nil || string(l.JSON()) != `[1.5,-0.0]` {
		t.Fatalf("lossy: %s, %v", l.JSON(), err)
	}
	if _, err := Value(parse(t, `1e400`), directLossy); !errors.Is(err, ErrDecode) {
		t.Fatalf("lossy 1e400: %v, want ErrDecode", err)
	}
}

// nodeJSON writes a syntax tree back as compact JSON (raw number tokens, keys in document
// order); it is only used to compare test expectations.
func nodeJSON(n *canonjson.Node) string {
	var b strings.Builder
	var walk func(*canonjson.Node)
	walk = func(n *canonjson.Node) {
		switch n.Kind {
		case canonjson.NodeNull:
			b.WriteString("null")
		case canonjson.NodeBool:
			if n.Bool {
				b.WriteString("true")
			} else {
				b.WriteString("false")
			}
		case canonjson.NodeNumber:
			b.WriteString(n.Text)
		case canonjson.NodeString:
			b.Write(canonjson.AppendString(nil, n.Text))
		case canonjson.NodeArray:
			b.WriteByte('[')
			for i, e := range n.Elems {
				if i > 0 {
					b.WriteByte(',')
				}
				walk(e)
			}
			b.WriteByte(']')
		case canonjson.NodeObject:
			b.WriteByte('{')
			for i, m := range n.Members {
				if i > 0 {
					b.WriteByte(',')
				}
				b.Write(canonjson.AppendString(nil, m.Key))
				b.WriteByte(':')
				walk(m.Value)
			}
			b.WriteByte('}')
		}
	}
	walk(n)
	return b.String()
}
