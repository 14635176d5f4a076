package protocol

import (
	"strconv"

	"github.com/splashv5/conform/impl/canonjson"
)

// jsonWriter appends the members of one JSON object; it keeps AppendJSON methods short and
// allocation-free.
type jsonWriter struct {
	b []byte
	n int // members written so far
}

func (w *jsonWriter) key(k string) {
	if w.n > 0 {
		w.b = append(w.b, ',')
	}
	w.n++
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
}

func (w *jsonWriter) str(k, v string) {
	w.key(k)
	w.b = canonjson.AppendString(w.b, v)
}

func (w *jsonWriter) uint(k string, v uint64) {
	w.key(k)
	w.b = strconv.AppendUint(w.b, v, 10)
}

func openObject(dst []byte) jsonWriter { return jsonWriter{b: append(dst, '{')} }

func (w *jsonWriter) close() []byte { return append(w.b, '}') }

// ToolInvocation asks a worker to run a tool once.
type ToolInvocation struct {
	ProtocolVersion uint16
	SessionID       string
	RequestID       string
	Tool            string
	Payload         ToolPayload
}

// NewToolInvocation returns a version-5 invocation after checking its header.
func NewToolInvocation(sessionID, requestID, tool string, payload ToolPayload) (ToolInvocation, error) {
	v := ToolInvocation{ProtocolVersion, sessionID, requestID, tool, payload}
	return v, v.ValidateHeader()
}

// ValidateHeader checks the version, then the session, request and tool tokens. The payload
// is not checked: invoke frames carry unchecked payloads (the authorizer checks them). (A Go
// value may also hold a format outside the two variants; that is rejected last, as it cannot
// be written.)
func (v ToolInvocation) ValidateHeader() error {
	if err := validateVersion(v.ProtocolVersion); err != nil {
		return err
	}
	if err := ValidateToken(FieldSessionID, v.SessionID); err != nil {
		return err
	}
	if err := ValidateToken(FieldRequestID, v.RequestID); err != nil {
		return err
	}
	if err := ValidateToken(FieldTool, v.Tool); err != nil {
		return err
	}
	return checkPayloadEnum(v.Payload)
}

// checkPayloadEnum rejects a payload format no Rust value can hold (it could not be written).
func checkPayloadEnum(p ToolPayload) error {
	if !p.Format.Valid() {
		return unencodable("envelope format " + p.Format.String())
	}
	return nil
}

// AppendJSON appends the invocation's JSON in declaration order.
func (v ToolInvocation) AppendJSON(dst []byte) []byte {
	w := openObject(dst)
	w.uint("protocol_version", uint64(v.ProtocolVersion))
	w.str("session_id", v.SessionID)
	w.str("request_id", v.RequestID)
	w.str("tool", v.Tool)
	w.key("payload")
	w.b = v.Payload.AppendJSON(w.b)
	return w.close()
}

// ToolResult is a worker's answer to an invocation. It has no tool field.
type ToolResult struct {
	ProtocolVersion uint16
	SessionID       string
	RequestID       string
	Payload         ToolPayload
}

// NewToolResult returns a version-5 result after checking its header.
func NewToolResult(sessionID, requestID string, payload ToolPayload) (ToolResult, error) {
	r := ToolResult{ProtocolVersion, sessionID, requestID, payload}
	return r, r.ValidateHeader()
}

// ValidateHeader checks the version, then the session and request tokens. The payload is not
// checked here (apart from rejecting a format outside the two variants, last).
func (r ToolResult) ValidateHeader() error {
	if err := validateVersion(r.ProtocolVersion); err != nil {
		return err
	}
	if err := ValidateToken(FieldSessionID, r.SessionID); err != nil {
		return err
	}
	if err := ValidateToken(FieldRequestID, r.RequestID); err != nil {
		return err
	}
	return checkPayloadEnum(r.Payload)
}

// AppendJSON appends the result's JSON in declaration order.
func (r ToolResult) AppendJSON(dst []byte) []byte {
	w := openObject(dst)
	w.uint("protocol_version", uint64(r.ProtocolVersion))
	w.str("session_id", r.SessionID)
	w.str("request_id", r.RequestID)
	w.key("payload")
	w.b = r.Payload.AppendJSON(w.b)
	return w.close()
}

// WorkerCancellationRequest asks a worker to cancel one in-flight invocation (RequestID and
// Tool name the target).
type WorkerCancellationRequest struct {
	ProtocolVersion uint16
	SessionID       string
	CancellationID  string
	RequestID       string
	Tool            string
}

// NewWorkerCancellationRequest returns a validated version-5 cancellation request.
func NewWorkerCancellationRequest(sessionID, cancellationID, requestID, tool string) (WorkerCancellationRequest, error) {
	r := WorkerCancellationRequest{ProtocolVersion, sessionID, cancellationID, requestID, tool}
	return r, r.Validate()
}

// Validate checks the version, the session, cancellation, request and tool tokens, then that
// the cancellation id differs from the request id (CancellationIdMatchesRequest).
func (r WorkerCancellationRequest) Validate() error {
	return r.header().validate()
}

// AppendJSON appends the request's JSON in declaration order.
func (r WorkerCancellationRequest) AppendJSON(dst []byte) []byte {
	w := openObject(dst)
	r.header().appendFields(&w)
	return w.close()
}

// WorkerCancellationResult is a worker's answer to a cancellation request.
type WorkerCancellationResult struct {
	ProtocolVersion uint16
	SessionID       string
	CancellationID  string
	RequestID       string
	Tool            string
	Outcome         WorkerCancellationOutcome
}

// NewWorkerCancellationResult validates req and returns the result that answers it.
func NewWorkerCancellationResult(req WorkerCancellationRequest, outcome WorkerCancellationOutcome) (WorkerCancellationResult, error) {
	if err := req.Validate(); err != nil {
		return WorkerCancellationResult{}, err
	}
	r := WorkerCancellationResult{ProtocolVersion, req.SessionID, req.CancellationID, req.RequestID, req.Tool, outcome}
	return r, r.Validate()
}

// Validate runs the same checks as [WorkerCancellationRequest.Validate]; the outcome is not
// checked.
func (r WorkerCancellationResult) Validate() error {
	if err := r.header().validate(); err != nil {
		return err
	}
	if !r.Outcome.Valid() {
		return unencodable("cancellation outcome " + r.Outcome.String())
	}
	return nil
}

// MatchesRequest reports whether the result answers req: version, session, cancellation id,
// request id and tool are all equal.
func (r WorkerCancellationResult) MatchesRequest(req WorkerCancellationRequest) bool {
	return r.header() == req.header()
}

// AppendJSON appends the result's JSON in declaration order.
func (r WorkerCancellationResult) AppendJSON(dst []byte) []byte {
	w := openObject(dst)
	r.header().appendFields(&w)
	w.key("outcome")
	w.b = append(w.b, '"')
	w.b = append(w.b, r.Outcome.String()...)
	w.b = append(w.b, '"')
	return w.close()
}

// OperationDispatchRequest asks a worker to run a durable, effectful operation identified by
// OperationKey.
type OperationDispatchRequest struct {
	ProtocolVersion uint16
	SessionID       string
	RequestID       string
	Tool            string
	OperationKey    string
	Payload         ToolPayload
}

// NewOperationDispatchRequest returns a validated version-5 dispatch request.
func NewOperationDispatchRequest(sessionID, requestID, tool, operationKey string, payload ToolPayload) (OperationDispatchRequest, error) {
	r := OperationDispatchRequest{ProtocolVersion, sessionID, requestID, tool, operationKey, payload}
	return r, r.Validate()
}

// ValidateHeader checks the version and the session, request, tool and operation key tokens.
func (r OperationDispatchRequest) ValidateHeader() error {
	return r.header().validate()
}

// Validate checks the header, then the payload against its own format (object or array,
// depth).
func (r OperationDispatchRequest) Validate() error {
	if err := r.ValidateHeader(); err != nil {
		return err
	}
	_, err := r.Payload.ValidateFor(r.Payload.Format)
	return err
}

// AppendJSON appends the request's JSON in declaration order.
func (r OperationDispatchRequest) AppendJSON(dst []byte) []byte {
	w := openObject(dst)
	r.header().appendFields(&w)
	w.key("payload")
	w.b = r.Payload.AppendJSON(w.b)
	return w.close()
}

// OperationReconcileRequest asks a worker for the status of a durable operation.
type OperationReconcileRequest struct {
	ProtocolVersion uint16
	SessionID       string
	RequestID       string
	Tool            string
	OperationKey    string
}

// NewOperationReconcileRequest returns a validated version-5 reconcile request.
func NewOperationReconcileRequest(sessionID, requestID, tool, operationKey string) (OperationReconcileRequest, error) {
	r := OperationReconcileRequest{ProtocolVersion, sessionID, requestID, tool, operationKey}
	return r, r.Validate()
}

// Validate checks the version and the session, request, tool and operation key tokens.
func (r OperationReconcileRequest) Validate() error {
	return r.header().validate()
}

// AppendJSON appends the request's JSON in declaration order.
func (r OperationReconcileRequest) AppendJSON(dst []byte) []byte {
	w := openObject(dst)
	r.header().appendFields(&w)
	return w.close()
}

// OperationStatus is the state a worker reports for an operation or compensation: running,
// succeeded with a payload, failed with a message, or cancelled. The journal also uses it for
// its states, where State may be StatePending.
type OperationStatus struct {
	State   WorkerOperationStateKind
	Payload ToolPayload // StateSucceeded only
	Message string      // StateFailed only
}

// Running, Succeeded, Failed and Cancelled build statuses.
func Running() OperationStatus { return OperationStatus{State: StateRunning} }

// Succeeded returns a succeeded status carrying p.
func Succeeded(p ToolPayload) OperationStatus {
	return OperationStatus{State: StateSucceeded, Payload: p}
}

// Failed returns a failed status carrying message.
func Failed(message string) OperationStatus {
	return OperationStatus{State: StateFailed, Message: message}
}

// Cancelled returns a cancelled status.
func Cancelled() OperationStatus { return OperationStatus{State: StateCancelled} }

// ValidateState checks a status or journal state: a succeeded payload must be valid for its
// own format; a failed message must be non-empty (InvalidOperationFailure) and at most 4,096
// bytes (OperationFailureTooLarge). Pending, running and cancelled need nothing.
func (s OperationStatus) ValidateState() error {
	switch s.State {
	case StatePending, StateRunning, StateCancelled:
		return nil
	case StateSucceeded:
		_, err := s.Payload.ValidateFor(s.Payload.Format)
		return err
	case StateFailed:
		if s.Message == "" {
			return &Error{Kind: ErrInvalidOperationFailure}
		}
		if len(s.Message) > MaxOperationErrorBytes {
			return &Error{Kind: ErrOperationFailureTooLarge, Actual: uint64(len(s.Message)), Maximum: MaxOperationErrorBytes}
		}
		return nil
	}
	return unencodable("operation state " + s.State.String())
}

// Validate checks a wire status: [OperationStatus.ValidateState], except that pending is not
// a wire status (no Rust OperationStatus can hold it, so it cannot be serialized).
func (s OperationStatus) Validate() error {
	if s.State == StatePending {
		return unencodable("operation status pending")
	}
	return s.ValidateState()
}

// Equal reports whether two statuses are the same value (payloads compared as values).
func (s OperationStatus) Equal(o OperationStatus) bool {
	if s.State != o.State {
		return false
	}
	switch s.State {
	case StateSucceeded:
		return s.Payload.Equal(o.Payload)
	case StateFailed:
		return s.Message == o.Message
	}
	return true
}

// AppendJSON appends the internally tagged form, tag first: {"state":"running"},
// {"state":"succeeded","payload":...}, {"state":"failed","message":...}, {"state":"cancelled"}
// (or {"state":"pending"} for a journal state).
func (s OperationStatus) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"state":"`...)
	dst = append(dst, s.State.WireName()...)
	dst = append(dst, '"')
	switch s.State {
	case StateSucceeded:
		dst = append(dst, `,"payload":`...)
		dst = s.Payload.AppendJSON(dst)
	case StateFailed:
		dst = append(dst, `,"message":`...)
		dst = canonjson.AppendString(dst, s.Message)
	}
	return append(dst, '}')
}

// OperationReconcileResult reports the status of a durable operation. It is the body of both
// operation_result and reconciled_operation messages.
type OperationReconcileResult struct {
	ProtocolVersion uint16
	SessionID       string
	RequestID       string
	Tool            string
	OperationKey    string
	Status          OperationStatus
}

// NewOperationReconcileResult returns a validated version-5 operation result.
func NewOperationReconcileResult(sessionID, requestID, tool, operationKey string, status OperationStatus) (OperationReconcileResult, error) {
	r := OperationReconcileResult{ProtocolVersion, sessionID, requestID, tool, operationKey, status}
	return r, r.Validate()
}

// Validate checks the version, the session, request, tool and operation key tokens, then the
// status.
func (r OperationReconcileResult) Validate() error {
	if err := r.header().validate(); err != nil {
		return err
	}
	return r.Status.Validate()
}

// MatchesRequest reports whether the result answers req (version, session, request, tool and
// operation key equal).
func (r OperationReconcileResult) MatchesRequest(req OperationReconcileRequest) bool {
	return r.header() == req.header()
}

// MatchesDispatch reports whether the result answers the dispatch req (version, session,
// request, tool and operation key equal).
func (r OperationReconcileResult) MatchesDispatch(req OperationDispatchRequest) bool {
	return r.header() == req.header()
}

// AppendJSON appends the result's JSON in declaration order.
func (r OperationReconcileResult) AppendJSON(dst []byte) []byte {
	w := openObject(dst)
	r.header().appendFields(&w)
	w.key("status")
	w.b = r.Status.AppendJSON(w.b)
	return w.close()
}

// OperationCompensationBinding is the host-side description of a compensation: which
// operation of which tool it undoes, under which compensation key, tenant scope and grant
// fingerprint. It is not serialized.
type OperationCompensationBinding struct {
	Tool             string
	OperationKey     string
	CompensationKey  string
	TenantScope      string
	GrantFingerprint string
}

// NewOperationCompensationBinding returns a validated binding.
func NewOperationCompensationBinding(tool, operationKey, compensationKey, tenantScope, grantFingerprint string) (OperationCompensationBinding, error) {
	b := OperationCompensationBinding{tool, operationKey, compensationKey, tenantScope, grantFingerprint}
	return b, b.Validate()
}

// Validate checks, in order: the tool and operation key tokens, the compensation key, the
// tenant scope token, and the grant fingerprint (InvalidCompensationGrantFingerprint).
func (b OperationCompensationBinding) Validate() error {
	if err := ValidateToken(FieldTool, b.Tool); err != nil {
		return err
	}
	if err := ValidateToken(FieldOperationKey, b.OperationKey); err != nil {
		return err
	}
	return validateCompensationTail(b.CompensationKey, b.TenantScope, b.GrantFingerprint)
}

func validateCompensationTail(compensationKey, tenantScope, grantFingerprint string) error {
	if err := ValidateCompensationKey(compensationKey); err != nil {
		return err
	}
	if err := ValidateToken(FieldTenantScope, tenantScope); err != nil {
		return err
	}
	if !IsFingerprint(grantFingerprint) {
		return &Error{Kind: ErrInvalidCompensationGrantFingerprint}
	}
	return nil
}

// OperationCompensationRequest asks a worker to run the host-approved compensation of a
// succeeded durable operation.
type OperationCompensationRequest struct {
	ProtocolVersion  uint16
	SessionID        string
	RequestID        string
	Tool             string
	OperationKey     string
	CompensationKey  string
	TenantScope      string
	GrantFingerprint string
	Payload          ToolPayload
}

// NewOperationCompensationRequest returns a validated version-5 compensation request.
func NewOperationCompensationRequest(sessionID, requestID string, b OperationCompensationBinding, payload ToolPayload) (OperationCompensationRequest, error) {
	r := OperationCompensationRequest{ProtocolVersion, sessionID, requestID, b.Tool, b.OperationKey, b.CompensationKey, b.TenantScope, b.GrantFingerprint, payload}
	return r, r.Validate()
}

// Binding returns the request's compensation binding.
func (r OperationCompensationRequest) Binding() OperationCompensationBinding {
	return OperationCompensationBinding{r.Tool, r.OperationKey, r.CompensationKey, r.TenantScope, r.GrantFingerprint}
}

// ValidateHeader checks, in field order: version, session, request, tool, operation key,
// compensation key (token, then "cmp-"), tenant scope, grant fingerprint.
func (r OperationCompensationRequest) ValidateHeader() error {
	return r.header().validate()
}

// Validate checks the header, then the payload against its own format.
func (r OperationCompensationRequest) Validate() error {
	if err := r.ValidateHeader(); err != nil {
		return err
	}
	_, err := r.Payload.ValidateFor(r.Payload.Format)
	return err
}

// AppendJSON appends the request's JSON in declaration order.
func (r OperationCompensationRequest) AppendJSON(dst []byte) []byte {
	w := openObject(dst)
	r.header().appendFields(&w)
	w.key("payload")
	w.b = r.Payload.AppendJSON(w.b)
	return w.close()
}

// OperationCompensationResult reports the status of a compensation.
type OperationCompensationResult struct {
	ProtocolVersion  uint16
	SessionID        string
	RequestID        string
	Tool             string
	OperationKey     string
	CompensationKey  string
	TenantScope      string
	GrantFingerprint string
	Status           OperationStatus
}

// NewOperationCompensationResult returns a validated version-5 compensation result.
func NewOperationCompensationResult(sessionID, requestID string, b OperationCompensationBinding, status OperationStatus) (OperationCompensationResult, error) {
	r := OperationCompensationResult{ProtocolVersion, sessionID, requestID, b.Tool, b.OperationKey, b.CompensationKey, b.TenantScope, b.GrantFingerprint, status}
	return r, r.Validate()
}

// Validate checks the header in field order (as [OperationCompensationRequest.ValidateHeader])
// and then the status.
func (r OperationCompensationResult) Validate() error {
	if err := r.header().validate(); err != nil {
		return err
	}
	return r.Status.Validate()
}

// MatchesRequest reports whether the result answers req: all eight header fields equal,
// tenant scope and grant fingerprint included.
func (r OperationCompensationResult) MatchesRequest(req OperationCompensationRequest) bool {
	return r.header() == req.header()
}

// AppendJSON appends the result's JSON in declaration order.
func (r OperationCompensationResult) AppendJSON(dst []byte) []byte {
	w := openObject(dst)
	r.header().appendFields(&w)
	w.key("status")
	w.b = r.Status.AppendJSON(w.b)
	return w.close()
}
