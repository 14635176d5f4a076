package script

import (
	"slices"
	"testing"
)

// Spec: SCR-040, SCR-041, SCR-050
func TestTryCatch(t *testing.T) {
	n := Number
	tests := []struct {
		src  string
		want Value
	}{
		{"use mod.std.assert\ntry assert(false) catch 9", n(9)},
		{"use mod.std.assert\ntry {\nassert(false)\n} catch {\n42\n}", n(42)},
		{"use mod.std.assert\nlet value = try {\n7\n} catch {\nassert(false)\n}\nvalue", n(7)},
		{"let value = try ({answer: 42}) catch ({answer: 0})\nvalue.answer", n(42)},
		{"let catch = 2\ntry (catch) catch catch + 1", n(2)},
		{"use mod.std.assert\nlet catch = 2\ntry {\nassert(false)\n} catch catch + 1", n(3)},
		// The error unwinds through function calls to the nearest try.
		{"use mod.std.assert\nfn fail() {\nassert(false)\n}\nfn middle() {\nreturn fail()\n}\nlet recovered = try {\nmiddle()\n0\n} catch {\n42\n}\nrecovered", n(42)},
		{"use mod.std.assert\nfn fail() {\nassert(false)\n}\nfn recover() {\nreturn try {\nfail()\n} catch {\n7\n}\n}\nrecover()", n(7)},
		// An error in the fallback reaches the enclosing try.
		{"use mod.std.assert\ntry {\ntry {\nassert(false)\n} catch {\nassert(false)\n}\n} catch {\n42\n}", n(42)},
		// Partial work of the protected branch is abandoned, its scope included.
		{"let x = \"outer\"\nlet r = try {\nlet x = \"inner\"\n[1, 2, undefined]\n} catch x\nr", String("outer")},
		// The first error wins; the rest of the protected branch does not run.
		{"let log = \"\"\ntry {\nlog += \"a\"\nmissing\nlog += \"b\"\nnil\n} catch {\nlog += \"c\"\nnil\n}\nlog", String("ac")},
		// A try that catches nothing leaves its handler behind correctly for a later error.
		{"use mod.std.assert\nlet a = try 1 catch 2\nlet b = try assert(false) catch 3\n[a, b]", Array(n(1), n(3))},
		// Catching inside a function after a return-free success.
		{"use mod.std.assert\nfn f(good) {\nlet r = try {\nassert(good)\n\"fine\"\n} catch \"recovered\"\nreturn r\n}\n[f(true), f(false), f(true)]", Array(String("fine"), String("recovered"), String("fine"))},
	}
	for _, tc := range tests {
		got := evalValue(t, tc.src)
		if !Equal(got, tc.want) {
			t.Errorf("Eval(%q) = %v, want %v", tc.src, got, tc.want)
		}
	}
}

// Spec: SCR-041, SCR-042, SCR-044
func TestFallbackErrorIsNotCaughtBySameTry(t *testing.T) {
	diags := evalFailure(t, "use mod.std.assert\ntry {\nassert(false)\n} catch {\nassert(false)\n}")
	if len(diags) != 1 || diags[0].String() != "inline.splash:5:1: assertion failed (mod.std.assert)" {
		t.Fatalf("diagnostics %v", diags)
	}
}

// Spec: SCR-050
func TestAssert(t *testing.T) {
	for _, arg := range []string{"false", "1", `"true"`, "nil", "[]", "{}", "", "0 / 0 != 0 / 0 == false"} {
		src := "use mod.std.assert\nassert(" + arg + ")"
		diags := evalFailure(t, src)
		if len(diags) != 1 || diags[0].String() != "inline.splash:2:1: assertion failed (mod.std.assert)" {
			t.Errorf("%q: diagnostics %v", src, diags)
		}
	}
	if v := evalValue(t, "use mod.std.assert\nassert(1 == 1)"); v.Kind() != KindNil {
		t.Fatalf("assert(true) = %v, want nil", v)
	}
	diags := evalFailure(t, "use mod.std.assert\nassert(true, true)")
	if len(diags) != 1 || diags[0].Message != "`assert` takes 1 argument but 2 were given" {
		t.Fatalf("two arguments: %v", diags)
	}
	diags = evalFailure(t, "assert(true)")
	if len(diags) != 1 || diags[0].Message != "variable `assert` not found in scope" {
		t.Fatalf("assert without use: %v", diags)
	}
}

// Spec: SCR-042, SCR-044, SCR-038
func TestUncaughtErrorsContinue(t *testing.T) {
	h := newFakeHost(t)
	h.addPump("echo", false, echo)
	m := h.newMachine(Limits{})
	ev, err := m.Eval(`use mod.tool
use mod.std.assert
assert(false)
let x = missing
tool.call("echo", "after")
fn f() {
    assert(false)
    return "body went on"
}
f()`)
	if err != nil {
		t.Fatal(err)
	}
	// The last statement succeeded, so the evaluation did, with three diagnostics.
	if !ev.Completed() || ev.Value.Text() != "body went on" {
		t.Fatalf("evaluation %+v", ev)
	}
	want := []string{
		"inline.splash:3:1: assertion failed (mod.std.assert)",
		"inline.splash:4:9: variable `missing` not found in scope (script)",
		"inline.splash:7:5: assertion failed (mod.std.assert)",
	}
	var got []string
	for _, d := range ev.Diagnostics {
		got = append(got, d.String())
	}
	if !slices.Equal(got, want) {
		t.Fatalf("diagnostics\n%q\nwant\n%q", got, want)
	}
	if ops := h.ops(); !slices.Equal(ops, []string{`call text echo "after"`}) {
		t.Fatalf("host saw %q", ops)
	}
}

// An error value flows on without performing anything and without new diagnostics.
//
// Spec: SCR-043, SCR-044
func TestErrorValuesPropagate(t *testing.T) {
	h := newFakeHost(t)
	h.addPump("echo", false, echo)
	m := h.newMachine(Limits{})
	for _, tail := range []string{
		"e + 1", "1 + e", "-e", "!e", "e == e", "e != 1", "e < 1", "[1, e]", "{a: e}", "e.field", "e[0]",
		"[1][e]", "e()", "e.to_json()", "e.await()", "f(e)", "tool.call(\"echo\", e)", "tool.call(e, \"x\")",
		"tool.start(\"echo\", e)", "assert(e)", "if e 1 else 2", "e && true", "e || true", "true && e",
		"false || e", "try e catch 5", "f(1, e)", "{a: 1, b: [e]}",
	} {
		src := "use mod.tool\nuse mod.std.assert\nfn f(a) {\nreturn a\n}\nlet e = missing\n" + tail
		ev, err := m.Eval(src)
		if err != nil {
			t.Fatalf("%q: %v", tail, err)
		}
		if ev.Succeeded() || ev.Value.Text() != "variable `missing` not found in scope" {
			t.Errorf("%q: value %v, want the original error value", tail, ev.Value)
		}
		if len(ev.Diagnostics) != 1 {
			t.Errorf("%q: diagnostics %v, want only the original one", tail, ev.Diagnostics)
		}
	}
	if len(h.log) != 0 {
		t.Fatalf("the host was called with an error value: %q", h.ops())
	}
	// A later statement that does not use the error value runs normally.
	ev, _ := m.Eval("let e = missing\nlet d = e\n[1, 2]")
	if !ev.Completed() || !Equal(ev.Value, Array(Number(1), Number(2))) || len(ev.Diagnostics) != 1 {
		t.Fatalf("unrelated statement: %+v", ev)
	}
}

// Spec: SCR-045, SCR-100
func TestRecoveryUndoesNothing(t *testing.T) {
	h := newFakeHost(t)
	h.addPump("echo", false, echo)
	m := h.newMachine(Limits{})
	ev, err := m.Eval(`use mod.tool
use mod.std.assert
let r = try {
    tool.call("echo", "first")
    assert(false)
    tool.call("echo", "never")
} catch {
    tool.call("echo", "fallback")
}
r`)
	if err != nil || !ev.Completed() || ev.Value.Text() != "fallback" {
		t.Fatalf("evaluation %+v %v", ev, err)
	}
	want := []string{`call text echo "first"`, `call text echo "fallback"`}
	if got := h.ops(); !slices.Equal(got, want) {
		t.Fatalf("host saw %q, want %q", got, want)
	}
}
