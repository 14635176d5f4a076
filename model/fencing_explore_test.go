package model_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/worker"
	"github.com/splashv5/conform/impl/worker/workertest"
	"github.com/splashv5/conform/model"
)

// fencingBounds are the configurations explored in CI and, with SPLASH_SOAK=1, the larger ones.
func fencingBounds() []model.Fencing {
	if soak() {
		return []model.Fencing{{Workers: 3, Keys: 1, Lives: 2}, {Workers: 2, Keys: 1, Lives: 3}, {Workers: 2, Keys: 2, Lives: 2}}
	}
	return []model.Fencing{{Workers: 2, Keys: 2, Lives: 2}, {Workers: 3, Keys: 1, Lives: 1}}
}

// Every interleaving of two or three worker processes sharing one journal record, each
// admitted with a fresh fence, dispatching and reconciling through every persistence point and
// crashing between any two atomic steps: never two effects for one key, never a write under a
// superseded lease, never a terminal answer that is not durable.
//
// Spec: WRK-015, WRK-041, WRK-042, WRK-045, WRK-046, WRK-060, WRK-071, WRK-073, WRK-083, WRK-091
// Spec: STO-026, STO-028
func TestFencingExhaustive(t *testing.T) {
	t.Parallel()
	for _, c := range fencingBounds() {
		reportExploration(t, model.Explore(c.System()))
	}
}

// Negative controls: a store that ignores the fence, a session that answers after a failed
// write, and a session that runs the adapter again for a pending duplicate are each caught with
// a counterexample trace.
//
// Spec: WRK-041, WRK-046, WRK-083, STO-028
func TestFencingNegativeControls(t *testing.T) {
	c := model.Fencing{Workers: 2, Keys: 1, Lives: 2}
	t.Run("store ignores the fence", func(t *testing.T) {
		r := model.Explore(broken(c.System(), func(s model.FenceState, mv model.Move[model.FenceState, model.FenceAction]) model.Move[model.FenceState, model.FenceAction] {
			if mv.Action.Kind == model.FencePersist && mv.Action.Outcome == "FencingTokenRejected" {
				forged := s
				forged.Fence = s.W[mv.Action.Worker].Lease
				n, a := model.FencePersistStep(forged, mv.Action.Worker)
				n.Fence = s.Fence
				return model.Move[model.FenceState, model.FenceAction]{Action: a, Next: n}
			}
			return mv
		}))
		expectCaught(t, r, "no write under a superseded lease")
	})
	t.Run("answer after a failed write", func(t *testing.T) {
		r := model.Explore(broken(c.System(), func(s model.FenceState, mv model.Move[model.FenceState, model.FenceAction]) model.Move[model.FenceState, model.FenceAction] {
			w := s.W[mv.Action.Worker]
			if mv.Action.Kind == model.FencePersist && w.Phase == model.FencePersist2 && mv.Action.Outcome != "ok" {
				mv.Next.W[mv.Action.Worker] = w
				mv.Next.W[mv.Action.Worker].Phase = model.FenceAnswer
			}
			return mv
		}))
		expectCaught(t, r, "a terminal answer is durable (none after a failed write)")
	})
	t.Run("pending duplicate runs the adapter again", func(t *testing.T) {
		r := model.Explore(broken(c.System(), func(s model.FenceState, mv model.Move[model.FenceState, model.FenceAction]) model.Move[model.FenceState, model.FenceAction] {
			if mv.Action.Kind == model.FenceDispatch && mv.Action.Outcome == "PendingOperation" {
				n := s
				n.W[mv.Action.Worker].Key = uint8(mv.Action.Key)
				n.W[mv.Action.Worker].Phase = model.FenceEffect
				mv.Action.Outcome, mv.Next = "ok", n
			}
			return mv
		}))
		expectCaught(t, r, "at most one effect per operation key")
	})
}

const (
	fenceTool  = "conf.fenced.record"
	fenceScope = "tenant-f"
)

// fenceGate is one blocking point of a running flow: the flow waits on resume, the replay
// decides whether the step happens or the process crashes there.
type fenceGate struct {
	point  string // "persist" or "effect"
	resume chan bool
}

// fenceFlow is a frame being handled by a session on its own goroutine; the replay hands it
// control one step at a time.
type fenceFlow struct {
	gates chan fenceGate
	done  chan fenceAnswer
}

type fenceAnswer struct {
	reply []byte
	err   error
}

// fenceAdapter is a durable adapter whose effect is a step of the replay.
type fenceAdapter struct {
	worker.Unimplemented
	effects map[string]int
	flow    **fenceFlow
}

func (*fenceAdapter) DurableContract() worker.DurableContract { return worker.Reconciliation }

func (a *fenceAdapter) DispatchOperation(req protocol.OperationDispatchRequest, _ protocol.CapabilityGrant) (protocol.OperationStatus, error) {
	resume := make(chan bool)
	(*a.flow).gates <- fenceGate{point: "effect", resume: resume}
	if crash := <-resume; crash {
		return protocol.OperationStatus{}, errors.New("the process crashed")
	}
	a.effects[req.OperationKey]++
	return protocol.Succeeded(workertest.JSON(`{"done":true}`)), nil
}

func (a *fenceAdapter) ReconcileOperation(req protocol.OperationReconcileRequest, _ protocol.CapabilityGrant) (protocol.OperationStatus, error) {
	if a.effects[req.OperationKey] > 0 {
		return protocol.Succeeded(workertest.JSON(`{"done":true}`)), nil
	}
	return protocol.Failed(model.SessionAbsenceMessage), nil
}

// fenceGatedStore blocks every persist at a gate before it reaches the journal store.
type fenceGatedStore struct {
	store *worker.StorageJournalStore
	flow  **fenceFlow
}

func (g fenceGatedStore) Persist(ctx context.Context, j *journal.Journal, expected uint64, lease worker.Lease) (uint64, error) {
	resume := make(chan bool)
	(*g.flow).gates <- fenceGate{point: "persist", resume: resume}
	if crash := <-resume; crash {
		return 0, errors.New("the process crashed")
	}
	return g.store.Persist(ctx, j, expected, lease)
}

// fenceSlot is one worker process of the replay.
type fenceSlot struct {
	loaded  *journal.Journal
	rev     uint64
	host    *workertest.Host
	session *worker.Session
	flow    *fenceFlow
	gate    *fenceGate
	answer  string // an answer the session produced and the process has not sent yet
	seq     int
}

// fenceReplay drives the real journal store, admission and worker sessions along a trace.
type fenceReplay struct {
	t       *testing.T
	c       model.Fencing
	store   *storage.AuthenticatedStore
	js      *worker.StorageJournalStore
	admit   *worker.StoreAdmission
	effects map[string]int
	slots   []*fenceSlot
	lives   int
}

func newFenceReplay(t *testing.T, c model.Fencing) *fenceReplay {
	var raw [storage.KeyBytes]byte
	raw[0] = 7
	ring, err := storage.NewKeyring("fence-v1", storage.NewKey(raw))
	if err != nil {
		t.Fatal(err)
	}
	store := storage.NewAuthenticatedStore(storage.NewMemoryBackend(), ring)
	js, err := worker.NewStorageJournalStore(store, "journal", fenceScope, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	admit, err := worker.NewStoreAdmission(store, js, "admission")
	if err != nil {
		t.Fatal(err)
	}
	r := &fenceReplay{t: t, c: c, store: store, js: js, admit: admit, effects: map[string]int{}}
	for range c.Workers {
		r.slots = append(r.slots, &fenceSlot{})
	}
	return r
}

func (r *fenceReplay) close() {
	for _, s := range r.slots {
		r.crash(s)
	}
}

// crash ends a slot's process, releasing a flow blocked at a gate.
func (r *fenceReplay) crash(s *fenceSlot) {
	if s.gate != nil {
		s.gate.resume <- true
		for {
			select {
			case g := <-s.flow.gates:
				g.resume <- true
				continue
			case <-s.flow.done:
			}
			break
		}
	}
	if s.host != nil {
		s.host.Close()
	}
	*s = fenceSlot{}
}

// await lets the slot's flow run to its next gate or to its answer.
func (r *fenceReplay) await(s *fenceSlot) (string, *fenceAnswer) {
	select {
	case g := <-s.flow.gates:
		s.gate = &g
		return g.point, nil
	case a := <-s.flow.done:
		s.gate, s.flow = nil, nil
		return "", &a
	}
}

func (r *fenceReplay) handle(s *fenceSlot, msg protocol.Message) (string, *fenceAnswer) {
	line := s.host.Seal(msg)
	flow := &fenceFlow{gates: make(chan fenceGate), done: make(chan fenceAnswer, 1)}
	s.flow = flow
	session := s.session
	go func() {
		reply, err := session.Handle(context.Background(), line, fenceGatedStore{store: r.js, flow: &flow})
		flow.done <- fenceAnswer{reply, err}
	}()
	return r.await(s)
}

// outcome names an answer in the model's vocabulary.
func (r *fenceReplay) outcome(s *fenceSlot, a *fenceAnswer) string {
	if a.err != nil {
		for _, k := range []storage.ErrorKind{storage.ErrFencingTokenRejected, storage.ErrWriteConflict} {
			if errors.Is(a.err, k) {
				return k.String()
			}
		}
		if errors.Is(a.err, worker.ErrPendingOperation) {
			return "PendingOperation"
		}
		return "unexpected error: " + a.err.Error()
	}
	m, err := s.host.Open(a.reply)
	if err != nil {
		return "unreadable answer: " + err.Error()
	}
	switch m := m.(type) {
	case protocol.OperationResultMessage:
		return m.Result.Status.State.WireName()
	case protocol.ReconciledOperationMessage:
		return m.Result.Status.State.WireName()
	}
	return "unexpected answer " + workertest.Describe(m)
}

// step applies one model action and returns the implementation's outcome.
func (r *fenceReplay) step(a model.FenceAction) string {
	s := r.slots[a.Worker]
	ctx := context.Background()
	key := "k" + strconv.Itoa(a.Key)
	switch a.Kind {
	case model.FenceStart:
		j, rev, err := r.js.Load(ctx)
		if err != nil {
			return "load: " + err.Error()
		}
		s.loaded, s.rev = j, rev
		return "ok"
	case model.FenceAdmit:
		r.lives++
		host, err := workertest.NewHost("session-" + strconv.Itoa(r.lives))
		if err != nil {
			r.t.Fatal(err)
		}
		auth, err := host.WorkerAuthenticator(canonjson.Preserve)
		if err != nil {
			r.t.Fatal(err)
		}
		reg := worker.NewRegistry()
		if err := reg.Register(fenceTool, &fenceAdapter{effects: r.effects, flow: &s.flow}); err != nil {
			r.t.Fatal(err)
		}
		session, err := worker.Open(ctx, auth, host.Seal(host.OpenSession(workertest.Grant(fenceTool, protocol.FormatJSON, 64, 0))),
			worker.Config{Journal: s.loaded, Revision: s.rev, Registry: reg, Admission: r.admit})
		if err != nil {
			return "open: " + err.Error()
		}
		s.host, s.session = host, session
		return "ok"
	case model.FenceCrash:
		r.crash(s)
		return "ok"
	case model.FenceDispatch, model.FenceReconcile:
		s.seq++
		id := "r" + strconv.Itoa(s.seq)
		msg := s.host.Dispatch(id, fenceTool, key, workertest.JSON(`{"n":1}`))
		if a.Kind == model.FenceReconcile {
			msg = s.host.Reconcile(id, fenceTool, key)
		}
		point, ans := r.handle(s, msg)
		if ans == nil {
			if point != "persist" {
				return "stopped at " + point
			}
			return "ok"
		}
		out := r.outcome(s, ans)
		if out != "succeeded" && out != "failed" {
			r.crash(s) // the error ends the process (WRK-091)
		}
		return out
	case model.FencePersist, model.FenceRunEffect:
		want := map[string]string{model.FencePersist: "persist", model.FenceRunEffect: "effect"}[a.Kind]
		if s.gate == nil || s.gate.point != want {
			return fmt.Sprintf("no flow waits at %s", want)
		}
		s.gate.resume <- false
		point, ans := r.await(s)
		if ans == nil {
			if a.Kind == model.FenceRunEffect && point == "persist" || a.Kind == model.FencePersist && point == "effect" {
				return "ok"
			}
			return "stopped at " + point
		}
		out := r.outcome(s, ans)
		if out != "succeeded" && out != "failed" {
			r.crash(s)
			return out
		}
		s.answer = out // sent by the next step, unless the process crashes first
		return "ok"
	case model.FenceSend:
		out := s.answer
		s.answer = ""
		return out
	}
	return "unknown action"
}

// compare checks the store, the fence, the effects and the leases against a model state.
func (r *fenceReplay) compare(want model.FenceState) string {
	ctx := context.Background()
	j, rev, err := r.js.Load(ctx)
	if err != nil {
		return err.Error()
	}
	fence, err := r.js.CurrentFence(ctx)
	if err != nil {
		return err.Error()
	}
	got := model.FenceState{Rev: uint8(rev), Fence: uint8(fence)}
	for _, rec := range j.Records() {
		k, _ := strconv.Atoi(rec.OperationKey[1:])
		got.J[k] = map[protocol.WorkerOperationStateKind]uint8{protocol.StatePending: model.FencePending,
			protocol.StateSucceeded: model.FenceSucceeded, protocol.StateFailed: model.FenceFailed}[rec.State.State]
	}
	for k := 0; k < r.c.Keys; k++ {
		got.Effects[k] = uint8(r.effects["k"+strconv.Itoa(k)])
	}
	if got.Rev != want.Rev || got.Fence != want.Fence || got.J != want.J || got.Effects != want.Effects {
		return fmt.Sprintf("store rev %d fence %d journal %v effects %v", got.Rev, got.Fence, got.J, got.Effects)
	}
	for i, s := range r.slots {
		if s.session != nil && uint8(s.session.Lease().Token()) != want.W[i].Lease {
			return fmt.Sprintf("w%d lease %d", i, s.session.Lease().Token())
		}
	}
	return ""
}

// replayFencing runs a trace against the implementation, checking every outcome and state.
func replayFencing(t *testing.T, c model.Fencing, trace []model.FenceAction) {
	r := newFenceReplay(t, c)
	defer r.close()
	walk(t, c.System(), trace, model.FenceAction.String, func(a model.FenceAction, _, to model.FenceState) {
		if got := r.step(a); got != a.Outcome {
			t.Fatalf("%v: implementation outcome %q", a, got)
		}
		if d := r.compare(to); d != "" {
			t.Fatalf("%v: implementation %s, model %s", a, d, c.Describe(to))
		}
	})
}

// The real journal store, fenced admission and worker sessions follow the model along every
// explored transition of a small bound and a deterministic sample of a larger one (every
// transition of the larger one under SPLASH_SOAK=1).
//
// Spec: WRK-041, WRK-042, WRK-046, WRK-082, WRK-083, WRK-094, STO-026, STO-028
func TestFencingReplay(t *testing.T) {
	t.Parallel()
	runs := []struct {
		c     model.Fencing
		limit int
	}{{model.Fencing{Workers: 2, Keys: 1, Lives: 1}, 0}, {model.Fencing{Workers: 2, Keys: 1, Lives: 2}, 400}}
	if soak() {
		runs[1].limit = 0
	}
	for _, run := range runs {
		r := model.Explore(run.c.System())
		traces := r.EdgeTraces(run.limit)
		replayEach(t, traces, func(t *testing.T, tr []model.FenceAction) { replayFencing(t, run.c, tr) })
		t.Logf("%s: replayed %d traces", r.Summary(), len(traces))
	}
}
