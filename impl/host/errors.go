package host

import (
	"errors"
	"fmt"
	"strconv"
)

// ToolErrorKind classifies a failed tool call the way a script and the audit log observe it.
type ToolErrorKind uint8

// The four kinds of tool failure.
const (
	// ToolDenied is a reservation, policy or output-validation denial.
	ToolDenied ToolErrorKind = iota + 1
	// ToolFailed is a handler, worker or host failure.
	ToolFailed
	// ToolCancelled is a cancelled operation.
	ToolCancelled
	// ToolTimedOut is an operation that exceeded its deferred deadline.
	ToolTimedOut
)

// String returns "Denied", "Failed", "Cancelled" or "TimedOut".
func (k ToolErrorKind) String() string {
	switch k {
	case ToolDenied:
		return "Denied"
	case ToolFailed:
		return "Failed"
	case ToolCancelled:
		return "Cancelled"
	case ToolTimedOut:
		return "TimedOut"
	}
	return "ToolErrorKind(" + strconv.Itoa(int(k)) + ")"
}

// ToolError is the failure of one tool call. Its Error text is the message a script's error
// carries: "tool call denied: …", "tool call failed: …", "tool call cancelled: …" or
// "tool call timed out: …".
type ToolError struct {
	Kind    ToolErrorKind
	Message string
}

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

// externalCancelledMessage is the message of an external operation settled as cancelled.
const externalCancelledMessage = "external operation was reported cancelled"

func timeoutError(tool string) *ToolError {
	return TimedOut(tool + " exceeded its deferred deadline")
}

// Error renders the error as a script sees it.
func (e *ToolError) Error() string {
	switch e.Kind {
	case ToolDenied:
		return "tool call denied: " + e.Message
	case ToolFailed:
		return "tool call failed: " + e.Message
	case ToolCancelled:
		return "tool call cancelled: " + e.Message
	case ToolTimedOut:
		return "tool call timed out: " + e.Message
	}
	return "tool call error: " + e.Message
}

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
	if errors.As(err, &te) && te != nil && te.Kind >= ToolDenied && te.Kind <= ToolTimedOut {
		return te, true
	}
	return nil, false
}

// ExternalErrorKind names one reason a host call on an operation was refused. It implements
// error, so it is an errors.Is target: errors.Is(err, ErrNotClaimed).
type ExternalErrorKind uint8

// The external operation error kinds, after the reference's ExternalToolError.
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

var externalKindNames = [...]string{
	ErrUnknownOperation:                        "Unknown",
	ErrNotExternal:                             "NotExternal",
	ErrNotClaimed:                              "NotClaimed",
	ErrAlreadyClaimed:                          "AlreadyClaimed",
	ErrAlreadyCompleted:                        "AlreadyCompleted",
	ErrInvalidPayload:                          "InvalidPayload",
	ErrRetryLimitReached:                       "RetryLimitReached",
	ErrDeadlineElapsed:                         "DeadlineElapsed",
	ErrStreamingDisabled:                       "StreamingDisabled",
	ErrStreamLimitExceeded:                     "StreamLimitExceeded",
	ErrToolUnavailable:                         "ToolUnavailable",
	ErrReconciliationMismatch:                  "ReconciliationMismatch",
	ErrCancellationRequested:                   "CancellationRequested",
	ErrCancellationNotRequested:                "CancellationNotRequested",
	ErrReconciliationRequiresHostAuthenticator: "ReconciliationRequiresHostAuthenticator",
	ErrUnexpectedReconciliationMessage:         "UnexpectedReconciliationMessage",
	ErrProtocol:                                "Protocol",
	ErrResume:                                  "Runtime",
}

var externalKindMessages = [...]string{
	ErrUnknownOperation:                        "unknown external tool operation",
	ErrNotExternal:                             "tool operation is not externally dispatched",
	ErrNotClaimed:                              "external tool operation has not been claimed",
	ErrAlreadyClaimed:                          "external tool operation is already claimed",
	ErrAlreadyCompleted:                        "external tool operation is already complete",
	ErrInvalidPayload:                          "external tool operation has an invalid worker payload",
	ErrRetryLimitReached:                       "external tool operation exhausted its retry limit",
	ErrDeadlineElapsed:                         "external tool operation deadline has elapsed",
	ErrStreamingDisabled:                       "external tool operation does not permit streaming",
	ErrStreamLimitExceeded:                     "external tool operation exceeded a stream limit",
	ErrToolUnavailable:                         "registered tool for external operation is unavailable",
	ErrReconciliationMismatch:                  "worker reconciliation does not match the claimed operation",
	ErrCancellationRequested:                   "external tool cancellation has already been requested",
	ErrCancellationNotRequested:                "external tool cancellation has not been requested",
	ErrReconciliationRequiresHostAuthenticator: "external reconciliation requires a host session authenticator",
	ErrUnexpectedReconciliationMessage:         "authenticated worker frame is not an operation reconciliation",
	ErrProtocol:                                "worker protocol rejected the operation",
	ErrResume:                                  "could not resume tool operation",
}

// String returns the reference variant name ("NotClaimed", …).
func (k ExternalErrorKind) String() string {
	if int(k) < len(externalKindNames) && externalKindNames[k] != "" {
		return externalKindNames[k]
	}
	return "ExternalErrorKind(" + strconv.Itoa(int(k)) + ")"
}

// Error returns the kind's message.
func (k ExternalErrorKind) Error() string {
	if int(k) < len(externalKindMessages) && externalKindMessages[k] != "" {
		return externalKindMessages[k]
	}
	return k.String()
}

// ExternalError is a refused host call on one operation. ID is zero for the kinds that concern
// no particular operation (the authenticator and message kinds). Err holds the protocol error of
// ErrProtocol and the evaluator error of ErrResume.
type ExternalError struct {
	Kind ExternalErrorKind
	ID   OperationID
	Err  error
}

func externalError(kind ExternalErrorKind, id OperationID) *ExternalError {
	return &ExternalError{Kind: kind, ID: id}
}

func protocolError(id OperationID, err error) *ExternalError {
	return &ExternalError{Kind: ErrProtocol, ID: id, Err: err}
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

// Is matches the error's kind.
func (e *ExternalError) Is(target error) bool {
	k, ok := target.(ExternalErrorKind)
	return ok && k == e.Kind
}

// Unwrap returns the wrapped protocol or evaluator error.
func (e *ExternalError) Unwrap() error { return e.Err }

// RegistrationErrorKind names one registration rule. It implements error for errors.Is.
type RegistrationErrorKind uint8

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

var registrationKindNames = [...]string{
	ErrDuplicateTool:            "Duplicate",
	ErrInvalidName:              "InvalidName",
	ErrInvalidPolicy:            "InvalidPolicy",
	ErrInvalidMetadata:          "InvalidMetadata",
	ErrNonceUnavailable:         "ExternalIdempotencyNonceUnavailable",
	ErrCatalogToolLimitExceeded: "CatalogToolLimitExceeded",
	ErrCatalogByteLimitExceeded: "CatalogByteLimitExceeded",
	ErrIncompatibleWorkerGrant:  "IncompatibleWorkerGrant",
	ErrActiveCapabilityLease:    "ActiveCapabilityLease",
}

// String returns the reference variant name.
func (k RegistrationErrorKind) String() string {
	if int(k) < len(registrationKindNames) && registrationKindNames[k] != "" {
		return registrationKindNames[k]
	}
	return "RegistrationErrorKind(" + strconv.Itoa(int(k)) + ")"
}

// Error returns the variant name.
func (k RegistrationErrorKind) Error() string { return "tool registration: " + k.String() }

// RegistrationError rejects a tool registration. Nothing is retained when registration fails.
type RegistrationError struct {
	Kind    RegistrationErrorKind
	Name    string // the tool name (Duplicate, InvalidName, IncompatibleWorkerGrant)
	Message string // the rule broken (InvalidPolicy, InvalidMetadata)
	Actual  int    // CatalogByteLimitExceeded
	Maximum int    // CatalogToolLimitExceeded, CatalogByteLimitExceeded
}

// Error describes the rejection.
func (e *RegistrationError) Error() string {
	switch e.Kind {
	case ErrDuplicateTool:
		return "tool already registered: " + e.Name
	case ErrInvalidName:
		return "invalid tool name: " + strconv.Quote(e.Name)
	case ErrInvalidPolicy, ErrInvalidMetadata:
		return e.Message
	case ErrNonceUnavailable:
		return "externally dispatched tools require operating-system entropy or a host-supplied capability session nonce"
	case ErrCatalogToolLimitExceeded:
		return fmt.Sprintf("tool catalog exceeds its maximum of %d tools", e.Maximum)
	case ErrCatalogByteLimitExceeded:
		return fmt.Sprintf("tool catalog is %d bytes but its maximum is %d bytes", e.Actual, e.Maximum)
	case ErrIncompatibleWorkerGrant:
		return "worker manifest cannot safely back tool: " + e.Name
	case ErrActiveCapabilityLease:
		return "cannot change the tool catalog while a capability lease is active"
	}
	return e.Kind.Error()
}

// Is matches the error's kind.
func (e *RegistrationError) Is(target error) bool {
	k, ok := target.(RegistrationErrorKind)
	return ok && k == e.Kind
}

// StreamConfigErrorKind names one reason SetExternalStreamRedactor refused. It implements error.
type StreamConfigErrorKind uint8

// The stream configuration error kinds.
const (
	ErrStreamUnknownTool StreamConfigErrorKind = iota + 1
	ErrStreamNotExternal
	ErrStreamDisabled
	ErrStreamAlreadyReserved
)

// String returns the reference variant name.
func (k StreamConfigErrorKind) String() string {
	switch k {
	case ErrStreamUnknownTool:
		return "UnknownTool"
	case ErrStreamNotExternal:
		return "NotExternal"
	case ErrStreamDisabled:
		return "StreamingDisabled"
	case ErrStreamAlreadyReserved:
		return "AlreadyReserved"
	}
	return "StreamConfigErrorKind(" + strconv.Itoa(int(k)) + ")"
}

// Error returns the variant name.
func (k StreamConfigErrorKind) Error() string { return "stream configuration: " + k.String() }

// StreamConfigError rejects a stream redactor installation.
type StreamConfigError struct {
	Kind StreamConfigErrorKind
	Name string
}

// Error describes the rejection.
func (e *StreamConfigError) Error() string {
	switch e.Kind {
	case ErrStreamUnknownTool:
		return "unknown tool: " + e.Name
	case ErrStreamNotExternal:
		return "tool is not external: " + e.Name
	case ErrStreamDisabled:
		return "tool does not permit streaming: " + e.Name
	case ErrStreamAlreadyReserved:
		return "stream redactor must be set before the tool is reserved: " + e.Name
	}
	return e.Kind.Error()
}

// Is matches the error's kind.
func (e *StreamConfigError) Is(target error) bool {
	k, ok := target.(StreamConfigErrorKind)
	return ok && k == e.Kind
}

// ErrNonceTooShort and ErrNonceTooLong classify a rejected host-supplied session nonce.
var (
	ErrNonceTooShort = errors.New("capability session nonce too short")
	ErrNonceTooLong  = errors.New("capability session nonce too long")
)

// NonceError rejects a host-supplied session nonce by length. It never contains nonce bytes.
type NonceError struct {
	Actual int
	Limit  int  // the minimum (too short) or the maximum (too long)
	Long   bool // true when the nonce is too long
}

// Error describes the rejection.
func (e *NonceError) Error() string {
	if e.Long {
		return fmt.Sprintf("capability session nonce is %d bytes; maximum is %d bytes", e.Actual, e.Limit)
	}
	return fmt.Sprintf("capability session nonce is %d bytes; minimum is %d bytes", e.Actual, e.Limit)
}

// Is matches ErrNonceTooShort or ErrNonceTooLong.
func (e *NonceError) Is(target error) bool {
	if e.Long {
		return target == ErrNonceTooLong
	}
	return target == ErrNonceTooShort
}

// ErrInvalidLimits rejects an unusable runtime configuration or audit capacity.
var ErrInvalidLimits = errors.New("host runtime: invalid limits")

func invalidLimits(msg string) error { return fmt.Errorf("%w: %s", ErrInvalidLimits, msg) }
