package transport

import (
	"context"
	"strconv"

	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/protocol"
)

// ExternalBinding binds one claimed external operation of the host runtime to one invocation
// on a Multiplexed transport (TRN-070 to TRN-075). The runtime's opaque operation id and the
// external input stay on the host: the worker sees only the invocation's request id, tool and
// payload, and a cancel repeats only the request id and tool. Only an authenticated, positive
// acknowledgement from the worker is applied as a confirmed cancellation.
//
// Call Runtime.RequestExternalCancellation first and pass the request it returns to
// RequestCancellation, which refuses a request the runtime did not issue; the binding itself never changes the runtime's state except in
// ApplyToRuntime. It is used by one goroutine at a time.
type ExternalBinding struct {
	id             host.OperationID
	name           string
	callIndex      int
	attempt        uint32
	idempotencyKey string
	pending        *PendingInvocation
	cancellation   *PendingCancellation
	cancelSent     bool
	terminal       bool
}

// preparedBinding is an external invocation converted to its worker invocation, not yet
// started.
type preparedBinding struct {
	id             host.OperationID
	name           string
	callIndex      int
	attempt        uint32
	idempotencyKey string
	worker         protocol.ToolInvocation
}

// prepareBinding builds the worker invocation of inv: ErrExternal when the runtime cannot
// produce its worker payload, ErrProtocol for an invalid invocation header.
func prepareBinding(sessionID string, inv host.Invocation, requestID string) (preparedBinding, error) {
	payload, err := inv.WorkerPayload()
	if err != nil {
		return preparedBinding{}, &Error{Kind: ErrExternal, Err: err}
	}
	w, err := protocol.NewToolInvocation(sessionID, requestID, inv.Name, payload)
	if err != nil {
		return preparedBinding{}, &Error{Kind: ErrProtocol, Err: err}
	}
	return preparedBinding{id: inv.ID, name: inv.Name, callIndex: inv.CallIndex, attempt: inv.Attempt,
		idempotencyKey: inv.IdempotencyKey, worker: w}, nil
}

// dispatch starts the prepared invocation; an error is the transport's own.
func (p preparedBinding) dispatch(t *Multiplexed) (*ExternalBinding, error) {
	pending, err := t.Start(p.worker)
	if err != nil {
		return nil, err
	}
	return &ExternalBinding{id: p.id, name: p.name, callIndex: p.callIndex, attempt: p.attempt,
		idempotencyKey: p.idempotencyKey, pending: pending}, nil
}

// StartExternalBinding starts the claimed external invocation inv on t under requestID
// (TRN-070). Errors: ErrExternal (no valid worker payload), ErrProtocol (invalid header),
// ErrTransport wrapping the transport's refusal or failure.
func StartExternalBinding(t *Multiplexed, inv host.Invocation, requestID string) (*ExternalBinding, error) {
	p, err := prepareBinding(t.SessionID(), inv, requestID)
	if err != nil {
		return nil, err
	}
	b, err := p.dispatch(t)
	if err != nil {
		return nil, &Error{Kind: ErrTransport, Err: err}
	}
	return b, nil
}

// ExternalID returns the bound runtime operation id.
func (b *ExternalBinding) ExternalID() host.OperationID { return b.id }

// RequestID returns the worker request id of the bound invocation.
func (b *ExternalBinding) RequestID() string { return b.pending.RequestID() }

// RequestCancellation sends the one cancellation of the bound invocation, identified towards
// the worker by cancellationID, after checking that req is the runtime's cancellation request
// for exactly this operation (TRN-072). Checks, in order: ErrAlreadyTerminal; req's id, tool
// name, call index, attempt and idempotency key all equal the bound invocation's
// (ErrCancellationBindingMismatch); req was issued by Runtime.RequestExternalCancellation, so
// the runtime already records the cancellation request (ErrCancellationNotRequested); no
// cancellation was sent through this binding before (ErrCancellationAlreadyRequested); then
// ErrTransport wrapping the transport's refusal.
func (b *ExternalBinding) RequestCancellation(req host.CancellationRequest, cancellationID string) error {
	if b.terminal {
		return &Error{Kind: ErrAlreadyTerminal}
	}
	if req.ID != b.id || req.Name != b.name || req.CallIndex != b.callIndex || req.Attempt != b.attempt ||
		req.IdempotencyKey != b.idempotencyKey {
		return &Error{Kind: ErrCancellationBindingMismatch}
	}
	if !req.Issued() {
		return &Error{Kind: ErrCancellationNotRequested}
	}
	if b.cancelSent {
		return &Error{Kind: ErrCancellationAlreadyRequested}
	}
	c, err := b.pending.RequestCancellation(cancellationID)
	if err != nil {
		return &Error{Kind: ErrTransport, Err: err}
	}
	b.cancellation, b.cancelSent = c, true
	return nil
}

// ExternalEventKind names one observation of an ExternalBinding.
type ExternalEventKind uint8

// The external event kinds.
const (
	// ExternalPending: nothing new yet.
	ExternalPending ExternalEventKind = iota + 1
	// ExternalCancellationTooLate: the worker answered the cancellation with too_late. The
	// binding delivers the completed result before this disposition, so a poller sees
	// ExternalCompleted first and this kind is not normally observed.
	ExternalCancellationTooLate
	// ExternalCancellationUnsupported: the worker cannot stop the invocation cooperatively;
	// it stays active and may still complete.
	ExternalCancellationUnsupported
	// ExternalCompleted: the worker's validated result (terminal).
	ExternalCompleted
	// ExternalCancelled: the worker's authenticated acknowledgement (terminal).
	ExternalCancelled
)

// String returns the reference variant name.
func (k ExternalEventKind) String() string {
	switch k {
	case ExternalPending:
		return "Pending"
	case ExternalCancellationTooLate:
		return "CancellationTooLate"
	case ExternalCancellationUnsupported:
		return "CancellationUnsupported"
	case ExternalCompleted:
		return "Completed"
	case ExternalCancelled:
		return "Cancelled"
	}
	return "ExternalEventKind(" + strconv.Itoa(int(k)) + ")"
}

// ExternalEvent is one observation of an ExternalBinding. ID is set for the terminal kinds;
// Output (the result as text, a JSON result in canonical form with sorted keys) for
// ExternalCompleted; Acknowledgement for ExternalCancelled.
type ExternalEvent struct {
	Kind            ExternalEventKind
	ID              host.OperationID
	Output          string
	Acknowledgement protocol.WorkerCancellationResult
}

// Terminal reports whether the event ends the binding.
func (e ExternalEvent) Terminal() bool {
	return e.Kind == ExternalCompleted || e.Kind == ExternalCancelled
}

// observation is what poll found before it is turned into an event.
type observation struct {
	kind    ExternalEventKind // ExternalPending, ...TooLate, ...Unsupported, or 0 for terminal
	outcome InvocationOutcome
}

// observe checks the invocation before the cancellation disposition (TRN-073). An error is
// the transport's.
func (b *ExternalBinding) observe() (observation, error) {
	if b.terminal {
		return observation{}, &Error{Kind: ErrExternalBindingTerminal}
	}
	if outcome, ok, err := b.pending.TryWait(); ok {
		if err != nil {
			return observation{}, err
		}
		return observation{outcome: outcome}, nil
	}
	if c := b.cancellation; c != nil {
		if res, ok, err := c.TryWait(); ok {
			if err != nil {
				return observation{}, err
			}
			b.cancellation = nil
			switch res.Outcome {
			case protocol.OutcomeAcknowledged:
				return observation{outcome: InvocationOutcome{Cancelled: true, Acknowledgement: res}}, nil
			case protocol.OutcomeTooLate:
				return observation{kind: ExternalCancellationTooLate}, nil
			default:
				return observation{kind: ExternalCancellationUnsupported}, nil
			}
		}
	}
	return observation{kind: ExternalPending}, nil
}

// event turns an observation into an event; a terminal observation makes the binding terminal.
func (b *ExternalBinding) event(o observation) (ExternalEvent, error) {
	if o.kind != 0 {
		return ExternalEvent{Kind: o.kind}, nil
	}
	b.terminal = true
	if o.outcome.Cancelled {
		if o.outcome.Acknowledgement.Outcome != protocol.OutcomeAcknowledged {
			return ExternalEvent{}, &Error{Kind: ErrInvalidCancelledOutcome}
		}
		return ExternalEvent{Kind: ExternalCancelled, ID: b.id, Acknowledgement: o.outcome.Acknowledgement}, nil
	}
	p := o.outcome.Result.Payload
	output := p.Text
	if p.Format == protocol.FormatJSON {
		output = string(p.JSON.JSON())
	}
	return ExternalEvent{Kind: ExternalCompleted, ID: b.id, Output: output}, nil
}

// PollEvent returns at most one new observation without blocking and without touching the
// runtime (TRN-073). Errors: ErrTransport, wrapping ErrExternalBindingTerminal after the
// terminal event or the transport's failure; ErrInvalidCancelledOutcome.
func (b *ExternalBinding) PollEvent() (ExternalEvent, error) {
	o, err := b.observe()
	if err != nil {
		return ExternalEvent{}, &Error{Kind: ErrTransport, Err: err}
	}
	return b.event(o)
}

// WaitEvent blocks until PollEvent has something other than ExternalPending, or ctx ends.
func (b *ExternalBinding) WaitEvent(ctx context.Context) (ExternalEvent, error) {
	for {
		ev, err := b.PollEvent()
		if err != nil || ev.Kind != ExternalPending {
			return ev, err
		}
		if err := b.Wait(ctx); err != nil {
			return ExternalEvent{}, err
		}
	}
}

// Wait blocks until the invocation or its pending cancellation has resolved, so that the next
// poll has something to report, or until ctx ends (returning its error).
func (b *ExternalBinding) Wait(ctx context.Context) error {
	var cancelDone <-chan struct{}
	if b.cancellation != nil {
		cancelDone = b.cancellation.Done()
	}
	select {
	case <-b.pending.Done():
	case <-cancelDone:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// Poll is PollEvent followed by ApplyToRuntime.
func (b *ExternalBinding) Poll(rt *host.Runtime) (ExternalPoll, error) {
	ev, err := b.PollEvent()
	if err != nil {
		return ExternalPoll{}, err
	}
	return ApplyToRuntime(ev, rt)
}

// ExternalPoll is an event after it was applied to a runtime: Settlement is the runtime's
// answer for the terminal kinds.
type ExternalPoll struct {
	Kind       ExternalEventKind
	Settlement host.Settlement
}

// ApplyToRuntime applies ev to rt (TRN-074): a completion is CompleteExternal with the output;
// an acknowledgement is ConfirmExternalCancellation, and only an acknowledged disposition is
// accepted (ErrInvalidCancelledOutcome otherwise). The other kinds change nothing. A refusal by
// the runtime is ErrExternal; confirming fails there when the host skipped
// RequestExternalCancellation.
func ApplyToRuntime(ev ExternalEvent, rt *host.Runtime) (ExternalPoll, error) {
	switch ev.Kind {
	case ExternalCompleted:
		s, err := rt.CompleteExternal(ev.ID, host.OK(ev.Output))
		if err != nil {
			return ExternalPoll{}, &Error{Kind: ErrExternal, Err: err}
		}
		return ExternalPoll{Kind: ev.Kind, Settlement: s}, nil
	case ExternalCancelled:
		if ev.Acknowledgement.Outcome != protocol.OutcomeAcknowledged {
			return ExternalPoll{}, &Error{Kind: ErrInvalidCancelledOutcome}
		}
		s, err := rt.ConfirmExternalCancellation(ev.ID)
		if err != nil {
			return ExternalPoll{}, &Error{Kind: ErrExternal, Err: err}
		}
		return ExternalPoll{Kind: ev.Kind, Settlement: s}, nil
	}
	return ExternalPoll{Kind: ev.Kind}, nil
}
