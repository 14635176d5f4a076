package host

import (
	"time"

	"github.com/splashv5/conform/impl/protocol"
)

// unsupportedChecks judge what the host does after a worker answers a cancel with
// `unsupported`, an outcome the reference worker never sends (CAN-021), so that only the host
// suite can show it.
func unsupportedChecks() []*Check {
	return []*Check{
		{ID: "CNF-HCANCEL-07", Level: must, Requirements: []string{"CAN-021", "AUZ-016", "AUZ-019", "TRN-054"},
			Features: []string{FeatureInvoke, FeatureCancel},
			Title:    "after unsupported a second cancel of the target is refused without a frame, and the invocation still runs to its result",
			Run: func(t *T) {
				afterUnsupported(t, func(w *fakeWorker) {
					id := t.sendCommand(map[string]any{"op": "cancel", "request_id": "req-1", "cancellation_id": "cancel-2"})
					t.expectError(id, "one cancellation per target, whatever the first one's outcome (AUZ-016)")
					w.expectSilence(100*time.Millisecond, "the refused cancel is refused before any frame")
				})
			}},
	}
}

// afterUnsupported begins req-1 on a cancellable session, has the worker answer its cancel with
// unsupported, runs between (if set), then sends the ordinary result, which must be finish's
// payload: the invocation stayed active (CAN-021, TRN-054).
func afterUnsupported(t *T, between func(w *fakeWorker)) {
	w := unsupportedCancel(t)
	if between != nil {
		between(w)
	}
	w.send(w.result("req-1", text("done")))
	if o := t.finish(); !o.OK || o.Cancelled || string(o.Payload) != string(text("done").AppendJSON(nil)) {
		t.Failf(`finish with the result "done": unsupported leaves the invocation active`, string(o.Raw()))
	}
}

// unsupportedCancel begins req-1 on a cancellable session and has the worker answer its cancel
// with unsupported, which the driver must report; req-1 stays active.
func unsupportedCancel(t *T) *fakeWorker {
	w, _ := cancellable(t)
	id, req := cancelRequest(t, w, "cancel-1")
	w.send(w.disposition(req, protocol.OutcomeUnsupported))
	if o := t.await(id); !o.OK || o.Disposition != "unsupported" {
		t.Failf(`disposition "unsupported"`, string(o.Raw()))
	}
	return w
}
