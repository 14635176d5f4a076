package host

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"strconv"
	"strings"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/derive"
	"github.com/splashv5/conform/impl/errkind"
	"github.com/splashv5/conform/impl/protocol"
	"lukechampine.com/blake3"
)

// Workflow operation ledger bounds (format 2).
const (
	LedgerFormatVersion      = 2
	MaxLedgerOperations      = 64
	MaxLedgerBytes           = 64 * 1024
	MaxLedgerInputBytes      = 256 * 1024
	MaxOperationNonceBytes   = 128
	MaxStepIDBytes           = 128
	ledgerInputDomain        = "splash-workflow-operation-input-v1"
	ledgerOperationKeyDomain = "splash-workflow-operation-key-v1"
)

// LedgerState is the lifecycle state a ledger records for an operation or a compensation.
type LedgerState uint8

// The ledger states.
const (
	LedgerPending LedgerState = iota + 1
	LedgerRunning
	LedgerSucceeded
	LedgerFailed
	LedgerCancelled
)

var ledgerStateNames = []string{"pending", "running", "succeeded", "failed", "cancelled"}

// String returns the state's JSON name.
func (s LedgerState) String() string {
	if s >= LedgerPending && s <= LedgerCancelled {
		return ledgerStateNames[s-1]
	}
	return "LedgerState(" + strconv.Itoa(int(s)) + ")"
}

// Terminal reports succeeded, failed and cancelled.
func (s LedgerState) Terminal() bool {
	return s == LedgerSucceeded || s == LedgerFailed || s == LedgerCancelled
}

// accepts is the transition rule on state kinds: pending and running accept any observation;
// a terminal state accepts only itself.
func (s LedgerState) accepts(observed LedgerState) bool {
	switch s {
	case LedgerPending, LedgerRunning:
		return observed >= LedgerRunning && observed <= LedgerCancelled
	}
	return s == observed
}

func observedState(st protocol.OperationStatus) LedgerState {
	switch st.State {
	case protocol.StateRunning:
		return LedgerRunning
	case protocol.StateSucceeded:
		return LedgerSucceeded
	case protocol.StateFailed:
		return LedgerFailed
	case protocol.StateCancelled:
		return LedgerCancelled
	}
	return LedgerPending
}

// LedgerErrorKind names one ledger or ledger-bridge rule. It is an error; String returns the
// variant name.
type LedgerErrorKind = errkind.Kind[ledgerKinds]

// ledgerKinds is the space of the ledger error kinds.
type ledgerKinds struct{}

// Table describes the ledger error kinds.
func (ledgerKinds) Table() *errkind.Table { return &ledgerKindTable }

// The ledger error kinds (the reference's WorkflowOperationLedgerError, plus the bridge's own).
const (
	ErrLedgerTooLarge LedgerErrorKind = iota + 1
	ErrLedgerInvalidEncoding
	ErrLedgerUnsupportedVersion
	ErrLedgerInvalidPlanFingerprint
	ErrLedgerTooManyOperations
	ErrLedgerRevisionExhausted
	ErrLedgerStaleRevision
	ErrLedgerInputTooLarge
	ErrLedgerEmptyOperationNonce
	ErrLedgerOperationNonceTooLarge
	ErrLedgerInvalidStepID
	ErrLedgerInvalidTool
	ErrLedgerInvalidOperationKey
	ErrLedgerInvalidInputFingerprint
	ErrLedgerInputFingerprintMismatch
	ErrLedgerOperationBindingMismatch
	ErrLedgerOperationAlreadyTerminal
	ErrLedgerInvalidCompensationKey
	ErrLedgerInvalidCompensationTenantScope
	ErrLedgerInvalidCompensationGrantFingerprint
	ErrLedgerCompensationRequiresSucceededOperation
	ErrLedgerDuplicateOperationKey
	ErrLedgerPlanMismatch
	ErrLedgerUnknownStep
	ErrLedgerUnknownOperation
	ErrLedgerReconciliationMismatch
	ErrLedgerInvalidStateTransition
	// ErrLedgerDispatchRequiresHostAuthenticator and ErrLedgerUnexpectedDispatchMessage refuse
	// an operation dispatch without a host-role authenticator, and an answer that is not its
	// operation_result.
	ErrLedgerDispatchRequiresHostAuthenticator
	ErrLedgerUnexpectedDispatchMessage
	// ErrLedgerReconciliationRequiresHostAuthenticator and
	// ErrLedgerUnexpectedReconciliationMessage are the same refusals for a reconciliation and
	// its reconciled_operation answer.
	ErrLedgerReconciliationRequiresHostAuthenticator
	ErrLedgerUnexpectedReconciliationMessage
	ErrLedgerProtocol
	// ErrLedgerPreparedElsewhere rejects a prepared or claimed operation from another runtime
	// or plan (the reference's ApprovalMismatch).
	ErrLedgerPreparedElsewhere
	// ErrLedgerNoSuspendedStep rejects a step position outside the plan.
	ErrLedgerNoSuspendedStep
	// ErrLedgerStore is a persistence failure of LedgerStore.
	ErrLedgerStore
	// The compensation variants of the reference.
	ErrLedgerCompensationNotGranted
	ErrLedgerCompensationGrantDenied
	ErrLedgerCompensationActionDenied
	ErrLedgerCompensationInputFingerprintMismatch
	ErrLedgerCompensationAlreadyRecorded
	ErrLedgerCompensationPolicyMismatch
	ErrLedgerUnknownCompensation
	ErrLedgerCompensationRequestMismatch
	ErrLedgerCompensationDispatchRequiresHostAuthenticator
	ErrLedgerUnexpectedCompensationMessage
	ErrLedgerInvalidCompensationStateTransition
)

var ledgerKindTable = errkind.Table{Type: "LedgerErrorKind", Prefix: "workflow operation ledger: ", Kinds: []errkind.Entry{
	ErrLedgerTooLarge:                                      {Name: "TooLarge"},
	ErrLedgerInvalidEncoding:                               {Name: "InvalidEncoding"},
	ErrLedgerUnsupportedVersion:                            {Name: "UnsupportedVersion"},
	ErrLedgerInvalidPlanFingerprint:                        {Name: "InvalidPlanFingerprint"},
	ErrLedgerTooManyOperations:                             {Name: "TooManyOperations"},
	ErrLedgerRevisionExhausted:                             {Name: "RevisionExhausted"},
	ErrLedgerStaleRevision:                                 {Name: "StaleRevision"},
	ErrLedgerInputTooLarge:                                 {Name: "InputTooLarge"},
	ErrLedgerEmptyOperationNonce:                           {Name: "EmptyOperationNonce"},
	ErrLedgerOperationNonceTooLarge:                        {Name: "OperationNonceTooLarge"},
	ErrLedgerInvalidStepID:                                 {Name: "InvalidStepId"},
	ErrLedgerInvalidTool:                                   {Name: "InvalidTool"},
	ErrLedgerInvalidOperationKey:                           {Name: "InvalidOperationKey"},
	ErrLedgerInvalidInputFingerprint:                       {Name: "InvalidInputFingerprint"},
	ErrLedgerInputFingerprintMismatch:                      {Name: "InputFingerprintMismatch"},
	ErrLedgerOperationBindingMismatch:                      {Name: "OperationBindingMismatch"},
	ErrLedgerOperationAlreadyTerminal:                      {Name: "OperationAlreadyTerminal"},
	ErrLedgerInvalidCompensationKey:                        {Name: "InvalidCompensationKey"},
	ErrLedgerInvalidCompensationTenantScope:                {Name: "InvalidCompensationTenantScope"},
	ErrLedgerInvalidCompensationGrantFingerprint:           {Name: "InvalidCompensationGrantFingerprint"},
	ErrLedgerCompensationRequiresSucceededOperation:        {Name: "CompensationRequiresSucceededOperation"},
	ErrLedgerDuplicateOperationKey:                         {Name: "DuplicateOperationKey"},
	ErrLedgerPlanMismatch:                                  {Name: "PlanMismatch"},
	ErrLedgerUnknownStep:                                   {Name: "UnknownStep"},
	ErrLedgerUnknownOperation:                              {Name: "UnknownOperation"},
	ErrLedgerReconciliationMismatch:                        {Name: "ReconciliationMismatch"},
	ErrLedgerInvalidStateTransition:                        {Name: "InvalidStateTransition"},
	ErrLedgerDispatchRequiresHostAuthenticator:             {Name: "OperationDispatchRequiresHostAuthenticator"},
	ErrLedgerUnexpectedDispatchMessage:                     {Name: "UnexpectedOperationDispatchMessage"},
	ErrLedgerReconciliationRequiresHostAuthenticator:       {Name: "ReconciliationRequiresHostAuthenticator"},
	ErrLedgerUnexpectedReconciliationMessage:               {Name: "UnexpectedReconciliationMessage"},
	ErrLedgerProtocol:                                      {Name: "Protocol"},
	ErrLedgerPreparedElsewhere:                             {Name: "ApprovalMismatch"},
	ErrLedgerNoSuspendedStep:                               {Name: "NoSuspendedExecution"},
	ErrLedgerStore:                                         {Name: "Store"},
	ErrLedgerCompensationNotGranted:                        {Name: "CompensationNotGranted"},
	ErrLedgerCompensationGrantDenied:                       {Name: "CompensationGrantDenied"},
	ErrLedgerCompensationActionDenied:                      {Name: "CompensationActionDenied"},
	ErrLedgerCompensationInputFingerprintMismatch:          {Name: "CompensationInputFingerprintMismatch"},
	ErrLedgerCompensationAlreadyRecorded:                   {Name: "CompensationAlreadyRecorded"},
	ErrLedgerCompensationPolicyMismatch:                    {Name: "CompensationPolicyMismatch"},
	ErrLedgerUnknownCompensation:                           {Name: "UnknownCompensation"},
	ErrLedgerCompensationRequestMismatch:                   {Name: "CompensationRequestMismatch"},
	ErrLedgerCompensationDispatchRequiresHostAuthenticator: {Name: "CompensationDispatchRequiresHostAuthenticator"},
	ErrLedgerUnexpectedCompensationMessage:                 {Name: "UnexpectedCompensationMessage"},
	ErrLedgerInvalidCompensationStateTransition:            {Name: "InvalidCompensationStateTransition"},
}}

// LedgerError is a ledger or ledger-bridge rejection. Value names the offending key, step or
// tool (bounded to 96 bytes in the message); Err wraps a protocol or storage error.
type LedgerError struct {
	errkind.Kind[ledgerKinds]
	Value    string
	Actual   uint64
	Maximum  uint64
	State    LedgerState
	Observed LedgerState
	Err      error
}

func ledgerError(kind LedgerErrorKind, value string) *LedgerError {
	return &LedgerError{Kind: kind, Value: value}
}

// Error describes the rejection.
func (e *LedgerError) Error() string {
	msg := e.Kind.Error()
	if e.Value != "" {
		v := e.Value
		if len(v) > 96 {
			v = v[:96] + "…"
		}
		msg += ": " + strconv.Quote(v)
	}
	switch e.Kind {
	case ErrLedgerStaleRevision, ErrLedgerInputTooLarge, ErrLedgerOperationNonceTooLarge:
		msg += " (" + strconv.FormatUint(e.Actual, 10) + ", limit " + strconv.FormatUint(e.Maximum, 10) + ")"
	case ErrLedgerInvalidStateTransition, ErrLedgerOperationAlreadyTerminal, ErrLedgerCompensationRequiresSucceededOperation,
		ErrLedgerInvalidCompensationStateTransition:
		msg += " (" + e.State.String()
		if e.Observed != 0 {
			msg += " -> " + e.Observed.String()
		}
		msg += ")"
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the wrapped protocol or storage error.
func (e *LedgerError) Unwrap() error { return e.Err }

// LedgerCompensation is the durable intent for the inverse of a succeeded operation.
type LedgerCompensation struct {
	CompensationKey  string
	InputFingerprint string
	TenantScope      string
	GrantFingerprint string
	State            LedgerState
}

// LedgerOperation is one durable operation record: no raw input, output or error text.
type LedgerOperation struct {
	StepID           string
	Tool             string
	OperationKey     string
	InputFingerprint string
	State            LedgerState
	Compensation     *LedgerCompensation
}

// Ledger is the bounded, plan-bound record of a workflow's external operations. It survives a
// restart through a store, but it cannot restore a promise or prove an effect.
type Ledger struct {
	formatVersion   uint8
	revision        uint64
	planFingerprint string
	operations      []LedgerOperation
}

// NewLedger returns an empty ledger (revision 0) for the plan with this fingerprint.
func NewLedger(planFingerprint string) (*Ledger, error) {
	l := &Ledger{formatVersion: LedgerFormatVersion, planFingerprint: planFingerprint}
	if err := l.validateSyntax(); err != nil {
		return nil, err
	}
	return l, nil
}

// Revision returns the revision, incremented by every change.
func (l *Ledger) Revision() uint64 { return l.revision }

// PlanFingerprint returns the plan the ledger belongs to.
func (l *Ledger) PlanFingerprint() string { return l.planFingerprint }

// Operations returns a copy of the records in insertion order.
func (l *Ledger) Operations() []LedgerOperation {
	out := make([]LedgerOperation, len(l.operations))
	for i, op := range l.operations {
		out[i] = op
		if op.Compensation != nil {
			c := *op.Compensation
			out[i].Compensation = &c
		}
	}
	return out
}

// Operation returns the record with key.
func (l *Ledger) Operation(key string) (LedgerOperation, bool) {
	if i := l.index(key); i >= 0 {
		return l.Operations()[i], true
	}
	return LedgerOperation{}, false
}

func (l *Ledger) index(key string) int {
	for i := range l.operations {
		if l.operations[i].OperationKey == key {
			return i
		}
	}
	return -1
}

// Clone returns an independent copy.
func (l *Ledger) Clone() *Ledger {
	c := *l
	c.operations = l.Operations()
	return &c
}

// LedgerInputFingerprint returns hex(BLAKE3("splash-workflow-operation-input-v1" ||
// u64be(len(input)) || input)).
func LedgerInputFingerprint(input []byte) string {
	b := make([]byte, 0, len(ledgerInputDomain)+8+len(input))
	b = append(b, ledgerInputDomain...)
	b = binary.BigEndian.AppendUint64(b, uint64(len(input)))
	b = append(b, input...)
	sum := blake3.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func appendLP(b []byte, part []byte) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(len(part)))
	return append(b, part...)
}

// DeriveOperationKey returns "op-" + hex(BLAKE3("splash-workflow-operation-key-v1" ||
// lp(plan fingerprint) || lp(step) || lp(tool) || lp(input) || lp(nonce))). It does not check
// its arguments; PrepareNextExternalOperation does.
func DeriveOperationKey(planFingerprint, stepID, tool string, input, nonce []byte) string {
	b := make([]byte, 0, len(ledgerOperationKeyDomain)+40+len(planFingerprint)+len(stepID)+len(tool)+len(input)+len(nonce))
	b = append(b, ledgerOperationKeyDomain...)
	b = appendLP(b, []byte(planFingerprint))
	b = appendLP(b, []byte(stepID))
	b = appendLP(b, []byte(tool))
	b = appendLP(b, input)
	b = appendLP(b, nonce)
	sum := blake3.Sum256(b)
	return "op-" + hex.EncodeToString(sum[:])
}

func isStepID(s string) bool { return protocol.IsToken(s) }

func isOperationKey(s string) bool {
	return protocol.IsToken(s) && !strings.HasPrefix(s, protocol.CompensationKeyPrefix)
}

func isCompensationKey(s string) bool {
	return strings.HasPrefix(s, protocol.CompensationKeyPrefix) && protocol.IsToken(s)
}

func (op *LedgerOperation) validateSyntax() error {
	switch {
	case !isStepID(op.StepID):
		return ledgerError(ErrLedgerInvalidStepID, op.StepID)
	case !protocol.IsToken(op.Tool):
		return ledgerError(ErrLedgerInvalidTool, op.Tool)
	case !isOperationKey(op.OperationKey):
		return ledgerError(ErrLedgerInvalidOperationKey, op.OperationKey)
	case !protocol.IsFingerprint(op.InputFingerprint):
		return ledgerError(ErrLedgerInvalidInputFingerprint, "")
	}
	if c := op.Compensation; c != nil {
		if op.State != LedgerSucceeded {
			return &LedgerError{Kind: ErrLedgerCompensationRequiresSucceededOperation, Value: op.OperationKey, State: op.State}
		}
		switch {
		case !isCompensationKey(c.CompensationKey):
			return ledgerError(ErrLedgerInvalidCompensationKey, c.CompensationKey)
		case !protocol.IsFingerprint(c.InputFingerprint):
			return ledgerError(ErrLedgerInvalidInputFingerprint, "")
		case !protocol.IsToken(c.TenantScope):
			return ledgerError(ErrLedgerInvalidCompensationTenantScope, c.TenantScope)
		case !protocol.IsFingerprint(c.GrantFingerprint):
			return ledgerError(ErrLedgerInvalidCompensationGrantFingerprint, "")
		}
	}
	return nil
}

func (op *LedgerOperation) verifyInput(input []byte) error {
	if len(input) > MaxLedgerInputBytes {
		return &LedgerError{Kind: ErrLedgerInputTooLarge, Actual: uint64(len(input)), Maximum: MaxLedgerInputBytes}
	}
	if op.InputFingerprint != LedgerInputFingerprint(input) {
		return ledgerError(ErrLedgerInputFingerprintMismatch, op.OperationKey)
	}
	return nil
}

func (l *Ledger) validateSyntax() error {
	if l.formatVersion != LedgerFormatVersion {
		return &LedgerError{Kind: ErrLedgerUnsupportedVersion, Actual: uint64(l.formatVersion)}
	}
	if !protocol.IsFingerprint(l.planFingerprint) {
		return ledgerError(ErrLedgerInvalidPlanFingerprint, "")
	}
	if len(l.operations) > MaxLedgerOperations {
		return ledgerError(ErrLedgerTooManyOperations, "")
	}
	seen := make(map[string]bool, len(l.operations))
	for i := range l.operations {
		op := &l.operations[i]
		if err := op.validateSyntax(); err != nil {
			return err
		}
		if seen[op.OperationKey] {
			return ledgerError(ErrLedgerDuplicateOperationKey, op.OperationKey)
		}
		seen[op.OperationKey] = true
	}
	return nil
}

// ValidateMinimumRevision validates the ledger and rejects it when its revision is below a
// host-retained authenticated watermark (the ledger alone cannot detect a rollback).
func (l *Ledger) ValidateMinimumRevision(minimum uint64) error {
	if err := l.validateSyntax(); err != nil {
		return err
	}
	if l.revision < minimum {
		return &LedgerError{Kind: ErrLedgerStaleRevision, Actual: l.revision, Maximum: minimum}
	}
	return nil
}

func (l *Ledger) nextRevision() (uint64, error) {
	if l.revision == math.MaxUint64 {
		return 0, ledgerError(ErrLedgerRevisionExhausted, "")
	}
	return l.revision + 1, nil
}

// Record adds a pending operation for step, tool, key and the canonical input (only its
// fingerprint is stored), incrementing the revision.
func (l *Ledger) Record(stepID, tool, key string, input []byte) error {
	if err := l.validateSyntax(); err != nil {
		return err
	}
	if len(input) > MaxLedgerInputBytes {
		return &LedgerError{Kind: ErrLedgerInputTooLarge, Actual: uint64(len(input)), Maximum: MaxLedgerInputBytes}
	}
	if len(l.operations) >= MaxLedgerOperations {
		return ledgerError(ErrLedgerTooManyOperations, "")
	}
	next, err := l.nextRevision()
	if err != nil {
		return err
	}
	op := LedgerOperation{StepID: stepID, Tool: tool, OperationKey: key, InputFingerprint: LedgerInputFingerprint(input), State: LedgerPending}
	if err := op.validateSyntax(); err != nil {
		return err
	}
	if l.index(key) >= 0 {
		return ledgerError(ErrLedgerDuplicateOperationKey, key)
	}
	l.operations = append(l.operations, op)
	l.revision = next
	return nil
}

// ReconcileRequest builds the reconcile request for a recorded operation after checking the
// canonical input against its fingerprint.
func (l *Ledger) ReconcileRequest(key string, input []byte, sessionID, requestID string) (protocol.OperationReconcileRequest, error) {
	if err := l.validateSyntax(); err != nil {
		return protocol.OperationReconcileRequest{}, err
	}
	if !protocol.IsToken(key) {
		return protocol.OperationReconcileRequest{}, ledgerError(ErrLedgerInvalidOperationKey, key)
	}
	i := l.index(key)
	if i < 0 {
		return protocol.OperationReconcileRequest{}, ledgerError(ErrLedgerUnknownOperation, key)
	}
	op := &l.operations[i]
	if err := op.verifyInput(input); err != nil {
		return protocol.OperationReconcileRequest{}, err
	}
	req, err := protocol.NewOperationReconcileRequest(sessionID, requestID, op.Tool, op.OperationKey)
	if err != nil {
		return protocol.OperationReconcileRequest{}, &LedgerError{Kind: ErrLedgerProtocol, Err: err}
	}
	return req, nil
}

// ApplyVerifiedReconciliation records an authenticated worker observation: request and result
// must validate and match, the operation must exist with the same tool, and the transition must
// be allowed on state kinds. An identical observation changes nothing, not even the revision.
func (l *Ledger) ApplyVerifiedReconciliation(req protocol.OperationReconcileRequest, res protocol.OperationReconcileResult) (LedgerState, error) {
	if err := l.validateSyntax(); err != nil {
		return 0, err
	}
	if err := req.Validate(); err != nil {
		return 0, &LedgerError{Kind: ErrLedgerProtocol, Err: err}
	}
	if err := res.Validate(); err != nil {
		return 0, &LedgerError{Kind: ErrLedgerProtocol, Err: err}
	}
	if !res.MatchesRequest(req) {
		return 0, ledgerError(ErrLedgerReconciliationMismatch, "")
	}
	observed := observedState(res.Status)
	i := l.index(req.OperationKey)
	if i < 0 {
		return 0, ledgerError(ErrLedgerUnknownOperation, req.OperationKey)
	}
	op := &l.operations[i]
	if op.Tool != req.Tool {
		return 0, ledgerError(ErrLedgerReconciliationMismatch, "")
	}
	if !op.State.accepts(observed) {
		return 0, &LedgerError{Kind: ErrLedgerInvalidStateTransition, State: op.State, Observed: observed}
	}
	if op.State != observed {
		next, err := l.nextRevision()
		if err != nil {
			return 0, err
		}
		op.State = observed
		l.revision = next
	}
	return observed, nil
}

// encodedSizeUpperBound is the reference's conservative size estimate, checked before encoding.
func (l *Ledger) encodedSizeUpperBound() uint64 {
	n := uint64(192 + 32)
	for _, op := range l.operations {
		n += 256 + uint64(len(op.StepID)+len(op.Tool)+len(op.OperationKey)+len(op.InputFingerprint))
		if c := op.Compensation; c != nil {
			n += 320 + uint64(len(c.CompensationKey)+len(c.InputFingerprint)+len(c.TenantScope)+len(c.GrantFingerprint))
		}
	}
	return n
}

// Encode returns the ledger's JSON for durable storage, after validating it; a ledger whose
// size estimate or encoding exceeds MaxLedgerBytes is ErrLedgerTooLarge.
func (l *Ledger) Encode() ([]byte, error) {
	if err := l.validateSyntax(); err != nil {
		return nil, err
	}
	if l.encodedSizeUpperBound() > MaxLedgerBytes {
		return nil, ledgerError(ErrLedgerTooLarge, "")
	}
	b := make([]byte, 0, 256+len(l.operations)*320)
	b = append(b, `{"format_version":`...)
	b = strconv.AppendUint(b, uint64(l.formatVersion), 10)
	b = append(b, `,"revision":`...)
	b = strconv.AppendUint(b, l.revision, 10)
	b = append(b, `,"plan_fingerprint":`...)
	b = canonjson.AppendString(b, l.planFingerprint)
	b = append(b, `,"operations":[`...)
	for i, op := range l.operations {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"step_id":`...)
		b = canonjson.AppendString(b, op.StepID)
		b = append(b, `,"tool":`...)
		b = canonjson.AppendString(b, op.Tool)
		b = append(b, `,"operation_key":`...)
		b = canonjson.AppendString(b, op.OperationKey)
		b = append(b, `,"input_fingerprint":`...)
		b = canonjson.AppendString(b, op.InputFingerprint)
		b = append(b, `,"state":"`...)
		b = append(b, op.State.String()...)
		b = append(b, `","compensation":`...)
		if c := op.Compensation; c != nil {
			b = append(b, `{"compensation_key":`...)
			b = canonjson.AppendString(b, c.CompensationKey)
			b = append(b, `,"input_fingerprint":`...)
			b = canonjson.AppendString(b, c.InputFingerprint)
			b = append(b, `,"tenant_scope":`...)
			b = canonjson.AppendString(b, c.TenantScope)
			b = append(b, `,"grant_fingerprint":`...)
			b = canonjson.AppendString(b, c.GrantFingerprint)
			b = append(b, `,"state":"`...)
			b = append(b, c.State.String()...)
			b = append(b, `"}`...)
		} else {
			b = append(b, "null"...)
		}
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	if len(b) > MaxLedgerBytes {
		return nil, ledgerError(ErrLedgerTooLarge, "")
	}
	return b, nil
}

var (
	ledgerStruct = derive.Struct{Name: "WorkflowOperationLedger", DenyUnknown: true, Fields: []derive.Field{
		{Name: "format_version"}, {Name: "revision"}, {Name: "plan_fingerprint"}, {Name: "operations"},
	}}
	ledgerOperationStruct = derive.Struct{Name: "WorkflowOperation", DenyUnknown: true, Fields: []derive.Field{
		{Name: "step_id"}, {Name: "tool"}, {Name: "operation_key"}, {Name: "input_fingerprint"},
		{Name: "state"}, {Name: "compensation", Default: true},
	}}
	ledgerCompensationStruct = derive.Struct{Name: "WorkflowCompensation", DenyUnknown: true, Fields: []derive.Field{
		{Name: "compensation_key"}, {Name: "input_fingerprint"}, {Name: "tenant_scope"},
		{Name: "grant_fingerprint"}, {Name: "state"},
	}}
)

// DecodeLedger decodes and validates a stored ledger: at most MaxLedgerBytes, the serde rules of
// the reference (unknown or repeated fields rejected), then the syntax rules. It does not check
// the ledger against a plan (see Plan).
func DecodeLedger(data []byte) (*Ledger, error) {
	if len(data) > MaxLedgerBytes {
		return nil, ledgerError(ErrLedgerTooLarge, "")
	}
	n, err := canonjson.Parse(data)
	if err != nil {
		return nil, &LedgerError{Kind: ErrLedgerInvalidEncoding, Err: err}
	}
	ctx := derive.Context{Mode: canonjson.Preserve}
	l := &Ledger{}
	err = ledgerStruct.Decode(n, func(i int, v *canonjson.Node) error {
		var err error
		switch i {
		case 0:
			l.formatVersion, err = derive.U8(v, ctx)
		case 1:
			l.revision, err = derive.U64(v, ctx)
		case 2:
			l.planFingerprint, err = derive.String(v)
		case 3:
			l.operations = l.operations[:0]
			err = derive.Seq(v, func(_ int, e *canonjson.Node) error {
				op, err := decodeLedgerOperation(e, ctx)
				l.operations = append(l.operations, op)
				return err
			})
		}
		return err
	})
	if err != nil {
		return nil, &LedgerError{Kind: ErrLedgerInvalidEncoding, Err: err}
	}
	if err := l.validateSyntax(); err != nil {
		return nil, err
	}
	return l, nil
}

func decodeLedgerState(n *canonjson.Node, ctx derive.Context) (LedgerState, error) {
	i, err := derive.UnitEnum(n, ctx, ledgerStateNames)
	return LedgerState(i + 1), err
}

func decodeLedgerOperation(n *canonjson.Node, ctx derive.Context) (LedgerOperation, error) {
	var op LedgerOperation
	err := ledgerOperationStruct.Decode(n, func(i int, v *canonjson.Node) error {
		var err error
		switch i {
		case 0:
			op.StepID, err = derive.String(v)
		case 1:
			op.Tool, err = derive.String(v)
		case 2:
			op.OperationKey, err = derive.String(v)
		case 3:
			op.InputFingerprint, err = derive.String(v)
		case 4:
			op.State, err = decodeLedgerState(v, ctx)
		case 5:
			if derive.IsNull(v) {
				op.Compensation = nil
				return nil
			}
			var c LedgerCompensation
			err = ledgerCompensationStruct.Decode(v, func(j int, w *canonjson.Node) error {
				var err error
				switch j {
				case 0:
					c.CompensationKey, err = derive.String(w)
				case 1:
					c.InputFingerprint, err = derive.String(w)
				case 2:
					c.TenantScope, err = derive.String(w)
				case 3:
					c.GrantFingerprint, err = derive.String(w)
				case 4:
					c.State, err = decodeLedgerState(w, ctx)
				}
				return err
			})
			op.Compensation = &c
		}
		return err
	})
	return op, err
}
