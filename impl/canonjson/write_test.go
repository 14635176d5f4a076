package canonjson_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
)

// Layout examples of reference anchor A-LAYOUT (docs/reference-anchors.md) and the spec
// chapter; Go's encoding/json would write 1e16 as 10000000000000000 and 1.0 as 1.
//
// Spec: ENC-009, ENC-010, ENC-011, ENC-040
func TestAppendFloatLayout(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1, "1.0"},
		{-1, "-1.0"},
		{100, "100.0"},
		{1e15, "1000000000000000.0"},
		{1e16, "1e+16"},
		{-1e16, "-1e+16"},
		{1e-7, "1e-7"},
		{1.5e-7, "1.5e-7"},
		{1e-5, "0.00001"},
		{1e-6, "1e-6"},
		{0.01, "0.01"},
		{0.1, "0.1"},
		{123.456, "123.456"},
		{1.5, "1.5"},
		{5e-324, "5e-324"},
		{math.MaxFloat64, "1.7976931348623157e+308"},
		{1.2345678901234568e+29, "1.2345678901234568e+29"},
		{1.8446744073709552e19, "1.8446744073709552e+19"},
		{-9.223372036854776e18, "-9.223372036854776e+18"},
		{1e20, "1e+20"},
		{123456789012345.6, "123456789012345.6"},
		{1234567890123456.7, "1234567890123456.8"}, // E = 15: still positional
		{12345678901234567.0, "1.2345678901234568e+16"},
		{0.000012345, "0.000012345"}, // E = -5
		{0.0000012345, "1.2345e-6"},  // E = -6
		{9007199254740993.0, "9007199254740992.0"},
	} {
		if got := string(canonjson.AppendFloat(nil, tc.f)); got != tc.want {
			t.Errorf("AppendFloat(%v) = %q, want %q", tc.f, got, tc.want)
		}
		v, err := canonjson.Float(tc.f)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(v.JSON()); got != tc.want {
			t.Errorf("Float(%v).JSON() = %q, want %q", tc.f, got, tc.want)
		}
	}
	// serde_json writes non-finite floats as null; Float refuses to build them.
	if got := string(canonjson.AppendFloat([]byte("x"), math.NaN())); got != "xnull" {
		t.Errorf("NaN: %q", got)
	}
}

// Spec: ENC-008
func TestIntegers(t *testing.T) {
	for _, tc := range []struct {
		v    canonjson.Value
		want string
	}{
		{canonjson.Uint(0), "0"},
		{canonjson.Uint(math.MaxUint64), "18446744073709551615"},
		{canonjson.Int(math.MinInt64), "-9223372036854775808"},
		{canonjson.Int(-42), "-42"},
		{canonjson.Int(7), "7"},
	} {
		if got := string(tc.v.JSON()); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

// expectedEscape is the serde_json escape of one control byte, spelled out from the rule of
// ENC-005 and ENC-006: five short escapes, every other byte below 0x20 as \u00xx lowercase.
func expectedEscape(c byte) string {
	switch c {
	case 0x08:
		return `\b`
	case 0x09:
		return `\t`
	case 0x0A:
		return `\n`
	case 0x0C:
		return `\f`
	case 0x0D:
		return `\r`
	}
	return fmt.Sprintf(`\u%04x`, c)
}

// Spec: ENC-005, ENC-006, ENC-007
func TestAppendStringEscaping(t *testing.T) {
	for c := byte(0); c < 0x20; c++ {
		got := string(canonjson.AppendString(nil, "a"+string(rune(c))+"b"))
		if want := `"a` + expectedEscape(c) + `b"`; got != want {
			t.Errorf("byte 0x%02x: got %q, want %q", c, got, want)
		}
	}
	for in, want := range map[string]string{
		`"`:                      `"\""`,
		`\`:                      `"\\"`,
		"\x7f":                   "\"\x7f\"",
		"/":                      `"/"`,
		"</script>&":             `"</script>&"`,
		"\u2028\u2029":           "\"\u2028\u2029\"",
		"é😀\u00a0\ufeff":         "\"é😀\u00a0\ufeff\"",
		"":                       `""`,
		"\x1f":                   `"\u001f"`,
		"a\"b\\c\nd":             `"a\"b\\c\nd"`,
		"\xff":                   "\"\ufffd\"", // invalid UTF-8 cannot be a serde string
		"a\xc3\x01":              "\"a\ufffd\\u0001\"",
		strings.Repeat("ab", 40): `"` + strings.Repeat("ab", 40) + `"`,
	} {
		if got := string(canonjson.AppendString(nil, in)); got != want {
			t.Errorf("AppendString(%q) = %q, want %q", in, got, want)
		}
	}
	// Keys are escaped the same way.
	v := canonjson.Object(canonjson.Entry{Key: "k\x01\"", Value: canonjson.String("\t")})
	if got := string(v.JSON()); got != `{"k\u0001\"":"\t"}` {
		t.Errorf("key escaping: %s", got)
	}
}

// Keys sort by raw UTF-8 bytes: "" < "B" < "a" < "é".
//
// Spec: ENC-001, ENC-003
func TestKeyOrder(t *testing.T) {
	in := `{"é":1,"a":2,"B":3,"":4,"aa":5,"a\u0000":6}`
	want := `{"":4,"B":3,"a":2,"a\u0000":6,"aa":5,"é":1}`
	for _, m := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
		v, err := canonjson.ParseValue([]byte(in), m)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(v.JSON()); got != want {
			t.Errorf("%v: got %s, want %s", m, got, want)
		}
	}
}

// vector4Payload is the JSON payload of reference anchor A4 (docs/reference-anchors.md); a
// raw DEL byte sits between \u0001 and '/'. The reference writes it identically in both
// modes, and it is 97 bytes long.
const vector4Payload = "{\"\":true,\"B\":null,\"a\":[1e+16,100,-0.0,1.5e-7,18446744073709551615,-42],\"z\":0.1,\"é\":\"\\u0001\x7f/<>\"}"

// Spec: ENC-001, ENC-003, ENC-005, ENC-006, ENC-007, ENC-034
func TestVector4PayloadIsFixedPointOfBothModes(t *testing.T) {
	if len(vector4Payload) != 97 {
		t.Fatalf("vector text is %d bytes, want 97", len(vector4Payload))
	}
	for _, m := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
		v, err := canonjson.ParseValue([]byte(vector4Payload), m)
		if err != nil {
			t.Fatalf("%v: %v", m, err)
		}
		if got := string(v.JSON()); got != vector4Payload {
			t.Errorf("%v:\n got %q\nwant %q", m, got, vector4Payload)
		}
		if err := canonjson.CheckPortable(v); err != nil {
			t.Errorf("%v: %v", m, err)
		}
	}
	// The same payload received unsorted and spaced re-serializes to the same bytes.
	messy := "{ \"z\" : 0.1 , \"é\":\"\\u0001\x7f\\/<>\", \"a\":[1E16,100,-0.0,1.5e-7,18446744073709551615,-42],\"B\":null,\"\":true}"
	v, err := canonjson.ParseValue([]byte(messy), canonjson.Lossy)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(v.JSON()); got != vector4Payload {
		t.Errorf("messy lossy: got %q", got)
	}
}

// Reference anchor A-CANON (docs/reference-anchors.md), which is also the first payload of
// anchor A7.
//
// Spec: ENC-001, ENC-003
func TestSortsNestedObjects(t *testing.T) {
	in := `{"b":[1,{"z":1,"a":"x"}],"a":null,"B":true}`
	want := `{"B":true,"a":null,"b":[1,{"a":"x","z":1}]}`
	for _, m := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
		v, err := canonjson.ParseValue([]byte(in), m)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(v.JSON()); got != want {
			t.Errorf("%v: got %s, want %s", m, got, want)
		}
	}
	// Reference anchor A-COUNT: 16 bytes after re-serialization.
	v, err := canonjson.ParseValue([]byte("{ \"b\" : 1 ,\n \"a\" : \"é\" }"), canonjson.Lossy)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.JSON(); len(got) != 16 {
		t.Errorf("got %q (%d bytes), want 16 bytes", got, len(got))
	}
}

// Spec: ENC-033
func TestEqual(t *testing.T) {
	f1, _ := canonjson.Float(1)
	f0, _ := canonjson.Float(0)
	fneg0, _ := canonjson.Float(math.Copysign(0, -1))
	p := func(tok string) canonjson.Value {
		v, err := canonjson.NumberToken(tok, canonjson.Preserve)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	l := func(tok string) canonjson.Value {
		v, err := canonjson.NumberToken(tok, canonjson.Lossy)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		a, b canonjson.Value
		want bool
	}{
		{canonjson.Uint(1), f1, false}, // u64 1 is not f64 1.0
		{canonjson.Int(1), canonjson.Uint(1), true},
		{canonjson.Int(-1), canonjson.Uint(1), false},
		{f0, fneg0, true}, // f64 ==
		{l("1.50"), l("1.5"), true},
		{l("1e2"), l("100.0"), true},
		{l("1"), l("1.0"), false},
		{p("1.50"), p("1.5"), false}, // text differs
		{p("1e2"), p("1E2"), true},   // same text after normalization
		{p("1.0"), f1, true},         // Preserve compares written text
		{p("-0"), canonjson.Uint(0), true},
		{p("-0.0"), p("0.0"), false},
		{canonjson.Null(), canonjson.Value{}, true},
		{canonjson.Null(), canonjson.Bool(false), false},
		{canonjson.String("a"), canonjson.String("a"), true},
		{canonjson.Array(canonjson.Uint(1)), canonjson.Array(canonjson.Uint(1), canonjson.Null()), false},
		{
			canonjson.Object(canonjson.Entry{Key: "a", Value: canonjson.Null()}, canonjson.Entry{Key: "b", Value: canonjson.Uint(1)}),
			canonjson.Object(canonjson.Entry{Key: "b", Value: canonjson.Uint(1)}, canonjson.Entry{Key: "a", Value: canonjson.Null()}),
			true,
		},
		{
			canonjson.Object(canonjson.Entry{Key: "a", Value: canonjson.Null()}),
			canonjson.Object(canonjson.Entry{Key: "b", Value: canonjson.Null()}),
			false,
		},
	} {
		if got := canonjson.Equal(tc.a, tc.b); got != tc.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", tc.a.JSON(), tc.b.JSON(), got, tc.want)
		}
		if got := canonjson.Equal(tc.b, tc.a); got != tc.want {
			t.Errorf("Equal(%s, %s) is not symmetric", tc.b.JSON(), tc.a.JSON())
		}
	}
}

func TestAccessors(t *testing.T) {
	v, err := canonjson.ParseValue([]byte(`{"s":"x","b":true,"n":[1,-2,2.5,1e400]}`), canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	if v.Kind() != canonjson.KindObject || len(v.Entries()) != 3 || v.Elems() != nil {
		t.Fatalf("object accessors: %v", v.Kind())
	}
	if s, _ := v.Get("s"); s.StringValue() != "x" || s.Kind() != canonjson.KindString {
		t.Error("Get(s)")
	}
	if b, _ := v.Get("b"); !b.BoolValue() {
		t.Error("Get(b)")
	}
	if _, ok := v.Get("missing"); ok {
		t.Error("Get(missing)")
	}
	n, _ := v.Get("n")
	e := n.Elems()
	if u, ok := e[0].Uint64(); !ok || u != 1 {
		t.Error("Uint64")
	}
	if i, ok := e[1].Int64(); !ok || i != -2 {
		t.Error("Int64")
	}
	if _, ok := e[2].Float64(); ok {
		t.Error("Preserve 2.5 is text, not f64")
	}
	if e[3].NumberText() != "1e+400" || e[3].Kind() != canonjson.KindNumber {
		t.Error("NumberText")
	}
	if canonjson.KindObject.String() != "object" || canonjson.NodeNumber.String() != "number" {
		t.Error("kind names")
	}
}

// Spec: ENC-001
func TestAppendJSONDoesNotAllocate(t *testing.T) {
	v, err := canonjson.ParseValue([]byte(vector4Payload), canonjson.Lossy)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 256)
	allocs := testing.AllocsPerRun(100, func() {
		buf = v.AppendJSON(buf[:0])
	})
	if allocs != 0 {
		t.Errorf("AppendJSON on a reused buffer allocated %v times per run", allocs)
	}
}

// payload4K builds a ~4 KiB payload mixing the value kinds found in tool payloads.
func payload4K(tb testing.TB) canonjson.Value {
	var b strings.Builder
	b.WriteString(`{"items":[`)
	for i := 0; b.Len() < 4000; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"item-%d é <tag>","price":%d.25,"ratio":1.5e-7,"tags":["a","b\n"],"ok":true,"none":null}`, i, i, i)
	}
	b.WriteString(`],"total":1e+16}`)
	v, err := canonjson.ParseValue([]byte(b.String()), canonjson.Lossy)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

func BenchmarkAppendJSON4K(b *testing.B) {
	v := payload4K(b)
	buf := v.AppendJSON(nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = v.AppendJSON(buf[:0])
	}
}

func BenchmarkParseValue4K(b *testing.B) {
	data := payload4K(b).JSON()
	for _, m := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
		b.Run(m.String(), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := canonjson.ParseValue(data, m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
