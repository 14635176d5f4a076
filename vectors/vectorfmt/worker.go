package vectorfmt

// Group types of the worker-side files (authorizer.json, journal.json, storage.json).
const (
	AuthorizerSequenceType = "AuthorizerSequenceTest"
	JournalTransitionType  = "JournalTransitionTest"
	JournalLoadType        = "JournalLoadTest"
	StorageSealType        = "StorageSealTest"
	StorageOpenType        = "StorageOpenTest"
	// StoreSequenceType groups sequences of operations on one authenticated store over a
	// fresh, empty backend (StorageTest.Steps).
	StoreSequenceType = "StoreSequenceTest"
	// StorageCommitmentType groups record commitments (StorageTest.Commitment).
	StorageCommitmentType = "StorageCommitmentTest"
)

// Operations of an authorizer step (AuthorizerStep.Op). The authorize operations take a
// message body and issue an authorization token; the validate operations take the token of
// an earlier step (AuthorizerStep.Target) and a response body.
const (
	OpAuthorize                    = "authorize"
	OpAuthorizeOperation           = "authorize_operation"
	OpAuthorizeReconciliation      = "authorize_reconciliation"
	OpAuthorizeCompensation        = "authorize_compensation"
	OpAuthorizeCancellation        = "authorize_cancellation"
	OpValidateResult               = "validate_result"
	OpValidateCancellationResult   = "validate_cancellation_result"
	OpValidateOperationResult      = "validate_operation_result"
	OpValidateReconciliationResult = "validate_reconciliation_result"
	OpValidateCompensationResult   = "validate_compensation_result"
)

// RepeatPlaceholder is replaced, in the input of a repeated authorizer step, by the 1-based
// repetition number in decimal.
const RepeatPlaceholder = "{n}"

// Operations of a journal step (JournalStep.Op).
const (
	OpAdmit                  = "admit"
	OpObserve                = "observe"
	OpValidateReconciliation = "validate_reconciliation"
	OpObserveReconciliation  = "observe_reconciliation"
	OpAdmitCompensation      = "admit_compensation"
	OpObserveCompensation    = "observe_compensation"
)

// Admission outcomes of a journal step (JournalStep.Admission).
const (
	AdmissionDispatch = "dispatch"
	AdmissionExisting = "existing"
)

// Authorizer is authorizer.json: sequences of session authorizer operations.
type Authorizer struct {
	Header
	TestGroups []AuthorizerGroup `json:"testGroups"`
}

// AuthorizerGroup holds authorizer sequences whose message bodies are decoded in one number
// mode.
type AuthorizerGroup struct {
	// Type is AuthorizerSequenceType.
	Type string `json:"type"`
	// Mode is the number mode used to decode the message bodies.
	Mode  string           `json:"mode"`
	Tests []AuthorizerTest `json:"tests"`
}

// AuthorizerTest creates a session authorizer for Manifest and runs Steps in order. A second
// authorizer with the same manifest exists for steps whose Instance is 1. When Steps is
// empty the manifest is invalid and creating the authorizer fails with the test's Error.
// Otherwise the test is invalid when a step fails, and Error is the first failing step's
// error kind.
type AuthorizerTest struct {
	Case
	// Manifest is the capability manifest as JSON.
	Manifest *Text            `json:"manifest"`
	Steps    []AuthorizerStep `json:"steps"`
}

// AuthorizerStep is one authorizer operation.
type AuthorizerStep struct {
	// Op is one of the Op* operation names.
	Op string `json:"op"`
	// Input is the message body: an invocation, a dispatch, reconcile, compensation or
	// cancellation request, or a tool, operation, compensation or cancellation result. It is
	// decoded with the serde rules of its structure and not validated: validation is the
	// authorizer's job.
	Input *Text `json:"input"`
	// Target is the 0-based index of the earlier step whose authorization token this step
	// uses: the authorized invocation for authorize_cancellation and validate_result, and the
	// token of the matching authorize step for the other validate operations.
	Target *int `json:"target,omitempty"`
	// Instance selects the authorizer: 0 (absent) is the primary one, 1 the second one.
	Instance int `json:"instance,omitempty"`
	// Repeat, when present, runs the step Repeat times, replacing RepeatPlaceholder in Input
	// by the repetition number 1..Repeat; every repetition has the step's outcome. A repeated
	// step is never a Target.
	Repeat int `json:"repeat,omitempty"`
	// Error is the expected error kind, empty when the step succeeds.
	Error string `json:"error,omitempty"`
}

// Journal is journal.json: worker operation journal transitions and loading.
type Journal struct {
	Header
	TestGroups []JournalGroup `json:"testGroups"`
}

// JournalGroup holds transition tests (JournalTransitionType) or load tests
// (JournalLoadType) in one number mode.
type JournalGroup struct {
	Type string `json:"type"`
	// Mode is the number mode used to load journals and decode requests and statuses.
	Mode string `json:"mode"`
	// SessionID is the session of every request of a transition group.
	SessionID string        `json:"session_id,omitempty"`
	Tests     []JournalTest `json:"tests"`
}

// JournalTest is a transition test (Manifest, Journal or NewScope, Steps) or a load test
// (Input, optionally Scope; Output).
type JournalTest struct {
	Case
	// Manifest is the capability manifest, as JSON, under which each step's request is
	// authorized (unless the step names its own).
	Manifest *Text `json:"manifest,omitempty"`
	// Journal is the initial journal as JSON; it loads without error.
	Journal *Text `json:"journal,omitempty"`
	// NewScope, instead of Journal, starts from a new empty journal for this scope.
	NewScope *string       `json:"new_scope,omitempty"`
	Steps    []JournalStep `json:"steps,omitempty"`

	// Input is the journal text a load test reads.
	Input *Text `json:"input,omitempty"`
	// Scope, when present, makes a load test load for this scope (load, then validate_scope).
	Scope *string `json:"scope,omitempty"`
	// Output is the serialized form of a journal that loaded.
	Output *Text `json:"output,omitempty"`
}

// JournalStep authorizes Request with a fresh authorizer for the effective manifest (which
// always succeeds in these vectors) and runs Op on the journal with the resulting token.
type JournalStep struct {
	Op string `json:"op"`
	// Manifest, when present, replaces the test's manifest for this step (a changed grant).
	Manifest *Text `json:"manifest,omitempty"`
	// Request is the dispatch, reconcile or compensation request body as JSON.
	Request *Text `json:"request"`
	// Status is the observed operation status as JSON (observe operations only). A status
	// that does not decode as a wire status fails the step with Serialization.
	Status *Text `json:"status,omitempty"`
	// Error is the expected error kind, empty when the step succeeds.
	Error string `json:"error,omitempty"`
	// Admission is AdmissionDispatch or AdmissionExisting for a successful admit or
	// admit_compensation.
	Admission string `json:"admission,omitempty"`
	// State is the stored state an "existing" admission reports, or the state a successful
	// observe operation returns.
	State *Text `json:"state,omitempty"`
	// Journal is the serialized journal after the step (unchanged when the step fails).
	Journal *Text `json:"journal"`
}

// Storage is storage.json: authenticated storage envelopes.
type Storage struct {
	Header
	TestGroups []StorageGroup `json:"testGroups"`
}

// StorageGroup holds seal tests (StorageSealType) or open tests (StorageOpenType).
type StorageGroup struct {
	Type  string        `json:"type"`
	Tests []StorageTest `json:"tests"`
}

// StorageKeyEntry is a verification-only key of a keyring.
type StorageKeyEntry struct {
	KeyID  string `json:"key_id"`
	KeyHex string `json:"key_hex"`
}

// StorageTest is a seal test (payload in; envelope and tag out) or an open test (envelope
// in; revision, key id and payload out). The key is the keyring's active key.
type StorageTest struct {
	Case
	// KeyHex is the 32-byte storage key in lowercase hex (a test key).
	KeyHex string `json:"key_hex"`
	// KeyID is the identifier of that key.
	KeyID string `json:"key_id"`
	// Namespace and Name are the record key.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Revision is the revision sealed (seal) or loaded (open, valid tests).
	Revision *uint64 `json:"revision,omitempty"`
	// Payload (valid UTF-8) or PayloadHex is the payload sealed (seal) or loaded (open).
	Payload    *Text   `json:"payload,omitempty"`
	PayloadHex *string `json:"payload_hex,omitempty"`
	// Envelope (valid UTF-8) or EnvelopeHex is the sealed envelope (seal output) or the
	// stored envelope bytes (open input).
	Envelope    *Text   `json:"envelope,omitempty"`
	EnvelopeHex *string `json:"envelope_hex,omitempty"`
	// Tag is the record tag in lowercase hex (seal output).
	Tag string `json:"tag,omitempty"`
	// RecordRevision and RevisionFloor are what the backend reports with the stored envelope
	// (open input).
	RecordRevision *uint64 `json:"record_revision,omitempty"`
	RevisionFloor  *uint64 `json:"revision_floor,omitempty"`
	// ReadKeys are further verification keys of the keyring (open input).
	ReadKeys []StorageKeyEntry `json:"read_keys,omitempty"`
	// OpenedKeyID is the key id of the loaded record (open output).
	OpenedKeyID string `json:"opened_key_id,omitempty"`
	// Steps are the operations of a sequence test, applied in order to one authenticated store
	// over a fresh, empty backend whose keyring holds KeyID (KeyHex) as its active key.
	Steps []StoreStep `json:"steps,omitempty"`
	// Commitment is, in a commitment test, the record commitment (64 lowercase hex digits) of
	// Envelope stored at Revision under Namespace and Name (STO-063).
	Commitment string `json:"commitment,omitempty"`
}

// Store operations of a sequence test (StoreStep.Op).
const (
	StoreOpLoad          = "load"           // load the record
	StoreOpCreate        = "create"         // compare-and-swap expecting "absent"
	StoreOpReplace       = "replace"        // compare-and-swap expecting Expected
	StoreOpCreateFenced  = "create_fenced"  // fenced compare-and-swap expecting "absent", with Token
	StoreOpReplaceFenced = "replace_fenced" // fenced compare-and-swap expecting Expected, with Token
	StoreOpReserveFence  = "reserve_fence"  // reserve the record's next fencing token
	StoreOpCurrentFence  = "current_fence"  // read the record's current fence
	StoreOpRotateKey     = "rotate_key"     // add KeyID (KeyHex) to the keyring and make it active
	StoreOpAddReadKey    = "add_read_key"   // add KeyID (KeyHex) as a verification key
	StoreOpRetireKey     = "retire_key"     // retire KeyID from the keyring
)

// StoreStep is one operation of a sequence test and what it must give.
type StoreStep struct {
	Op string `json:"op"`
	// Namespace and Name are the record key of a record operation; a step that names neither
	// uses the test's Namespace and Name.
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	// Expected is the revision a replace expects.
	Expected *uint64 `json:"expected,omitempty"`
	// Payload is the payload written, or PayloadBytes the length of a payload of that many
	// bytes 0x61 ("a").
	Payload      *Text `json:"payload,omitempty"`
	PayloadBytes *int  `json:"payload_bytes,omitempty"`
	// Token is the fencing token of a fenced write.
	Token *uint64 `json:"token,omitempty"`
	// KeyID and KeyHex name a key of a keyring operation.
	KeyID  string `json:"key_id,omitempty"`
	KeyHex string `json:"key_hex,omitempty"`
	// BackendAnswers, on a write, replaces the backend's answer to the step's compare-and-swap:
	// the backend then writes nothing and answers this outcome, as a faulty backend might.
	BackendAnswers *StoreBackendOutcome `json:"backend_answers,omitempty"`
	// Expect is the step's outcome.
	Expect StoreExpect `json:"expect"`
}

// StoreBackendOutcome is a backend's answer to a compare-and-swap: Stored, or a conflict with
// the current revision (Actual, or none with ActualAbsent), and the revision floor.
type StoreBackendOutcome struct {
	Stored       bool    `json:"stored"`
	Actual       *uint64 `json:"actual,omitempty"`
	ActualAbsent bool    `json:"actual_absent,omitempty"`
	Floor        uint64  `json:"floor"`
}

// StoreExpect is the outcome of one StoreStep: the error kind, or what the operation returns.
// Error is the kind of the store's error; for Backend, Cause is the kind the backend reported,
// and CurrentFence and SuppliedFence its data (FencingRequired, FencingTokenRejected). A
// WriteConflict carries Actual (the current revision, absent when omitted with ActualAbsent)
// and Floor. A load gives Absent, or Revision, Payload and KeyID; a write gives Revision and
// KeyID; a fence operation gives Fence.
type StoreExpect struct {
	Error         string  `json:"error,omitempty"`
	Cause         string  `json:"cause,omitempty"`
	Absent        bool    `json:"absent,omitempty"`
	Revision      *uint64 `json:"revision,omitempty"`
	Payload       *Text   `json:"payload,omitempty"`
	KeyID         string  `json:"key_id,omitempty"`
	Fence         *uint64 `json:"fence,omitempty"`
	Actual        *uint64 `json:"actual,omitempty"`
	ActualAbsent  bool    `json:"actual_absent,omitempty"`
	Floor         *uint64 `json:"floor,omitempty"`
	CurrentFence  *uint64 `json:"current_fence,omitempty"`
	SuppliedFence *uint64 `json:"supplied_fence,omitempty"`
}
