package ledger

import (
	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/protocol"
)

// checkClaimedReconciliation revalidates a claimed operation for a reconciliation: it comes from
// this runtime and plan, the runtime operation is still claimed (or cancellation-requested), the
// suspended step is unchanged, and the ledger still records its step, tool and input. Unlike a
// dispatch, a terminal ledger record is accepted: the worker may be asked again for a result the
// ledger already holds.
func checkClaimedReconciliation(r *host.Runtime, plan Plan, completed int, l *Ledger, c *ClaimedOperation) error {
	if c == nil || c.runtime != r || c.plan != plan.Fingerprint {
		return &Error{Kind: ErrPreparedElsewhere}
	}
	if err := r.CheckClaimed(c.invocation.ID); err != nil {
		return err
	}
	if err := checkPrepared(r, plan, completed, &c.PreparedOperation); err != nil {
		return err
	}
	if err := plan.ValidateLedger(l); err != nil {
		return err
	}
	i := l.index(c.key)
	if i < 0 {
		return &Error{Kind: ErrUnknownOperation, Value: c.key}
	}
	op := &l.operations[i]
	if op.StepID != c.stepID || op.Tool != c.invocation.Name {
		return &Error{Kind: ErrOperationBindingMismatch, Value: c.key}
	}
	return op.verifyInput(c.canonical)
}

// PrepareClaimedReconciliation builds the reconcile_operation request of a claimed ledger
// operation and seals it with a host authenticator. The request names the ledger record's tool
// and its plan-bound operation key (the key the operation was dispatched under, not the runtime's
// idempotency key) and the authenticator's session. The claim is revalidated first: this runtime
// and plan, still claimed or cancellation-requested, the same suspended step, and a ledger record
// with the same step, tool and input fingerprint, which may already be terminal.
func PrepareClaimedReconciliation(r *host.Runtime, plan Plan, completed int, l *Ledger, c *ClaimedOperation, requestID string, auth *protocol.Authenticator) (host.AuthenticatedReconciliation, error) {
	if err := checkClaimedReconciliation(r, plan, completed, l, c); err != nil {
		return host.AuthenticatedReconciliation{}, err
	}
	if auth == nil || auth.Role() != protocol.RoleHost {
		return host.AuthenticatedReconciliation{}, &Error{Kind: ErrReconciliationRequiresHostAuthenticator}
	}
	req, err := l.ReconcileRequest(c.key, c.canonical, auth.SessionID(), requestID)
	if err != nil {
		return host.AuthenticatedReconciliation{}, err
	}
	frame, line, err := auth.Seal(protocol.ReconcileOperationMessage{Request: req})
	if err != nil {
		return host.AuthenticatedReconciliation{}, ledgerProtocol(err)
	}
	return host.AuthenticatedReconciliation{Request: req, Frame: frame, Line: line}, nil
}

func reconcileRequestsEqual(a, b protocol.OperationReconcileRequest) bool {
	return a.ProtocolVersion == b.ProtocolVersion && a.SessionID == b.SessionID &&
		a.RequestID == b.RequestID && a.Tool == b.Tool && a.OperationKey == b.OperationKey
}

// ApplyClaimedReconciliation opens the worker's reconciled_operation frame with the host
// authenticator, records its observation in the ledger, persists the ledger and only then
// settles the claimed runtime operation. Checks, in order: a host authenticator
// (ErrReconciliationRequiresHostAuthenticator) and a persist function (ErrStore); the frame opens
// (ErrProtocol; a failed open consumes nothing) and carries a reconciled_operation
// (ErrUnexpectedReconciliationMessage); the claim is revalidated as PrepareClaimedReconciliation does;
// the request is the one the ledger rebuilds for the operation key and the result answers it
// (ErrReconciliationMismatch); a succeeded payload has the tool's format (host.ErrProtocol
// PayloadFormatMismatch); the ledger accepts the observation. Until then nothing changes. Then
// persist receives the updated ledger; when it fails its error is returned and the runtime is
// untouched. Finally the status settles the operation as ResolveOperationStatus does: running
// leaves the promise pending, succeeded completes through the output rules, failed completes as
// Failed, cancelled takes the cancel path.
func ApplyClaimedReconciliation(r *host.Runtime, plan Plan, completed int, l *Ledger, c *ClaimedOperation, req protocol.OperationReconcileRequest, auth *protocol.Authenticator, frame protocol.Frame, persist func(*Ledger) error) (State, host.Reconciliation, error) {
	if auth == nil || auth.Role() != protocol.RoleHost {
		return 0, host.Reconciliation{}, &Error{Kind: ErrReconciliationRequiresHostAuthenticator}
	}
	if persist == nil {
		return 0, host.Reconciliation{}, &Error{Kind: ErrStore, Value: "no persist function"}
	}
	msg, err := auth.OpenFrame(frame)
	if err != nil {
		return 0, host.Reconciliation{}, ledgerProtocol(err)
	}
	reconciled, ok := msg.(protocol.ReconciledOperationMessage)
	if !ok {
		return 0, host.Reconciliation{}, &Error{Kind: ErrUnexpectedReconciliationMessage}
	}
	res := reconciled.Result
	if err := checkClaimedReconciliation(r, plan, completed, l, c); err != nil {
		return 0, host.Reconciliation{}, err
	}
	expected, err := l.ReconcileRequest(c.key, c.canonical, req.SessionID, req.RequestID)
	if err != nil {
		return 0, host.Reconciliation{}, err
	}
	if !reconcileRequestsEqual(expected, req) || !res.MatchesRequest(req) {
		return 0, host.Reconciliation{}, &Error{Kind: ErrReconciliationMismatch}
	}
	id := c.invocation.ID
	if err := r.CheckStatusFormat(id, res.Status); err != nil {
		return 0, host.Reconciliation{}, err
	}
	state, err := l.ApplyVerifiedReconciliation(req, res)
	if err != nil {
		return 0, host.Reconciliation{}, err
	}
	if err := persist(l); err != nil {
		return state, host.Reconciliation{}, err
	}
	settled, err := r.ResolveOperationStatus(id, res.Status)
	return state, settled, err
}
