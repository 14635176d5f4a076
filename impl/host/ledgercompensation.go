package host

import (
	"encoding/hex"

	"github.com/splashv5/conform/impl/protocol"
	"lukechampine.com/blake3"
)

const ledgerCompensationKeyDomain = "splash-workflow-compensation-key-v1"

// DeriveCompensationKey returns the durable compensation key of the inverse of an operation:
// "cmp-" and the lowercase hex of BLAKE3 over the domain
// "splash-workflow-compensation-key-v1" followed by the length-prefixed plan fingerprint,
// original operation key, tool, tenant scope, grant fingerprint, canonical compensation input
// and host nonce (WFL-010). It checks nothing; Ledger.RecordCompensation checks the record.
func DeriveCompensationKey(planFingerprint, operationKey, tool, tenantScope, grantFingerprint string, input, nonce []byte) string {
	b := append(make([]byte, 0, 512+len(input)+len(nonce)), ledgerCompensationKeyDomain...)
	for _, part := range [][]byte{[]byte(planFingerprint), []byte(operationKey), []byte(tool),
		[]byte(tenantScope), []byte(grantFingerprint), input, nonce} {
		b = appendLP(b, part)
	}
	sum := blake3.Sum256(b)
	return protocol.CompensationKeyPrefix + hex.EncodeToString(sum[:])
}

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
		return ledgerError(ErrLedgerInvalidTool, tool)
	case !protocol.IsToken(tenantScope):
		return ledgerError(ErrLedgerInvalidCompensationTenantScope, tenantScope)
	case !protocol.IsFingerprint(grantFingerprint):
		return ledgerError(ErrLedgerInvalidCompensationGrantFingerprint, "")
	case len(input) > MaxLedgerInputBytes:
		return &LedgerError{Kind: ErrLedgerInputTooLarge, Actual: uint64(len(input)), Maximum: MaxLedgerInputBytes}
	}
	i := l.index(operationKey)
	if i < 0 {
		return ledgerError(ErrLedgerUnknownOperation, operationKey)
	}
	op := &l.operations[i]
	switch {
	case op.State != LedgerSucceeded:
		return &LedgerError{Kind: ErrLedgerCompensationRequiresSucceededOperation, Value: op.OperationKey, State: op.State}
	case op.Tool != tool:
		return ledgerError(ErrLedgerCompensationPolicyMismatch, op.OperationKey)
	case op.Compensation != nil:
		return ledgerError(ErrLedgerCompensationAlreadyRecorded, op.OperationKey)
	case !isCompensationKey(compensationKey):
		return ledgerError(ErrLedgerInvalidCompensationKey, compensationKey)
	}
	next, err := l.nextRevision()
	if err != nil {
		return err
	}
	op.Compensation = &LedgerCompensation{CompensationKey: compensationKey, InputFingerprint: LedgerInputFingerprint(input),
		TenantScope: tenantScope, GrantFingerprint: grantFingerprint, State: LedgerPending}
	l.revision = next
	return nil
}

// Compensation returns the compensation intent of the operation key, if it has one.
func (l *Ledger) Compensation(operationKey string) (LedgerCompensation, bool) {
	i := l.index(operationKey)
	if i < 0 || l.operations[i].Compensation == nil {
		return LedgerCompensation{}, false
	}
	return *l.operations[i].Compensation, true
}

// VerifyCompensationInput checks the canonical inverse input against the recorded intent of
// the operation key: UnknownOperation, UnknownCompensation, InputTooLarge,
// CompensationInputFingerprintMismatch.
func (l *Ledger) VerifyCompensationInput(operationKey string, input []byte) error {
	i := l.index(operationKey)
	if i < 0 {
		return ledgerError(ErrLedgerUnknownOperation, operationKey)
	}
	c := l.operations[i].Compensation
	if c == nil {
		return ledgerError(ErrLedgerUnknownCompensation, operationKey)
	}
	if len(input) > MaxLedgerInputBytes {
		return &LedgerError{Kind: ErrLedgerInputTooLarge, Actual: uint64(len(input)), Maximum: MaxLedgerInputBytes}
	}
	if c.InputFingerprint != LedgerInputFingerprint(input) {
		return ledgerError(ErrLedgerCompensationInputFingerprintMismatch, c.CompensationKey)
	}
	return nil
}

// ApplyVerifiedCompensation records an authenticated compensation observation (WFL-012):
// request and result must validate and match (CompensationRequestMismatch), the operation must
// exist with the request's tool, carry a compensation intent (UnknownCompensation) whose input
// fingerprint, key, tenant scope and grant fingerprint the request repeats, and the state
// transition must be allowed (InvalidCompensationStateTransition). An identical observation
// changes nothing, not even the revision. Only the compensation state changes.
func (l *Ledger) ApplyVerifiedCompensation(req protocol.OperationCompensationRequest, res protocol.OperationCompensationResult) (LedgerState, error) {
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
		return 0, ledgerError(ErrLedgerCompensationRequestMismatch, "")
	}
	i := l.index(req.OperationKey)
	if i < 0 {
		return 0, ledgerError(ErrLedgerUnknownOperation, req.OperationKey)
	}
	op := &l.operations[i]
	if op.Tool != req.Tool {
		return 0, ledgerError(ErrLedgerCompensationRequestMismatch, "")
	}
	c := op.Compensation
	if c == nil {
		return 0, ledgerError(ErrLedgerUnknownCompensation, req.OperationKey)
	}
	input, err := protocol.CanonicalOperationInputBytes(req.Payload)
	if err != nil {
		return 0, ledgerProtocol(err)
	}
	if err := l.VerifyCompensationInput(req.OperationKey, input); err != nil {
		return 0, err
	}
	if c.CompensationKey != req.CompensationKey || c.TenantScope != req.TenantScope || c.GrantFingerprint != req.GrantFingerprint {
		return 0, ledgerError(ErrLedgerCompensationRequestMismatch, "")
	}
	observed := observedState(res.Status)
	if !c.State.accepts(observed) {
		return 0, &LedgerError{Kind: ErrLedgerInvalidCompensationStateTransition, Value: c.CompensationKey, State: c.State, Observed: observed}
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
