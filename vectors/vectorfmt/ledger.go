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
	// PlanSteps are the plan's step IDs (key tests).
	PlanSteps []string `json:"plan_steps,omitempty"`
	// StepID is the step the key is derived for.
	StepID *string `json:"step_id,omitempty"`
	// Tool is the tool name the key is derived for.
	Tool *string `json:"tool,omitempty"`
	// NonceHex is the operation nonce in hex ("" for an empty nonce).
	NonceHex *string `json:"nonce_hex,omitempty"`
	// OperationKey is the expected derived key.
	OperationKey *string `json:"operation_key,omitempty"`
	// Records are the operations recorded into a new ledger, in order.
	Records []LedgerRecord `json:"records,omitempty"`
	// Output is the exact canonical ledger encoding.
	Output *Text `json:"output,omitempty"`
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
