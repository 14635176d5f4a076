package workflow_test

import (
	"testing"

	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/ledger"
	"github.com/splashv5/conform/impl/workflow"
)

// Spec: WFL-002, WFL-006
// A failed write after prepare: nothing is claimed or sent, the operation stays queued, the
// durable ledger is unchanged and the engine refuses everything afterwards.
func TestFaultPrepareWriteClaimsNothing(t *testing.T) {
	f := newFixture(t)
	id := f.start("succeed", "1")
	f.store.fail = 1
	c, err := f.e.Prepare(f.ctx, []byte("n0"))
	wantKind(t, err, workflow.ErrLedgerWrite)
	if c != nil || f.state(id) != host.StateQueued {
		t.Fatalf("claimed %v, state %v", c, f.state(id))
	}
	if len(f.e.Ledger().Operations()) != 0 || f.e.Phase() != workflow.PhasePoisoned {
		t.Fatalf("durable ledger %+v, phase %v", f.e.Ledger().Operations(), f.e.Phase())
	}
	_, err = f.e.SealDispatch("d1", f.host)
	wantKind(t, err, workflow.ErrPoisoned)
	_, err = f.e.Prepare(f.ctx, []byte("n0"))
	wantKind(t, err, workflow.ErrPoisoned)
	if f.state(id) != host.StateQueued {
		t.Fatal("a poisoned engine claimed")
	}
}

// Spec: WFL-004, WFL-006
// A failed write after the worker answered: the promise does not resolve, the durable ledger
// still says pending, and nothing else runs.
func TestFaultAnswerWriteResolvesNothing(t *testing.T) {
	f := newFixture(t)
	id := f.start("succeed", "1")
	c, err := f.e.Prepare(f.ctx, []byte("n0"))
	if err != nil {
		t.Fatal(err)
	}
	d, _ := f.e.SealDispatch("d1", f.host)
	answer := f.send(d.Line)
	f.store.fail = 1
	res, err := f.e.ApplyDispatchAnswer(f.ctx, d.Request, f.host, answer)
	wantKind(t, err, workflow.ErrLedgerWrite)
	if res.Settled != nil || f.state(id) != host.StateClaimed {
		t.Fatalf("resolution %+v, state %v", res, f.state(id))
	}
	if op, _ := f.e.Ledger().Operation(c.OperationKey()); op.State != ledger.Pending {
		t.Fatalf("durable state %v", op.State)
	}
	wantKind(t, f.e.ApproveStep("publish"), workflow.ErrPoisoned)
}

// Spec: WFL-022, WFL-006
// A failed write of a compensation intent: nothing is recorded and nothing can be approved or
// sealed.
func TestFaultCompensationIntentWriteApprovesNothing(t *testing.T) {
	f := newFixture(t)
	f.start("succeed", "1")
	c, _ := f.dispatch("n0")
	v := &verifiers{}
	tg := target(t, c.OperationKey(), v)
	_, in := undo(t)
	f.store.fail = 1
	_, err := f.e.RecordCompensation(f.ctx, tg, in, []byte("cmp-nonce"))
	wantKind(t, err, workflow.ErrLedgerWrite)
	if _, ok := f.e.Ledger().Compensation(c.OperationKey()); ok {
		t.Fatal("an intent became durable")
	}
	_, err = f.e.ApproveCompensation(tg, in, f.host)
	wantKind(t, err, workflow.ErrPoisoned)
	stored, _, _ := f.store.Load(f.ctx, testPlan)
	if _, ok := stored.Compensation(c.OperationKey()); ok {
		t.Fatal("the store holds an intent")
	}
}

// Spec: WFL-025, WFL-006
// A failed write of a compensation observation leaves the durable intent pending.
func TestFaultCompensationAnswerWrite(t *testing.T) {
	f := newFixture(t)
	f.start("succeed", "1")
	c, _ := f.dispatch("n0")
	v := &verifiers{}
	tg := target(t, c.OperationKey(), v)
	p, in := undo(t)
	if _, err := f.e.RecordCompensation(f.ctx, tg, in, []byte("cmp-nonce")); err != nil {
		t.Fatal(err)
	}
	a, err := f.e.ApproveCompensation(tg, in, f.host)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := f.e.SealCompensation(tg, "cmp-1", p, a, f.host)
	if err != nil {
		t.Fatal(err)
	}
	answer := f.send(sealed.Line)
	f.store.fail = 1
	_, err = f.e.ApplyCompensationAnswer(f.ctx, sealed.Request, f.host, answer)
	wantKind(t, err, workflow.ErrLedgerWrite)
	if cmp, _ := f.e.Ledger().Compensation(c.OperationKey()); cmp.State != ledger.Pending {
		t.Fatalf("durable compensation state %v", cmp.State)
	}
}

// Spec: WFL-043, WFL-006
// A failed write of a redispatch's answer: the durable ledger still says pending, the engine is
// poisoned, and a restored engine can redispatch the same key, which the worker's journal
// answers from its record without a second effect.
func TestFaultRedispatchWriteRecordsNothing(t *testing.T) {
	f := newFixture(t)
	f.start("succeed", "1")
	c, err := f.e.Prepare(f.ctx, []byte("n0"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := f.restart(0)
	if err != nil {
		t.Fatal(err)
	}
	f.reopenWorker("session-2")
	d, err := e.SealRedispatch(c.OperationKey(), c.Payload(), "redispatch-1", f.host)
	if err != nil {
		t.Fatal(err)
	}
	answer := f.send(d.Line)
	f.store.fail = 1
	_, err = e.ApplyRedispatchAnswer(f.ctx, d.Request, f.host, answer)
	wantKind(t, err, workflow.ErrLedgerWrite)
	if op, _ := e.Ledger().Operation(c.OperationKey()); op.State != ledger.Pending || e.Phase() != workflow.PhasePoisoned {
		t.Fatalf("durable state %v, phase %v", op.State, e.Phase())
	}
	_, err = e.SealRedispatch(c.OperationKey(), c.Payload(), "redispatch-2", f.host)
	wantKind(t, err, workflow.ErrPoisoned)

	e, err = f.restart(0)
	if err != nil {
		t.Fatal(err)
	}
	f.reopenWorker("session-3")
	d, err = e.SealRedispatch(c.OperationKey(), c.Payload(), "redispatch-3", f.host)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := e.ApplyRedispatchAnswer(f.ctx, d.Request, f.host, f.send(d.Line)); err != nil || st != ledger.Succeeded {
		t.Fatalf("redispatch %v %v", st, err)
	}
	if n := len(f.effects.Effects()); n != 1 {
		t.Fatalf("%d effects, want 1: the journal admits a key once", n)
	}
}
