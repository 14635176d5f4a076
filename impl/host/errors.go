package host

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/splashv5/conform/impl/errkind"
	"github.com/splashv5/conform/impl/script"
)

// ToolErrorKind classifies a failed tool call the way a script and the audit log observe it.
type ToolErrorKind = script.ToolErrorKind

// The four kinds of tool failure.
const (
	ToolDenied    = script.ToolDenied
	ToolFailed    = script.ToolFailed
	ToolCancelled = script.ToolCancelled
	ToolTimedOut  = script.ToolTimedOut
)

// ToolError is the failure of one tool call; its Error text is the message a script's error
// carries.
type ToolError = script.ToolError

// Denied returns a ToolDenied error.
func Denied(message string) *ToolError { return &ToolError{Kind: ToolDenied, Message: message} }

// Failed returns a ToolFailed error.
func Failed(message string) *ToolError { return &ToolError{Kind: ToolFailed, Message: message} }

// Cancelled returns a ToolCancelled error.
func Cancelled(message string) *ToolError {
	return &ToolError{Kind: ToolCancelled, Message: message}
}

// TimedOut returns a ToolTimedOut error.
func TimedOut(message string) *ToolError { return &ToolError{Kind: ToolTimedOut, Message: message} }

// asToolError converts a handler error: a *ToolError keeps its kind and message; any other error
// becomes a generic failure whose detail stays with the host.
func asToolError(tool string, err error) *ToolError {
	if te, ok := toolErrorOf(err); ok {
		return te
	}
	return Failed(tool + " handler failed")
}

// toolErrorOf extracts a well-formed *ToolError from err.
func toolErrorOf(err error) (*ToolError, bool) {
	var te *ToolError
	ok := errors.As(err, &te) && te != nil && te.Kind.Valid()
	return te, ok
}

// ExternalErrorKind names one reason a host call on an operation was refused.
type ExternalErrorKind = errkind.Kind[externalKinds]

type externalKinds struct{}

// Table describes the external operation error kinds.
func (externalKinds) Table() *errkind.Table { return &externalKindTable }

// The external operation error kinds, after the reference's ExternalToolError; each kind's
// meaning is its message in externalKindTable.
const (
	ErrUnknownOperation ExternalErrorKind = iota + 1
	ErrNotExternal
	ErrNotClaimed
	ErrAlreadyClaimed
	ErrAlreadyCompleted
	ErrInvalidPayload
	ErrRetryLimitReached
	ErrDeadlineElapsed
	ErrStreamingDisabled
	ErrStreamLimitExceeded
	ErrToolUnavailable
	ErrReconciliationMismatch
	ErrCancellationRequested
	ErrCancellationNotRequested
	ErrReconciliationRequiresHostAuthenticator
	ErrUnexpectedReconciliationMessage
	ErrProtocol
	ErrResume
)

var externalKindTable = errkind.Table{Type: "ExternalErrorKind", Prefix: "", Kinds: []errkind.Entry{
	ErrUnknownOperation:                        {Name: "Unknown", Message: "unknown external tool operation"},
	ErrNotExternal:                             {Name: "NotExternal", Message: "tool operation is not externally dispatched"},
	ErrNotClaimed:                              {Name: "NotClaimed", Message: "external tool operation has not been claimed"},
	ErrAlreadyClaimed:                          {Name: "AlreadyClaimed", Message: "external tool operation is already claimed"},
	ErrAlreadyCompleted:                        {Name: "AlreadyCompleted", Message: "external tool operation is already complete"},
	ErrInvalidPayload:                          {Name: "InvalidPayload", Message: "external tool operation has an invalid worker payload"},
	ErrRetryLimitReached:                       {Name: "RetryLimitReached", Message: "external tool operation exhausted its retry limit"},
	ErrDeadlineElapsed:                         {Name: "DeadlineElapsed", Message: "external tool operation deadline has elapsed"},
	ErrStreamingDisabled:                       {Name: "StreamingDisabled", Message: "external tool operation does not permit streaming"},
	ErrStreamLimitExceeded:                     {Name: "StreamLimitExceeded", Message: "external tool operation exceeded a stream limit"},
	ErrToolUnavailable:                         {Name: "ToolUnavailable", Message: "registered tool for external operation is unavailable"},
	ErrReconciliationMismatch:                  {Name: "ReconciliationMismatch", Message: "worker reconciliation does not match the claimed operation"},
	ErrCancellationRequested:                   {Name: "CancellationRequested", Message: "external tool cancellation has already been requested"},
	ErrCancellationNotRequested:                {Name: "CancellationNotRequested", Message: "external tool cancellation has not been requested"},
	ErrReconciliationRequiresHostAuthenticator: {Name: "ReconciliationRequiresHostAuthenticator", Message: "external reconciliation requires a host session authenticator"},
	ErrUnexpectedReconciliationMessage:         {Name: "UnexpectedReconciliationMessage", Message: "authenticated worker frame is not an operation reconciliation"},
	ErrProtocol:                                {Name: "Protocol", Message: "worker protocol rejected the operation"},
	ErrResume:                                  {Name: "Runtime", Message: "could not resume tool operation"},
}}

// ExternalError is a refused host call on one operation. ID is zero for the kinds that concern
// no particular operation (the authenticator and message kinds). Err holds the protocol error of
// ErrProtocol and the evaluator error of ErrResume.
type ExternalError struct {
	errkind.Kind[externalKinds]
	ID  OperationID
	Err error
}

// Error describes the refusal.
func (e *ExternalError) Error() string {
	msg := e.Kind.Error()
	if e.ID != 0 {
		msg += " (operation " + strconv.FormatUint(uint64(e.ID), 10) + ")"
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the wrapped protocol or evaluator error.
func (e *ExternalError) Unwrap() error { return e.Err }

// RegistrationErrorKind names one tool registration rule.
type RegistrationErrorKind = errkind.Kind[registrationKinds]

type registrationKinds struct{}

// Table describes the registration error kinds.
func (registrationKinds) Table() *errkind.Table { return &registrationKindTable }

// The registration error kinds, after the reference's ToolRegistrationError.
const (
	ErrDuplicateTool RegistrationErrorKind = iota + 1
	ErrInvalidName
	ErrInvalidPolicy
	ErrInvalidMetadata
	ErrNonceUnavailable
	ErrCatalogToolLimitExceeded
	ErrCatalogByteLimitExceeded
	ErrIncompatibleWorkerGrant
	ErrActiveCapabilityLease
)

var registrationKindTable = errkind.Table{Type: "RegistrationErrorKind", Prefix: "tool registration: ", Kinds: []errkind.Entry{
	ErrDuplicateTool:            {Name: "Duplicate", Detail: "tool already registered: {name}"},
	ErrInvalidName:              {Name: "InvalidName", Detail: "invalid tool name: {quoted}"},
	ErrInvalidPolicy:            {Name: "InvalidPolicy", Detail: "{message}"},
	ErrInvalidMetadata:          {Name: "InvalidMetadata", Detail: "{message}"},
	ErrNonceUnavailable:         {Name: "ExternalIdempotencyNonceUnavailable", Detail: "externally dispatched tools require operating-system entropy or a host-supplied capability session nonce"},
	ErrCatalogToolLimitExceeded: {Name: "CatalogToolLimitExceeded", Detail: "tool catalog exceeds its maximum of {maximum} tools"},
	ErrCatalogByteLimitExceeded: {Name: "CatalogByteLimitExceeded", Detail: "tool catalog is {actual} bytes but its maximum is {maximum} bytes"},
	ErrIncompatibleWorkerGrant:  {Name: "IncompatibleWorkerGrant", Detail: "worker manifest cannot safely back tool: {name}"},
	ErrActiveCapabilityLease:    {Name: "ActiveCapabilityLease", Detail: "cannot change the tool catalog while a capability lease is active"},
}}

// RegistrationError rejects a tool registration. Nothing is retained when registration fails.
type RegistrationError struct {
	errkind.Kind[registrationKinds]
	Name    string // the tool name (Duplicate, InvalidName, IncompatibleWorkerGrant)
	Message string // the rule broken (InvalidPolicy, InvalidMetadata)
	Actual  int    // CatalogByteLimitExceeded
	Maximum int    // CatalogToolLimitExceeded, CatalogByteLimitExceeded
}

// Error describes the rejection.
func (e *RegistrationError) Error() string {
	return e.Kind.Expand("name", e.Name, "quoted", strconv.Quote(e.Name), "message", e.Message, "actual", e.Actual, "maximum", e.Maximum)
}

// StreamConfigErrorKind names one reason SetExternalStreamRedactor refused.
type StreamConfigErrorKind = errkind.Kind[streamConfigKinds]

type streamConfigKinds struct{}

// Table describes the stream configuration error kinds.
func (streamConfigKinds) Table() *errkind.Table { return &streamConfigKindTable }

// The stream configuration error kinds.
const (
	ErrStreamUnknownTool StreamConfigErrorKind = iota + 1
	ErrStreamNotExternal
	ErrStreamDisabled
	ErrStreamAlreadyReserved
)

var streamConfigKindTable = errkind.Table{Type: "StreamConfigErrorKind", Prefix: "stream configuration: ", Kinds: []errkind.Entry{
	ErrStreamUnknownTool:     {Name: "UnknownTool", Detail: "unknown tool: {name}"},
	ErrStreamNotExternal:     {Name: "NotExternal", Detail: "tool is not external: {name}"},
	ErrStreamDisabled:        {Name: "StreamingDisabled", Detail: "tool does not permit streaming: {name}"},
	ErrStreamAlreadyReserved: {Name: "AlreadyReserved", Detail: "stream redactor must be set before the tool is reserved: {name}"},
}}

// StreamConfigError rejects a stream redactor installation.
type StreamConfigError struct {
	errkind.Kind[streamConfigKinds]
	Name string
}

// Error describes the rejection.
func (e *StreamConfigError) Error() string { return e.Kind.Expand("name", e.Name) }

// NonceErrorKind classifies a rejected host-supplied session nonce.
type NonceErrorKind = errkind.Kind[nonceKinds]

type nonceKinds struct{}

// Table describes the session nonce error kinds.
func (nonceKinds) Table() *errkind.Table { return &nonceKindTable }

// ErrNonceTooShort and ErrNonceTooLong classify a rejected host-supplied session nonce.
const (
	ErrNonceTooShort NonceErrorKind = iota + 1
	ErrNonceTooLong
)

var nonceKindTable = errkind.Table{Type: "NonceErrorKind", Prefix: "capability session nonce ", Kinds: []errkind.Entry{
	ErrNonceTooShort: {Name: "TooShort", Message: "too short", Detail: "capability session nonce is {actual} bytes; minimum is {limit} bytes"},
	ErrNonceTooLong:  {Name: "TooLong", Message: "too long", Detail: "capability session nonce is {actual} bytes; maximum is {limit} bytes"},
}}

// NonceError rejects a host-supplied session nonce by length. It never contains nonce bytes.
type NonceError struct {
	errkind.Kind[nonceKinds]
	Actual int
	Limit  int // the minimum (too short) or the maximum (too long)
}

// Error describes the rejection.
func (e *NonceError) Error() string { return e.Kind.Expand("actual", e.Actual, "limit", e.Limit) }

// ErrInvalidLimits rejects an unusable runtime configuration or audit capacity.
var ErrInvalidLimits = errors.New("host runtime: invalid limits")

func invalidLimits(msg string) error { return fmt.Errorf("%w: %s", ErrInvalidLimits, msg) }
