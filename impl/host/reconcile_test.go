package host

import (
	"bytes"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/schema"
)

func reconcilePair(t testing.TB, r *Runtime, id OperationID, status protocol.OperationStatus) (protocol.OperationReconcileRequest, protocol.OperationReconcileResult) {
	t.Helper()
	info, _ := r.Operation(id)
	req, err := protocol.NewOperationReconcileRequest("session-1", "reconcile-1", info.Name, info.IdempotencyKey)
	wantNoError(t, err)
	res, err := protocol.NewOperationReconcileResult("session-1", "reconcile-1", info.Name, info.IdempotencyKey, status)
	wantNoError(t, err)
	return req, res
}

// Spec: RUN-161, RUN-081
func TestReconcileChecksInOrder(t *testing.T) {
	r, _ := lifecycleRuntime(t)
	id := opIn(t, r, StateClaimed)
	req, res := reconcilePair(t, r, id, protocol.Succeeded(protocol.TextPayload("ok")))

	badReq := req
	badReq.RequestID = "Bad"
	_, err := r.ReconcileExternal(99999, badReq, res) // request validation precedes the lookup
	wantKind(t, err, ErrProtocol)
	wantKind(t, err, protocol.ErrInvalidToken)
	badRes := res
	badRes.Status = protocol.Failed("")
	_, err = r.ReconcileExternal(99999, req, badRes)
	wantKind(t, err, protocol.ErrInvalidOperationFailure)
	_, err = r.ReconcileExternal(99999, req, res)
	wantKind(t, err, ErrUnknownOperation)

	mismatches := []func() (protocol.OperationReconcileRequest, protocol.OperationReconcileResult){
		func() (protocol.OperationReconcileRequest, protocol.OperationReconcileResult) {
			q, s := req, res
			q.Tool, s.Tool = "remote.json", "remote.json"
			return q, s
		},
		func() (protocol.OperationReconcileRequest, protocol.OperationReconcileResult) {
			q, s := req, res
			q.OperationKey, s.OperationKey = "splash-other-0", "splash-other-0"
			return q, s
		},
		func() (protocol.OperationReconcileRequest, protocol.OperationReconcileResult) {
			s := res
			s.RequestID = "reconcile-2"
			return req, s
		},
		func() (protocol.OperationReconcileRequest, protocol.OperationReconcileResult) {
			s := res
			s.SessionID = "session-2"
			return req, s
		},
	}
	for i, m := range mismatches {
		q, s := m()
		_, err := r.ReconcileExternal(id, q, s)
		if err == nil {
			t.Fatalf("mismatch %d accepted", i)
		}
		wantKind(t, err, ErrReconciliationMismatch)
	}
	// A wrong payload format changes nothing.
	_, wrong := reconcilePair(t, r, id, protocol.Succeeded(protocol.JSONPayload(jv(t, `{}`))))
	_, err = r.ReconcileExternal(id, req, wrong)
	wantKind(t, err, protocol.ErrPayloadFormatMismatch)
	// Running leaves it pending and writes nothing.
	_, running := reconcilePair(t, r, id, protocol.Running())
	rec, err := r.ReconcileExternal(id, req, running)
	if err != nil || !rec.Running || stateOf(r, id) != StateClaimed || len(r.Audit()) != 0 {
		t.Fatalf("running = %+v, %v, %s, %d records", rec, err, stateOf(r, id), len(r.Audit()))
	}
	rec, err = r.ReconcileExternal(id, req, res)
	if err != nil || rec.Running || rec.Settlement.Output != "ok" {
		t.Fatalf("succeeded = %+v, %v", rec, err)
	}
	wantAudit(t, evs(r.Audit()), []ev{{0, "remote", 2, 2, "allowed", ""}})
}

// Spec: RUN-161
func TestReconcileTerminalStatuses(t *testing.T) {
	r, _ := newTestRuntime(t, Config{})
	contract, _ := schema.NewContract(jv(t, `{}`), jv(t, `{"type":"object","required":["b"]}`))
	p := JSONPolicy("j")
	p.MaxCalls = 10
	mustRegister(t, r.RegisterValidatedExternalJSONTool(p, Metadata{}, contract))
	start := func() OperationID {
		id, err := r.StartJSON("j", "{}")
		wantNoError(t, err)
		_, _ = r.ClaimExternal(id)
		return id
	}
	id := start()
	req, res := reconcilePair(t, r, id, protocol.Succeeded(protocol.JSONPayload(jv(t, `{"b":[1.0,{"y":2,"x":1}],"a":"é"}`))))
	rec, err := r.ReconcileExternal(id, req, res)
	wantNoError(t, err)
	if rec.Settlement.Output != `{"a":"é","b":[1.0,{"x":1,"y":2}]}` {
		t.Fatalf("output = %s", rec.Settlement.Output)
	}
	id = start()
	req, res = reconcilePair(t, r, id, protocol.Succeeded(protocol.JSONPayload(jv(t, `{"a":1}`))))
	rec, _ = r.ReconcileExternal(id, req, res)
	wantToolError(t, rec.Settlement.Err, ToolDenied, `output does not match its schema: $: missing required property "b"`)
	id = start()
	req, res = reconcilePair(t, r, id, protocol.Failed("worker said no"))
	rec, _ = r.ReconcileExternal(id, req, res)
	wantToolError(t, rec.Settlement.Err, ToolFailed, "worker said no")
	id = start() // cancelled needs no prior request
	req, res = reconcilePair(t, r, id, protocol.Cancelled())
	rec, _ = r.ReconcileExternal(id, req, res)
	wantToolError(t, rec.Settlement.Err, ToolCancelled, "external operation was reported cancelled")
	wantAudit(t, evs(r.Audit()), []ev{
		{0, "j", 2, 34, "allowed", ""},
		{1, "j", 2, 0, "denied", ""},
		{2, "j", 2, 0, "failed", ""},
		{3, "j", 2, 0, "cancelled", ""},
	})
}

func authPair(t testing.TB, session string) (host, worker *protocol.Authenticator) {
	t.Helper()
	key, err := protocol.NewSessionKey(bytes.Repeat([]byte{7}, 32))
	wantNoError(t, err)
	host, err = protocol.NewAuthenticator(session, key, protocol.RoleHost, canonjson.Preserve)
	wantNoError(t, err)
	worker, err = protocol.NewAuthenticator(session, key, protocol.RoleWorker, canonjson.Preserve)
	wantNoError(t, err)
	return host, worker
}

// workerAnswer opens the host's reconcile frame as the worker and seals a reconciled_operation
// with status.
func workerAnswer(t testing.TB, worker *protocol.Authenticator, line []byte, status protocol.OperationStatus) protocol.Frame {
	t.Helper()
	f, err := worker.Open(line)
	wantNoError(t, err)
	m, ok := f.Message.(protocol.ReconcileOperationMessage)
	if !ok {
		t.Fatalf("worker received %T", f.Message)
	}
	q := m.Request
	res, err := protocol.NewOperationReconcileResult(q.SessionID, q.RequestID, q.Tool, q.OperationKey, status)
	wantNoError(t, err)
	frame, _, err := worker.Seal(protocol.ReconciledOperationMessage{Result: res})
	wantNoError(t, err)
	return frame
}

// Spec: RUN-162, RUN-160
func TestAuthenticatedReconciliation(t *testing.T) {
	r, _ := lifecycleRuntime(t)
	id := opIn(t, r, StateClaimed)
	host, worker := authPair(t, "worker-1")

	_, err := r.PrepareAuthenticatedReconciliation(id, "reconcile-1", worker)
	wantKind(t, err, ErrReconciliationRequiresHostAuthenticator)
	out, err := r.PrepareAuthenticatedReconciliation(id, "reconcile-1", host)
	wantNoError(t, err)
	info, _ := r.Operation(id)
	if out.Request.SessionID != "worker-1" || out.Request.Tool != "remote" || out.Request.OperationKey != info.IdempotencyKey {
		t.Fatalf("request = %+v", out.Request)
	}
	if bytes.Contains(out.Line, []byte(`"id"`)) {
		t.Fatal("the frame names the operation ID")
	}
	good := workerAnswer(t, worker, out.Line, protocol.Succeeded(protocol.TextPayload("done")))

	// A tampered tag fails to open and consumes nothing.
	bad := good
	bad.Tag[0] ^= 1
	_, err = r.ReconcileAuthenticated(id, out.Request, host, bad)
	wantKind(t, err, protocol.ErrInvalidAuthenticationTag)
	// The host's own frame reflected back fails (sender role is part of the tag).
	_, err = r.ReconcileAuthenticated(id, out.Request, host, out.Frame)
	wantKind(t, err, ErrProtocol)
	_, err = r.ReconcileAuthenticated(id, out.Request, worker, good)
	wantKind(t, err, ErrReconciliationRequiresHostAuthenticator)
	if stateOf(r, id) != StateClaimed || len(r.Audit()) != 0 {
		t.Fatal("a rejected frame changed the operation")
	}
	rec, err := r.ReconcileAuthenticated(id, out.Request, host, good)
	wantNoError(t, err)
	if rec.Settlement.Output != "done" {
		t.Fatalf("reconciliation = %+v", rec)
	}
	// A replay of the same frame fails on the sequence.
	_, err = r.ReconcileAuthenticated(id, out.Request, host, good)
	wantKind(t, err, protocol.ErrUnexpectedSequence)
}

// Spec: RUN-162
func TestAuthenticatedReconciliationConsumesTheSequenceOnceOpened(t *testing.T) {
	r, _ := lifecycleRuntime(t)
	id := opIn(t, r, StateClaimed)
	other := opIn(t, r, StateClaimed)
	host, worker := authPair(t, "worker-1")
	out, err := r.PrepareAuthenticatedReconciliation(id, "reconcile-1", host)
	wantNoError(t, err)
	frame := workerAnswer(t, worker, out.Line, protocol.Succeeded(protocol.TextPayload("x")))
	// Applied to the wrong operation: the frame opens (sequence 1 consumed), then mismatches.
	_, err = r.ReconcileAuthenticated(other, out.Request, host, frame)
	wantKind(t, err, ErrReconciliationMismatch)
	if host.NextIncoming() != 2 {
		t.Fatalf("next incoming = %d, want 2", host.NextIncoming())
	}
	_, err = r.ReconcileAuthenticated(id, out.Request, host, frame)
	wantKind(t, err, protocol.ErrUnexpectedSequence)
	// An unexpected message kind after a successful open.
	out2, err := r.PrepareAuthenticatedReconciliation(id, "reconcile-2", host)
	wantNoError(t, err)
	f, err := worker.Open(out2.Line)
	wantNoError(t, err)
	q := f.Message.(protocol.ReconcileOperationMessage).Request
	res, _ := protocol.NewOperationReconcileResult(q.SessionID, q.RequestID, q.Tool, q.OperationKey, protocol.Running())
	wrongKind, _, err := worker.Seal(protocol.OperationResultMessage{Result: res})
	wantNoError(t, err)
	_, err = r.ReconcileAuthenticated(id, out2.Request, host, wrongKind)
	wantKind(t, err, ErrUnexpectedReconciliationMessage)
	if stateOf(r, id) != StateClaimed || stateOf(r, other) != StateClaimed {
		t.Fatal("a rejected reconciliation changed an operation")
	}
}
