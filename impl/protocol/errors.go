package protocol

import (
	"errors"
	"strconv"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/derive"
	"github.com/splashv5/conform/impl/errkind"
)

// ErrorKind names one variant of the Rust reference's ProtocolError. It is an error, so a
// kind is a target for errors.Is: errors.Is(err, ErrInvalidToken). Its String is the variant
// name and its Error "protocol: " and the name.
type ErrorKind = errkind.Kind[kinds]

// kinds is the space of the ProtocolError variants.
type kinds struct{}

// Table describes the ProtocolError variants.
func (kinds) Table() *errkind.Table { return &kindTable }

// The ProtocolError variants, in the reference's declaration order. The zero ErrorKind is
// not a variant.
const (
	ErrUnsupportedVersion ErrorKind = iota + 1
	ErrInvalidToken
	ErrDuplicateGrant
	ErrInvalidGrant
	ErrTooManyGrants
	ErrTooManyResources
	ErrAttenuationWidensLimits
	ErrAttenuationExpandsResources
	ErrUnknownSession
	ErrUnknownTool
	ErrInvalidSessionKeyLength
	ErrWeakSessionKey
	ErrInvalidSequence
	ErrSequenceExhausted
	ErrUnexpectedSequence
	ErrInvalidAuthenticationTag
	ErrAuthorizationProvenanceMismatch
	ErrDuplicateRequest
	ErrSessionRequestLimitExceeded
	ErrDuplicateResult
	ErrCancellationIdMatchesRequest
	ErrCancellationTargetMismatch
	ErrCancellationResultMismatch
	ErrRequestAlreadyCancelled
	ErrCancellationAlreadyRequested
	ErrResultAfterCancellation
	ErrCancellationAcknowledgedAfterResult
	ErrCancellationTooLateBeforeResult
	ErrCancellationUnsupportedAfterResult
	ErrOperationResultMismatch
	ErrInvalidCompensationKey
	ErrInvalidCompensationGrantFingerprint
	ErrCompensationNotGranted
	ErrCompensationBudgetExhausted
	ErrCompensationGrantMismatch
	ErrCompensationResultMismatch
	ErrCompensationToolMismatch
	ErrCompensationRequiresSucceededOperation
	ErrUnknownCompensation
	ErrCompensationIdentityMismatch
	ErrInvalidWorkerCompensationTransition
	ErrUnsupportedOperationJournalVersion
	ErrOperationJournalTooLarge
	ErrOperationJournalScopeMismatch
	ErrTooManyWorkerOperations
	ErrInvalidOperationFingerprint
	ErrDuplicateOperationKey
	ErrUnknownOperation
	ErrOperationIdentityMismatch
	ErrInvalidWorkerOperationTransition
	ErrPayloadFormatMismatch
	ErrInvalidJsonEnvelope
	ErrJsonPayloadTooDeep
	ErrInvalidOperationFailure
	ErrOperationFailureTooLarge
	ErrInputTooLarge
	ErrOutputTooLarge
	ErrCallBudgetExhausted
	ErrRequestMismatch
	ErrWireFrameTooLarge
	ErrSerialization

	errorKindEnd // one past the last variant
)

// NumErrorKinds is the number of ProtocolError variants.
const NumErrorKinds = int(errorKindEnd) - 1

var kindTable = errkind.Table{Type: "ErrorKind", Prefix: "protocol: ", Kinds: []errkind.Entry{
	ErrUnsupportedVersion:                     {Name: "UnsupportedVersion"},
	ErrInvalidToken:                           {Name: "InvalidToken"},
	ErrDuplicateGrant:                         {Name: "DuplicateGrant"},
	ErrInvalidGrant:                           {Name: "InvalidGrant"},
	ErrTooManyGrants:                          {Name: "TooManyGrants"},
	ErrTooManyResources:                       {Name: "TooManyResources"},
	ErrAttenuationWidensLimits:                {Name: "AttenuationWidensLimits"},
	ErrAttenuationExpandsResources:            {Name: "AttenuationExpandsResources"},
	ErrUnknownSession:                         {Name: "UnknownSession"},
	ErrUnknownTool:                            {Name: "UnknownTool"},
	ErrInvalidSessionKeyLength:                {Name: "InvalidSessionKeyLength"},
	ErrWeakSessionKey:                         {Name: "WeakSessionKey"},
	ErrInvalidSequence:                        {Name: "InvalidSequence"},
	ErrSequenceExhausted:                      {Name: "SequenceExhausted"},
	ErrUnexpectedSequence:                     {Name: "UnexpectedSequence"},
	ErrInvalidAuthenticationTag:               {Name: "InvalidAuthenticationTag"},
	ErrAuthorizationProvenanceMismatch:        {Name: "AuthorizationProvenanceMismatch"},
	ErrDuplicateRequest:                       {Name: "DuplicateRequest"},
	ErrSessionRequestLimitExceeded:            {Name: "SessionRequestLimitExceeded"},
	ErrDuplicateResult:                        {Name: "DuplicateResult"},
	ErrCancellationIdMatchesRequest:           {Name: "CancellationIdMatchesRequest"},
	ErrCancellationTargetMismatch:             {Name: "CancellationTargetMismatch"},
	ErrCancellationResultMismatch:             {Name: "CancellationResultMismatch"},
	ErrRequestAlreadyCancelled:                {Name: "RequestAlreadyCancelled"},
	ErrCancellationAlreadyRequested:           {Name: "CancellationAlreadyRequested"},
	ErrResultAfterCancellation:                {Name: "ResultAfterCancellation"},
	ErrCancellationAcknowledgedAfterResult:    {Name: "CancellationAcknowledgedAfterResult"},
	ErrCancellationTooLateBeforeResult:        {Name: "CancellationTooLateBeforeResult"},
	ErrCancellationUnsupportedAfterResult:     {Name: "CancellationUnsupportedAfterResult"},
	ErrOperationResultMismatch:                {Name: "OperationResultMismatch"},
	ErrInvalidCompensationKey:                 {Name: "InvalidCompensationKey"},
	ErrInvalidCompensationGrantFingerprint:    {Name: "InvalidCompensationGrantFingerprint"},
	ErrCompensationNotGranted:                 {Name: "CompensationNotGranted"},
	ErrCompensationBudgetExhausted:            {Name: "CompensationBudgetExhausted"},
	ErrCompensationGrantMismatch:              {Name: "CompensationGrantMismatch"},
	ErrCompensationResultMismatch:             {Name: "CompensationResultMismatch"},
	ErrCompensationToolMismatch:               {Name: "CompensationToolMismatch"},
	ErrCompensationRequiresSucceededOperation: {Name: "CompensationRequiresSucceededOperation"},
	ErrUnknownCompensation:                    {Name: "UnknownCompensation"},
	ErrCompensationIdentityMismatch:           {Name: "CompensationIdentityMismatch"},
	ErrInvalidWorkerCompensationTransition:    {Name: "InvalidWorkerCompensationTransition"},
	ErrUnsupportedOperationJournalVersion:     {Name: "UnsupportedOperationJournalVersion"},
	ErrOperationJournalTooLarge:               {Name: "OperationJournalTooLarge"},
	ErrOperationJournalScopeMismatch:          {Name: "OperationJournalScopeMismatch"},
	ErrTooManyWorkerOperations:                {Name: "TooManyWorkerOperations"},
	ErrInvalidOperationFingerprint:            {Name: "InvalidOperationFingerprint"},
	ErrDuplicateOperationKey:                  {Name: "DuplicateOperationKey"},
	ErrUnknownOperation:                       {Name: "UnknownOperation"},
	ErrOperationIdentityMismatch:              {Name: "OperationIdentityMismatch"},
	ErrInvalidWorkerOperationTransition:       {Name: "InvalidWorkerOperationTransition"},
	ErrPayloadFormatMismatch:                  {Name: "PayloadFormatMismatch"},
	ErrInvalidJsonEnvelope:                    {Name: "InvalidJsonEnvelope"},
	ErrJsonPayloadTooDeep:                     {Name: "JsonPayloadTooDeep"},
	ErrInvalidOperationFailure:                {Name: "InvalidOperationFailure"},
	ErrOperationFailureTooLarge:               {Name: "OperationFailureTooLarge"},
	ErrInputTooLarge:                          {Name: "InputTooLarge"},
	ErrOutputTooLarge:                         {Name: "OutputTooLarge"},
	ErrCallBudgetExhausted:                    {Name: "CallBudgetExhausted"},
	ErrRequestMismatch:                        {Name: "RequestMismatch"},
	ErrWireFrameTooLarge:                      {Name: "WireFrameTooLarge"},
	ErrSerialization:                          {Name: "Serialization"},
}}

// ParseErrorKind returns the kind whose variant name is name.
func ParseErrorKind(name string) (ErrorKind, bool) { return errkind.Parse[kinds](name) }

// ErrorKinds returns every kind in declaration order.
func ErrorKinds() []ErrorKind { return errkind.All[kinds]() }

// Error is a ProtocolError: its Kind and the fields that variant carries. Fields a variant
// does not carry stay zero. An Error never holds key material.
//
// Which field holds what:
//   - Field: the token label of InvalidToken ("session id", "tool", ...).
//   - Value: the variant's one string. The rejected value of InvalidToken; the tool of
//     DuplicateGrant, UnknownTool, CompensationNotGranted, CompensationBudgetExhausted and
//     CallBudgetExhausted; the session of UnknownSession; the request or cancellation id of
//     DuplicateRequest, DuplicateResult and the cancellation-state variants; the operation key
//     of the journal variants.
//   - Actual, Expected, Maximum: the numbers of UnsupportedVersion (Actual),
//     InvalidSessionKeyLength, UnexpectedSequence, the size and count limits, and
//     UnsupportedOperationJournalVersion (Actual).
//   - ExpectedText, ActualText: the two strings of RequestMismatch and
//     OperationJournalScopeMismatch.
//   - ExpectedFormat, ActualFormat: PayloadFormatMismatch.
//   - State, Observed: CompensationRequiresSucceededOperation (State) and the transition
//     variants (State is the current state).
//   - Message: the fixed text of InvalidGrant, or the decoder's text of Serialization.
type Error struct {
	errkind.Kind[kinds]
	Field          string
	Value          string
	Actual         uint64
	Expected       uint64
	Maximum        uint64
	ExpectedText   string
	ActualText     string
	ExpectedFormat EnvelopeFormat
	ActualFormat   EnvelopeFormat
	State          WorkerOperationStateKind
	Observed       WorkerOperationStateKind
	Message        string

	cause error
}

// Unwrap returns the underlying decoder error of a Serialization error, or nil.
func (e *Error) Unwrap() error { return e.cause }

// Error describes the failure for logs. The text is not part of the protocol.
func (e *Error) Error() string {
	return "protocol: " + e.Kind.String() + ": " + e.describe()
}

func (e *Error) describe() string {
	u := func(x uint64) string { return strconv.FormatUint(x, 10) }
	q := quoteBounded
	switch e.Kind {
	case ErrUnsupportedVersion:
		return "unsupported worker protocol version " + u(e.Actual)
	case ErrInvalidToken:
		return "invalid " + e.Field + ": " + q(e.Value)
	case ErrDuplicateGrant:
		return "duplicate capability grant for tool " + q(e.Value)
	case ErrInvalidGrant:
		return e.Message
	case ErrTooManyGrants:
		return "capability manifest has more than " + u(e.Maximum) + " grants"
	case ErrTooManyResources:
		return "capability grant has more than " + u(e.Maximum) + " resource selectors"
	case ErrAttenuationWidensLimits:
		return "attenuation would raise a limit above the parent grant's"
	case ErrAttenuationExpandsResources:
		return "attenuation would add resource selectors the parent grant does not hold"
	case ErrUnknownSession:
		return "message names session " + q(e.Value) + ", not this session"
	case ErrUnknownTool:
		return "tool " + q(e.Value) + " is not in the manifest"
	case ErrInvalidSessionKeyLength:
		return "session key has " + u(e.Actual) + " bytes, want " + u(e.Expected)
	case ErrWeakSessionKey:
		return "session key is all zero bytes"
	case ErrInvalidSequence:
		return "frame sequence is zero"
	case ErrSequenceExhausted:
		return "frame sequence numbers are used up"
	case ErrUnexpectedSequence:
		return "frame sequence " + u(e.Actual) + ", want " + u(e.Expected)
	case ErrInvalidAuthenticationTag:
		return "frame authentication tag is malformed or does not verify"
	case ErrAuthorizationProvenanceMismatch:
		return "authorization was issued by a different session authorizer"
	case ErrDuplicateRequest:
		return "request id " + q(e.Value) + " was already used in this session"
	case ErrSessionRequestLimitExceeded:
		return "session already holds its " + u(e.Maximum) + " request ids"
	case ErrDuplicateResult:
		return "a result for " + q(e.Value) + " was already accepted"
	case ErrCancellationIdMatchesRequest:
		return "cancellation id equals the id of the request it cancels"
	case ErrCancellationTargetMismatch:
		return "cancellation does not name its authorized target invocation"
	case ErrCancellationResultMismatch:
		return "cancellation result does not match its request"
	case ErrRequestAlreadyCancelled:
		return "request " + q(e.Value) + " is already cancelled"
	case ErrCancellationAlreadyRequested:
		return "request " + q(e.Value) + " already has a cancellation request"
	case ErrResultAfterCancellation:
		return "result for " + q(e.Value) + " arrived after its cancellation was acknowledged"
	case ErrCancellationAcknowledgedAfterResult:
		return "cancellation of " + q(e.Value) + " acknowledged after its result was accepted"
	case ErrCancellationTooLateBeforeResult:
		return "cancellation of " + q(e.Value) + " reported too late before any result"
	case ErrCancellationUnsupportedAfterResult:
		return "cancellation of " + q(e.Value) + " reported unsupported after its result was accepted"
	case ErrOperationResultMismatch:
		return "operation result does not match its request"
	case ErrInvalidCompensationKey:
		return "compensation key does not start with \"cmp-\""
	case ErrInvalidCompensationGrantFingerprint:
		return "grant fingerprint is not 64 lowercase hex characters"
	case ErrCompensationNotGranted:
		return "tool " + q(e.Value) + " has no compensation budget"
	case ErrCompensationBudgetExhausted:
		return "tool " + q(e.Value) + " used all " + u(e.Maximum) + " compensations"
	case ErrCompensationGrantMismatch:
		return "compensation grant fingerprint differs from the active grant's"
	case ErrCompensationResultMismatch:
		return "compensation result does not match its request"
	case ErrCompensationToolMismatch:
		return "compensation tool differs from the tool of operation " + q(e.Value)
	case ErrCompensationRequiresSucceededOperation:
		return "operation " + q(e.Value) + " is " + e.State.String() + ", not Succeeded"
	case ErrUnknownCompensation:
		return "operation " + q(e.Value) + " has no compensation"
	case ErrCompensationIdentityMismatch:
		return "compensation of operation " + q(e.Value) + " differs from the recorded one"
	case ErrInvalidWorkerCompensationTransition:
		return "compensation of operation " + q(e.Value) + " cannot go from " + e.State.String() + " to " + e.Observed.String()
	case ErrUnsupportedOperationJournalVersion:
		return "unsupported operation journal format version " + u(e.Actual)
	case ErrOperationJournalTooLarge:
		return "operation journal has " + u(e.Actual) + " bytes, more than " + u(e.Maximum)
	case ErrOperationJournalScopeMismatch:
		return "operation journal scope is " + q(e.ActualText) + ", want " + q(e.ExpectedText)
	case ErrTooManyWorkerOperations:
		return "operation journal would hold more than " + u(e.Maximum) + " operations"
	case ErrInvalidOperationFingerprint:
		return "input fingerprint is not 64 lowercase hex characters"
	case ErrDuplicateOperationKey:
		return "operation key " + q(e.Value) + " appears twice"
	case ErrUnknownOperation:
		return "no operation with key " + q(e.Value)
	case ErrOperationIdentityMismatch:
		return "operation " + q(e.Value) + " was recorded with a different tool or input"
	case ErrInvalidWorkerOperationTransition:
		return "operation " + q(e.Value) + " cannot go from " + e.State.String() + " to " + e.Observed.String()
	case ErrPayloadFormatMismatch:
		return "payload format is " + e.ActualFormat.String() + ", want " + e.ExpectedFormat.String()
	case ErrInvalidJsonEnvelope:
		return "JSON payload is not an object or an array"
	case ErrJsonPayloadTooDeep:
		return "JSON payload nests deeper than " + u(e.Maximum) + " levels"
	case ErrInvalidOperationFailure:
		return "failure message is empty"
	case ErrOperationFailureTooLarge:
		return "failure message has " + u(e.Actual) + " bytes, more than " + u(e.Maximum)
	case ErrInputTooLarge:
		return "input has " + u(e.Actual) + " bytes, more than " + u(e.Maximum)
	case ErrOutputTooLarge:
		return "output has " + u(e.Actual) + " bytes, more than " + u(e.Maximum)
	case ErrCallBudgetExhausted:
		return "tool " + q(e.Value) + " used all " + u(e.Maximum) + " calls"
	case ErrRequestMismatch:
		return "result is for request " + q(e.ActualText) + ", want " + q(e.ExpectedText)
	case ErrWireFrameTooLarge:
		return "frame has " + u(e.Actual) + " bytes, more than " + u(e.Maximum)
	case ErrSerialization:
		return e.Message
	}
	return "unknown error kind"
}

// maxEchoBytes bounds how much of a received value an error message repeats, so a hostile
// 1 MiB identifier does not flood logs. The structured fields keep the full value.
const maxEchoBytes = 64

func quoteBounded(s string) string {
	if len(s) <= maxEchoBytes {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:maxEchoBytes]) + "... (" + strconv.Itoa(len(s)) + " bytes)"
}

// KindOf returns the ProtocolError variant of err: the kind of an *Error or ErrorKind in its
// chain, or ErrSerialization for a canonjson or derive decoding error. It reports false for
// errors that did not come from this package's decoders.
func KindOf(err error) (ErrorKind, bool) {
	if err == nil {
		return 0, false
	}
	if k, ok := errkind.Of[kinds](err); ok && k.Valid() {
		return k, true
	}
	if errors.Is(err, canonjson.ErrSyntax) || errors.Is(err, derive.ErrDecode) {
		return ErrSerialization, true
	}
	return 0, false
}

// SerializationError turns a canonjson parse error or a derive shape error into the
// reference's Serialization error, keeping the original in its chain (errors.Is(err,
// canonjson.ErrSyntax) still holds). A protocol *Error is returned unchanged, and nil stays nil.
func SerializationError(err error) error { return serializationError(err) }

// serializationError turns a parse or shape error into a Serialization error that keeps the
// original in its chain.
func serializationError(err error) error {
	if err == nil {
		return nil
	}
	var pe *Error
	if errors.As(err, &pe) {
		return err
	}
	return &Error{Kind: ErrSerialization, Message: err.Error(), cause: err}
}

// Error constructors used throughout the package.

func tokenError(field, value string) error {
	return &Error{Kind: ErrInvalidToken, Field: field, Value: value}
}

func versionError(actual uint16) error {
	return &Error{Kind: ErrUnsupportedVersion, Actual: uint64(actual)}
}

func invalidGrant(message string) error {
	return &Error{Kind: ErrInvalidGrant, Message: message}
}

func kindError(k ErrorKind) error { return &Error{Kind: k} }

func valueError(k ErrorKind, value string) error { return &Error{Kind: k, Value: value} }

func sizeError(k ErrorKind, actual, maximum int) error {
	return &Error{Kind: k, Actual: uint64(actual), Maximum: uint64(maximum)}
}

func maximumError(k ErrorKind, maximum int) error {
	return &Error{Kind: k, Maximum: uint64(maximum)}
}
