package host

import (
	"time"

	"github.com/splashv5/conform/impl/protocol"
)

// recoverWait bounds the wait for the frame a recovery must send.
const recoverWait = deadlineMS*time.Millisecond + time.Second

// reconciled answers a reconcile_operation with status.
func (w *fakeWorker) reconciled(req protocol.OperationReconcileRequest, status protocol.OperationStatus) protocol.Message {
	return protocol.ReconciledOperationMessage{Result: protocol.OperationReconcileResult{ProtocolVersion: protocol.ProtocolVersion,
		SessionID: req.SessionID, RequestID: req.RequestID, Tool: req.Tool, OperationKey: req.OperationKey, Status: status}}
}

// expectReconcile waits for the reconcile_operation that recovers key on w's fresh session,
// answers it with status and checks the recover outcome id.
func expectReconcile(t *T, w *fakeWorker, id uint64, key string, status protocol.OperationStatus) {
	req := w.recvWithin(protocol.TypeReconcileOperation, recoverWait, nil).(protocol.ReconcileOperationMessage).Request
	if req.OperationKey != key || req.Tool != durableTool || req.SessionID != w.boot.SessionID {
		t.Failf("reconcile_operation of "+key+" on session "+w.boot.SessionID, req.OperationKey+" on "+req.SessionID)
	}
	w.send(w.reconciled(req, status))
	if o := t.await(id); !o.OK || string(o.Status) != string(status.AppendJSON(nil)) {
		t.Failf("recover answered with the reconciled status"+t.Cite("HDR-042"), string(o.Raw()))
	}
}

func recoverChecks() []*Check {
	needs := []string{FeatureInvoke, FeatureRecover}
	done := protocol.Succeeded(jsonPayload(`{"value":1}`))
	return []*Check{
		{ID: "CNF-HRECOVER-01", Level: must, Requirements: []string{"RUN-187", "WFL-007", "WFL-041", "HDR-041", "HDR-042", "TRN-101"}, Features: needs,
			Title: "after a worker dies mid-step, the host recovers by itself: it reconciles the step's key under a fresh session, never dispatching again",
			Run: func(t *T) {
				first := t.ledgerSession()
				id := t.stepCommand("req-1", jsonPayload(`{"value":1}`))
				req := first.recv(protocol.TypeDispatchOperation).(protocol.DispatchOperationMessage).Request
				if req.Tool != durableTool || string(req.Payload.AppendJSON(nil)) != `{"format":"json","value":{"value":1}}` {
					t.Failf("dispatch_operation of "+durableTool+" with the payload given (HDR-041)", req.Tool)
				}
				first.exit(1)
				t.expectError(id, "the worker died without answering")
				second := t.ledgerSession()
				if second.boot.Key.Equal(first.boot.Key) {
					t.Failf("a fresh key for the recovery session", "the dead session's key")
				}
				expectReconcile(t, second, t.recoverCommand("rec-1"), req.OperationKey, done)
				third := t.ledgerSession()
				id = t.recoverCommand("rec-2")
				third.expectSilence(150*time.Millisecond, "the reconciled operation is settled in the ledger (WFL-041)")
				if o := t.await(id); !o.OK {
					t.Failf("recover of a settled ledger answered with ok", string(o.Raw()))
				}
			}},
		{ID: "CNF-HRECOVER-02", Level: must, Requirements: []string{"WFL-001", "WFL-040", "WFL-041", "HDR-040", "HDR-050"}, Features: needs,
			Title: "the ledger survives a host restart: a new driver process on the same state reconciles the interrupted step",
			Run: func(t *T) {
				first := t.ledgerSession()
				t.stepCommand("req-1", jsonPayload(`{"value":1}`))
				req := first.recv(protocol.TypeDispatchOperation).(protocol.DispatchOperationMessage).Request
				t.restartDriver()
				second := t.ledgerSession()
				expectReconcile(t, second, t.recoverCommand("rec-1"), req.OperationKey, done)
			}},
	}
}
