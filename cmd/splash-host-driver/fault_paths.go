package main

import (
	"context"
	"encoding/json"

	"github.com/splashv5/conform/impl/ledger"
	"github.com/splashv5/conform/impl/opkey"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/transport"
	"github.com/splashv5/conform/impl/workflow"
)

// The faulty paths of the test build's faults (build tag splashfaults). Only branches on fault
// reach them; in a default build fault is the empty constant, those branches are compiled out
// and the linker leaves these out of the binary.

// memory is the ledger backend of the memledger fault: kept for the process only.
var memory = storage.NewMemoryBackend()

// unrecorded is the faulty path of the intent-late and cmp-fresh faults: it seals a
// compensation under a key derived from nonce without the engine and sends it; when record is
// set it records the intent only once the frame is written, before the answer, as a port that
// persists after sending would, and the answer after it.
func (s *session) unrecorded(e *workflow.Engine, tg workflow.Target, p protocol.ToolPayload, input []byte, nonce string, record bool) (json.RawMessage, error) {
	auth := s.proc.HostAuthenticator()
	cmpKey := opkey.CompensationKey(s.plan.Fingerprint, tg.OperationKey, tg.Policy.Tool(), s.scope, tg.Policy.GrantFingerprint(), input, []byte(nonce))
	b, _ := protocol.NewOperationCompensationBinding(tg.Policy.Tool(), tg.OperationKey, cmpKey, s.scope, tg.Policy.GrantFingerprint())
	req, _ := protocol.NewOperationCompensationRequest(auth.SessionID(), nonce, b, p)
	_, line, _ := auth.Seal(protocol.CompensateOperationMessage{Request: req})
	var recorded error
	if record {
		ops, err := transport.NewSupervisedOperationTransport(s.auth.Manifest(), auth, afterSend{s.ch, func() {
			_, recorded = e.RecordCompensation(context.Background(), tg, input, []byte(nonce))
		}}, s.proc)
		if err != nil {
			return nil, err
		}
		_ = ops.SetDeadline(s.deadline)
		s.ops = ops
	}
	answer, err := s.exchange(line)
	if err != nil || !record {
		return nil, err
	}
	if recorded != nil {
		return nil, denied{recorded}
	}
	_, err = e.ApplyCompensationAnswer(context.Background(), req, auth, answer)
	return answer.Message.(protocol.CompensationResultMessage).Result.Status.AppendJSON(nil), err
}

// afterSend is the worker channel of the intent-late fault: sent runs once a line is written.
type afterSend struct {
	*transport.Channel
	sent func()
}

// SendLine writes line, then runs sent.
func (a afterSend) SendLine(line []byte) error {
	err := a.Channel.SendLine(line)
	if err == nil {
		a.sent()
	}
	return err
}

// refusedHere holds the refusal notes of the refusal-memory fault: kept for the process only.
var refusedHere = map[string]bool{}

// unledgered is the faulty path of the redispatch-newkey fault: it dispatches op's input under
// op's (altered) key without the engine and reports the answer without recording it.
func (s *session) unledgered(op ledger.Operation, p protocol.ToolPayload, requestID string) (json.RawMessage, error) {
	ops, err := s.oneShot()
	if err != nil {
		return nil, err
	}
	req, err := protocol.NewOperationDispatchRequest(s.auth.SessionID(), requestID, op.Tool, op.OperationKey, p)
	if err != nil {
		return nil, err
	}
	res, err := ops.DispatchOperation(req)
	if err != nil {
		return nil, s.lost(err)
	}
	return res.Status.AppendJSON(nil), nil
}
