package host

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/splashv5/conform/impl/protocol"
)

// undoPayload is the inverse input the compensation checks give.
func undoPayload() protocol.ToolPayload { return jsonPayload(`{"undo":1}`) }

// undoBytes is about the size of the inverse input of CNF-HCOMP-01: larger than a worker's
// default input pipe (64 KiB on Linux and macOS), so that a host blocks writing its frame when
// the worker stops reading, and small enough for an input store that keeps inputs of up to
// 256 KiB, as the reference's does (HDR-050).
const undoBytes = 128 << 10

// largeUndoPayload is the inverse input of CNF-HCOMP-01, of undoBytes.
var largeUndoPayload = sync.OnceValue(func() protocol.ToolPayload {
	return jsonPayload(`{"undo":"` + strings.Repeat("u", undoBytes) + `"}`)
})

// compensateCommand sends a compensate command for key with undoPayload without waiting.
func (t *T) compensateCommand(requestID, key string) uint64 {
	return t.compensateWith(requestID, key, undoPayload())
}

// compensateWith sends a compensate command for key with the inverse input p without waiting.
func (t *T) compensateWith(requestID, key string, p protocol.ToolPayload) uint64 {
	return t.sendCommand(map[string]any{"op": "compensate", "request_id": requestID, "key": key,
		"payload": rawJSON(p.AppendJSON(nil)), "nonce": operationNonce(requestID)})
}

// recvCompensation reads the compensate_operation of key on w's session within d and checks
// that it carries the original's key and tool, a cmp- key and undoPayload.
func recvCompensation(t *T, w *fakeWorker, key string, d time.Duration) protocol.OperationCompensationRequest {
	return checkCompensation(t, w, key, undoPayload(), w.recvWithin(protocol.TypeCompensateOperation, d, nil))
}

// checkCompensation checks that m, a compensate_operation that w received, compensates key with
// a cmp- key and the inverse input p on w's session, and returns its request.
func checkCompensation(t *T, w *fakeWorker, key string, p protocol.ToolPayload, m protocol.Message) protocol.OperationCompensationRequest {
	req := m.(protocol.CompensateOperationMessage).Request
	if req.OperationKey != key || req.Tool != durableTool || !strings.HasPrefix(req.CompensationKey, "cmp-") ||
		req.SessionID != w.boot.SessionID || !bytes.Equal(req.Payload.AppendJSON(nil), p.AppendJSON(nil)) {
		t.failf("compensate_operation of "+key+" with a cmp- key and the payload given on session "+w.boot.SessionID+t.cite("WFL-010", "HDR-043"),
			clip(string(protocol.CompensateOperationMessage{Request: req}.AppendJSON(nil)), 400))
	}
	return req
}

// undone is the status the fake worker answers a compensation with.
func undone() protocol.OperationStatus { return protocol.Succeeded(jsonPayload(`{"undone":true}`)) }

// compensated answers a compensate_operation with succeeded.
func (w *fakeWorker) compensated(req protocol.OperationCompensationRequest) protocol.Message {
	return protocol.CompensationResultMessage{Result: protocol.OperationCompensationResult{ProtocolVersion: protocol.ProtocolVersion,
		SessionID: req.SessionID, RequestID: req.RequestID, Tool: req.Tool, OperationKey: req.OperationKey,
		CompensationKey: req.CompensationKey, TenantScope: req.TenantScope, GrantFingerprint: req.GrantFingerprint,
		Status: undone()}}
}

// finishCompensation answers req on w and checks the outcome id.
func finishCompensation(t *T, w *fakeWorker, id uint64, req protocol.OperationCompensationRequest) {
	w.send(w.compensated(req))
	if o := t.await(id); !o.OK || string(o.Status) != string(undone().AppendJSON(nil)) {
		t.failf("the compensation's status as the outcome"+t.cite("HDR-043"), string(o.raw))
	}
}

// heldSession is a ledger session whose fake worker stops reading in the middle of the host's
// compensate_operation frame (holdFlag), with a deadline that outlasts the check, so that the
// host is still blocked writing the frame when the runner kills it.
func (t *T) heldSession() *fakeWorker {
	ms := time.Until(t.deadline).Milliseconds() + 1000
	w := t.ledgerSessionWith(map[string]any{"deadline_ms": ms}, holdFlag)
	if w.hello.PipeError != "" {
		t.logf("worker %d: its input pipe keeps its size (%s): the frame must outgrow it", w.index, w.hello.PipeError)
	} else {
		t.logf("worker %d: its input pipe holds %d bytes", w.index, w.hello.Pipe)
	}
	return w
}

// heldCompensation waits for the compensate_operation of key on w, held unfinished, and
// returns its cmp- key. A host that records the compensation's intent only after writing the
// frame has not recorded it yet (WFL-022). When the frame arrives whole instead (the host's
// channel took all of it), it is judged in full and the restart races the host's ledger write.
func heldCompensation(t *T, w *fakeWorker, key string) string {
	b, whole, held := w.recvHeld(recoverWait)
	if !held {
		t.logf("worker %d: the frame arrived whole: the restart races the host's ledger write", w.index)
		return checkCompensation(t, w, key, largeUndoPayload(), whole).CompensationKey
	}
	r := b.Message.Request
	if r.OperationKey != key || r.Tool != durableTool || !strings.HasPrefix(r.CompensationKey, "cmp-") || r.SessionID != w.boot.SessionID || r.TenantScope != workerScope {
		t.failf("compensate_operation of "+key+" with a cmp- key on session "+w.boot.SessionID+" for tenant "+workerScope+t.cite("WFL-010", "HDR-043"),
			fmt.Sprintf("%+v", r))
	}
	return r.CompensationKey
}

func compChecks() []*Check {
	needs := []string{FeatureInvoke, FeatureRecover, FeatureCompensate}
	return []*Check{
		{ID: "CNF-HCOMP-01", Level: must, Requirements: []string{"WFL-011", "WFL-022", "WFL-026", "HDR-043", "HDR-050"}, Needs: needs,
			Title: "intent before frame: a host killed while still writing a compensation frame recovers it from its recorded intent, same cmp- key and input",
			run: func(t *T) {
				key := t.succeededStep(t.ledgerSession(), "req-1")
				second := t.heldSession()
				t.compensateWith("cmp-req-1", key, largeUndoPayload())
				sent := heldCompensation(t, second, key)
				t.restartDriver()
				third := t.ledgerSession()
				id := t.recoverCommand("rec-1")
				again := checkCompensation(t, third, key, largeUndoPayload(), third.recvWithin(protocol.TypeCompensateOperation, recoverWait, nil))
				if again.CompensationKey != sent {
					t.failf("the recorded compensation key "+sent+" after the restart (WFL-026)", again.CompensationKey)
				}
				finishCompensation(t, third, id, again)
			}},
		{ID: "CNF-HCOMP-02", Level: must, Requirements: []string{"WFL-011", "WFL-023", "HDR-044", "HDR-022", "HDR-043"}, Needs: needs,
			Title: "one approval: a second compensation of the same operation is Denied and sends no frame, on a fresh session of a restarted host",
			run: func(t *T) {
				key := t.succeededStep(t.ledgerSession(), "req-1")
				second := t.ledgerSession()
				id := t.compensateCommand("cmp-req-1", key)
				finishCompensation(t, second, id, recvCompensation(t, second, key, recoverWait))
				t.restartDriver() // the rule holds after any restart (HDR-044): it lives in the ledger
				third := t.ledgerSession()
				id = t.compensateCommand("cmp-req-2", key)
				if o := t.expectError(id, "the second compensation of "+key+" is refused"); o.Error != "Denied" {
					t.failf(`error kind "Denied" (HDR-044)`, o.Error)
				}
				third.expectSilence(150*time.Millisecond, "at most one compensation per operation (WFL-011)")
			}},
		{ID: "CNF-HCOMP-03", Level: must, Requirements: []string{"WFL-026", "WFL-010", "HDR-042", "HDR-043"}, Needs: needs,
			Title: "an ambiguous compensation delivery is recovered under a fresh session with the same cmp- key and input, never a fresh key",
			run: func(t *T) {
				key := t.succeededStep(t.ledgerSession(), "req-1")
				second := t.ledgerSession()
				id := t.compensateCommand("cmp-req-1", key)
				sent := recvCompensation(t, second, key, recoverWait)
				second.exit(1)
				t.expectError(id, "the worker died without answering the compensation")
				third := t.ledgerSession()
				id = t.recoverCommand("rec-1")
				again := recvCompensation(t, third, key, recoverWait)
				if again.CompensationKey != sent.CompensationKey || again.GrantFingerprint != sent.GrantFingerprint || again.TenantScope != sent.TenantScope {
					t.failf("the same cmp- key "+sent.CompensationKey+" on the fresh session (WFL-026)", again.CompensationKey)
				}
				finishCompensation(t, third, id, again)
			}},
	}
}
