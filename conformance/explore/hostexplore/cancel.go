package hostexplore

import (
	"bytes"
	"fmt"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/driver"
	"github.com/splashv5/conform/conformance/fakeworker"
	"github.com/splashv5/conform/impl/protocol"
)

// closeDelay is how long after close_session the fake worker ends its output.
const closeDelay = 150 * time.Millisecond

// closeOutput ends the fake worker's standard output.
func (w *worker) closeOutput() {
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.enc.Encode(fakeworker.Relay{CloseOutput: true})
}

// pongResult is the worker's result for the invocation requestID.
func pongResult(sid, requestID string) protocol.ResultMessage {
	return protocol.ResultMessage{Result: protocol.ToolResult{ProtocolVersion: protocol.ProtocolVersion, SessionID: sid,
		RequestID: requestID, Payload: protocol.TextPayload("pong")}}
}

// cancel answers a cancel frame by the symbol's behaviour: acknowledged while the invocation
// runs, its result then too_late, or nothing; a cancel of a completed invocation is too_late
// (CAN-014 to CAN-016).
func (ex *exchangeState) cancel(w *worker, q protocol.WorkerCancellationRequest) *Violation {
	m := ex.m
	if ex.request != nil {
		return nil
	}
	ex.request = protocol.CancelMessage{Request: q}
	outcome := protocol.OutcomeTooLate
	switch ex.sym.How {
	case howSilent:
		ex.hostileDid = true
		return nil
	case howAck:
		if w.state.Active {
			outcome = protocol.OutcomeAcknowledged
			m.inv.cancelled = true
			w.state.Active, w.state.Target = false, false
		}
	case howTooLate:
		if w.state.Active {
			w.write(w.seal(pongResult(w.boot.SessionID, q.RequestID)))
			m.inv.resulted = true
			w.state.Active, w.state.Target = false, true
		}
	}
	answer := protocol.CancellationResultMessage{Result: protocol.WorkerCancellationResult{ProtocolVersion: protocol.ProtocolVersion,
		SessionID: w.boot.SessionID, CancellationID: q.CancellationID, RequestID: q.RequestID, Tool: q.Tool, Outcome: outcome}}
	ex.answer, ex.answeredAt = answer, time.Now()
	w.write(w.seal(answer))
	return nil
}

// finish plays the worker for a finish: the running invocation's result now, or never.
func (ex *exchangeState) finish() {
	m, w := ex.m, ex.m.w
	if w == nil || !w.state.Active || m.inv.cancelled || m.inv.resulted || !ex.healthy() {
		return
	}
	ex.request = protocol.InvokeMessage{}
	if ex.sym.How == howSilent {
		ex.hostileDid = true
		return
	}
	w.write(w.seal(pongResult(w.boot.SessionID, m.inv.id)))
	m.inv.resulted = true
	w.state.Active, w.state.Target = false, true
}

// healthy says that the current worker's session can still carry an exchange.
func (ex *exchangeState) healthy() bool {
	w := ex.m.w
	return w != nil && w.poisoned == "" && !w.ended && !w.inputEnded
}

// judgeFinish checks finish's outcome: the cancellation the worker acknowledged, or the
// result it sent (HDR-028); a finish whose worker never answers is judged like any wait.
func (ex *exchangeState) judgeFinish(o driver.Outcome, took time.Duration) *Violation {
	m := ex.m
	defer func() { m.inv.finished = true }()
	if ex.hostileDid {
		ex.answer = nil
		return ex.judgeHostile(o, took)
	}
	if !ex.healthy() && !m.inv.cancelled && !m.inv.resulted {
		return nil
	}
	switch {
	case m.inv.cancelled:
		if !o.OK || !o.Cancelled {
			return violation("cancel", `{"ok":true,"cancelled":true}: the worker acknowledged the cancel`, string(o.Raw()))
		}
	case m.inv.resulted:
		want := protocol.TextPayload("pong").AppendJSON(nil)
		if !o.OK || o.Cancelled || !bytes.Equal(o.Payload, want) {
			return violation("cancel", `{"ok":true,"payload":`+string(want)+`}: the worker sent the result`, string(o.Raw()))
		}
	}
	return nil
}

// judgeClose checks close on a healthy cancellable session with no invocation running: it
// sends close_session and answers only once the worker's output ended (HDR-023, HDR-052).
func (ex *exchangeState) judgeClose(o driver.Outcome, took time.Duration) *Violation {
	w := ex.m.w
	if ex.hung {
		// The output never ended: the close answers within the deadline and the worker's
		// whole group is stopped (HDR-052, HDR-045).
		w.poisoned = ex.sym.String()
		if o.OK {
			return violation("cancel", "an error outcome: the worker's output never ended after close_session", "ok "+conformance.Clip(string(o.Raw()), 200))
		}
		if deadline := ex.m.deadline(); took > deadline+ex.m.cfg.grace() {
			return violation("deadline", fmt.Sprintf("the close outcome within the exchange deadline (%v)", deadline), fmt.Sprintf("after %v", took.Round(time.Millisecond)))
		}
		if !w.gone(ex.m.cfg.grace()) {
			return violation("contained", "the worker's process group gone once close's wait passed the deadline", fmt.Sprintf("worker %d still runs", w.index))
		}
		return nil
	}
	if !ex.wasHealthy || w.state.Active || !o.OK {
		return nil
	}
	if ex.outputClosed.IsZero() {
		return violation("cancel", "close_session before the worker's input ends", ex.text(outcomeText(o)))
	}
	if ex.outcomeAt.Before(ex.outputClosed) {
		return violation("cancel", "the close outcome after the worker's output ended",
			"the outcome "+ex.outputClosed.Sub(ex.outcomeAt).Round(time.Millisecond).String()+" before it")
	}
	return nil
}
