package workflow

import (
	"context"

	"github.com/splashv5/conform/impl/ledger"
	"github.com/splashv5/conform/impl/protocol"
)

// RefusalExitStatus is the exit status of a worker that rejected a frame (WRK-092, class
// "rejected"): the status of a worker that refuses to reconcile a key its journal does not hold
// (UnknownOperation, JRN-017, WRK-060).
const RefusalExitStatus = 5

// WorkerEnd is what a host observed of a worker session on which it wrote a reconcile_operation
// and got no answer line (the worker's output ended first).
type WorkerEnd struct {
	// Exited: the worker process exited by itself within the exchange deadline; false when
	// the host stopped it (a deadline, containment) or a signal ended it.
	Exited bool
	// Status is the exit status when Exited.
	Status int
}

// Refused reports whether the end is a worker's refusal of the reconciliation (WFL-043): the
// worker exited by itself with RefusalExitStatus. Any other end (a deadline, a signal, another
// status) is a failure whose effect is unknown, to be reconciled again, never a refusal.
func (w WorkerEnd) Refused() bool { return w.Exited && w.Status == RefusalExitStatus }

// SealRedispatch seals the exact recorded dispatch of operationKey for a fresh worker session
// (WFL-043): the ledger's key and tool, and payload, whose canonical input must match the
// recorded fingerprint (InputFingerprintMismatch). The host calls it only after a worker refused
// to reconcile the key on an earlier fresh session, so that the worker's journal admits the
// dispatch at most once. It is refused for an operation a worker has observed (its state is no
// longer pending) or that has a compensation (OperationObserved, WFL-044), and for a key the
// ledger does not hold (UnknownOperation). It runs in recovery as in the running phase and
// claims nothing: the step's promise belongs to the execution that crashed.
func (e *Engine) SealRedispatch(operationKey string, payload protocol.ToolPayload, requestID string, auth *protocol.Authenticator) (ledger.AuthenticatedDispatch, error) {
	if err := e.usable(true); err != nil {
		return ledger.AuthenticatedDispatch{}, err
	}
	op, ok := e.ledger.Operation(operationKey)
	if !ok {
		return ledger.AuthenticatedDispatch{}, &ledger.Error{Kind: ledger.ErrUnknownOperation, Value: operationKey}
	}
	if op.State != ledger.Pending || op.Compensation != nil {
		return ledger.AuthenticatedDispatch{}, newError(ErrOperationObserved, operationKey)
	}
	if auth == nil || auth.Role() != protocol.RoleHost {
		return ledger.AuthenticatedDispatch{}, &ledger.Error{Kind: ledger.ErrDispatchRequiresHostAuthenticator}
	}
	input, err := protocol.CanonicalOperationInputBytes(payload)
	if err != nil {
		return ledger.AuthenticatedDispatch{}, &ledger.Error{Kind: ledger.ErrProtocol, Err: err}
	}
	// The reconcile request carries the recorded tool once the input matched its fingerprint.
	rec, err := e.ledger.ReconcileRequest(operationKey, input, auth.SessionID(), requestID)
	if err != nil {
		return ledger.AuthenticatedDispatch{}, err
	}
	req, err := protocol.NewOperationDispatchRequest(auth.SessionID(), requestID, rec.Tool, operationKey, payload)
	if err != nil {
		return ledger.AuthenticatedDispatch{}, &ledger.Error{Kind: ledger.ErrProtocol, Err: err}
	}
	frame, line, err := auth.Seal(protocol.DispatchOperationMessage{Request: req})
	if err != nil {
		return ledger.AuthenticatedDispatch{}, &ledger.Error{Kind: ledger.ErrProtocol, Err: err}
	}
	return ledger.AuthenticatedDispatch{Request: req, Frame: frame, Line: line}, nil
}

// ApplyRedispatchAnswer opens the worker's operation_result for a redispatch sealed by
// SealRedispatch, records the observation in a copy of the ledger and persists it (WFL-004,
// WFL-043). It resolves no promise and runs no step; a failed write poisons the engine.
func (e *Engine) ApplyRedispatchAnswer(ctx context.Context, req protocol.OperationDispatchRequest, auth *protocol.Authenticator, frame protocol.Frame) (ledger.State, error) {
	if err := e.usable(true); err != nil {
		return 0, err
	}
	next := e.ledger.Clone()
	state, _, err := ledger.ApplyDispatchResult(e.plan, next, req, auth, frame)
	if err != nil {
		return 0, err
	}
	if err := e.commit(ctx, next); err != nil {
		return 0, err
	}
	return state, nil
}
