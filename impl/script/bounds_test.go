package script

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// stepClock advances by step on every reading.
type stepClock struct {
	now   time.Time
	step  time.Duration
	reads int
}

func (c *stepClock) read() time.Time {
	c.reads++
	c.now = c.now.Add(c.step)
	return c.now
}

const spinSource = `fn spin(n) {
    if n == 0 {
        return 0
    }
    return 1 + spin(n - 1)
}
`

// expectStop checks that ev is the result of an uncatchable stop by limit, that nothing ran
// after it (the host saw no call) and that the machine is idle again.
func expectStop(t *testing.T, h *fakeHost, m *Machine, ev Evaluation, limit error) {
	t.Helper()
	if !errors.Is(ev.Stop, limit) {
		t.Fatalf("Stop = %v, want %v (evaluation %+v)", ev.Stop, limit, ev)
	}
	var le *LimitError
	if !errors.As(ev.Stop, &le) || le.Error() != limit.Error() {
		t.Fatalf("Stop is not a *LimitError carrying %q: %v", limit, ev.Stop)
	}
	if ev.Succeeded() || ev.Suspended || ev.Status() != StatusFailed || ev.Value.Text() != limit.Error() {
		t.Fatalf("stopped evaluation: %+v", ev)
	}
	last := ev.Diagnostics[len(ev.Diagnostics)-1]
	if last.Message != limit.Error() || last.Origin != "limit" {
		t.Fatalf("last diagnostic %v", last)
	}
	for _, c := range h.log {
		if c.Tool == "after" {
			t.Fatalf("the script went on after the stop: %q", h.ops())
		}
	}
	if _, suspended := m.Suspended(); suspended {
		t.Fatal("machine suspended after a stop")
	}
	if next, err := m.Eval("1 + 1"); err != nil || next.Value.NumberValue() != 2 {
		t.Fatalf("machine not idle after a stop: %+v %v", next, err)
	}
}

// The fallback of every try must not run: it calls the host tool "after", as does everything
// that follows the protected expression.
func guarded(protected string) string {
	return "use mod.tool\n" + spinSource + "let r = try {\n" + protected + "\n} catch {\ntool.call(\"after\", \"fallback\")\n}\ntool.call(\"after\", \"next\")"
}

// Spec: SCR-090, SCR-095
func TestInstructionLimitStopsUncatchably(t *testing.T) {
	h := newFakeHost(t)
	h.addPump("after", false, echo)
	limits := DefaultLimits()
	limits.InstructionLimit = 500
	limits.DeadlineCheckInterval = 100
	m := h.newMachine(limits)
	ev, err := m.Eval(guarded("spin(400)"))
	if err != nil {
		t.Fatal(err)
	}
	expectStop(t, h, m, ev, ErrInstructionLimit)
	// The stop is reported where the budget ran out: inside spin (lines 2 to 7 of the source).
	if d := ev.Diagnostics; len(d) != 1 || d[0].Pos.Line < 3 || d[0].Pos.Line > 7 {
		t.Fatalf("diagnostics %v", d)
	}
	// The same work fits a larger budget.
	limits.InstructionLimit = 20_000
	m = h.newMachine(limits)
	if ev, _ := m.Eval(spinSource + "spin(400)"); !ev.Completed() || ev.Value.NumberValue() != 400 {
		t.Fatalf("larger budget: %+v", ev)
	}
}

// Comparing two structures that share subtrees visits every path; the visits are charged to
// the instruction budget, so an exponential comparison stops instead of hanging.
//
// Spec: SCR-090, SCR-095, SCR-097
func TestEqualityChargesInstructions(t *testing.T) {
	var b strings.Builder
	for _, name := range []string{"a", "b"} {
		fmt.Fprintf(&b, "let %s0 = [1, 2]\n", name)
		for i := 1; i <= 60; i++ {
			fmt.Fprintf(&b, "let %s%d = [%s%d, %s%d]\n", name, i, name, i-1, name, i-1)
		}
	}
	h := newFakeHost(t)
	h.addPump("after", false, echo)
	m := h.newMachine(Limits{})
	ev, err := m.Eval("use mod.tool\n" + b.String() + "try a60 == b60 catch tool.call(\"after\", \"x\")\ntool.call(\"after\", \"y\")")
	if err != nil {
		t.Fatal(err)
	}
	expectStop(t, h, m, ev, ErrInstructionLimit)
	// Small shared structures compare normally.
	if v := evalValue(t, b.String()+"a3 == b3"); !v.BoolValue() {
		t.Fatalf("a3 == b3 = %v", v)
	}
}

// Spec: SCR-091, SCR-095
func TestDeadlineStopsUncatchably(t *testing.T) {
	clock := &stepClock{now: time.Unix(1000, 0), step: time.Millisecond}
	h := newFakeHost(t)
	h.addPump("after", false, echo)
	limits := DefaultLimits()
	limits.Deadline = 10 * time.Millisecond
	limits.DeadlineCheckInterval = 50
	m, err := New(h, Config{Limits: limits, Clock: clock.read})
	if err != nil {
		t.Fatal(err)
	}
	h.machine = m
	ev, err := m.Eval(guarded("spin(400)"))
	if err != nil {
		t.Fatal(err)
	}
	// One reading at the start (1 ms, deadline 11 ms), then one per 50 instructions: the tenth
	// of those reads 11 ms and stops the run.
	if clock.reads != 11 {
		t.Fatalf("clock read %d times, want 11", clock.reads)
	}
	if !errors.Is(ev.Stop, ErrDeadline) {
		t.Fatalf("Stop = %v", ev.Stop)
	}
	clock.reads = 0
	expectStop(t, h, m, ev, ErrDeadline)

	// A short run reads the clock once.
	clock.reads = 0
	if ev, _ := m.Eval("1 + 2"); !ev.Completed() || clock.reads != 1 {
		t.Fatalf("short run: %+v, %d readings", ev, clock.reads)
	}
}

// Spec: SCR-091, SCR-096
func TestDeadlineRestartsOnResume(t *testing.T) {
	clock := &stepClock{now: time.Unix(1000, 0), step: time.Microsecond}
	h := newFakeHost(t)
	h.addExternal("ext", false)
	m, err := New(h, Config{Clock: clock.read})
	if err != nil {
		t.Fatal(err)
	}
	h.machine = m
	ev, err := m.Eval("use mod.tool\ntool.start(\"ext\", \"x\").await()")
	if err != nil || !ev.Suspended {
		t.Fatalf("eval: %+v %v", ev, err)
	}
	clock.now = clock.now.Add(time.Hour) // the host takes an hour to complete the call
	ev, _ = h.complete(1, "late but fine", nil)
	if !ev.Completed() || ev.Value.Text() != "late but fine" {
		t.Fatalf("resumed: %+v", ev)
	}
}

// Spec: SCR-092, SCR-095
func TestStringLimitStopsUncatchably(t *testing.T) {
	limits := DefaultLimits()
	limits.MaxStringBytes = 16
	for _, protected := range []string{
		`"0123456789" + "0123456789"`,
		`tool.call_json("after", "0123456789abcdef")`, // 18 bytes of JSON text
		`tool.start_json("after", ["0123456", "0123456"])`,
	} {
		h := newFakeHost(t)
		h.addPump("after", true, echo)
		m := h.newMachine(limits)
		ev, err := m.Eval(guarded(protected))
		if err != nil {
			t.Fatal(err)
		}
		expectStop(t, h, m, ev, ErrStringLimit)
	}
	// Exactly at the bound is fine.
	h := newFakeHost(t)
	h.addPump("after", true, echo)
	m := h.newMachine(limits)
	ev, _ := m.Eval("use mod.tool\n[\"01234567\" + \"89abcdef\", tool.call_json(\"after\", \"0123456789abcd\")]")
	if !ev.Completed() || len(ev.Value.Elems()[0].Text()) != 16 || len(ev.Value.Elems()[1].Text()) != 16 {
		t.Fatalf("at the bound: %+v", ev)
	}
}

// Spec: SCR-093, SCR-095, SCR-096
func TestHeapLimitStopsUncatchably(t *testing.T) {
	limits := DefaultLimits()
	limits.MaxHeapBytes = 1000
	h := newFakeHost(t)
	h.addPump("after", false, echo)
	m := h.newMachine(limits)
	elems := strings.TrimSuffix(strings.Repeat("1, ", 30), ", ")
	ev, err := m.Eval(guarded("[" + elems + "]"))
	if err != nil {
		t.Fatal(err)
	}
	expectStop(t, h, m, ev, ErrHeapLimit)

	// Heap use accumulates across the runs of one evaluation and restarts with Eval.
	limits.MaxHeapBytes = 200
	h = newFakeHost(t)
	h.addExternal("ext", false)
	m = h.newMachine(limits)
	src := "use mod.tool\nlet a = tool.start(\"ext\", \"1\").await()\nlet b = tool.start(\"ext\", \"2\").await()\n\"done\""
	out := strings.Repeat("x", 120)
	if ev, _ = m.Eval(src); !ev.Suspended {
		t.Fatalf("eval: %+v", ev)
	}
	ev, _ = h.complete(1, out, nil)
	if !ev.Suspended {
		t.Fatalf("first output: %+v", ev)
	}
	ev, _ = h.complete(2, out, nil)
	if !errors.Is(ev.Stop, ErrHeapLimit) {
		t.Fatalf("second output: %+v", ev)
	}
	ev, _ = m.Eval(src)
	ev, _ = h.complete(3, out, nil)
	if !ev.Suspended {
		t.Fatalf("heap not restarted by Eval: %+v", ev)
	}
}

// Spec: SCR-094, SCR-095
func TestStackAndCallFrameLimitsStopUncatchably(t *testing.T) {
	limits := DefaultLimits()
	limits.MaxStackValues = 8
	h := newFakeHost(t)
	h.addPump("after", false, echo)
	m := h.newMachine(limits)
	ev, err := m.Eval(guarded("[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"))
	if err != nil {
		t.Fatal(err)
	}
	expectStop(t, h, m, ev, ErrStackLimit)

	h = newFakeHost(t)
	h.addPump("after", false, echo)
	m = h.newMachine(Limits{})
	ev, err = m.Eval("use mod.tool\nfn f() {\nreturn f()\n}\ntry f() catch tool.call(\"after\", \"x\")")
	if err != nil {
		t.Fatal(err)
	}
	expectStop(t, h, m, ev, ErrCallFrameLimit)

	// Four frames: the top level, f, g and h.
	chain := "fn h() {\nreturn 1\n}\nfn g() {\nreturn h()\n}\nfn f() {\nreturn g()\n}\nf()"
	limits = DefaultLimits()
	limits.MaxCallFrames = 4
	m = h.newMachine(limits)
	if ev, _ := m.Eval(chain); !ev.Completed() {
		t.Fatalf("four frames: %+v", ev)
	}
	limits.MaxCallFrames = 3
	m = h.newMachine(limits)
	if ev, _ := m.Eval(chain); !errors.Is(ev.Stop, ErrCallFrameLimit) {
		t.Fatalf("three frames: %+v", ev)
	}
}

// A stop keeps the diagnostics recorded before it, in order.
//
// Spec: SCR-095, SCR-101
func TestStopKeepsEarlierDiagnostics(t *testing.T) {
	limits := DefaultLimits()
	limits.MaxStringBytes = 4
	h := newFakeHost(t)
	m := h.newMachine(limits)
	ev, _ := m.Eval("missing\n\"abc\" + \"de\"")
	if len(ev.Diagnostics) != 2 || ev.Diagnostics[0].Message != "variable `missing` not found in scope" ||
		ev.Diagnostics[1].String() != "inline.splash:2:7: script string allocation limit exceeded (limit)" {
		t.Fatalf("diagnostics %v", ev.Diagnostics)
	}
}
