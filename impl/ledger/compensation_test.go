package ledger

import (
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/opkey"
	"github.com/splashv5/conform/impl/protocol"
)

// compensationLedger returns a ledger with op-1 (remote) succeeded and op-2 failed.
func compensationLedger(t *testing.T) *Ledger {
	t.Helper()
	l, err := New(planFP)
	wantNoError(t, err)
	wantNoError(t, l.Record("fetch", "remote", "op-1", []byte("in-1")))
	wantNoError(t, l.Record("fetch", "remote", "op-2", []byte("in-2")))
	for key, st := range map[string]protocol.OperationStatus{"op-1": protocol.Succeeded(protocol.TextPayload("ok")), "op-2": protocol.Failed("no")} {
		req, err := protocol.NewOperationReconcileRequest("s", "r-"+key, "remote", key)
		wantNoError(t, err)
		res, err := protocol.NewOperationReconcileResult("s", "r-"+key, "remote", key, st)
		wantNoError(t, err)
		_, err = l.ApplyVerifiedReconciliation(req, res)
		wantNoError(t, err)
	}
	return l
}

// Spec: WFL-010
// The compensation key follows the length-prefixed derivation over its seven inputs.
func TestDeriveCompensationKey(t *testing.T) {
	grantFP := strings.Repeat("cd", 32)
	input, nonce := []byte("text\x00\x00\x00\x00\x00\x00\x00\x04undo"), []byte("run-1:undo")
	want := "cmp-" + hashParts([]byte("splash-workflow-compensation-key-v1"), lp([]byte(planFP)), lp([]byte("op-1")),
		lp([]byte("remote")), lp([]byte("tenant-a")), lp([]byte(grantFP)), lp(input), lp(nonce))
	if got := opkey.CompensationKey(planFP, "op-1", "remote", "tenant-a", grantFP, input, nonce); got != want {
		t.Fatalf("key %s, want %s", got, want)
	}
	if opkey.CompensationKey(planFP, "op-1", "remote", "tenant-b", grantFP, input, nonce) == want {
		t.Fatal("the tenant scope does not reach the key")
	}
}

// Spec: WFL-011
// One intent per operation, only for a succeeded one of the same tool, with a cmp- key; the
// intent stores the input's fingerprint and survives encoding.
func TestLedgerRecordCompensation(t *testing.T) {
	l := compensationLedger(t)
	grantFP := strings.Repeat("cd", 32)
	rev := l.Revision()
	wantKind(t, l.RecordCompensation("op-9", "remote", "tenant-a", grantFP, "cmp-1", []byte("u")), ErrUnknownOperation)
	wantKind(t, l.RecordCompensation("op-2", "remote", "tenant-a", grantFP, "cmp-1", []byte("u")), ErrCompensationRequiresSucceededOperation)
	wantKind(t, l.RecordCompensation("op-1", "other", "tenant-a", grantFP, "cmp-1", []byte("u")), ErrCompensationPolicyMismatch)
	wantKind(t, l.RecordCompensation("op-1", "remote", "tenant-a", grantFP, "undo-1", []byte("u")), ErrInvalidCompensationKey)
	wantKind(t, l.RecordCompensation("op-1", "remote", "Tenant A", grantFP, "cmp-1", []byte("u")), ErrInvalidCompensationTenantScope)
	wantKind(t, l.RecordCompensation("op-1", "remote", "tenant-a", "xy", "cmp-1", []byte("u")), ErrInvalidCompensationGrantFingerprint)
	if l.Revision() != rev {
		t.Fatal("a refusal changed the revision")
	}
	wantNoError(t, l.RecordCompensation("op-1", "remote", "tenant-a", grantFP, "cmp-1", []byte("u")))
	wantKind(t, l.RecordCompensation("op-1", "remote", "tenant-a", grantFP, "cmp-2", []byte("u")), ErrCompensationAlreadyRecorded)
	c, ok := l.Compensation("op-1")
	if !ok || c.State != Pending || c.InputFingerprint != InputFingerprint([]byte("u")) || l.Revision() != rev+1 {
		t.Fatalf("intent %+v", c)
	}
	wantKind(t, l.VerifyCompensationInput("op-1", []byte("v")), ErrCompensationInputFingerprintMismatch)
	wantKind(t, l.VerifyCompensationInput("op-2", []byte("u")), ErrUnknownCompensation)
	data, err := l.Encode()
	wantNoError(t, err)
	back, err := Decode(data)
	wantNoError(t, err)
	if bc, _ := back.Compensation("op-1"); bc != c {
		t.Fatalf("decoded intent %+v", bc)
	}
}

// Spec: WFL-012
// Observations of the compensation: the request must match the intent, transitions follow the
// ledger's rule, an identical observation changes nothing.
func TestLedgerApplyVerifiedCompensation(t *testing.T) {
	l := compensationLedger(t)
	grantFP := strings.Repeat("cd", 32)
	payload := protocol.TextPayload("undo")
	input, err := protocol.CanonicalOperationInputBytes(payload)
	wantNoError(t, err)
	wantNoError(t, l.RecordCompensation("op-1", "remote", "tenant-a", grantFP, "cmp-1", input))
	req := func(cmpKey, tenant string, p protocol.ToolPayload) protocol.OperationCompensationRequest {
		b, err := protocol.NewOperationCompensationBinding("remote", "op-1", cmpKey, tenant, grantFP)
		wantNoError(t, err)
		r, err := protocol.NewOperationCompensationRequest("s", "c1", b, p)
		wantNoError(t, err)
		return r
	}
	res := func(r protocol.OperationCompensationRequest, st protocol.OperationStatus) protocol.OperationCompensationResult {
		out, err := protocol.NewOperationCompensationResult(r.SessionID, r.RequestID, r.Binding(), st)
		wantNoError(t, err)
		return out
	}
	good := req("cmp-1", "tenant-a", payload)
	_, err = l.ApplyVerifiedCompensation(good, res(req("cmp-1", "tenant-b", payload), protocol.Running()))
	wantKind(t, err, ErrCompensationRequestMismatch)
	other := req("cmp-2", "tenant-a", payload)
	_, err = l.ApplyVerifiedCompensation(other, res(other, protocol.Running()))
	wantKind(t, err, ErrCompensationRequestMismatch)
	drift := req("cmp-1", "tenant-a", protocol.TextPayload("undo!"))
	_, err = l.ApplyVerifiedCompensation(drift, res(drift, protocol.Running()))
	wantKind(t, err, ErrCompensationInputFingerprintMismatch)
	st, err := l.ApplyVerifiedCompensation(good, res(good, protocol.Succeeded(protocol.TextPayload("done"))))
	if err != nil || st != Succeeded {
		t.Fatalf("succeeded: %v %v", st, err)
	}
	rev := l.Revision()
	if st, err := l.ApplyVerifiedCompensation(good, res(good, protocol.Succeeded(protocol.TextPayload("done")))); err != nil || st != Succeeded || l.Revision() != rev {
		t.Fatalf("repeat: %v %v, revision %d", st, err, l.Revision())
	}
	_, err = l.ApplyVerifiedCompensation(good, res(good, protocol.Failed("late")))
	wantKind(t, err, ErrInvalidCompensationStateTransition)
	if op, _ := l.Operation("op-1"); op.State != Succeeded {
		t.Fatal("the original's state changed")
	}
}
