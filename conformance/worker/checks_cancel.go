package worker

import (
	"fmt"
	"strconv"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/impl/protocol"
)

var cancelNeeds = []Need{NeedCancel}

// expectOutcome fails unless the cancellation outcome is want.
func (t *T) expectOutcome(want, got protocol.WorkerCancellationOutcome) {
	if want != got {
		t.Failf("outcome "+want.String(), "outcome "+got.String())
	}
}

// Bounds of the adapter's wait in CNF-CANCEL-12.
const (
	minFatalWait = 600 * time.Millisecond
	maxFatalWait = 4 * time.Second
)

// fatalWait is how long CNF-CANCEL-12 makes its uncooperative adapter wait, given the slowest
// of a few round trips to the worker just before: at least 600 ms and at least 20 round trips,
// so that a worker that exits at the fatal error without waiting cannot look as if it waited
// merely because the machine is loaded (an exit observed after the adapter's wait is only
// evidence of waiting when the wait is long against the worker's pace), and at most 4 s.
func fatalWait(slowestRoundTrip time.Duration) time.Duration {
	return min(max(minFatalWait, 20*slowestRoundTrip).Round(time.Millisecond), maxFatalWait)
}

// roundTrips invokes conf.slow.cancellable with 0 ms n times in a cancellable session and
// returns the slowest round trip, answer included.
func (w *Worker) roundTrips(n int) time.Duration {
	var slowest time.Duration
	for range n {
		start := time.Now()
		w.t.expectPayload("the answer", text("done 0"), w.invoke(toolCancellable, text("0")))
		slowest = max(slowest, time.Since(start))
	}
	return slowest
}

// whileRunning is the body of a check that starts conf.slow.cancellable for 3,000 ms in a
// cancellable session, lets send act while that invocation (target) runs, and expects the
// worker to exit with status code, for why.
func whileRunning(code int, why string, send func(w *Worker, target string)) func(*T) {
	return exits(code, why, (*T).cancellable, func(w *Worker) { send(w, w.sendInvoke(toolCancellable, text("3000"))) })
}

// CancelChecks returns the checks of area CANCEL: cooperative cancellation.
func CancelChecks() []*Check {
	return []*Check{
		&Check{
			ID: "CNF-CANCEL-01", Level: conformance.Must, Requirements: []string{"CAN-006", "CAN-016", "CAN-020", "PRF-016", "AUZ-019", "CAN-021"},
			Needs: cancelNeeds,
			Title: "a cancel of a running cooperative invocation is acknowledged, and no result ever follows",
			Run: func(t *T) {
				w := t.cancellable()
				target := w.sendInvoke(toolCancellable, text("3000"))
				c := w.cancelRequest(target, toolCancellable)
				start := time.Now()
				w.send(protocol.CancelMessage{Request: c})
				m := w.recv("cancellation_result acknowledged for " + c.CancellationID)
				cr, ok := m.(protocol.CancellationResultMessage)
				if !ok {
					t.Failf("cancellation_result acknowledged", "a "+string(m.Type())+" frame: "+conformance.Clip(string(m.AppendJSON(nil)), 200))
				}
				t.expectOutcome(protocol.OutcomeAcknowledged, cr.Result.Outcome)
				if d := time.Since(start); d > 2500*time.Millisecond {
					t.Failf("an acknowledgement well before the 3,000 ms wait ends", fmt.Sprintf("an acknowledgement after %v", d.Round(time.Millisecond)))
				}
				// Idle again: a new invocation runs, and only its own result arrives.
				next := w.sendInvoke(toolCancellable, text("0"))
				t.expectPayload("the next invocation's answer", text("done 0"), w.expectResult(next))
				w.closeSession()
				w.expectExit(exitClean, "close_session in an idle cancellable session")
			},
		},
		&Check{
			ID: "CNF-CANCEL-02", Level: conformance.Must, Requirements: []string{"CAN-015", "PRF-017", "AUZ-019", "CAN-021"},
			Needs: cancelNeeds,
			Title: "a cancel that loses the race gets the result first, then too_late",
			Run: func(t *T) {
				w := t.cancellable()
				target := w.sendInvoke(toolUncooperative, text("300"))
				c := w.cancelRequest(target, toolUncooperative)
				w.send(protocol.CancelMessage{Request: c})
				m := w.recv("the result of " + target + " before any cancellation_result")
				res, ok := m.(protocol.ResultMessage)
				if !ok || res.Result.RequestID != target {
					t.Failf("the result of "+target+" first", "a "+string(m.Type())+" frame: "+conformance.Clip(string(m.AppendJSON(nil)), 200))
				}
				t.expectPayload("the result", text("done 300"), res.Result.Payload)
				t.expectOutcome(protocol.OutcomeTooLate, w.expectCancellationResult(c))
				w.closeSession()
				w.expectExit(exitClean, "close_session after the too_late outcome")
			},
		},
		&Check{
			ID: "CNF-CANCEL-03", Unreachable: unreachableAcceptance, Level: conformance.Must, Requirements: []string{"CAN-007", "AUZ-017", "AUZ-019"},
			Needs: cancelNeeds,
			Title: "a cancel of an invocation that already answered is answered too_late",
			Run: func(t *T) {
				w := t.cancellable()
				target := w.sendInvoke(toolCancellable, text("0"))
				w.expectResult(target)
				c := w.cancelRequest(target, toolCancellable)
				w.send(protocol.CancelMessage{Request: c})
				t.expectOutcome(protocol.OutcomeTooLate, w.expectCancellationResult(c))
				w.closeSession()
				w.expectExit(exitClean, "close_session")
			},
		},
		&Check{
			ID: "CNF-CANCEL-04", Level: conformance.Must, Requirements: []string{"CAN-012", "AUZ-016", "CAN-007"},
			Needs: cancelNeeds,
			Title: "a second cancel of the same invocation is refused (status 5)",
			Run: func(t *T) {
				w := t.cancellable()
				target := w.sendInvoke(toolCancellable, text("0"))
				w.expectResult(target)
				c := w.cancelRequest(target, toolCancellable)
				w.send(protocol.CancelMessage{Request: c})
				w.expectCancellationResult(c)
				w.send(protocol.CancelMessage{Request: w.cancelRequest(target, toolCancellable)})
				w.expectExit(exitRejected, "a second cancel for "+target)
			},
		},
		&Check{
			ID: "CNF-CANCEL-05", Level: conformance.Must, Requirements: []string{"CAN-006", "AUZ-015", "CAN-019"},
			Needs: cancelNeeds,
			Title: "a cancel naming the wrong tool for the running invocation is refused (status 5)",
			Run: whileRunning(exitRejected, "a cancel whose tool differs from the running invocation's", func(w *Worker, target string) {
				w.send(protocol.CancelMessage{Request: w.cancelRequest(target, toolUncooperative)})
			}),
		},
		&Check{
			ID: "CNF-CANCEL-06", Level: conformance.Must, Requirements: []string{"CAN-022", "WRK-022"},
			Title: "a cancel in a baseline (non-cancellable) session is an unexpected message (status 5)",
			Run: exits(exitRejected, "a cancel in a baseline session", (*T).baseline, func(w *Worker) {
				target := w.sendInvoke(toolTextEcho, text("x"))
				w.expectResult(target)
				w.send(protocol.CancelMessage{Request: w.cancelRequest(target, toolTextEcho)})
			}),
		},
		&Check{
			ID: "CNF-CANCEL-07", Level: conformance.Must, Requirements: []string{"CAN-008"},
			Needs: cancelNeeds,
			Title: "a cancel before any invocation is refused (status 5)",
			Run: exits(exitRejected, "a cancel with no invocation to target", (*T).cancellable, func(w *Worker) {
				w.send(protocol.CancelMessage{Request: w.cancelRequest("req-none", toolCancellable)})
			}),
		},
		&Check{
			ID: "CNF-CANCEL-08", Unreachable: unreachableAcceptance, Level: conformance.Must, Requirements: []string{"CAN-009", "CAN-024", "WRK-092"},
			Needs: cancelNeeds,
			Title: "close_session in an idle cancellable session ends it cleanly (status 0, no frame)",
			Run: exits(exitClean, "close_session", (*T).cancellable, func(w *Worker) {
				w.expectResult(w.sendInvoke(toolCancellable, text("1")))
				w.closeSession()
			}),
		},
		&Check{
			ID: "CNF-CANCEL-09", Level: conformance.Must, Requirements: []string{"CAN-010", "CAN-019", "CAN-024"},
			Needs: cancelNeeds,
			Title: "close_session while an invocation runs is refused (status 5)",
			Run:   whileRunning(exitRejected, "close_session while an invocation runs", func(w *Worker, _ string) { w.closeSession() }),
		},
		&Check{
			ID: "CNF-CANCEL-10", Level: conformance.Must, Requirements: []string{"CAN-005", "CAN-002"},
			Needs: cancelNeeds,
			Title: "a second invoke while one runs is refused (status 5)",
			Run:   whileRunning(exitRejected, "an invoke while another invocation runs", func(w *Worker, _ string) { w.sendInvoke(toolCancellable, text("0")) }),
		},
		&Check{
			ID: "CNF-CANCEL-11", Level: conformance.Must, Requirements: []string{"CAN-022", "WRK-022"},
			Title: "close_session in a baseline session is an unexpected message (status 5)",
			Run: exits(exitRejected, "close_session in a baseline session", (*T).baseline, func(w *Worker) {
				w.closeSession()
			}),
		},
		&Check{
			ID: "CNF-CANCEL-12", Level: conformance.Must, Requirements: []string{"CAN-019", "CAN-024", "CAN-013"},
			Needs: cancelNeeds, Timeout: 6*time.Second + maxFatalWait,
			Title: "a fatal error while an uncooperative adapter runs ends the worker only after the adapter returned",
			Run: func(t *T) {
				w := t.cancellable()
				wait := fatalWait(w.roundTrips(3))
				ms := strconv.FormatInt(wait.Milliseconds(), 10)
				start := time.Now()
				w.sendInvoke(toolUncooperative, text(ms))
				w.writeLine([]byte("garbage"))
				w.expectExitNotBefore(exitTransport, "a garbage line while conf.slow.uncooperative waits "+ms+" ms", start, wait)
			},
		},
		&Check{
			ID: "CNF-CANCEL-13", Level: conformance.Must, Requirements: []string{"MSG-015", "AUZ-015", "CAN-013"},
			Needs: cancelNeeds,
			Title: "a cancel whose cancellation id equals its target id is rejected (status 4: it does not decode)",
			Run: whileRunning(exitTransport, "a cancel whose cancellation id is the target's request id", func(w *Worker, target string) {
				c := w.cancelRequest(target, toolCancellable)
				c.CancellationID = target
				w.writeLine(w.forge(w.host.NextOutgoing(), protocol.CancelMessage{Request: c}))
			}),
		},
		&Check{
			ID: "CNF-CANCEL-14", Level: conformance.Must, Requirements: []string{"CAN-023", "CAN-011"},
			Needs: []Need{NeedCancel, NeedDurable},
			Title: "a durable dispatch in a cancellable session is an unexpected message (status 5)",
			Run: exits(exitRejected, "a dispatch_operation in a cancellable session", (*T).cancellable, func(w *Worker) {
				w.sendDispatch(toolCancellable, "op-1", text("0"))
			}),
		},
		&Check{
			ID: "CNF-CANCEL-15", Level: conformance.Must, Requirements: []string{"CAN-013", "WRK-092", "CAN-019"},
			Needs: cancelNeeds,
			Title: "end of input while an invocation runs is a transport failure (status 4)",
			Run:   whileRunning(exitTransport, "end of input while an invocation runs", func(w *Worker, _ string) { w.closeInput() }),
		},
		&Check{
			ID: "CNF-CANCEL-16", Level: conformance.Must, Requirements: []string{"CAN-018", "PRF-016"},
			Needs: cancelNeeds,
			Title: "an adapter error in a cancellable session is never answered (status 6)",
			Run: exits(exitAdapter, `the slow-tool input "soon"`, (*T).cancellable, func(w *Worker) {
				w.sendInvoke(toolCancellable, text("soon"))
			}),
		},
		&Check{
			ID: "CNF-CANCEL-17", Level: conformance.Must, Requirements: []string{"CAN-014", "AUZ-021"},
			Needs: cancelNeeds,
			Title: "an output over max_output_bytes in a cancellable session is never sent (status 6)",
			Run: exits(exitAdapter, `the answer "done 0" (6 bytes) under max_output_bytes 5`, func(t *T) *Worker { return t.session(limitedGrant(toolCancellable, protocol.FormatText, 10, 64, 5)) }, func(w *Worker) {
				w.sendInvoke(toolCancellable, text("0"))
			}),
		},
		&Check{
			ID: "CNF-CANCEL-18", Level: conformance.Must, Requirements: []string{"CAN-006", "AUZ-015", "AUZ-005"},
			Needs: cancelNeeds,
			Title: "a cancel whose cancellation id was already used is refused (status 5)",
			Run: func(t *T) {
				w := t.cancellable()
				first := w.sendInvoke(toolCancellable, text("0"))
				w.expectResult(first)
				target := w.sendInvoke(toolCancellable, text("3000"))
				c := w.cancelRequest(target, toolCancellable)
				c.CancellationID = first
				w.send(protocol.CancelMessage{Request: c})
				w.expectExit(exitRejected, "a cancel whose cancellation id reuses "+first)
			},
		},
		&Check{
			ID: "CNF-CANCEL-19", Unreachable: unreachableAcceptance, Level: conformance.Must, Requirements: []string{"CAN-001", "CAN-023"},
			Needs: cancelNeeds,
			Title: "a session granting only cancellable tools runs the cancellable driver (close_session accepted)",
			Run: exits(exitClean, "close_session right after opening", func(t *T) *Worker { return t.session(textGrant(toolCancellable)) }, func(w *Worker) {
				w.expectRunning(50*time.Millisecond, "an open session waiting for input")
				w.closeSession()
			}),
		},
		&Check{
			ID: "CNF-CANCEL-20", Level: conformance.Must, Requirements: []string{"MSG-015", "MSG-021", "ENC-044"},
			Needs: cancelNeeds,
			Title: "a cancel with a member beyond its five fields is rejected (status 4: the structure denies unknown fields)",
			Run: whileRunning(exitTransport, "a cancel with the unknown member x_extra", func(w *Worker, target string) {
				c := w.cancelRequest(target, toolCancellable)
				w.writeLine(w.respell(protocol.CancelMessage{Request: c}, `"tool":`, `"x_extra":true,"tool":`))
			}),
		},
		&Check{
			ID: "CNF-CANCEL-21", Level: conformance.Must, Requirements: []string{"AUZ-005", "AUZ-006", "AUZ-015"},
			Needs: cancelNeeds,
			// 1,024 round trips, one at a time (a cancellable session runs one adapter call at a
			// time, CAN-002): about 0.2 s on a quiet machine, many seconds under heavy load.
			Timeout: 25 * time.Second,
			Title:   "a cancellation id takes an identity slot: after an invoke took the 1,024th, a cancel is refused (status 5)",
			Run: exits(exitRejected, "a cancel after the invoke that took identity 1,024", func(t *T) *Worker {
				return t.session(limitedGrant(toolCancellable, protocol.FormatText, 2000, 64, 64), textGrant(toolUncooperative))
			}, func(w *Worker) {
				for i := 1; i < 1024; i++ {
					w.expectResult(w.sendInvoke(toolCancellable, text("0")))
				}
				target := w.sendInvoke(toolCancellable, text("3000"))
				w.send(protocol.CancelMessage{Request: w.cancelRequest(target, toolCancellable)})
			}),
		},
		&Check{
			ID: "CNF-CANCEL-22", Level: conformance.Must, Requirements: []string{"CAN-006", "FRM-014", "WRK-091"},
			Needs: cancelNeeds,
			Title: "a cancel whose tag does not verify is never acted on: no acknowledgement, no frame, status 4",
			Run: whileRunning(exitTransport, "a cancel with one tag digit changed while conf.slow.cancellable runs", func(w *Worker, target string) {
				w.writeLine(flipTagDigit(w.seal(protocol.CancelMessage{Request: w.cancelRequest(target, toolCancellable)})))
			}),
		},
	}
}
