package worker

import (
	"strconv"

	"github.com/splashv5/conform/impl/errkind"
)

// ErrorKind identifies one failure rule of the worker runtime: a variant of the reference's
// session opening, session, registry, limits, journal-store or cancellable driver errors.
type ErrorKind = errkind.Kind[kinds]

type kinds struct{}

// Table describes the worker runtime's error kinds.
func (kinds) Table() *errkind.Table { return &kindTable }

// The worker runtime's error kinds; a kind's meaning, and the Error field it fills, is its name
// and the Doc of its entry in kindTable.
const (
	// Registry and configuration.
	ErrInvalidTool ErrorKind = iota + 1
	ErrDuplicateTool
	ErrZeroPerToolReconciliationLimit
	ErrZeroSessionReconciliationLimit

	// Session opening (WRK-010 to WRK-016).
	ErrRequiresWorkerAuthenticator
	ErrUnexpectedOpeningMessage
	ErrMissingAdapter
	ErrAdmission
	ErrInvalidJournalLease

	// Frame handling (WRK-020 to WRK-073).
	ErrProtocol
	ErrJournal
	ErrInvalidJournalRevision
	ErrSessionPoisoned
	ErrInvocationSafetyNotDeclared
	ErrDurableOperationContractNotDeclared
	ErrAdapter
	ErrIndeterminateOperation
	ErrIndeterminateCompensation
	ErrPendingOperation
	ErrPendingCompensation
	ErrReconciliationBudgetExhausted
	ErrReconciliationSessionBudgetExhausted
	ErrUnexpectedMessage

	// Journal store (WRK-080 to WRK-083).
	ErrInvalidJournalEncoding
	ErrStorage
	ErrJournalFormat

	// Cancellable driver (CAN-001 to CAN-021).
	ErrAdapterNotCancellable
	ErrCancellationWithoutTarget
	ErrUnrequestedAcknowledgement
	ErrCloseWhileInvocationActive
	ErrAdapterPanicked
	ErrFrame
	ErrWrite
	ErrEndOfInput
)

var kindTable = errkind.Table{Type: "ErrorKind", Prefix: "worker: ", Kinds: []errkind.Entry{
	ErrInvalidTool:                          {Name: "InvalidTool", Doc: "an adapter's name is not a token"},
	ErrDuplicateTool:                        {Name: "DuplicateTool", Doc: "an adapter was registered twice under one name"},
	ErrZeroPerToolReconciliationLimit:       {Name: "ZeroPerToolReconciliationLimit"},
	ErrZeroSessionReconciliationLimit:       {Name: "ZeroSessionReconciliationLimit"},
	ErrRequiresWorkerAuthenticator:          {Name: "RequiresWorkerAuthenticator", Doc: "the authenticator's role is not worker"},
	ErrUnexpectedOpeningMessage:             {Name: "UnexpectedOpeningMessage", Doc: "the first authenticated message is not open_session"},
	ErrMissingAdapter:                       {Name: "MissingAdapter", Doc: "a granted tool has no registered adapter"},
	ErrAdmission:                            {Name: "Admission", Doc: "the admission policy refused the session; Err holds its reason"},
	ErrInvalidJournalLease:                  {Name: "InvalidJournalLease", Doc: "admission returned the fencing token 0"},
	ErrProtocol:                             {Name: "Protocol", Doc: "a protocol rule rejected the frame; Err holds the *protocol.Error, Stage says where"},
	ErrJournal:                              {Name: "Journal", Doc: "the journal store failed to persist; Err holds its error. Poisons the session"},
	ErrInvalidJournalRevision:               {Name: "InvalidJournalRevision", Doc: "the store returned a revision not greater than Expected. Poisons the session"},
	ErrSessionPoisoned:                      {Name: "SessionPoisoned", Doc: "an earlier persistence failure poisoned the session"},
	ErrInvocationSafetyNotDeclared:          {Name: "InvocationSafetyNotDeclared"},
	ErrDurableOperationContractNotDeclared:  {Name: "DurableOperationContractNotDeclared"},
	ErrAdapter:                              {Name: "Adapter", Doc: "the adapter failed; Err holds its error"},
	ErrIndeterminateOperation:               {Name: "IndeterminateOperation", Doc: "a dispatch's effect is unknown; Err holds the cause"},
	ErrIndeterminateCompensation:            {Name: "IndeterminateCompensation", Doc: "a compensation's effect is unknown; Err holds the cause"},
	ErrPendingOperation:                     {Name: "PendingOperation", Doc: "an exact duplicate dispatch found its record still pending"},
	ErrPendingCompensation:                  {Name: "PendingCompensation", Doc: "an exact duplicate compensation found its record still pending"},
	ErrReconciliationBudgetExhausted:        {Name: "ReconciliationBudgetExhausted", Doc: "the per-tool budget is spent"},
	ErrReconciliationSessionBudgetExhausted: {Name: "ReconciliationSessionBudgetExhausted", Doc: "the per-session budget is spent"},
	ErrUnexpectedMessage:                    {Name: "UnexpectedMessage", Doc: "MessageType is not handled in this state"},
	ErrInvalidJournalEncoding:               {Name: "InvalidJournalEncoding", Doc: "the stored journal payload is not UTF-8"},
	ErrStorage:                              {Name: "Storage", Doc: "the authenticated store failed; Err holds its error"},
	ErrJournalFormat:                        {Name: "JournalFormat", Doc: "the journal breaks a journal rule; Err holds the protocol error"},
	ErrAdapterNotCancellable:                {Name: "AdapterNotCancellable", Doc: "the tool's adapter was not registered as cancellable"},
	ErrCancellationWithoutTarget:            {Name: "CancellationWithoutTarget", Doc: "a cancel arrived with no active or completed invocation"},
	ErrUnrequestedAcknowledgement:           {Name: "UnrequestedAcknowledgement", Doc: "the adapter acknowledged a cancellation nobody asked for"},
	ErrCloseWhileInvocationActive:           {Name: "CloseWhileInvocationActive", Doc: "close_session arrived while an invocation was running"},
	ErrAdapterPanicked:                      {Name: "AdapterPanicked"},
	ErrFrame:                                {Name: "Frame", Doc: "a frame line could not be read (I/O, size, UTF-8, end of input); Err holds the transport error"},
	ErrWrite:                                {Name: "Write", Doc: "an answer frame could not be written; Err holds the I/O error"},
	ErrEndOfInput:                           {Name: "EndOfInput", Doc: "the input ended cleanly at a line boundary; Active says whether an invocation ran"},
}}

// Stage says at which step of a flow a protocol error was raised. It decides the exit class
// of an ErrProtocol error (WRK-092).
type Stage uint8

// The stages of a flow.
const (
	StageNone      Stage = iota // not a protocol error
	StageOpen                   // the authenticator refused the frame (tag, session, sequence, decoding)
	StageManifest               // the opening manifest is invalid
	StageAuthorize              // the session authorizer refused the request
	StageJournal                // the journal refused an admission or a reconciliation
	StageObserve                // the journal refused the status an adapter reported
	StageResult                 // the answer built from an adapter's output failed validation
	StageSeal                   // the answer could not be sealed
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
	Stage                         Stage  // where an ErrProtocol error was raised
	Tool                          string // the tool the kind concerns
	OperationKey, CompensationKey string // the keys of the indeterminate and pending kinds
	MessageType                   string // the message kind of UnexpectedMessage
	Expected, Actual              uint64 // the revisions of InvalidJournalRevision
	Maximum                       uint32 // the limit of the reconciliation budget kinds
	Active                        bool   // EndOfInput and Frame: whether an invocation was running
	Err                           error  // the cause: a protocol, adapter, store, admission or transport error
}

// Error describes the failure for logs.
func (e *Error) Error() string {
	msg := "worker: " + e.Kind.String()
	if e.Stage != StageNone {
		msg += " (" + e.Stage.String() + ")"
	}
	for _, f := range [...][2]string{{" tool=", e.Tool}, {" operation_key=", e.OperationKey}, {" compensation_key=", e.CompensationKey}, {" message=", e.MessageType}} {
		if f[1] != "" {
			msg += f[0] + f[1]
		}
	}
	switch e.Kind {
	case ErrInvalidJournalRevision:
		msg += " expected=" + strconv.FormatUint(e.Expected, 10) + " actual=" + strconv.FormatUint(e.Actual, 10)
	case ErrReconciliationBudgetExhausted, ErrReconciliationSessionBudgetExhausted:
		msg += " maximum=" + strconv.FormatUint(uint64(e.Maximum), 10)
	case ErrEndOfInput, ErrFrame:
		if e.Active {
			msg += " while an invocation was active"
		}
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause, so errors.Is also matches protocol, adapter and store kinds.
func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the kind of the outermost worker Error (or ErrorKind) in err's chain.
func KindOf(err error) (ErrorKind, bool) { return errkind.Of[kinds](err) }

// AdapterErrorKind identifies one adapter failure (the reference's WorkerAdapterError); an
// adapter may return a kind directly.
type AdapterErrorKind = errkind.Kind[adapterKinds]

type adapterKinds struct{}

// Table describes the adapter error kinds.
func (adapterKinds) Table() *errkind.Table { return &adapterKindTable }

// The adapter failure kinds; see adapterKindTable.
const (
	AdapterUnsupported AdapterErrorKind = iota + 1
	AdapterInvalidJSONInput
	AdapterInvalidJSONOutput
	AdapterFailed
	AdapterIndeterminate
)

var adapterKindTable = errkind.Table{Type: "AdapterErrorKind", Prefix: "worker adapter: ", Kinds: []errkind.Entry{
	AdapterUnsupported:       {Name: "Unsupported", Doc: "the adapter does not implement the operation"},
	AdapterInvalidJSONInput:  {Name: "InvalidJsonInput", Doc: "the input did not decode into the adapter's input type"},
	AdapterInvalidJSONOutput: {Name: "InvalidJsonOutput", Doc: "the output could not be encoded as a JSON object or array"},
	AdapterFailed:            {Name: "Failed", Doc: "the adapter failed and knows its effect did not happen"},
	AdapterIndeterminate:     {Name: "Indeterminate", Doc: "the adapter does not know whether its effect happened"},
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
