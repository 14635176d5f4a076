package transport

import (
	"strconv"

	"github.com/splashv5/conform/impl/errkind"
	"github.com/splashv5/conform/impl/host"
)

// ErrorKind names one failure rule of the host transports.
type ErrorKind = errkind.Kind[kinds]

type kinds struct{}

// Table describes the transport error kinds.
func (kinds) Table() *errkind.Table { return &kindTable }

// The transport error kinds; a kind's meaning is its message in kindTable, and its entry's Doc
// says which Error field it fills and what the message leaves out.
const (
	// Construction, shared by every transport (TRN-010, TRN-020, TRN-030, TRN-040).
	ErrRequiresHostAuthenticator ErrorKind = iota + 1
	ErrSessionMismatch
	ErrInvalidDeadline

	// Exchanges of the synchronous transports.
	ErrProtocol
	ErrChannel
	ErrUnexpectedResponse
	ErrPoisoned
	ErrConsumed
	ErrWorker
	ErrNotOperationRequest
	ErrLineChannelRequired

	// The multiplexed transport (TRN-040 to TRN-062).
	ErrIO
	ErrBusy
	ErrNoActiveInvocation
	ErrTargetMismatch
	ErrCancellationPending
	ErrExternalBindingTerminal
	ErrUnexpectedMessage
	ErrUnavailable
	ErrAbandoned
	ErrCancelSlotUnavailable

	// The external-tool binding (TRN-070 to TRN-075).
	ErrExternal
	ErrTransport
	ErrCancellationBindingMismatch
	ErrCancellationAlreadyRequested
	ErrInvalidCancelledOutcome
	ErrAlreadyTerminal
	ErrCancellationNotRequested

	// The supervised session (TRN-080 to TRN-088).
	ErrBridge
	ErrSupervisor
	ErrIndeterminate
)

const noVariant = "the reference has no such variant"

var kindTable = errkind.Table{Type: "ErrorKind", Prefix: "transport: ", Kinds: []errkind.Entry{
	ErrRequiresHostAuthenticator:    {Name: "RequiresHostAuthenticator", Message: "the transport requires a host-role authenticator"},
	ErrSessionMismatch:              {Name: "SessionMismatch", Message: "the sessions do not match", Detail: "{}: {expected} and {actual}", Doc: "two parts that must name one session do not; Expected and Actual hold both ids"},
	ErrInvalidDeadline:              {Name: "InvalidDeadline", Message: "the invocation deadline must be positive"},
	ErrProtocol:                     {Name: "Protocol", Message: "worker protocol failure", Doc: "sealing, opening, host authorization or result validation; Err holds the *protocol.Error"},
	ErrChannel:                      {Name: "Channel", Message: "worker frame channel failed", Doc: "Err holds the channel's error (a *jsonline.Error for Channel)"},
	ErrUnexpectedResponse:           {Name: "UnexpectedResponse", Message: "the worker returned an unexpected response", Doc: "a message of the wrong kind"},
	ErrPoisoned:                     {Name: "Poisoned", Message: "the transport is poisoned", Doc: "by an earlier failure or a discard"},
	ErrConsumed:                     {Name: "Consumed", Message: "the one-shot operation transport is consumed", Doc: "it already completed its one exchange"},
	ErrWorker:                       {Name: "Worker", Message: "the in-process worker rejected the frame", Doc: "Err holds the worker session's error"},
	ErrNotOperationRequest:          {Name: "NotOperationRequest", Message: "the pre-sealed line is not a durable operation request", Detail: "{}: {detail}", Doc: "Detail names the message kind; " + noVariant + " (it has no pre-sealed exchange)"},
	ErrLineChannelRequired:          {Name: "LineChannelRequired", Message: "the frame channel cannot move pre-sealed lines", Doc: "as they are; " + noVariant},
	ErrIO:                           {Name: "Io", Message: "worker stream I/O failed", Doc: "Err holds the cause"},
	ErrBusy:                         {Name: "Busy", Message: "the worker session already has active work", Doc: "an invocation is active, or the session is closing"},
	ErrNoActiveInvocation:           {Name: "NoActiveInvocation", Message: "the worker session has no active invocation", Doc: "to cancel"},
	ErrTargetMismatch:               {Name: "TargetMismatch", Message: "the handle targets another invocation"},
	ErrCancellationPending:          {Name: "CancellationPending", Message: "a cancellation is already pending", Doc: "awaiting its disposition, or a result is buffered"},
	ErrExternalBindingTerminal:      {Name: "ExternalBindingTerminal", Message: "the external worker binding is already terminal"},
	ErrUnexpectedMessage:            {Name: "UnexpectedMessage", Message: "the worker sent an unexpected frame", Detail: "{}: {detail}", Doc: "or the stream ended; Detail names the message kind or the reason"},
	ErrUnavailable:                  {Name: "Unavailable", Message: "the worker session is unavailable", Doc: "the coordinator has stopped"},
	ErrAbandoned:                    {Name: "Abandoned", Message: "the worker session was abandoned", Doc: "while work was pending"},
	ErrCancelSlotUnavailable:        {Name: "CancelSlotUnavailable", Message: "no identity slot was kept for this invocation's cancellation", Doc: "it cannot be cancelled cooperatively; the host must contain the worker; " + noVariant},
	ErrCancellationNotRequested:     {Name: "CancellationNotRequested", Message: "the runtime was not asked for this cancellation", Doc: "not issued by RequestExternalCancellation; " + noVariant + " (it fails when the outcome is applied)"},
	ErrExternal:                     {Name: "External", Message: "the external tool lifecycle failed", Doc: "Err holds the host runtime's error"},
	ErrTransport:                    {Name: "Transport", Message: "the worker transport failed", Doc: "Err holds the multiplexed transport's *Error"},
	ErrCancellationBindingMismatch:  {Name: "CancellationBindingMismatch", Message: "the cancellation does not match its dispatched invocation"},
	ErrCancellationAlreadyRequested: {Name: "CancellationAlreadyRequested", Message: "the worker cancellation was already requested", Doc: "the binding sends one cancellation"},
	ErrInvalidCancelledOutcome:      {Name: "InvalidCancelledOutcome", Message: "a cancelled outcome without an acknowledgement"},
	ErrAlreadyTerminal:              {Name: "AlreadyTerminal", Message: "the external worker binding is already terminal"},
	ErrBridge:                       {Name: "Bridge", Message: "the external worker bridge failed", Doc: "preparing or cancelling through the binding, without poisoning; Err holds the binding *Error"},
	ErrSupervisor:                   {Name: "Supervisor", Message: "worker lifecycle supervision failed; the session was discarded", Doc: "Err holds the supervisor's error; Termination, TerminationErr say how the worker ended"},
	ErrIndeterminate:                {Name: "Indeterminate", Message: "the worker call is indeterminate", Detail: "{} after {cause}", Doc: "the deadline or lifecycle control won and the invocation was not cancelled; Cause, ExternalID, Termination"},
}}

// IndeterminateCause says why a supervised invocation ended without a trustworthy outcome.
type IndeterminateCause = errkind.Kind[causes]

type causes struct{}

// Table describes the indeterminate causes.
func (causes) Table() *errkind.Table { return &causeTable }

// The indeterminate causes; see causeTable.
const (
	CauseDeadlineElapsed IndeterminateCause = iota + 1
	CauseSessionDeadlineElapsed
	CauseWorkerTerminated
	CauseContained
)

var causeTable = errkind.Table{Type: "IndeterminateCause", Prefix: "transport: indeterminate after ", Kinds: []errkind.Entry{
	CauseDeadlineElapsed:        {Name: "DeadlineElapsed", Doc: "the invocation deadline elapsed and the worker was stopped"},
	CauseSessionDeadlineElapsed: {Name: "SessionDeadlineElapsed", Doc: "the whole-session deadline elapsed"},
	CauseWorkerTerminated:       {Name: "WorkerTerminated", Doc: "the worker process ended or lifecycle control stopped it"},
	CauseContained:              {Name: "Contained", Doc: "a cancellation had no identity slot left, so the worker was stopped instead (TRN-112); " + noVariant},
}}

// Error is a host transport failure. Only the fields its kind names are set. It never holds
// key material.
type Error struct {
	errkind.Kind[kinds]
	Detail           string             // the message kind or reason of UnexpectedMessage and NotOperationRequest
	Expected, Actual string             // SessionMismatch: the manifest's (or transport's) and the authenticator's (or supervisor's) id
	Err              error              // the wrapped cause
	ExternalID       host.OperationID   // the host operation id of Indeterminate
	Cause            IndeterminateCause // the reason of Indeterminate
	Termination      *Termination       // how the worker ended: Indeterminate and, when TerminationErr is nil, Supervisor and a supervised Transport
	TerminationErr   error              // the supervisor's failure to terminate the worker, if it failed
}

// Error describes the failure.
func (e *Error) Error() string {
	msg := e.Kind.Expand("detail", e.Detail, "expected", strconv.Quote(e.Expected), "actual", strconv.Quote(e.Actual), "cause", e.Cause.String())
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the wrapped cause.
func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the kind of the outermost transport *Error (or ErrorKind) in err's chain.
func KindOf(err error) (ErrorKind, bool) { return errkind.Of[kinds](err) }
