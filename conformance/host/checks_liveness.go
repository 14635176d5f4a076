package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/worker"
)

// crashStatus is the exit status of a worker that crashed: not the refusal status 5 (WRK-092),
// so a host must reconcile again, never dispatch (WFL-044).
const crashStatus = 1

// realWorker is the worker behind the fake workers of a check that needs a worker's own
// answers and refusals: every session is a session of the reference worker library with the
// conformance profile (impl/worker, impl/profile) over one journal and effect log, so what it
// answers, refuses and exits with is the reference worker's, derived from the same code.
type realWorker struct {
	journal  *journal.Journal
	revision uint64
	effects  *profile.EffectLog
}

func newRealWorker(t *T) *realWorker {
	j, err := journal.New(workerScope)
	if err != nil {
		t.Internal(err)
	}
	return &realWorker{journal: j, effects: profile.NewEffectLog(nil, nil)}
}

// countingPersister stands for the worker's store: every persist succeeds.
type countingPersister struct{}

func (countingPersister) Persist(_ context.Context, _ *journal.Journal, expected uint64, _ worker.Lease) (uint64, error) {
	return expected + 1, nil
}

// realSession is one fake worker whose frames the real worker session answers.
type realSession struct {
	w    *fakeWorker
	real *realWorker
	s    *worker.Session
	last []byte // the worker's last answer line
}

// liveSession starts a worker whose host keeps its ledger in the check's state directory, as
// ledgerSession does, and opens a reference worker session on its open_session frame.
func (t *T) liveSession(rw *realWorker) *realSession {
	m := t.manifest(ledgerGrant())
	id := t.sendCommand(t.startCommand(m, map[string]any{"state": t.stateDir(), "plan": t.plan()}))
	w := t.acceptWorker("the driver starts the given worker command (HDR-020)")
	line, why := w.next(time.Until(t.deadline))
	if line == nil {
		t.Failf("an open_session frame", why)
	}
	w.open(line)
	if o := t.await(id); !o.OK {
		t.Failf("start with a state directory answered with ok (HDR-040)", string(o.Raw()))
	}
	auth, err := w.boot.WorkerAuthenticator(canonjson.Preserve)
	if err != nil {
		t.Internal(err)
	}
	reg := worker.NewRegistry()
	if err := profile.Register(reg, profile.Options{Effects: rw.effects}); err != nil {
		t.Internal(err)
	}
	admit := worker.AdmissionFunc(func(context.Context, protocol.CapabilityManifest, string) (uint64, error) { return 1, nil })
	s, err := worker.Open(context.Background(), auth, line, worker.Config{Journal: rw.journal, Revision: rw.revision, Registry: reg, Admission: admit})
	if err != nil {
		t.Internal(fmt.Errorf("the reference worker refuses the session: %w", err))
	}
	return &realSession{w: w, real: rw, s: s}
}

// durable waits for the host's durable request on the session and returns its line and message.
func (r *realSession) durable(why string) ([]byte, protocol.Message) {
	t := r.w.t
	line, reason := r.w.next(recoverWait)
	if line == nil {
		t.Failf("a durable request: "+why, reason)
	}
	return line, r.w.open(line).Message
}

// answer hands line to the reference worker session. It writes the worker's answer, or, when
// the worker refuses the frame, writes nothing and ends the fake worker with the worker's exit
// status (WRK-091, WRK-092); it returns the refusal.
func (r *realSession) answer(line []byte) error {
	answer, err := r.s.Handle(context.Background(), line, countingPersister{})
	r.real.journal, r.real.revision = r.s.Journal(), r.s.Revision()
	if err != nil {
		code := worker.ExitCode(err)
		r.w.t.Logf("worker %d: the reference worker refuses the frame (%v) and exits %d", r.w.index, err, code)
		r.w.exitAndEnd(code)
		return err
	}
	r.last = bytes.Clone(answer)
	r.w.write(append(bytes.Clone(answer), '\n'))
	return nil
}

// answeredStatus is the status of the worker's last operation_result, in its canonical encoding.
func (r *realSession) answeredStatus() string {
	f, err := protocol.DecodeFrame(r.last, canonjson.Preserve)
	if err != nil {
		r.w.t.Internal(err)
	}
	m, ok := f.Message.(protocol.OperationResultMessage)
	if !ok {
		r.w.t.Internal(fmt.Errorf("the worker answered %s", f.Message.Type()))
	}
	return string(m.Result.Status.AppendJSON(nil))
}

func livenessChecks() []*Check {
	return []*Check{
		{ID: "CNF-HLIVE-01", Level: must, Requirements: []string{"WFL-041", "WFL-043", "WFL-044", "HDR-042", "HDR-055"},
			Needs: []string{FeatureInvoke, FeatureRecover},
			Title: "a step prepared but never delivered settles: the host reconciles first, and only after the worker refuses the unknown key sends the recorded dispatch under the same key, once",
			run: func(t *T) {
				rw := newRealWorker(t)
				payload := jsonPayload(`{"value":1}`)
				// The worker is gone before the host writes the step's dispatch: the write fails
				// and the operation stays prepared in the ledger, never admitted by any worker.
				first := t.liveSession(rw)
				first.w.exitAndEnd(0)
				t.expectError(t.stepCommand("req-1", payload), "the worker exited before the step's dispatch was written")

				// A crash while reconciling is no refusal: the host reconciles again.
				crashed := t.liveSession(rw)
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

				t.renewDeadline()
				refusing := t.liveSession(rw)
				id = t.recoverCommand("rec-2")
				line, m := refusing.durable("the recovery after a crashed reconciliation")
				if again, ok := m.(protocol.ReconcileOperationMessage); !ok || again.Request.OperationKey != key {
					t.Failf(fmt.Sprintf("reconcile_operation of %s again: a worker that exited %d did not refuse it (WFL-044)", key, crashStatus),
						fmt.Sprintf("%s %s", m.Type(), conformance.Clip(string(line), 200)))
				}
				if refusing.answer(line) == nil {
					t.Internal(errors.New("the reference worker answered a reconciliation of a key its journal does not hold; it must refuse it"))
				}
				t.expectError(id, "the worker refused the reconciliation")

				// The refusal survives a restart of the host: the next recover, on a fresh
				// session, sends the recorded dispatch under the same key.
				t.restartDriver()
				t.renewDeadline()
				sending := t.liveSession(rw)
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
				if err := sending.answer(line); err != nil {
					t.Failf("a dispatch the reference worker admits", err.Error())
				}
				if o, want := t.await(id), sending.answeredStatus(); !o.OK || string(o.Status) != want {
					t.Failf(`{"ok":true,"status":`+want+`}: recover answers the dispatched operation's status (HDR-042, HDR-055)`, string(o.Raw()))
				}
				if n := len(rw.effects.Lines()); n != 1 {
					t.Failf("exactly one effect of the operation", fmt.Sprintf("%d effects", n))
				}

				// The operation is settled: recover sends nothing, and steps run again.
				t.renewDeadline()
				settled := t.liveSession(rw)
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
				if err := settled.answer(line); err != nil {
					t.Failf("a dispatch the reference worker admits", err.Error())
				}
				if o := t.await(id); !o.OK || keyOf(o) != next.Request.OperationKey {
					t.Failf("the step after the recovery answered with ok and its key"+t.Cite("HDR-041"), string(o.Raw()))
				}
				if n := len(rw.effects.Lines()); n != 2 {
					t.Failf("one effect per operation", fmt.Sprintf("%d effects", n))
				}
			}},
	}
}
