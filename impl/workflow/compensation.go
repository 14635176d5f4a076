package workflow

import (
	"context"
	"strconv"

	"github.com/splashv5/conform/impl/ledger"
	"github.com/splashv5/conform/impl/opkey"
	"github.com/splashv5/conform/impl/protocol"
)

// CompensationPolicy is the compensation authority the host derived from an active grant: the
// tool, the opaque tenant scope and the grant's fingerprint. It establishes identity only; the
// verifiers of a Target decide whether it is still current.
type CompensationPolicy struct {
	tool, tenantScope, grantFingerprint string
}

// NewCompensationPolicy derives the policy of grant for tenantScope (WFL-020). Checks, in
// order: the tenant scope is a token (InvalidCompensationTenantScope); the grant validates
// (Protocol); it grants compensations (CompensationNotGranted).
func NewCompensationPolicy(tenantScope string, grant protocol.CapabilityGrant) (CompensationPolicy, error) {
	if !protocol.IsToken(tenantScope) {
		return CompensationPolicy{}, &ledger.Error{Kind: ledger.ErrInvalidCompensationTenantScope, Value: tenantScope}
	}
	fp, err := grant.CompensationFingerprint()
	if err != nil {
		return CompensationPolicy{}, &ledger.Error{Kind: ledger.ErrProtocol, Err: err}
	}
	if grant.MaxCompensations == 0 {
		return CompensationPolicy{}, &ledger.Error{Kind: ledger.ErrCompensationNotGranted, Value: grant.Tool}
	}
	return CompensationPolicy{tool: grant.Tool, tenantScope: tenantScope, grantFingerprint: fp}, nil
}

// Tool returns the policy's tool.
func (p CompensationPolicy) Tool() string { return p.tool }

// TenantScope returns the policy's tenant scope.
func (p CompensationPolicy) TenantScope() string { return p.tenantScope }

// GrantFingerprint returns the fingerprint of the grant the policy was derived from.
func (p CompensationPolicy) GrantFingerprint() string { return p.grantFingerprint }

// GrantVerifier is the host's current-policy boundary for a compensation: it checks tenant
// policy, revocations and any grant lease as they are now, never a cached answer. A refusal is
// reported as CompensationGrantDenied.
type GrantVerifier interface {
	VerifyCompensationGrant(tenantScope string, grant protocol.CapabilityGrant) error
}

// ActionVerifier decides whether this exact inverse input is currently allowed for the
// original operation and tenant. A refusal is reported as CompensationActionDenied.
type ActionVerifier interface {
	VerifyCompensationAction(a Action) error
}

// Action is what an ActionVerifier judges. Its input is only reachable through Input and is
// never printed.
type Action struct {
	PlanFingerprint          string
	OperationKey             string
	StepID                   string
	Tool                     string
	OriginalInputFingerprint string
	TenantScope              string
	Grant                    protocol.CapabilityGrant
	input                    []byte
}

// Input returns the exact canonical inverse input.
func (a Action) Input() []byte { return a.input }

// String describes the action without its input.
func (a Action) String() string {
	return "Action{operation: " + a.OperationKey + ", tool: " + a.Tool + ", tenant: " + a.TenantScope +
		", input: " + strconv.Itoa(len(a.input)) + " bytes}"
}

// GoString is String, so %#v does not print the input either.
func (a Action) GoString() string { return a.String() }

// Target names the operation to compensate together with the policy, the active grant and the
// two verifiers. Nothing can be recorded, approved or sealed without a Target whose verifiers
// are both set (WFL-021).
type Target struct {
	OperationKey   string
	Policy         CompensationPolicy
	Grant          protocol.CapabilityGrant
	GrantVerifier  GrantVerifier
	ActionVerifier ActionVerifier
}

// verifyGrantCurrent checks the target is complete, that the policy still matches the active
// grant, and asks the grant verifier.
func (t Target) verifyGrantCurrent() error {
	if t.GrantVerifier == nil || t.ActionVerifier == nil || t.Policy.tool == "" {
		return newError(ErrCompensationTargetRequired, t.OperationKey)
	}
	fp, err := t.Grant.CompensationFingerprint()
	if err != nil {
		return &ledger.Error{Kind: ledger.ErrProtocol, Err: err}
	}
	if t.Grant.Tool != t.Policy.tool || t.Grant.MaxCompensations == 0 || fp != t.Policy.grantFingerprint {
		return &ledger.Error{Kind: ledger.ErrCompensationPolicyMismatch, Value: t.OperationKey}
	}
	if err := t.GrantVerifier.VerifyCompensationGrant(t.Policy.tenantScope, t.Grant); err != nil {
		return &ledger.Error{Kind: ledger.ErrCompensationGrantDenied, Value: t.OperationKey, Err: err}
	}
	return nil
}

// verifyActionCurrent asks the action verifier about input for op.
func (t Target) verifyActionCurrent(plan ledger.Plan, op ledger.Operation, input []byte) error {
	if t.OperationKey != op.OperationKey {
		return &ledger.Error{Kind: ledger.ErrOperationBindingMismatch, Value: t.OperationKey}
	}
	if op.Tool != t.Policy.tool {
		return &ledger.Error{Kind: ledger.ErrCompensationPolicyMismatch, Value: op.OperationKey}
	}
	a := Action{PlanFingerprint: plan.Fingerprint, OperationKey: op.OperationKey, StepID: op.StepID, Tool: op.Tool,
		OriginalInputFingerprint: op.InputFingerprint, TenantScope: t.Policy.tenantScope, Grant: t.Grant, input: input}
	if err := t.ActionVerifier.VerifyCompensationAction(a); err != nil {
		return &ledger.Error{Kind: ledger.ErrCompensationActionDenied, Value: op.OperationKey, Err: err}
	}
	return nil
}

// operation returns the ledger record of key.
func (e *Engine) operation(key string) (ledger.Operation, error) {
	op, ok := e.ledger.Operation(key)
	if !ok {
		return ledger.Operation{}, &ledger.Error{Kind: ledger.ErrUnknownOperation, Value: key}
	}
	return op, nil
}

// requireSucceeded refuses an original that did not succeed or belongs to another tool.
func requireSucceeded(op ledger.Operation, p CompensationPolicy) error {
	if op.State != ledger.Succeeded {
		return &ledger.Error{Kind: ledger.ErrCompensationRequiresSucceededOperation, Value: op.OperationKey, State: op.State}
	}
	if op.Tool != p.tool {
		return &ledger.Error{Kind: ledger.ErrCompensationPolicyMismatch, Value: op.OperationKey}
	}
	return nil
}

// RecordCompensation records and persists the one compensation intent of the target's
// succeeded operation for the canonical inverse input, under the key derived from the plan,
// the operation, the policy, the input and the host's durable nonce (1 to 128 bytes), and
// returns that key (WFL-022). Both verifiers run before the ledger changes. Checks, in order:
// the engine's phase (recovery allowed); the target and grant (CompensationTargetRequired,
// CompensationPolicyMismatch, CompensationGrantDenied); the input size; the operation exists,
// succeeded and has the policy's tool; the action verifier (CompensationActionDenied); the
// nonce; at most one compensation per operation (CompensationAlreadyRecorded). When the write
// fails nothing is recorded or approved and the engine is poisoned.
func (e *Engine) RecordCompensation(ctx context.Context, t Target, input, nonce []byte) (string, error) {
	if err := e.usable(true); err != nil {
		return "", err
	}
	if err := t.verifyGrantCurrent(); err != nil {
		return "", err
	}
	if len(input) > ledger.MaxInputBytes {
		return "", &ledger.Error{Kind: ledger.ErrInputTooLarge, Actual: uint64(len(input)), Maximum: ledger.MaxInputBytes}
	}
	op, err := e.operation(t.OperationKey)
	if err != nil {
		return "", err
	}
	if err := requireSucceeded(op, t.Policy); err != nil {
		return "", err
	}
	if err := t.verifyActionCurrent(e.plan, op, input); err != nil {
		return "", err
	}
	switch {
	case len(nonce) == 0:
		return "", &ledger.Error{Kind: ledger.ErrEmptyOperationNonce}
	case len(nonce) > ledger.MaxOperationNonceBytes:
		return "", &ledger.Error{Kind: ledger.ErrOperationNonceTooLarge, Actual: uint64(len(nonce)), Maximum: ledger.MaxOperationNonceBytes}
	}
	key := opkey.CompensationKey(e.plan.Fingerprint, op.OperationKey, op.Tool, t.Policy.tenantScope,
		t.Policy.grantFingerprint, input, nonce)
	next := e.ledger.Clone()
	if err := next.RecordCompensation(op.OperationKey, t.Policy.tool, t.Policy.tenantScope, t.Policy.grantFingerprint, key, input); err != nil {
		return "", err
	}
	if err := e.commit(ctx, next); err != nil {
		return "", err
	}
	return key, nil
}

// Approval is a one-use, process-local permission to seal one compensation request. It binds
// the engine, the ledger revision, the operation and compensation keys, the input fingerprint,
// the tenant scope, the grant fingerprint and the worker session. Never store it: after a
// restart, issue a fresh one for the existing intent.
type Approval struct {
	engine           *Engine
	ledgerRevision   uint64
	operationKey     string
	compensationKey  string
	inputFingerprint string
	tenantScope      string
	grantFingerprint string
	sessionID        string
	used             bool
}

// CompensationKey returns the compensation the approval is for.
func (a *Approval) CompensationKey() string { return a.compensationKey }

// SessionID returns the worker session the approval is bound to.
func (a *Approval) SessionID() string { return a.sessionID }

// ApproveCompensation issues the approval to send the recorded compensation of the target's
// operation for input over the session of the host authenticator auth (WFL-023). It runs only
// on a durable intent; tenant policy and revocation are checked again now. Checks, in order: the
// engine's phase (recovery allowed); a host authenticator
// (CompensationDispatchRequiresHostAuthenticator); the ledger against the plan; the target and
// grant; the operation exists, succeeded and has the policy's tool; an intent exists
// (UnknownCompensation) under the same tenant and grant (CompensationPolicyMismatch) and input
// (CompensationInputFingerprintMismatch); the action verifier.
func (e *Engine) ApproveCompensation(t Target, input []byte, auth *protocol.Authenticator) (*Approval, error) {
	if err := e.usable(true); err != nil {
		return nil, err
	}
	if auth == nil || auth.Role() != protocol.RoleHost {
		return nil, &ledger.Error{Kind: ledger.ErrCompensationDispatchRequiresHostAuthenticator}
	}
	if err := e.plan.ValidateLedger(e.ledger); err != nil {
		return nil, err
	}
	if err := t.verifyGrantCurrent(); err != nil {
		return nil, err
	}
	op, c, err := e.intent(t)
	if err != nil {
		return nil, err
	}
	if err := e.ledger.VerifyCompensationInput(op.OperationKey, input); err != nil {
		return nil, err
	}
	if err := t.verifyActionCurrent(e.plan, op, input); err != nil {
		return nil, err
	}
	return &Approval{engine: e, ledgerRevision: e.ledger.Revision(), operationKey: op.OperationKey,
		compensationKey: c.CompensationKey, inputFingerprint: c.InputFingerprint, tenantScope: c.TenantScope,
		grantFingerprint: c.GrantFingerprint, sessionID: auth.SessionID()}, nil
}

// intent returns the target's succeeded operation and its compensation intent, which must
// match the policy.
func (e *Engine) intent(t Target) (ledger.Operation, ledger.Compensation, error) {
	op, err := e.operation(t.OperationKey)
	if err != nil {
		return op, ledger.Compensation{}, err
	}
	if err := requireSucceeded(op, t.Policy); err != nil {
		return op, ledger.Compensation{}, err
	}
	if op.Compensation == nil {
		return op, ledger.Compensation{}, &ledger.Error{Kind: ledger.ErrUnknownCompensation, Value: op.OperationKey}
	}
	c := *op.Compensation
	if c.TenantScope != t.Policy.tenantScope || c.GrantFingerprint != t.Policy.grantFingerprint {
		return op, c, &ledger.Error{Kind: ledger.ErrCompensationPolicyMismatch, Value: op.OperationKey}
	}
	return op, c, nil
}

// AuthenticatedCompensation is a sealed compensate_operation frame and its request.
type AuthenticatedCompensation struct {
	Request protocol.OperationCompensationRequest
	Frame   protocol.Frame
	Line    []byte
}

// SealCompensation spends approval and seals the compensate_operation request for the target's
// recorded compensation with payload under requestID (WFL-024). Tenant policy, revocation and
// the action are checked again immediately before sealing. Checks, in order: the engine's phase
// (recovery allowed); a host authenticator; the ledger against the plan; the target and grant;
// the approval is unused and was issued by this engine for the current ledger revision, this
// operation, tenant, grant and session (ApprovalMismatch; the approval is spent by this check
// whatever follows); the operation, intent and policy as for approval; the payload's canonical
// input matches the intent; the action verifier.
func (e *Engine) SealCompensation(t Target, requestID string, payload protocol.ToolPayload, approval *Approval, auth *protocol.Authenticator) (AuthenticatedCompensation, error) {
	if err := e.usable(true); err != nil {
		return AuthenticatedCompensation{}, err
	}
	if auth == nil || auth.Role() != protocol.RoleHost {
		return AuthenticatedCompensation{}, &ledger.Error{Kind: ledger.ErrCompensationDispatchRequiresHostAuthenticator}
	}
	if err := e.plan.ValidateLedger(e.ledger); err != nil {
		return AuthenticatedCompensation{}, err
	}
	if err := t.verifyGrantCurrent(); err != nil {
		return AuthenticatedCompensation{}, err
	}
	if approval == nil || approval.used || approval.engine != e {
		return AuthenticatedCompensation{}, newError(ErrApprovalMismatch, t.OperationKey)
	}
	approval.used = true
	if approval.ledgerRevision != e.ledger.Revision() || approval.operationKey != t.OperationKey ||
		approval.tenantScope != t.Policy.tenantScope || approval.grantFingerprint != t.Policy.grantFingerprint ||
		approval.sessionID != auth.SessionID() {
		return AuthenticatedCompensation{}, newError(ErrApprovalMismatch, t.OperationKey)
	}
	op, c, err := e.intent(t)
	if err != nil {
		return AuthenticatedCompensation{}, err
	}
	if c.CompensationKey != approval.compensationKey || c.InputFingerprint != approval.inputFingerprint {
		return AuthenticatedCompensation{}, newError(ErrApprovalMismatch, t.OperationKey)
	}
	b, err := protocol.NewOperationCompensationBinding(op.Tool, op.OperationKey, c.CompensationKey, c.TenantScope, c.GrantFingerprint)
	if err != nil {
		return AuthenticatedCompensation{}, &ledger.Error{Kind: ledger.ErrProtocol, Err: err}
	}
	req, err := protocol.NewOperationCompensationRequest(auth.SessionID(), requestID, b, payload)
	if err != nil {
		return AuthenticatedCompensation{}, &ledger.Error{Kind: ledger.ErrProtocol, Err: err}
	}
	input, err := protocol.CanonicalOperationInputBytes(req.Payload)
	if err != nil {
		return AuthenticatedCompensation{}, &ledger.Error{Kind: ledger.ErrProtocol, Err: err}
	}
	if err := e.ledger.VerifyCompensationInput(op.OperationKey, input); err != nil {
		return AuthenticatedCompensation{}, err
	}
	if err := t.verifyActionCurrent(e.plan, op, input); err != nil {
		return AuthenticatedCompensation{}, err
	}
	frame, line, err := auth.Seal(protocol.CompensateOperationMessage{Request: req})
	if err != nil {
		return AuthenticatedCompensation{}, &ledger.Error{Kind: ledger.ErrProtocol, Err: err}
	}
	return AuthenticatedCompensation{Request: req, Frame: frame, Line: line}, nil
}

// ApplyCompensationAnswer opens the worker's compensation_result frame with the host
// authenticator and records it as ApplyVerifiedCompensation does (WFL-025). Errors before
// that: CompensationDispatchRequiresHostAuthenticator; Protocol when the frame does not open;
// UnexpectedCompensationMessage.
func (e *Engine) ApplyCompensationAnswer(ctx context.Context, req protocol.OperationCompensationRequest, auth *protocol.Authenticator, frame protocol.Frame) (ledger.State, error) {
	if err := e.usable(true); err != nil {
		return 0, err
	}
	if auth == nil || auth.Role() != protocol.RoleHost {
		return 0, &ledger.Error{Kind: ledger.ErrCompensationDispatchRequiresHostAuthenticator}
	}
	msg, err := auth.OpenFrame(frame)
	if err != nil {
		return 0, &ledger.Error{Kind: ledger.ErrProtocol, Err: err}
	}
	m, ok := msg.(protocol.CompensationResultMessage)
	if !ok {
		return 0, &ledger.Error{Kind: ledger.ErrUnexpectedCompensationMessage}
	}
	return e.ApplyVerifiedCompensation(ctx, req, m.Result)
}

// ApplyVerifiedCompensation records a compensation result that was already authenticated and
// validated (for example by a one-shot operation transport) in a copy of the ledger and persists
// it (WFL-025). Only the compensation's state changes: no promise resumes and no step runs.
func (e *Engine) ApplyVerifiedCompensation(ctx context.Context, req protocol.OperationCompensationRequest, res protocol.OperationCompensationResult) (ledger.State, error) {
	if err := e.usable(true); err != nil {
		return 0, err
	}
	next := e.ledger.Clone()
	state, err := next.ApplyVerifiedCompensation(req, res)
	if err != nil {
		return 0, err
	}
	if err := e.commit(ctx, next); err != nil {
		return 0, err
	}
	return state, nil
}
