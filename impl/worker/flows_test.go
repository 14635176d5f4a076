package worker_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/worker"
	"github.com/splashv5/conform/impl/worker/workertest"
)

// Spec: WRK-030, WRK-031, WRK-023
func TestInvokeFlow(t *testing.T) {
	small := profileGrant(echo, 5, 0)
	small.MaxOutputBytes = 4
	r := newRig(t, rigOptions{grants: []protocol.CapabilityGrant{
		small, profileGrant(jsonEcho, 1, 0), profileGrant(failTool, 1, 0),
		profileGrant(undeclared, 1, 0), profileGrant(record, 1, 0),
	}})
	h := r.host
	r.want(h.Invoke("r1", echo, text("hi")), "result text:hi")
	r.want(h.Invoke("r2", jsonEcho, workertest.JSON(`{"b":[1,2],"a":"é"}`)), `result json:{"a":"é","b":[1,2]}`)
	// Authorization comes first.
	r.fail(h.Invoke("r3", "conf.not.granted", text("x")), worker.ErrProtocol, protocol.ErrUnknownTool)
	r.fail(h.Invoke("r1", echo, text("x")), worker.ErrProtocol, protocol.ErrDuplicateRequest)
	// The adapter's output is validated against the grant after it ran.
	r.fail(h.Invoke("r4", echo, text("hello")), worker.ErrProtocol, protocol.ErrOutputTooLarge)
	// An adapter failure: the call stays spent.
	err := r.fail(h.Invoke("r5", failTool, text("x")), worker.ErrAdapter, noProtocol)
	if !errors.Is(err, worker.AdapterFailed) {
		t.Fatalf("adapter error %v does not carry AdapterFailed", err)
	}
	r.fail(h.Invoke("r6", failTool, text("x")), worker.ErrProtocol, protocol.ErrCallBudgetExhausted)
	// Missing safety declaration: refused after authorization spent the call.
	r.fail(h.Invoke("r7", undeclared, text("x")), worker.ErrInvocationSafetyNotDeclared, noProtocol)
	r.fail(h.Invoke("r8", undeclared, text("x")), worker.ErrProtocol, protocol.ErrCallBudgetExhausted)
	r.fail(h.Invoke("r9", record, workertest.Record("succeed", "1")), worker.ErrInvocationSafetyNotDeclared, noProtocol)
	if r.store.calls != 0 {
		t.Fatalf("invoke persisted the journal %d times", r.store.calls)
	}
	if r.session.Journal().Len() != 0 {
		t.Fatal("invoke touched the journal")
	}
}

// Spec: WRK-040, WRK-041, WRK-042, WRK-047, WRK-073
func TestDispatchPersistsBeforeAndAfterTheAdapter(t *testing.T) {
	var persistedBeforeEffect []string
	r := newRig(t, rigOptions{grants: []protocol.CapabilityGrant{profileGrant(record, 10, 0), profileGrant(echo, 2, 0)}})
	h := r.host
	// Watch the store: the first persist of a new key must hold it as pending before any effect.
	inner := r.store
	watch := &watchStore{inner: inner, before: func(j *journal.Journal) {
		rec, _ := j.Operation("op-1")
		persistedBeforeEffect = append(persistedBeforeEffect, fmt.Sprintf("%s/effects=%d", rec.State.State.WireName(), r.effectCount("effect")))
	}}
	line, err := r.session.Handle(context.Background(), h.Seal(h.Dispatch("d1", record, "op-1", workertest.Record("succeed", `{"n":1}`))), watch)
	if err != nil {
		t.Fatal(err)
	}
	want := `operation_result succeeded json:{"operation_key":"op-1","value":{"n":1}}`
	if got := h.MustOpen(line); got != want {
		t.Fatalf("answer %q, want %q", got, want)
	}
	if fmt.Sprint(persistedBeforeEffect) != "[pending/effects=0 succeeded/effects=1]" {
		t.Fatalf("persist sequence %v", persistedBeforeEffect)
	}
	if r.session.Revision() != 2 || inner.revision != 2 {
		t.Fatalf("revision %d (store %d), want 2", r.session.Revision(), inner.revision)
	}
	if fmt.Sprint(inner.leases) != "[7 7]" {
		t.Fatalf("persists used leases %v, want the admitted lease 7", inner.leases)
	}
	// An exact duplicate under a new request id: answered from the journal, nothing runs.
	r.want(h.Dispatch("d2", record, "op-1", workertest.Record("succeed", `{"n":1}`)), want)
	if r.store.calls != 2 || r.effectCount("effect") != 1 {
		t.Fatalf("duplicate persisted (%d persists) or ran the adapter (%d effects)", r.store.calls, r.effectCount("effect"))
	}
	// Drift: same key, other input.
	r.fail(h.Dispatch("d3", record, "op-1", workertest.Record("succeed", `{"n":2}`)), worker.ErrProtocol, protocol.ErrOperationIdentityMismatch)
	// Durable dispatch needs a declared contract; the call is spent first.
	r.fail(h.Dispatch("d4", echo, "op-2", text("x")), worker.ErrDurableOperationContractNotDeclared, noProtocol)
	r.want(h.Invoke("r1", echo, text("y")), "result text:y")
	r.fail(h.Invoke("r2", echo, text("y")), worker.ErrProtocol, protocol.ErrCallBudgetExhausted)
	// Running and failed outcomes are journaled and replayed the same way.
	r.want(h.Dispatch("d5", record, "op-run", workertest.Record("running", "1")), "operation_result running")
	r.want(h.Dispatch("d6", record, "op-run", workertest.Record("running", "1")), "operation_result running")
	r.want(h.Dispatch("d7", record, "op-fail", workertest.Record("fail", "1")), "operation_result failed "+absence)
	r.want(h.Dispatch("d8", record, "op-fail", workertest.Record("fail", "1")), "operation_result failed "+absence)
	if r.durableState("op-run") != "running" || r.durableState("op-fail") != "failed" {
		t.Fatalf("durable states %s %s", r.durableState("op-run"), r.durableState("op-fail"))
	}
}

type watchStore struct {
	inner  worker.JournalPersister
	before func(*journal.Journal)
}

func (w *watchStore) Persist(ctx context.Context, j *journal.Journal, expected uint64, lease worker.Lease) (uint64, error) {
	w.before(j)
	return w.inner.Persist(ctx, j, expected, lease)
}

// Spec: WRK-041, WRK-043, WRK-044, WRK-072
func TestDispatchAdapterFailuresLeaveThePendingRecord(t *testing.T) {
	r := newRig(t, rigOptions{grants: []protocol.CapabilityGrant{profileGrant(record, 10, 0)}})
	h := r.host
	err := r.fail(h.Dispatch("d1", record, "op-ind", workertest.Record("indeterminate", "1")), worker.ErrIndeterminateOperation, noProtocol)
	if !errors.Is(err, worker.AdapterIndeterminate) {
		t.Fatalf("cause of %v is not the adapter's Indeterminate", err)
	}
	var we *worker.Error
	if errors.As(err, &we); we.OperationKey != "op-ind" {
		t.Fatalf("indeterminate error names key %q", we.OperationKey)
	}
	r.fail(h.Dispatch("d2", record, "op-err", workertest.Record("error", "1")), worker.ErrAdapter, noProtocol)
	r.fail(h.Dispatch("d3", record, "op-bad", workertest.JSON(`{"mode":"sideways"}`)), worker.ErrAdapter, noProtocol)
	for _, key := range []string{"op-ind", "op-err", "op-bad"} {
		if r.durableState(key) != "pending" || r.liveState(key) != "pending" {
			t.Fatalf("%s: durable %s live %s, want pending", key, r.durableState(key), r.liveState(key))
		}
	}
	if r.session.Poisoned() {
		t.Fatal("adapter errors poisoned the session")
	}
	// A pending duplicate is never reported as a status.
	err = r.fail(h.Dispatch("d4", record, "op-ind", workertest.Record("indeterminate", "1")), worker.ErrPendingOperation, noProtocol)
	if errors.As(err, &we); we.OperationKey != "op-ind" {
		t.Fatalf("pending error names key %q", we.OperationKey)
	}
	r.fail(h.Dispatch("d5", record, "op-err", workertest.Record("error", "1")), worker.ErrPendingOperation, noProtocol)
	if n := r.effectCount("effect"); n != 1 {
		t.Fatalf("%d effects, want 1 (only the indeterminate dispatch performed one)", n)
	}
}

// Spec: WRK-045, WRK-072
func TestDispatchRejectedObservationIsIndeterminate(t *testing.T) {
	g := profileGrant(record, 3, 0)
	g.MaxOutputBytes = 40 // the success payload {"operation_key":"op-1","value":"…"} is longer
	r := newRig(t, rigOptions{grants: []protocol.CapabilityGrant{g}})
	err := r.fail(r.host.Dispatch("d1", record, "op-1", workertest.Record("succeed", `"a long enough value"`)), worker.ErrIndeterminateOperation, protocol.ErrOutputTooLarge)
	var we *worker.Error
	if !errors.As(err, &we) || !errors.As(we.Err, &we) || we.Stage != worker.StageObserve {
		t.Fatalf("cause of %v is not an observe-stage protocol error", err)
	}
	if r.session.Poisoned() || r.durableState("op-1") != "pending" || r.liveState("op-1") != "pending" {
		t.Fatalf("poisoned %v durable %s live %s", r.session.Poisoned(), r.durableState("op-1"), r.liveState("op-1"))
	}
	if r.store.calls != 1 {
		t.Fatalf("%d persists, want only the admission", r.store.calls)
	}
}

// Spec: WRK-042, WRK-046, WRK-070, WRK-071, WRK-020
func TestDispatchPersistenceFailuresPoison(t *testing.T) {
	cases := []struct {
		name      string
		faults    []string
		wantKind  worker.ErrorKind
		cause     worker.ErrorKind
		effects   int
		durable   string
		live      string
		persisted int
	}{
		{"admission persist fails", []string{"error"}, worker.ErrJournal, 0, 0, "absent", "absent", 1},
		{"admission persist returns a stale revision", []string{"stale"}, worker.ErrInvalidJournalRevision, 0, 0, "absent", "absent", 1},
		{"observation persist fails", []string{"", "error"}, worker.ErrIndeterminateOperation, worker.ErrJournal, 1, "pending", "pending", 2},
		{"observation persist returns a stale revision", []string{"", "stale"}, worker.ErrIndeterminateOperation, worker.ErrInvalidJournalRevision, 1, "pending", "pending", 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, rigOptions{grants: []protocol.CapabilityGrant{profileGrant(record, 5, 0), profileGrant(echo, 5, 0)}})
			r.store.faults = tc.faults
			err := r.fail(r.host.Dispatch("d1", record, "op-1", workertest.Record("succeed", "1")), tc.wantKind, noProtocol)
			if tc.cause != 0 && !errors.Is(err, tc.cause) {
				t.Fatalf("error %v lacks cause %v", err, tc.cause)
			}
			if !r.session.Poisoned() {
				t.Fatal("session not poisoned")
			}
			if r.effectCount("effect") != tc.effects || r.durableState("op-1") != tc.durable || r.liveState("op-1") != tc.live {
				t.Fatalf("effects %d durable %s live %s", r.effectCount("effect"), r.durableState("op-1"), r.liveState("op-1"))
			}
			revision := r.session.Revision()
			// Poisoned: nothing is opened any more, not even garbage, and nothing persists.
			for _, line := range [][]byte{[]byte("garbage"), r.host.SealAt(r.host.NextSequence(), r.host.Invoke("r1", echo, text("x")))} {
				if _, err := r.session.Handle(context.Background(), line, r.store); !errors.Is(err, worker.ErrSessionPoisoned) {
					t.Fatalf("poisoned session answered %v", err)
				}
			}
			if r.store.calls != tc.persisted || r.session.Revision() != revision {
				t.Fatalf("persists %d revision %d after poisoning", r.store.calls, r.session.Revision())
			}
		})
	}
}

// Spec: WRK-050, WRK-051, WRK-052
func TestCompensationFlow(t *testing.T) {
	// Every authorized new compensation identity spends budget, even when the journal then
	// refuses it, so the grant allows plenty.
	g := profileGrant(record, 10, 10)
	r := newRig(t, rigOptions{grants: []protocol.CapabilityGrant{g, profileGrant(echo, 1, 0)}})
	h := r.host
	r.want(h.Dispatch("d1", record, "op-1", workertest.Record("succeed", "1")), `operation_result succeeded json:{"operation_key":"op-1","value":1}`)
	r.want(h.Dispatch("d2", record, "op-f", workertest.Record("fail", "1")), "operation_result failed "+absence)
	undo := workertest.Record("succeed", `"undo"`)
	// Refusals before any effect.
	r.fail(h.Compensate("c0", record, "op-1", "cmp-1", "other-tenant", g, undo), worker.ErrProtocol, protocol.ErrOperationJournalScopeMismatch)
	r.fail(h.CompensateWithFingerprint("c1", record, "op-1", "cmp-1", scope, "00"+r.fingerprint(g)[2:], undo), worker.ErrProtocol, protocol.ErrCompensationGrantMismatch)
	r.fail(h.Compensate("c2", record, "op-none", "cmp-1", scope, g, undo), worker.ErrProtocol, protocol.ErrUnknownOperation)
	r.fail(h.Compensate("c3", record, "op-f", "cmp-1", scope, g, undo), worker.ErrProtocol, protocol.ErrCompensationRequiresSucceededOperation)
	r.fail(h.Compensate("c4", echo, "op-1", "cmp-1", scope, profileGrant(echo, 1, 0), text("x")), worker.ErrProtocol, protocol.ErrCompensationNotGranted)
	if r.effectCount("compensation") != 0 || r.store.calls != 4 {
		t.Fatalf("refusals ran %d compensations, %d persists", r.effectCount("compensation"), r.store.calls)
	}
	// The compensation persists its admission, runs once and persists its outcome.
	want := `compensation_result succeeded json:{"compensation_key":"cmp-1","operation_key":"op-1","value":"undo"}`
	r.want(h.Compensate("c5", record, "op-1", "cmp-1", scope, g, undo), want)
	if r.store.calls != 6 || r.effectCount("compensation") != 1 {
		t.Fatalf("persists %d compensations %d", r.store.calls, r.effectCount("compensation"))
	}
	rec, _ := r.store.durable.Operation("op-1")
	if rec.Compensation == nil || rec.Compensation.State.State != protocol.StateSucceeded {
		t.Fatalf("durable compensation %+v", rec.Compensation)
	}
	// An exact duplicate is answered from the journal.
	r.want(h.Compensate("c6", record, "op-1", "cmp-1", scope, g, undo), want)
	if r.store.calls != 6 || r.effectCount("compensation") != 1 {
		t.Fatal("duplicate compensation ran again")
	}
	// One compensation identity per operation.
	r.fail(h.Compensate("c7", record, "op-1", "cmp-2", scope, g, undo), worker.ErrProtocol, protocol.ErrCompensationIdentityMismatch)
	r.fail(h.Compensate("c8", record, "op-1", "cmp-1", scope, g, workertest.Record("succeed", `"other"`)), worker.ErrProtocol, protocol.ErrCompensationIdentityMismatch)
}

func (r *rig) fingerprint(g protocol.CapabilityGrant) string {
	fp, err := g.CompensationFingerprint()
	if err != nil {
		r.t.Fatal(err)
	}
	return fp
}

// Spec: WRK-052, WRK-071
func TestCompensationIndeterminateAndPersistence(t *testing.T) {
	g := profileGrant(record, 10, 3)
	r := newRig(t, rigOptions{grants: []protocol.CapabilityGrant{g}})
	h := r.host
	for _, key := range []string{"op-1", "op-2", "op-3"} {
		r.want(h.Dispatch("d-"+key, record, key, workertest.Record("succeed", "1")), `operation_result succeeded json:{"operation_key":"`+key+`","value":1}`)
	}
	err := r.fail(h.Compensate("c1", record, "op-1", "cmp-1", scope, g, workertest.Record("indeterminate", "1")), worker.ErrIndeterminateCompensation, noProtocol)
	var we *worker.Error
	if errors.As(err, &we); we.OperationKey != "op-1" || we.CompensationKey != "cmp-1" || !errors.Is(err, worker.AdapterIndeterminate) {
		t.Fatalf("indeterminate compensation error %v", err)
	}
	r.fail(h.Compensate("c2", record, "op-1", "cmp-1", scope, g, workertest.Record("indeterminate", "1")), worker.ErrPendingCompensation, noProtocol)
	r.fail(h.Compensate("c3", record, "op-2", "cmp-2", scope, g, workertest.Record("error", "1")), worker.ErrAdapter, noProtocol)
	rec, _ := r.store.durable.Operation("op-2")
	if rec.Compensation == nil || rec.Compensation.State.State != protocol.StatePending {
		t.Fatalf("failed compensation left %+v, want a durable pending compensation", rec.Compensation)
	}
	r.store.faults = []string{"", "error"}
	r.fail(h.Compensate("c4", record, "op-3", "cmp-3", scope, g, workertest.Record("succeed", "1")), worker.ErrIndeterminateCompensation, noProtocol)
	live, _ := r.session.Journal().Operation("op-3")
	if !r.session.Poisoned() || live.Compensation == nil || live.Compensation.State.State != protocol.StatePending {
		t.Fatalf("poisoned %v live compensation %+v", r.session.Poisoned(), live.Compensation)
	}
}

// Spec: WRK-060, WRK-061, WRK-062
func TestReconcileFlow(t *testing.T) {
	limits, err := worker.NewLimits(3, 64)
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, rigOptions{grants: []protocol.CapabilityGrant{profileGrant(record, 10, 0), profileGrant(echo, 1, 0)}, limits: limits})
	h := r.host
	// Only keys in the journal can be reconciled; those refusals spend no budget.
	r.fail(h.Reconcile("q0", record, "op-none"), worker.ErrProtocol, protocol.ErrUnknownOperation)
	r.fail(h.Reconcile("q1", "conf.not.granted", "op-none"), worker.ErrProtocol, protocol.ErrUnknownTool)
	if total, _ := r.session.ReconciliationsSpent(record); total != 0 {
		t.Fatalf("refused reconciliations spent %d", total)
	}
	r.fail(h.Dispatch("d1", record, "op-1", workertest.Record("indeterminate", `"v"`)), worker.ErrIndeterminateOperation, noProtocol)
	r.fail(h.Reconcile("q2", echo, "op-1"), worker.ErrProtocol, protocol.ErrOperationIdentityMismatch)
	// The truth from the effect record replaces the pending state, durably, before the answer.
	persists := r.store.calls
	r.want(h.Reconcile("q3", record, "op-1"), `reconciled_operation succeeded json:{"operation_key":"op-1","value":"v"}`)
	if r.durableState("op-1") != "succeeded" || r.store.calls != persists+1 {
		t.Fatalf("durable %s after %d persists", r.durableState("op-1"), r.store.calls-persists)
	}
	// The duplicate dispatch now answers from the journal.
	r.want(h.Dispatch("d2", record, "op-1", workertest.Record("indeterminate", `"v"`)), `operation_result succeeded json:{"operation_key":"op-1","value":"v"}`)
	// An identical observation is still persisted (the revision advances).
	r.want(h.Reconcile("q4", record, "op-1"), `reconciled_operation succeeded json:{"operation_key":"op-1","value":"v"}`)
	if r.store.calls != persists+2 {
		t.Fatalf("identical reconciliation persisted %d times", r.store.calls-persists-1)
	}
	r.want(h.Reconcile("q5", record, "op-1"), `reconciled_operation succeeded json:{"operation_key":"op-1","value":"v"}`)
	err = r.fail(h.Reconcile("q6", record, "op-1"), worker.ErrReconciliationBudgetExhausted, noProtocol)
	var we *worker.Error
	if errors.As(err, &we); we.Maximum != 3 || we.Tool != record {
		t.Fatalf("budget error %v", err)
	}
}

// Spec: WRK-061, WRK-062, WRK-063
func TestReconcileBudgetsAndAdapterErrors(t *testing.T) {
	// A journal that already holds records for tools without any durable contract.
	raw := `{"format_version":2,"scope":"` + scope + `","records":[` +
		`{"tool":"t.flaky","operation_key":"k1","input_fingerprint":"` + zeros + `","state":{"state":"pending"},"compensation":null},` +
		`{"tool":"t.other","operation_key":"k2","input_fingerprint":"` + zeros + `","state":{"state":"succeeded","payload":{"format":"text","value":"a"}},"compensation":null}]}`
	j, err := journal.FromJSONForScope([]byte(raw), scope, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	flaky := &scripted{reconcile: func(protocol.OperationReconcileRequest) (protocol.OperationStatus, error) {
		return protocol.OperationStatus{}, &worker.AdapterError{Kind: worker.AdapterIndeterminate}
	}}
	other := &scripted{reconcile: func(protocol.OperationReconcileRequest) (protocol.OperationStatus, error) {
		return protocol.Succeeded(text("b")), nil // contradicts the stored terminal state
	}}
	limits, err := worker.NewLimits(2, 3)
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, rigOptions{
		grants: []protocol.CapabilityGrant{workertest.Grant("t.flaky", protocol.FormatText, 1, 0), workertest.Grant("t.other", protocol.FormatText, 1, 0)},
		register: func(reg *worker.Registry) {
			_ = reg.Register("t.flaky", flaky)
			_ = reg.Register("t.other", other)
		},
		journal: j, limits: limits,
	})
	h := r.host
	// Indeterminate is an ordinary adapter error here; the budget is spent anyway.
	err = r.fail(h.Reconcile("q1", "t.flaky", "k1"), worker.ErrAdapter, noProtocol)
	if !errors.Is(err, worker.AdapterIndeterminate) || errors.Is(err, worker.ErrIndeterminateOperation) {
		t.Fatalf("reconcile adapter error %v", err)
	}
	r.fail(h.Reconcile("q2", "t.flaky", "k1"), worker.ErrAdapter, noProtocol)
	if total, tool := r.session.ReconciliationsSpent("t.flaky"); total != 2 || tool != 2 || flaky.calls != 2 {
		t.Fatalf("spent %d/%d after %d adapter calls", total, tool, flaky.calls)
	}
	// Per-tool budget, checked before the adapter.
	r.fail(h.Reconcile("q3", "t.flaky", "k1"), worker.ErrReconciliationBudgetExhausted, noProtocol)
	if flaky.calls != 2 {
		t.Fatal("adapter ran with an exhausted budget")
	}
	// A contradicting observation is a protocol error and does not poison.
	r.fail(h.Reconcile("q4", "t.other", "k2"), worker.ErrProtocol, protocol.ErrInvalidWorkerOperationTransition)
	if r.session.Poisoned() {
		t.Fatal("observation error poisoned")
	}
	// The session budget (3) is now spent and is checked before the tool budget.
	err = r.fail(h.Reconcile("q5", "t.other", "k2"), worker.ErrReconciliationSessionBudgetExhausted, noProtocol)
	var we *worker.Error
	if errors.As(err, &we); we.Maximum != 3 {
		t.Fatalf("session budget error %v", err)
	}
	if r.store.calls != 0 {
		t.Fatalf("%d persists", r.store.calls)
	}
}

const zeros = "0000000000000000000000000000000000000000000000000000000000000000"

// Spec: WRK-062, WRK-071
func TestReconcilePersistenceFailurePoisons(t *testing.T) {
	r := newRig(t, rigOptions{grants: []protocol.CapabilityGrant{profileGrant(record, 10, 0)}})
	h := r.host
	r.fail(h.Dispatch("d1", record, "op-1", workertest.Record("indeterminate", "1")), worker.ErrIndeterminateOperation, noProtocol)
	r.store.faults = []string{"error"}
	r.fail(h.Reconcile("q1", record, "op-1"), worker.ErrJournal, noProtocol)
	if !r.session.Poisoned() || r.liveState("op-1") != "pending" {
		t.Fatalf("poisoned %v live %s", r.session.Poisoned(), r.liveState("op-1"))
	}
}

// Spec: WRK-022, WRK-021, CAN-022
func TestBaselineUnexpectedMessages(t *testing.T) {
	r := newRig(t, rigOptions{grants: []protocol.CapabilityGrant{profileGrant(echo, 10, 0)}})
	h := r.host
	res, err := protocol.NewToolResult(h.SessionID, "r0", text("x"))
	if err != nil {
		t.Fatal(err)
	}
	cancelReq, err := protocol.NewWorkerCancellationRequest(h.SessionID, "c1", "r0", echo)
	if err != nil {
		t.Fatal(err)
	}
	cres, err := protocol.NewWorkerCancellationResult(cancelReq, protocol.OutcomeTooLate)
	if err != nil {
		t.Fatal(err)
	}
	opres, err := protocol.NewOperationReconcileResult(h.SessionID, "r0", echo, "k", protocol.Running())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []protocol.Message{
		h.OpenSession(profileGrant(echo, 1, 0)),
		protocol.ResultMessage{Result: res},
		protocol.OperationResultMessage{Result: opres},
		protocol.ReconciledOperationMessage{Result: opres},
		h.Cancel("c1", "r0", echo),
		protocol.CancellationResultMessage{Result: cres},
		h.CloseSession(),
	} {
		err := r.fail(m, worker.ErrUnexpectedMessage, noProtocol)
		var we *worker.Error
		if errors.As(err, &we); we.MessageType != string(m.Type()) {
			t.Fatalf("unexpected-message error names %q, want %q", we.MessageType, m.Type())
		}
	}
	// Each unexpected frame consumed its sequence: the next frame at the next sequence is answered.
	r.want(h.Invoke("r1", echo, text("still here")), "result text:still here")
	// A frame that fails to open does not consume its sequence.
	if _, err := r.session.Handle(context.Background(), h.Tampered(h.Invoke("r2", echo, text("x"))), r.store); !errors.Is(err, protocol.ErrInvalidAuthenticationTag) {
		t.Fatalf("tampered frame: %v", err)
	}
	if _, err := r.session.Handle(context.Background(), h.SealAt(h.NextSequence()+1, h.Invoke("r2", echo, text("x"))), r.store); !errors.Is(err, protocol.ErrUnexpectedSequence) {
		t.Fatalf("skipped sequence: %v", err)
	}
	r.want(h.Invoke("r2", echo, text("again")), "result text:again")
}

// Spec: WRK-073
func TestRecoveryWithAFreshSession(t *testing.T) {
	r := newRig(t, rigOptions{grants: []protocol.CapabilityGrant{profileGrant(record, 10, 0)}})
	r.store.faults = []string{"", "error"}
	r.fail(r.host.Dispatch("d1", record, "op-1", workertest.Record("succeed", "5")), worker.ErrIndeterminateOperation, noProtocol)
	// A new session opens from the durable journal with a new lease and reconciles the key.
	host, err := workertest.NewHost("session-2")
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	auth, err := host.WorkerAuthenticator(canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	reg := worker.NewRegistry()
	if err := profile.Register(reg, profile.Options{Effects: r.effects}); err != nil {
		t.Fatal(err)
	}
	s, err := worker.Open(context.Background(), auth, host.Seal(host.OpenSession(profileGrant(record, 1, 0))), worker.Config{
		Journal: r.store.durable.Clone(), Revision: r.store.revision, Registry: reg,
		Admission: worker.AdmissionFunc(func(context.Context, protocol.CapabilityManifest, string) (uint64, error) { return 8, nil }),
	})
	if err != nil {
		t.Fatal(err)
	}
	line, err := s.Handle(context.Background(), host.Seal(host.Reconcile("q1", record, "op-1")), r.store)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := host.MustOpen(line), `reconciled_operation succeeded json:{"operation_key":"op-1","value":5}`; got != want {
		t.Fatalf("answer %q, want %q", got, want)
	}
	if r.effectCount("effect") != 1 || r.durableState("op-1") != "succeeded" || r.store.leases[len(r.store.leases)-1] != 8 {
		t.Fatalf("effects %d durable %s leases %v", r.effectCount("effect"), r.durableState("op-1"), r.store.leases)
	}
}
