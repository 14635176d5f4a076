package host

import (
	"encoding/json"
	"maps"
	"path/filepath"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/driver"
	"github.com/splashv5/conform/impl/protocol"
)

// Driver features of the durable ledger (HDR-010, HDR-040).
const (
	// FeatureRecover: start with a state directory, step and recover.
	FeatureRecover = "recover"
	// FeatureCompensate: compensate.
	FeatureCompensate = "compensate"
)

// ledgerGrant is the durable tool's grant with a compensation budget larger than one, so that
// only the host's ledger can refuse a second compensation, and room for largeUndoPayload.
func ledgerGrant() protocol.CapabilityGrant {
	g := durableGrant()
	g.MaxCalls, g.MaxCompensations, g.MaxInputBytes = 8, 2, 2*undoBytes
	return g
}

// stateDir is the check's host state directory: every start of the check, in every driver
// process it runs, gets the same one (HDR-040).
func (t *T) stateDir() string { return filepath.Join(t.side.Dir, "host-state") }

// inputDir is the check's directory for the host's input store (HDR-056), given with the state
// directory in every start, so that a check can lose the inputs (CNF-HCOMP-05).
func (t *T) inputDir() string { return filepath.Join(t.side.Dir, "host-inputs") }

// ledgerSession starts a worker whose host keeps its ledger in the check's state directory and
// checks its open_session and the start outcome.
func (t *T) ledgerSession() *fakeWorker { return t.ledgerSessionWith(nil) }

// ledgerSessionWith is ledgerSession with the start fields of more and the fake-worker
// arguments extra.
func (t *T) ledgerSessionWith(more map[string]any, extra ...string) *fakeWorker {
	m := t.manifest(ledgerGrant())
	// The inputs of the key derivations are the runner's (HDR-049).
	fields := map[string]any{"state": t.stateDir(), "inputs": t.inputDir(), "plan": t.plan()}
	maps.Copy(fields, more)
	id := t.sendCommand(t.startCommand(m, fields, extra...))
	w := t.acceptWorker("the driver starts the given worker command" + t.Cite("HDR-020"))
	w.recv(protocol.TypeOpenSession)
	if o := t.await(id); !o.OK {
		t.Failf("start with a state directory answered with ok"+t.Cite("HDR-040"), string(o.Raw()))
	}
	return w
}

// restartDriver kills the driver's process group, as a host crash would, then the check's
// workers, and starts a new driver process that must continue from the state directory. The
// driver dies first, so that it dies in whatever it was doing: a write to a worker that stopped
// reading stays blocked to the end (CNF-HCOMP-01).
func (t *T) restartDriver() { t.restartDriverWith(nil) }

// restartDriverWith is restartDriver that runs between (when set) while no driver process runs.
func (t *T) restartDriverWith(between func()) {
	t.drv.KillGroup(t.Deadline)
	for _, w := range t.workers {
		w.stop()
	}
	<-t.drv.Exited()
	if between != nil {
		between()
	}
	d, err := driver.Start(t.run.driver, t.run.Env, "")
	if err != nil {
		t.End(conformance.Fail, "the driver cannot be started again: "+err.Error())
	}
	t.drv = d
	t.Logf("driver: restarted")
	if o := t.call(map[string]any{"op": "hello"}); !o.OK {
		t.Failf("hello answered with ok after the restart"+t.Cite("HDR-010"), string(o.Raw()))
	}
}

// stepCommand sends a step command for the durable tool without waiting.
func (t *T) stepCommand(requestID string, p protocol.ToolPayload) uint64 {
	return t.sendCommand(map[string]any{"op": "step", "request_id": requestID, "tool": durableTool,
		"payload": rawJSON(p.AppendJSON(nil)), "nonce": operationNonce(requestID)})
}

// keyOf returns the key field of an outcome.
func keyOf(o driver.Outcome) string {
	var k struct {
		Key string `json:"key"`
	}
	_ = json.Unmarshal(o.Raw(), &k)
	return k.Key
}

// succeededStep runs one step that the worker w answers succeeded and returns its operation key.
func (t *T) succeededStep(w *fakeWorker, requestID string) string {
	id := t.stepCommand(requestID, jsonPayload(`{"value":1}`))
	req := w.recv(protocol.TypeDispatchOperation).(protocol.DispatchOperationMessage).Request
	w.send(w.operationResult(req, req.OperationKey, protocol.Succeeded(jsonPayload(`{"value":1}`))))
	o := t.await(id)
	if !o.OK || keyOf(o) != req.OperationKey {
		t.Failf(`{"ok":true,"key":"`+req.OperationKey+`",...}: the step's key is the dispatched one`+t.Cite("HDR-041"), string(o.Raw()))
	}
	return req.OperationKey
}

// recoverCommand sends a recover command without waiting.
func (t *T) recoverCommand(requestID string) uint64 {
	return t.sendCommand(map[string]any{"op": "recover", "request_id": requestID})
}
