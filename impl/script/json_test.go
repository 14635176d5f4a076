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

// Spec: SCR-082, SCR-083
func TestParseJSON(t *testing.T) {
	n, s := Number, String
	tests := []struct {
		doc  string
		want Value
	}{
		{"null", Nil()},
		{"true", Bool(true)},
		{" [ 1 , 2 ] ", Array(n(1), n(2))},
		{`{"b":1,"a":2,"a":3}`, Record(Field{"a", n(3)}, Field{"b", n(1)})},
		{`[1,{"a":[true,null]}]`, Array(n(1), Record(Field{"a", Array(Bool(true), Nil())}))},
		{`"\u00e9\n\/"`, s("é\n/")},
		{`"\ud83d\ude00"`, s("😀")},
		{"1e400", n(math.Inf(1))},
		{"-1e400", n(math.Inf(-1))},
		{"1e-400", n(0)},
		// The host build's number model (chapter 1, ENC-024) reads the integer token -0 as 0.
		{"-0", n(0)},
		{"-0.0", n(math.Copysign(0, -1))},
		{"-2.5e1", n(-25)},
		{"0.1", n(0.1)},
		{"12345678901234567890", n(12345678901234567890)},
		{"-9007199254740993", n(-9007199254740992)},
		{`{"":0,"é":1,"B":2,"a":3}`, Record(Field{"", n(0)}, Field{"B", n(2)}, Field{"a", n(3)}, Field{"é", n(1)})},
	}
	for _, tc := range tests {
		got := evalValue(t, splashString(tc.doc)+".parse_json()")
		if !sameValue(got, tc.want) {
			t.Errorf("parse_json(%q) = %v, want %v", tc.doc, got, tc.want)
			continue
		}
		// Records come out sorted by key bytes.
		if tc.want.Kind() == KindRecord {
			gf, wf := got.Fields(), tc.want.Fields()
			for i := range wf {
				if gf[i].Name != wf[i].Name {
					t.Errorf("parse_json(%q) field order %v, want %v", tc.doc, got, tc.want)
					break
				}
			}
		}
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
