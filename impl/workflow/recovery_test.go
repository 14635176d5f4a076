package workflow_test

import (
	"errors"
	"testing"

	"github.com/splashv5/conform/impl/ledger"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/worker"
	"github.com/splashv5/conform/impl/workflow"
)

// restart restores a fresh engine over the fixture's store with a fresh runtime.
func (f *fixture) restart(minimum uint64) (*workflow.Engine, error) {
	f.t.Helper()
	f.rt = newRuntime(f.t)
	return workflow.Restore(f.ctx, workflow.Config{Runtime: f.rt, Plan: testPlan, Store: f.store, MinimumRevision: minimum})
}

// Spec: WFL-040, WFL-041, WFL-042, WFL-043, WFL-044
// After a crash between the ledger write and the send, the restored engine recovers: it
// validates the ledger, the host reconciles the pending operation under a fresh session, and
// only an explicit policy resumes it; a terminal ledger state alone skips and resumes nothing.
func TestRestartRecovery(t *testing.T) {
	f := newFixture(t)
	f.start("succeed", "1")
	c, err := f.e.Prepare(f.ctx, []byte("n0"))
	if err != nil {
		t.Fatal(err)
	}
	// Crash: the frame was never sent.
	e, err := f.restart(0)
	if err != nil {
		t.Fatal(err)
	}
	if e.Phase() != workflow.PhaseRecovering || e.CompletedSteps() != 0 {
		t.Fatalf("phase %v, completed %d", e.Phase(), e.CompletedSteps())
	}
	_, err = e.Prepare(f.ctx, []byte("n1"))
	wantKind(t, err, workflow.ErrRecovering)
	if u := e.Unsettled(); len(u) != 1 || u[0].OperationKey != c.OperationKey() {
		t.Fatalf("unsettled %+v", u)
	}
	// Resume is refused while the operation is unreconciled or without decisions.
	wantKind(t, e.Resume(workflow.RecoveryPolicy{CompletedSteps: 1}), workflow.ErrRecoveryPolicyRequired)
	accept := func(ledger.Operation) workflow.Decision { return workflow.DecisionAccept }
	wantKind(t, e.Resume(workflow.RecoveryPolicy{CompletedSteps: 1, Decide: accept}), workflow.ErrUnreconciledOperation)

	// Reconcile under a fresh session: the worker never saw the dispatch, so its journal has
	// no record of the key and it refuses the reconciliation as the reference worker does, with
	// UnknownOperation, no answer and exit status 5 (JRN-017, WRK-060, WRK-092).
	input, _ := protocol.CanonicalOperationInputBytes(c.Payload())
	f.reopenWorker("session-2")
	_, err = e.ReconcileRequest(c.OperationKey(), []byte("jsonother"), f.session, "rec-1")
	wantKind(t, err, ledger.ErrInputFingerprintMismatch)
	req, err := e.ReconcileRequest(c.OperationKey(), input, f.session, "rec-1")
	if err != nil {
		t.Fatal(err)
	}
	_, line, err := f.host.Seal(protocol.ReconcileOperationMessage{Request: req})
	if err != nil {
		t.Fatal(err)
	}
	answer, err := f.w.Handle(f.ctx, line, workerRevision{})
	if answer != nil || !errors.Is(err, protocol.ErrUnknownOperation) || worker.ExitCode(err) != workflow.RefusalExitStatus {
		t.Fatalf("the worker answered %q, %v (exit %d): want no answer, UnknownOperation, exit %d", answer, err, worker.ExitCode(err), workflow.RefusalExitStatus)
	}
	if !(workflow.WorkerEnd{Exited: true, Status: worker.ExitCode(err)}).Refused() {
		t.Fatal("the worker's end is not a refusal")
	}
	if u := e.Unsettled(); len(u) != 1 || u[0].State != ledger.Pending {
		t.Fatalf("a refusal recorded something: %+v", u)
	}
	wantKind(t, e.Resume(workflow.RecoveryPolicy{CompletedSteps: 1, Decide: accept}), workflow.ErrUnreconciledOperation)

	// The exact recorded dispatch on another fresh session (WFL-043): same key and tool, the
	// kept input checked against its fingerprint; the worker's journal admits it once.
	f.reopenWorker("session-3")
	other, _ := undoValue(t, `{"mode":"succeed","value":2}`)
	_, err = e.SealRedispatch(c.OperationKey(), other, "redispatch-1", f.host)
	wantKind(t, err, ledger.ErrInputFingerprintMismatch)
	d, err := e.SealRedispatch(c.OperationKey(), c.Payload(), "redispatch-1", f.host)
	if err != nil {
		t.Fatal(err)
	}
	if d.Request.OperationKey != c.OperationKey() || d.Request.Tool != record || !d.Request.Payload.Equal(c.Payload()) {
		t.Fatalf("redispatch %+v is not the recorded dispatch", d.Request)
	}
	if st, err := e.ApplyRedispatchAnswer(f.ctx, d.Request, f.host, f.send(d.Line)); err != nil || st != ledger.Succeeded {
		t.Fatalf("redispatch %v %v", st, err)
	}
	if n := len(f.effects.Effects()); n != 1 {
		t.Fatalf("%d effects, want 1", n)
	}
	if len(e.Unsettled()) != 0 {
		t.Fatal("still unsettled")
	}
	// An observed operation is never redispatched.
	_, err = e.SealRedispatch(c.OperationKey(), c.Payload(), "redispatch-2", f.host)
	wantKind(t, err, workflow.ErrOperationObserved)
	// A terminal state is not a decision.
	none := func(ledger.Operation) workflow.Decision { return workflow.DecisionNone }
	wantKind(t, e.Resume(workflow.RecoveryPolicy{CompletedSteps: 1, Decide: none}), workflow.ErrRecoveryPolicyRequired)
	if e.Phase() != workflow.PhaseRecovering {
		t.Fatal("resumed without a decision")
	}
	if err := e.Resume(workflow.RecoveryPolicy{CompletedSteps: 0, Decide: accept}); err != nil {
		t.Fatal(err)
	}
	if e.Phase() != workflow.PhaseRunning || e.CurrentStep() != "publish" {
		t.Fatalf("phase %v, step %s", e.Phase(), e.CurrentStep())
	}
}

// Spec: WFL-040
// A restored ledger below the host's authenticated watermark is a rollback; a ledger of another
// plan is refused; New refuses a store that holds an earlier execution.
func TestRestoreValidatesTheLedger(t *testing.T) {
	f := newFixture(t)
	f.start("succeed", "1")
	if _, err := f.e.Prepare(f.ctx, []byte("n0")); err != nil {
		t.Fatal(err)
	}
	_, err := f.restart(f.e.Ledger().Revision() + 1)
	wantKind(t, err, ledger.ErrStaleRevision)
	other := ledger.Plan{Fingerprint: planFP, Steps: []string{"other"}}
	_, err = workflow.Restore(f.ctx, workflow.Config{Runtime: newRuntime(t), Plan: other, Store: f.store})
	wantKind(t, err, ledger.ErrUnknownStep)
	_, err = workflow.New(f.ctx, workflow.Config{Runtime: newRuntime(t), Plan: testPlan, Store: f.store})
	wantKind(t, err, workflow.ErrRecovering)
}

// Spec: WFL-042
// DecisionFail fails the workflow for good.
func TestRecoveryPolicyFail(t *testing.T) {
	f := newFixture(t)
	f.succeeded()
	e, err := f.restart(0)
	if err != nil {
		t.Fatal(err)
	}
	fail := func(ledger.Operation) workflow.Decision { return workflow.DecisionFail }
	wantKind(t, e.Resume(workflow.RecoveryPolicy{Decide: fail}), workflow.ErrWorkflowFailed)
	_, err = e.Prepare(f.ctx, []byte("n1"))
	wantKind(t, err, workflow.ErrWorkflowFailed)
}

// Spec: WFL-026, WFL-040
// Compensation continues across a restart: the intent survives, a fresh engine issues a fresh
// approval for it and the same cmp- key is sent.
func TestCompensationAcrossRestart(t *testing.T) {
	f := newFixture(t)
	key := f.succeeded()
	v := &verifiers{}
	tg := target(t, key, v)
	_, in := undo(t)
	cmpKey, err := f.e.RecordCompensation(f.ctx, tg, in, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := f.restart(0)
	if err != nil {
		t.Fatal(err)
	}
	f.e = e
	if u := e.Unsettled(); len(u) != 1 || u[0].Compensation == nil {
		t.Fatalf("unsettled %+v", u)
	}
	f.reopenWorker("session-2")
	sealed, answer := f.compensate(tg, "cmp-after-restart")
	if sealed.Request.CompensationKey != cmpKey {
		t.Fatal("another compensation key after the restart")
	}
	if st, err := e.ApplyCompensationAnswer(f.ctx, sealed.Request, f.host, answer); err != nil || st != ledger.Succeeded {
		t.Fatalf("answer %v %v", st, err)
	}
}

// Spec: WFL-040
// Restoring reserves a new fence: the engine of the crashed process, should it still run, can
// no longer write; its write fails and poisons it, and the store keeps the restored ledger.
func TestRestoreFencesOutTheOldWriter(t *testing.T) {
	f := newFixture(t)
	old := f.e
	f.start("succeed", "1")
	if _, err := old.Prepare(f.ctx, []byte("n0")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.restart(0); err != nil {
		t.Fatal(err)
	}
	d, err := old.SealDispatch("d1", f.host)
	if err != nil {
		t.Fatal(err)
	}
	_, err = old.ApplyDispatchAnswer(f.ctx, d.Request, f.host, f.send(d.Line))
	wantKind(t, err, workflow.ErrLedgerWrite)
	if old.Phase() != workflow.PhasePoisoned {
		t.Fatalf("old engine phase %v", old.Phase())
	}
	stored, _, _ := f.store.Load(f.ctx, testPlan)
	if ops := stored.Operations(); len(ops) != 1 || ops[0].State != ledger.Pending {
		t.Fatalf("stored %+v", ops)
	}
}
