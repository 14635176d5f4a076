package vectorfmt

// HostScenariosFile is the file name of the host runtime scenario vectors.
const HostScenariosFile = "host_scenarios.json"

// HostScenarioType is the group type of every host scenario test.
const HostScenarioType = "HostScenarioTest"

// Host scenario step operations (HostStep.Op).
const (
	HostOpStart               = "start"
	HostOpStartJSON           = "start_json"
	HostOpCall                = "call"
	HostOpClaimNext           = "claim_next"
	HostOpClaim               = "claim"
	HostOpPeek                = "peek"
	HostOpValidate            = "validate"
	HostOpComplete            = "complete"
	HostOpFail                = "fail"
	HostOpRetry               = "retry"
	HostOpPushChunk           = "push_chunk"
	HostOpRequestCancellation = "request_cancellation"
	HostOpConfirmCancellation = "confirm_cancellation"
	HostOpCancel              = "cancel"
	HostOpAdvanceClock        = "advance_clock"
	HostOpExpire              = "expire"
	HostOpPump                = "pump"
	HostOpAwait               = "await"
	HostOpReleasePromise      = "release_promise"
	HostOpCollectGarbage      = "collect_garbage"
	HostOpReconcileRequest    = "reconcile_request"
	HostOpReconcile           = "reconcile"
	HostOpRegister            = "register"
	HostOpIssueLease          = "issue_lease"
	HostOpActivateLease       = "activate_lease"
	HostOpDeactivateLease     = "deactivate_lease"
	HostOpSetAuditCapacity    = "set_audit_capacity"
	HostOpClearAudit          = "clear_audit"
	HostOpExportAudit         = "export_audit"
	HostOpNextDeadline        = "next_deadline"
	HostOpEval                = "eval"
	HostOpSetRedactor         = "set_redactor"
	HostOpValidateAuditEvent  = "validate_audit_event"
	HostOpSessionNonce        = "session_nonce"
)

// HostScenarios is host_scenarios.json: sequences of host-runtime calls with the expected
// result and audit records of every call.
type HostScenarios struct {
	Header
	TestGroups []HostScenarioGroup `json:"testGroups"`
}

// HostScenarioGroup holds host scenario tests; Type is HostScenarioType.
type HostScenarioGroup struct {
	Type  string             `json:"type"`
	Tests []HostScenarioTest `json:"tests"`
}

// HostScenarioTest is one scenario: a fresh runtime, its tools, and the steps run in order.
type HostScenarioTest struct {
	Case
	Config HostConfig `json:"config"`
	Tools  []HostTool `json:"tools"`
	Steps  []HostStep `json:"steps"`
}

// HostConfig configures the scenario's runtime: pinned session number S, host nonce, the
// fake clock's start (Unix milliseconds; only differences matter) and the pending limit
// (0 = the default). NonceLabel is the expected nonce label (RUN-003). MaxTools and
// MaxCatalogBytes bound the catalog (0 = the default).
type HostConfig struct {
	SessionID        uint64 `json:"session_id"`
	NonceHex         string `json:"nonce_hex"`
	NonceLabel       string `json:"nonce_label"`
	ClockStartMillis int64  `json:"clock_start_millis"`
	MaxPendingTools  int    `json:"max_pending_tools"`
	MaxTools         int    `json:"max_tools,omitempty"`
	MaxCatalogBytes  int    `json:"max_catalog_bytes,omitempty"`
	// NoNonce runs the scenario's runtime without a session nonce: none is supplied and the
	// entropy source fails (RUN-006); NonceHex and NonceLabel are then empty.
	NoNonce bool `json:"no_nonce,omitempty"`
}

// HostTool is one registration. Kind is "external" or "host_pump"; a host-pump tool's
// handler is "echo" (returns "echo:" followed by the input) or "fail" (returns Failed
// "handler broke"). HandlerAdvanceMillis advances the clock while the handler runs.
// DeadlineMillis, when present, is the deferred deadline. Description and MetadataSchema
// (a JSON schema placed in the descriptive metadata as the input schema) are catalog
// metadata.
type HostTool struct {
	Name                 string      `json:"name"`
	Kind                 string      `json:"kind"`
	Format               string      `json:"format"`
	MaxCalls             int         `json:"max_calls"`
	MaxAttempts          uint32      `json:"max_attempts"`
	MaxInputBytes        int         `json:"max_input_bytes"`
	MaxOutputBytes       int         `json:"max_output_bytes"`
	DeadlineMillis       *uint64     `json:"deadline_millis,omitempty"`
	Stream               *HostStream `json:"stream,omitempty"`
	Handler              string      `json:"handler,omitempty"`
	HandlerAdvanceMillis uint64      `json:"handler_advance_millis,omitempty"`
	InputSchema          string      `json:"input_schema,omitempty"`
	OutputSchema         string      `json:"output_schema,omitempty"`
	Description          string      `json:"description,omitempty"`
	MetadataSchema       string      `json:"metadata_schema,omitempty"`
}

// HostLeaseGrant is one tool of a capability lease and the calls it allows.
type HostLeaseGrant struct {
	Tool     string `json:"tool"`
	MaxCalls int    `json:"max_calls"`
}

// HostStream is a stream policy.
type HostStream struct {
	MaxChunks       int `json:"max_chunks"`
	MaxChunkBytes   int `json:"max_chunk_bytes"`
	MaxTotalBytes   int `json:"max_total_bytes"`
	MaxEmittedBytes int `json:"max_emitted_bytes"`
}

// HostToolError is a tool error: kind (Denied, Failed, Cancelled, TimedOut) and message.
type HostToolError struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// HostStep is one host call and its expected outcome. The inputs used depend on Op: ID
// (operation), Tool and Input (start, call), Output (complete), Failure (fail), RetryClass
// (retry), Chunk (push_chunk), Millis (advance_clock), Limit (expire, pump: the batch size,
// 0 = the runtime default: one operation for pump, the pending limit for expire), Status
// and StatusText (reconcile: running, succeeded with StatusText as the payload, failed with
// StatusText as the message, cancelled), Register (register: the tool
// registered during the scenario), Lease (issue_lease: the grants; activate_lease activates
// the last issued lease), Limit (set_audit_capacity: the new capacity) and Cursor
// (export_audit).
type HostStep struct {
	Op         string           `json:"op"`
	ID         uint64           `json:"id,omitempty"`
	Tool       string           `json:"tool,omitempty"`
	Input      *string          `json:"input,omitempty"`
	Output     *string          `json:"output,omitempty"`
	Failure    *HostToolError   `json:"failure,omitempty"`
	RetryClass string           `json:"retry_class,omitempty"`
	Chunk      *string          `json:"chunk,omitempty"`
	Millis     uint64           `json:"millis,omitempty"`
	Limit      int              `json:"limit,omitempty"`
	Status     string           `json:"status,omitempty"`
	StatusText *string          `json:"status_text,omitempty"`
	Register   *HostTool        `json:"register,omitempty"`
	Lease      []HostLeaseGrant `json:"lease,omitempty"`
	Cursor     uint64           `json:"cursor,omitempty"`
	// Source is the script an eval step evaluates in the scenario's one script session; with
	// WithLease the evaluation runs under the last issued lease, activated for it.
	Source    string `json:"source,omitempty"`
	WithLease bool   `json:"with_lease,omitempty"`
	// Redactor is the stream redactor a set_redactor step installs on Tool: "mask" releases a
	// chunk with every byte replaced by "*", "upper" with its ASCII letters in upper case.
	Redactor string `json:"redactor,omitempty"`
	// AuditEvent is the record a validate_audit_event step checks for durable telemetry
	// (RUN-155); the error names the reference's validation variant.
	AuditEvent *HostAuditEvent `json:"audit_event,omitempty"`
	Expect     HostExpect      `json:"expect"`
}

// HostEvaluation is the outcome of a script run: the eval step's own, or that of the suspended
// evaluation a settlement resumed. Status, ValueKind, Value and Diagnostics are as in
// ScriptTest (scripts.json).
type HostEvaluation struct {
	Status      string   `json:"status"`
	ValueKind   string   `json:"value_kind"`
	Value       string   `json:"value,omitempty"`
	Diagnostics []string `json:"diagnostics"`
}

// HostExpect is the expected outcome of one step. Error names the refusal (an
// ExternalErrorKind name, a tool error kind for a refused start or call with ToolError
// holding it, UnknownPromise or PromiseAlreadyAwaited for await, a registration error kind,
// a lease error kind, InvalidLimits for an audit capacity, or InvalidCursor, Evicted or Ahead for an export
// with Available naming the earliest or next sequence). Otherwise the fields of
// the step's result are set. Audit lists the audit records the step appends that are still
// retained after it, in order; Exported, Next and Dropped are the result of an export and the
// dropped count after an audit step;
// State is the operation's state after the step when the step names an operation that is
// still retained ("" when it was deleted or no operation is named).
type HostExpect struct {
	Error        string                `json:"error,omitempty"`
	ToolError    *HostToolError        `json:"tool_error,omitempty"`
	ID           uint64                `json:"id,omitempty"`
	Output       *string               `json:"output,omitempty"`
	Found        *bool                 `json:"found,omitempty"`
	Ready        *bool                 `json:"ready,omitempty"`
	Running      *bool                 `json:"running,omitempty"`
	Deleted      *int                  `json:"deleted,omitempty"`
	Invocation   *HostInvocation       `json:"invocation,omitempty"`
	Cancellation *HostCancellation     `json:"cancellation,omitempty"`
	Chunk        *HostChunk            `json:"chunk,omitempty"`
	Reconcile    *HostReconcileRequest `json:"reconcile_request,omitempty"`
	Settlements  []HostSettlement      `json:"settlements"`
	Audit        []HostAuditEvent      `json:"audit"`
	State        string                `json:"state"`
	Exported     []HostAuditEvent      `json:"exported,omitempty"`
	Next         *uint64               `json:"next,omitempty"`
	Available    *uint64               `json:"available,omitempty"`
	Dropped      *uint64               `json:"dropped,omitempty"`
	// NextDeadlineMillis is, for next_deadline, the runtime's next deferred deadline in
	// milliseconds after the scenario's clock start, with Found false when there is none.
	NextDeadlineMillis *uint64 `json:"next_deadline_millis,omitempty"`
	// Evaluation is the outcome of an eval step, or of the evaluation a complete step resumed.
	Evaluation *HostEvaluation `json:"evaluation,omitempty"`
	// ActualBytes and LimitBytes are, for a session_nonce refused as TooShort or TooLong, the
	// nonce's length and the bound it breaks.
	ActualBytes *int `json:"actual_bytes,omitempty"`
	LimitBytes  *int `json:"limit_bytes,omitempty"`
}

// HostInvocation is an invocation snapshot (RUN-085).
type HostInvocation struct {
	ID                      uint64  `json:"id"`
	Tool                    string  `json:"tool"`
	Input                   string  `json:"input"`
	CallIndex               int     `json:"call_index"`
	Attempt                 uint32  `json:"attempt"`
	MaxAttempts             uint32  `json:"max_attempts"`
	IdempotencyKey          string  `json:"idempotency_key"`
	Format                  string  `json:"format"`
	MaxOutputBytes          int     `json:"max_output_bytes"`
	RemainingDeadlineMillis *uint64 `json:"remaining_deadline_millis,omitempty"`
}

// HostCancellation is a cancellation request (RUN-130).
type HostCancellation struct {
	ID             uint64 `json:"id"`
	Tool           string `json:"tool"`
	CallIndex      int    `json:"call_index"`
	Attempt        uint32 `json:"attempt"`
	IdempotencyKey string `json:"idempotency_key"`
}

// HostChunk is an accepted stream chunk (RUN-122).
type HostChunk struct {
	ChunkIndex     int    `json:"chunk_index"`
	Text           string `json:"text"`
	IdempotencyKey string `json:"idempotency_key"`
}

// HostReconcileRequest is the tool and operation key of a built reconcile request
// (RUN-080, RUN-160).
type HostReconcileRequest struct {
	Tool         string `json:"tool"`
	OperationKey string `json:"operation_key"`
}

// HostSettlement is one operation settled by the step (RUN-055): its output or tool error
// and whether a script awaited it.
type HostSettlement struct {
	ID        uint64         `json:"id"`
	Awaited   bool           `json:"awaited"`
	Output    *string        `json:"output,omitempty"`
	ToolError *HostToolError `json:"tool_error,omitempty"`
}

// HostAuditEvent is one audit record (RUN-150).
type HostAuditEvent struct {
	EventSequence uint64 `json:"event_sequence"`
	Sequence      uint64 `json:"sequence"`
	Tool          string `json:"tool"`
	InputBytes    int    `json:"input_bytes"`
	OutputBytes   int    `json:"output_bytes"`
	Outcome       string `json:"outcome"`
	RetryClass    string `json:"retry_class,omitempty"`
}
