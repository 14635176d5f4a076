package main

import (
	"context"
	"encoding/json"

	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/workflow"
)

// The faulty paths of the test build's faults (build tag splashfaults). Only branches on fault
// reach them; in a default build fault is the empty constant, those branches are compiled out
// and the linker leaves these out of the binary.

// memory is the ledger backend of the memledger fault: kept for the process only.
var memory = storage.NewMemoryBackend()

// unrecorded is the faulty path of the intent-late and cmp-fresh faults: it seals a
// compensation under a key derived from nonce without the engine, sends it, and only then,
// when record is set, records the intent and the answer.
func (s *session) unrecorded(e *workflow.Engine, tg workflow.Target, p protocol.ToolPayload, input []byte, nonce string, record bool) (json.RawMessage, error) {
	auth := s.proc.HostAuthenticator()
	cmpKey := host.DeriveCompensationKey(s.plan.Fingerprint, tg.OperationKey, tg.Policy.Tool(), s.scope, tg.Policy.GrantFingerprint(), input, []byte(nonce))
	b, _ := protocol.NewOperationCompensationBinding(tg.Policy.Tool(), tg.OperationKey, cmpKey, s.scope, tg.Policy.GrantFingerprint())
	req, _ := protocol.NewOperationCompensationRequest(auth.SessionID(), nonce, b, p)
	_, line, _ := auth.Seal(protocol.CompensateOperationMessage{Request: req})
	answer, err := s.exchange(line)
	if err != nil || !record {
		return nil, err
	}
	if _, err := e.RecordCompensation(context.Background(), tg, input, []byte(nonce)); err != nil {
		return nil, denied{err}
	}
	_, err = e.ApplyCompensationAnswer(context.Background(), req, auth, answer)
	return answer.Message.(protocol.CompensationResultMessage).Result.Status.AppendJSON(nil), err
}
