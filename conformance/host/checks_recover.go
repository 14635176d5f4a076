package host

import (
	"fmt"
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
		{ID: "CNF-HRECOVER-02", Level: must, Requirements: []string{"WFL-001", "WFL-003", "WFL-040", "WFL-041", "HDR-040", "HDR-050"}, Features: needs,
			Title: "the ledger survives a host restart: a new driver process on the same state reconciles the interrupted step",
			Run: func(t *T) {
				first := t.ledgerSession()
				t.stepCommand("req-1", jsonPayload(`{"value":1}`))
				req := first.recv(protocol.TypeDispatchOperation).(protocol.DispatchOperationMessage).Request
				t.restartDriver()
				second := t.ledgerSession()
				expectReconcile(t, second, t.recoverCommand("rec-1"), req.OperationKey, done)
			}},
		{ID: "CNF-HRECOVER-03", Level: must, Requirements: []string{"RUN-186", "HDR-041", "HDR-042"}, Features: needs,
			Title: "a step's answer that does not open (a tampered tag), of another kind (reconciled_operation) or for another operation key is refused and leaves the operation pending: the next recover reconciles its key",
			Run: func(t *T) {
				for i, bad := range []struct {
					what   string
					answer func(w *fakeWorker, req protocol.OperationDispatchRequest)
				}{
					{"an operation_result with a tampered tag", func(w *fakeWorker, req protocol.OperationDispatchRequest) {
						w.write(tamper(w.forge(1, protocol.RoleWorker, w.boot.SessionID, w.operationResult(req, req.OperationKey, done))))
					}},
					{"a reconciled_operation", func(w *fakeWorker, req protocol.OperationDispatchRequest) {
						w.send(protocol.ReconciledOperationMessage{Result: protocol.OperationReconcileResult{ProtocolVersion: protocol.ProtocolVersion,
							SessionID: req.SessionID, RequestID: req.RequestID, Tool: req.Tool, OperationKey: req.OperationKey, Status: done}})
					}},
					{"an operation_result for another operation key", func(w *fakeWorker, req protocol.OperationDispatchRequest) {
						w.send(w.operationResult(req, req.OperationKey+"0", done))
					}},
				} {
					t.RenewDeadline()
					w := t.ledgerSession()
					id := t.stepCommand(fmt.Sprintf("req-%d", i+1), jsonPayload(`{"value":1}`))
					req := w.recv(protocol.TypeDispatchOperation).(protocol.DispatchOperationMessage).Request
					bad.answer(w, req)
					t.expectError(id, "the host refuses "+bad.what+" as the answer to its dispatch_operation: open the frame, require an operation_result and check that it answers the request before recording or reporting it"+t.Cite("RUN-186"))
					again := t.ledgerSession()
					id = t.recoverCommand(fmt.Sprintf("rec-%d", i+1))
					req2 := again.recvWithin(protocol.TypeReconcileOperation, recoverWait, nil).(protocol.ReconcileOperationMessage).Request
					if req2.OperationKey != req.OperationKey {
						t.Failf("reconcile_operation of "+req.OperationKey+": the refused answer left the operation pending"+t.Cite("RUN-186", "HDR-042"), "reconcile_operation of "+req2.OperationKey)
					}
					again.send(again.reconciled(req2, done))
					if o := t.await(id); !o.OK || string(o.Status) != string(done.AppendJSON(nil)) {
						t.Failf("recover answered with the reconciled status"+t.Cite("HDR-042"), string(o.Raw()))
					}
				}
			}},
		{ID: "CNF-HRECOVER-04", Level: must, Requirements: []string{"WFL-004", "HDR-041", "HDR-042"}, Features: needs,
			Title: "a step's answer is recorded before the step's outcome: a host killed right after reporting succeeded has nothing to recover, and one killed after reporting running reconciles that step's key",
			Run: func(t *T) {
				t.succeededStep(t.ledgerSession(), "req-1")
				t.restartDriver()
				w := t.ledgerSession()
				id := t.recoverCommand("rec-1")
				w.expectSilence(150*time.Millisecond, "the step's succeeded answer was recorded, durably, before the step's outcome reported it: nothing is uncertain after the restart"+t.Cite("WFL-004", "HDR-042"))
				if o := t.await(id); !o.OK {
					t.Failf("recover of a settled ledger answered with ok"+t.Cite("HDR-042"), string(o.Raw()))
				}
				t.RenewDeadline()
				id = t.stepCommand("req-2", jsonPayload(`{"value":2}`))
				req := w.recv(protocol.TypeDispatchOperation).(protocol.DispatchOperationMessage).Request
				w.send(w.operationResult(req, req.OperationKey, protocol.Running()))
				if o := t.await(id); !o.OK || string(o.Status) != `{"state":"running"}` {
					t.Failf(`{"ok":true,...,"status":{"state":"running"}}`+t.Cite("HDR-041"), string(o.Raw()))
				}
				t.restartDriver()
				t.RenewDeadline()
				expectReconcile(t, t.ledgerSession(), t.recoverCommand("rec-2"), req.OperationKey, done)
			}},
		{ID: "CNF-HRECOVER-05", Level: must, Requirements: []string{"RUN-162", "HDR-042"}, Features: needs,
			Title: "a reconciliation's answer that does not open (a tampered tag) or of another kind (operation_result) is refused and changes nothing: the next recover reconciles the same key again",
			Run: func(t *T) {
				first := t.ledgerSession()
				id := t.stepCommand("req-1", jsonPayload(`{"value":1}`))
				key := first.recv(protocol.TypeDispatchOperation).(protocol.DispatchOperationMessage).Request.OperationKey
				first.exit(crashStatus)
				t.expectError(id, "the worker died without answering")
				for i, bad := range []struct {
					what   string
					answer func(w *fakeWorker, req protocol.OperationReconcileRequest)
				}{
					{"a reconciled_operation with a tampered tag", func(w *fakeWorker, req protocol.OperationReconcileRequest) {
						w.write(tamper(w.forge(1, protocol.RoleWorker, w.boot.SessionID, w.reconciled(req, done))))
					}},
					{"an operation_result", func(w *fakeWorker, req protocol.OperationReconcileRequest) {
						w.send(protocol.OperationResultMessage{Result: protocol.OperationReconcileResult{ProtocolVersion: protocol.ProtocolVersion,
							SessionID: req.SessionID, RequestID: req.RequestID, Tool: req.Tool, OperationKey: req.OperationKey, Status: done}})
					}},
				} {
					t.RenewDeadline()
					w := t.ledgerSession()
					id := t.recoverCommand(fmt.Sprintf("rec-%d", i+1))
					req := w.recvWithin(protocol.TypeReconcileOperation, recoverWait, nil).(protocol.ReconcileOperationMessage).Request
					if req.OperationKey != key {
						t.Failf("reconcile_operation of "+key+": the earlier refused answers changed nothing"+t.Cite("RUN-162"), "reconcile_operation of "+req.OperationKey)
					}
					bad.answer(w, req)
					t.expectError(id, "the host refuses "+bad.what+" as the answer to its reconcile_operation: open the frame first and require a reconciled_operation"+t.Cite("RUN-162"))
				}
				t.RenewDeadline()
				expectReconcile(t, t.ledgerSession(), t.recoverCommand("rec-3"), key, done)
			}},
	}
}
