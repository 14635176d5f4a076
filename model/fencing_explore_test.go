package model_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/worker"
	"github.com/splashv5/conform/impl/worker/workertest"
	"github.com/splashv5/conform/model"
	"pgregory.net/rapid"
)

// fencingBounds are the configurations of the protocol's writer with effect fencing explored
// in CI and, with SPLASH_SOAK=1, the larger ones.
func fencingBounds() []model.Fencing {
	if soak() {
		return []model.Fencing{
			{Workers: 2, Keys: 2, Lives: 2, EffectFencing: true},
			{Workers: 3, Keys: 2, Lives: 1, EffectFencing: true},
			{Workers: 2, Keys: 2, Lives: 2, Retry: true, Timeouts: 1, EffectFencing: true},
		}
	}
	return []model.Fencing{
		{Workers: 2, Keys: 1, Lives: 2, EffectFencing: true},
		{Workers: 2, Keys: 2, Lives: 1, EffectFencing: true},
		{Workers: 2, Keys: 3, Lives: 1, EffectFencing: true},
		{Workers: 3, Keys: 1, Lives: 1, EffectFencing: true},
		{Workers: 2, Keys: 1, Lives: 2, Retry: true, Timeouts: 1, EffectFencing: true},
	}
}

// Every interleaving of two or three worker processes sharing one journal, each admitted with
// a fresh fence, dispatching, reconciling and compensating through every persistence point and
// crashing between any two atomic steps, with an effect system that refuses a superseded
// token: every effect happens at most once and only as the journal says, and no status the
// host was answered is ever contradicted by the journal. The retrying writer, which re-reads
// the record after a conflict or an indeterminate write, is as safe as the protocol's writer.
//
// Spec: WRK-015, WRK-041, WRK-042, WRK-045, WRK-046, WRK-050, WRK-051, WRK-052, WRK-060, WRK-071
// Spec: WRK-073, WRK-083, WRK-091, STO-026, STO-028, STO-072, STO-073, JRN-018, JRN-020
func TestFencingExhaustive(t *testing.T) {
	t.Parallel()
	for _, c := range fencingBounds() {
		reportExploration(t, explore(c.String(), c.System))
	}
}

// unfenced returns the system of c with the store's fence check removed: a persist under a
// superseded lease is decided as if its lease were the current fence.
func unfenced(c model.Fencing) model.System[model.FenceState, model.FenceAction] {
	return broken(c.System(), func(s model.FenceState, mv model.Move[model.FenceState, model.FenceAction]) model.Move[model.FenceState, model.FenceAction] {
		if mv.Action.Kind == model.FencePersist && mv.Action.Outcome == model.FenceRejected {
			forged := s
			forged.Fence = s.W[mv.Action.Worker].Lease
			n, a := c.PersistStep(forged, mv.Action.Worker, false)
			n.Fence = s.Fence
			return model.Move[model.FenceState, model.FenceAction]{Action: a, Next: n}
		}
		return mv
	})
}

// Fencing is what keeps a superseded writer out once the revision no longer orders writers:
// with the store's fence check removed, a writer that re-reads the record and retries breaks
// a protocol property (an answer the journal contradicts, or an effect twice), and the
// explorer prints the trace. The protocol's own writer, which never retries, stays safe
// without the check, because its revision check already refuses the same writes.
//
// Spec: WRK-083, STO-028, WRK-071
func TestFencingIsNeeded(t *testing.T) {
	t.Parallel()
	retrying := model.Fencing{Workers: 2, Keys: 1, Lives: 2, Retry: true, Timeouts: 1, EffectFencing: true}
	r := model.Explore(unfenced(retrying))
	if r.Violation == nil {
		t.Fatalf("without the fence the retrying writer stayed safe: %s", r.Summary())
	}
	if r.Violation.Invariant == model.InvLeases {
		t.Fatalf("caught only by the lease invariant, not by a protocol property:\n%s", r.Violation)
	}
	t.Logf("caught as expected:\n%s", r.Violation)
	cas := model.Fencing{Workers: 2, Keys: 1, Lives: 2, EffectFencing: true}
	reportExploration(t, model.Explore(unfenced(cas)))
}

// Effect fencing closes the gap journal fencing leaves open: without it a superseded worker's
// adapter acts after a newer worker reconciled the operation as failed, and the explorer
// prints that trace; with it (the exhaustive test) a durable failure never has an effect.
//
// Spec: STO-072, STO-073
func TestEffectFencingIsNeeded(t *testing.T) {
	t.Parallel()
	r := model.Explore(model.Fencing{Workers: 2, Keys: 1, Lives: 2}.System())
	expectCaught(t, r, model.InvFailureNoEffect)
}

// Negative controls: a session that answers after a failed write, and a session that runs the
// adapter again for a pending duplicate, are each caught with a counterexample trace.
//
// Spec: WRK-041, WRK-046
func TestFencingNegativeControls(t *testing.T) {
	c := model.Fencing{Workers: 2, Keys: 1, Lives: 2, EffectFencing: true}
	t.Run("answer after a failed write", func(t *testing.T) {
		r := model.Explore(broken(c.System(), func(s model.FenceState, mv model.Move[model.FenceState, model.FenceAction]) model.Move[model.FenceState, model.FenceAction] {
			w := s.W[mv.Action.Worker]
			if mv.Action.Kind == model.FencePersist && w.Phase == model.FencePersist2 && mv.Action.Outcome != model.FenceOK {
				mv.Next.W[mv.Action.Worker] = w
				mv.Next.W[mv.Action.Worker].Phase = model.FenceAnswer
			}
			return mv
		}))
		expectCaught(t, r, model.InvAnswers)
	})
	t.Run("pending duplicate runs the adapter again", func(t *testing.T) {
		r := model.Explore(broken(c.System(), func(s model.FenceState, mv model.Move[model.FenceState, model.FenceAction]) model.Move[model.FenceState, model.FenceAction] {
			if mv.Action.Kind == model.FenceDispatch && mv.Action.Outcome == model.FencePendingOp {
				n := s
				n.W[mv.Action.Worker].Key = uint8(mv.Action.Key)
				n.W[mv.Action.Worker].Flow = model.FlowDispatch
				n.W[mv.Action.Worker].Phase = model.FenceEffect
				mv.Action.Outcome, mv.Next = model.FenceOK, n
			}
			return mv
		}))
		expectCaught(t, r, model.InvOneEffect)
	})
}

const (
	fenceTool  = "conf.fenced.record"
	fenceScope = "tenant-f"
)

// fenceGrant is the grant of every replayed session: enough calls and compensations for any
// trace.
var fenceGrant = workertest.Grant(fenceTool, protocol.FormatJSON, 64, 16)

// fenceGate is one blocking point of a running flow: the flow waits on resume, the replay
// decides whether the step happens or the process crashes there.
type fenceGate struct {
	point  string // "persist", "effect" or "undo"
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

// fenceWorld is the effect system the adapters act on. It outlives every process. With
// fencing it keeps, per operation key, the highest fencing token it was shown, by an effect or
// by a reconciliation's read, and refuses a lower one (STO-072, STO-073).
type fenceWorld struct {
	fenced  bool
	effects map[string]int
	undos   map[string]int
	sink    map[string]uint64
}

var errSuperseded = errors.New("effect system: a newer writer was seen for this operation key")

// show records token for key and reports whether the effect system accepts it.
func (w *fenceWorld) show(key string, token uint64) bool {
	if !w.fenced {
		return true
	}
	if token < w.sink[key] {
		return false
	}
	w.sink[key] = token
	return true
}

// fenceAdapter is a durable adapter whose effects are steps of the replay. It passes its
// session's fencing token and the operation key to the effect system with every call, as
// docs/adapters.md asks of every adapter.
type fenceAdapter struct {
	worker.Unimplemented
	world *fenceWorld
	flow  **fenceFlow
	token *uint64
}

func (*fenceAdapter) DurableContract() worker.DurableContract { return worker.Reconciliation }

// gate blocks at point until the replay resumes the flow; it reports a crash.
func (a *fenceAdapter) gate(point string) bool {
	resume := make(chan bool)
	(*a.flow).gates <- fenceGate{point: point, resume: resume}
	return <-resume
}

// act performs one effect at point, counted in count, once the effect system accepts the
// session's token for key.
func (a *fenceAdapter) act(point, key string, count map[string]int, value string) (protocol.OperationStatus, error) {
	if a.gate(point) {
		return protocol.OperationStatus{}, errors.New("the process crashed")
	}
	if !a.world.show(key, *a.token) {
		return protocol.OperationStatus{}, errSuperseded
	}
	count[key]++
	return protocol.Succeeded(workertest.JSON(value)), nil
}

func (a *fenceAdapter) DispatchOperation(req protocol.OperationDispatchRequest, _ protocol.CapabilityGrant) (protocol.OperationStatus, error) {
	return a.act("effect", req.OperationKey, a.world.effects, `{"done":true}`)
}

func (a *fenceAdapter) CompensateOperation(req protocol.OperationCompensationRequest, _ protocol.CapabilityGrant) (protocol.OperationStatus, error) {
	return a.act("undo", req.OperationKey, a.world.undos, `{"undone":true}`)
}

func (a *fenceAdapter) ReconcileOperation(req protocol.OperationReconcileRequest, _ protocol.CapabilityGrant) (protocol.OperationStatus, error) {
	if a.world.fenced && a.world.sink[req.OperationKey] < *a.token {
		a.world.sink[req.OperationKey] = *a.token
	}
	if a.world.effects[req.OperationKey] > 0 {
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
	token   uint64
	flow    *fenceFlow
	gate    *fenceGate
	answer  string // an answer the session produced and the process has not sent yet
	seq     int
}

// fenceReplay drives the real journal store, admission and worker sessions along a trace.
type fenceReplay struct {
	t     *testing.T
	c     model.Fencing
	store *storage.AuthenticatedStore
	js    *worker.StorageJournalStore
	admit *worker.StoreAdmission
	world *fenceWorld
	slots []*fenceSlot
	lives int
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
	world := &fenceWorld{fenced: c.EffectFencing, effects: map[string]int{}, undos: map[string]int{}, sink: map[string]uint64{}}
	r := &fenceReplay{t: t, c: c, store: store, js: js, admit: admit, world: world}
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

// fenceErrors names the implementation's errors in the model's vocabulary.
var fenceErrors = []struct {
	err  error
	name string
}{
	{storage.ErrFencingTokenRejected, model.FenceRejected},
	{storage.ErrWriteConflict, model.FenceConflict},
	{worker.ErrPendingOperation, model.FencePendingOp},
	{worker.ErrPendingCompensation, model.FencePendingComp},
	{worker.ErrProtocol, model.FenceProtocol},
	{worker.ErrAdapter, model.FenceRefused},
}

// outcome names an answer in the model's vocabulary.
func (r *fenceReplay) outcome(s *fenceSlot, a *fenceAnswer) string {
	if a.err != nil {
		for _, e := range fenceErrors {
			if errors.Is(a.err, e.err) {
				if e.name == model.FenceRefused && !errors.Is(a.err, errSuperseded) {
					break
				}
				return e.name
			}
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
	case protocol.CompensationResultMessage:
		if m.Result.Status.State == protocol.StateSucceeded {
			return model.FenceAnsCompensate
		}
	}
	return "unexpected answer " + workertest.Describe(m)
}

// gatePoints names the gate a flow waits at in each model phase.
var gatePoints = map[uint8]string{
	model.FencePersist1: "persist", model.FencePersist2: "persist", model.FencePersistR: "persist",
	model.FencePersistC1: "persist", model.FencePersistC2: "persist", model.FenceEffect: "effect", model.FenceUndo: "undo",
}

// step applies one model action and returns the implementation's outcome; to is the model's
// state after it.
func (r *fenceReplay) step(a model.FenceAction, to model.FenceState) string {
	s := r.slots[a.Worker]
	ctx := context.Background()
	key := "k" + strconv.Itoa(a.Key)
	// finish names the end of a flow's step: a gate the model expects, or the answer.
	finish := func(point string, ans *fenceAnswer) string {
		if ans == nil {
			if want := gatePoints[to.W[a.Worker].Phase]; point != want {
				return fmt.Sprintf("stopped at %s, model at %q", point, want)
			}
			return model.FenceOK
		}
		out := r.outcome(s, ans)
		if model.FenceAction(model.FenceAction{Outcome: out}).Answer() == model.FenceAbsent {
			r.crash(s) // the error ends the process (WRK-091)
		}
		return out
	}
	switch a.Kind {
	case model.FenceStart:
		j, rev, err := r.js.Load(ctx)
		if err != nil {
			return "load: " + err.Error()
		}
		s.loaded, s.rev = j, rev
		return model.FenceOK
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
		if err := reg.Register(fenceTool, &fenceAdapter{world: r.world, flow: &s.flow, token: &s.token}); err != nil {
			r.t.Fatal(err)
		}
		session, err := worker.Open(ctx, auth, host.Seal(host.OpenSession(fenceGrant)),
			worker.Config{Journal: s.loaded, Revision: s.rev, Registry: reg, Admission: r.admit})
		if err != nil {
			return "open: " + err.Error()
		}
		s.host, s.session, s.token = host, session, session.Lease().Token()
		return model.FenceOK
	case model.FenceCrash:
		r.crash(s)
		return model.FenceOK
	case model.FenceDispatch, model.FenceReconcile, model.FenceCompensate:
		s.seq++
		id := "r" + strconv.Itoa(s.seq)
		var msg protocol.Message
		switch a.Kind {
		case model.FenceDispatch:
			msg = s.host.Dispatch(id, fenceTool, key, workertest.JSON(`{"n":1}`))
		case model.FenceReconcile:
			msg = s.host.Reconcile(id, fenceTool, key)
		default:
			msg = s.host.Compensate(id, fenceTool, key, "cmp-"+key, fenceScope, fenceGrant, workertest.JSON(`{"undo":1}`))
		}
		return finish(r.handle(s, msg))
	case model.FencePersist, model.FenceRunEffect, model.FenceRunUndo:
		want := map[string]string{model.FencePersist: "persist", model.FenceRunEffect: "effect", model.FenceRunUndo: "undo"}[a.Kind]
		if s.gate == nil || s.gate.point != want {
			return fmt.Sprintf("no flow waits at %s", want)
		}
		s.gate.resume <- false
		point, ans := r.await(s)
		if ans != nil && to.W[a.Worker].Phase == model.FenceAnswer {
			s.answer = r.outcome(s, ans) // sent by the next step, unless the process crashes first
			return model.FenceOK
		}
		return finish(point, ans)
	case model.FenceSend:
		out := s.answer
		s.answer = ""
		return out
	}
	return "unknown action"
}

// recordStates maps the implementation's record to the model's record state.
func recordState(rec journal.Record) uint8 {
	if rec.Compensation != nil {
		if rec.Compensation.State.State == protocol.StateSucceeded {
			return model.FenceCompensated
		}
		return model.FenceCompPending
	}
	return map[protocol.WorkerOperationStateKind]uint8{protocol.StatePending: model.FencePending,
		protocol.StateSucceeded: model.FenceSucceeded, protocol.StateFailed: model.FenceFailed}[rec.State.State]
}

// compare checks the store, the fence, the effect system and the leases against a model state.
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
		got.J[k] = recordState(rec)
	}
	for k := 0; k < r.c.Keys; k++ {
		key := "k" + strconv.Itoa(k)
		got.Effects[k], got.Undos[k], got.Sink[k] = uint8(r.world.effects[key]), uint8(r.world.undos[key]), uint8(r.world.sink[key])
	}
	if got.Rev != want.Rev || got.Fence != want.Fence || got.J != want.J || got.Effects != want.Effects || got.Undos != want.Undos || got.Sink != want.Sink {
		return fmt.Sprintf("store rev %d fence %d journal %v effects %v undos %v sink %v", got.Rev, got.Fence, got.J, got.Effects, got.Undos, got.Sink)
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
	walk(t, c.System(), trace, model.FenceAction.Input, func(a model.FenceAction, _, to model.FenceState) {
		if got := r.step(a, to); got != a.Outcome {
			t.Fatalf("%v: implementation outcome %q", a, got)
		}
		if d := r.compare(to); d != "" {
			t.Fatalf("%v: implementation %s, model %s", a, d, c.Describe(to))
		}
	})
}

// withoutInvariant returns sys without the named invariant, to explore and replay a
// configuration known to break it.
func withoutInvariant[S, A any](sys model.System[S, A], name string) model.System[S, A] {
	var keep []model.Invariant[S, A]
	for _, inv := range sys.Invariants {
		if inv.Name != name {
			keep = append(keep, inv)
		}
	}
	sys.Invariants = keep
	return sys
}

// The real journal store, fenced admission, worker sessions and an adapter that passes its
// fencing token to the effect system follow the model: one trace per pair of transition kinds
// of five small bounds in CI; under SPLASH_SOAK=1 every explored transition of them, and one
// trace per pair of the larger soak bounds. One bound uses an effect system without fencing,
// where a durable failure can meet a late effect, so that a reconciliation meets a terminal
// record the adapter contradicts.
//
// Spec: WRK-041, WRK-042, WRK-046, WRK-051, WRK-052, WRK-060, WRK-082, WRK-083, WRK-094
// Spec: STO-026, STO-028, STO-072, STO-073, JRN-018
func TestFencingReplay(t *testing.T) {
	t.Parallel()
	runs := []model.Fencing{
		{Workers: 2, Keys: 1, Lives: 1, EffectFencing: true},
		{Workers: 2, Keys: 1, Lives: 2},
		{Workers: 2, Keys: 1, Lives: 2, EffectFencing: true},
		{Workers: 2, Keys: 2, Lives: 1, EffectFencing: true},
		{Workers: 3, Keys: 1, Lives: 1, EffectFencing: true},
	}
	// Under SPLASH_SOAK=1 the larger bounds of the protocol's writer are replayed too, one trace
	// per transition pair: their every transition would be millions of traces.
	var pairsOnly []model.Fencing
	if soak() {
		for _, c := range fencingBounds() {
			if !c.Retry {
				pairsOnly = append(pairsOnly, c)
			}
		}
	}
	for k, c := range append(runs, pairsOnly...) {
		sys := func() model.System[model.FenceState, model.FenceAction] {
			return withoutInvariant(c.System(), model.InvFailureNoEffect)
		}
		r := explore(c.String()+" replay", sys)
		traces := replayed(r, fenceLabel, 0)
		if k >= len(runs) {
			traces = r.PairTraces(fenceLabel)
		}
		replayEach(t, traces, func(t *testing.T, tr []model.FenceAction) { replayFencing(t, c, tr) })
		t.Logf("%s: replayed %d traces", r.Summary(), len(traces))
	}
}

// fenceLabel names a fencing transition's kind: its action and outcome, whatever the worker
// and key.
func fenceLabel(a model.FenceAction) string { return a.Kind + " -> " + a.Outcome }

// permutations returns every permutation of 0..n-1.
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := append(append(append([]int{}, p[:i]...), n-1), p[i:]...)
			out = append(out, q)
		}
	}
	return out
}

// renamed is s with slot i moved to slot slots[i] and key k renamed keys[k]: the renaming the
// fencing model's symmetry reduction claims changes nothing. It is written here, apart from
// the model's Key, so that the test does not trust the code it checks.
func renamed(c model.Fencing, s model.FenceState, slots, keys []int) model.FenceState {
	perKey := func(a [model.FenceMaxKeys]uint8) [model.FenceMaxKeys]uint8 {
		var out [model.FenceMaxKeys]uint8
		for k := 0; k < c.Keys; k++ {
			out[keys[k]] = a[k]
		}
		return out
	}
	n := s
	n.J, n.Effects, n.Undos, n.Sink, n.Answered = perKey(s.J), perKey(s.Effects), perKey(s.Undos), perKey(s.Sink), perKey(s.Answered)
	for i := 0; i < c.Workers; i++ {
		w := s.W[i]
		if w.Key != model.FenceNoKey {
			w.Key = uint8(keys[w.Key])
		}
		w.J = perKey(w.J)
		n.W[slots[i]] = w
	}
	return n
}

// fullEncoding encodes every field of s, unused slots and keys included.
func fullEncoding(s model.FenceState) string {
	b := make([]byte, 0, 64)
	b = append(b, s.Rev, s.Fence, s.Timeouts)
	for _, a := range [][model.FenceMaxKeys]uint8{s.J, s.Effects, s.Undos, s.Sink, s.Answered} {
		b = append(b, a[:]...)
	}
	for _, w := range s.W {
		b = append(b, w.Phase, w.Lives, w.Lease, w.Rev, w.Key, w.Flow, w.Recs)
		b = append(b, w.J[:]...)
	}
	return string(b)
}

// orbit is the least full encoding of s over every renaming of slots and keys: two states
// share it exactly when one is a renaming of the other.
func orbit(c model.Fencing, s model.FenceState) string {
	best := ""
	for _, slots := range permutations(c.Workers) {
		for _, keys := range permutations(c.Keys) {
			if e := fullEncoding(renamed(c, s, slots, keys)); best == "" || e < best {
				best = e
			}
		}
	}
	return best
}

// classes explores sys and returns, for every explored state, its orbit and the model's key.
func classes(sys model.System[model.FenceState, model.FenceAction], c model.Fencing) (*model.Exploration[model.FenceState, model.FenceAction], map[string]map[string]bool) {
	var mu sync.Mutex
	keys := map[string]map[string]bool{} // orbit -> the model's keys of its explored states
	sys.Invariants = append(sys.Invariants, model.Invariant[model.FenceState, model.FenceAction]{
		Name: "record the class",
		State: func(s model.FenceState) bool {
			o, k := orbit(c, s), c.Key(s)
			mu.Lock()
			defer mu.Unlock()
			if keys[o] == nil {
				keys[o] = map[string]bool{}
			}
			keys[o][k] = true
			return true
		},
	})
	return model.Explore(sys), keys
}

// The fencing model's symmetry reduction is sound at small bounds: explored with its full state
// as the key (no reduction), the states fall into classes of renamings of slots and keys; the
// model's key gives every state of a class the same key and states of different classes
// different keys; and the reduced exploration reaches exactly those classes, one state each.
// A key that leaves out part of the state merges classes and one that does not rename a part
// splits them; both change the counts compared here.
//
// Spec: WRK-042, WRK-052, STO-072
func TestFencingSymmetrySound(t *testing.T) {
	t.Parallel()
	for _, c := range []model.Fencing{
		{Workers: 2, Keys: 2, Lives: 1, EffectFencing: true},
		{Workers: 3, Keys: 1, Lives: 1, EffectFencing: true},
	} {
		full := c.System()
		full.Key = fullEncoding
		fr, fullClasses := classes(full, c)
		reportExploration(t, fr)
		owner := map[string]string{} // the model's key -> its class
		split, merged := 0, 0
		for o, ks := range fullClasses {
			if len(ks) != 1 {
				if split++; split == 1 {
					t.Errorf("%s: the model gives %d keys to renamings of one state %v; the key must be invariant under renaming slots and keys", c, len(ks), []byte(o))
				}
			}
			for k := range ks {
				if prev, ok := owner[k]; ok && prev != o {
					if merged++; merged == 1 {
						t.Errorf("%s: the model gives one key to states that are not renamings of each other; the key must encode every field:\n  %v\n  %v", c, []byte(prev), []byte(o))
					}
				}
				owner[k] = o
			}
		}
		if split+merged > 0 {
			t.Errorf("%s: %d classes have more than one key, %d keys are shared by two classes", c, split, merged)
		}
		rr, reduced := classes(c.System(), c)
		reportExploration(t, rr)
		if rr.States != len(fullClasses) || len(reduced) != len(fullClasses) {
			t.Errorf("%s: the reduced exploration has %d states in %d classes, the full one %d states in %d classes; they must be the same classes, one state each",
				c, rr.States, len(reduced), fr.States, len(fullClasses))
		}
		for o := range fullClasses {
			if reduced[o] == nil {
				t.Errorf("%s: the reduced exploration misses the class of %v", c, []byte(o))
				break
			}
		}
		t.Logf("%s: %d full states in %d classes, %d reduced states", c, fr.States, len(fullClasses), rr.States)
	}
}

// fenceStateGen draws a state of c with every field in a small range (not necessarily
// reachable): the key's symmetry must hold for any state.
func fenceStateGen(t *rapid.T, c model.Fencing) model.FenceState {
	small := func(label string, hi int) uint8 { return uint8(rapid.IntRange(0, hi).Draw(t, label)) }
	perKey := func(label string, hi int) (a [model.FenceMaxKeys]uint8) {
		for k := 0; k < c.Keys; k++ {
			a[k] = small(label, hi)
		}
		return a
	}
	s := model.FenceState{Rev: small("rev", 4), Fence: small("fence", 4), Timeouts: small("timeouts", 1)}
	s.J, s.Effects, s.Undos, s.Sink, s.Answered = perKey("j", 5), perKey("effects", 2), perKey("undos", 2), perKey("sink", 3), perKey("answered", 63)
	for i := 0; i < c.Workers; i++ {
		s.W[i] = model.FenceWorker{Phase: small("phase", 8), Lives: small("lives", 2), Lease: small("lease", 4), Rev: small("wrev", 4),
			Key: uint8(rapid.SampledFrom(append(rapid.Permutation([]int{0, 1, 2}[:c.Keys]).Draw(t, "keyOrder"), int(model.FenceNoKey))).Draw(t, "key")), Flow: small("flow", 3), Recs: small("recs", 2), J: perKey("wj", 5)}
	}
	return s
}

// perturbed is s with one field, drawn, set to another value.
func perturbed(t *rapid.T, c model.Fencing, s model.FenceState) model.FenceState {
	k := rapid.IntRange(0, c.Keys-1).Draw(t, "pkey")
	i := rapid.IntRange(0, c.Workers-1).Draw(t, "pslot")
	w := &s.W[i]
	bump := func(p *uint8) { *p++ }
	fields := []func(){
		func() { bump(&s.Rev) }, func() { bump(&s.Fence) }, func() { bump(&s.Timeouts) },
		func() { bump(&s.J[k]) }, func() { bump(&s.Effects[k]) }, func() { bump(&s.Undos[k]) },
		func() { bump(&s.Sink[k]) }, func() { bump(&s.Answered[k]) },
		func() { bump(&w.Phase) }, func() { bump(&w.Lives) }, func() { bump(&w.Lease) }, func() { bump(&w.Rev) },
		func() { // the next of the keys and FenceNoKey
			if w.Key == model.FenceNoKey {
				w.Key = 0
			} else if w.Key++; int(w.Key) == c.Keys {
				w.Key = model.FenceNoKey
			}
		}, func() { bump(&w.Flow) }, func() { bump(&w.Recs) },
		func() { bump(&w.J[k]) },
	}
	fields[rapid.IntRange(0, len(fields)-1).Draw(t, "field")]()
	return s
}

// The fencing model's key is invariant under renaming slots and keys, and separates a state
// from a renaming of it with any one field changed, unless the change yields a renaming again.
//
// Spec: WRK-042, WRK-052, STO-072
func TestFencingKeySymmetry(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		c := model.Fencing{Workers: rapid.IntRange(1, model.FenceMaxWorkers).Draw(t, "workers"), Keys: rapid.IntRange(1, model.FenceMaxKeys).Draw(t, "keys"), Lives: 1}
		s := fenceStateGen(t, c)
		slots := rapid.SampledFrom(permutations(c.Workers)).Draw(t, "slots")
		keys := rapid.SampledFrom(permutations(c.Keys)).Draw(t, "keys")
		r := renamed(c, s, slots, keys)
		if c.Key(s) != c.Key(r) {
			t.Fatalf("%s: a renaming (slots %v, keys %v) changes the key:\n  %v\n  %v", c, slots, keys, s, r)
		}
		p := perturbed(t, c, r)
		if same, renaming := c.Key(s) == c.Key(p), orbit(c, s) == orbit(c, p); same != renaming {
			t.Fatalf("%s: key equal %t, but renaming of each other %t:\n  %v\n  %v", c, same, renaming, s, p)
		}
	})
}
