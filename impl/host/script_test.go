package host

import (
	"errors"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/script"
)

func newSession(t testing.TB, r *Runtime) *ScriptSession {
	t.Helper()
	s, err := NewScriptSession(r, script.Config{})
	wantNoError(t, err)
	return s
}

func wantCompleted(t testing.TB, ev *script.Evaluation) {
	t.Helper()
	if ev == nil {
		t.Fatal("no evaluation was resumed")
	}
	if !ev.Completed() {
		t.Fatalf("evaluation = %+v", *ev)
	}
}

// Spec: RUN-190, RUN-191, RUN-055
func TestScriptAwaitsAnExternalTool(t *testing.T) {
	r, _ := newTestRuntime(t, Config{})
	mustRegister(t, r.RegisterExternalTool(NewPolicy("text.remote"), Metadata{Description: "Runs in a host-managed worker."}))
	s := newSession(t, r)
	ev, err := s.Eval("use mod.tool\nuse mod.std.assert\nlet output = tool.start(\"text.remote\", \"release\").await()\nassert(output == \"done\")\n")
	wantNoError(t, err)
	if !ev.Suspended {
		t.Fatalf("evaluation = %+v", ev)
	}
	inv, ok := r.ClaimNextExternal()
	if !ok || inv.Input != "release" {
		t.Fatalf("claim = %+v", inv)
	}
	resumed, err := s.CompleteExternal(inv.ID, OK("done"))
	wantNoError(t, err)
	wantCompleted(t, resumed)
	// The evaluation ended: its promise is released and collected.
	if removed := r.CollectGarbage(); removed != 1 || r.PendingTools() != 0 {
		t.Fatalf("collected %d, %d retained", removed, r.PendingTools())
	}
}

// Spec: RUN-190
func TestScriptSeesToolErrorsAndRecovers(t *testing.T) {
	r, clock := newTestRuntime(t, Config{})
	remote := NewPolicy("remote").WithDeadline(time.Second)
	remote.MaxCalls = 5
	mustRegister(t, r.RegisterExternalTool(remote, Metadata{}))
	s := newSession(t, r)
	// A synchronous call of an external tool raises at the call site; try recovers.
	ev, err := s.Eval(`use mod.tool
let v = try tool.call("remote", "x") catch "recovered"
v`)
	wantNoError(t, err)
	if !ev.Completed() || ev.Value.Text() != "recovered" {
		t.Fatalf("evaluation = %+v", ev)
	}
	// An uncaught error becomes a diagnostic with the tool error's rendering.
	ev, err = s.Eval(`use mod.tool
tool.call("remote", "x")`)
	wantNoError(t, err)
	if len(ev.Diagnostics) != 1 || ev.Diagnostics[0].Message != "tool call denied: remote is available only through tool.start" {
		t.Fatalf("diagnostics = %+v", ev.Diagnostics)
	}
	// A timeout raises at await.
	ev, err = s.Eval(`use mod.tool
tool.start("remote", "y").await()`)
	wantNoError(t, err)
	if !ev.Suspended {
		t.Fatal("not suspended")
	}
	clock.Advance(time.Second)
	n, resumed, err := s.ExpireTimedOutUpTo(10)
	wantNoError(t, err)
	if n != 1 || len(resumed) != 1 {
		t.Fatalf("expired %d, resumed %d", n, len(resumed))
	}
	if d := resumed[0].Diagnostics; len(d) != 1 || d[0].Message != "tool call timed out: remote exceeded its deferred deadline" {
		t.Fatalf("diagnostics = %+v", d)
	}
	// A cancelled operation raises the cancellation rendering.
	if ev, _ = s.Eval(`use mod.tool
let p = tool.start("remote", "z")
try p.await() catch "was cancelled"`); !ev.Suspended {
		t.Fatalf("evaluation = %+v", ev)
	}
	inv, _ := r.ClaimNextExternal()
	_, _ = r.RequestExternalCancellation(inv.ID)
	resumedEv, err := s.ConfirmExternalCancellation(inv.ID)
	wantNoError(t, err)
	wantCompleted(t, resumedEv)
	if resumedEv.Value.Text() != "was cancelled" {
		t.Fatalf("value = %v", resumedEv.Value)
	}
}

// Spec: RUN-190, RUN-053
func TestScriptJSONMethodsAndPump(t *testing.T) {
	r, _ := newTestRuntime(t, Config{})
	p := JSONPolicy("calc")
	p.MaxCalls = 4
	mustRegister(t, r.RegisterJSONTool(p, Metadata{}, func(req JSONToolRequest) (canonjson.Value, error) {
		n, _ := req.Input.Get("n")
		return canonjson.Object(canonjson.Entry{Key: "twice", Value: canonjson.Array(n, n)}), nil
	}))
	s := newSession(t, r)
	ev, err := s.Eval(`use mod.tool
use mod.std.assert
let sync = tool.call_json("calc", {n: 1}).parse_json()
assert(sync.twice[1] == 1)
let p = tool.start_json("calc", {n: 2})
let a = p.await()
let b = p.await()
assert(a == b)
a.parse_json().twice[0]`)
	wantNoError(t, err)
	if !ev.Suspended {
		t.Fatalf("evaluation = %+v", ev)
	}
	n, resumed, err := s.PumpUpTo(5)
	wantNoError(t, err)
	if n != 1 || len(resumed) != 1 || !resumed[0].Completed() || resumed[0].Value.NumberValue() != 2 {
		t.Fatalf("pump = %d %+v", n, resumed)
	}
	// Awaiting a released (collected) promise is "unknown tool promise".
	if _, _, err := r.Await(2); !errors.Is(err, ErrUnknownPromise) {
		t.Fatalf("await after release = %v", err)
	}
	// A JSON method on a text tool is denied at the call site.
	mustRegister(t, r.RegisterTool(NewPolicy("text"), Metadata{}, echo))
	ev, _ = s.Eval(`use mod.tool
tool.call_json("text", [1])`)
	if len(ev.Diagnostics) != 1 || ev.Diagnostics[0].Message != "tool call denied: text is not registered for JSON envelopes" {
		t.Fatalf("diagnostics = %+v", ev.Diagnostics)
	}
}

// Spec: RUN-191, RUN-054
func TestScriptEndReleasesPromisesAndClaimedOnesBecomeOrphans(t *testing.T) {
	r, _ := newTestRuntime(t, Config{})
	p := NewPolicy("remote")
	p.MaxCalls = 5
	mustRegister(t, r.RegisterExternalTool(p, Metadata{}))
	s := newSession(t, r)
	if ev, err := s.Eval(`use mod.tool
let a = tool.start("remote", "a")
let b = tool.start("remote", "b")
a.await()`); err != nil || !ev.Suspended {
		t.Fatalf("evaluation = %+v, %v", ev, err)
	}
	inv, _ := r.ClaimNextExternal()  // a
	inv2, _ := r.ClaimNextExternal() // b, claimed but never awaited
	resumed, err := s.CompleteExternal(inv.ID, OK("A"))
	wantNoError(t, err)
	wantCompleted(t, resumed)
	if removed := r.CollectGarbage(); removed != 1 {
		t.Fatalf("removed %d, want 1 (the settled a)", removed)
	}
	info, ok := r.Operation(inv2.ID)
	if !ok || !info.Orphaned {
		t.Fatalf("b = %+v", info)
	}
	// The claimed orphan is still completed by the host, then deleted.
	if _, err := s.CompleteExternal(inv2.ID, OK("B")); err != nil {
		t.Fatal(err)
	}
	if r.PendingTools() != 0 {
		t.Fatal("the orphan outlived its settlement")
	}
	// A discarded evaluation releases its promises too.
	_, _ = s.Eval(`use mod.tool
tool.start("remote", "c").await()`)
	if _, err := s.Eval("1"); !errors.Is(err, script.ErrEvaluationInProgress) {
		t.Fatalf("second eval = %v", err)
	}
	s.Discard()
	if removed := r.CollectGarbage(); removed != 1 {
		t.Fatalf("removed %d after discard", removed)
	}
}

// Spec: RUN-191, RUN-035
func TestScriptLeaseSpansSuspension(t *testing.T) {
	r, _ := newTestRuntime(t, Config{})
	p := NewPolicy("remote")
	p.MaxCalls = 5
	mustRegister(t, r.RegisterExternalTool(p, Metadata{}))
	mustRegister(t, r.RegisterTool(NewPolicy("local"), Metadata{}, echo))
	lease, err := r.IssueLease([]LeaseGrant{{"remote", 2}}, nil)
	wantNoError(t, err)
	s := newSession(t, r)
	ev, err := s.EvalWithLease(`use mod.tool
let first = tool.start("remote", "1").await()
let denied = try tool.call("local", "x") catch "not leased"
let second = tool.start("remote", "2").await()
let third = try tool.start("remote", "3") catch "lease exhausted"
first + denied + second + third`, lease)
	wantNoError(t, err)
	if !ev.Suspended || r.ActiveLease() != lease {
		t.Fatal("the lease is not active while suspended")
	}
	if err := r.RegisterTool(NewPolicy("x"), Metadata{}, echo); !errors.Is(err, ErrActiveCapabilityLease) {
		t.Fatalf("registration during a leased evaluation: %v", err)
	}
	inv, _ := r.ClaimNextExternal()
	resumed, err := s.CompleteExternal(inv.ID, OK("A"))
	wantNoError(t, err)
	if !resumed.Suspended {
		t.Fatalf("after first = %+v", resumed)
	}
	inv, _ = r.ClaimNextExternal()
	resumed, err = s.CompleteExternal(inv.ID, OK("B"))
	wantNoError(t, err)
	wantCompleted(t, resumed)
	if resumed.Value.Text() != "Anot leasedBlease exhausted" {
		t.Fatalf("value = %q", resumed.Value.Text())
	}
	if r.ActiveLease() != nil {
		t.Fatal("the lease outlived the evaluation")
	}
}

// Spec: RUN-004, RUN-190
func TestScriptArgumentTypeErrorsNeverReachTheRuntime(t *testing.T) {
	r, _ := newTestRuntime(t, Config{})
	mustRegister(t, r.RegisterTool(NewPolicy("local"), Metadata{}, echo))
	s := newSession(t, r)
	ev, err := s.Eval(`use mod.tool
let a = try tool.call(5, "x") catch "typed"
let b = try tool.start("local", 7) catch "typed"
a + b`)
	wantNoError(t, err)
	if !ev.Completed() || ev.Value.Text() != "typedtyped" {
		t.Fatalf("evaluation = %+v", ev)
	}
	if len(r.Audit()) != 0 || r.PendingTools() != 0 || r.nextSequence != 0 {
		t.Fatalf("a type error reached the runtime: audit %v, sequence %d", r.Audit(), r.nextSequence)
	}
	if out, err := r.Call("local", "x"); err != nil || out != "echo:x" {
		t.Fatalf("call = %q, %v", out, err)
	}
	if r.Audit()[0].Sequence != 0 {
		t.Fatal("the first real call did not get sequence 0")
	}
}
