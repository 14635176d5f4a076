package main

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// step runs one durable operation through the step engine (HDR-041): the input kept, the
// operation prepared under its plan-bound key and the ledger persisted, then claimed, sealed and
// dispatched on the session's one durable exchange, the answer recorded before it is reported.
// A failure drops the engine: the next command restores it from the ledger.
func (s *session) step(c command) (string, json.RawMessage, error) {
	e, err := s.engine()
	if err != nil {
		return "", nil, err
	}
	p, err := protocol.DecodeToolPayload(c.Payload, canonjson.Preserve)
	if err != nil || p.Format != protocol.FormatJSON {
		return "", nil, errors.New("BadCommand")
	}
	if err := s.saveInput(p); err != nil {
		return "", nil, err
	}
	stepped(c.RequestID)
	if _, err := s.rt.StartJSON(c.Tool, string(p.JSON.AppendJSON(nil))); err != nil {
		s.flow = nil // nothing stays queued in the runtime for a later step
		return "", nil, denied{err}
	}
	claimed, err := e.Prepare(context.Background(), c.nonce())
	if err != nil {
		s.flow = nil
		return "", nil, denied{err}
	}
	d, err := e.SealDispatch(c.RequestID, s.proc.HostAuthenticator())
	if err != nil {
		s.flow = nil
		return "", nil, denied{err}
	}
	answer, err := s.exchange(d.Line)
	if err != nil {
		return "", nil, err
	}
	if status, ok := unapplied("step", answer); ok {
		return claimed.OperationKey(), status, nil
	}
	if _, err := e.ApplyDispatchAnswer(context.Background(), d.Request, s.proc.HostAuthenticator(), answer); err != nil {
		return "", nil, s.lost(invalidResult{err})
	}
	return claimed.OperationKey(), answer.Message.(protocol.OperationResultMessage).Result.Status.AppendJSON(nil), nil
}

// exchange sends a sealed durable request on the session's one-shot transport and decodes the
// answer line; the authenticated opening is the engine's. A failure drops the engine.
func (s *session) exchange(line []byte) (protocol.Frame, error) {
	ops, err := s.oneShot()
	if err != nil {
		return protocol.Frame{}, err
	}
	answer, err := ops.ExchangeSealed(resealed(s.proc.HostAuthenticator(), line))
	if err != nil {
		return protocol.Frame{}, s.lost(err)
	}
	f, err := protocol.DecodeFrame(answer, canonjson.Preserve)
	if err != nil {
		return f, s.lost(invalidResult{err})
	}
	return f, nil
}

// lost stops the worker and drops the engine after a failed durable exchange: its effect is
// uncertain, and only the ledger knows what was recorded.
func (s *session) lost(err error) error {
	_, _ = s.proc.Terminate()
	s.flow = nil
	return err
}

// recover settles the first uncertain entry of the ledger on this session (HDR-042), as the
// host chooses: an operation that may have run is reconciled under its persisted key
// (RUN-187, WFL-007, WFL-041), and sent again as its exact recorded dispatch only after a
// worker refused that reconciliation (WFL-043, HDR-055); a compensation whose answer was lost is
// delivered again under its recorded cmp- key and input with a fresh approval (WFL-026). It
// answers the status the worker reported, or nothing when the ledger is settled.
func (s *session) recover(c command) (json.RawMessage, error) {
	if s != nil {
		s.flow = nil // restored from the ledger alone, as after a restart (WFL-040)
	}
	c.RequestID = recoverID(c.RequestID)
	e, err := s.engine()
	if err != nil {
		return nil, err
	}
	defer resume(e)
	unsettled := e.Unsettled()
	if len(unsettled) == 0 {
		return nil, nil
	}
	op := unsettled[0]
	if op.State.Terminal() {
		return s.redeliver(e, op, c.RequestID)
	}
	p, input, err := s.loadInput(op.InputFingerprint)
	if err != nil {
		return nil, err
	}
	if fault == "recover-redispatch" {
		ops, err := s.oneShot()
		if err != nil {
			return nil, err
		}
		req, _ := protocol.NewOperationDispatchRequest(s.auth.SessionID(), c.RequestID, op.Tool, op.OperationKey, p)
		res, err := ops.DispatchOperation(req)
		return res.Status.AppendJSON(nil), err
	}
	return s.reconcileOrRedispatch(e, op, p, input, c.RequestID)
}
