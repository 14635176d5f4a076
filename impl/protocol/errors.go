package protocol

import (
	"errors"
	"strconv"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/derive"
	"github.com/splashv5/conform/impl/errkind"
)

// ErrorKind names one variant of the Rust reference's ProtocolError.
type ErrorKind = errkind.Kind[kinds]

type kinds struct{}

// Table describes the ProtocolError variants.
func (kinds) Table() *errkind.Table { return &kindTable }

// The ProtocolError variants, in the reference's declaration order; each one's meaning is the
// Detail template of its entry in kindTable. The zero ErrorKind is not a variant.
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
)

var kindTable = errkind.Table{Type: "ErrorKind", Prefix: "protocol: ", Kinds: []errkind.Entry{
	ErrUnsupportedVersion:                     {Name: "UnsupportedVersion", Detail: "unsupported worker protocol version {actual}"},
	ErrInvalidToken:                           {Name: "InvalidToken", Detail: "invalid {field}: {value}"},
	ErrDuplicateGrant:                         {Name: "DuplicateGrant", Detail: "duplicate capability grant for tool {value}"},
	ErrInvalidGrant:                           {Name: "InvalidGrant", Detail: "{message}"},
	ErrTooManyGrants:                          {Name: "TooManyGrants", Detail: "capability manifest has more than {maximum} grants"},
	ErrTooManyResources:                       {Name: "TooManyResources", Detail: "capability grant has more than {maximum} resource selectors"},
	ErrAttenuationWidensLimits:                {Name: "AttenuationWidensLimits", Detail: "attenuation would raise a limit above the parent grant's"},
	ErrAttenuationExpandsResources:            {Name: "AttenuationExpandsResources", Detail: "attenuation would add resource selectors the parent grant does not hold"},
	ErrUnknownSession:                         {Name: "UnknownSession", Detail: "message names session {value}, not this session"},
	ErrUnknownTool:                            {Name: "UnknownTool", Detail: "tool {value} is not in the manifest"},
	ErrInvalidSessionKeyLength:                {Name: "InvalidSessionKeyLength", Detail: "session key has {actual} bytes, want {expected}"},
	ErrWeakSessionKey:                         {Name: "WeakSessionKey", Detail: "session key is all zero bytes"},
	ErrInvalidSequence:                        {Name: "InvalidSequence", Detail: "frame sequence is zero"},
	ErrSequenceExhausted:                      {Name: "SequenceExhausted", Detail: "frame sequence numbers are used up"},
	ErrUnexpectedSequence:                     {Name: "UnexpectedSequence", Detail: "frame sequence {actual}, want {expected}"},
	ErrInvalidAuthenticationTag:               {Name: "InvalidAuthenticationTag", Detail: "frame authentication tag is malformed or does not verify"},
	ErrAuthorizationProvenanceMismatch:        {Name: "AuthorizationProvenanceMismatch", Detail: "authorization was issued by a different session authorizer"},
	ErrDuplicateRequest:                       {Name: "DuplicateRequest", Detail: "request id {value} was already used in this session"},
	ErrSessionRequestLimitExceeded:            {Name: "SessionRequestLimitExceeded", Detail: "session already holds its {maximum} request ids"},
	ErrDuplicateResult:                        {Name: "DuplicateResult", Detail: "a result for {value} was already accepted"},
	ErrCancellationIdMatchesRequest:           {Name: "CancellationIdMatchesRequest", Detail: "cancellation id equals the id of the request it cancels"},
	ErrCancellationTargetMismatch:             {Name: "CancellationTargetMismatch", Detail: "cancellation does not name its authorized target invocation"},
	ErrCancellationResultMismatch:             {Name: "CancellationResultMismatch", Detail: "cancellation result does not match its request"},
	ErrRequestAlreadyCancelled:                {Name: "RequestAlreadyCancelled", Detail: "request {value} is already cancelled"},
	ErrCancellationAlreadyRequested:           {Name: "CancellationAlreadyRequested", Detail: "request {value} already has a cancellation request"},
	ErrResultAfterCancellation:                {Name: "ResultAfterCancellation", Detail: "result for {value} arrived after its cancellation was acknowledged"},
	ErrCancellationAcknowledgedAfterResult:    {Name: "CancellationAcknowledgedAfterResult", Detail: "cancellation of {value} acknowledged after its result was accepted"},
	ErrCancellationTooLateBeforeResult:        {Name: "CancellationTooLateBeforeResult", Detail: "cancellation of {value} reported too late before any result"},
	ErrCancellationUnsupportedAfterResult:     {Name: "CancellationUnsupportedAfterResult", Detail: "cancellation of {value} reported unsupported after its result was accepted"},
	ErrOperationResultMismatch:                {Name: "OperationResultMismatch", Detail: "operation result does not match its request"},
	ErrInvalidCompensationKey:                 {Name: "InvalidCompensationKey", Detail: "compensation key does not start with \"cmp-\""},
	ErrInvalidCompensationGrantFingerprint:    {Name: "InvalidCompensationGrantFingerprint", Detail: "grant fingerprint is not 64 lowercase hex characters"},
	ErrCompensationNotGranted:                 {Name: "CompensationNotGranted", Detail: "tool {value} has no compensation budget"},
	ErrCompensationBudgetExhausted:            {Name: "CompensationBudgetExhausted", Detail: "tool {value} used all {maximum} compensations"},
	ErrCompensationGrantMismatch:              {Name: "CompensationGrantMismatch", Detail: "compensation grant fingerprint differs from the active grant's"},
	ErrCompensationResultMismatch:             {Name: "CompensationResultMismatch", Detail: "compensation result does not match its request"},
	ErrCompensationToolMismatch:               {Name: "CompensationToolMismatch", Detail: "compensation tool differs from the tool of operation {value}"},
	ErrCompensationRequiresSucceededOperation: {Name: "CompensationRequiresSucceededOperation", Detail: "operation {value} is {state}, not Succeeded"},
	ErrUnknownCompensation:                    {Name: "UnknownCompensation", Detail: "operation {value} has no compensation"},
	ErrCompensationIdentityMismatch:           {Name: "CompensationIdentityMismatch", Detail: "compensation of operation {value} differs from the recorded one"},
	ErrInvalidWorkerCompensationTransition:    {Name: "InvalidWorkerCompensationTransition", Detail: "compensation of operation {value} cannot go from {state} to {observed}"},
	ErrUnsupportedOperationJournalVersion:     {Name: "UnsupportedOperationJournalVersion", Detail: "unsupported operation journal format version {actual}"},
	ErrOperationJournalTooLarge:               {Name: "OperationJournalTooLarge", Detail: "operation journal has {actual} bytes, more than {maximum}"},
	ErrOperationJournalScopeMismatch:          {Name: "OperationJournalScopeMismatch", Detail: "operation journal scope is {actual_text}, want {expected_text}"},
	ErrTooManyWorkerOperations:                {Name: "TooManyWorkerOperations", Detail: "operation journal would hold more than {maximum} operations"},
	ErrInvalidOperationFingerprint:            {Name: "InvalidOperationFingerprint", Detail: "input fingerprint is not 64 lowercase hex characters"},
	ErrDuplicateOperationKey:                  {Name: "DuplicateOperationKey", Detail: "operation key {value} appears twice"},
	ErrUnknownOperation:                       {Name: "UnknownOperation", Detail: "no operation with key {value}"},
	ErrOperationIdentityMismatch:              {Name: "OperationIdentityMismatch", Detail: "operation {value} was recorded with a different tool or input"},
	ErrInvalidWorkerOperationTransition:       {Name: "InvalidWorkerOperationTransition", Detail: "operation {value} cannot go from {state} to {observed}"},
	ErrPayloadFormatMismatch:                  {Name: "PayloadFormatMismatch", Detail: "payload format is {actual_format}, want {expected_format}"},
	ErrInvalidJsonEnvelope:                    {Name: "InvalidJsonEnvelope", Detail: "JSON payload is not an object or an array"},
	ErrJsonPayloadTooDeep:                     {Name: "JsonPayloadTooDeep", Detail: "JSON payload nests deeper than {maximum} levels"},
	ErrInvalidOperationFailure:                {Name: "InvalidOperationFailure", Detail: "failure message is empty"},
	ErrOperationFailureTooLarge:               {Name: "OperationFailureTooLarge", Detail: "failure message has {actual} bytes, more than {maximum}"},
	ErrInputTooLarge:                          {Name: "InputTooLarge", Detail: "input has {actual} bytes, more than {maximum}"},
	ErrOutputTooLarge:                         {Name: "OutputTooLarge", Detail: "output has {actual} bytes, more than {maximum}"},
	ErrCallBudgetExhausted:                    {Name: "CallBudgetExhausted", Detail: "tool {value} used all {maximum} calls"},
	ErrRequestMismatch:                        {Name: "RequestMismatch", Detail: "result is for request {actual_text}, want {expected_text}"},
	ErrWireFrameTooLarge:                      {Name: "WireFrameTooLarge", Detail: "frame has {actual} bytes, more than {maximum}"},
	ErrSerialization:                          {Name: "Serialization", Detail: "{message}"},
}}

// Error is a ProtocolError: its Kind and the fields that variant carries, as its Detail
// template in kindTable names them. Fields a variant does not carry stay zero. An Error never
// holds key material.
type Error struct {
	errkind.Kind[kinds]
	Field                        string                   // {field}: the token label of InvalidToken ("session id", "tool", ...)
	Value                        string                   // {value}: the rejected token, tool, session, request, cancellation or operation key
	Actual, Expected, Maximum    uint64                   // {actual}, {expected}, {maximum}: versions, lengths, sequences, sizes and counts
	ExpectedText, ActualText     string                   // {expected_text}, {actual_text}: RequestMismatch, OperationJournalScopeMismatch
	ExpectedFormat, ActualFormat EnvelopeFormat           // {expected_format}, {actual_format}: PayloadFormatMismatch
	State, Observed              WorkerOperationStateKind // {state}, {observed}: the current and the refused operation state
	Message                      string                   // {message}: the fixed text of InvalidGrant, the decoder's text of Serialization

	cause error
}

// Unwrap returns the underlying decoder error of a Serialization error, or nil.
func (e *Error) Unwrap() error { return e.cause }

// Error describes the failure for logs. The text is not part of the protocol.
func (e *Error) Error() string {
	if !e.Kind.Valid() {
		return e.Kind.Error()
	}
	return e.Kind.Error() + ": " + e.Kind.Expand("field", e.Field, "value", quoteBounded(e.Value),
		"actual", e.Actual, "expected", e.Expected, "maximum", e.Maximum,
		"expected_text", quoteBounded(e.ExpectedText), "actual_text", quoteBounded(e.ActualText),
		"expected_format", e.ExpectedFormat, "actual_format", e.ActualFormat,
		"state", e.State, "observed", e.Observed, "message", e.Message)
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
func SerializationError(err error) error {
	var pe *Error
	if err == nil || errors.As(err, &pe) {
		return err
	}
	return &Error{Kind: ErrSerialization, Message: err.Error(), cause: err}
}
