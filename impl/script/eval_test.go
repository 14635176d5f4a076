package script

import (
	"math"
	"strings"
	"testing"
)

// evalValue runs src on a fresh machine and fails the test unless it completes.
func evalValue(t *testing.T, src string) Value {
	t.Helper()
	h := newFakeHost(t)
	h.addPump("echo", false, echo)
	m := h.newMachine(Limits{})
	ev, err := m.Eval(src)
	if err != nil {
		t.Fatalf("Eval(%q): %v", src, err)
	}
	if !ev.Completed() || len(ev.Diagnostics) != 0 {
		t.Fatalf("Eval(%q) = %+v, want a completed evaluation without diagnostics", src, ev)
	}
	return ev.Value
}

// evalFailure runs src and returns its diagnostics, failing unless the evaluation ended with an
// error value.
func evalFailure(t *testing.T, src string) []Diagnostic {
	t.Helper()
	h := newFakeHost(t)
	m := h.newMachine(Limits{})
	ev, err := m.Eval(src)
	if err != nil {
		t.Fatalf("Eval(%q): %v", src, err)
	}
	if ev.Succeeded() || ev.Status() != StatusFailed {
		t.Fatalf("Eval(%q) = %+v, want a failed evaluation", src, ev)
	}
	return ev.Diagnostics
}

func sameValue(a, b Value) bool {
	if a.Kind() == KindNumber && b.Kind() == KindNumber {
		x, y := a.NumberValue(), b.NumberValue()
		return math.Float64bits(x) == math.Float64bits(y) || math.IsNaN(x) && math.IsNaN(y)
	}
	return Equal(a, b)
}

// Spec: SCR-030, SCR-031, SCR-032, SCR-033, SCR-011, SCR-012, SCR-022, SCR-038, SCR-035
func TestEvaluateConstructs(t *testing.T) {
	n, s, b := Number, String, Bool
	tests := []struct {
		src  string
		want Value
	}{
		// Literals.
		{"42", n(42)},
		{"1.5e3", n(1500)},
		{"2E-2", n(0.02)},
		{"007", n(7)},
		{"1e400", n(math.Inf(1))},
		{`"a\"b\\c\nd\re\tf"`, s("a\"b\\c\nd\re\tf")},
		{`"\u00e9\u{1F600}\u{41}"`, s("é😀A")},
		{`"é — ✓"`, s("é — ✓")},
		{"true", b(true)},
		{"false", b(false)},
		{"nil", Nil()},
		{"[]", Array()},
		{"[1, \"two\", [3]]", Array(n(1), s("two"), Array(n(3)))},
		{"{}", Record()},
		{"{b: 1, a: 2}", Record(Field{"b", n(1)}, Field{"a", n(2)})},
		{"{\n  x: 1\n  y: {z: nil}\n}", Record(Field{"x", n(1)}, Field{"y", Record(Field{"z", Nil()})})},

		// Arithmetic and precedence.
		{"1 + 2 * 3", n(7)},
		{"(1 + 2) * 3", n(9)},
		{"10 - 4 - 3", n(3)},
		{"2 * 3 % 4", n(2)},
		{"7 / 2", n(3.5)},
		{"-7 % 3", n(-1)},
		{"7 % -3", n(1)},
		{"5.5 % 2", n(1.5)},
		{"1 / 0", n(math.Inf(1))},
		{"-1 / 0", n(math.Inf(-1))},
		{"0 / 0", n(math.NaN())},
		{"0.1 + 0.2", n(0.30000000000000004)},
		{"-(2 + 3)", n(-5)},
		{"+4", n(4)},
		{"-0", n(math.Copysign(0, -1))},
		{`"ab" + "cd"`, s("abcd")},
		{`"" + ""`, s("")},

		// Comparison and equality.
		{"1 < 2", b(true)},
		{"2 <= 2", b(true)},
		{"3 > 4", b(false)},
		{"4 >= 5", b(false)},
		{"1 + 1 == 2", b(true)},
		{"1 < 2 == true", b(true)},
		{"0 / 0 == 0 / 0", b(false)},
		{"0 == -0", b(true)},
		{`"a" == "a"`, b(true)},
		{`"a" != "b"`, b(true)},
		{`1 == "1"`, b(false)},
		{"nil == nil", b(true)},
		{"nil == false", b(false)},
		{"[1, [2]] == [1, [2]]", b(true)},
		{"[1, 2] == [2, 1]", b(false)},
		{"[1] == [1, 1]", b(false)},
		{"{a: 1, b: 2} == {b: 2, a: 1}", b(true)},
		{"{a: 1} == {a: 1, b: 2}", b(false)},
		{"{a: 1} == {b: 1}", b(false)},
		{"fn f() {\n}\nf == f", b(true)},
		{"fn f() {\n}\nfn g() {\n}\nf == g", b(false)},
		{"use mod.tool\ntool == tool", b(true)},

		// Conditions, && and ||.
		{"true && 5", n(5)},
		{"0 && 5", n(0)},
		{`"" || "x"`, s("x")},
		{"nil || false", b(false)},
		{"3 || 4", n(3)},
		{"false || nil && 1", Nil()},
		{"!true", b(false)},
		{"!nil", b(true)},
		{`!""`, b(true)},
		{"![]", b(false)},
		{"if 0 1 else 2", n(2)},
		{`if "" 1 else 2`, n(2)},
		{`if "x" 1 else 2`, n(1)},
		{"if [] 1 else 2", n(1)},
		{"if {} 1 else 2", n(1)},
		{"if 0 / 0 1 else 2", n(1)},
		{"if false 1", Nil()},
		{"if false 1 elif true 2 else 3", n(2)},
		{"if false 1 elif false 2 else 3", n(3)},
		{"if false 1 elif false 2", Nil()},
		{"if true {\n}", Nil()},
		{"if true {\nlet x = 1\n}", Nil()},
		{"if true {\n1\n2\n}", n(2)},

		// Fields and indexes.
		{"let r = {a: {b: [10, 20]}}\nr.a.b[1]", n(20)},
		{`let r = {key: "v"}` + "\n" + `r["key"]`, s("v")},
		{"[1, 2, 3][0]", n(1)},
		{"[1, 2, 3][2.0]", n(3)},

		// Program value.
		{"1\nlet x = 2", Nil()},
		{"use mod.tool", Nil()},
		{"fn f() {\n}", Nil()},
		{"", Nil()},
		{"1;2;3", n(3)},
	}
	for _, tc := range tests {
		got := evalValue(t, tc.src)
		if !sameValue(got, tc.want) {
			t.Errorf("Eval(%q) = %v, want %v", tc.src, got, tc.want)
		}
	}
}

// Spec: SCR-034, SCR-035, SCR-036
func TestScopesAndFunctions(t *testing.T) {
	n, s := Number, String
	tests := []struct {
		src  string
		want Value
	}{
		{"let x = 1\nlet x = 2\nx", n(2)},
		{"let x\nx", Nil()},
		{"let x = 1\nx = x + 1\nx", n(2)},
		{"let x = 1\nx = 5", Nil()},
		{"let x = 10\nx += 5\nx -= 3\nx *= 2\nx /= 4\nx %= 4", Nil()},
		{"let x = 10\nx += 5\nx -= 3\nx *= 2\nx /= 4\nx %= 4\nx", n(2)},
		{"let s = \"a\"\ns += \"b\"\ns", s("ab")},
		// A block that declares a name has its own scope; assignment reaches outward.
		{"let x = 1\nif true {\nlet x = 2\nx\n}", n(2)},
		{"let x = 1\nif true {\nlet x = 2\n}\nx", n(1)},
		{"let x = 1\nif true {\nx = 2\n}\nx", n(2)},
		{"let x = 1\nlet y = try {\nlet x = 5\nx\n} catch 0\n[x, y]", Array(n(1), n(5))},
		// Functions.
		{"fn add(a, b) {\nreturn a + b\n}\nadd(2, 3)", n(5)},
		{"fn last() {\n1\n2\n}\nlast()", n(2)},
		{"fn none() {\nlet x = 1\n}\nnone()", Nil()},
		{"fn early(x) {\nif x {\nreturn \"early\"\n}\n\"late\"\n}\n[early(true), early(false)]", Array(s("early"), s("late"))},
		{"fn bare() {\nreturn\n}\nbare()", Nil()},
		{"fn missing(a, b) {\nreturn [a, b]\n}\nmissing(1)", Array(n(1), Nil())},
		{"fn fact(n) {\nif n <= 1 {\nreturn 1\n}\nreturn n * fact(n - 1)\n}\nfact(10)", n(3628800)},
		// Names resolve when they are used: a function sees later top-level bindings.
		{"fn get() {\nreturn later\n}\nlet later = 7\nget()", n(7)},
		// Closures capture their declaring scope.
		{"fn outer(x) {\nfn inner(y) {\nreturn x + y\n}\nreturn inner\n}\nlet add5 = outer(5)\nadd5(1)", n(6)},
		{"fn counter() {\nlet c = 0\nfn bump() {\nc += 1\nreturn c\n}\nreturn bump\n}\nlet b = counter()\nb()\nb()\nb()", n(3)},
		// Parameters shadow outer names without changing them.
		{"let x = 1\nfn f(x) {\nx = 9\nreturn x\n}\n[f(2), x]", Array(n(9), n(1))},
		// A record field holding a function is called as a method.
		{"fn twice(v) {\nreturn v * 2\n}\nlet r = {f: twice}\nr.f(21)", n(42)},
		{"fn f() {\nreturn {a: [1, 2]}\n}\nf().a[1]", n(2)},
		{"use mod.std.assert\nlet a = assert\na(true)", Nil()},
	}
	for _, tc := range tests {
		got := evalValue(t, tc.src)
		if !sameValue(got, tc.want) {
			t.Errorf("Eval(%q) = %v, want %v", tc.src, got, tc.want)
		}
	}
}

// Spec: SCR-031, SCR-033, SCR-034, SCR-036, SCR-037, SCR-042, SCR-083
func TestRuntimeErrors(t *testing.T) {
	tests := []struct {
		src    string
		pos    Pos
		msg    string
		origin string
	}{
		{"undefined", Pos{1, 1}, "variable `undefined` not found in scope", "script"},
		{"x = 1", Pos{1, 3}, "variable `x` not found in scope", "script"},
		{`1 + "a"`, Pos{1, 3}, "operator `+` expects two numbers or two strings, found a number and a string", "script"},
		{`"a" + nil`, Pos{1, 5}, "operator `+` expects two numbers or two strings, found a string and a nil", "script"},
		{`"a" - "b"`, Pos{1, 5}, "operator `-` expects numbers, found a string and a string", "script"},
		{"[1] * 2", Pos{1, 5}, "operator `*` expects numbers, found an array and a number", "script"},
		{`"a" < "b"`, Pos{1, 5}, "operator `<` expects numbers, found a string and a string", "script"},
		{"nil >= 1", Pos{1, 5}, "operator `>=` expects numbers, found a nil and a number", "script"},
		{`-"a"`, Pos{1, 1}, "unary `-` expects a number, found a string", "script"},
		{"+true", Pos{1, 1}, "unary `+` expects a number, found a bool", "script"},
		{"!1", Pos{1, 1}, "`!` expects a condition, found a number", "script"},
		{"let r = {a: 1}\nr.b", Pos{2, 3}, "field `b` not found in the record", "script"},
		{`let r = {a: 1}` + "\n" + `r["b"]`, Pos{2, 2}, "field `b` not found in the record", "script"},
		{"let r = {a: 1}\nr[0]", Pos{2, 2}, "a record index must be a string, found a number", "script"},
		{"[1][1]", Pos{1, 4}, "index 1 is out of bounds for an array of length 1", "script"},
		{"[1][-1]", Pos{1, 4}, "index -1 is out of bounds for an array of length 1", "script"},
		{"[1][0.5]", Pos{1, 4}, "an array index must be a whole number", "script"},
		{`[1]["0"]`, Pos{1, 4}, "an array index must be a number, found a string", "script"},
		{`"abc"[0]`, Pos{1, 6}, "cannot index a string", "script"},
		{"(1).x", Pos{1, 5}, "cannot read field `x` of a number", "script"},
		{"use mod.tool\ntool.nope", Pos{2, 6}, "`nope` not found on mod.tool", "script"},
		{"use mod.tool\ntool.nope(1)", Pos{2, 6}, "method `nope` not found on mod.tool", "script"},
		{"(1).parse_json()", Pos{1, 5}, "method `parse_json` not found on a number", "script"},
		{"[1].len()", Pos{1, 5}, "method `len` not found on an array", "script"},
		{"let r = {a: 1}\nr.a()", Pos{2, 3}, "a number is not callable", "script"},
		{"(5)()", Pos{1, 2}, "a number is not callable", "script"},
		{"fn f(a) {\n}\nf(1, 2)", Pos{3, 1}, "function `f` takes 1 argument but 2 were given", "script"},
		{"fn g() {\n}\ng(1)", Pos{3, 1}, "function `g` takes 0 arguments but 1 were given", "script"},
	}
	for _, tc := range tests {
		diags := evalFailure(t, tc.src)
		want := "inline.splash:" + tc.pos.String() + ": " + tc.msg + " (" + tc.origin + ")"
		if len(diags) != 1 || diags[0].String() != want {
			t.Errorf("Eval(%q) diagnostics %v, want [%s]", tc.src, diags, want)
		}
	}
}

// Spec: SCR-101
func TestDiagnosticUsesConfiguredFile(t *testing.T) {
	h := newFakeHost(t)
	m, err := New(h, Config{File: "workflow.splash"})
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := m.Eval("\n  missing")
	if len(ev.Diagnostics) != 1 || ev.Diagnostics[0].String() != "workflow.splash:2:3: variable `missing` not found in scope (script)" {
		t.Fatalf("diagnostics %v", ev.Diagnostics)
	}
}

func TestNewRejectsBadConfiguration(t *testing.T) {
	if _, err := New(nil, Config{}); err != ErrNilHost {
		t.Fatalf("nil host: %v", err)
	}
	l := DefaultLimits()
	l.InstructionLimit = 0
	if _, err := New(newFakeHost(t), Config{Limits: l}); err == nil || !strings.Contains(err.Error(), "InstructionLimit must be greater than zero") {
		t.Fatalf("zero instruction limit: %v", err)
	}
	l = DefaultLimits()
	l.DeadlineCheckInterval = l.InstructionLimit
	if _, err := New(newFakeHost(t), Config{Limits: l}); err == nil {
		t.Fatal("check interval equal to the instruction limit accepted")
	}
	m, err := New(newFakeHost(t), Config{})
	if err != nil || m.Limits() != DefaultLimits() {
		t.Fatalf("zero limits do not mean the defaults: %v %+v", err, m.Limits())
	}
}

func TestValueAccessors(t *testing.T) {
	r := Record(Field{"a", Number(1)}, Field{"b", String("x")}, Field{"a", Number(2)})
	if got := r.String(); got != `{a: 2, b: "x"}` {
		t.Fatalf("record with a repeated field: %s", got)
	}
	if v, ok := r.Get("a"); !ok || v.NumberValue() != 2 {
		t.Fatalf("Get: %v %v", v, ok)
	}
	if Array().Elems() == nil || len(Number(1).Elems()) != 0 || Number(1).Fields() != nil {
		t.Fatal("accessors on the wrong kind")
	}
	if Bool(true).BoolValue() != true || String("s").NumberValue() != 0 || Nil().Text() != "" {
		t.Fatal("scalar accessors")
	}
	if _, ok := promiseValue(9).Promise(); !ok {
		t.Fatal("promise accessor")
	}
	for k := KindNil; k <= KindError; k++ {
		if k.String() == "unknown" {
			t.Fatalf("kind %d has no name", k)
		}
	}
}
