package ledger

import (
	"github.com/splashv5/conform/impl/protocol"
)

// RecordCompensation records the one compensation intent of the succeeded operation key, for
// tool, tenant scope and grant fingerprint, under compensationKey and the canonical inverse
// input (only its fingerprint is stored); the revision increments (WFL-011). Checks, in order:
// the ledger and the tenant scope, grant fingerprint and tool syntax; the input size
// (InputTooLarge); the operation exists (UnknownOperation); it succeeded
// (CompensationRequiresSucceededOperation); its tool is the policy's
// (CompensationPolicyMismatch); it has no compensation yet (CompensationAlreadyRecorded); the
// key is a cmp- token (InvalidCompensationKey). A refusal changes nothing.
func (l *Ledger) RecordCompensation(operationKey, tool, tenantScope, grantFingerprint, compensationKey string, input []byte) error {
	if err := l.validateSyntax(); err != nil {
		return err
	}
	switch {
	case !protocol.IsToken(tool):
		return &Error{Kind: ErrInvalidTool, Value: tool}
	case !protocol.IsToken(tenantScope):
		return &Error{Kind: ErrInvalidCompensationTenantScope, Value: tenantScope}
	case !protocol.IsFingerprint(grantFingerprint):
		return &Error{Kind: ErrInvalidCompensationGrantFingerprint}
	case len(input) > MaxInputBytes:
		return &Error{Kind: ErrInputTooLarge, Actual: uint64(len(input)), Maximum: MaxInputBytes}
	}
	i := l.index(operationKey)
	if i < 0 {
		return &Error{Kind: ErrUnknownOperation, Value: operationKey}
	}
	op := &l.operations[i]
	switch {
	case op.State != Succeeded:
		return &Error{Kind: ErrCompensationRequiresSucceededOperation, Value: op.OperationKey, State: op.State}
	case op.Tool != tool:
		return &Error{Kind: ErrCompensationPolicyMismatch, Value: op.OperationKey}
	case op.Compensation != nil:
		return &Error{Kind: ErrCompensationAlreadyRecorded, Value: op.OperationKey}
	case !isCompensationKey(compensationKey):
		return &Error{Kind: ErrInvalidCompensationKey, Value: compensationKey}
	}
	next, err := l.nextRevision()
	if err != nil {
		return err
	}
	op.Compensation = &Compensation{CompensationKey: compensationKey, InputFingerprint: InputFingerprint(input),
		TenantScope: tenantScope, GrantFingerprint: grantFingerprint, State: Pending}
	l.revision = next
	return nil
}

// Compensation returns the compensation intent of the operation key, if it has one.
func (l *Ledger) Compensation(operationKey string) (Compensation, bool) {
	i := l.index(operationKey)
	if i < 0 || l.operations[i].Compensation == nil {
		return Compensation{}, false
	}
	return *l.operations[i].Compensation, true
}

// VerifyCompensationInput checks the canonical inverse input against the recorded intent of
// the operation key: UnknownOperation, UnknownCompensation, InputTooLarge,
// CompensationInputFingerprintMismatch.
func (l *Ledger) VerifyCompensationInput(operationKey string, input []byte) error {
	i := l.index(operationKey)
	if i < 0 {
		return &Error{Kind: ErrUnknownOperation, Value: operationKey}
	}
	c := l.operations[i].Compensation
	if c == nil {
		return &Error{Kind: ErrUnknownCompensation, Value: operationKey}
	}
	if len(input) > MaxInputBytes {
		return &Error{Kind: ErrInputTooLarge, Actual: uint64(len(input)), Maximum: MaxInputBytes}
	}
	if c.InputFingerprint != InputFingerprint(input) {
		return &Error{Kind: ErrCompensationInputFingerprintMismatch, Value: c.CompensationKey}
	}
	return nil
}

// ApplyVerifiedCompensation records an authenticated compensation observation (WFL-012):
// request and result must validate and match (CompensationRequestMismatch), the operation must
// exist with the request's tool, carry a compensation intent (UnknownCompensation) whose input
// fingerprint, key, tenant scope and grant fingerprint the request repeats, and the state
// transition must be allowed (InvalidCompensationStateTransition). An identical observation
// changes nothing, not even the revision. Only the compensation state changes.
func (l *Ledger) ApplyVerifiedCompensation(req protocol.OperationCompensationRequest, res protocol.OperationCompensationResult) (State, error) {
	if err := l.validateSyntax(); err != nil {
		return 0, err
	}
	if err := req.Validate(); err != nil {
		return 0, ledgerProtocol(err)
	}
	if err := res.Validate(); err != nil {
		return 0, ledgerProtocol(err)
	}
	if !res.MatchesRequest(req) {
		return 0, &Error{Kind: ErrCompensationRequestMismatch}
	}
	i := l.index(req.OperationKey)
	if i < 0 {
		return 0, &Error{Kind: ErrUnknownOperation, Value: req.OperationKey}
	}
	op := &l.operations[i]
	if op.Tool != req.Tool {
		return 0, &Error{Kind: ErrCompensationRequestMismatch}
	}
	c := op.Compensation
	if c == nil {
		return 0, &Error{Kind: ErrUnknownCompensation, Value: req.OperationKey}
	}
	input, err := protocol.CanonicalOperationInputBytes(req.Payload)
	if err != nil {
		return 0, ledgerProtocol(err)
	}
	if err := l.VerifyCompensationInput(req.OperationKey, input); err != nil {
		return 0, err
	}
	if c.CompensationKey != req.CompensationKey || c.TenantScope != req.TenantScope || c.GrantFingerprint != req.GrantFingerprint {
		return 0, &Error{Kind: ErrCompensationRequestMismatch}
	}
	observed := observedState(res.Status)
	if !c.State.accepts(observed) {
		return 0, &Error{Kind: ErrInvalidCompensationStateTransition, Value: c.CompensationKey, State: c.State, Observed: observed}
	}
	if c.State != observed {
		next, err := l.nextRevision()
		if err != nil {
			return 0, err
		}
		c.State = observed
		l.revision = next
	}
	return observed, nil
}
