package main

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/splashv5/conform/impl/ledger"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/transport"
	"github.com/splashv5/conform/impl/workflow"
)

// errRefused is the outcome of a recover whose reconciliation the worker refused (WFL-043,
// HDR-055): the refusal is recorded, and the next recover on a fresh session sends the
// recorded dispatch.
var errRefused = errors.New("ReconciliationRefused")

// reconcileOrRedispatch settles the pending or running operation op on this session: by the
// exact recorded dispatch when the last reconciliation of its key was refused (WFL-043), else by
// a reconciliation under its recorded key (WFL-041), recording a refusal of it.
func (s *session) reconcileOrRedispatch(e *workflow.Engine, op ledger.Operation, p protocol.ToolPayload, input []byte, requestID string) (json.RawMessage, error) {
	refused, err := s.refused(op.OperationKey)
	if err != nil {
		return nil, err
	}
	if fault == "redispatch-first" || (refused && fault != "noredispatch") {
		return s.redispatch(e, op, p, requestID)
	}
	ops, err := s.oneShot()
	if err != nil {
		return nil, err
	}
	req, err := e.ReconcileRequest(op.OperationKey, input, s.auth.SessionID(), requestID)
	if err != nil {
		return nil, denied{err}
	}
	res, err := s.reconcileExchange(ops, req)
	if err != nil {
		if !s.workerEnd(err).Refused() && fault != "refusal-any" {
			return nil, s.lost(err)
		}
		if err := s.noteRefusal(op.OperationKey, true); err != nil {
			return nil, s.lost(err)
		}
		return nil, s.lost(errRefused)
	}
	if _, err := e.ApplyReconciliation(context.Background(), req, res); err != nil {
		return nil, s.lost(invalidResult{err})
	}
	return res.Status.AppendJSON(nil), nil
}

// redispatch sends the recorded dispatch of op again, after its reconciliation was refused on
// an earlier session (WFL-043): the recorded key and tool and the kept input, checked against the
// recorded fingerprint. The refusal is spent durably first, so that a lost answer is reconciled
// again before any further dispatch.
func (s *session) redispatch(e *workflow.Engine, op ledger.Operation, p protocol.ToolPayload, requestID string) (json.RawMessage, error) {
	auth := s.proc.HostAuthenticator()
	if fault == "redispatch-newkey" {
		op.OperationKey += "-again"
		return s.unledgered(op, p, requestID)
	}
	d, err := e.SealRedispatch(op.OperationKey, p, requestID, auth)
	if err != nil {
		return nil, err // OperationObserved, InputFingerprintMismatch: nothing sent (HDR-054)
	}
	if err := s.noteRefusal(op.OperationKey, false); err != nil {
		return nil, err
	}
	answer, err := s.exchange(d.Line)
	if err != nil {
		return nil, err
	}
	if _, err := e.ApplyRedispatchAnswer(context.Background(), d.Request, auth, answer); err != nil {
		return nil, s.lost(invalidResult{err})
	}
	return answer.Message.(protocol.OperationResultMessage).Result.Status.AppendJSON(nil), nil
}

// workerEnd waits, within the deadline, for the worker whose exchange failed to end and reports
// how it ended (WFL-043): only a failure with no answer line (the worker's output ended, or the
// supervisor saw the worker end first) can be a refusal.
func (s *session) workerEnd(err error) workflow.WorkerEnd {
	var te *transport.Error
	if !errors.As(err, &te) {
		return workflow.WorkerEnd{}
	}
	switch {
	case te.Kind == transport.ErrChannel:
	case te.Kind == transport.ErrIndeterminate && te.Cause == transport.CauseWorkerTerminated:
	default:
		return workflow.WorkerEnd{}
	}
	select {
	case <-s.proc.Exited():
	case <-time.After(s.deadline):
		return workflow.WorkerEnd{}
	}
	t := s.proc.Wait()
	return workflow.WorkerEnd{Exited: t.Exited && !t.Forced, Status: t.ExitCode}
}

// refusalKey is the record of the refusal note of an operation key, beside the ledger.
func refusalKey(operationKey string) (storage.RecordKey, error) {
	return storage.NewRecordKey("refusal", operationKey)
}

// refused reports whether the last reconciliation of operationKey was refused and no dispatch
// was sent since.
func (s *session) refused(operationKey string) (bool, error) {
	if fault == "refusal-memory" {
		return refusedHere[operationKey], nil
	}
	key, err := refusalKey(operationKey)
	if err != nil {
		return false, err
	}
	rec, err := s.store.Load(context.Background(), key)
	if err != nil || rec == nil {
		return false, err
	}
	return string(rec.Payload) == "refused", nil
}

// noteRefusal durably records that the reconciliation of operationKey was refused (on), or
// that the dispatch it allows is being sent (off), before the driver reports or sends anything.
func (s *session) noteRefusal(operationKey string, on bool) error {
	if fault == "refusal-memory" {
		refusedHere[operationKey] = on
		return nil
	}
	key, err := refusalKey(operationKey)
	if err != nil {
		return err
	}
	value := []byte("sent")
	if on {
		value = []byte("refused")
	}
	ctx := context.Background()
	rec, err := s.store.Load(ctx, key)
	switch {
	case err != nil:
		return err
	case rec == nil:
		_, err = s.store.Create(ctx, key, value)
	default:
		_, err = s.store.Replace(ctx, key, rec.Revision, value)
	}
	return err
}
