package script

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// The two runtime.eval calls of the external-tools document, copied byte for byte from the
// document's Rust examples: each constant is the Rust string literal exactly as printed there,
// continuation lines and their indentation included. rustString decodes them the way rustc does.
const (
	externalToolsExampleOneLiteral = `"use mod.tool
     use mod.std.assert
     let output = tool.start(\"text.remote\", \"release\").await()
     assert(output == \"done\")"`

	externalToolsExampleTwoLiteral = `"use mod.tool\n\
     tool.start(\"text.remote\", \"release\").await()"`
)

// rustString decodes a non-raw Rust string literal (quotes included): the escapes \" \\ \n \r
// \t \0, and a backslash before a line end, which drops the line end and the whitespace after
// it.
func rustString(t *testing.T, lit string) string {
	t.Helper()
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		t.Fatalf("not a string literal: %q", lit)
	}
	body := lit[1 : len(lit)-1]
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		if body[i] != '\\' {
			b.WriteByte(body[i])
			continue
		}
		i++
		switch body[i] {
		case '"':
			b.WriteByte('"')
		case '\\':
			b.WriteByte('\\')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case '0':
			b.WriteByte(0)
		case '\n':
			for i+1 < len(body) && strings.IndexByte(" \t\n\r", body[i+1]) >= 0 {
				i++
			}
		default:
			t.Fatalf("unsupported escape \\%c", body[i])
		}
	}
	return b.String()
}

func TestRustStringDecoding(t *testing.T) {
	// Independent expectations, written out by hand from the Rust reference rules.
	if got, want := rustString(t, externalToolsExampleTwoLiteral), "use mod.tool\ntool.start(\"text.remote\", \"release\").await()"; got != want {
		t.Fatalf("example two decodes to %q, want %q", got, want)
	}
	want := "use mod.tool\n     use mod.std.assert\n     let output = tool.start(\"text.remote\", \"release\").await()\n     assert(output == \"done\")"
	if got := rustString(t, externalToolsExampleOneLiteral); got != want {
		t.Fatalf("example one decodes to %q, want %q", got, want)
	}
}

// Spec: SCR-060, SCR-062, SCR-066, SCR-067, SCR-068, SCR-044, SCR-050, SCR-100
func TestExternalToolsDocumentExampleOne(t *testing.T) {
	h := newFakeHost(t)
	h.addExternal("text.remote", false)
	m := h.newMachine(Limits{})

	initial, err := m.Eval(rustString(t, externalToolsExampleOneLiteral))
	if err != nil {
		t.Fatalf("eval: %v", err)
	}
	if !initial.Suspended {
		t.Fatalf("initial evaluation not suspended: %+v", initial)
	}
	if initial.Completed() || initial.Status() != StatusSuspended || len(initial.Diagnostics) != 0 {
		t.Fatalf("initial evaluation: %+v", initial)
	}
	id, ok := h.claimNext()
	if !ok {
		t.Fatal("no pending worker call")
	}
	resumed, ok := h.complete(id, "done", nil)
	if !ok {
		t.Fatal("the script was not awaiting the result")
	}
	if !resumed.Completed() {
		t.Fatalf("resumed evaluation not completed: %+v", resumed)
	}
	if resumed.Value.Kind() != KindNil || len(resumed.Diagnostics) != 0 {
		t.Fatalf("resumed evaluation: %+v", resumed)
	}
	wantOps := []string{`start text text.remote "release"`, "await 1"}
	if got := h.ops(); !slices.Equal(got, wantOps) {
		t.Fatalf("host saw %q, want %q", got, wantOps)
	}
}

// The same script with a worker result other than "done": the assertion on line 4 (column 6,
// after five spaces of indentation) fails and the evaluation does not complete.
//
// Spec: SCR-042, SCR-044, SCR-050, SCR-101
func TestExternalToolsDocumentExampleOneWrongResult(t *testing.T) {
	h := newFakeHost(t)
	h.addExternal("text.remote", false)
	m := h.newMachine(Limits{})
	if _, err := m.Eval(rustString(t, externalToolsExampleOneLiteral)); err != nil {
		t.Fatal(err)
	}
	id, _ := h.claimNext()
	resumed, _ := h.complete(id, "not done", nil)
	if resumed.Completed() || resumed.Status() != StatusFailed {
		t.Fatalf("evaluation completed with a failed assertion: %+v", resumed)
	}
	want := "inline.splash:4:6: assertion failed (mod.std.assert)"
	if len(resumed.Diagnostics) != 1 || resumed.Diagnostics[0].String() != want {
		t.Fatalf("diagnostics %v, want [%s]", resumed.Diagnostics, want)
	}
}

// Spec: SCR-062, SCR-067, SCR-068, SCR-100
func TestExternalToolsDocumentExampleTwo(t *testing.T) {
	h := newFakeHost(t)
	h.addExternal("text.remote", false)
	m := h.newMachine(Limits{})

	initial, err := m.Eval(rustString(t, externalToolsExampleTwoLiteral))
	if err != nil {
		t.Fatalf("eval: %v", err)
	}
	if !initial.Suspended || initial.Awaiting != 1 {
		t.Fatalf("initial evaluation: %+v", initial)
	}
	// The worker reconciles the claimed operation as succeeded with the text "done".
	id, ok := h.claimNext()
	if !ok {
		t.Fatal("no pending worker call")
	}
	resumed, ok := h.complete(id, "done", nil)
	if !ok || !resumed.Completed() {
		t.Fatalf("resolved evaluation: %+v (resumed %v)", resumed, ok)
	}
	if resumed.Value.Kind() != KindString || resumed.Value.Text() != "done" {
		t.Fatalf("value %v, want \"done\"", resumed.Value)
	}
}

// Spec: SCR-070, SCR-066, SCR-067, SCR-068
func TestSeveralPromisesCompletedOutOfOrder(t *testing.T) {
	h := newFakeHost(t)
	h.addExternal("ext.a", false)
	h.addExternal("ext.b", false)
	h.addPump("pump.c", false, func(in string) (string, error) { return "C" + in, nil })
	m := h.newMachine(Limits{})
	ev, err := m.Eval(`use mod.tool
let a = tool.start("ext.a", "1")
let b = tool.start("ext.b", "2")
let c = tool.start("pump.c", "3")
let ra = a.await()
let rb = b.await()
let rc = c.await()
[ra, rb, rc]`)
	if err != nil {
		t.Fatal(err)
	}
	if !ev.Suspended || ev.Awaiting != 1 {
		t.Fatalf("first run: %+v", ev)
	}
	// b settles first and c is pumped: nobody waits on them, so nothing resumes.
	if _, resumed := h.complete(2, "B", nil); resumed {
		t.Fatal("completing an unawaited promise resumed the script")
	}
	if _, resumed := h.pump(); resumed {
		t.Fatal("pumping an unawaited promise resumed the script")
	}
	if id, ok := m.Suspended(); !ok || id != 1 {
		t.Fatalf("machine suspended on %d (%v), want 1", id, ok)
	}
	final, resumed := h.complete(1, "A", nil)
	if !resumed || !final.Completed() {
		t.Fatalf("final run: %+v", final)
	}
	if want := Array(String("A"), String("B"), String("C3")); !Equal(final.Value, want) {
		t.Fatalf("value %v, want %v", final.Value, want)
	}
	wantOps := []string{
		`start text ext.a "1"`, `start text ext.b "2"`, `start text pump.c "3"`,
		"await 1", "await 2", "await 3",
	}
	if got := h.ops(); !slices.Equal(got, wantOps) {
		t.Fatalf("host saw %q, want %q", got, wantOps)
	}
}

// Spec: SCR-067, SCR-068, SCR-101
func TestSuspendsOncePerPendingAwait(t *testing.T) {
	h := newFakeHost(t)
	h.addExternal("ext", false)
	m := h.newMachine(Limits{})
	ev, err := m.Eval(`use mod.tool
use mod.std.assert
let a = tool.start("ext", "1")
let b = tool.start("ext", "2")
assert(1)
let x = a.await()
assert(2)
let y = b.await()
x + y`)
	if err != nil {
		t.Fatal(err)
	}
	// Each run reports only its own diagnostics.
	if !ev.Suspended || ev.Awaiting != 1 || len(ev.Diagnostics) != 1 || ev.Diagnostics[0].Pos != (Pos{5, 1}) {
		t.Fatalf("first run: %+v", ev)
	}
	ev, _ = h.complete(1, "left-", nil)
	if !ev.Suspended || ev.Awaiting != 2 || len(ev.Diagnostics) != 1 || ev.Diagnostics[0].Pos != (Pos{7, 1}) {
		t.Fatalf("second run: %+v", ev)
	}
	ev, _ = h.complete(2, "right", nil)
	if !ev.Completed() || ev.Value.Text() != "left-right" || len(ev.Diagnostics) != 0 {
		t.Fatalf("third run: %+v", ev)
	}
}

// Spec: SCR-070, SCR-068
func TestDroppedPromiseDoesNotAffectEvaluation(t *testing.T) {
	h := newFakeHost(t)
	h.addExternal("ext", false)
	m := h.newMachine(Limits{})
	ev, err := m.Eval("use mod.tool\nlet p = tool.start(\"ext\", \"x\")\n\"finished\"")
	if err != nil {
		t.Fatal(err)
	}
	if !ev.Completed() || ev.Value.Text() != "finished" {
		t.Fatalf("evaluation: %+v", ev)
	}
	id, ok := h.claimNext()
	if !ok || id != 1 {
		t.Fatalf("dropped promise is not queued at the host: %d %v", id, ok)
	}
	if _, resumed := h.complete(id, "late", nil); resumed {
		t.Fatal("completing a dropped promise resumed something")
	}
	if _, err := m.Resume(id, Outcome{Output: "late"}); !errors.Is(err, ErrNotSuspended) {
		t.Fatalf("Resume of a dropped promise: %v, want ErrNotSuspended", err)
	}
	// The machine is idle and evaluates the next script normally.
	if ev, err := m.Eval("1 + 1"); err != nil || ev.Value.NumberValue() != 2 {
		t.Fatalf("next evaluation: %+v %v", ev, err)
	}
}

// Spec: SCR-040, SCR-065, SCR-068
func TestFailedPromiseRaisesAtAwait(t *testing.T) {
	tests := []struct {
		name    string
		fail    error
		message string
	}{
		{"failed", Failed("worker exited"), "tool call failed: worker exited"},
		{"cancelled", Cancelled(), "tool call cancelled: external operation was reported cancelled"},
		{"timed out", TimedOut("text.remote"), "tool call timed out: text.remote exceeded its deferred deadline"},
		{"denied", Denied("lease revoked"), "tool call denied: lease revoked"},
		{"plain host error", errors.New("host gave up"), "host gave up"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Caught: the fallback value, no diagnostic.
			h := newFakeHost(t)
			h.addExternal("text.remote", false)
			m := h.newMachine(Limits{})
			if _, err := m.Eval("use mod.tool\ntry tool.start(\"text.remote\", \"x\").await() catch \"fallback\""); err != nil {
				t.Fatal(err)
			}
			ev, _ := h.complete(1, "", tc.fail)
			if !ev.Completed() || ev.Value.Text() != "fallback" || len(ev.Diagnostics) != 0 {
				t.Fatalf("caught: %+v", ev)
			}

			// Uncaught: a diagnostic at the await, and the final value is an error.
			h = newFakeHost(t)
			h.addExternal("text.remote", false)
			m = h.newMachine(Limits{})
			if _, err := m.Eval("use mod.tool\nlet p = tool.start(\"text.remote\", \"x\")\np.await()"); err != nil {
				t.Fatal(err)
			}
			ev, _ = h.complete(1, "", tc.fail)
			want := "inline.splash:3:3: " + tc.message + " (mod.tool)"
			if ev.Succeeded() || len(ev.Diagnostics) != 1 || ev.Diagnostics[0].String() != want {
				t.Fatalf("uncaught: %+v, want diagnostic %s", ev, want)
			}
			if ev.Value.Text() != tc.message {
				t.Fatalf("error value carries %q, want %q", ev.Value.Text(), tc.message)
			}
		})
	}
}

// Spec: SCR-068, SCR-069
func TestResumeAndEvalMisuse(t *testing.T) {
	h := newFakeHost(t)
	h.addExternal("ext", false)
	m := h.newMachine(Limits{})
	if _, err := m.Resume(1, Outcome{}); !errors.Is(err, ErrNotSuspended) {
		t.Fatalf("Resume while idle: %v", err)
	}
	ev, err := m.Eval("use mod.tool\ntool.start(\"ext\", \"x\").await()")
	if err != nil || !ev.Suspended {
		t.Fatalf("eval: %+v %v", ev, err)
	}
	if _, err := m.Resume(7, Outcome{Output: "wrong"}); !errors.Is(err, ErrNotAwaited) {
		t.Fatalf("Resume of another promise: %v", err)
	}
	if _, err := m.Eval("1"); !errors.Is(err, ErrEvaluationInProgress) || err.Error() != "a suspended Splash evaluation must be resumed first" {
		t.Fatalf("Eval while suspended: %v", err)
	}
	if id, ok := m.Suspended(); !ok || id != 1 {
		t.Fatalf("misuse changed the suspension: %d %v", id, ok)
	}
	ev, err = m.Resume(1, Outcome{Output: "right"})
	if err != nil || !ev.Completed() || ev.Value.Text() != "right" {
		t.Fatalf("Resume: %+v %v", ev, err)
	}
	if _, err := m.Resume(1, Outcome{Output: "again"}); !errors.Is(err, ErrNotSuspended) {
		t.Fatalf("second Resume: %v", err)
	}

	// Discard abandons a suspended evaluation.
	if ev, _ := m.Eval("use mod.tool\ntool.start(\"ext\", \"y\").await()"); !ev.Suspended {
		t.Fatal("not suspended")
	}
	m.Discard()
	if _, ok := m.Suspended(); ok {
		t.Fatal("still suspended after Discard")
	}
	if ev, err := m.Eval("40 + 2"); err != nil || ev.Value.NumberValue() != 42 {
		t.Fatalf("Eval after Discard: %+v %v", ev, err)
	}
}

// Spec: SCR-066, SCR-070
func TestSettledPromiseAwaitedTwiceAndWithoutSuspension(t *testing.T) {
	h := newFakeHost(t)
	h.addPump("pump", false, func(in string) (string, error) { return in + "!", nil })
	m := h.newMachine(Limits{})
	ev, err := m.Eval("use mod.tool\nlet p = tool.start(\"pump\", \"hi\")\nlet x = p.await()\nlet y = p.await()\n[x, y]")
	if err != nil || !ev.Suspended {
		t.Fatalf("eval: %+v %v", ev, err)
	}
	ev, resumed := h.pump()
	if !resumed || !ev.Completed() || !Equal(ev.Value, Array(String("hi!"), String("hi!"))) {
		t.Fatalf("resumed: %+v", ev)
	}
	// The second await asked the host again.
	if got := h.ops(); !slices.Equal(got, []string{`start text pump "hi"`, "await 1", "await 1"}) {
		t.Fatalf("host saw %q", got)
	}
}

// Spec: SCR-066
func TestAwaitEdgeCases(t *testing.T) {
	h := newFakeHost(t)
	h.addExternal("ext", false)
	m := h.newMachine(Limits{})

	for _, src := range []string{`"text".await()`, `(5).await()`, `[1].await()`, `nil.await()`, "use mod.tool\ntool.await()"} {
		ev, err := m.Eval(src)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if ev.Succeeded() || len(ev.Diagnostics) != 1 || ev.Diagnostics[0].Message != "tool promise expected" {
			t.Fatalf("%q: %+v", src, ev)
		}
	}

	// A promise whose record the host collected is unknown.
	ev, err := m.Eval("use mod.tool\nlet p = tool.start(\"ext\", \"1\")\nlet q = tool.start(\"ext\", \"2\")\nq.await()\np.await()")
	if err != nil || ev.Awaiting != 2 {
		t.Fatalf("eval: %+v %v", ev, err)
	}
	if _, resumed := h.complete(1, "early", nil); resumed {
		t.Fatal("unexpected resume")
	}
	h.collect()
	ev, _ = h.complete(2, "q", nil)
	if ev.Succeeded() || len(ev.Diagnostics) != 1 || ev.Diagnostics[0].String() != "inline.splash:5:3: unknown tool promise (mod.tool)" {
		t.Fatalf("collected promise: %+v", ev)
	}
}

// alreadyAwaitedHost answers every await as a host does for a promise that another paused
// evaluation already waits on.
type alreadyAwaitedHost struct{ fakeHost }

func (h *alreadyAwaitedHost) AwaitTool(PromiseID) (string, bool, error) {
	return "", false, ErrPromiseAlreadyAwaited
}

// Spec: SCR-066
func TestAwaitAlreadyAwaited(t *testing.T) {
	h := &alreadyAwaitedHost{fakeHost: *newFakeHost(t)}
	h.addExternal("ext", false)
	m, err := New(h, Config{})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := m.Eval("use mod.tool\ntry tool.start(\"ext\", \"1\").await() catch \"caught\"\ntool.start(\"ext\", \"2\").await()")
	if err != nil {
		t.Fatal(err)
	}
	if ev.Suspended || len(ev.Diagnostics) != 1 || ev.Diagnostics[0].Message != "tool promise is already awaited" {
		t.Fatalf("evaluation: %+v", ev)
	}
}

// Spec: SCR-040, SCR-067, SCR-068
func TestSuspensionInsideFunctionsAndTry(t *testing.T) {
	src := `use mod.tool
fn fetch(input) {
    let p = tool.start("ext", input)
    return "got " + p.await()
}
fn guarded(input) {
    return try {
        fetch(input)
    } catch {
        "fallback for " + input
    }
}
[guarded("a"), guarded("b")]`
	h := newFakeHost(t)
	h.addExternal("ext", false)
	m := h.newMachine(Limits{})
	ev, err := m.Eval(src)
	if err != nil || ev.Awaiting != 1 {
		t.Fatalf("eval: %+v %v", ev, err)
	}
	ev, _ = h.complete(1, "", Failed("boom"))
	if ev.Awaiting != 2 {
		t.Fatalf("second await: %+v", ev)
	}
	ev, _ = h.complete(2, "B", nil)
	want := Array(String("fallback for a"), String("got B"))
	if !ev.Completed() || !Equal(ev.Value, want) {
		t.Fatalf("value %v, want %v (%+v)", ev.Value, want, ev)
	}
}

// A bound await (the method read as a field, called later) suspends and resumes the same way.
//
// Spec: SCR-066, SCR-067
func TestBoundAwaitSuspends(t *testing.T) {
	h := newFakeHost(t)
	h.addExternal("ext", false)
	m := h.newMachine(Limits{})
	ev, err := m.Eval("use mod.tool\nlet wait = tool.start(\"ext\", \"x\").await\nlet got = wait()\ngot + \"?\"")
	if err != nil || !ev.Suspended {
		t.Fatalf("eval: %+v %v", ev, err)
	}
	ev, _ = h.complete(1, "ok", nil)
	if !ev.Completed() || ev.Value.Text() != "ok?" {
		t.Fatalf("resumed: %+v", ev)
	}
}

// Spec: SCR-096, SCR-090
func TestRunBoundsRestartOnResume(t *testing.T) {
	var b strings.Builder
	b.WriteString("use mod.tool\n")
	for range 30 {
		b.WriteString("let x = 1\n") // two instructions each
	}
	b.WriteString("let r = tool.start(\"ext\", \"x\").await()\n")
	for range 30 {
		b.WriteString("let y = 2\n")
	}
	b.WriteString("r")
	limits := DefaultLimits()
	limits.InstructionLimit = 100
	limits.DeadlineCheckInterval = 10

	h := newFakeHost(t)
	h.addExternal("ext", false)
	m := h.newMachine(limits)
	ev, err := m.Eval(b.String())
	if err != nil || !ev.Suspended {
		t.Fatalf("eval: %+v %v", ev, err)
	}
	ev, _ = h.complete(1, "done", nil)
	if !ev.Completed() || ev.Value.Text() != "done" {
		t.Fatalf("resumed: %+v", ev)
	}

	// The same amount of work in one run exceeds the bound.
	h = newFakeHost(t)
	h.addPump("ext", false, echo)
	m = h.newMachine(limits)
	ev, err = m.Eval(strings.Replace(b.String(), "tool.start(\"ext\", \"x\").await()", "tool.call(\"ext\", \"done\")", 1))
	if err != nil || !errors.Is(ev.Stop, ErrInstructionLimit) {
		t.Fatalf("single run: %+v %v", ev, err)
	}
}
