package interop

import (
	"fmt"

	"github.com/splashv5/conform/conformance"

	"github.com/splashv5/conform/impl/protocol"
)

func cancelScenarios() []*Scenario {
	needs := []string{featureInvoke, featureCancel}
	return []*Scenario{
		{ID: "CNF-IOP-CANCEL-01", Title: "a cancel of a running cancellable invocation is acknowledged, no result follows, and close ends the session cleanly",
			Requirements: []string{"CAN-016", "PRF-016", "HDR-028", "HDR-023", "IOP-005"}, Features: needs, Needs: []conformance.Need{NeedCancel},
			Run: func(t *T) {
				r := t.start(protocol.CancellableSession, nil, grant(toolCancellable, protocol.FormatText))
				t.expectOK(t.call(map[string]any{"op": "begin", "request_id": "req-1", "tool": toolCancellable, "payload": payloadJSON(protocol.TextPayload("1500"))}), "begin")
				r.waitLines(HostSide, protocol.TypeInvoke, 1)
				if o := t.call(map[string]any{"op": "cancel", "request_id": "req-1", "cancellation_id": "cancel-1"}); !o.OK || o.Disposition != "acknowledged" {
					t.Failf(`disposition "acknowledged" (CAN-016)`, string(o.Raw()))
				}
				if o := t.call(map[string]any{"op": "finish", "request_id": "req-1"}); !o.OK || !o.Cancelled {
					t.Failf(`finish {"ok":true,"cancelled":true}`, string(o.Raw()))
				}
				t.closeClean(r)
				if n := r.count(WorkerSide, protocol.TypeResult); n != 0 {
					t.Failf("no result after the acknowledgement (CAN-016)", fmt.Sprintf("%d results", n))
				}
			}},
		{ID: "CNF-IOP-CANCEL-02", Title: "a cancel that comes too late keeps the result: too_late, and the result is the outcome",
			Requirements: []string{"CAN-015", "PRF-017", "HDR-028", "IOP-005"}, Features: needs, Needs: []conformance.Need{NeedCancel},
			Run: func(t *T) {
				r := t.start(protocol.CancellableSession, nil, grant(toolUncooperative, protocol.FormatText))
				t.expectOK(t.call(map[string]any{"op": "begin", "request_id": "req-1", "tool": toolUncooperative, "payload": payloadJSON(protocol.TextPayload("300"))}), "begin")
				r.waitLines(HostSide, protocol.TypeInvoke, 1)
				if o := t.call(map[string]any{"op": "cancel", "request_id": "req-1", "cancellation_id": "cancel-1"}); !o.OK || o.Disposition != "too_late" {
					t.Failf(`disposition "too_late" (CAN-015)`, string(o.Raw()))
				}
				o := t.call(map[string]any{"op": "finish", "request_id": "req-1"})
				if !o.OK || o.Cancelled || !samePayload(o.Payload, protocol.TextPayload("done 300")) {
					t.Failf(`finish with the result "done 300" (PRF-017)`, string(o.Raw()))
				}
				t.closeClean(r)
			}},
	}
}

func closeScenarios() []*Scenario {
	return []*Scenario{
		{ID: "CNF-IOP-CLOSE-01", Title: "both sides agree how an ordinary session ends: the host ends the input without a frame, the worker exits 0",
			Requirements: []string{"HDR-023", "WRK-022", "CAN-022", "WRK-092", "IOP-005"}, Features: []string{featureInvoke},
			Run: func(t *T) {
				r := t.start(protocol.BaselineSession, nil, grant(toolTextEcho, protocol.FormatText))
				t.expectPayload("the echo", t.invoke("req-1", toolTextEcho, protocol.TextPayload("ping")), protocol.TextPayload("ping"))
				t.closeClean(r)
				r.mu.Lock()
				ended := r.ended[HostSide]
				r.mu.Unlock()
				if !ended || r.count(HostSide, protocol.TypeCloseSession) != 0 {
					t.Failf("the host's stream ends at a frame boundary, with no close_session (HDR-023)",
						fmt.Sprintf("ended %v, close_session frames %d", ended, r.count(HostSide, protocol.TypeCloseSession)))
				}
			}},
		{ID: "CNF-IOP-CLOSE-02", Title: "both sides agree how a cancellable session ends: close_session, then the end of the input, and the worker exits 0",
			Requirements: []string{"HDR-023", "CAN-009", "CAN-024", "IOP-005"}, Features: []string{featureInvoke, featureCancel}, Needs: []conformance.Need{NeedCancel},
			Run: func(t *T) {
				r := t.start(protocol.CancellableSession, nil, grant(toolCancellable, protocol.FormatText))
				t.expectOK(t.call(map[string]any{"op": "begin", "request_id": "req-1", "tool": toolCancellable, "payload": payloadJSON(protocol.TextPayload("0"))}), "begin")
				if o := t.call(map[string]any{"op": "finish", "request_id": "req-1"}); !o.OK || o.Cancelled {
					t.Failf(`finish with the result "done 0"`, string(o.Raw()))
				}
				t.closeClean(r)
				if n := r.count(HostSide, protocol.TypeCloseSession); n != 1 {
					t.Failf("one close_session (CAN-009)", fmt.Sprintf("%d", n))
				}
				// The relay stays until the host ends its input, or a grace passes.
				r.waitFor("the end of the host's input", func() bool { return r.ended[HostSide] || r.done })
				r.mu.Lock()
				ended := r.ended[HostSide]
				r.mu.Unlock()
				if !ended {
					t.failBlaming(HostSide, "the host sent close_session but never ended the worker's input (HDR-023)",
						"close_session, then the end of the worker's input at a frame boundary (HDR-023)", "the input did not end")
				}
			}},
	}
}
