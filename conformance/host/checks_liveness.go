package host

import (
	"errors"
	"fmt"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/impl/protocol"
)

// crashStatus is the exit status of a worker that crashed: not the refusal status 5 (WRK-092),
// so a host must reconcile again, never dispatch (WFL-044).
const crashStatus = 1

// rejectedStatus is the exit status of a worker that rejected a frame (WRK-092): the status a
// refused reconciliation ends with (WFL-043).
const rejectedStatus = 5

// journalWorker plays one worker journal across the sessions of a check, with the rules a worker
// follows toward a host (JRN-013, JRN-017, WRK-041, WRK-060): a dispatch of a new key is admitted
// and performs one effect, answered succeeded with its input; an exact repeat is answered from
// the record without an effect, and a repeat with another tool or input is refused; a
// reconciliation of a key the journal holds answers its status, and of a key it does not hold is
// refused: no answer, and the worker exits with status 5. The frames themselves are opened and
// judged by the fake worker, with the wire core's worker rules.
type journalWorker struct {
	records map[string]journalRecord
	effects int
}

type journalRecord struct {
	tool   string
	input  string
	status protocol.OperationStatus
}

// liveSession is one fake worker of a check whose sessions share a journalWorker.
type liveSession struct {
	w    *fakeWorker
	j    *journalWorker
	last protocol.OperationStatus // the status of the worker's last answer
}

// liveSession starts a worker whose host keeps its ledger in the check's state directory, as
// ledgerSession does.
func (t *T) liveSession(j *journalWorker) *liveSession {
	return &liveSession{w: t.ledgerSession(), j: j}
}

// durable waits for the host's durable request on the session and returns its line and message.
func (r *liveSession) durable(why string) ([]byte, protocol.Message) {
	t := r.w.t
	line, reason := r.w.next(recoverWait)
	if line == nil {
		t.Failf("a durable request: "+why, reason)
	}
	return line, r.w.open(line).Message
}

// answer answers the durable request m as the journal's rules say. A refusal writes nothing,
// ends the fake worker with status 5 (WRK-091, WRK-092) and is returned.
func (r *liveSession) answer(m protocol.Message) error {
	refuse := func(err error) error {
		r.w.t.Logf("worker %d: the journal refuses the request (%v) and exits %d", r.w.index, err, rejectedStatus)
		r.w.exitAndEnd(rejectedStatus)
		return err
	}
	switch m := m.(type) {
	case protocol.DispatchOperationMessage:
		req := m.Request
		input := string(req.Payload.AppendJSON(nil))
		rec, held := r.j.records[req.OperationKey]
		switch {
		case held && (rec.tool != req.Tool || rec.input != input):
			return refuse(fmt.Errorf("%s is held with another tool or input", req.OperationKey))
		case !held:
			rec = journalRecord{tool: req.Tool, input: input, status: protocol.Succeeded(req.Payload)}
			r.j.records[req.OperationKey] = rec
			r.j.effects++
		}
		r.last = rec.status
		r.w.send(r.w.operationResult(req, req.OperationKey, rec.status))
	case protocol.ReconcileOperationMessage:
		req := m.Request
		rec, held := r.j.records[req.OperationKey]
		if !held || rec.tool != req.Tool {
			return refuse(fmt.Errorf("UnknownOperation: no operation with key %s", req.OperationKey))
		}
		r.last = rec.status
		r.w.send(r.w.reconciled(req, rec.status))
	default:
		r.w.t.Internal(fmt.Errorf("the journal answers durable requests, not %s", m.Type()))
	}
	return nil
}

func livenessChecks() []*Check {
	return []*Check{
		{ID: "CNF-HLIVE-01", Level: must, Requirements: []string{"WFL-041", "WFL-043", "WFL-044", "HDR-042", "HDR-055"},
			Features: []string{FeatureInvoke, FeatureRecover},
			Title:    "a step prepared but never delivered settles: the host reconciles first, and only after the worker refuses the unknown key sends the recorded dispatch under the same key, once",
			Run: func(t *T) {
				j := &journalWorker{records: map[string]journalRecord{}}
				payload := jsonPayload(`{"value":1}`)
				// The worker is gone before the host writes the step's dispatch: the write fails
				// and the operation stays prepared in the ledger, never admitted by any worker.
				first := t.liveSession(j)
				first.w.exitAndEnd(0)
				t.expectError(t.stepCommand("req-1", payload), "the worker exited before the step's dispatch was written")

				// A crash while reconciling is no refusal: the host reconciles again.
				crashed := t.liveSession(j)
				id := t.recoverCommand("rec-1")
				_, m := crashed.durable("the recovery of the undelivered step")
				rec, ok := m.(protocol.ReconcileOperationMessage)
				if !ok {
					t.Failf("reconcile_operation first: an operation whose effect is uncertain is reconciled before anything is sent again (WFL-041, WFL-044)", string(m.Type()))
				}
				key := rec.Request.OperationKey
				if rec.Request.Tool != durableTool {
					t.Failf("the reconciliation of a "+durableTool+" operation", rec.Request.Tool)
				}
				crashed.w.exitAndEnd(crashStatus)
				t.expectError(id, "the worker crashed without answering")

				t.RenewDeadline()
				refusing := t.liveSession(j)
				id = t.recoverCommand("rec-2")
				line, m := refusing.durable("the recovery after a crashed reconciliation")
				if again, ok := m.(protocol.ReconcileOperationMessage); !ok || again.Request.OperationKey != key {
					t.Failf(fmt.Sprintf("reconcile_operation of %s again: a worker that exited %d did not refuse it (WFL-044)", key, crashStatus),
						fmt.Sprintf("%s %s", m.Type(), conformance.Clip(string(line), 200)))
				}
				if refusing.answer(m) == nil {
					t.Internal(errors.New("the journal answered a reconciliation of a key it does not hold; it must refuse it"))
				}
				t.expectError(id, "the worker refused the reconciliation")

				// The refusal survives a restart of the host: the next recover, on a fresh
				// session, sends the recorded dispatch under the same key.
				t.restartDriver()
				t.RenewDeadline()
				sending := t.liveSession(j)
				id = t.recoverCommand("rec-3")
				line, m = sending.durable("the recorded dispatch after a refused reconciliation")
				d, ok := m.(protocol.DispatchOperationMessage)
				if !ok {
					t.Failf("dispatch_operation of "+key+": after a refused reconciliation the host sends the recorded dispatch, and the refusal is durable across a restart (WFL-043)",
						fmt.Sprintf("%s %s", m.Type(), conformance.Clip(string(line), 200)))
				}
				if d.Request.OperationKey != key || d.Request.Tool != durableTool || !d.Request.Payload.Equal(payload) {
					t.Failf(fmt.Sprintf("the recorded dispatch: key %s, tool %s, payload %s (WFL-043)", key, durableTool, payload.AppendJSON(nil)),
						fmt.Sprintf("key %s, tool %s, payload %s", d.Request.OperationKey, d.Request.Tool, d.Request.Payload.AppendJSON(nil)))
				}
				if err := sending.answer(m); err != nil {
					t.Failf("a dispatch the worker's journal admits: the recorded key, tool and input", err.Error())
				}
				if o, want := t.await(id), string(sending.last.AppendJSON(nil)); !o.OK || string(o.Status) != want {
					t.Failf(`{"ok":true,"status":`+want+`}: recover answers the dispatched operation's status (HDR-042, HDR-055)`, string(o.Raw()))
				}
				if n := j.effects; n != 1 {
					t.Failf("exactly one effect of the operation", fmt.Sprintf("%d effects", n))
				}

				// The operation is settled: recover sends nothing, and steps run again.
				t.RenewDeadline()
				settled := t.liveSession(j)
				id = t.recoverCommand("rec-4")
				settled.w.expectSilence(150*time.Millisecond, "the redispatched operation is settled in the ledger (WFL-043)")
				if o := t.await(id); !o.OK {
					t.Failf("recover of a settled ledger answered with ok", string(o.Raw()))
				}
				id = t.stepCommand("req-2", jsonPayload(`{"value":2}`))
				line, m = settled.durable("a step after the recovery")
				next, ok := m.(protocol.DispatchOperationMessage)
				if !ok || next.Request.OperationKey == key {
					t.Failf("the next step's dispatch_operation under a key of its own", fmt.Sprintf("%s %s", m.Type(), conformance.Clip(string(line), 200)))
				}
				if err := settled.answer(m); err != nil {
					t.Failf("a dispatch the worker's journal admits", err.Error())
				}
				if o := t.await(id); !o.OK || keyOf(o) != next.Request.OperationKey {
					t.Failf("the step after the recovery answered with ok and its key"+t.Cite("HDR-041"), string(o.Raw()))
				}
				if n := j.effects; n != 2 {
					t.Failf("one effect per operation", fmt.Sprintf("%d effects", n))
				}
			}},
	}
}
