package ledger

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"strconv"
	"strings"

	"lukechampine.com/blake3"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/derive"
	"github.com/splashv5/conform/impl/errkind"
	"github.com/splashv5/conform/impl/protocol"
)

// Workflow operation ledger bounds (format 2).
const (
	FormatVersion          = 2
	MaxOperations          = 64
	MaxBytes               = 64 * 1024
	MaxInputBytes          = 256 * 1024
	MaxOperationNonceBytes = 128
	MaxStepIDBytes         = 128
	ledgerInputDomain      = "splash-workflow-operation-input-v1"
)

// State is the lifecycle state a ledger records for an operation or a compensation.
type State uint8

// The ledger states.
const (
	Pending State = iota + 1
	Running
	Succeeded
	Failed
	Cancelled
)

var ledgerStateNames = []string{"pending", "running", "succeeded", "failed", "cancelled"}

// String returns the state's JSON name.
func (s State) String() string {
	if s >= Pending && s <= Cancelled {
		return ledgerStateNames[s-1]
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// Terminal reports succeeded, failed and cancelled.
func (s State) Terminal() bool {
	return s == Succeeded || s == Failed || s == Cancelled
}

// accepts is the transition rule on state kinds: pending and running accept any observation;
// a terminal state accepts only itself.
func (s State) accepts(observed State) bool {
	switch s {
	case Pending, Running:
		return observed >= Running && observed <= Cancelled
	}
	return s == observed
}

func observedState(st protocol.OperationStatus) State {
	switch st.State {
	case protocol.StateRunning:
		return Running
	case protocol.StateSucceeded:
		return Succeeded
	case protocol.StateFailed:
		return Failed
	case protocol.StateCancelled:
		return Cancelled
	}
	return Pending
}

// ErrorKind names one ledger or ledger-bridge rule.
type ErrorKind = errkind.Kind[kinds]

type kinds struct{}

// Table describes the ledger error kinds.
func (kinds) Table() *errkind.Table { return &kindTable }

// The ledger error kinds (the reference's WorkflowOperationLedgerError, plus the bridge's own);
// a kind's meaning is its name, with its entry's Doc in kindTable.
const (
	ErrTooLarge ErrorKind = iota + 1
	ErrInvalidEncoding
	ErrUnsupportedVersion
	ErrInvalidPlanFingerprint
	ErrTooManyOperations
	ErrRevisionExhausted
	ErrStaleRevision
	ErrInputTooLarge
	ErrEmptyOperationNonce
	ErrOperationNonceTooLarge
	ErrInvalidStepID
	ErrInvalidTool
	ErrInvalidOperationKey
	ErrInvalidInputFingerprint
	ErrInputFingerprintMismatch
	ErrOperationBindingMismatch
	ErrOperationAlreadyTerminal
	ErrInvalidCompensationKey
	ErrInvalidCompensationTenantScope
	ErrInvalidCompensationGrantFingerprint
	ErrCompensationRequiresSucceededOperation
	ErrDuplicateOperationKey
	ErrPlanMismatch
	ErrUnknownStep
	ErrUnknownOperation
	ErrReconciliationMismatch
	ErrInvalidStateTransition
	ErrDispatchRequiresHostAuthenticator
	ErrUnexpectedDispatchMessage
	ErrReconciliationRequiresHostAuthenticator
	ErrUnexpectedReconciliationMessage
	ErrProtocol
	ErrPreparedElsewhere
	ErrNoSuspendedStep
	ErrStore
	ErrCompensationNotGranted
	ErrCompensationGrantDenied
	ErrCompensationActionDenied
	ErrCompensationInputFingerprintMismatch
	ErrCompensationAlreadyRecorded
	ErrCompensationPolicyMismatch
	ErrUnknownCompensation
	ErrCompensationRequestMismatch
	ErrCompensationDispatchRequiresHostAuthenticator
	ErrUnexpectedCompensationMessage
	ErrInvalidCompensationStateTransition
)

var kindTable = errkind.Table{Type: "ErrorKind", Prefix: "workflow operation ledger: ", Kinds: []errkind.Entry{
	ErrTooLarge:                                      {Name: "TooLarge"},
	ErrInvalidEncoding:                               {Name: "InvalidEncoding"},
	ErrUnsupportedVersion:                            {Name: "UnsupportedVersion"},
	ErrInvalidPlanFingerprint:                        {Name: "InvalidPlanFingerprint"},
	ErrTooManyOperations:                             {Name: "TooManyOperations"},
	ErrRevisionExhausted:                             {Name: "RevisionExhausted"},
	ErrStaleRevision:                                 {Name: "StaleRevision"},
	ErrInputTooLarge:                                 {Name: "InputTooLarge"},
	ErrEmptyOperationNonce:                           {Name: "EmptyOperationNonce"},
	ErrOperationNonceTooLarge:                        {Name: "OperationNonceTooLarge"},
	ErrInvalidStepID:                                 {Name: "InvalidStepId"},
	ErrInvalidTool:                                   {Name: "InvalidTool"},
	ErrInvalidOperationKey:                           {Name: "InvalidOperationKey"},
	ErrInvalidInputFingerprint:                       {Name: "InvalidInputFingerprint"},
	ErrInputFingerprintMismatch:                      {Name: "InputFingerprintMismatch"},
	ErrOperationBindingMismatch:                      {Name: "OperationBindingMismatch"},
	ErrOperationAlreadyTerminal:                      {Name: "OperationAlreadyTerminal"},
	ErrInvalidCompensationKey:                        {Name: "InvalidCompensationKey"},
	ErrInvalidCompensationTenantScope:                {Name: "InvalidCompensationTenantScope"},
	ErrInvalidCompensationGrantFingerprint:           {Name: "InvalidCompensationGrantFingerprint"},
	ErrCompensationRequiresSucceededOperation:        {Name: "CompensationRequiresSucceededOperation"},
	ErrDuplicateOperationKey:                         {Name: "DuplicateOperationKey"},
	ErrPlanMismatch:                                  {Name: "PlanMismatch"},
	ErrUnknownStep:                                   {Name: "UnknownStep"},
	ErrUnknownOperation:                              {Name: "UnknownOperation"},
	ErrReconciliationMismatch:                        {Name: "ReconciliationMismatch"},
	ErrInvalidStateTransition:                        {Name: "InvalidStateTransition"},
	ErrDispatchRequiresHostAuthenticator:             {Name: "OperationDispatchRequiresHostAuthenticator", Doc: "an operation dispatch without a host-role authenticator"},
	ErrUnexpectedDispatchMessage:                     {Name: "UnexpectedOperationDispatchMessage", Doc: "its answer is not an operation_result"},
	ErrReconciliationRequiresHostAuthenticator:       {Name: "ReconciliationRequiresHostAuthenticator", Doc: "a reconciliation without a host-role authenticator"},
	ErrUnexpectedReconciliationMessage:               {Name: "UnexpectedReconciliationMessage", Doc: "its answer is not a reconciled_operation"},
	ErrProtocol:                                      {Name: "Protocol"},
	ErrPreparedElsewhere:                             {Name: "ApprovalMismatch", Doc: "a prepared or claimed operation from another runtime or plan"},
	ErrNoSuspendedStep:                               {Name: "NoSuspendedExecution", Doc: "a step position outside the plan"},
	ErrStore:                                         {Name: "Store", Doc: "a persistence failure of Store; Err holds it"},
	ErrCompensationNotGranted:                        {Name: "CompensationNotGranted"},
	ErrCompensationGrantDenied:                       {Name: "CompensationGrantDenied"},
	ErrCompensationActionDenied:                      {Name: "CompensationActionDenied"},
	ErrCompensationInputFingerprintMismatch:          {Name: "CompensationInputFingerprintMismatch"},
	ErrCompensationAlreadyRecorded:                   {Name: "CompensationAlreadyRecorded"},
	ErrCompensationPolicyMismatch:                    {Name: "CompensationPolicyMismatch"},
	ErrUnknownCompensation:                           {Name: "UnknownCompensation"},
	ErrCompensationRequestMismatch:                   {Name: "CompensationRequestMismatch"},
	ErrCompensationDispatchRequiresHostAuthenticator: {Name: "CompensationDispatchRequiresHostAuthenticator"},
	ErrUnexpectedCompensationMessage:                 {Name: "UnexpectedCompensationMessage"},
	ErrInvalidCompensationStateTransition:            {Name: "InvalidCompensationStateTransition"},
}}

// Error is a ledger or ledger-bridge rejection. Value names the offending key, step or
// tool (bounded to 96 bytes in the message); Err wraps a protocol or storage error.
type Error struct {
	errkind.Kind[kinds]
	Value    string
	Actual   uint64
	Maximum  uint64
	State    State
	Observed State
	Err      error
}

// Error describes the rejection.
func (e *Error) Error() string {
	msg := e.Kind.Error()
	if e.Value != "" {
		v := e.Value
		if len(v) > 96 {
			v = v[:96] + "…"
		}
		msg += ": " + strconv.Quote(v)
	}
	switch e.Kind {
	case ErrStaleRevision, ErrInputTooLarge, ErrOperationNonceTooLarge:
		msg += " (" + strconv.FormatUint(e.Actual, 10) + ", limit " + strconv.FormatUint(e.Maximum, 10) + ")"
	case ErrInvalidStateTransition, ErrOperationAlreadyTerminal, ErrCompensationRequiresSucceededOperation,
		ErrInvalidCompensationStateTransition:
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
func (e *Error) Unwrap() error { return e.Err }

// Compensation is the durable intent for the inverse of a succeeded operation.
type Compensation struct {
	CompensationKey  string
	InputFingerprint string
	TenantScope      string
	GrantFingerprint string
	State            State
}

// Operation is one durable operation record: no raw input, output or error text.
type Operation struct {
	StepID           string
	Tool             string
	OperationKey     string
	InputFingerprint string
	State            State
	Compensation     *Compensation
}

// Ledger is the bounded, plan-bound record of a workflow's external operations. It survives a
// restart through a store, but it cannot restore a promise or prove an effect.
type Ledger struct {
	formatVersion   uint8
	revision        uint64
	planFingerprint string
	operations      []Operation
}

// New returns an empty ledger (revision 0) for the plan with this fingerprint.
func New(planFingerprint string) (*Ledger, error) {
	l := &Ledger{formatVersion: FormatVersion, planFingerprint: planFingerprint}
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
func (l *Ledger) Operations() []Operation {
	out := make([]Operation, len(l.operations))
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
func (l *Ledger) Operation(key string) (Operation, bool) {
	if i := l.index(key); i >= 0 {
		return l.Operations()[i], true
	}
	return Operation{}, false
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

// InputFingerprint returns hex(BLAKE3("splash-workflow-operation-input-v1" ||
// u64be(len(input)) || input)).
func InputFingerprint(input []byte) string {
	b := make([]byte, 0, len(ledgerInputDomain)+8+len(input))
	b = append(b, ledgerInputDomain...)
	b = binary.BigEndian.AppendUint64(b, uint64(len(input)))
	b = append(b, input...)
	sum := blake3.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func isStepID(s string) bool { return protocol.IsToken(s) }

func isOperationKey(s string) bool {
	return protocol.IsToken(s) && !strings.HasPrefix(s, protocol.CompensationKeyPrefix)
}

func isCompensationKey(s string) bool {
	return strings.HasPrefix(s, protocol.CompensationKeyPrefix) && protocol.IsToken(s)
}

func (op *Operation) validateSyntax() error {
	switch {
	case !isStepID(op.StepID):
		return &Error{Kind: ErrInvalidStepID, Value: op.StepID}
	case !protocol.IsToken(op.Tool):
		return &Error{Kind: ErrInvalidTool, Value: op.Tool}
	case !isOperationKey(op.OperationKey):
		return &Error{Kind: ErrInvalidOperationKey, Value: op.OperationKey}
	case !protocol.IsFingerprint(op.InputFingerprint):
		return &Error{Kind: ErrInvalidInputFingerprint}
	}
	if c := op.Compensation; c != nil {
		if op.State != Succeeded {
			return &Error{Kind: ErrCompensationRequiresSucceededOperation, Value: op.OperationKey, State: op.State}
		}
		switch {
		case !isCompensationKey(c.CompensationKey):
			return &Error{Kind: ErrInvalidCompensationKey, Value: c.CompensationKey}
		case !protocol.IsFingerprint(c.InputFingerprint):
			return &Error{Kind: ErrInvalidInputFingerprint}
		case !protocol.IsToken(c.TenantScope):
			return &Error{Kind: ErrInvalidCompensationTenantScope, Value: c.TenantScope}
		case !protocol.IsFingerprint(c.GrantFingerprint):
			return &Error{Kind: ErrInvalidCompensationGrantFingerprint}
		}
	}
	return nil
}

func (op *Operation) verifyInput(input []byte) error {
	if len(input) > MaxInputBytes {
		return &Error{Kind: ErrInputTooLarge, Actual: uint64(len(input)), Maximum: MaxInputBytes}
	}
	if op.InputFingerprint != InputFingerprint(input) {
		return &Error{Kind: ErrInputFingerprintMismatch, Value: op.OperationKey}
	}
	return nil
}

func (l *Ledger) validateSyntax() error {
	if l.formatVersion != FormatVersion {
		return &Error{Kind: ErrUnsupportedVersion, Actual: uint64(l.formatVersion)}
	}
	if !protocol.IsFingerprint(l.planFingerprint) {
		return &Error{Kind: ErrInvalidPlanFingerprint}
	}
	if len(l.operations) > MaxOperations {
		return &Error{Kind: ErrTooManyOperations}
	}
	seen := make(map[string]bool, len(l.operations))
	for i := range l.operations {
		op := &l.operations[i]
		if err := op.validateSyntax(); err != nil {
			return err
		}
		if seen[op.OperationKey] {
			return &Error{Kind: ErrDuplicateOperationKey, Value: op.OperationKey}
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
		return &Error{Kind: ErrStaleRevision, Actual: l.revision, Maximum: minimum}
	}
	return nil
}

func (l *Ledger) nextRevision() (uint64, error) {
	if l.revision == math.MaxUint64 {
		return 0, &Error{Kind: ErrRevisionExhausted}
	}
	return l.revision + 1, nil
}

// Record adds a pending operation for step, tool, key and the canonical input (only its
// fingerprint is stored), incrementing the revision.
func (l *Ledger) Record(stepID, tool, key string, input []byte) error {
	if err := l.validateSyntax(); err != nil {
		return err
	}
	if len(input) > MaxInputBytes {
		return &Error{Kind: ErrInputTooLarge, Actual: uint64(len(input)), Maximum: MaxInputBytes}
	}
	if len(l.operations) >= MaxOperations {
		return &Error{Kind: ErrTooManyOperations}
	}
	next, err := l.nextRevision()
	if err != nil {
		return err
	}
	op := Operation{StepID: stepID, Tool: tool, OperationKey: key, InputFingerprint: InputFingerprint(input), State: Pending}
	if err := op.validateSyntax(); err != nil {
		return err
	}
	if l.index(key) >= 0 {
		return &Error{Kind: ErrDuplicateOperationKey, Value: key}
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
		return protocol.OperationReconcileRequest{}, &Error{Kind: ErrInvalidOperationKey, Value: key}
	}
	i := l.index(key)
	if i < 0 {
		return protocol.OperationReconcileRequest{}, &Error{Kind: ErrUnknownOperation, Value: key}
	}
	op := &l.operations[i]
	if err := op.verifyInput(input); err != nil {
		return protocol.OperationReconcileRequest{}, err
	}
	req, err := protocol.NewOperationReconcileRequest(sessionID, requestID, op.Tool, op.OperationKey)
	if err != nil {
		return protocol.OperationReconcileRequest{}, &Error{Kind: ErrProtocol, Err: err}
	}
	return req, nil
}

// ApplyVerifiedReconciliation records an authenticated worker observation: request and result
// must validate and match, the operation must exist with the same tool, and the transition must
// be allowed on state kinds. An identical observation changes nothing, not even the revision.
func (l *Ledger) ApplyVerifiedReconciliation(req protocol.OperationReconcileRequest, res protocol.OperationReconcileResult) (State, error) {
	if err := l.validateSyntax(); err != nil {
		return 0, err
	}
	if err := req.Validate(); err != nil {
		return 0, &Error{Kind: ErrProtocol, Err: err}
	}
	if err := res.Validate(); err != nil {
		return 0, &Error{Kind: ErrProtocol, Err: err}
	}
	if !res.MatchesRequest(req) {
		return 0, &Error{Kind: ErrReconciliationMismatch}
	}
	observed := observedState(res.Status)
	i := l.index(req.OperationKey)
	if i < 0 {
		return 0, &Error{Kind: ErrUnknownOperation, Value: req.OperationKey}
	}
	op := &l.operations[i]
	if op.Tool != req.Tool {
		return 0, &Error{Kind: ErrReconciliationMismatch}
	}
	if !op.State.accepts(observed) {
		return 0, &Error{Kind: ErrInvalidStateTransition, State: op.State, Observed: observed}
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
// size estimate or encoding exceeds MaxBytes is ErrTooLarge.
func (l *Ledger) Encode() ([]byte, error) {
	if err := l.validateSyntax(); err != nil {
		return nil, err
	}
	if l.encodedSizeUpperBound() > MaxBytes {
		return nil, &Error{Kind: ErrTooLarge}
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
	if len(b) > MaxBytes {
		return nil, &Error{Kind: ErrTooLarge}
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

// Decode decodes and validates a stored ledger: at most MaxBytes, the serde rules of
// the reference (unknown or repeated fields rejected), then the syntax rules. It does not check
// the ledger against a plan (see Plan).
func Decode(data []byte) (*Ledger, error) {
	if len(data) > MaxBytes {
		return nil, &Error{Kind: ErrTooLarge}
	}
	n, err := canonjson.Parse(data)
	if err != nil {
		return nil, &Error{Kind: ErrInvalidEncoding, Err: err}
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
		return nil, &Error{Kind: ErrInvalidEncoding, Err: err}
	}
	if err := l.validateSyntax(); err != nil {
		return nil, err
	}
	return l, nil
}

func decodeLedgerState(n *canonjson.Node, ctx derive.Context) (State, error) {
	i, err := derive.UnitEnum(n, ctx, ledgerStateNames)
	return State(i + 1), err
}

func decodeLedgerOperation(n *canonjson.Node, ctx derive.Context) (Operation, error) {
	var op Operation
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
			var c Compensation
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
