package model

import (
	"sort"
	"strconv"
	"strings"
)

// This file models the host's multiplexed transport (spec chapter 22, sections 22.5 and
// 22.6): one cancellable ordinary invocation at a time, the cancellation orderings of its
// worker frames, and the fatal failures that stop it. It is written from the ordering table
// and the authorizer's rules, not from the implementation: it tracks request and cancellation
// ids, the call budget of one tool, and which results were accepted.

// Phases of the multiplexed transport model.
const (
	MuxIdle    = "Idle"    // no invocation is active
	MuxActive  = "A"       // an invocation is active, no cancellation awaits its disposition
	MuxCancel  = "AC"      // a cancel was sent; neither disposition nor result arrived
	MuxBuffer  = "ACR"     // a cancel was sent and the result arrived first (buffered)
	MuxClosing = "Closing" // close_session was sent
	MuxClosed  = "Closed"  // the stream ended after close_session
	MuxStopped = "Stopped" // a fatal failure or abandon stopped the transport
)

// Kinds of MuxStep.
const (
	MuxStepStart              = "start"               // host: start invocation RequestID
	MuxStepCancel             = "cancel"              // host: cancel invocation RequestID with CancellationID
	MuxStepClose              = "close"               // host: close the session
	MuxStepAbandon            = "abandon"             // host: abandon the transport
	MuxStepResult             = "result"              // worker: a result for RequestID
	MuxStepCancellationResult = "cancellation_result" // worker: a disposition (CancellationID, RequestID, Outcome)
	MuxStepOther              = "other"               // worker: a message of kind Message
	MuxStepTampered           = "tampered"            // worker: a frame whose tag does not verify
	MuxStepEnd                = "end"                 // worker: end of stream
)

// Cancellation outcomes.
const (
	MuxAcknowledged = "acknowledged"
	MuxTooLate      = "too_late"
	MuxUnsupported  = "unsupported"
)

// MuxStep is one input of the multiplexed transport model.
type MuxStep struct {
	Kind           string
	RequestID      string
	CancellationID string
	// Tool is the tool of a cancellation_result (the granted tool unless it is a mismatch).
	Tool    string
	Outcome string
	Message string
}

// MuxOutcome is what the model predicts for one step.
//
// Err is a command's refusal ("Busy", "NoActiveInvocation", "TargetMismatch",
// "CancellationPending", "Unavailable" or "Protocol:<variant>"); a refused command sends
// nothing and changes nothing. Sent is the message kind a command writes. Events are the
// resolutions, in order, written "invocation:completed:<request id>",
// "invocation:cancelled:<request id>", "cancellation:<outcome>", "close:ok", or
// "<target>:error:<error>" for a fatal error, where the error is "UnexpectedMessage:<detail>",
// "Protocol:<variant>" or "Abandoned".
type MuxOutcome struct {
	Err    string
	Sent   string
	Events []string
}

// Multiplex is the model state.
type Multiplex struct {
	Tool      string
	MaxCalls  int
	Phase     string
	active    string // request id of the active invocation
	cancelID  string // cancellation id awaiting its disposition
	calls     int
	reserved  map[string]bool // every id reserved by the host authorizer
	requested map[string]bool // targets with an authorized cancellation
	accepted  map[string]bool // request ids whose result was accepted
}

// NewMultiplex returns the model of a fresh transport whose manifest grants tool maxCalls
// calls.
func NewMultiplex(tool string, maxCalls int) *Multiplex {
	return &Multiplex{Tool: tool, MaxCalls: maxCalls, Phase: MuxIdle,
		reserved: map[string]bool{}, requested: map[string]bool{}, accepted: map[string]bool{}}
}

// Step applies one input and returns the predicted outcome.
func (m *Multiplex) Step(s MuxStep) MuxOutcome {
	switch s.Kind {
	case MuxStepStart:
		return m.start(s.RequestID)
	case MuxStepCancel:
		return m.cancel(s.CancellationID, s.RequestID)
	case MuxStepClose:
		return m.close()
	case MuxStepAbandon:
		if m.terminal() {
			return MuxOutcome{}
		}
		return m.fatal("Abandoned")
	}
	if m.terminal() {
		return MuxOutcome{} // frames after the end are ignored
	}
	switch s.Kind {
	case MuxStepResult:
		return m.result(s.RequestID)
	case MuxStepCancellationResult:
		return m.disposition(s)
	case MuxStepOther:
		return m.fatal("UnexpectedMessage:" + s.Message)
	case MuxStepTampered:
		return m.fatal("Protocol:InvalidAuthenticationTag")
	case MuxStepEnd:
		if m.Phase == MuxClosing {
			m.Phase = MuxClosed
			return MuxOutcome{Events: []string{"close:ok"}}
		}
		return m.fatal("UnexpectedMessage:unexpected end of worker stream")
	}
	panic("model: unknown multiplex step " + s.Kind)
}

func (m *Multiplex) terminal() bool { return m.Phase == MuxStopped || m.Phase == MuxClosed }

func (m *Multiplex) activeNow() bool {
	return m.Phase == MuxActive || m.Phase == MuxCancel || m.Phase == MuxBuffer
}

func (m *Multiplex) start(requestID string) MuxOutcome {
	switch {
	case m.terminal():
		return MuxOutcome{Err: "Unavailable"}
	case m.Phase != MuxIdle:
		return MuxOutcome{Err: "Busy"}
	case m.reserved[requestID]:
		return MuxOutcome{Err: "Protocol:DuplicateRequest"}
	case m.calls >= m.MaxCalls:
		return MuxOutcome{Err: "Protocol:CallBudgetExhausted"}
	}
	m.reserved[requestID] = true
	m.calls++
	m.Phase, m.active = MuxActive, requestID
	return MuxOutcome{Sent: "invoke"}
}

func (m *Multiplex) cancel(cancellationID, target string) MuxOutcome {
	switch {
	case m.terminal():
		return MuxOutcome{Err: "Unavailable"}
	case !m.activeNow():
		return MuxOutcome{Err: "NoActiveInvocation"}
	case target != m.active:
		return MuxOutcome{Err: "TargetMismatch"}
	case m.Phase != MuxActive:
		return MuxOutcome{Err: "CancellationPending"}
	case cancellationID == target:
		return MuxOutcome{Err: "Protocol:CancellationIdMatchesRequest"}
	case m.requested[target]:
		return MuxOutcome{Err: "Protocol:CancellationAlreadyRequested"}
	case m.reserved[cancellationID]:
		return MuxOutcome{Err: "Protocol:DuplicateRequest"}
	}
	m.reserved[cancellationID] = true
	m.requested[target] = true
	m.Phase, m.cancelID = MuxCancel, cancellationID
	return MuxOutcome{Sent: "cancel"}
}

func (m *Multiplex) close() MuxOutcome {
	switch {
	case m.terminal():
		return MuxOutcome{Err: "Unavailable"}
	case m.Phase != MuxIdle:
		return MuxOutcome{Err: "Busy"}
	}
	m.Phase = MuxClosing
	return MuxOutcome{Sent: "close_session"}
}

func (m *Multiplex) result(requestID string) MuxOutcome {
	switch {
	case !m.activeNow():
		return m.fatal("UnexpectedMessage:result")
	case requestID != m.active:
		return m.fatal("Protocol:RequestMismatch")
	case m.accepted[requestID]:
		return m.fatal("Protocol:DuplicateResult")
	}
	m.accepted[requestID] = true
	if m.Phase == MuxCancel {
		m.Phase = MuxBuffer // held until the matching too_late
		return MuxOutcome{}
	}
	m.Phase = MuxIdle
	return MuxOutcome{Events: []string{"invocation:completed:" + requestID}}
}

func (m *Multiplex) disposition(s MuxStep) MuxOutcome {
	switch {
	case m.Phase == MuxActive:
		return m.fatal("UnexpectedMessage:unsolicited cancellation_result")
	case !m.activeNow():
		return m.fatal("UnexpectedMessage:cancellation_result")
	case s.CancellationID != m.cancelID || s.RequestID != m.active || s.Tool != m.Tool:
		return m.fatal("Protocol:CancellationResultMismatch")
	}
	resulted := m.accepted[m.active]
	switch s.Outcome {
	case MuxAcknowledged:
		if resulted {
			return m.fatal("Protocol:CancellationAcknowledgedAfterResult")
		}
		id := m.active
		m.Phase = MuxIdle
		return MuxOutcome{Events: []string{"cancellation:acknowledged", "invocation:cancelled:" + id}}
	case MuxTooLate:
		if !resulted {
			return m.fatal("Protocol:CancellationTooLateBeforeResult")
		}
		id := m.active
		m.Phase = MuxIdle
		return MuxOutcome{Events: []string{"invocation:completed:" + id, "cancellation:too_late"}}
	default:
		if resulted {
			return m.fatal("Protocol:CancellationUnsupportedAfterResult")
		}
		m.Phase = MuxActive // still running; its one cancellation is spent
		return MuxOutcome{Events: []string{"cancellation:unsupported"}}
	}
}

// fatal stops the model and gives the error to every waiter of the current phase.
func (m *Multiplex) fatal(err string) MuxOutcome {
	var events []string
	switch m.Phase {
	case MuxActive:
		events = []string{"invocation:error:" + err}
	case MuxCancel, MuxBuffer:
		events = []string{"invocation:error:" + err, "cancellation:error:" + err}
	case MuxClosing:
		events = []string{"close:error:" + err}
	}
	m.Phase = MuxStopped
	return MuxOutcome{Events: events}
}

// Clone returns an independent copy of the model.
func (m *Multiplex) Clone() *Multiplex {
	c := *m
	c.reserved, c.requested, c.accepted = cloneSet(m.reserved), cloneSet(m.requested), cloneSet(m.accepted)
	return &c
}

// Key is a canonical encoding of the model's state.
func (m *Multiplex) Key() string {
	return m.Phase + "|" + m.active + "|" + m.cancelID + "|" + strconv.Itoa(m.calls) + "|" +
		setKey(m.reserved) + "|" + setKey(m.requested) + "|" + setKey(m.accepted)
}

// Active returns the request id of the active invocation and the id of the cancellation
// awaiting its disposition ("" when there is none).
func (m *Multiplex) Active() (requestID, cancellationID string) { return m.active, m.cancelID }

// Requested reports whether a cancellation was authorized for target.
func (m *Multiplex) Requested(target string) bool { return m.requested[target] }

func cloneSet(s map[string]bool) map[string]bool {
	c := make(map[string]bool, len(s))
	for k, v := range s {
		c[k] = v
	}
	return c
}

func setKey(s map[string]bool) string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}
