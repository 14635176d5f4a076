package workflow_test

import (
	"testing"

	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/ledger"
	"github.com/splashv5/conform/impl/opkey"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/workflow"
)

// Spec: WFL-001, WFL-002, WFL-003, WFL-004
// A durable step: prepare records the key and persists before the claim; the dispatch frame is
// sealed after that write; the worker's succeeded answer is persisted before the promise
// resolves, and the durable ledger holds it.
func TestDurableStepOrder(t *testing.T) {
	f := newFixture(t)
	id := f.start("succeed", `{"n":1}`)
	c, err := f.e.Prepare(f.ctx, []byte("run-42:publish:0"))
	if err != nil {
		t.Fatal(err)
	}
	if f.store.writes != 1 || f.state(id) != host.StateClaimed || c.Invocation().ID != id {
		t.Fatalf("writes %d, state %v", f.store.writes, f.state(id))
	}
	stored, _, err := f.store.Load(f.ctx, testPlan)
	if err != nil {
		t.Fatal(err)
	}
	if op, ok := stored.Operation(c.OperationKey()); !ok || op.State != ledger.Pending || op.StepID != "publish" {
		t.Fatalf("stored record %+v %v", op, ok)
	}
	input, err := protocol.CanonicalOperationInputBytes(c.Payload())
	if err != nil {
		t.Fatal(err)
	}
	if want := opkey.OperationKey(planFP, "publish", record, input, []byte("run-42:publish:0")); c.OperationKey() != want {
		t.Fatalf("key %s, want the plan-bound key %s", c.OperationKey(), want)
	}
	d, err := f.e.SealDispatch("dispatch-1", f.host)
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.e.ApplyDispatchAnswer(f.ctx, d.Request, f.host, f.send(d.Line))
	if err != nil {
		t.Fatal(err)
	}
	if res.State != ledger.Succeeded || res.Settled == nil || res.Settled.Err != nil || f.state(id) != host.StateReady {
		t.Fatalf("resolution %+v, state %v", res, f.state(id))
	}
	if f.store.writes != 2 {
		t.Fatalf("writes %d", f.store.writes)
	}
	stored, _, _ = f.store.Load(f.ctx, testPlan)
	if op, _ := stored.Operation(c.OperationKey()); op.State != ledger.Succeeded {
		t.Fatalf("stored state %v", op.State)
	}
}

// Spec: WFL-005
// An authenticated succeeded does not complete the step: the engine stays on it until the
// host approves it, and the approval must name the current step.
func TestSucceededIsNotApproval(t *testing.T) {
	f := newFixture(t)
	f.start("succeed", "1")
	_, res := f.dispatch("op-0")
	if res.State != ledger.Succeeded {
		t.Fatalf("state %v", res.State)
	}
	if f.e.CompletedSteps() != 0 || f.e.CurrentStep() != "publish" || f.e.Step() != workflow.StepIdle {
		t.Fatalf("after succeeded: completed %d, step %s %v", f.e.CompletedSteps(), f.e.CurrentStep(), f.e.Step())
	}
	// The next operation still belongs to the unapproved step.
	f.start("succeed", "2")
	c, _ := f.dispatch("op-1")
	if c.StepID() != "publish" {
		t.Fatalf("second operation bound to %s", c.StepID())
	}
	wantKind(t, f.e.ApproveStep("notify"), workflow.ErrStepMismatch)
	if err := f.e.ApproveStep("publish"); err != nil {
		t.Fatal(err)
	}
	if f.e.CurrentStep() != "notify" {
		t.Fatalf("current step %s", f.e.CurrentStep())
	}
	f.start("succeed", "3")
	if c, _ := f.dispatch("op-2"); c.StepID() != "notify" {
		t.Fatalf("third operation bound to %s", c.StepID())
	}
}

// Spec: WFL-001, WFL-005
// While the step awaits its operation it can neither start another nor be approved, and a
// running answer keeps it suspended.
func TestSuspendedStepRefusesWork(t *testing.T) {
	f := newFixture(t)
	id := f.start("running", "1")
	c, err := f.e.Prepare(f.ctx, []byte("n0"))
	if err != nil {
		t.Fatal(err)
	}
	d, _ := f.e.SealDispatch("d1", f.host)
	res, err := f.e.ApplyDispatchAnswer(f.ctx, d.Request, f.host, f.send(d.Line))
	if err != nil || res.State != ledger.Running || res.Settled != nil {
		t.Fatalf("running answer: %+v %v", res, err)
	}
	if f.state(id) != host.StateClaimed || f.e.Step() != workflow.StepSuspended {
		t.Fatalf("state %v, step %v", f.state(id), f.e.Step())
	}
	f.start("succeed", "2")
	_, err = f.e.Prepare(f.ctx, []byte("n1"))
	wantKind(t, err, workflow.ErrExecutionInProgress)
	wantKind(t, f.e.ApproveStep("publish"), workflow.ErrExecutionInProgress)
	if r, ok := f.e.Retained(); !ok || r.OperationKey() != c.OperationKey() {
		t.Fatal("the retained operation changed")
	}
}
