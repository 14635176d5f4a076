package host

import (
	"time"

	"github.com/splashv5/conform/conformance/driver"
	"github.com/splashv5/conform/conformance/fakeworker"
	"github.com/splashv5/conform/impl/protocol"
)

// cancelWaitChecks judge what a cancellable session's deadline bounds (HDR-051) and what its
// close waits for (HDR-052).
func cancelWaitChecks() []*Check {
	needs := []string{FeatureInvoke, FeatureCancel}
	return []*Check{
		{ID: "CNF-HCANCEL-09", Level: must, Requirements: []string{"HDR-051", "HDR-028"}, Features: needs,
			Title: "a cancellable session's deadline bounds each wait, not the invocation: finish, sent after more than the deadline since begin, still gets a result that comes soon",
			Run: func(t *T) {
				w, _ := cancellable(t)
				time.Sleep(deadlineMS*time.Millisecond + 200*time.Millisecond)
				id := t.sendCommand(map[string]any{"op": "finish", "request_id": "req-1"})
				time.Sleep(50 * time.Millisecond)
				w.send(w.result("req-1", text("done")))
				if o := t.await(id); !o.OK || o.Cancelled || string(o.Payload) != string(text("done").AppendJSON(nil)) {
					t.Failf(`finish with the result "done": the deadline runs from finish (HDR-051)`, string(o.Raw()))
				}
			}},
		{ID: "CNF-HCANCEL-10", Level: must, Requirements: []string{"HDR-052", "TRN-043"}, Features: needs,
			Title: "close on a cancellable session writes close_session and answers once the worker's output ends, without waiting for its exit",
			Run: func(t *T) {
				w := cancellableSession(t, echoGrant())
				id := t.sendCommand(map[string]any{"op": "close"})
				w.recv(protocol.TypeCloseSession)
				if o, err := t.drv.Await(id, time.Now().Add(150*time.Millisecond)); err != driver.ErrSilent {
					t.Failf("no outcome while the worker's output is open (HDR-052)", "the outcome "+string(o.Raw()))
				}
				_ = w.enc.Encode(fakeworker.Relay{CloseOutput: true}) // the fake worker stays alive
				t.Logf("worker %d: closes its output and stays", w.index)
				if o := t.awaitUntil(id, time.Now().Add(deadlineMS*time.Millisecond)); !o.OK {
					t.Failf("close answered with ok once the worker's output ended, before the deadline (HDR-052)", string(o.Raw()))
				}
			}},
		{ID: "CNF-HCANCEL-11", Level: must, Requirements: []string{"HDR-051", "HDR-052", "HDR-054", "TRN-094"}, Features: needs,
			Title: "a wait that passes the deadline answers Indeterminate and stops the worker's process group: a cancel never answered, a finish never answered, a close whose output never ends",
			Run: func(t *T) {
				overdue(t, "a cancel the worker never answers", func(w *fakeWorker) uint64 {
					id, _ := cancelRequest(t, w, "cancel-1")
					return id
				})
				overdue(t, "a finish the worker never answers", func(w *fakeWorker) uint64 {
					return t.sendCommand(map[string]any{"op": "finish", "request_id": "req-1"})
				})
				overdue(t, "a close whose output never ends", func(w *fakeWorker) uint64 {
					w.send(w.result("req-1", text("done"))) // no invocation stays active (TRN-043)
					if o := t.call(map[string]any{"op": "finish", "request_id": "req-1"}); !o.OK {
						t.Failf(`finish with the result "done"`, string(o.Raw()))
					}
					id := t.sendCommand(map[string]any{"op": "close"})
					w.recv(protocol.TypeCloseSession)
					return id // the fake worker keeps its output open
				})
			}},
	}
}

// overdue begins req-1 on a fresh cancellable session whose fake worker has a child, lets wait
// send the command whose wait the worker never ends, and expects Indeterminate within the
// deadline (and a margin), with the worker's whole process group gone (HDR-051).
func overdue(t *T, what string, wait func(w *fakeWorker) uint64) {
	t.RenewDeadline()
	w := cancellableSessionWith(t, []string{"--child"}, echoGrant())
	id := t.sendCommand(map[string]any{"op": "begin", "request_id": "req-1", "tool": echoTool, "payload": rawJSON(text("slow").AppendJSON(nil))})
	w.recv(protocol.TypeInvoke)
	if o := t.await(id); !o.OK {
		t.Failf("begin answered with ok (HDR-028)", string(o.Raw()))
	}
	start := time.Now()
	id = wait(w)
	o := t.awaitUntil(id, start.Add(deadlineMS*time.Millisecond+time.Second))
	if o.OK || o.Error != "Indeterminate" {
		t.Failf(`error "Indeterminate" once the deadline passed, for `+what+" (HDR-051)", string(o.Raw()))
	}
	t.Logf("%s: Indeterminate after %v", what, time.Since(start).Round(time.Millisecond))
	w.expectGone("the worker and its child gone after " + what + " passed the deadline (HDR-051)")
}
