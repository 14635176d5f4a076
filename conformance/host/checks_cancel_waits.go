package host

import (
	"time"

	"github.com/splashv5/conform/impl/protocol"
)

// cancelWaitChecks judge what a cancellable session's deadline bounds (HDR-051) and what its
// close waits for (HDR-052).
func cancelWaitChecks() []*Check {
	needs := []string{FeatureInvoke, FeatureCancel}
	return []*Check{
		{ID: "CNF-HCANCEL-09", Level: must, Requirements: []string{"HDR-051", "HDR-028"}, Needs: needs,
			Title: "a cancellable session's deadline bounds each wait, not the invocation: finish, sent after more than the deadline since begin, still gets a result that comes soon",
			run: func(t *T) {
				w, _ := cancellable(t)
				time.Sleep(deadlineMS*time.Millisecond + 200*time.Millisecond)
				id := t.sendCommand(map[string]any{"op": "finish", "request_id": "req-1"})
				time.Sleep(50 * time.Millisecond)
				w.send(w.result("req-1", text("done")))
				if o := t.await(id); !o.OK || o.Cancelled || string(o.Payload) != string(text("done").AppendJSON(nil)) {
					t.failf(`finish with the result "done": the deadline runs from finish (HDR-051)`, string(o.raw))
				}
			}},
		{ID: "CNF-HCANCEL-10", Level: must, Requirements: []string{"HDR-052", "TRN-043"}, Needs: needs,
			Title: "close on a cancellable session writes close_session and answers once the worker's output ends, without waiting for its exit",
			run: func(t *T) {
				w := cancellableSession(t, echoGrant())
				id := t.sendCommand(map[string]any{"op": "close"})
				w.recv(protocol.TypeCloseSession)
				if o, err := t.drv.await(id, time.Now().Add(150*time.Millisecond)); err != errDriverSilent {
					t.failf("no outcome while the worker's output is open (HDR-052)", "the outcome "+string(o.raw))
				}
				_ = w.enc.Encode(relayCommand{CloseOutput: true}) // the fake worker stays alive
				t.logf("worker %d: closes its output and stays", w.index)
				if o := t.awaitUntil(id, time.Now().Add(deadlineMS*time.Millisecond)); !o.OK {
					t.failf("close answered with ok once the worker's output ended, before the deadline (HDR-052)", string(o.raw))
				}
			}},
	}
}
