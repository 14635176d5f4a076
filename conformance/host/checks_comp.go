package host

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/fakeworker"
	"github.com/splashv5/conform/impl/protocol"
)

// undoPayload is the inverse input the compensation checks give.
func undoPayload() protocol.ToolPayload { return jsonPayload(`{"undo":1}`) }

// undoBytes is about the size of the inverse input of CNF-HCOMP-01: larger than a worker's
// default input pipe (64 KiB on Linux and macOS), so that a host blocks writing its frame when
// the worker stops reading, and small enough for an input store that keeps inputs of up to
// 256 KiB, as the reference's does (HDR-050).
const undoBytes = 128 << 10

// socketUndoBytes is about the size of the inverse input of CNF-HCOMP-01 when the worker's
// input is a socket: a unix stream socket's writer is bounded by its own send buffer (208 KiB
// by default on Linux), which the worker cannot shrink, so the frame outgrows it by its size;
// still within the grant's and the reference input store's 256 KiB.
const socketUndoBytes = 248 << 10

// largeUndoPayload is the inverse input of CNF-HCOMP-01 through a pipe, of undoBytes, and
// socketUndoPayload through a socket, of socketUndoBytes.
var (
	largeUndoPayload  = sync.OnceValue(func() protocol.ToolPayload { return undoOf(undoBytes) })
	socketUndoPayload = sync.OnceValue(func() protocol.ToolPayload { return undoOf(socketUndoBytes) })
)

// undoOf is an inverse input of about n bytes.
func undoOf(n int) protocol.ToolPayload {
	return jsonPayload(`{"undo":"` + strings.Repeat("u", n) + `"}`)
}

// heldUndo is the inverse input of CNF-HCOMP-01 for the held worker w: large enough to outgrow
// what the host can buffer on w's kind of input.
func heldUndo(w *fakeWorker) protocol.ToolPayload {
	if w.hello.Input == fakeworker.InputSocket {
		return socketUndoPayload()
	}
	return largeUndoPayload()
}

// pacedWait is how long CNF-HCOMP-01 waits for a frame the host must send: recoverWait, or
// paceMargin times what one step took the driver (a ledger write, a frame and its answer)
// plus a second, when that is longer, so that a correct slow host is not held to the reference
// driver's pace.
func pacedWait(t *T, step time.Duration) time.Duration {
	wait := max(recoverWait, paceMargin*step+time.Second)
	if wait > recoverWait {
		t.Logf("a wait of %v for each frame, sized from the driver's step of %v (%d× margin)", wait.Round(time.Millisecond),
			step.Round(time.Millisecond), paceMargin)
	}
	return wait
}

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

// lostCompensation records a succeeded step and starts its compensation on a fresh session whose
// worker dies before answering; it returns the step's key and the compensation the worker got.
func (t *T) lostCompensation() (string, protocol.OperationCompensationRequest) {
	key := t.succeededStep(t.ledgerSession(), "req-1")
	lost := t.ledgerSession()
	id := t.compensateCommand("cmp-req-1", key)
	req := recvCompensation(t, lost, key, recoverWait)
	lost.exit(1)
	t.expectError(id, "the worker died without answering the compensation")
	return key, req
}

// checkCompensation checks that m, a compensate_operation that w received, compensates key with
// a cmp- key and the inverse input p on w's session, and returns its request.
func checkCompensation(t *T, w *fakeWorker, key string, p protocol.ToolPayload, m protocol.Message) protocol.OperationCompensationRequest {
	req := m.(protocol.CompensateOperationMessage).Request
	if req.OperationKey != key || req.Tool != durableTool || !strings.HasPrefix(req.CompensationKey, "cmp-") ||
		req.SessionID != w.boot.SessionID || !bytes.Equal(req.Payload.AppendJSON(nil), p.AppendJSON(nil)) {
		t.Failf("compensate_operation of "+key+" with a cmp- key and the payload given on session "+w.boot.SessionID+t.Cite("WFL-010", "HDR-043"),
			conformance.Clip(string(protocol.CompensateOperationMessage{Request: req}.AppendJSON(nil)), 400))
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
		t.Failf("the compensation's status as the outcome"+t.Cite("HDR-043"), string(o.Raw()))
	}
}

// heldSession is a ledger session whose fake worker stops reading in the middle of the host's
// compensate_operation frame (fakeworker.HoldFlag), with a deadline that outlasts the check, so that the
// host is still blocked writing the frame when the runner kills it.
func (t *T) heldSession(wait time.Duration) *fakeWorker {
	ms := (time.Until(t.Deadline) + wait + time.Second).Milliseconds()
	w := t.ledgerSessionWith(map[string]any{"deadline_ms": ms}, fakeworker.HoldFlag)
	size := len(heldUndo(w).AppendJSON(nil)) >> 10
	switch {
	case w.hello.PipeError != "":
		t.Logf("worker %d: its standard input, a %s, keeps its buffer (%s): the frame of %d KiB must outgrow the host's buffer",
			w.index, w.hello.Input, w.hello.PipeError, size)
	case w.hello.Input == fakeworker.InputSocket:
		t.Logf("worker %d: its standard input is a socket; its receive buffer holds %d bytes, the host's send buffer is the host's: "+
			"the frame of %d KiB outgrows a default one", w.index, w.hello.Pipe, size)
	default:
		t.Logf("worker %d: its input pipe holds %d bytes; the frame has %d KiB", w.index, w.hello.Pipe, size)
	}
	return w
}

// heldCompensation waits for the compensate_operation of key on w, held unfinished, and
// returns its cmp- key. A host that records the compensation's intent only after writing the
// frame has not recorded it yet (WFL-022). When the frame arrives whole instead (the host's
// channel took all of it), it is judged in full and the restart races the host's ledger write.
func heldCompensation(t *T, w *fakeWorker, key string, wait time.Duration) string {
	b, whole, held := w.recvHeld(wait)
	if !held {
		t.Logf("worker %d: the frame arrived whole: the restart races the host's ledger write", w.index)
		return checkCompensation(t, w, key, heldUndo(w), whole).CompensationKey
	}
	r := b.Message.Request
	if r.OperationKey != key || r.Tool != durableTool || !strings.HasPrefix(r.CompensationKey, "cmp-") || r.SessionID != w.boot.SessionID || r.TenantScope != workerScope {
		t.Failf("compensate_operation of "+key+" with a cmp- key on session "+w.boot.SessionID+" for tenant "+workerScope+t.Cite("WFL-010", "HDR-043"),
			fmt.Sprintf("%+v", r))
	}
	return r.CompensationKey
}

func compChecks() []*Check {
	needs := []string{FeatureInvoke, FeatureRecover, FeatureCompensate}
	return []*Check{
		{ID: "CNF-HCOMP-01", Level: must, Requirements: []string{"WFL-011", "WFL-022", "WFL-026", "HDR-043", "HDR-050"}, Features: needs,
			Title: "intent before frame: a host killed while still writing a compensation frame (to a pipe or a socket) recovers it from its recorded intent, same cmp- key and input",
			Run: func(t *T) {
				first := t.ledgerSession()
				began := time.Now()
				key := t.succeededStep(first, "req-1")
				wait := pacedWait(t, time.Since(began))
				second := t.heldSession(wait)
				undo := heldUndo(second)
				t.compensateWith("cmp-req-1", key, undo)
				sent := heldCompensation(t, second, key, wait)
				t.restartDriver()
				t.RenewDeadline() // the recovery is a step of its own
				third := t.ledgerSession()
				id := t.recoverCommand("rec-1")
				again := checkCompensation(t, third, key, undo, third.recvWithin(protocol.TypeCompensateOperation, wait, nil))
				if again.CompensationKey != sent {
					t.Failf("the recorded compensation key "+sent+" after the restart (WFL-026)", again.CompensationKey)
				}
				finishCompensation(t, third, id, again)
			}},
		{ID: "CNF-HCOMP-02", Level: must, Requirements: []string{"WFL-011", "WFL-023", "HDR-044", "HDR-022", "HDR-043"}, Features: needs,
			Title: "one approval: a second compensation of the same operation is Denied and sends no frame, on a fresh session of a restarted host",
			Run: func(t *T) {
				key := t.succeededStep(t.ledgerSession(), "req-1")
				second := t.ledgerSession()
				id := t.compensateCommand("cmp-req-1", key)
				finishCompensation(t, second, id, recvCompensation(t, second, key, recoverWait))
				t.restartDriver() // the rule holds after any restart (HDR-044): it lives in the ledger
				third := t.ledgerSession()
				id = t.compensateCommand("cmp-req-2", key)
				if o := t.expectError(id, "the second compensation of "+key+" is refused"); o.Error != "Denied" {
					t.Failf(`error kind "Denied" (HDR-044)`, o.Error)
				}
				third.expectSilence(150*time.Millisecond, "at most one compensation per operation (WFL-011)")
			}},
		{ID: "CNF-HCOMP-03", Level: must, Requirements: []string{"WFL-026", "WFL-010", "HDR-042", "HDR-043", "TRN-101"}, Features: needs,
			Title: "an ambiguous compensation delivery is recovered under a fresh session with the same cmp- key and input, never a fresh key",
			Run: func(t *T) {
				key, sent := t.lostCompensation()
				third := t.ledgerSession()
				id := t.recoverCommand("rec-1")
				again := recvCompensation(t, third, key, recoverWait)
				if again.CompensationKey != sent.CompensationKey || again.GrantFingerprint != sent.GrantFingerprint || again.TenantScope != sent.TenantScope {
					t.Failf("the same cmp- key "+sent.CompensationKey+" on the fresh session (WFL-026)", again.CompensationKey)
				}
				finishCompensation(t, third, id, again)
			}},
		{ID: "CNF-HCOMP-05", Level: must, Requirements: []string{"HDR-050", "HDR-056", "WFL-026"}, Features: needs,
			Title: "a lost input is never sent: with the input store emptied across a restart, recover of a compensation whose answer was lost sends no frame and answers an error",
			Run: func(t *T) {
				t.lostCompensation()
				t.restartDriverWith(t.loseInputs)
				third := t.ledgerSession()
				id := t.recoverCommand("rec-1")
				line, o, done := t.frameOrOutcome(third, id, recoverWait)
				if !done {
					t.Failf("no frame: the compensation's inverse input is lost, and a host sends nothing it cannot load and check (HDR-050; "+
						"keep the input store in the directory start names as inputs, HDR-056)", "the host sent "+conformance.Clip(string(line), 300))
				}
				if o.OK {
					t.Failf(`an error outcome (LostInput) for the recovery of a compensation whose input is lost (HDR-050)`, string(o.Raw()))
				}
				t.Logf("recover refused with %s", o.Error)
				third.expectSilence(150*time.Millisecond, "a lost input is never sent (HDR-050)")
			}},
		{ID: "CNF-HCOMP-06", Level: must, Requirements: []string{"WFL-025", "HDR-042", "HDR-043"}, Features: needs,
			Title: "a compensation's answer that does not open (a tampered tag) or of another kind (operation_result) is refused and records nothing: the next recover sends the same compensation again",
			Run: func(t *T) {
				key := t.succeededStep(t.ledgerSession(), "req-1")
				w := t.ledgerSession()
				id := t.compensateCommand("cmp-req-1", key)
				sent := recvCompensation(t, w, key, recoverWait)
				w.write(tamper(w.forge(1, protocol.RoleWorker, w.boot.SessionID, w.compensated(sent))))
				t.expectError(id, "the host refuses a compensation_result with a tampered tag: authenticate the answer before recording it"+t.Cite("WFL-025"))
				for i, answer := range []func(w *fakeWorker, req protocol.OperationCompensationRequest){
					func(w *fakeWorker, req protocol.OperationCompensationRequest) {
						w.send(protocol.OperationResultMessage{Result: protocol.OperationReconcileResult{ProtocolVersion: protocol.ProtocolVersion,
							SessionID: req.SessionID, RequestID: req.RequestID, Tool: req.Tool, OperationKey: req.OperationKey, Status: undone()}})
					},
					func(w *fakeWorker, req protocol.OperationCompensationRequest) { w.send(w.compensated(req)) },
				} {
					t.RenewDeadline()
					w = t.ledgerSession()
					id = t.recoverCommand(fmt.Sprintf("rec-%d", i+1))
					again := recvCompensation(t, w, key, recoverWait)
					if again.CompensationKey != sent.CompensationKey {
						t.Failf("the compensation "+sent.CompensationKey+" again: the refused answers recorded nothing"+t.Cite("WFL-025", "WFL-026"), again.CompensationKey)
					}
					answer(w, again)
					if i == 0 {
						t.expectError(id, "the host refuses an operation_result as the answer to its compensate_operation: require a compensation_result"+t.Cite("WFL-025"))
						continue
					}
					if o := t.await(id); !o.OK || string(o.Status) != string(undone().AppendJSON(nil)) {
						t.Failf("the compensation's status as the outcome"+t.Cite("HDR-042"), string(o.Raw()))
					}
				}
			}},
	}
}

// loseInputs empties the check's input directory (HDR-056): the host's input store is lost.
func (t *T) loseInputs() {
	entries, err := os.ReadDir(t.inputDir())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Internal(err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(t.inputDir(), e.Name())); err != nil {
			t.Internal(err)
		}
	}
	if len(entries) == 0 {
		t.Logf("the input directory holds nothing: the host keeps its inputs elsewhere (HDR-056)")
		return
	}
	t.Logf("the input directory emptied (%d removed): the stored inputs are lost", len(entries))
}
