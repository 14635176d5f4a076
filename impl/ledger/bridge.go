package ledger

import (
	"bytes"
	"slices"

	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/opkey"
	"github.com/splashv5/conform/impl/protocol"
)

// Plan is the trusted identity of a workflow plan as the ledger needs it: its fingerprint
// (64 lowercase hex characters) and its step IDs in order.
type Plan struct {
	Fingerprint string
	Steps       []string
}

func (p Plan) hasStep(id string) bool { return slices.Contains(p.Steps, id) }

// ValidateLedger checks that l belongs to the plan: valid syntax, the same plan fingerprint
// (ErrPlanMismatch) and every record on one of the plan's steps (ErrUnknownStep).
func (p Plan) ValidateLedger(l *Ledger) error {
	if err := l.validateSyntax(); err != nil {
		return err
	}
	if l.planFingerprint != p.Fingerprint {
		return &Error{Kind: ErrPlanMismatch}
	}
	for _, op := range l.operations {
		if !p.hasStep(op.StepID) {
			return &Error{Kind: ErrUnknownStep, Value: op.StepID}
		}
	}
	return nil
}

// ValidateLedgerAtOrAfter is ValidateLedger followed by Ledger.ValidateMinimumRevision.
func (p Plan) ValidateLedgerAtOrAfter(l *Ledger, minimum uint64) error {
	if err := p.ValidateLedger(l); err != nil {
		return err
	}
	return l.ValidateMinimumRevision(minimum)
}

// step returns the ID of the suspended step after completed finished steps.
func (p Plan) step(completed int) (string, error) {
	if completed < 0 || completed >= len(p.Steps) {
		return "", &Error{Kind: ErrNoSuspendedStep}
	}
	return p.Steps[completed], nil
}

// PreparedOperation is the next queued external operation with its durable identity recorded
// (or verified) in a ledger but not yet claimed. It is process-local: persist the ledger, then
// pass it to ClaimPreparedExternalOperation. Its payload is never printed.
type PreparedOperation struct {
	runtime   *host.Runtime
	plan      string
	id        host.OperationID
	stepID    string
	completed int
	key       string
	payload   protocol.ToolPayload
	canonical []byte
}

// ID returns the runtime operation the preparation is bound to.
func (p *PreparedOperation) ID() host.OperationID { return p.id }

// StepID returns the plan step waiting for the operation.
func (p *PreparedOperation) StepID() string { return p.stepID }

// CompletedSteps returns the completed plan prefix before the step.
func (p *PreparedOperation) CompletedSteps() int { return p.completed }

// OperationKey returns the plan-bound durable operation key.
func (p *PreparedOperation) OperationKey() string { return p.key }

// Payload returns the exact worker payload.
func (p *PreparedOperation) Payload() protocol.ToolPayload { return p.payload }

// String describes the preparation without its payload.
func (p *PreparedOperation) String() string {
	return "PreparedOperation{id: " + p.id.String() + ", step: " + p.stepID + ", key: " + p.key + ", payload: [redacted]}"
}

// ClaimedOperation is a prepared operation after its exact claim.
type ClaimedOperation struct {
	PreparedOperation
	invocation host.Invocation
}

// Invocation returns the claimed invocation.
func (c *ClaimedOperation) Invocation() host.Invocation { return c.invocation }

// String describes the claim without its payload.
func (c *ClaimedOperation) String() string {
	return "ClaimedOperation{id: " + c.id.String() + ", step: " + c.stepID + ", key: " + c.key + ", payload: [redacted]}"
}

func ledgerProtocol(err error) error { return &Error{Kind: ErrProtocol, Err: err} }

// OperationKey derives the operation key of a step's external call (RUN-181) after checking
// its inputs in the reference's order: the step must be in the plan (UnknownStep), the tool a
// token (InvalidTool), the canonical input at most MaxInputBytes (InputTooLarge), and
// the nonce 1 to MaxOperationNonceBytes bytes (EmptyOperationNonce, OperationNonceTooLarge).
// Preparing an operation derives its key this way.
func (p Plan) OperationKey(stepID, tool string, input, nonce []byte) (string, error) {
	return deriveOperationKey(p, stepID, tool, input, nonce)
}

// deriveOperationKey checks the key inputs in the reference's order, then derives the key.
func deriveOperationKey(plan Plan, stepID, tool string, input, nonce []byte) (string, error) {
	switch {
	case !plan.hasStep(stepID):
		return "", &Error{Kind: ErrUnknownStep, Value: stepID}
	case !protocol.IsToken(tool):
		return "", &Error{Kind: ErrInvalidTool, Value: tool}
	case len(input) > MaxInputBytes:
		return "", &Error{Kind: ErrInputTooLarge, Actual: uint64(len(input)), Maximum: MaxInputBytes}
	case len(nonce) == 0:
		return "", &Error{Kind: ErrEmptyOperationNonce}
	case len(nonce) > MaxOperationNonceBytes:
		return "", &Error{Kind: ErrOperationNonceTooLarge, Actual: uint64(len(nonce)), Maximum: MaxOperationNonceBytes}
	}
	return opkey.OperationKey(plan.Fingerprint, stepID, tool, input, nonce), nil
}

// validateBinding checks a ledger record against a step, tool and canonical input.
func validateBinding(plan Plan, l *Ledger, stepID, tool, key string, input []byte) error {
	if err := plan.ValidateLedger(l); err != nil {
		return err
	}
	i := l.index(key)
	if i < 0 {
		return &Error{Kind: ErrUnknownOperation, Value: key}
	}
	op := &l.operations[i]
	if op.StepID != stepID || op.Tool != tool {
		return &Error{Kind: ErrOperationBindingMismatch, Value: key}
	}
	if op.State.Terminal() {
		return &Error{Kind: ErrOperationAlreadyTerminal, Value: key, State: op.State}
	}
	return op.verifyInput(input)
}

// PrepareNextExternalOperation binds the next queued external operation to a durable,
// plan-bound key without claiming it: the canonical payload of its input, the key derived from
// the plan fingerprint, the suspended step (plan.Steps[completed]), the tool, the canonical input
// and nonce (1 to 128 host-owned bytes, unique per logical effect), then the ledger record —
// created pending (revision + 1) or, when the key exists, verified (same step and tool, not
// terminal, same input). It returns nil when nothing is queued. Persist the ledger before
// claiming.
func PrepareNextExternalOperation(r *host.Runtime, plan Plan, completed int, l *Ledger, nonce []byte) (*PreparedOperation, error) {
	stepID, err := plan.step(completed)
	if err != nil {
		return nil, err
	}
	inv, ok := r.PeekNextExternal()
	if !ok {
		return nil, nil
	}
	payload, err := inv.WorkerPayload()
	if err != nil {
		return nil, err
	}
	canonical, err := protocol.CanonicalOperationInputBytes(payload)
	if err != nil {
		return nil, ledgerProtocol(err)
	}
	key, err := deriveOperationKey(plan, stepID, inv.Name, canonical, nonce)
	if err != nil {
		return nil, err
	}
	if err := plan.ValidateLedger(l); err != nil {
		return nil, err
	}
	if l.index(key) >= 0 {
		if err := validateBinding(plan, l, stepID, inv.Name, key, canonical); err != nil {
			return nil, err
		}
	} else if err := l.Record(stepID, inv.Name, key, canonical); err != nil {
		return nil, err
	}
	return &PreparedOperation{
		runtime: r, plan: plan.Fingerprint, id: inv.ID, stepID: stepID, completed: completed,
		key: key, payload: payload, canonical: canonical,
	}, nil
}

func checkPrepared(r *host.Runtime, plan Plan, completed int, p *PreparedOperation) error {
	if p == nil || p.runtime != r || p.plan != plan.Fingerprint {
		return &Error{Kind: ErrPreparedElsewhere}
	}
	stepID, err := plan.step(completed)
	if err != nil {
		return err
	}
	if p.stepID != stepID || p.completed != completed {
		return &Error{Kind: ErrOperationBindingMismatch, Value: p.key}
	}
	return nil
}

// ClaimPreparedExternalOperation claims exactly the prepared operation after its ledger was
// persisted: the preparation must come from this runtime and plan, the suspended step must be
// unchanged, the ledger record must still bind it, and the claim is of its exact ID (a stale
// preparation fails and claims nothing else). The payload is recomputed from the claimed
// invocation afterwards; a difference is ErrOperationBindingMismatch and leaves the
// operation claimed, as in the reference.
func ClaimPreparedExternalOperation(r *host.Runtime, plan Plan, completed int, l *Ledger, p *PreparedOperation) (*ClaimedOperation, error) {
	if err := checkPrepared(r, plan, completed, p); err != nil {
		return nil, err
	}
	i := l.index(p.key)
	if i < 0 {
		return nil, &Error{Kind: ErrUnknownOperation, Value: p.key}
	}
	if err := validateBinding(plan, l, p.stepID, l.operations[i].Tool, p.key, p.canonical); err != nil {
		return nil, err
	}
	inv, err := r.ClaimExternal(p.id)
	if err != nil {
		return nil, err
	}
	payload, err := inv.WorkerPayload()
	if err != nil {
		return nil, err
	}
	canonical, err := protocol.CanonicalOperationInputBytes(payload)
	if err != nil {
		return nil, ledgerProtocol(err)
	}
	if !payload.Equal(p.payload) || !bytes.Equal(canonical, p.canonical) {
		return nil, &Error{Kind: ErrOperationBindingMismatch, Value: p.key}
	}
	if err := validateBinding(plan, l, p.stepID, inv.Name, p.key, canonical); err != nil {
		return nil, err
	}
	return &ClaimedOperation{PreparedOperation: *p, invocation: inv}, nil
}

// AuthenticatedDispatch is a sealed dispatch_operation frame and the request it carries.
type AuthenticatedDispatch struct {
	Request protocol.OperationDispatchRequest
	Frame   protocol.Frame
	Line    []byte
}

// operationDispatchRequest rebuilds the dispatch request of a ledger record and checks the
// payload against its input fingerprint.
func operationDispatchRequest(plan Plan, l *Ledger, key string, payload protocol.ToolPayload, sessionID, requestID string) (protocol.OperationDispatchRequest, error) {
	if err := plan.ValidateLedger(l); err != nil {
		return protocol.OperationDispatchRequest{}, err
	}
	i := l.index(key)
	if i < 0 {
		return protocol.OperationDispatchRequest{}, &Error{Kind: ErrUnknownOperation, Value: key}
	}
	op := &l.operations[i]
	req, err := protocol.NewOperationDispatchRequest(sessionID, requestID, op.Tool, op.OperationKey, payload)
	if err != nil {
		return protocol.OperationDispatchRequest{}, ledgerProtocol(err)
	}
	input, err := protocol.CanonicalOperationInputBytes(req.Payload)
	if err != nil {
		return protocol.OperationDispatchRequest{}, ledgerProtocol(err)
	}
	if err := op.verifyInput(input); err != nil {
		return protocol.OperationDispatchRequest{}, err
	}
	return req, nil
}

// PrepareClaimedDispatch revalidates a claimed operation (runtime and plan, the runtime's
// ValidateClaimedExternal, the step, the recomputed payload and the ledger binding), then builds
// and seals its dispatch_operation request with a host authenticator.
func PrepareClaimedDispatch(r *host.Runtime, plan Plan, completed int, l *Ledger, c *ClaimedOperation, requestID string, auth *protocol.Authenticator) (AuthenticatedDispatch, error) {
	if c == nil {
		return AuthenticatedDispatch{}, &Error{Kind: ErrPreparedElsewhere}
	}
	if c.runtime != r || c.plan != plan.Fingerprint {
		return AuthenticatedDispatch{}, &Error{Kind: ErrPreparedElsewhere}
	}
	if err := r.ValidateClaimedExternal(c.invocation.ID); err != nil {
		return AuthenticatedDispatch{}, err
	}
	if err := checkPrepared(r, plan, completed, &c.PreparedOperation); err != nil {
		return AuthenticatedDispatch{}, err
	}
	payload, err := c.invocation.WorkerPayload()
	if err != nil {
		return AuthenticatedDispatch{}, err
	}
	canonical, err := protocol.CanonicalOperationInputBytes(payload)
	if err != nil {
		return AuthenticatedDispatch{}, ledgerProtocol(err)
	}
	if !payload.Equal(c.payload) || !bytes.Equal(canonical, c.canonical) {
		return AuthenticatedDispatch{}, &Error{Kind: ErrOperationBindingMismatch, Value: c.key}
	}
	if err := validateBinding(plan, l, c.stepID, c.invocation.Name, c.key, canonical); err != nil {
		return AuthenticatedDispatch{}, err
	}
	if auth == nil || auth.Role() != protocol.RoleHost {
		return AuthenticatedDispatch{}, &Error{Kind: ErrDispatchRequiresHostAuthenticator}
	}
	req, err := operationDispatchRequest(plan, l, c.key, c.payload, auth.SessionID(), requestID)
	if err != nil {
		return AuthenticatedDispatch{}, err
	}
	frame, line, err := auth.Seal(protocol.DispatchOperationMessage{Request: req})
	if err != nil {
		return AuthenticatedDispatch{}, ledgerProtocol(err)
	}
	return AuthenticatedDispatch{Request: req, Frame: frame, Line: line}, nil
}

func dispatchRequestsEqual(a, b protocol.OperationDispatchRequest) bool {
	return a.ProtocolVersion == b.ProtocolVersion && a.SessionID == b.SessionID &&
		a.RequestID == b.RequestID && a.Tool == b.Tool && a.OperationKey == b.OperationKey &&
		a.Payload.Equal(b.Payload)
}

// ApplyDispatchResult opens the worker's operation_result frame with the host authenticator and
// records its observation in the ledger: the request must be the one the ledger rebuilds, the
// result must answer it, and the state transition must be allowed. Only the ledger changes;
// persist it, then resolve the runtime operation (ResolveOperationStatus).
func ApplyDispatchResult(plan Plan, l *Ledger, req protocol.OperationDispatchRequest, auth *protocol.Authenticator, frame protocol.Frame) (State, protocol.OperationReconcileResult, error) {
	if auth == nil || auth.Role() != protocol.RoleHost {
		return 0, protocol.OperationReconcileResult{}, &Error{Kind: ErrDispatchRequiresHostAuthenticator}
	}
	msg, err := auth.OpenFrame(frame)
	if err != nil {
		return 0, protocol.OperationReconcileResult{}, ledgerProtocol(err)
	}
	m, ok := msg.(protocol.OperationResultMessage)
	if !ok {
		return 0, protocol.OperationReconcileResult{}, &Error{Kind: ErrUnexpectedDispatchMessage}
	}
	res := m.Result
	if err := plan.ValidateLedger(l); err != nil {
		return 0, res, err
	}
	expected, err := operationDispatchRequest(plan, l, req.OperationKey, req.Payload, req.SessionID, req.RequestID)
	if err != nil {
		return 0, res, err
	}
	if !dispatchRequestsEqual(expected, req) || !res.MatchesDispatch(req) {
		return 0, res, &Error{Kind: ErrReconciliationMismatch}
	}
	rreq, err := protocol.NewOperationReconcileRequest(req.SessionID, req.RequestID, req.Tool, req.OperationKey)
	if err != nil {
		return 0, res, ledgerProtocol(err)
	}
	if err := plan.ValidateLedger(l); err != nil {
		return 0, res, err
	}
	state, err := l.ApplyVerifiedReconciliation(rreq, res)
	return state, res, err
}
