package e2e_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/ledger"
	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
	"github.com/splashv5/conform/impl/worker/workertest"
	"github.com/splashv5/conform/impl/workflow"
	"github.com/splashv5/conform/internal/childproc"
)

// wfGrant is the worker grant of the durable tool in the workflow run: a few calls and one
// compensation. The host's compensation policy is derived from exactly this grant.
func wfGrant() protocol.CapabilityGrant {
	g := protocol.JSONGrant(profile.ToolDurableRecord)
	g.MaxCalls, g.MaxCompensations = 4, 1
	return g
}

// wfTransport opens session on a started worker and returns a one-shot operation transport
// supervised by the worker's process, with a ten-second deadline.
func wfTransport(t *testing.T, p *transport.Process, session string) *transport.OperationTransport {
	t.Helper()
	m, err := protocol.NewCapabilityManifest(session, []protocol.CapabilityGrant{wfGrant()})
	if err != nil {
		t.Fatal(err)
	}
	ch := transport.NewChannel(p.Output(), p.Input(), canonjson.Preserve)
	if err := transport.SendOpenSession(p.HostAuthenticator(), ch, m); err != nil {
		t.Fatal(err)
	}
	tr, err := transport.NewSupervisedOperationTransport(m, p.HostAuthenticator(), ch, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.SetDeadline(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	return tr
}

// exchangeKilled sends line through tr to a worker paused at pause, kills the worker's process
// group there and requires the exchange to fail: indeterminate when the supervisor has seen the
// exit, a broken channel when the end of the stream came first. Either way the answer is lost.
func exchangeKilled(t *testing.T, p *transport.Process, stderr *workertest.Output, tr *transport.OperationTransport, line []byte, pause string) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := tr.ExchangeSealed(line)
		done <- err
	}()
	stderr.WaitFor(t, "fault: paused "+pause)
	if err := childproc.KillGroup(p.Pid()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, transport.ErrIndeterminate) && !errors.Is(err, transport.ErrChannel) {
		t.Fatalf("exchange with a killed worker: %v", err)
	}
	if !tr.Poisoned() {
		t.Fatal("the broken transport is still usable")
	}
}

// exchange sends line through tr and decodes the worker's answer frame.
func exchange(t *testing.T, tr *transport.OperationTransport, line []byte, stderr *workertest.Output) protocol.Frame {
	t.Helper()
	answer, err := tr.ExchangeSealed(line)
	if err != nil {
		t.Fatalf("exchange: %v (worker: %s)", err, stderr)
	}
	f, err := protocol.DecodeFrame(answer, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// wfVerifier allows the compensation of the one tenant and the one inverse input.
type wfVerifier struct{ grantChecks, actionChecks int }

func (v *wfVerifier) VerifyCompensationGrant(tenant string, g protocol.CapabilityGrant) error {
	v.grantChecks++
	if tenant != "conformance" || g.MaxCompensations == 0 {
		return errors.New("not allowed for this tenant")
	}
	return nil
}

func (v *wfVerifier) VerifyCompensationAction(a workflow.Action) error {
	v.actionChecks++
	if !strings.Contains(string(a.Input()), `"undo"`) {
		return errors.New("not the reviewed inverse")
	}
	return nil
}

// A durable workflow step with compensation, through supervised worker processes that share one
// SQLite journal and effect log:
//
//  1. The script starts the durable tool; the step engine records the plan-bound key and writes
//     the ledger, then claims. The host crashes before it sends anything.
//  2. A restored engine on a fresh runtime finds the pending operation and resumes only under an
//     explicit redispatch decision. The re-run script's call is prepared with the same nonce, so
//     it keeps the persisted key; the ledger is not rewritten.
//  3. The dispatch reaches a worker that is killed after its adapter ran and before it answered:
//     the supervised transport reports it indeterminate and nothing is resolved.
//  4. A fresh worker session reconciles the persisted key; the observation is written before the
//     script's promise resolves, and the script reads the recorded value. The step still needs
//     the host's approval.
//  5. The host records and writes the compensation intent, approves it for a worker that is killed
//     after it persisted the inverse's result but before it answered; a fresh session with a fresh
//     approval resends the same cmp- key and input and gets the stored answer.
//
// The effect log holds the one effect and the one inverse effect.
//
// Spec: WFL-001, WFL-002, WFL-003, WFL-004, WFL-005, WFL-007, WFL-020, WFL-021, WFL-022, WFL-023
// Spec: WFL-024, WFL-025, WFL-026, WFL-040, WFL-041, WFL-042, TRN-110, TRN-111
func TestWorkflowDurableStepWithCompensation(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	effects := filepath.Join(dir, "effects.log")
	args := []string{"--journal", filepath.Join(dir, "journal.db"), "--effect-log", effects}
	store := ledgerStore(t)
	plan := ledgerPlan
	nonce := ledgerNonce
	const src = `use mod.tool
let receipt = tool.start_json("conf.durable.record", {value: {n: 7}, mode: "succeed"})
receipt.await().parse_json().value.n
`
	newHost := func() (*host.Runtime, *host.ScriptSession, host.OperationID) {
		rt, sess := scriptSession(t, host.Config{})
		if err := rt.RegisterValidatedExternalJSONTool(host.JSONPolicy(profile.ToolDurableRecord), host.Metadata{},
			durableContract(t, "integer")); err != nil {
			t.Fatal(err)
		}
		return rt, sess, evalSuspended(t, sess, src)
	}

	// 1. Prepare, write, claim; then the host crashes before sending.
	rt1, _, id1 := newHost()
	e1, err := workflow.New(ctx, workflow.Config{Runtime: rt1, Plan: plan, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	c1, err := e1.Prepare(ctx, nonce)
	if err != nil || c1 == nil || c1.Invocation().ID != id1 {
		t.Fatalf("prepare: %v, %v", c1, err)
	}
	key := c1.OperationKey()
	if want := ledgerOperationKey(`{"mode":"succeed","value":{"n":7}}`); key != want {
		t.Fatalf("key %s, want the plan-bound key %s", key, want)
	}
	written := e1.RecordRevision()

	// 2. Restart: restore, refuse to resume without a decision, then redispatch.
	rt2, sess2, id2 := newHost()
	e2, err := workflow.Restore(ctx, workflow.Config{Runtime: rt2, Plan: plan, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	if u := e2.Unsettled(); len(u) != 1 || u[0].OperationKey != key || u[0].State != ledger.Pending {
		t.Fatalf("unsettled %+v", u)
	}
	if _, err := e2.Prepare(ctx, nonce); !errors.Is(err, workflow.ErrRecovering) {
		t.Fatalf("prepare while recovering: %v", err)
	}
	accept := func(ledger.Operation) workflow.Decision { return workflow.DecisionAccept }
	if err := e2.Resume(workflow.RecoveryPolicy{Decide: accept}); !errors.Is(err, workflow.ErrUnreconciledOperation) {
		t.Fatalf("accepting a pending operation: %v", err)
	}
	redispatch := func(ledger.Operation) workflow.Decision { return workflow.DecisionRedispatch }
	if err := e2.Resume(workflow.RecoveryPolicy{Decide: redispatch}); err != nil {
		t.Fatal(err)
	}
	c2, err := e2.Prepare(ctx, nonce)
	if err != nil || c2.OperationKey() != key || c2.Invocation().ID != id2 || e2.RecordRevision() != written {
		t.Fatalf("redispatch prepare: key %s, revision %d (was %d), %v", c2.OperationKey(), e2.RecordRevision(), written, err)
	}

	// 3. The worker is killed between admission and answer, after its adapter ran.
	p1, stderr1 := pausedWorker(t, "e2e-wf-1", "after-adapter", args...)
	tr1 := wfTransport(t, p1, "e2e-wf-1")
	d, err := e2.SealDispatch("dispatch-1", p1.HostAuthenticator())
	if err != nil || d.Request.OperationKey != key {
		t.Fatalf("seal dispatch: %+v, %v", d.Request, err)
	}
	exchangeKilled(t, p1, stderr1, tr1, d.Line, "after-adapter")
	if info, _ := rt2.Operation(id2); info.State != host.StateClaimed || e2.Step() != workflow.StepSuspended {
		t.Fatalf("after the crash: %+v, step %v", info, e2.Step())
	}
	if op, _ := e2.Ledger().Operation(key); op.State != ledger.Pending {
		t.Fatalf("ledger after the crash: %v", op.State)
	}

	// 4. A fresh session reconciles the persisted key; the write precedes the resolution.
	p2, stderr2 := startWorker(t, "e2e-wf-2", nil, args...)
	tr2 := wfTransport(t, p2, "e2e-wf-2")
	rec, err := e2.SealRetainedReconciliation("reconcile-1", p2.HostAuthenticator())
	if err != nil || rec.Request.OperationKey != key {
		t.Fatalf("seal reconciliation: %+v, %v", rec.Request, err)
	}
	res, err := e2.ApplyRetainedReconciliation(ctx, rec.Request, p2.HostAuthenticator(), exchange(t, tr2, rec.Line, stderr2))
	if err != nil || res.State != ledger.Succeeded || res.Settled == nil {
		t.Fatalf("reconciliation: %+v, %v", res, err)
	}
	stored, _, err := store.Load(ctx, plan)
	if err != nil {
		t.Fatal(err)
	}
	if op, _ := stored.Operation(key); op.State != ledger.Succeeded {
		t.Fatalf("stored state %v", op.State)
	}
	ev, err := sess2.Resume(*res.Settled)
	if err != nil {
		t.Fatal(err)
	}
	wantScriptSeven(t, ev)
	endBaselineSession(t, p2, stderr2)
	if e2.CompletedSteps() != 0 {
		t.Fatal("the succeeded step was approved by the worker's answer")
	}
	if err := e2.ApproveStep("record"); err != nil {
		t.Fatal(err)
	}

	// 5. Compensation, with a lost answer recovered under a fresh session and approval.
	policy, err := workflow.NewCompensationPolicy("conformance", wfGrant())
	if err != nil {
		t.Fatal(err)
	}
	v := &wfVerifier{}
	target := workflow.Target{OperationKey: key, Policy: policy, Grant: wfGrant(), GrantVerifier: v, ActionVerifier: v}
	undo, err := canonjson.ParseValue([]byte(`{"mode":"succeed","value":"undo"}`), canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	payload := protocol.JSONPayload(undo)
	input, err := protocol.CanonicalOperationInputBytes(payload)
	if err != nil {
		t.Fatal(err)
	}
	cmpKey, err := e2.RecordCompensation(ctx, target, input, []byte("run-7:record:undo"))
	if err != nil {
		t.Fatal(err)
	}
	p3, stderr3 := pausedWorker(t, "e2e-wf-3", "after-observation", args...)
	tr3 := wfTransport(t, p3, "e2e-wf-3")
	a3, err := e2.ApproveCompensation(target, input, p3.HostAuthenticator())
	if err != nil {
		t.Fatal(err)
	}
	s3, err := e2.SealCompensation(target, "compensate-1", payload, a3, p3.HostAuthenticator())
	if err != nil {
		t.Fatal(err)
	}
	exchangeKilled(t, p3, stderr3, tr3, s3.Line, "after-observation")
	if _, err := e2.RecordCompensation(ctx, target, input, []byte("another")); !errors.Is(err, ledger.ErrCompensationAlreadyRecorded) {
		t.Fatalf("a second intent: %v", err)
	}

	p4, stderr4 := startWorker(t, "e2e-wf-4", nil, args...)
	tr4 := wfTransport(t, p4, "e2e-wf-4")
	if _, err := e2.SealCompensation(target, "compensate-2", payload, a3, p4.HostAuthenticator()); !errors.Is(err, workflow.ErrApprovalMismatch) {
		t.Fatalf("the spent approval of the lost session: %v", err)
	}
	a4, err := e2.ApproveCompensation(target, input, p4.HostAuthenticator())
	if err != nil {
		t.Fatal(err)
	}
	s4, err := e2.SealCompensation(target, "compensate-2", payload, a4, p4.HostAuthenticator())
	if err != nil || s4.Request.CompensationKey != cmpKey || s3.Request.CompensationKey != cmpKey || !s4.Request.Payload.Equal(s3.Request.Payload) {
		t.Fatalf("resent compensation %+v, %v", s4.Request, err)
	}
	state, err := e2.ApplyCompensationAnswer(ctx, s4.Request, p4.HostAuthenticator(), exchange(t, tr4, s4.Line, stderr4))
	if err != nil || state != ledger.Succeeded {
		t.Fatalf("compensation answer: %v, %v", state, err)
	}
	endBaselineSession(t, p4, stderr4)
	stored, _, _ = store.Load(ctx, plan)
	if c, ok := stored.Compensation(key); !ok || c.CompensationKey != cmpKey || c.State != ledger.Succeeded {
		t.Fatalf("stored compensation %+v", c)
	}
	if v.grantChecks < 6 || v.actionChecks < 6 {
		t.Fatalf("verifier calls %d/%d: not checked at record, both approvals and both seals", v.grantChecks, v.actionChecks)
	}
	log, err := os.ReadFile(effects)
	if err != nil {
		t.Fatal(err)
	}
	effectsOnly := ""
	for _, line := range strings.SplitAfter(string(log), "\n") {
		if !strings.HasPrefix(line, `{"kind":"fence",`) { // fencing tokens, not effects (PRF-035)
			effectsOnly += line
		}
	}
	if n, m := strings.Count(effectsOnly, `"operation_key":"`+key+`"`), strings.Count(effectsOnly, cmpKey); n != 2 || m != 1 {
		t.Fatalf("effect log (%d lines for the key, %d for the compensation):\n%s", n, m, log)
	}
}
