package transport

import (
	"errors"
	"strconv"

	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/protocol"
)

// Phase is the state of a Coordinator.
type Phase uint8

// The coordinator phases. The first five are the states of the ordering table of chapter 22
// (section 22.6): Idle, A, AC, ACR and Closing.
const (
	// PhaseIdle: no invocation is active.
	PhaseIdle Phase = iota + 1
	// PhaseActive (A): one invocation is active and no cancellation awaits its disposition.
	// After an unsupported disposition the invocation is back in this phase, but a second
	// cancellation is refused by the authorizer.
	PhaseActive
	// PhaseCancelling (AC): a cancel was sent; neither its disposition nor a result arrived.
	PhaseCancelling
	// PhaseResultBuffered (ACR): a cancel was sent and the result arrived first; the result is
	// held until the matching too_late disposition validates.
	PhaseResultBuffered
	// PhaseClosing: close_session was sent; only the end of the worker's stream may follow.
	PhaseClosing
	// PhaseClosed: the worker's stream ended after close_session. Terminal.
	PhaseClosed
	// PhaseStopped: a fatal failure or Abandon stopped the coordinator. Terminal.
	PhaseStopped
)

var phaseNames = [...]string{"", "Idle", "Active", "Cancelling", "ResultBuffered", "Closing", "Closed", "Stopped"}

// String returns the phase's name.
func (p Phase) String() string {
	if int(p) < len(phaseNames) && p != 0 {
		return phaseNames[p]
	}
	return "Phase(" + strconv.Itoa(int(p)) + ")"
}

// InvocationOutcome is the terminal outcome of one multiplexed invocation: its authenticated
// result, or the authenticated acknowledgement that the worker stopped it.
type InvocationOutcome struct {
	// Cancelled is true when the worker acknowledged the cancellation; Acknowledgement then
	// holds the acknowledged disposition and no result will ever arrive.
	Cancelled       bool
	Result          protocol.ToolResult
	Acknowledgement protocol.WorkerCancellationResult
}

// EventTarget names the waiter an Event resolves.
type EventTarget uint8

// The event targets.
const (
	// TargetInvocation: the pending invocation.
	TargetInvocation EventTarget = iota + 1
	// TargetCancellation: the pending cancellation.
	TargetCancellation
	// TargetClose: the pending close.
	TargetClose
)

// Event resolves one waiter of the coordinator: with Err for a failure, otherwise with
// Outcome (TargetInvocation), Disposition (TargetCancellation) or nothing (TargetClose).
type Event struct {
	Target      EventTarget
	Outcome     InvocationOutcome
	Disposition protocol.WorkerCancellationResult
	Err         error
}

// Output is what one step of a Coordinator asks of its edge.
type Output struct {
	// Line is a sealed frame line (without newline) to write to the worker, or nil.
	Line []byte
	// Events resolve waiters, in order.
	Events []Event
	// ReadNext grants the reader its next read: it is true after a received frame was
	// handled and the coordinator still expects frames.
	ReadNext bool
}

// Coordinator is the pure state machine of the multiplexed transport (TRN-040 to TRN-062). Its
// inputs are host commands (Start, Cancel, Close, Abandon), frames and read failures from the
// worker's stream, and write failures; its outputs are sealed lines to write and events that
// resolve waiters. It performs no I/O, starts no goroutine and reads no clock. It owns the
// sealing and the opening half of the host authenticator and a session authorizer of its own,
// so the frames it emits and accepts are exactly those the ordering table allows.
//
// Any failure the table calls fatal moves it to PhaseStopped: every waiter receives the same
// error and every later command fails with ErrUnavailable. It is not safe for concurrent use.
type Coordinator struct {
	authz     *authorizer.SessionAuthorizer
	sealer    *protocol.Sealer
	opener    *protocol.Opener
	sessionID string
	phase     Phase
	active    authorizer.AuthorizedInvocation
	slot      bool // an identity slot was free for the active invocation's cancellation
	cancel    authorizer.AuthorizedWorkerCancellation
	buffered  protocol.ToolResult
	failure   *Error
}

// NewCoordinator returns a coordinator for manifest's session and the open_session line it
// must send first, as sequence 1 (TRN-040). Checks, in order: the manifest is valid
// (ErrProtocol); auth is the host's (ErrRequiresHostAuthenticator); auth names the manifest's
// session (ErrSessionMismatch). The coordinator takes over auth, which must not be used
// afterwards.
func NewCoordinator(manifest protocol.CapabilityManifest, auth *protocol.Authenticator) (*Coordinator, []byte, error) {
	if err := manifest.Validate(); err != nil {
		return nil, nil, &Error{Kind: ErrProtocol, Err: err}
	}
	if auth.Role() != protocol.RoleHost {
		return nil, nil, &Error{Kind: ErrRequiresHostAuthenticator}
	}
	if auth.SessionID() != manifest.SessionID {
		return nil, nil, &Error{Kind: ErrSessionMismatch, Expected: manifest.SessionID, Actual: auth.SessionID()}
	}
	authz, err := authorizer.New(manifest)
	if err != nil {
		return nil, nil, &Error{Kind: ErrProtocol, Err: err}
	}
	sealer, opener := auth.Split()
	_, line, err := sealer.Seal(protocol.OpenSessionMessage{Manifest: manifest})
	if err != nil {
		return nil, nil, &Error{Kind: ErrProtocol, Err: err}
	}
	return &Coordinator{authz: authz, sealer: sealer, opener: opener, sessionID: manifest.SessionID, phase: PhaseIdle}, line, nil
}

// Phase returns the current phase.
func (c *Coordinator) Phase() Phase { return c.phase }

// SessionID returns the session id.
func (c *Coordinator) SessionID() string { return c.sessionID }

// Mode returns the number mode in which worker frames must be decoded.
func (c *Coordinator) Mode() canonjson.Mode { return c.opener.Mode() }

// Failure returns the error that stopped the coordinator, or nil.
func (c *Coordinator) Failure() error {
	if c.failure == nil {
		return nil
	}
	return c.failure
}

// Active returns the request id and tool of the active invocation, if there is one.
func (c *Coordinator) Active() (requestID, tool string, ok bool) {
	switch c.phase {
	case PhaseActive, PhaseCancelling, PhaseResultBuffered:
		inv := c.active.Invocation()
		return inv.RequestID, inv.Tool, true
	}
	return "", "", false
}

// Start authorizes inv and returns the invoke line to write (TRN-041). Refusals, which change
// nothing and are not fatal: ErrUnavailable when stopped or closed; ErrBusy while an invocation
// is active or the session is closing; ErrProtocol when host authorization fails. A failure to
// seal the authorized invoke is fatal and returned as the stopping error.
//
// Before authorizing, Start notes whether one of the session's identity slots stays free for
// the invocation's cancellation once the invoke has taken its own (TRN-112); when none does the
// invocation still runs, but Cancel refuses it with ErrCancelSlotUnavailable.
func (c *Coordinator) Start(inv protocol.ToolInvocation) (Output, error) {
	switch c.phase {
	case PhaseStopped, PhaseClosed:
		return Output{}, &Error{Kind: ErrUnavailable}
	case PhaseActive, PhaseCancelling, PhaseResultBuffered, PhaseClosing:
		return Output{}, &Error{Kind: ErrBusy}
	}
	slot := c.authz.ReservedRequestIDs()+1 < protocol.MaxSessionRequestIDs
	authorized, err := c.authz.Authorize(inv)
	if err != nil {
		return Output{}, &Error{Kind: ErrProtocol, Err: err}
	}
	_, line, err := c.sealer.Seal(protocol.InvokeMessage{Invocation: authorized.Invocation()})
	if err != nil {
		out := c.fatal(&Error{Kind: ErrProtocol, Err: err})
		return out, c.failure
	}
	c.phase, c.active, c.slot = PhaseActive, authorized, slot
	return Output{Line: line}, nil
}

// CancelSlotKept reports whether the active invocation was started with an identity slot free
// for its cancellation (TRN-112). It is false when nothing is active.
func (c *Coordinator) CancelSlotKept() bool {
	switch c.phase {
	case PhaseActive, PhaseCancelling, PhaseResultBuffered:
		return c.slot
	}
	return false
}

// Cancel authorizes a cancellation of the invocation (requestID, tool) with id cancellationID
// and returns the cancel line to write (TRN-042). Refusals, in order, which change nothing and
// are not fatal: ErrUnavailable when stopped or closed; ErrNoActiveInvocation; ErrTargetMismatch
// when the active invocation is another; ErrCancellationPending while a cancellation awaits
// its disposition or a result is buffered; ErrCancelSlotUnavailable when the invocation was
// started without a free identity slot for its cancellation (TRN-112); ErrProtocol for an
// invalid request or a failed host authorization (a second cancellation after unsupported fails
// here with CancellationAlreadyRequested). A failure to seal is fatal.
func (c *Coordinator) Cancel(cancellationID, requestID, tool string) (Output, error) {
	switch c.phase {
	case PhaseStopped, PhaseClosed:
		return Output{}, &Error{Kind: ErrUnavailable}
	case PhaseIdle, PhaseClosing:
		return Output{}, &Error{Kind: ErrNoActiveInvocation}
	}
	if inv := c.active.Invocation(); inv.RequestID != requestID || inv.Tool != tool {
		return Output{}, &Error{Kind: ErrTargetMismatch}
	}
	if c.phase != PhaseActive {
		return Output{}, &Error{Kind: ErrCancellationPending}
	}
	if !c.slot {
		return Output{}, &Error{Kind: ErrCancelSlotUnavailable}
	}
	req, err := protocol.NewWorkerCancellationRequest(c.sessionID, cancellationID, requestID, tool)
	if err != nil {
		return Output{}, &Error{Kind: ErrProtocol, Err: err}
	}
	authorized, err := c.authz.AuthorizeCancellation(req, c.active)
	if err != nil {
		return Output{}, &Error{Kind: ErrProtocol, Err: err}
	}
	_, line, err := c.sealer.Seal(protocol.CancelMessage{Request: req})
	if err != nil {
		out := c.fatal(&Error{Kind: ErrProtocol, Err: err})
		return out, c.failure
	}
	c.phase, c.cancel = PhaseCancelling, authorized
	return Output{Line: line}, nil
}

// Close returns the close_session line to write and enters PhaseClosing (TRN-043); the close
// succeeds when the worker's stream then ends. Refusals, which change nothing: ErrUnavailable
// when stopped or closed; ErrBusy unless idle. A failure to seal is fatal.
func (c *Coordinator) Close() (Output, error) {
	switch c.phase {
	case PhaseStopped, PhaseClosed:
		return Output{}, &Error{Kind: ErrUnavailable}
	case PhaseIdle:
	default:
		return Output{}, &Error{Kind: ErrBusy}
	}
	_, line, err := c.sealer.Seal(protocol.CloseSessionMessage{ProtocolVersion: protocol.ProtocolVersion, Session: c.sessionID})
	if err != nil {
		out := c.fatal(&Error{Kind: ErrProtocol, Err: err})
		return out, c.failure
	}
	c.phase = PhaseClosing
	return Output{Line: line}, nil
}

// Abandon stops the coordinator: every waiter receives ErrAbandoned (TRN-044). It does nothing
// once the coordinator is stopped or closed.
func (c *Coordinator) Abandon() Output {
	if c.terminal() {
		return Output{}
	}
	return c.fatal(&Error{Kind: ErrAbandoned})
}

// WriteFailed reports that writing the line of the last command failed with err; this is
// fatal (ErrIO for an I/O failure).
func (c *Coordinator) WriteFailed(err error) Output {
	if c.terminal() {
		return Output{}
	}
	return c.fatal(streamError(err))
}

// Receive handles one decoded frame from the worker (TRN-050 to TRN-058): it authenticates the
// frame as the next worker frame, then applies the ordering table. A frame that arrives after
// the coordinator stopped or closed is ignored.
func (c *Coordinator) Receive(f protocol.Frame) Output {
	if c.terminal() {
		return Output{}
	}
	m, err := c.opener.OpenFrame(f)
	if err != nil {
		return c.fatal(&Error{Kind: ErrProtocol, Err: err})
	}
	var out Output
	switch m := m.(type) {
	case protocol.ResultMessage:
		out = c.onResult(m.Result)
	case protocol.CancellationResultMessage:
		out = c.onCancellationResult(m.Result)
	default:
		return c.fatal(&Error{Kind: ErrUnexpectedMessage, Detail: string(m.Type())})
	}
	out.ReadNext = !c.terminal()
	return out
}

// ReceiveFailed handles a failure to read or decode the next frame: err is a *jsonline.Error
// or a protocol decoding error (TRN-059, TRN-060). The end of the stream closes the session
// while closing and is fatal otherwise; every other failure is fatal.
func (c *Coordinator) ReceiveFailed(err error) Output {
	if c.terminal() {
		return Output{}
	}
	var le *jsonline.Error
	if c.phase == PhaseClosing && errors.As(err, &le) && le.Kind == jsonline.ErrUnexpectedEndOfStream {
		c.phase = PhaseClosed
		return Output{Events: []Event{{Target: TargetClose}}}
	}
	return c.fatal(streamError(err))
}

func (c *Coordinator) onResult(res protocol.ToolResult) Output {
	switch c.phase {
	case PhaseActive, PhaseCancelling, PhaseResultBuffered:
	default:
		return c.fatal(&Error{Kind: ErrUnexpectedMessage, Detail: "result"})
	}
	if err := c.authz.ValidateResult(c.active, res); err != nil {
		return c.fatal(&Error{Kind: ErrProtocol, Err: err})
	}
	switch c.phase {
	case PhaseCancelling:
		c.phase, c.buffered = PhaseResultBuffered, res
		return Output{}
	case PhaseResultBuffered:
		// The authorizer already refuses a second result for the request (DuplicateResult).
		return c.fatal(&Error{Kind: ErrUnexpectedMessage, Detail: "duplicate result"})
	}
	c.phase = PhaseIdle
	return Output{Events: []Event{{Target: TargetInvocation, Outcome: InvocationOutcome{Result: res}}}}
}

func (c *Coordinator) onCancellationResult(res protocol.WorkerCancellationResult) Output {
	switch c.phase {
	case PhaseCancelling, PhaseResultBuffered:
	case PhaseActive:
		return c.fatal(&Error{Kind: ErrUnexpectedMessage, Detail: "unsolicited cancellation_result"})
	default:
		return c.fatal(&Error{Kind: ErrUnexpectedMessage, Detail: "cancellation_result"})
	}
	if err := c.authz.ValidateCancellationResult(c.cancel, res); err != nil {
		return c.fatal(&Error{Kind: ErrProtocol, Err: err})
	}
	// The authorizer's outcome rule has already refused acknowledged and unsupported after
	// an accepted result and too_late before one; the phase checks below are defensive.
	switch res.Outcome {
	case protocol.OutcomeAcknowledged:
		if c.phase != PhaseCancelling {
			return c.fatal(&Error{Kind: ErrUnexpectedMessage, Detail: "cancellation after completed result"})
		}
		c.phase = PhaseIdle
		return Output{Events: []Event{
			{Target: TargetCancellation, Disposition: res},
			{Target: TargetInvocation, Outcome: InvocationOutcome{Cancelled: true, Acknowledgement: res}},
		}}
	case protocol.OutcomeTooLate:
		if c.phase != PhaseResultBuffered {
			return c.fatal(&Error{Kind: ErrUnexpectedMessage, Detail: "too_late before result"})
		}
		buffered := c.buffered
		c.phase, c.buffered = PhaseIdle, protocol.ToolResult{}
		return Output{Events: []Event{
			{Target: TargetInvocation, Outcome: InvocationOutcome{Result: buffered}},
			{Target: TargetCancellation, Disposition: res},
		}}
	default: // unsupported
		if c.phase != PhaseCancelling {
			return c.fatal(&Error{Kind: ErrUnexpectedMessage, Detail: "unsupported after result"})
		}
		c.phase = PhaseActive
		return Output{Events: []Event{{Target: TargetCancellation, Disposition: res}}}
	}
}

func (c *Coordinator) terminal() bool { return c.phase == PhaseStopped || c.phase == PhaseClosed }

// fatal stops the coordinator and gives err to every waiter: the active invocation, its
// pending cancellation, and a pending close (TRN-061).
func (c *Coordinator) fatal(err *Error) Output {
	var events []Event
	switch c.phase {
	case PhaseActive:
		events = []Event{{Target: TargetInvocation, Err: err}}
	case PhaseCancelling, PhaseResultBuffered:
		events = []Event{{Target: TargetInvocation, Err: err}, {Target: TargetCancellation, Err: err}}
	case PhaseClosing:
		events = []Event{{Target: TargetClose, Err: err}}
	}
	c.phase, c.failure, c.buffered = PhaseStopped, err, protocol.ToolResult{}
	return Output{Events: events}
}

// streamError maps a read, decode or write failure to the transport error the reference
// reports for it.
func streamError(err error) *Error {
	var le *jsonline.Error
	if errors.As(err, &le) {
		switch le.Kind {
		case jsonline.ErrIO:
			return &Error{Kind: ErrIO, Err: le.Err}
		case jsonline.ErrProtocol:
			return &Error{Kind: ErrProtocol, Err: le.Err}
		case jsonline.ErrInvalidUTF8:
			return &Error{Kind: ErrUnexpectedMessage, Detail: "non-UTF-8 frame"}
		case jsonline.ErrUnexpectedEndOfStream:
			return &Error{Kind: ErrUnexpectedMessage, Detail: "unexpected end of worker stream"}
		case jsonline.ErrPoisoned:
			return &Error{Kind: ErrUnavailable, Err: le}
		}
	}
	if _, ok := protocol.KindOf(err); ok {
		return &Error{Kind: ErrProtocol, Err: err}
	}
	return &Error{Kind: ErrIO, Err: err}
}
