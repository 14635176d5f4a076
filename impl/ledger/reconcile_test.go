package ledger

import (
	"errors"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/protocol"
)

// claimedLedgerOperation starts a remote.json call with input {"q":"x"}, prepares it in a fresh
// ledger for the plan's first step and claims it.
func claimedLedgerOperation(t *testing.T) (*host.Runtime, *Ledger, *ClaimedOperation) {
	t.Helper()
	r := ledgerRuntime(t)
	l, err := New(planFP)
	wantNoError(t, err)
	if _, err := r.StartJSON("remote.json", `{"q":"x"}`); err != nil {
		t.Fatal(err)
	}
	p, err := PrepareNextExternalOperation(r, testPlan, 0, l, []byte("run-1"))
	wantNoError(t, err)
	c, err := ClaimPreparedExternalOperation(r, testPlan, 0, l, p)
	wantNoError(t, err)
	return r, l, c
}

// reconciledAnswer opens the sealed reconcile request as the worker and answers it with status.
func reconciledAnswer(t *testing.T, worker *protocol.Authenticator, line []byte, st protocol.OperationStatus) protocol.Frame {
	t.Helper()
	f, err := worker.Open(line)
	wantNoError(t, err)
	req := f.Message.(protocol.ReconcileOperationMessage).Request
	res, err := protocol.NewOperationReconcileResult(req.SessionID, req.RequestID, req.Tool, req.OperationKey, st)
	wantNoError(t, err)
	frame, _, err := worker.Seal(protocol.ReconciledOperationMessage{Result: res})
	wantNoError(t, err)
	return frame
}

// The sealed request names the ledger's operation key (op-…), not the runtime's idempotency key
// (splash-…), and the answer is recorded, persisted and only then settled.
//
// Spec: RUN-187, RUN-188, RUN-162
func TestClaimedReconciliationUsesLedgerKey(t *testing.T) {
	r, l, c := claimedLedgerOperation(t)
	id := c.Invocation().ID
	hostAuth, worker := authPair(t, "worker-1")

	_, err := PrepareClaimedReconciliation(r, testPlan, 0, l, c, "reconcile-1", worker)
	wantKind(t, err, ErrReconciliationRequiresHostAuthenticator)
	_, err = PrepareClaimedReconciliation(r, testPlan, 0, l, c, "reconcile-1", nil)
	wantKind(t, err, ErrReconciliationRequiresHostAuthenticator)
	a, err := PrepareClaimedReconciliation(r, testPlan, 0, l, c, "reconcile-1", hostAuth)
	wantNoError(t, err)
	info, _ := r.Operation(id)
	if a.Request.OperationKey != c.OperationKey() || !strings.HasPrefix(a.Request.OperationKey, "op-") ||
		a.Request.OperationKey == info.IdempotencyKey || !strings.HasPrefix(info.IdempotencyKey, "splash-") {
		t.Fatalf("request key %q, ledger key %q, runtime key %q", a.Request.OperationKey, c.OperationKey(), info.IdempotencyKey)
	}
	if a.Request.Tool != "remote.json" || a.Request.SessionID != "worker-1" || a.Request.RequestID != "reconcile-1" || a.Frame.Sequence != 1 {
		t.Fatalf("request %+v, sequence %d", a.Request, a.Frame.Sequence)
	}
	// The line is the frame's encoding and carries a reconcile_operation.
	enc, err := protocol.EncodeFrame(a.Frame)
	wantNoError(t, err)
	if string(enc) != string(a.Line) || !strings.Contains(string(a.Line), `"type":"reconcile_operation"`) {
		t.Fatalf("line %s", a.Line)
	}

	// Running: the ledger records running, persistence runs, the promise stays pending.
	var persisted []State
	persist := func(pl *Ledger) error {
		persisted = append(persisted, pl.Operations()[0].State)
		if stateOf(r, id) != host.StateClaimed {
			t.Fatal("the runtime was settled before the ledger was persisted")
		}
		return nil
	}
	st, rec, err := ApplyClaimedReconciliation(r, testPlan, 0, l, c, a.Request, hostAuth, reconciledAnswer(t, worker, a.Line, protocol.Running()), persist)
	if err != nil || st != Running || !rec.Running || stateOf(r, id) != host.StateClaimed || l.Revision() != 2 {
		t.Fatalf("running = %v %+v %v, %s, revision %d", st, rec, err, stateOf(r, id), l.Revision())
	}

	// Succeeded: recorded, persisted, then completed through the output rules.
	a2, err := PrepareClaimedReconciliation(r, testPlan, 0, l, c, "reconcile-2", hostAuth)
	wantNoError(t, err)
	frame := reconciledAnswer(t, worker, a2.Line, protocol.Succeeded(protocol.JSONPayload(jv(t, `{"z":1,"a":[2]}`))))
	st, rec, err = ApplyClaimedReconciliation(r, testPlan, 0, l, c, a2.Request, hostAuth, frame, persist)
	if err != nil || st != Succeeded || rec.Running || rec.Settlement.Err != nil || rec.Settlement.Output != `{"a":[2],"z":1}` {
		t.Fatalf("succeeded = %v %+v %v", st, rec, err)
	}
	if len(persisted) != 2 || persisted[0] != Running || persisted[1] != Succeeded || l.Revision() != 3 {
		t.Fatalf("persisted %v, revision %d", persisted, l.Revision())
	}
	if stateOf(r, id) != host.StateReady {
		t.Fatalf("runtime state %s", stateOf(r, id))
	}
	// A settled operation is no longer claimed.
	_, err = PrepareClaimedReconciliation(r, testPlan, 0, l, c, "reconcile-3", hostAuth)
	wantKind(t, err, host.ErrAlreadyCompleted)
}

// Spec: RUN-187, RUN-188
func TestApplyClaimedReconciliationRejects(t *testing.T) {
	r, l, c := claimedLedgerOperation(t)
	id := c.Invocation().ID
	hostAuth, worker := authPair(t, "worker-1")
	a, err := PrepareClaimedReconciliation(r, testPlan, 0, l, c, "reconcile-1", hostAuth)
	wantNoError(t, err)
	f, err := worker.Open(a.Line)
	wantNoError(t, err)
	req := f.Message.(protocol.ReconcileOperationMessage).Request
	answer := func(requestID, key string, st protocol.OperationStatus, reconciled bool) protocol.Frame {
		res, err := protocol.NewOperationReconcileResult(req.SessionID, requestID, req.Tool, key, st)
		wantNoError(t, err)
		var m protocol.Message = protocol.ReconciledOperationMessage{Result: res}
		if !reconciled {
			m = protocol.OperationResultMessage{Result: res}
		}
		frame, _, err := worker.Seal(m)
		wantNoError(t, err)
		return frame
	}
	ok := func(*Ledger) error { return nil }
	unchanged := func(what string) {
		t.Helper()
		if l.Revision() != 1 || l.Operations()[0].State != Pending || stateOf(r, id) != host.StateClaimed {
			t.Fatalf("%s changed state: revision %d, %v, %s", what, l.Revision(), l.Operations()[0].State, stateOf(r, id))
		}
	}

	// Refusals before the frame is opened need no worker frame.
	_, _, err = ApplyClaimedReconciliation(r, testPlan, 0, l, c, a.Request, worker, protocol.Frame{}, ok)
	wantKind(t, err, ErrReconciliationRequiresHostAuthenticator)
	_, _, err = ApplyClaimedReconciliation(r, testPlan, 0, l, c, a.Request, hostAuth, protocol.Frame{}, nil)
	wantKind(t, err, ErrStore)
	unchanged("missing persist")

	// A tampered tag fails to open and consumes nothing: the untampered frame (sequence 1) opens
	// afterwards and is rejected for its request ID.
	good := answer("reconcile-9", req.OperationKey, protocol.Running(), true)
	tampered := good
	tampered.Tag[3] ^= 0x01
	_, _, err = ApplyClaimedReconciliation(r, testPlan, 0, l, c, a.Request, hostAuth, tampered, ok)
	wantKind(t, err, ErrProtocol)
	wantKind(t, err, protocol.ErrInvalidAuthenticationTag)
	unchanged("tampered frame")

	// The rest open (each consumes its sequence) and are rejected before the ledger changes.
	forged := a.Request
	forged.OperationKey = "splash-other-1"
	cases := []struct {
		name  string
		frame func() protocol.Frame
		req   protocol.OperationReconcileRequest
		kind  error
	}{
		{"other request id", func() protocol.Frame { return good }, a.Request, ErrReconciliationMismatch},
		{"operation_result", func() protocol.Frame { return answer("reconcile-1", req.OperationKey, protocol.Running(), false) }, a.Request, ErrUnexpectedReconciliationMessage},
		{"runtime key", func() protocol.Frame { return answer("reconcile-1", "splash-other-1", protocol.Running(), true) }, a.Request, ErrReconciliationMismatch},
		{"wrong format", func() protocol.Frame {
			return answer("reconcile-1", req.OperationKey, protocol.Succeeded(protocol.TextPayload("ok")), true)
		}, a.Request, protocol.ErrPayloadFormatMismatch},
		{"forged request", func() protocol.Frame { return answer("reconcile-1", "splash-other-1", protocol.Running(), true) }, forged, ErrReconciliationMismatch},
	}
	for _, tc := range cases {
		_, _, err := ApplyClaimedReconciliation(r, testPlan, 0, l, c, tc.req, hostAuth, tc.frame(), ok)
		if !errors.Is(err, tc.kind) {
			t.Fatalf("%s: %v, want %v", tc.name, err, tc.kind)
		}
		unchanged(tc.name)
	}
	// Another plan's claim is refused.
	other := Plan{Fingerprint: strings.Repeat("b", 64), Steps: testPlan.Steps}
	_, err = PrepareClaimedReconciliation(r, other, 0, l, c, "reconcile-1", hostAuth)
	wantKind(t, err, ErrPreparedElsewhere)
	_, err = PrepareClaimedReconciliation(r, testPlan, 1, l, c, "reconcile-1", hostAuth)
	wantKind(t, err, ErrOperationBindingMismatch)

	// A failed persistence returns its error and leaves the runtime claimed.
	storeFailure := errors.New("disk full")
	st, rec, err := ApplyClaimedReconciliation(r, testPlan, 0, l, c, a.Request, hostAuth, answer("reconcile-1", req.OperationKey, protocol.Cancelled(), true), func(*Ledger) error { return storeFailure })
	if !errors.Is(err, storeFailure) || st != Cancelled || rec != (host.Reconciliation{}) || stateOf(r, id) != host.StateClaimed {
		t.Fatalf("persist failure = %v %+v %v, %s", st, rec, err, stateOf(r, id))
	}
	// Retrying the same observation is idempotent on the ledger and then settles.
	st, rec, err = ApplyClaimedReconciliation(r, testPlan, 0, l, c, a.Request, hostAuth, answer("reconcile-1", req.OperationKey, protocol.Cancelled(), true), ok)
	if err != nil || st != Cancelled || l.Revision() != 2 {
		t.Fatalf("retry = %v %v, revision %d", st, err, l.Revision())
	}
	wantToolError(t, rec.Settlement.Err, host.ToolCancelled, "external operation was reported cancelled")
}
