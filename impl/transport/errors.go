package transport

import (
	"strconv"
	"strings"

	"github.com/splashv5/conform/impl/errkind"
	"github.com/splashv5/conform/impl/host"
)

// ErrorKind names one failure rule of the host transports. It is an error, so a kind is a
// valid errors.Is target. The names returned by String are the reference's variant names.
type ErrorKind = errkind.Kind[kinds]

// kinds is the space of the transport error kinds.
type kinds struct{}

// Table describes the transport error kinds.
func (kinds) Table() *errkind.Table { return &kindTable }

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

var kindTable = errkind.Table{Type: "ErrorKind", Prefix: "transport: ", Kinds: []errkind.Entry{
	ErrRequiresHostAuthenticator:    {Name: "RequiresHostAuthenticator", Message: "the transport requires a host-role authenticator"},
	ErrSessionMismatch:              {Name: "SessionMismatch", Message: "the sessions do not match"},
	ErrInvalidDeadline:              {Name: "InvalidDeadline", Message: "the invocation deadline must be positive"},
	ErrProtocol:                     {Name: "Protocol", Message: "worker protocol failure"},
	ErrChannel:                      {Name: "Channel", Message: "worker frame channel failed"},
	ErrUnexpectedResponse:           {Name: "UnexpectedResponse", Message: "the worker returned an unexpected response"},
	ErrPoisoned:                     {Name: "Poisoned", Message: "the transport is poisoned"},
	ErrConsumed:                     {Name: "Consumed", Message: "the one-shot operation transport is consumed"},
	ErrWorker:                       {Name: "Worker", Message: "the in-process worker rejected the frame"},
	ErrNotOperationRequest:          {Name: "NotOperationRequest", Message: "the pre-sealed line is not a durable operation request"},
	ErrLineChannelRequired:          {Name: "LineChannelRequired", Message: "the frame channel cannot move pre-sealed lines"},
	ErrIO:                           {Name: "Io", Message: "worker stream I/O failed"},
	ErrBusy:                         {Name: "Busy", Message: "the worker session already has active work"},
	ErrNoActiveInvocation:           {Name: "NoActiveInvocation", Message: "the worker session has no active invocation"},
	ErrTargetMismatch:               {Name: "TargetMismatch", Message: "the handle targets another invocation"},
	ErrCancellationPending:          {Name: "CancellationPending", Message: "a cancellation is already pending"},
	ErrExternalBindingTerminal:      {Name: "ExternalBindingTerminal", Message: "the external worker binding is already terminal"},
	ErrUnexpectedMessage:            {Name: "UnexpectedMessage", Message: "the worker sent an unexpected frame"},
	ErrUnavailable:                  {Name: "Unavailable", Message: "the worker session is unavailable"},
	ErrAbandoned:                    {Name: "Abandoned", Message: "the worker session was abandoned"},
	ErrCancelSlotUnavailable:        {Name: "CancelSlotUnavailable", Message: "no identity slot was kept for this invocation's cancellation"},
	ErrCancellationNotRequested:     {Name: "CancellationNotRequested", Message: "the runtime was not asked for this cancellation"},
	ErrExternal:                     {Name: "External", Message: "the external tool lifecycle failed"},
	ErrTransport:                    {Name: "Transport", Message: "the worker transport failed"},
	ErrCancellationBindingMismatch:  {Name: "CancellationBindingMismatch", Message: "the cancellation does not match its dispatched invocation"},
	ErrCancellationAlreadyRequested: {Name: "CancellationAlreadyRequested", Message: "the worker cancellation was already requested"},
	ErrInvalidCancelledOutcome:      {Name: "InvalidCancelledOutcome", Message: "a cancelled outcome without an acknowledgement"},
	ErrAlreadyTerminal:              {Name: "AlreadyTerminal", Message: "the external worker binding is already terminal"},
	ErrBridge:                       {Name: "Bridge", Message: "the external worker bridge failed"},
	ErrSupervisor:                   {Name: "Supervisor", Message: "worker lifecycle supervision failed; the session was discarded"},
	ErrIndeterminate:                {Name: "Indeterminate", Message: "the worker call is indeterminate"},
}}

// IndeterminateCause says why a supervised invocation ended without a trustworthy outcome.
type IndeterminateCause = errkind.Kind[causes]

// causes is the space of the indeterminate causes.
type causes struct{}

// Table describes the indeterminate causes.
func (causes) Table() *errkind.Table { return &causeTable }

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

var causeTable = errkind.Table{Type: "IndeterminateCause", Prefix: "transport: indeterminate after ", Kinds: []errkind.Entry{
	CauseDeadlineElapsed:        {Name: "DeadlineElapsed"},
	CauseSessionDeadlineElapsed: {Name: "SessionDeadlineElapsed"},
	CauseWorkerTerminated:       {Name: "WorkerTerminated"},
	CauseContained:              {Name: "Contained"},
}}

// Error is a host transport failure. Only the fields its kind names are set. It never holds
// key material.
type Error struct {
	// Kind is the failed rule.
	errkind.Kind[kinds]
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

// Unwrap returns the wrapped cause.
func (e *Error) Unwrap() error { return e.Err }

func newError(kind ErrorKind, cause error) *Error { return &Error{Kind: kind, Err: cause} }

func unexpected(detail string) *Error { return &Error{Kind: ErrUnexpectedMessage, Detail: detail} }

// KindOf returns the kind of the outermost transport *Error (or ErrorKind) in err's chain.
func KindOf(err error) (ErrorKind, bool) { return errkind.Of[kinds](err) }
