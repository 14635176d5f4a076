package host

import (
	"time"

	"github.com/splashv5/conform/conformance/driver"
	"github.com/splashv5/conform/impl/protocol"
)

// muxChecks judge the host's multiplexed transport through what a cancellable session shows:
// which refusals change nothing (TRN-041, TRN-043, TRN-086), which worker frames and stream
// ends stop the session (TRN-056, TRN-059), and that nothing but an acknowledgement reports
// an invocation cancelled (TRN-062).
func muxChecks() []*Check {
	needs := []string{FeatureInvoke, FeatureCancel}
	return []*Check{
		{ID: "CNF-HCANCEL-12", Level: must, Requirements: []string{"TRN-041", "TRN-050", "HDR-028"}, Features: needs,
			Title: "a begin refused while an invocation is active, or by the host's authorizer, sends no invoke and changes nothing: the active invocation is still served and a later begin runs",
			Run: func(t *T) {
				w, _ := cancellable(t)
				id := t.sendCommand(beginCommand("req-2", echoTool, "x"))
				t.expectError(id, "the host refuses a second invocation while req-1 is active (Busy)"+t.Cite("TRN-041"))
				w.expectQuiet(150*time.Millisecond, "a begin refused while req-1 is active writes no invoke and leaves the session as it was"+t.Cite("TRN-041"))
				w.send(w.result("req-1", text("done")))
				if o := t.finish(); !o.OK || o.Cancelled || string(o.Payload) != string(text("done").AppendJSON(nil)) {
					t.Failf(`finish with the result "done": the refused begin left req-1 running`+t.Cite("TRN-041"), string(o.Raw()))
				}
				id = t.sendCommand(beginCommand("req-3", "conf.unknown", "x"))
				t.expectError(id, "the host's authorizer refuses a tool the manifest does not grant"+t.Cite("TRN-041"))
				w.expectQuiet(150*time.Millisecond, "a begin the host's authorizer refuses writes no invoke and leaves the session as it was"+t.Cite("TRN-041"))
				id = t.sendCommand(beginCommand("req-4", echoTool, "x"))
				if inv := w.recv(protocol.TypeInvoke).(protocol.InvokeMessage).Invocation; inv.RequestID != "req-4" {
					t.Failf("the invoke of req-4", "the invoke of "+inv.RequestID)
				}
				if o := t.await(id); !o.OK {
					t.Failf("begin of req-4 answered with ok: the refusals left the session usable"+t.Cite("TRN-041", "HDR-028"), string(o.Raw()))
				}
				w.send(w.result("req-4", text("done")))
				if o := t.call(map[string]any{"op": "finish", "request_id": "req-4"}); !o.OK || string(o.Payload) != string(text("done").AppendJSON(nil)) {
					t.Failf(`finish of req-4 with the result "done"`, string(o.Raw()))
				}
			}},
		{ID: "CNF-HCANCEL-13", Level: must, Requirements: []string{"TRN-086", "TRN-043"}, Features: needs,
			Title: "a close while an invocation is active is refused with no close_session and changes nothing; a close whose close_session the worker never answers is reported failed and the worker's process group is stopped",
			Run: func(t *T) {
				w := cancellableSessionWith(t, []string{"--child"}, echoGrant())
				id := t.sendCommand(beginCommand("req-1", echoTool, "slow"))
				w.recv(protocol.TypeInvoke)
				if o := t.await(id); !o.OK {
					t.Failf("begin answered with ok"+t.Cite("HDR-028"), string(o.Raw()))
				}
				id = t.sendCommand(map[string]any{"op": "close"})
				t.expectError(id, "the host refuses to close while req-1 is active (Busy)"+t.Cite("TRN-043", "TRN-086"))
				w.expectQuiet(150*time.Millisecond, "a close refused while req-1 is active writes no close_session and does not end the session"+t.Cite("TRN-043", "TRN-086"))
				w.send(w.result("req-1", text("done")))
				if o := t.finish(); !o.OK || string(o.Payload) != string(text("done").AppendJSON(nil)) {
					t.Failf(`finish with the result "done": the refused close left req-1 running`, string(o.Raw()))
				}
				start := time.Now()
				id = t.sendCommand(map[string]any{"op": "close"})
				w.recv(protocol.TypeCloseSession) // the fake worker never ends its output
				if o := t.awaitUntil(id, start.Add(deadlineMS*time.Millisecond+time.Second)); o.OK {
					t.Failf("an error once the deadline passed: a close the worker never answers has failed"+t.Cite("TRN-086", "HDR-051"), string(o.Raw()))
				}
				w.expectGone("the worker and its child gone after the failed close: a failed close terminates the worker" + t.Cite("TRN-086"))
			}},
		{ID: "CNF-HCANCEL-17", Level: must, Requirements: []string{"TRN-047", "TRN-086"}, Features: needs,
			Title: "after a fatal failure of a cancellable session (a garbage line while an invocation runs), cancel, begin and close fail and write no frame, and the invocation fails",
			Run: func(t *T) {
				w, _ := cancellable(t)
				w.write([]byte("not json at all\n"))
				time.Sleep(100 * time.Millisecond) // the host reads it before the next command
				id := t.sendCommand(map[string]any{"op": "cancel", "request_id": "req-1", "cancellation_id": "cancel-1"})
				t.expectError(id, "a cancel on the stopped session fails"+t.Cite("TRN-047"))
				w.expectSilence(100*time.Millisecond, "no cancel on the stopped session"+t.Cite("TRN-047"))
				id = t.sendCommand(beginCommand("req-2", echoTool, "x"))
				t.expectError(id, "a begin on the stopped session fails"+t.Cite("TRN-047"))
				w.expectSilence(100*time.Millisecond, "no invoke on the stopped session"+t.Cite("TRN-047"))
				id = t.sendCommand(map[string]any{"op": "close"})
				t.expectError(id, "a close of the stopped session fails"+t.Cite("TRN-047", "TRN-086"))
				w.expectSilence(100*time.Millisecond, "no close_session on the stopped session"+t.Cite("TRN-047", "TRN-086", "HDR-023"))
				notCancelled(t, "the worker wrote a garbage line while req-1 ran"+t.Cite("TRN-062"))
			}},
		{ID: "CNF-HCANCEL-14", Level: must, Requirements: []string{"TRN-056"}, Features: needs,
			Title: "an unsolicited cancellation_result (idle, during an invocation with no cancel, after unsupported, while closing) stops the session: no later invoke, the invocation never cancelled, the close failed",
			Run: func(t *T) {
				unsolicited := func(w *fakeWorker, requestID, cancellationID string) {
					w.send(protocol.CancellationResultMessage{Result: protocol.WorkerCancellationResult{ProtocolVersion: protocol.ProtocolVersion,
						SessionID: w.boot.SessionID, CancellationID: cancellationID, RequestID: requestID, Tool: echoTool,
						Outcome: protocol.OutcomeAcknowledged}})
				}
				// Idle.
				w := cancellableSession(t, echoGrant())
				unsolicited(w, "req-0", "unsolicited-1")
				time.Sleep(100 * time.Millisecond) // the host reads it before the next command
				id := t.sendCommand(beginCommand("req-1", echoTool, "x"))
				t.expectError(id, "a begin after an unsolicited cancellation_result in Idle fails: the session stopped"+t.Cite("TRN-056"))
				w.expectSilence(150*time.Millisecond, "no invoke after an unsolicited cancellation_result in Idle"+t.Cite("TRN-056"))
				// Active, no cancel sent.
				t.RenewDeadline()
				w, _ = cancellable(t)
				unsolicited(w, "req-1", "unsolicited-2")
				notCancelled(t, "an acknowledgement of a cancel the host never sent"+t.Cite("TRN-056", "TRN-062"))
				// Active again after unsupported.
				t.RenewDeadline()
				w = unsupportedCancel(t)
				unsolicited(w, "req-1", "unsolicited-3")
				notCancelled(t, "an acknowledgement after unsupported, with no second cancel sent"+t.Cite("TRN-056", "TRN-062"))
				// Closing.
				t.RenewDeadline()
				w = cancellableSession(t, echoGrant())
				id = t.sendCommand(map[string]any{"op": "close"})
				w.recv(protocol.TypeCloseSession)
				unsolicited(w, "req-0", "unsolicited-4")
				w.closeOutput()
				if o := t.await(id); o.OK {
					t.Failf("close failed: a cancellation_result while closing stops the session before the worker's stream ends"+t.Cite("TRN-056"), string(o.Raw()))
				}
			}},
		{ID: "CNF-HCANCEL-16", Level: must, Requirements: []string{"TRN-058"}, Features: needs,
			Title: "a worker frame of a kind the host never accepts (operation_result), or one that fails authentication (a tampered tag), stops the session in every state: idle, active, cancelling, result buffered, closing",
			Run: func(t *T) {
				for _, bad := range []struct {
					what string
					send func(w *fakeWorker)
				}{
					{"an operation_result", func(w *fakeWorker) {
						w.send(protocol.OperationResultMessage{Result: protocol.OperationReconcileResult{ProtocolVersion: protocol.ProtocolVersion,
							SessionID: w.boot.SessionID, RequestID: "req-1", Tool: echoTool, OperationKey: "op-1", Status: protocol.Succeeded(text("done"))}})
					}},
					{"a result with a tampered tag", func(w *fakeWorker) {
						w.write(tamper(w.forge(w.auth.NextOutgoing(), protocol.RoleWorker, w.boot.SessionID, w.result("req-1", text("done")))))
					}},
				} {
					// Idle.
					t.RenewDeadline()
					w := cancellableSession(t, echoGrant())
					bad.send(w)
					time.Sleep(100 * time.Millisecond) // the host reads it before the next command
					id := t.sendCommand(beginCommand("req-1", echoTool, "x"))
					t.expectError(id, "a begin after "+bad.what+" in Idle fails: the session stopped"+t.Cite("TRN-058"))
					w.expectSilence(150*time.Millisecond, "no invoke after "+bad.what+" in Idle"+t.Cite("TRN-058"))
					// Active: the result that follows is never taken.
					t.RenewDeadline()
					w, _ = cancellable(t)
					bad.send(w)
					w.send(w.result("req-1", text("done")))
					notCancelled(t, bad.what+" while req-1 ran stopped the session before its result"+t.Cite("TRN-058"))
					// Cancelling: the acknowledgement that follows is never taken.
					t.RenewDeadline()
					w, _ = cancellable(t)
					id, req := cancelRequest(t, w, "cancel-1")
					bad.send(w)
					w.send(w.disposition(req, protocol.OutcomeAcknowledged))
					if o := t.await(id); o.OK {
						t.Failf("the cancel failed: "+bad.what+" while it awaited its disposition stopped the session"+t.Cite("TRN-058"), string(o.Raw()))
					}
					notCancelled(t, bad.what+" while a cancel awaited its disposition"+t.Cite("TRN-058"))
					// Result buffered: the too_late that follows is never taken.
					t.RenewDeadline()
					w, _ = cancellable(t)
					id, req = cancelRequest(t, w, "cancel-1")
					w.send(w.result("req-1", text("done")))
					bad.send(w)
					w.send(w.disposition(req, protocol.OutcomeTooLate))
					if o := t.await(id); o.OK {
						t.Failf("the cancel failed: "+bad.what+" after the buffered result stopped the session"+t.Cite("TRN-058"), string(o.Raw()))
					}
					notCancelled(t, bad.what+" after the buffered result"+t.Cite("TRN-058"))
					// Closing: the end of the stream that follows is no clean close.
					t.RenewDeadline()
					w = cancellableSession(t, echoGrant())
					id = t.sendCommand(map[string]any{"op": "close"})
					w.recv(protocol.TypeCloseSession)
					bad.send(w)
					w.closeOutput()
					if o := t.await(id); o.OK {
						t.Failf("close failed: "+bad.what+" while closing stops the session before the worker's stream ends"+t.Cite("TRN-058"), string(o.Raw()))
					}
				}
			}},
		{ID: "CNF-HCANCEL-15", Level: must, Requirements: []string{"TRN-059", "TRN-062", "TRN-088"}, Features: needs,
			Title: "the end of the worker's stream closes a closing session and stops any other: no later invoke; an active invocation and a pending cancel fail, and neither that, a garbage line, the worker's exit nor an elapsed deadline reports the invocation cancelled",
			Run: func(t *T) {
				// Idle.
				w := cancellableSession(t, echoGrant())
				w.closeOutput()
				time.Sleep(100 * time.Millisecond) // the host reads the end before the next command
				id := t.sendCommand(beginCommand("req-1", echoTool, "x"))
				t.expectError(id, "a begin after the worker's stream ended in Idle fails: the session stopped"+t.Cite("TRN-059"))
				w.expectSilence(150*time.Millisecond, "no invoke after the worker's stream ended"+t.Cite("TRN-059"))
				// Active.
				t.RenewDeadline()
				w, _ = cancellable(t)
				w.closeOutput()
				notCancelled(t, "the worker's stream ended while req-1 ran"+t.Cite("TRN-059", "TRN-062"))
				// Active after unsupported.
				t.RenewDeadline()
				w = unsupportedCancel(t)
				w.closeOutput()
				notCancelled(t, "the worker's stream ended after unsupported"+t.Cite("TRN-059", "TRN-062"))
				// A cancel awaiting its disposition: the end of the stream, then a garbage line.
				for _, end := range []struct {
					what string
					do   func(w *fakeWorker)
				}{
					{"the worker's stream ended", (*fakeWorker).closeOutput},
					{"the worker wrote a garbage line", func(w *fakeWorker) { w.write([]byte("not json at all\n")) }},
					{"the worker exited", func(w *fakeWorker) { w.exitAndEnd(1) }},
				} {
					t.RenewDeadline()
					w, _ = cancellable(t)
					id, _ := cancelRequest(t, w, "cancel-1")
					end.do(w)
					if o := t.await(id); o.OK {
						t.Failf("the cancel failed: "+end.what+" before its disposition"+t.Cite("TRN-059", "TRN-062"), string(o.Raw()))
					}
					notCancelled(t, end.what+" while a cancel awaited its disposition"+t.Cite("TRN-059", "TRN-062", "TRN-088"))
				}
				// A cancel whose disposition never comes.
				t.RenewDeadline()
				w, _ = cancellable(t)
				start := time.Now()
				id, _ = cancelRequest(t, w, "cancel-1")
				if o := t.awaitUntil(id, start.Add(deadlineMS*time.Millisecond+time.Second)); o.OK {
					t.Failf("the cancel failed once the deadline passed without a disposition"+t.Cite("HDR-051"), string(o.Raw()))
				}
				notCancelled(t, "the deadline passed while a cancel awaited its disposition"+t.Cite("TRN-088", "TRN-062"))
				// Closing: the end of the stream is the clean close.
				t.RenewDeadline()
				w = cancellableSession(t, echoGrant())
				id = t.sendCommand(map[string]any{"op": "close"})
				w.recv(protocol.TypeCloseSession)
				w.closeOutput()
				if o := t.await(id); !o.OK {
					t.Failf("close answered with ok: the end of the worker's stream after close_session is the clean close"+t.Cite("TRN-059", "TRN-043"), string(o.Raw()))
				}
			}},
	}
}

// beginCommand is a begin command for a text payload.
func beginCommand(requestID, tool, payload string) map[string]any {
	return map[string]any{"op": "begin", "request_id": requestID, "tool": tool, "payload": rawJSON(text(payload).AppendJSON(nil))}
}

// notCancelled sends finish for req-1 and requires an error: after what the invocation's fate
// is unknown or its session stopped, and only an acknowledgement of the host's own cancel
// cancels it (TRN-062).
func notCancelled(t *T, what string) driver.Outcome {
	o := t.finish()
	if o.OK {
		t.Failf("finish of req-1 failed, never completed or cancelled: "+what, string(o.Raw()))
	}
	return o
}
