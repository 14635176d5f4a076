package vectorfmt

// LedgerFile is the file name of the host's durable ledger vectors.
const LedgerFile = "ledger.json"

// Group types of ledger.json.
const (
	// LedgerInputFingerprintType groups ledger input fingerprint tests (RUN-181).
	LedgerInputFingerprintType = "LedgerInputFingerprintTest"
	// LedgerOperationKeyType groups operation key derivations and the argument checks of
	// preparing (RUN-181).
	LedgerOperationKeyType = "LedgerOperationKeyTest"
	// LedgerDecodeType groups ledger decoding tests with the canonical re-encoding (RUN-180).
	LedgerDecodeType = "LedgerDecodeTest"
	// LedgerRecordType groups tests that record operations into a new ledger and compare its
	// encoding (RUN-180, RUN-182).
	LedgerRecordType = "LedgerRecordTest"
	// LedgerCompensationKeyType groups compensation key derivations (WFL-010).
	LedgerCompensationKeyType = "LedgerCompensationKeyTest"
	// LedgerCompensationRecordType groups tests that record compensation intents into a
	// stored ledger and compare its encoding (WFL-011).
	LedgerCompensationRecordType = "LedgerCompensationRecordTest"
	// LedgerCompensationObservationType groups tests that record authenticated compensation
	// observations into a stored ledger and compare its encoding (WFL-012).
	LedgerCompensationObservationType = "LedgerCompensationObservationTest"
	// LedgerPlanFingerprintType groups plan fingerprints derived from the plan's steps
	// (WFL-045).
	LedgerPlanFingerprintType = "LedgerPlanFingerprintTest"
	// LedgerRecoveryType groups recoveries of a restored step engine under an explicit policy
	// (WFL-042).
	LedgerRecoveryType = "LedgerRecoveryTest"
)

// Ledger is ledger.json: the durable ledger's derivations and encoding.
type Ledger struct {
	Header
	TestGroups []LedgerGroup `json:"testGroups"`
}

// LedgerGroup holds the tests of one group type.
type LedgerGroup struct {
	Type  string       `json:"type"`
	Tests []LedgerTest `json:"tests"`
}

// LedgerTest is one ledger test. Which fields are present depends on the group type:
//
//   - LedgerInputFingerprintType: Input (or InputHex) in, Fingerprint out.
//   - LedgerOperationKeyType: PlanFingerprint, PlanSteps, StepID, Tool, Input (or InputHex)
//     and NonceHex in; OperationKey out, or the first failing argument check's error.
//   - LedgerDecodeType: the stored document Input in; the canonical encoding Output out.
//   - LedgerRecordType: PlanFingerprint and Records in; the encoding Output of the ledger after
//     every record (a refused record changes nothing).
//   - LedgerCompensationKeyType: PlanFingerprint, OperationKey, Tool, TenantScope,
//     GrantFingerprint, Input (or InputHex) and NonceHex in; CompensationKey out.
//   - LedgerCompensationRecordType: the stored document Ledger and Compensations in; the
//     encoding Output of the ledger after every compensation record (a refused one changes
//     nothing).
//   - LedgerCompensationObservationType: the stored document Ledger and Observations in; the
//     encoding Output of the ledger after every observation (a refused one changes nothing).
//   - LedgerPlanFingerprintType: PlanSteps and PlanSources (one source per step, in order)
//     in; PlanFingerprint out.
//   - LedgerRecoveryType: a step engine of the plan (PlanFingerprint, PlanSteps) restored from
//     the stored document Ledger resumes under a policy of Decisions and CompletedSteps; Phase
//     out (the engine's phase afterwards), and the refusal's error when the policy is refused.
type LedgerTest struct {
	Case
	// Input is the canonical operation input (fingerprint and key tests) or the stored
	// ledger document (decode tests).
	Input *Text `json:"input,omitempty"`
	// InputHex is Input in hex, for inputs that are not valid UTF-8.
	InputHex *string `json:"input_hex,omitempty"`
	// Fingerprint is the expected ledger input fingerprint.
	Fingerprint *string `json:"fingerprint,omitempty"`
	// PlanFingerprint is the plan's fingerprint (key and record tests).
	PlanFingerprint *string `json:"plan_fingerprint,omitempty"`
	// PlanSteps are the plan's step IDs (key and plan fingerprint tests).
	PlanSteps []string `json:"plan_steps,omitempty"`
	// PlanSources are the plan's step sources, one per step ID (plan fingerprint tests).
	PlanSources []string `json:"plan_sources,omitempty"`
	// StepID is the step the key is derived for.
	StepID *string `json:"step_id,omitempty"`
	// Tool is the tool name the key is derived for.
	Tool *string `json:"tool,omitempty"`
	// NonceHex is the operation nonce in hex ("" for an empty nonce).
	NonceHex *string `json:"nonce_hex,omitempty"`
	// OperationKey is the expected derived key (key tests) or the original operation's key
	// (compensation key tests).
	OperationKey *string `json:"operation_key,omitempty"`
	// TenantScope is the compensation's tenant scope (compensation key tests).
	TenantScope *string `json:"tenant_scope,omitempty"`
	// GrantFingerprint is the fingerprint of the grant the compensation policy carries
	// (compensation key tests).
	GrantFingerprint *string `json:"grant_fingerprint,omitempty"`
	// CompensationKey is the expected derived compensation key.
	CompensationKey *string `json:"compensation_key,omitempty"`
	// Ledger is the stored ledger document compensations are recorded into.
	Ledger *Text `json:"ledger,omitempty"`
	// Compensations are the compensation intents recorded into Ledger, in order.
	Compensations []LedgerCompensationRecord `json:"compensations,omitempty"`
	// Observations are the compensation observations recorded into Ledger, in order.
	Observations []LedgerCompensationObservation `json:"observations,omitempty"`
	// Records are the operations recorded into a new ledger, in order.
	Records []LedgerRecord `json:"records,omitempty"`
	// Output is the exact canonical ledger encoding.
	Output *Text `json:"output,omitempty"`
	// Decisions are a recovery policy's decisions, by operation key; an operation they do not
	// name has no decision.
	Decisions []LedgerRecoveryDecision `json:"decisions,omitempty"`
	// CompletedSteps is the plan prefix the recovery policy approves as complete.
	CompletedSteps *int `json:"completed_steps,omitempty"`
	// Phase is the engine's phase after the recovery: Recovering, Running or Failed.
	Phase string `json:"phase,omitempty"`
}

// LedgerRecoveryDecision is the decision for one ledger operation: accept, compensate, fail or
// redispatch.
type LedgerRecoveryDecision struct {
	OperationKey string `json:"operation_key"`
	Decision     string `json:"decision"`
}

// LedgerRecord is one operation recorded into a ledger; Error is the expected refusal, absent
// when the record succeeds.
type LedgerRecord struct {
	StepID       string `json:"step_id"`
	Tool         string `json:"tool"`
	OperationKey string `json:"operation_key"`
	Input        *Text  `json:"input"`
	Error        string `json:"error,omitempty"`
}

// LedgerCompensationRecord is one compensation intent recorded into a ledger; Error is the
// expected refusal, absent when the record succeeds.
type LedgerCompensationRecord struct {
	OperationKey     string `json:"operation_key"`
	Tool             string `json:"tool"`
	TenantScope      string `json:"tenant_scope"`
	GrantFingerprint string `json:"grant_fingerprint"`
	CompensationKey  string `json:"compensation_key"`
	Input            *Text  `json:"input"`
	Error            string `json:"error,omitempty"`
}

// LedgerCompensationObservation is one authenticated compensation observation: the
// compensate_operation message the host sent and the compensation_result message it opened.
// State is the expected compensation state after it; Error the expected refusal.
type LedgerCompensationObservation struct {
	Request Text   `json:"request"`
	Result  Text   `json:"result"`
	State   string `json:"state,omitempty"`
	Error   string `json:"error,omitempty"`
}
