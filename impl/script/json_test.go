package script

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// splashString writes s as a Splash string literal.
func splashString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				b.WriteString(`\u{` + string("0123456789abcdef"[r>>4]) + string("0123456789abcdef"[r&15]) + `}`)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Spec: SCR-080
func TestToJSON(t *testing.T) {
	tests := []struct {
		expr string
		want string
	}{
		{"nil", "null"},
		{"true", "true"},
		{"(42)", "42"},
		{"(-0)", "-0"},
		{"(0.5)", "0.5"},
		{"(-2.25)", "-2.25"},
		{"(1e21)", "1000000000000000000000"},
		{"(123.456)", "123.456"},
		{"(0.00001)", "0.00001"},
		{"(0.000025)", "0.000025"},
		{"(1e-7)", "1e-7"},
		{"(1.5e-7)", "1.5e-7"},
		{"(1000000000000000.5)", "1000000000000000.5"},
		{`"a\"b\\c\n\r\t"`, `"a\"b\\c\n\r\t"`},
		{`"\u{8}\u{c}\u{1}\u{1f}\u{7f}é\u{2028}/"`, "\"\\b\\f\\u0001\\u001f\x7fé\u2028/\""},
		{`[1, "a", [nil], {k: false}]`, `[1,"a",[null],{"k":false}]`},
		{"{z: 1, a: 2}", `{"z":1,"a":2}`},
		{"[]", "[]"},
		{"{}", "{}"},
		{splashString(`{"z":1,"a":2}`) + ".parse_json()", `{"a":2,"z":1}`},
	}
	for _, tc := range tests {
		got := evalValue(t, tc.expr+".to_json()")
		if got.Kind() != KindString || got.Text() != tc.want {
			t.Errorf("%s.to_json() = %v, want %q", tc.expr, got, tc.want)
		}
	}
}

// Spec: SCR-081
func TestToJSONFailures(t *testing.T) {
	const limits = "JSON operation exceeded Splash runtime limits"
	const boundary = "value cannot cross Splash's bounded JSON boundary"
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct {
		src string
		msg string
	}{
		{"(1 / 0).to_json()", boundary},
		{"(0 / 0).to_json()", boundary},
		{"[1, -1 / 0].to_json()", boundary},
		{"fn f() {\n}\nf.to_json()", boundary},
		{"fn f() {\n}\n{g: f}.to_json()", boundary},
		{"use mod.tool\ntool.to_json()", boundary},
		{"use mod.tool\ntool.start(\"x\", \"y\").to_json()", boundary},
		{"use mod.std.assert\nassert.to_json()", boundary},
		{"let d = " + splashString(deep(64)) + ".parse_json()\n[d].to_json()", limits},
		{"let s = " + splashString(strings.Repeat("a", 65535)) + "\ns.to_json()", limits},
		// The size bound is checked as the text grows, before a later unsupported value.
		{"let s = " + splashString(strings.Repeat("a", 65535)) + "\nfn f() {\n}\n[s, f].to_json()", limits},
		{"fn f() {\n}\nlet s = " + splashString(strings.Repeat("a", 100)) + "\n[f, s].to_json()", boundary},
	}
	for _, tc := range tests {
		h := newFakeHost(t)
		h.addExternal("x", false)
		m := h.newMachine(Limits{})
		ev, err := m.Eval(tc.src)
		if err != nil {
			t.Fatalf("%.60q: %v", tc.src, err)
		}
		if ev.Succeeded() || len(ev.Diagnostics) != 1 || ev.Diagnostics[0].Message != tc.msg || ev.Diagnostics[0].Origin != "json" {
			t.Errorf("%.60q: %+v, want %q", tc.src, ev.Diagnostics, tc.msg)
		}
		// Both failures are catchable.
		ev, _ = m.Eval("try {\n" + tc.src + "\n} catch \"caught\"")
		if !ev.Completed() || ev.Value.Text() != "caught" {
			t.Errorf("%.60q: not caught: %+v", tc.src, ev)
		}
	}
	// The bounds at their limits succeed.
	if got := evalValue(t, "let d = "+splashString(deep(64))+".parse_json()\nd.to_json()"); got.Text() != deep(64) {
		t.Fatalf("64 levels: %v", got)
	}
	if got := evalValue(t, "let s = "+splashString(strings.Repeat("a", 65534))+"\ns.to_json()"); len(got.Text()) != 65536 {
		t.Fatalf("65536 bytes: %d", len(got.Text()))
	}
}

// The JSON bounds shrink with the source and nesting bounds.
//
// Spec: SCR-081, SCR-082
func TestJSONBoundsFollowLimits(t *testing.T) {
	h := newFakeHost(t)
	limits := DefaultLimits()
	limits.MaxSourceBytes = 120
	limits.MaxNesting = 5
	m := h.newMachine(limits)
	ev, _ := m.Eval("let s = \"0123456789\"\nlet t = s + s + s + s + s\nlet u = t + t + t\nu.to_json()")
	if len(ev.Diagnostics) != 1 || ev.Diagnostics[0].Message != "JSON operation exceeded Splash runtime limits" {
		t.Fatalf("byte bound 120: %+v", ev)
	}
	ev, _ = m.Eval(splashString("[[[[[[1]]]]]]") + ".parse_json()")
	if len(ev.Diagnostics) != 1 || ev.Diagnostics[0].Message != "JSON operation exceeded Splash runtime limits" {
		t.Fatalf("depth bound 5: %+v", ev)
	}
	ev, _ = m.Eval(splashString("[[[[[1]]]]]") + ".parse_json().to_json()")
	if !ev.Completed() || ev.Value.Text() != "[[[[[1]]]]]" {
		t.Fatalf("depth 5: %+v", ev)
	}
}

// identical reports whether a and b are the same value: numbers bit for bit, records with the
// same fields in the same order.
func identical(a, b Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case KindNumber:
		return math.Float64bits(a.NumberValue()) == math.Float64bits(b.NumberValue())
	case KindArray:
		ae, be := a.Elems(), b.Elems()
		if len(ae) != len(be) {
			return false
		}
		for i := range ae {
			if !identical(ae[i], be[i]) {
				return false
			}
		}
		return true
	case KindRecord:
		af, bf := a.Fields(), b.Fields()
		if len(af) != len(bf) {
			return false
		}
		for i := range af {
			if af[i].Name != bf[i].Name || !identical(af[i].Value, bf[i].Value) {
				return false
			}
		}
		return true
	}
	return Equal(a, b)
}

// The expectations follow the reference's parse_json: the document is written back as compact
// serde_json text (host number model) and read by the VM's own tokenizer and JSON state machine.
//
// Spec: SCR-082, SCR-083, SCR-084
func TestParseJSON(t *testing.T) {
	n, s, a := Number, String, Array
	rec := func(fields ...Field) Value { return Value{kind: KindRecord, ref: &record{fields: fields}} }
	f := func(name string, v Value) Field { return Field{name, v} }
	tests := []struct {
		doc  string
		want Value
	}{
		// Strings are the only scalars that survive at the root; a number, true, false or null
		// that ends the text is never emitted by the tokenizer.
		{`"s"`, s("s")},
		{`"\u00e9\n\/"`, s("é\n/")},
		{`"\ud83d\ude00"`, s("😀")},
		{"null", Nil()},
		{"true", Nil()},
		{"false", Nil()},
		{"5", Nil()},
		{" 5 ", Nil()},
		{"-5", Nil()},
		{"1.5", Nil()},
		{"1e400", Nil()},
		{"-0", Nil()},
		// Containers.
		{" [ 1 , 2 ] ", a(n(1), n(2))},
		{"[true,false,null]", a(Bool(true), Bool(false), Nil())},
		{"[]", a()},
		{"{}", rec()},
		{`[1,{"a":[true,null]}]`, a(n(1), rec(f("a", a(Bool(true), Nil()))))},
		{`{"b":1,"a":2,"a":3}`, rec(f("a", n(3)), f("b", n(1)))},
		{`{"":0,"é":1,"B":2,"a":3}`, rec(f("", n(0)), f("B", n(2)), f("a", n(3)), f("é", n(1)))},
		// Magnitudes: the nearest binary64; out of range gives an infinity or zero.
		{"[0.1]", a(n(0.1))},
		{"[1.50]", a(n(1.5))},
		{"[1E3]", a(n(1000))},
		{"[1e+3]", a(n(1000))},
		{"[1e-3]", a(n(0.001))},
		{"[1e400]", a(n(math.Inf(1)))},
		{"[1e-400]", a(n(0))},
		{"[1099511627775,1099511627776]", a(n(1099511627775), n(1099511627776))},
		{"[12345678901234567890]", a(n(12345678901234567168))},
		{"[9007199254740993]", a(n(9007199254740992))},
		// A minus sign is a separate operator token, skipped inside an array: every number in
		// an array reads as its magnitude, -0.0 included.
		{"[-5]", a(n(5))},
		{"[-1.5]", a(n(1.5))},
		{"[-0]", a(n(0))},
		{"[-0.0]", a(n(0))},
		{"[-1e3]", a(n(1000))},
		{"[-2.5e1]", a(n(25))},
		{"[-1e400]", a(n(math.Inf(1)))},
		{"[-9223372036854775808]", a(n(9223372036854775808))},
		{"[-9007199254740993]", a(n(9007199254740992))},
		{"[1,-2,3]", a(n(1), n(2), n(3))},
		{`[-1,[-2],{"k":[-3]}]`, a(n(1), a(n(2)), rec(f("k", a(n(3)))))},
		{`{"a":[-1]}`, rec(f("a", a(n(1))))},
		// Inside an object the operator takes the place of the value: the member is lost and
		// the magnitude is read where a key is expected. An integer magnitude (at most 2^40-1,
		// no fraction or exponent) is skipped there ...
		{`{"a":-1}`, rec()},
		{`{"a":-1,"b":2}`, rec(f("b", n(2)))},
		{`{"a":-100,"b":1}`, rec(f("b", n(1)))},
		{`{"a":{"b":-1},"c":4}`, rec(f("a", rec()), f("c", n(4)))},
		{`[{"a":-1},2]`, a(rec(), n(2))},
		{`[{"a":-1099511627775},2]`, a(rec(), n(2))},
		// ... while a float magnitude becomes a key awaiting its colon, which swallows the
		// object's closing brace: later members of the parent land in the inner object, and a
		// closing bracket that follows ends the inner object instead of the array.
		{`{"a":1,"b":-2.5,"c":3}`, rec(f("a", n(1)), f("c", n(3)))},
		{`{"a":-1.5}`, rec()},
		{`[{"a":-1.5},2]`, a(rec())},
		{`[{"a":-1099511627776},2]`, a(rec())},
		{`[{"a":-1E3},2]`, a(rec())},
		{`[{"a":-0.0},2]`, a(rec())},
		{`{"b":{"a":-1.5},"c":1}`, rec(f("b", rec(f("c", n(1)))))},
		// The host number model writes the integer token -0 back as 0, so it keeps its member.
		{`{"a":-0,"b":1}`, rec(f("a", n(0)), f("b", n(1)))},
		{`[{"a":-0},2]`, a(rec(f("a", n(0))), n(2))},
	}
	for _, tc := range tests {
		got := evalValue(t, splashString(tc.doc)+".parse_json()")
		if !identical(got, tc.want) {
			t.Errorf("parse_json(%q) = %v, want %v", tc.doc, got, tc.want)
		}
	}
}

// The reference's reader loses its place after a \b or \f escape; the subset decodes them.
//
// Spec: SCR-084
func TestParseJSONBackspaceAndFormFeedDecision(t *testing.T) {
	got := evalValue(t, splashString(`["a\bb","\u000c",{"k":"\f"},-1]`)+".parse_json()")
	want := Array(String("a\bb"), String("\f"), Record(Field{"k", String("\f")}), Number(1))
	if !identical(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// Writing the document back can make it longer than the input (an exponent gains its sign), and
// the written text is held to the same byte bound.
//
// Spec: SCR-082
func TestParseJSONBoundsTheWrittenBackText(t *testing.T) {
	doc := "[" + strings.TrimSuffix(strings.Repeat("1E5,", 16383), ",") + "]" // 65,533 bytes
	diags := evalFailure(t, splashString(doc)+".parse_json()")
	if len(diags) != 1 || diags[0].Message != "JSON operation exceeded Splash runtime limits" {
		t.Fatalf("1E5 x 16383: %v", diags)
	}
	doc = "[" + strings.TrimSuffix(strings.Repeat("1e+5,", 13106), ",") + "]" // 65,531 bytes
	if got := evalValue(t, splashString(doc)+".parse_json()"); len(got.Elems()) != 13106 || got.Elems()[0].NumberValue() != 1e5 {
		t.Fatalf("1e+5 x 13106: %d elements", len(got.Elems()))
	}
}

// Spec: SCR-082, SCR-083
func TestParseJSONFailures(t *testing.T) {
	const limits = "JSON operation exceeded Splash runtime limits"
	const boundary = "value cannot cross Splash's bounded JSON boundary"
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct {
		recv string
		msg  string
	}{
		{splashString("{"), boundary},
		{splashString("[1,]"), boundary},
		{splashString("01"), boundary},
		{splashString("NaN"), boundary},
		{splashString("'a'"), boundary},
		{splashString(`"\x"`), boundary},
		{splashString("1 2"), boundary},
		{splashString(""), boundary},
		{splashString(`"\ud800"`), boundary},
		{splashString("\"a\tb\""), boundary},
		{splashString("\ufeff1"), boundary},
		{splashString(deep(65)), limits},
		{splashString(deep(200)), boundary},
		{splashString(`"` + strings.Repeat("a", 65535) + `"`), limits},
		{"[1]", boundary},
	}
	for _, tc := range tests {
		diags := evalFailure(t, tc.recv+".parse_json()")
		if len(diags) != 1 || diags[0].Message != tc.msg {
			t.Errorf("%.50s.parse_json(): %v, want %q", tc.recv, diags, tc.msg)
		}
	}
	if got := evalValue(t, splashString(`"`+strings.Repeat("a", 65534)+`"`)+".parse_json()"); len(got.Text()) != 65534 {
		t.Fatalf("65536-byte document: %d", len(got.Text()))
	}
	if got := evalValue(t, splashString(deep(64))+".parse_json().to_json()"); got.Text() != deep(64) {
		t.Fatalf("64 levels: %v", got)
	}
	for _, recv := range []string{"(1)", "nil", "true", "{}"} {
		diags := evalFailure(t, recv+".parse_json()")
		want := "method `parse_json` not found on "
		if len(diags) != 1 || !strings.HasPrefix(diags[0].Message, want) {
			t.Errorf("%s.parse_json(): %v", recv, diags)
		}
	}
}

// Object nesting counts like array nesting, and the records parse_json builds are charged to
// the heap bound (a stop, not a catchable error).
//
// Spec: SCR-082, SCR-093
func TestParseJSONObjectDepthAndHeap(t *testing.T) {
	objects := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	if got := evalValue(t, splashString(objects(64))+".parse_json().to_json()"); got.Text() != objects(64) {
		t.Fatalf("64 objects: %.40v", got)
	}
	diags := evalFailure(t, splashString(objects(65))+".parse_json()")
	if len(diags) != 1 || diags[0].Message != "JSON operation exceeded Splash runtime limits" {
		t.Fatalf("65 objects: %v", diags)
	}
	limits := DefaultLimits()
	limits.MaxHeapBytes = 2000
	h := newFakeHost(t)
	m := h.newMachine(limits)
	doc := "[" + strings.TrimSuffix(strings.Repeat(`{"k":"v"},`, 40), ",") + "]"
	ev, err := m.Eval("try " + splashString(doc) + ".parse_json() catch 0")
	if err != nil || !errors.Is(ev.Stop, ErrHeapLimit) {
		t.Fatalf("heap bound in parse_json: %+v %v", ev, err)
	}
}

func TestStatusNames(t *testing.T) {
	for s, want := range map[Status]string{StatusCompleted: "completed", StatusSuspended: "suspended", StatusFailed: "failed", 0: "unknown"} {
		if s.String() != want {
			t.Errorf("Status(%d) = %q, want %q", s, s.String(), want)
		}
	}
}
