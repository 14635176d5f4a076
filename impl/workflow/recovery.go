package workflow

import (
	"context"

	"github.com/splashv5/conform/impl/ledger"
	"github.com/splashv5/conform/impl/protocol"
)

// Unsettled returns the ledger operations whose effect is uncertain: an operation, or its
// compensation, that is pending or running. The host reconciles them through a fresh worker
// session before it resumes.
func (e *Engine) Unsettled() []ledger.Operation {
	var out []ledger.Operation
	for _, op := range e.ledger.Operations() {
		if !op.State.Terminal() || (op.Compensation != nil && !op.Compensation.State.Terminal()) {
			out = append(out, op)
		}
	}
	return out
}

// ReconcileRequest builds the reconcile_operation request for a recorded operation after
// checking the current canonical input against its fingerprint (InputFingerprintMismatch: the
// host must choose a policy, never reuse an old result for other input).
func (e *Engine) ReconcileRequest(operationKey string, input []byte, sessionID, requestID string) (protocol.OperationReconcileRequest, error) {
	if err := e.usable(true); err != nil {
		return protocol.OperationReconcileRequest{}, err
	}
	return e.ledger.ReconcileRequest(operationKey, input, sessionID, requestID)
}

// ApplyReconciliation records an authenticated, validated reconciliation result (for example
// from a one-shot operation transport over a fresh session) in a copy of the ledger and persists
// it (WFL-041). It resolves no promise and runs no step.
func (e *Engine) ApplyReconciliation(ctx context.Context, req protocol.OperationReconcileRequest, res protocol.OperationReconcileResult) (ledger.State, error) {
	if err := e.usable(true); err != nil {
		return 0, err
	}
	next := e.ledger.Clone()
	state, err := next.ApplyVerifiedReconciliation(req, res)
	if err != nil {
		return 0, err
	}
	if err := e.commit(ctx, next); err != nil {
		return 0, err
	}
	return state, nil
}

// Decision is the host's explicit choice for one restored operation.
type Decision uint8

// The recovery decisions.
const (
	// DecisionNone is no decision; Resume refuses it.
	DecisionNone Decision = iota
	// DecisionAccept: the host validated the operation's outcome against the current contract
	// and accepts it for the new execution. Only a terminal operation can be accepted.
	DecisionAccept
	// DecisionCompensate: the host will record or recover the operation's compensation.
	DecisionCompensate
	// DecisionFail: the workflow fails; no step runs any more.
	DecisionFail
	// DecisionRedispatch: the operation is still pending or running and the host will
	// dispatch it again under its persisted key (the worker's journal deduplicates it):
	// the step that awaits it runs again and prepares it with the same nonce.
	DecisionRedispatch
)

// RecoveryPolicy is the host's explicit restart policy (WFL-042).
type RecoveryPolicy struct {
	// CompletedSteps is the plan prefix the host approves as complete for the new execution.
	CompletedSteps int
	// Decide returns the decision for every ledger operation; nil decides nothing.
	Decide func(op ledger.Operation) Decision
}

// Resume ends recovery under policy (WFL-042). Every ledger operation needs an explicit
// decision (RecoveryPolicyRequired names the first without one); only a terminal operation can
// be accepted or compensated (UnreconciledOperation) and only a pending or running one
// redispatched (OperationAlreadyTerminal); a DecisionFail fails the workflow (the engine moves to
// PhaseFailed and Resume returns WorkflowFailed). Otherwise the engine runs again from
// policy.CompletedSteps. The ledger's states alone never skip or resume a step.
func (e *Engine) Resume(policy RecoveryPolicy) error {
	if e.phase != PhaseRecovering {
		if err := e.usable(false); err != nil {
			return err
		}
		return newError(ErrRecovering, "the engine is not recovering")
	}
	if policy.Decide == nil {
		return newError(ErrRecoveryPolicyRequired, "")
	}
	if policy.CompletedSteps < 0 || policy.CompletedSteps > len(e.plan.Steps) {
		return newError(ErrStepMismatch, "")
	}
	failed := false
	for _, op := range e.ledger.Operations() {
		switch policy.Decide(op) {
		case DecisionAccept, DecisionCompensate:
			if !op.State.Terminal() {
				return newError(ErrUnreconciledOperation, op.OperationKey)
			}
		case DecisionRedispatch:
			if op.State.Terminal() {
				return &ledger.Error{Kind: ledger.ErrOperationAlreadyTerminal, Value: op.OperationKey, State: op.State}
			}
		case DecisionFail:
			failed = true
		default:
			return newError(ErrRecoveryPolicyRequired, op.OperationKey)
		}
	}
	if failed {
		e.phase = PhaseFailed
		return newError(ErrWorkflowFailed, "")
	}
	e.phase, e.completed, e.step = PhaseRunning, policy.CompletedSteps, StepIdle
	return nil
}
