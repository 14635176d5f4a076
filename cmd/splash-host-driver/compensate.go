package main

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/ledger"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/workflow"
)

// defaultScope is the worker's journal scope when start names none: the reference worker's
// default. Every compensation binding carries the start's scope as its tenant (HDR-043).
const defaultScope = "conformance"

// allow is the driver's compensation policy: every compensation the session's manifest grants
// is allowed, checked again at each step as WFL-021 requires.
type allow struct{}

func (allow) VerifyCompensationGrant(string, protocol.CapabilityGrant) error { return nil }
func (allow) VerifyCompensationAction(workflow.Action) error                 { return nil }

// target names the succeeded operation key for compensation under the session's grant of tool.
func (s *session) target(key, tool string) (workflow.Target, error) {
	for _, g := range s.auth.Manifest().Grants {
		if g.Tool == tool {
			p, err := workflow.NewCompensationPolicy(s.scope, g)
			return workflow.Target{OperationKey: key, Policy: p, Grant: g, GrantVerifier: allow{}, ActionVerifier: allow{}}, err
		}
	}
	return workflow.Target{}, errors.New("the manifest does not grant the operation's tool")
}

// compensate compensates the succeeded operation key with the inverse payload (HDR-043): the
// intent is recorded and persisted first (WFL-022), at most once per operation, so a second
// compensation is Denied before any frame (WFL-011); then a one-use approval for this session,
// the sealed compensate_operation, and the answer recorded (WFL-023 to WFL-025).
func (s *session) compensate(c command) (json.RawMessage, error) {
	e, err := s.engine()
	if err != nil {
		return nil, err
	}
	p, err := protocol.DecodeToolPayload(c.Payload, canonjson.Preserve)
	if err != nil {
		return nil, errors.New("BadCommand")
	}
	op, ok := e.Ledger().Operation(c.Key)
	if !ok {
		return nil, denied{errors.New("unknown operation")}
	}
	tg, err := s.target(op.OperationKey, op.Tool)
	if err != nil {
		return nil, denied{err}
	}
	input, err := protocol.CanonicalOperationInputBytes(p)
	if err != nil {
		return nil, denied{err}
	}
	if err := s.saveInput(p); err != nil {
		return nil, err
	}
	if fault == "intent-late" {
		return s.unrecorded(e, tg, p, input, c.RequestID, true)
	}
	if _, err := e.RecordCompensation(context.Background(), tg, input, c.nonce()); err != nil {
		if !recompensates(c.Key, err) {
			return nil, denied{err}
		}
	}
	compensated(c.Key)
	return s.deliver(e, tg, p, input, c.RequestID)
}

// redeliver sends the recorded compensation of op again on this session, under its recorded
// key and input and a fresh approval (WFL-026).
func (s *session) redeliver(e *workflow.Engine, op ledger.Operation, requestID string) (json.RawMessage, error) {
	tg, err := s.target(op.OperationKey, op.Tool)
	if err != nil {
		return nil, denied{err}
	}
	p, input, err := s.loadInput(op.Compensation.InputFingerprint)
	if err != nil {
		return s.lostInput(e, tg, requestID, err)
	}
	if fault == "cmp-fresh" || (fault == "rebind" && op.Compensation.TenantScope != s.scope) {
		return s.unrecorded(e, tg, p, input, "fresh-"+requestID, false)
	}
	return s.deliver(e, tg, p, input, requestID)
}

// deliver approves, seals and sends the recorded compensation and records the answer.
func (s *session) deliver(e *workflow.Engine, tg workflow.Target, p protocol.ToolPayload, input []byte, requestID string) (json.RawMessage, error) {
	auth := s.proc.HostAuthenticator()
	approval, err := e.ApproveCompensation(tg, input, auth)
	if err != nil {
		return nil, denied{err}
	}
	sealed, err := e.SealCompensation(tg, requestID, p, approval, auth)
	if err != nil {
		return nil, denied{err}
	}
	answer, err := s.exchange(sealed.Line)
	if err != nil {
		return nil, err
	}
	if status, ok := unapplied("compensate", answer); ok {
		return status, nil
	}
	if _, err := e.ApplyCompensationAnswer(context.Background(), sealed.Request, auth, answer); err != nil {
		return nil, s.lost(invalidResult{err})
	}
	return answer.Message.(protocol.CompensationResultMessage).Result.Status.AppendJSON(nil), nil
}
