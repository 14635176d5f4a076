package host

import (
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/impl/protocol"
)

// slotChecks judge the identity slot a host keeps for a cancellation (TRN-112): only the host
// knows whether it kept one, so only the host suite can show it.
func slotChecks() []*Check {
	return []*Check{
		{ID: "CNF-HCANCEL-08", Level: must, Requirements: []string{"TRN-112", "AUZ-006", "AUZ-015", "HDR-045"},
			Features: []string{FeatureInvoke, FeatureCancel},
			Title:    "an invocation begun with an identity slot kept can be cancelled; a cancel of one begun on the last slot is refused without a frame and the worker is contained",
			Run: func(t *T) {
				g := echoGrant()
				g.MaxCalls = 2 * protocol.MaxSessionRequestIDs
				w := cancellableSessionWith(t, []string{"--child"}, g)
				fill(t, w, protocol.MaxSessionRequestIDs-3, func(i int) []map[string]any {
					return []map[string]any{
						{"op": "begin", "request_id": fillID(i), "tool": echoTool, "payload": rawJSON(text("x").AppendJSON(nil))},
						{"op": "finish", "request_id": fillID(i)},
					}
				})
				t.Logf("%d identities reserved", protocol.MaxSessionRequestIDs-3)
				begin := func(requestID string) {
					id := t.sendCommand(map[string]any{"op": "begin", "request_id": requestID, "tool": echoTool, "payload": rawJSON(text("slow").AppendJSON(nil))})
					if inv := w.recv(protocol.TypeInvoke).(protocol.InvokeMessage).Invocation; inv.RequestID != requestID {
						t.Failf("the invoke of "+requestID, inv.RequestID)
					}
					if o := t.await(id); !o.OK {
						t.Failf("begin answered with ok"+t.Cite("HDR-028"), string(o.Raw()))
					}
				}
				// 1,022 identities once begun: one stays free for the cancellation.
				begin("kept")
				id := t.sendCommand(map[string]any{"op": "cancel", "request_id": "kept", "cancellation_id": "kept-cancel"})
				req := w.recv(protocol.TypeCancel).(protocol.CancelMessage).Request
				w.send(w.disposition(req, protocol.OutcomeAcknowledged))
				if o := t.await(id); !o.OK || o.Disposition != "acknowledged" {
					t.Failf(`disposition "acknowledged" for the invocation begun with a slot kept`, string(o.Raw()))
				}
				if o := t.call(map[string]any{"op": "finish", "request_id": "kept"}); !o.OK || !o.Cancelled {
					t.Failf(`finish {"ok":true,"cancelled":true}`, string(o.Raw()))
				}
				// 1,023 identities reserved: this invocation takes the last one.
				begin("last")
				o := t.call(map[string]any{"op": "cancel", "request_id": "last", "cancellation_id": "last-cancel"})
				if o.OK || o.Error != "Indeterminate" {
					t.Failf(`error "Indeterminate": no slot was kept, the worker is contained (TRN-112, HDR-045)`, string(o.Raw()))
				}
				if line, _ := w.next(100 * time.Millisecond); line != nil {
					t.Failf("no cancel frame without a kept slot", "the host sent "+conformance.Clip(string(line), 200))
				}
				w.expectGone("the worker's process group stopped (contained) after the refused cancel: the worker and its child gone (HDR-045)")
			}},
	}
}
