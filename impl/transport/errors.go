package transport

import (
	"strconv"
	"strings"

	"github.com/splashv5/conform/impl/host"
)

// ErrorKind names one failure rule of the host transports. It implements error, so a kind is
// a valid errors.Is target. The names returned by String are the reference's variant names.
type ErrorKind uint8

// Construction errors, shared by every transport (TRN-010, TRN-020, TRN-030, TRN-040).
const (
	// ErrRequiresHostAuthenticator: the authenticator's role is not host.
	ErrRequiresHostAuthenticator ErrorKind = iota + 1
	// ErrSessionMismatch: two parts that must name one session do not (Expected and Actual
	// hold both ids).
	ErrSessionMismatch
	// ErrInvalidDeadline: a supervised session was given a deadline that is not positive.
	ErrInvalidDeadline
)

// Exchange errors of the synchronous transports.
const (
	// ErrProtocol: a protocol rule failed (sealing, opening, host authorization or result
	// validation); Err holds the *protocol.Error.
	ErrProtocol ErrorKind = iota + 16
	// ErrChannel: the frame channel failed; Err holds its error (a *jsonline.Error for
	// Channel).
	ErrChannel
	// ErrUnexpectedResponse: the worker answered with a message of the wrong kind.
	ErrUnexpectedResponse
	// ErrPoisoned: an earlier failure or a discard made the transport unusable.
	ErrPoisoned
	// ErrConsumed: the one-shot operation transport already completed its one exchange.
	ErrConsumed
	// ErrWorker: the in-process worker session refused the frame; Err holds its error.
	ErrWorker
	// ErrNotOperationRequest and ErrLineChannelRequired have no counterpart in the reference,
	// which has no pre-sealed exchange.
	//
	// ErrNotOperationRequest: a pre-sealed line handed to the one-shot operation transport
	// does not carry a durable operation request; Detail names the message kind.
	ErrNotOperationRequest
	// ErrLineChannelRequired: the one-shot operation transport was asked to move a
	// pre-sealed line over a channel that cannot move lines as they are.
	ErrLineChannelRequired
)

// Errors of the multiplexed transport (TRN-040 to TRN-062).
const (
	// ErrIO: writing or reading the worker stream failed; Err holds the cause.
	ErrIO ErrorKind = iota + 32
	// ErrBusy: an invocation is active, or the session is closing.
	ErrBusy
	// ErrNoActiveInvocation: there is no active invocation to cancel.
	ErrNoActiveInvocation
	// ErrTargetMismatch: the handle names another invocation than the active one.
	ErrTargetMismatch
	// ErrCancellationPending: a cancellation awaits its disposition or a result is buffered.
	ErrCancellationPending
	// ErrExternalBindingTerminal: the external binding already returned its terminal event.
	ErrExternalBindingTerminal
	// ErrUnexpectedMessage: the worker sent a frame the current state does not allow, or the
	// stream ended; Detail names the message kind or the reason.
	ErrUnexpectedMessage
	// ErrUnavailable: the coordinator has stopped.
	ErrUnavailable
	// ErrAbandoned: the host abandoned the session while work was pending.
	ErrAbandoned
	// ErrCancelSlotUnavailable: the active invocation was started when no identity slot of
	// the session stayed free for its cancellation, so it cannot be cancelled cooperatively;
	// the host must contain the worker instead. The reference has no such variant.
	ErrCancelSlotUnavailable
)

// Errors of the external-tool binding (TRN-070 to TRN-075).
const (
	// ErrExternal: the host runtime refused the operation; Err holds its error.
	ErrExternal ErrorKind = iota + 48
	// ErrTransport: the multiplexed transport failed; Err holds the transport *Error.
	ErrTransport
	// ErrCancellationBindingMismatch: the runtime's cancellation request names another
	// invocation than the bound one.
	ErrCancellationBindingMismatch
	// ErrCancellationAlreadyRequested: the binding already sent its one cancellation.
	ErrCancellationAlreadyRequested
	// ErrInvalidCancelledOutcome: a cancelled outcome whose disposition is not acknowledged.
	ErrInvalidCancelledOutcome
	// ErrAlreadyTerminal: the binding already returned its terminal event.
	ErrAlreadyTerminal
	// ErrCancellationNotRequested: the cancellation request was not issued by the runtime's
	// RequestExternalCancellation, so the runtime was never asked for the cancellation. The
	// reference has no such variant: it sends and fails only when the outcome is applied.
	ErrCancellationNotRequested
)

// Errors of the supervised session (TRN-080 to TRN-088).
const (
	// ErrBridge: preparing or cancelling through the binding failed without poisoning;
	// Err holds the binding *Error.
	ErrBridge ErrorKind = iota + 64
	// ErrSupervisor: the supervisor failed; Err holds its error and the session was
	// terminated (Termination, TerminationErr).
	ErrSupervisor
	// ErrIndeterminate: the deadline or lifecycle control won; the outcome of the invocation
	// is unknown and it was not cancelled (Cause, ExternalID, Termination).
	ErrIndeterminate
)

var kindNames = map[ErrorKind]string{
	ErrRequiresHostAuthenticator:    "RequiresHostAuthenticator",
	ErrSessionMismatch:              "SessionMismatch",
	ErrInvalidDeadline:              "InvalidDeadline",
	ErrProtocol:                     "Protocol",
	ErrChannel:                      "Channel",
	ErrUnexpectedResponse:           "UnexpectedResponse",
	ErrPoisoned:                     "Poisoned",
	ErrConsumed:                     "Consumed",
	ErrWorker:                       "Worker",
	ErrNotOperationRequest:          "NotOperationRequest",
	ErrLineChannelRequired:          "LineChannelRequired",
	ErrIO:                           "Io",
	ErrBusy:                         "Busy",
	ErrNoActiveInvocation:           "NoActiveInvocation",
	ErrTargetMismatch:               "TargetMismatch",
	ErrCancellationPending:          "CancellationPending",
	ErrExternalBindingTerminal:      "ExternalBindingTerminal",
	ErrUnexpectedMessage:            "UnexpectedMessage",
	ErrUnavailable:                  "Unavailable",
	ErrAbandoned:                    "Abandoned",
	ErrCancelSlotUnavailable:        "CancelSlotUnavailable",
	ErrCancellationNotRequested:     "CancellationNotRequested",
	ErrExternal:                     "External",
	ErrTransport:                    "Transport",
	ErrCancellationBindingMismatch:  "CancellationBindingMismatch",
	ErrCancellationAlreadyRequested: "CancellationAlreadyRequested",
	ErrInvalidCancelledOutcome:      "InvalidCancelledOutcome",
	ErrAlreadyTerminal:              "AlreadyTerminal",
	ErrBridge:                       "Bridge",
	ErrSupervisor:                   "Supervisor",
	ErrIndeterminate:                "Indeterminate",
}

var kindTexts = map[ErrorKind]string{
	ErrRequiresHostAuthenticator:    "the transport requires a host-role authenticator",
	ErrSessionMismatch:              "the sessions do not match",
	ErrInvalidDeadline:              "the invocation deadline must be positive",
	ErrProtocol:                     "worker protocol failure",
	ErrChannel:                      "worker frame channel failed",
	ErrUnexpectedResponse:           "the worker returned an unexpected response",
	ErrPoisoned:                     "the transport is poisoned",
	ErrConsumed:                     "the one-shot operation transport is consumed",
	ErrWorker:                       "the in-process worker rejected the frame",
	ErrNotOperationRequest:          "the pre-sealed line is not a durable operation request",
	ErrLineChannelRequired:          "the frame channel cannot move pre-sealed lines",
	ErrIO:                           "worker stream I/O failed",
	ErrBusy:                         "the worker session already has active work",
	ErrNoActiveInvocation:           "the worker session has no active invocation",
	ErrTargetMismatch:               "the handle targets another invocation",
	ErrCancellationPending:          "a cancellation is already pending",
	ErrExternalBindingTerminal:      "the external worker binding is already terminal",
	ErrUnexpectedMessage:            "the worker sent an unexpected frame",
	ErrUnavailable:                  "the worker session is unavailable",
	ErrAbandoned:                    "the worker session was abandoned",
	ErrCancelSlotUnavailable:        "no identity slot was kept for this invocation's cancellation",
	ErrExternal:                     "the external tool lifecycle failed",
	ErrTransport:                    "the worker transport failed",
	ErrCancellationBindingMismatch:  "the cancellation does not match its dispatched invocation",
	ErrCancellationAlreadyRequested: "the worker cancellation was already requested",
	ErrInvalidCancelledOutcome:      "a cancelled outcome without an acknowledgement",
	ErrAlreadyTerminal:              "the external worker binding is already terminal",
	ErrCancellationNotRequested:     "the runtime was not asked for this cancellation",
	ErrBridge:                       "the external worker bridge failed",
	ErrSupervisor:                   "worker lifecycle supervision failed; the session was discarded",
	ErrIndeterminate:                "the worker call is indeterminate",
}

// String returns the reference variant name, such as "CancellationPending".
func (k ErrorKind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return "ErrorKind(" + strconv.Itoa(int(k)) + ")"
}

// Error returns a short description of the kind.
func (k ErrorKind) Error() string {
	if s, ok := kindTexts[k]; ok {
		return "transport: " + s
	}
	return "transport: " + k.String()
}

// IndeterminateCause says why a supervised invocation ended without a trustworthy outcome.
type IndeterminateCause uint8

// The indeterminate causes.
const (
	// CauseDeadlineElapsed: the invocation deadline elapsed and the worker was stopped.
	CauseDeadlineElapsed IndeterminateCause = iota + 1
	// CauseSessionDeadlineElapsed: the whole-session deadline elapsed.
	CauseSessionDeadlineElapsed
	// CauseWorkerTerminated: the worker process ended or was stopped by lifecycle control.
	CauseWorkerTerminated
	// CauseContained: the host asked for a cancellation that the session had no identity
	// slot left to carry, so the worker was stopped instead (TRN-112). The reference has no
	// such variant.
	CauseContained
)

// String returns the reference variant name.
func (c IndeterminateCause) String() string {
	switch c {
	case CauseDeadlineElapsed:
		return "DeadlineElapsed"
	case CauseSessionDeadlineElapsed:
		return "SessionDeadlineElapsed"
	case CauseWorkerTerminated:
		return "WorkerTerminated"
	case CauseContained:
		return "Contained"
	}
	return "IndeterminateCause(" + strconv.Itoa(int(c)) + ")"
}

// Error is a host transport failure. Only the fields its kind names are set. It never holds
// key material.
type Error struct {
	// Kind is the failed rule.
	Kind ErrorKind
	// Detail is the message kind or reason of ErrUnexpectedMessage, and the message kind of
	// ErrNotOperationRequest.
	Detail string
	// Expected and Actual are the two session ids of ErrSessionMismatch: the manifest's (or
	// the transport's) and the authenticator's (or the supervisor's).
	Expected, Actual string
	// Err is the wrapped cause.
	Err error
	// ExternalID is the host operation id of ErrIndeterminate.
	ExternalID host.OperationID
	// Cause is the reason of ErrIndeterminate.
	Cause IndeterminateCause
	// Termination is how the worker ended, for ErrIndeterminate and, when TerminationErr is
	// nil, for ErrSupervisor and a supervised ErrTransport.
	Termination *Termination
	// TerminationErr is the supervisor's failure to terminate the worker, if it failed.
	TerminationErr error
}

// Error describes the failure.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Kind.Error())
	switch e.Kind {
	case ErrUnexpectedMessage, ErrNotOperationRequest:
		b.WriteString(": ")
		b.WriteString(e.Detail)
	case ErrSessionMismatch:
		b.WriteString(": ")
		b.WriteString(strconv.Quote(e.Expected))
		b.WriteString(" and ")
		b.WriteString(strconv.Quote(e.Actual))
	case ErrIndeterminate:
		b.WriteString(" after ")
		b.WriteString(e.Cause.String())
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Is reports whether target is this error's kind.
func (e *Error) Is(target error) bool {
	k, ok := target.(ErrorKind)
	return ok && k == e.Kind
}

// Unwrap returns the wrapped cause.
func (e *Error) Unwrap() error { return e.Err }

func newError(kind ErrorKind, cause error) *Error { return &Error{Kind: kind, Err: cause} }

func unexpected(detail string) *Error { return &Error{Kind: ErrUnexpectedMessage, Detail: detail} }

// KindOf returns the kind of the outermost transport *Error in err's chain.
func KindOf(err error) (ErrorKind, bool) {
	for err != nil {
		if e, ok := err.(*Error); ok {
			return e.Kind, true
		}
		if k, ok := err.(ErrorKind); ok {
			return k, true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return 0, false
		}
		err = u.Unwrap()
	}
	return 0, false
}
