package host

import (
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/script"
)

// Reconciliation is the outcome of applying a worker's operation status: Running leaves the
// operation pending; otherwise Settlement describes the terminal result.
type Reconciliation struct {
	Running    bool
	Settlement Settlement
}

// ExternalReconcileRequest builds the reconcile_operation request for a claimed (or
// cancellation-requested) operation: tool = its name, operation_key = its idempotency key. It
// fails with ErrDeadlineElapsed after the deadline.
func (r *Runtime) ExternalReconcileRequest(id OperationID, sessionID, requestID string) (protocol.OperationReconcileRequest, error) {
	rec, err := r.claimed(id)
	if err != nil {
		return protocol.OperationReconcileRequest{}, err
	}
	if rec.t.expired(r.clock()) {
		return protocol.OperationReconcileRequest{}, &ExternalError{Kind: ErrDeadlineElapsed, ID: id}
	}
	req, perr := protocol.NewOperationReconcileRequest(sessionID, requestID, rec.t.name, rec.key)
	if perr != nil {
		return protocol.OperationReconcileRequest{}, &ExternalError{Kind: ErrProtocol, ID: id, Err: perr}
	}
	return req, nil
}

// ReconcileExternal applies an already authenticated worker status to a claimed operation.
// Checks, in order: the request and the result validate (ErrProtocol); the operation is claimed
// or cancellation-requested; the request names this operation's tool and key, and the result
// answers the request (ErrReconciliationMismatch). Then running returns Running (or
// ErrDeadlineElapsed after the deadline) and changes nothing; succeeded must carry the tool's
// format (ErrProtocol PayloadFormatMismatch) and completes through the output rules (JSON
// written compact with sorted keys); failed completes as Failed; cancelled takes the cancel path.
func (r *Runtime) ReconcileExternal(id OperationID, req protocol.OperationReconcileRequest, res protocol.OperationReconcileResult) (Reconciliation, error) {
	if err := req.Validate(); err != nil {
		return Reconciliation{}, &ExternalError{Kind: ErrProtocol, ID: id, Err: err}
	}
	if err := res.Validate(); err != nil {
		return Reconciliation{}, &ExternalError{Kind: ErrProtocol, ID: id, Err: err}
	}
	rec, xerr := r.claimed(id)
	if xerr != nil {
		return Reconciliation{}, xerr
	}
	if req.Tool != rec.t.name || req.OperationKey != rec.key || !res.MatchesRequest(req) {
		return Reconciliation{}, &ExternalError{Kind: ErrReconciliationMismatch, ID: id}
	}
	switch res.Status.State {
	case protocol.StateRunning:
		if rec.t.expired(r.clock()) {
			return Reconciliation{}, &ExternalError{Kind: ErrDeadlineElapsed, ID: id}
		}
		return Reconciliation{Running: true}, nil
	case protocol.StateSucceeded:
		p := res.Status.Payload
		want := rec.t.format.envelope()
		if p.Format != want {
			return Reconciliation{}, &ExternalError{Kind: ErrProtocol, ID: id, Err: &protocol.Error{
				Kind: protocol.ErrPayloadFormatMismatch, ExpectedFormat: want, ActualFormat: p.Format,
			}}
		}
		output := p.Text
		if p.Format == protocol.FormatJSON {
			output = string(p.JSON.JSON())
		}
		return Reconciliation{Settlement: r.settle(rec, OK(output))}, nil
	case protocol.StateFailed:
		return Reconciliation{Settlement: r.settle(rec, Fail(Failed(res.Status.Message)))}, nil
	case protocol.StateCancelled:
		return Reconciliation{Settlement: r.settle(rec, Fail(script.Cancelled()))}, nil
	}
	return Reconciliation{}, &ExternalError{Kind: ErrProtocol, ID: id, Err: &protocol.Error{Kind: protocol.ErrSerialization, Message: "operation status is not a wire status"}}
}

// AuthenticatedReconciliation is a sealed reconcile_operation frame and the request it carries.
// Send Line (followed by a newline) and keep Request for ReconcileAuthenticated.
type AuthenticatedReconciliation struct {
	Request protocol.OperationReconcileRequest
	Frame   protocol.Frame
	Line    []byte
}

// PrepareAuthenticatedReconciliation builds the reconcile request of a claimed operation with the
// authenticator's session id and seals it. The authenticator must speak as the host.
func (r *Runtime) PrepareAuthenticatedReconciliation(id OperationID, requestID string, auth *protocol.Authenticator) (AuthenticatedReconciliation, error) {
	if auth == nil || auth.Role() != protocol.RoleHost {
		return AuthenticatedReconciliation{}, &ExternalError{Kind: ErrReconciliationRequiresHostAuthenticator}
	}
	req, err := r.ExternalReconcileRequest(id, auth.SessionID(), requestID)
	if err != nil {
		return AuthenticatedReconciliation{}, err
	}
	frame, line, err := auth.Seal(protocol.ReconcileOperationMessage{Request: req})
	if err != nil {
		return AuthenticatedReconciliation{}, &ExternalError{Kind: ErrProtocol, ID: id, Err: err}
	}
	return AuthenticatedReconciliation{Request: req, Frame: frame, Line: line}, nil
}

// ReconcileAuthenticated opens a worker frame with the host authenticator (tag, sender role,
// session and directional sequence) and applies its reconciled_operation result as
// ReconcileExternal does. A frame that fails to open changes nothing; a frame that opens has
// consumed its sequence even when a later check fails.
func (r *Runtime) ReconcileAuthenticated(id OperationID, req protocol.OperationReconcileRequest, auth *protocol.Authenticator, frame protocol.Frame) (Reconciliation, error) {
	if auth == nil || auth.Role() != protocol.RoleHost {
		return Reconciliation{}, &ExternalError{Kind: ErrReconciliationRequiresHostAuthenticator}
	}
	res, reconciled, err := openReconciledOperation(auth, frame)
	if err != nil {
		return Reconciliation{}, &ExternalError{Kind: ErrProtocol, ID: id, Err: err}
	}
	if !reconciled {
		return Reconciliation{}, &ExternalError{Kind: ErrUnexpectedReconciliationMessage}
	}
	return r.ReconcileExternal(id, req, res)
}

// openReconciledOperation opens a worker frame with a host authenticator (tag, sender role,
// session and directional sequence) and reports whether it carries a reconciled_operation. The
// error is the protocol's; callers wrap it in their own kind.
func openReconciledOperation(auth *protocol.Authenticator, frame protocol.Frame) (protocol.OperationReconcileResult, bool, error) {
	msg, err := auth.OpenFrame(frame)
	if err != nil {
		return protocol.OperationReconcileResult{}, false, err
	}
	m, ok := msg.(protocol.ReconciledOperationMessage)
	if !ok {
		return protocol.OperationReconcileResult{}, false, nil
	}
	return m.Result, true, nil
}

// CheckStatusFormat checks a worker's durable status against claimed operation id before
// anything is recorded: a succeeded status needs the operation claimed (or
// cancellation-requested) and the tool's payload format (ErrProtocol wrapping
// PayloadFormatMismatch). Other statuses are not checked.
func (r *Runtime) CheckStatusFormat(id OperationID, status protocol.OperationStatus) error {
	if status.State != protocol.StateSucceeded {
		return nil
	}
	rec, xerr := r.claimed(id)
	if xerr != nil {
		return xerr
	}
	if want := rec.t.format.envelope(); status.Payload.Format != want {
		return &ExternalError{Kind: ErrProtocol, ID: id, Err: &protocol.Error{Kind: protocol.ErrPayloadFormatMismatch, ExpectedFormat: want, ActualFormat: status.Payload.Format}}
	}
	return nil
}

// ResolveOperationStatus applies a worker's durable status to a claimed operation after the
// ledger was persisted: running changes nothing; succeeded completes with the payload (the
// tool's format is required; JSON is written compact with sorted keys); failed completes as
// Failed; cancelled takes the cancel path.
func (r *Runtime) ResolveOperationStatus(id OperationID, status protocol.OperationStatus) (Reconciliation, error) {
	switch status.State {
	case protocol.StateRunning:
		if _, xerr := r.claimed(id); xerr != nil {
			return Reconciliation{}, xerr
		}
		return Reconciliation{Running: true}, nil
	case protocol.StateSucceeded:
		rec, xerr := r.claimed(id)
		if xerr != nil {
			return Reconciliation{}, xerr
		}
		p := status.Payload
		if want := rec.t.format.envelope(); p.Format != want {
			return Reconciliation{}, &ExternalError{Kind: ErrProtocol, ID: id, Err: &protocol.Error{Kind: protocol.ErrPayloadFormatMismatch, ExpectedFormat: want, ActualFormat: p.Format}}
		}
		out := p.Text
		if p.Format == protocol.FormatJSON {
			out = string(p.JSON.JSON())
		}
		s, err := r.CompleteExternal(id, OK(out))
		return Reconciliation{Settlement: s}, err
	case protocol.StateFailed:
		s, err := r.CompleteExternal(id, Fail(Failed(status.Message)))
		return Reconciliation{Settlement: s}, err
	case protocol.StateCancelled:
		s, err := r.CancelExternal(id)
		return Reconciliation{Settlement: s}, err
	}
	return Reconciliation{}, &ExternalError{Kind: ErrProtocol, ID: id, Err: &protocol.Error{Kind: protocol.ErrSerialization, Message: "operation status is not a wire status"}}
}
