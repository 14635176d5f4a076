package workflow_test

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/ledger"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/workflow"
	"lukechampine.com/blake3"
)

// succeeded dispatches one succeeded durable operation and returns its key.
func (f *fixture) succeeded() string {
	f.t.Helper()
	f.start("succeed", "1")
	c, res := f.dispatch("n0")
	if res.State != ledger.Succeeded {
		f.t.Fatalf("state %v", res.State)
	}
	return c.OperationKey()
}

// compensate approves, seals and sends the recorded compensation under the fixture's current
// worker session and returns the sealed request and the answer frame.
func (f *fixture) compensate(tg workflow.Target, requestID string) (workflow.AuthenticatedCompensation, protocol.Frame) {
	f.t.Helper()
	p, in := undo(f.t)
	a, err := f.e.ApproveCompensation(tg, in, f.host)
	if err != nil {
		f.t.Fatal(err)
	}
	sealed, err := f.e.SealCompensation(tg, requestID, p, a, f.host)
	if err != nil {
		f.t.Fatal(err)
	}
	return sealed, f.send(sealed.Line)
}

// Spec: WFL-022, WFL-023, WFL-024, WFL-025, WFL-010
// The compensation flow: intent recorded and persisted under the derived cmp- key, approval,
// sealing, the worker's answer recorded and persisted; both verifiers run at approval and
// again at sealing, and the action verifier sees the exact inverse input, which is never
// printed.
func TestCompensationFlow(t *testing.T) {
	f := newFixture(t)
	key := f.succeeded()
	v := &verifiers{}
	tg := target(t, key, v)
	_, in := undo(t)
	writes := f.store.writes
	cmpKey, err := f.e.RecordCompensation(f.ctx, tg, in, []byte("run-42:undo:1"))
	if err != nil {
		t.Fatal(err)
	}
	if cmpKey != independentCompensationKey(key, tg.Policy.GrantFingerprint(), in, []byte("run-42:undo:1")) {
		t.Fatalf("compensation key %s does not follow the derivation", cmpKey)
	}
	if f.store.writes != writes+1 || v.grantCalls != 1 || v.actionCalls != 1 {
		t.Fatalf("writes %d, verifier calls %d/%d", f.store.writes-writes, v.grantCalls, v.actionCalls)
	}
	stored, _, _ := f.store.Load(f.ctx, testPlan)
	if c, ok := stored.Compensation(key); !ok || c.CompensationKey != cmpKey || c.State != ledger.Pending || c.TenantScope != tenant {
		t.Fatalf("stored intent %+v %v", c, ok)
	}
	sealed, answer := f.compensate(tg, "cmp-1")
	if v.grantCalls != 3 || v.actionCalls != 3 {
		t.Fatalf("verifier calls %d/%d, want approval and sealing each", v.grantCalls, v.actionCalls)
	}
	if string(v.lastAction.Input()) != string(in) || strings.Contains(fmt.Sprintf("%v %#v", v.lastAction, v.lastAction), "undo") {
		t.Fatal("the action verifier did not get the exact input, or the input was printed")
	}
	if sealed.Request.CompensationKey != cmpKey || sealed.Request.TenantScope != tenant {
		t.Fatalf("request %+v", sealed.Request)
	}
	state, err := f.e.ApplyCompensationAnswer(f.ctx, sealed.Request, f.host, answer)
	if err != nil || state != ledger.Succeeded {
		t.Fatalf("answer: %v %v", state, err)
	}
	stored, _, _ = f.store.Load(f.ctx, testPlan)
	if c, _ := stored.Compensation(key); c.State != ledger.Succeeded {
		t.Fatalf("stored compensation state %v", c.State)
	}
}

// independentCompensationKey is the derivation written out from the specification.
func independentCompensationKey(opKey, grantFP string, input, nonce []byte) string {
	b := []byte("splash-workflow-compensation-key-v1")
	for _, part := range [][]byte{[]byte(planFP), []byte(opKey), []byte(record), []byte(tenant), []byte(grantFP), input, nonce} {
		b = binary.BigEndian.AppendUint64(b, uint64(len(part)))
		b = append(b, part...)
	}
	sum := blake3.Sum256(b)
	return "cmp-" + hex.EncodeToString(sum[:])
}

// Spec: WFL-020, WFL-021, WFL-022
// Nothing is recorded without a complete target, for an original that did not succeed, or a
// second time for the same original.
func TestCompensationIntentRules(t *testing.T) {
	f := newFixture(t)
	_, in := undo(t)
	// A failed original.
	f.start("fail", "1")
	failed, _ := f.dispatch("n-fail")
	v := &verifiers{}
	_, err := f.e.RecordCompensation(f.ctx, target(t, failed.OperationKey(), v), in, []byte("x"))
	wantKind(t, err, ledger.ErrCompensationRequiresSucceededOperation)

	f.start("succeed", "1")
	ok, _ := f.dispatch("n-ok")
	key := ok.OperationKey()
	incomplete := target(t, key, v)
	incomplete.ActionVerifier = nil
	_, err = f.e.RecordCompensation(f.ctx, incomplete, in, []byte("x"))
	wantKind(t, err, workflow.ErrCompensationTargetRequired)
	incomplete = target(t, key, v)
	incomplete.GrantVerifier = nil
	_, err = f.e.RecordCompensation(f.ctx, incomplete, in, []byte("x"))
	wantKind(t, err, workflow.ErrCompensationTargetRequired)

	v.revoked = true
	_, err = f.e.RecordCompensation(f.ctx, target(t, key, v), in, []byte("x"))
	wantKind(t, err, ledger.ErrCompensationGrantDenied)
	v.revoked, v.denyAction = false, true
	_, err = f.e.RecordCompensation(f.ctx, target(t, key, v), in, []byte("x"))
	wantKind(t, err, ledger.ErrCompensationActionDenied)
	v.denyAction = false
	// A grant that changed since the policy was derived.
	drifted := target(t, key, v)
	drifted.Grant.MaxInputBytes--
	_, err = f.e.RecordCompensation(f.ctx, drifted, in, []byte("x"))
	wantKind(t, err, ledger.ErrCompensationPolicyMismatch)
	if _, has := f.e.Ledger().Compensation(key); has {
		t.Fatal("a refused intent was recorded")
	}
	if _, err := f.e.RecordCompensation(f.ctx, target(t, key, v), in, []byte("x")); err != nil {
		t.Fatal(err)
	}
	_, err = f.e.RecordCompensation(f.ctx, target(t, key, v), in, []byte("y"))
	wantKind(t, err, ledger.ErrCompensationAlreadyRecorded)
	_, err = workflow.NewCompensationPolicy(tenant, protocol.JSONGrant(record))
	wantKind(t, err, ledger.ErrCompensationNotGranted)
	_, err = workflow.NewCompensationPolicy("Not A Token", recordGrant())
	wantKind(t, err, ledger.ErrInvalidCompensationTenantScope)
}

// Spec: WFL-023, WFL-024
// Approval is one-use and bound to its session and the ledger revision; tenant policy and
// revocation are checked again immediately before sealing; drifted input is refused.
func TestCompensationApprovalRules(t *testing.T) {
	f := newFixture(t)
	key := f.succeeded()
	v := &verifiers{}
	tg := target(t, key, v)
	p, in := undo(t)
	if _, err := f.e.RecordCompensation(f.ctx, tg, in, []byte("x")); err != nil {
		t.Fatal(err)
	}
	// No approval without a host authenticator.
	_, err := f.e.ApproveCompensation(tg, in, nil)
	wantKind(t, err, ledger.ErrCompensationDispatchRequiresHostAuthenticator)
	// Drifted input.
	_, err = f.e.ApproveCompensation(tg, []byte("jsonother"), f.host)
	wantKind(t, err, ledger.ErrCompensationInputFingerprintMismatch)

	// Revoked between approval and sealing: the seal is refused.
	a, err := f.e.ApproveCompensation(tg, in, f.host)
	if err != nil {
		t.Fatal(err)
	}
	v.revoked = true
	_, err = f.e.SealCompensation(tg, "c1", p, a, f.host)
	wantKind(t, err, ledger.ErrCompensationGrantDenied)
	v.revoked = false
	// Action denied at sealing.
	v.denyAction = true
	_, err = f.e.SealCompensation(tg, "c1", p, a, f.host)
	wantKind(t, err, ledger.ErrCompensationActionDenied)
	v.denyAction = false
	// That attempt spent the approval.
	_, err = f.e.SealCompensation(tg, "c1", p, a, f.host)
	wantKind(t, err, workflow.ErrApprovalMismatch)

	// Session-bound: an approval for this session cannot seal for another.
	a, _ = f.e.ApproveCompensation(tg, in, f.host)
	first := f.host
	f.reopenWorker("session-2")
	_, err = f.e.SealCompensation(tg, "c2", p, a, f.host)
	wantKind(t, err, workflow.ErrApprovalMismatch)
	// One-use: a fresh approval seals once.
	a, _ = f.e.ApproveCompensation(tg, in, f.host)
	if _, err := f.e.SealCompensation(tg, "c3", p, a, f.host); err != nil {
		t.Fatal(err)
	}
	_, err = f.e.SealCompensation(tg, "c4", p, a, f.host)
	wantKind(t, err, workflow.ErrApprovalMismatch)
	// Drifted payload under a fresh approval.
	a, _ = f.e.ApproveCompensation(tg, in, first)
	other, _ := undoValue(t, `{"mode":"succeed","value":"undo-more"}`)
	_, err = f.e.SealCompensation(tg, "c5", other, a, first)
	wantKind(t, err, ledger.ErrCompensationInputFingerprintMismatch)
}

// Spec: WFL-026
// An ambiguous delivery is recovered by resending the same cmp- key and input under a fresh
// session and approval: the worker answers from its journal and the inverse effect ran once.
func TestCompensationAmbiguousDeliveryRecovery(t *testing.T) {
	f := newFixture(t)
	key := f.succeeded()
	v := &verifiers{}
	tg := target(t, key, v)
	_, in := undo(t)
	cmpKey, err := f.e.RecordCompensation(f.ctx, tg, in, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	lost, _ := f.compensate(tg, "cmp-1") // the answer is lost
	_, err = f.e.RecordCompensation(f.ctx, tg, in, []byte("another"))
	wantKind(t, err, ledger.ErrCompensationAlreadyRecorded)
	f.reopenWorker("session-2")
	again, answer := f.compensate(tg, "cmp-2")
	if again.Request.CompensationKey != cmpKey || lost.Request.CompensationKey != cmpKey || !again.Request.Payload.Equal(lost.Request.Payload) ||
		again.Request.SessionID != "session-2" {
		t.Fatalf("resent request %+v", again.Request)
	}
	state, err := f.e.ApplyCompensationAnswer(f.ctx, again.Request, f.host, answer)
	if err != nil || state != ledger.Succeeded {
		t.Fatalf("answer %v %v", state, err)
	}
	n := 0
	for _, line := range f.effects.Lines() {
		if line.CompensationKey == cmpKey {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the inverse effect ran %d times", n)
	}
}
