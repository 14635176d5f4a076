package main

import (
	"encoding/json"
	"errors"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// operation runs one durable exchange, a dispatch or a reconciliation, on the session's
// one-shot operation transport (HDR-026, HDR-027).
func (s *session) operation(c command) (json.RawMessage, error) {
	if s == nil {
		return nil, errors.New("NotStarted")
	}
	if fault == "redispatch" {
		c.Op = "dispatch"
	}
	if fault == "opkey" {
		c.Key += "-x"
	}
	if s.spared(c.Tool) {
		return nil, denied{errors.New("tool not granted")}
	}
	ops, err := s.oneShot()
	if err != nil {
		return nil, err
	}
	sealed := s.proc.HostAuthenticator().NextOutgoing()
	var res protocol.OperationReconcileResult
	if c.Op == "dispatch" {
		if fault == "redispatch" && c.Payload == nil {
			c.Payload = json.RawMessage(`{"format":"json","value":{}}`)
		}
		p, err := protocol.DecodeToolPayload(c.Payload, canonjson.Preserve)
		if err != nil {
			return nil, errors.New("BadCommand")
		}
		req, err := protocol.NewOperationDispatchRequest(s.auth.SessionID(), c.RequestID, c.Tool, c.Key, p)
		if err != nil {
			return nil, denied{err}
		}
		if res, err = ops.DispatchOperation(req); err != nil {
			s.retried(sealed)
			return nil, err
		}
	} else {
		req, err := protocol.NewOperationReconcileRequest(s.auth.SessionID(), c.RequestID, c.Tool, c.Key)
		if err != nil {
			return nil, denied{err}
		}
		if res, err = ops.ReconcileOperation(req); err != nil {
			s.retried(sealed)
			return nil, err
		}
	}
	return res.Status.AppendJSON(nil), nil
}
