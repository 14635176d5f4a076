package worker

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/splashv5/conform/impl/errkind"
)

// ErrorKind identifies one failure rule of the worker runtime: one variant of the reference's
// WorkerSessionOpenError, WorkerSessionError, registry, limits, journal-store and cancellable
// driver errors. A kind is an error, so it is a valid errors.Is target; String returns the
// variant name and Error "worker: " and the name.
type ErrorKind = errkind.Kind[kinds]

// kinds is the space of the worker runtime's error kinds.
type kinds struct{}

// Table describes the worker runtime's error kinds.
func (kinds) Table() *errkind.Table { return &kindTable }

// Registry and configuration errors.
const (
	// ErrInvalidTool: an adapter was registered under a name that is not a token.
	ErrInvalidTool ErrorKind = iota + 1
	// ErrDuplicateTool: an adapter was registered twice under one name.
	ErrDuplicateTool
	// ErrZeroPerToolReconciliationLimit: the per-tool reconciliation limit is 0.
	ErrZeroPerToolReconciliationLimit
	// ErrZeroSessionReconciliationLimit: the per-session reconciliation limit is 0.
	ErrZeroSessionReconciliationLimit
)

// Session opening errors (WRK-010 to WRK-016).
const (
	// ErrRequiresWorkerAuthenticator: the authenticator's role is not worker.
	ErrRequiresWorkerAuthenticator ErrorKind = iota + 16
	// ErrUnexpectedOpeningMessage: the first authenticated message is not open_session.
	ErrUnexpectedOpeningMessage
	// ErrMissingAdapter: a granted tool has no registered adapter.
	ErrMissingAdapter
	// ErrAdmission: the admission policy refused the session; Err holds its reason.
	ErrAdmission
	// ErrInvalidJournalLease: admission returned the fencing token 0.
	ErrInvalidJournalLease
)

// Frame handling errors (WRK-020 to WRK-073).
const (
	// ErrProtocol: a protocol rule rejected the frame; Err holds the *protocol.Error and
	// Stage says where.
	ErrProtocol ErrorKind = iota + 32
	// ErrJournal: the journal store failed to persist; Err holds its error. Poisons.
	ErrJournal
	// ErrInvalidJournalRevision: the journal store returned a revision that is not greater
	// than the expected one. Poisons.
	ErrInvalidJournalRevision
	// ErrSessionPoisoned: the session was poisoned by an earlier persistence failure.
	ErrSessionPoisoned
	// ErrInvocationSafetyNotDeclared: the adapter declares no invocation safety.
	ErrInvocationSafetyNotDeclared
	// ErrDurableOperationContractNotDeclared: the adapter declares no durable contract.
	ErrDurableOperationContractNotDeclared
	// ErrAdapter: the adapter failed; Err holds its error.
	ErrAdapter
	// ErrIndeterminateOperation: the effect of a dispatch is unknown; Err holds the cause.
	ErrIndeterminateOperation
	// ErrIndeterminateCompensation: the effect of a compensation is unknown; Err holds the
	// cause.
	ErrIndeterminateCompensation
	// ErrPendingOperation: an exact duplicate dispatch found its record still pending.
	ErrPendingOperation
	// ErrPendingCompensation: an exact duplicate compensation found its record still pending.
	ErrPendingCompensation
	// ErrReconciliationBudgetExhausted: the per-tool reconciliation budget is spent.
	ErrReconciliationBudgetExhausted
	// ErrReconciliationSessionBudgetExhausted: the per-session reconciliation budget is spent.
	ErrReconciliationSessionBudgetExhausted
	// ErrUnexpectedMessage: the message kind is not handled in this state; MessageType names
	// it.
	ErrUnexpectedMessage
)

// Journal store errors (WRK-080 to WRK-083).
const (
	// ErrInvalidJournalEncoding: the stored journal payload is not UTF-8.
	ErrInvalidJournalEncoding ErrorKind = iota + 64
	// ErrStorage: the authenticated store failed; Err holds its error.
	ErrStorage
	// ErrJournalFormat: the stored or supplied journal violates a journal rule; Err holds the
	// protocol error.
	ErrJournalFormat
)

// Cancellable driver errors (CAN-001 to CAN-021).
const (
	// ErrAdapterNotCancellable: a tool's adapter was not registered as cancellable.
	ErrAdapterNotCancellable ErrorKind = iota + 80
	// ErrCancellationWithoutTarget: a cancel arrived with no active or completed invocation.
	ErrCancellationWithoutTarget
	// ErrUnrequestedAcknowledgement: the adapter acknowledged a cancellation nobody asked for.
	ErrUnrequestedAcknowledgement
	// ErrCloseWhileInvocationActive: close_session arrived while an invocation was running.
	ErrCloseWhileInvocationActive
	// ErrAdapterPanicked: the adapter panicked.
	ErrAdapterPanicked
	// ErrFrame: a frame line could not be read (I/O, size, UTF-8, end of input); Err holds
	// the transport error.
	ErrFrame
	// ErrWrite: an answer frame could not be written; Err holds the I/O error.
	ErrWrite
	// ErrEndOfInput: the input ended cleanly at a line boundary. Active reports whether an
	// invocation was running at the time.
	ErrEndOfInput
)

var kindTable = errkind.Table{Type: "ErrorKind", Prefix: "worker: ", Kinds: []errkind.Entry{
	ErrInvalidTool:                          {Name: "InvalidTool"},
	ErrDuplicateTool:                        {Name: "DuplicateTool"},
	ErrZeroPerToolReconciliationLimit:       {Name: "ZeroPerToolReconciliationLimit"},
	ErrZeroSessionReconciliationLimit:       {Name: "ZeroSessionReconciliationLimit"},
	ErrRequiresWorkerAuthenticator:          {Name: "RequiresWorkerAuthenticator"},
	ErrUnexpectedOpeningMessage:             {Name: "UnexpectedOpeningMessage"},
	ErrMissingAdapter:                       {Name: "MissingAdapter"},
	ErrAdmission:                            {Name: "Admission"},
	ErrInvalidJournalLease:                  {Name: "InvalidJournalLease"},
	ErrProtocol:                             {Name: "Protocol"},
	ErrJournal:                              {Name: "Journal"},
	ErrInvalidJournalRevision:               {Name: "InvalidJournalRevision"},
	ErrSessionPoisoned:                      {Name: "SessionPoisoned"},
	ErrInvocationSafetyNotDeclared:          {Name: "InvocationSafetyNotDeclared"},
	ErrDurableOperationContractNotDeclared:  {Name: "DurableOperationContractNotDeclared"},
	ErrAdapter:                              {Name: "Adapter"},
	ErrIndeterminateOperation:               {Name: "IndeterminateOperation"},
	ErrIndeterminateCompensation:            {Name: "IndeterminateCompensation"},
	ErrPendingOperation:                     {Name: "PendingOperation"},
	ErrPendingCompensation:                  {Name: "PendingCompensation"},
	ErrReconciliationBudgetExhausted:        {Name: "ReconciliationBudgetExhausted"},
	ErrReconciliationSessionBudgetExhausted: {Name: "ReconciliationSessionBudgetExhausted"},
	ErrUnexpectedMessage:                    {Name: "UnexpectedMessage"},
	ErrInvalidJournalEncoding:               {Name: "InvalidJournalEncoding"},
	ErrStorage:                              {Name: "Storage"},
	ErrJournalFormat:                        {Name: "JournalFormat"},
	ErrAdapterNotCancellable:                {Name: "AdapterNotCancellable"},
	ErrCancellationWithoutTarget:            {Name: "CancellationWithoutTarget"},
	ErrUnrequestedAcknowledgement:           {Name: "UnrequestedAcknowledgement"},
	ErrCloseWhileInvocationActive:           {Name: "CloseWhileInvocationActive"},
	ErrAdapterPanicked:                      {Name: "AdapterPanicked"},
	ErrFrame:                                {Name: "Frame"},
	ErrWrite:                                {Name: "Write"},
	ErrEndOfInput:                           {Name: "EndOfInput"},
}}

// Stage says at which step of a flow a protocol error was raised. It decides the exit class
// of an ErrProtocol error (WRK-092).
type Stage uint8

// The stages of a flow.
const (
	// StageNone: not a protocol error.
	StageNone Stage = iota
	// StageOpen: the authenticator refused the frame (tag, session, sequence, decoding).
	StageOpen
	// StageManifest: the opening manifest is invalid.
	StageManifest
	// StageAuthorize: the session authorizer refused the request.
	StageAuthorize
	// StageJournal: the journal refused an admission or a reconciliation.
	StageJournal
	// StageObserve: the journal refused the status an adapter reported.
	StageObserve
	// StageResult: the answer built from an adapter's output failed validation.
	StageResult
	// StageSeal: the answer could not be sealed.
	StageSeal
)

var stageNames = [...]string{"none", "open", "manifest", "authorize", "journal", "observe", "result", "seal"}

// String returns the stage's name.
func (s Stage) String() string {
	if int(s) < len(stageNames) {
		return stageNames[s]
	}
	return "stage(" + strconv.Itoa(int(s)) + ")"
}

// Error is a worker runtime failure. Kind says which rule failed; the other fields carry the
// variant's data and are zero when the kind does not use them. An Error never holds key
// material or payload bytes.
type Error struct {
	errkind.Kind[kinds]
	// Stage: where an ErrProtocol error was raised.
	Stage Stage
	// Tool: the tool of MissingAdapter, InvalidTool, DuplicateTool, the contract errors,
	// Adapter, ReconciliationBudgetExhausted and AdapterNotCancellable.
	Tool string
	// OperationKey and CompensationKey: the keys of the indeterminate and pending variants.
	OperationKey    string
	CompensationKey string
	// MessageType: the message kind of UnexpectedMessage.
	MessageType string
	// Expected and Actual: the revisions of InvalidJournalRevision.
	Expected, Actual uint64
	// Maximum: the limit of the reconciliation budget variants.
	Maximum uint32
	// Active: for ErrEndOfInput and ErrFrame, whether an invocation was running.
	Active bool
	// Err: the cause (a protocol, adapter, store, admission or transport error).
	Err error
}

// Error describes the failure for logs.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("worker: ")
	b.WriteString(e.Kind.String())
	if e.Stage != StageNone {
		fmt.Fprintf(&b, " (%s)", e.Stage)
	}
	if e.Tool != "" {
		fmt.Fprintf(&b, " tool=%s", e.Tool)
	}
	if e.OperationKey != "" {
		fmt.Fprintf(&b, " operation_key=%s", e.OperationKey)
	}
	if e.CompensationKey != "" {
		fmt.Fprintf(&b, " compensation_key=%s", e.CompensationKey)
	}
	if e.MessageType != "" {
		fmt.Fprintf(&b, " message=%s", e.MessageType)
	}
	switch e.Kind {
	case ErrInvalidJournalRevision:
		fmt.Fprintf(&b, " expected=%d actual=%d", e.Expected, e.Actual)
	case ErrReconciliationBudgetExhausted, ErrReconciliationSessionBudgetExhausted:
		fmt.Fprintf(&b, " maximum=%d", e.Maximum)
	case ErrEndOfInput, ErrFrame:
		if e.Active {
			b.WriteString(" while an invocation was active")
		}
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause, so errors.Is also matches protocol, adapter and store kinds.
func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the kind of the outermost worker Error (or ErrorKind) in err's chain.
func KindOf(err error) (ErrorKind, bool) { return errkind.Of[kinds](err) }

func protocolError(stage Stage, err error) *Error {
	return &Error{Kind: ErrProtocol, Stage: stage, Err: err}
}

// AdapterErrorKind identifies one adapter failure (the reference's WorkerAdapterError). A kind
// is an error, so adapters may return a kind directly; its Error is "worker adapter: " and
// the variant name.
type AdapterErrorKind = errkind.Kind[adapterKinds]

// adapterKinds is the space of the adapter error kinds.
type adapterKinds struct{}

// Table describes the adapter error kinds.
func (adapterKinds) Table() *errkind.Table { return &adapterKindTable }

// The adapter failure kinds.
const (
	// AdapterUnsupported: the adapter does not implement the operation.
	AdapterUnsupported AdapterErrorKind = iota + 1
	// AdapterInvalidJSONInput: the input did not decode into the adapter's input type.
	AdapterInvalidJSONInput
	// AdapterInvalidJSONOutput: the output could not be encoded as a JSON object or array.
	AdapterInvalidJSONOutput
	// AdapterFailed: the adapter failed and knows its effect did not happen.
	AdapterFailed
	// AdapterIndeterminate: the adapter does not know whether its effect happened.
	AdapterIndeterminate
)

var adapterKindTable = errkind.Table{Type: "AdapterErrorKind", Prefix: "worker adapter: ", Kinds: []errkind.Entry{
	AdapterUnsupported:       {Name: "Unsupported"},
	AdapterInvalidJSONInput:  {Name: "InvalidJsonInput"},
	AdapterInvalidJSONOutput: {Name: "InvalidJsonOutput"},
	AdapterFailed:            {Name: "Failed"},
	AdapterIndeterminate:     {Name: "Indeterminate"},
}}

// AdapterError is an adapter failure with context. Operation names the operation of an
// Unsupported error; Reason is an optional explanation for logs (never payload bytes).
type AdapterError struct {
	errkind.Kind[adapterKinds]
	Operation string
	Reason    string
}

// Error describes the failure.
func (e *AdapterError) Error() string {
	s := "worker adapter: " + e.Kind.String()
	if e.Operation != "" {
		s += " (" + e.Operation + ")"
	}
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// Unsupported returns the error of an operation an adapter does not implement (WRK-004).
func Unsupported(operation string) error {
	return &AdapterError{Kind: AdapterUnsupported, Operation: operation}
}

// AdapterKindOf classifies an error returned by an adapter: its AdapterErrorKind when it has
// one, else AdapterFailed.
func AdapterKindOf(err error) AdapterErrorKind {
	if k, ok := errkind.Of[adapterKinds](err); ok {
		return k
	}
	return AdapterFailed
}
