package model_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/ledger"
	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/worker"
	"github.com/splashv5/conform/impl/workflow"
	"github.com/splashv5/conform/model"
	"pgregory.net/rapid"
)

const (
	wfTool   = profile.ToolDurableRecord
	wfTenant = "tenant-a"
)

var wfPlan = ledger.Plan{Fingerprint: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", Steps: []string{"a", "b", "c"}}

// wfStore fails the next write when fail is set.
type wfStore struct {
	*ledger.Store
	fail bool
}

func (s *wfStore) Persist(ctx context.Context, l *ledger.Ledger, expected, fence uint64) (uint64, error) {
	if s.fail {
		s.fail = false
		return 0, errors.New("injected write failure")
	}
	return s.Store.Persist(ctx, l, expected, fence)
}

// wfVerifiers is a switchable grant verifier and an action verifier that allows everything.
type wfVerifiers struct{ revoked bool }

func (v *wfVerifiers) VerifyCompensationGrant(string, protocol.CapabilityGrant) error {
	if v.revoked {
		return errors.New("revoked")
	}
	return nil
}

func (v *wfVerifiers) VerifyCompensationAction(workflow.Action) error { return nil }

func wfGrant() protocol.CapabilityGrant {
	g := protocol.JSONGrant(wfTool)
	g.MaxCalls, g.MaxCompensations = 64, 64
	return g
}

// wfHarness drives the engine, its runtime, store and an in-process worker alongside the model.
type wfHarness struct {
	ctx      context.Context
	m        *model.Workflow
	store    *wfStore
	rt       *host.Runtime
	e        *workflow.Engine
	reg      *worker.Registry
	jrn      *journal.Journal
	rev      uint64
	w        *worker.Session
	auth     *protocol.Authenticator
	sessions int
	nonce    int
	keys     []string // operation keys, in ledger order
	inputs   [][]byte // canonical inputs, in ledger order
	approval []*workflow.Approval
	v        *wfVerifiers
	policy   workflow.CompensationPolicy
}

func newWFHarness(t *rapid.T) *wfHarness {
	var k [32]byte
	ring, err := storage.NewKeyring("ledger-v1", storage.NewKey(k))
	if err != nil {
		t.Fatal(err)
	}
	key, err := storage.NewRecordKey("workflow", "run-1")
	if err != nil {
		t.Fatal(err)
	}
	h := &wfHarness{ctx: context.Background(), m: model.NewWorkflow(len(wfPlan.Steps)),
		store: &wfStore{Store: ledger.NewStore(storage.NewAuthenticatedStore(storage.NewMemoryBackend(), ring), key)},
		reg:   worker.NewRegistry(), v: &wfVerifiers{}}
	if err := profile.Register(h.reg, profile.Options{Effects: profile.NewEffectLog(nil, nil)}); err != nil {
		t.Fatal(err)
	}
	if h.jrn, err = journal.New(wfTenant); err != nil {
		t.Fatal(err)
	}
	if h.policy, err = workflow.NewCompensationPolicy(wfTenant, wfGrant()); err != nil {
		t.Fatal(err)
	}
	h.newRuntime(t)
	if h.e, err = workflow.New(h.ctx, workflow.Config{Runtime: h.rt, Plan: wfPlan, Store: h.store}); err != nil {
		t.Fatal(err)
	}
	h.openWorker(t)
	return h
}

func (h *wfHarness) newRuntime(t *rapid.T) {
	rt, err := host.New(host.Config{})
	if err != nil {
		t.Fatal(err)
	}
	p := host.JSONPolicy(wfTool)
	p.MaxCalls = 64
	if err := rt.RegisterExternalJSONTool(p, host.Metadata{}); err != nil {
		t.Fatal(err)
	}
	h.rt = rt
}

// openWorker opens a fresh worker session, with a new key, over the worker's journal.
func (h *wfHarness) openWorker(t *rapid.T) {
	if h.w != nil {
		h.jrn, h.rev = h.w.Journal(), h.w.Revision()
	}
	h.sessions++
	id := "session-" + strconv.Itoa(h.sessions)
	key, err := protocol.GenerateSessionKey()
	if err != nil {
		t.Fatal(err)
	}
	defer key.Close()
	ha, _ := protocol.NewAuthenticator(id, key, protocol.RoleHost, canonjson.Preserve)
	wa, _ := protocol.NewAuthenticator(id, key, protocol.RoleWorker, canonjson.Preserve)
	m, err := protocol.NewCapabilityManifest(id, []protocol.CapabilityGrant{wfGrant()})
	if err != nil {
		t.Fatal(err)
	}
	_, line, _ := ha.Seal(protocol.OpenSessionMessage{Manifest: m})
	s, err := worker.Open(h.ctx, wa, line, worker.Config{Journal: h.jrn, Revision: h.rev, Registry: h.reg,
		Admission: worker.AdmissionFunc(func(context.Context, protocol.CapabilityManifest, string) (uint64, error) { return 1, nil })})
	if err != nil {
		t.Fatal(err)
	}
	h.w, h.auth = s, ha
}

type wfPersister struct{}

func (wfPersister) Persist(_ context.Context, _ *journal.Journal, expected uint64, _ worker.Lease) (uint64, error) {
	return expected + 1, nil
}

func (h *wfHarness) send(t *rapid.T, line []byte) protocol.Frame {
	answer, err := h.w.Handle(h.ctx, line, wfPersister{})
	if err != nil {
		t.Fatalf("worker: %v", err)
	}
	f, err := protocol.DecodeFrame(answer, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// kind names an engine error by its variant.
func kind(err error) string {
	var le *ledger.Error
	var we *workflow.Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &we):
		return we.Kind.String()
	case errors.As(err, &le):
		return le.Kind.String()
	}
	return "other: " + err.Error()
}

func (h *wfHarness) target(op int) workflow.Target {
	return workflow.Target{OperationKey: h.keys[op], Policy: h.policy, Grant: wfGrant(), GrantVerifier: h.v, ActionVerifier: h.v}
}

var wfUndo = func() protocol.ToolPayload {
	v, _ := canonjson.ParseValue([]byte(`{"mode":"succeed","value":"undo"}`), canonjson.Preserve)
	return protocol.JSONPayload(v)
}()

// check compares the outcome and the engine's observable state, durable ledger included, with
// the model.
func (h *wfHarness) check(t *rapid.T, what, got, want string) {
	if got != want {
		t.Fatalf("%s: engine %q, model %q", what, got, want)
	}
	phases := map[workflow.Phase]string{workflow.PhaseRunning: "running", workflow.PhaseRecovering: "recovering",
		workflow.PhaseFailed: "failed", workflow.PhasePoisoned: "poisoned"}
	steps := map[workflow.StepStatus]string{workflow.StepIdle: "idle", workflow.StepSuspended: "suspended", workflow.StepFailed: "failed"}
	if phases[h.e.Phase()] != h.m.Phase || h.e.CompletedSteps() != h.m.Completed || steps[h.e.Step()] != h.m.Step {
		t.Fatalf("%s: engine %s/%d/%s, model %s/%d/%s", what, h.e.Phase(), h.e.CompletedSteps(), h.e.Step(), h.m.Phase, h.m.Completed, h.m.Step)
	}
	stored, _, err := h.store.Load(h.ctx, wfPlan)
	if err != nil {
		t.Fatal(err)
	}
	var durable, modeled []model.WorkflowOp
	for _, op := range stored.Operations() {
		c := ""
		if op.Compensation != nil {
			c = op.Compensation.State.String()
		}
		durable = append(durable, model.WorkflowOp{Step: slicesIndex(wfPlan.Steps, op.StepID), State: op.State.String(), Compensation: c})
	}
	for _, op := range h.m.Ops {
		modeled = append(modeled, model.WorkflowOp{Step: op.Step, State: op.State, Compensation: op.Compensation})
	}
	if diff := cmp.Diff(modeled, durable); diff != "" {
		t.Fatalf("%s: durable ledger differs from the model (-model +store):\n%s", what, diff)
	}
}

func slicesIndex(s []string, v string) int {
	for i := range s {
		if s[i] == v {
			return i
		}
	}
	return -1
}

// Spec: WFL-001, WFL-002, WFL-003, WFL-004, WFL-005, WFL-006, WFL-011, WFL-012, WFL-021, WFL-022
// Spec: WFL-023, WFL-024, WFL-025, WFL-026, WFL-040, WFL-041, WFL-042
// The step engine and its compensation flow follow the pure model in model/workflow.go under
// random interleavings of starts, prepares, dispatches, approvals, compensations, lost answers,
// injected ledger write failures, restarts, reconciliations and recovery policies; after every
// action the durable ledger in the store equals the model's.
func TestWorkflowModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := newWFHarness(t)
		pickOp := func(t *rapid.T) (int, bool) {
			if len(h.m.Ops) == 0 {
				return 0, false
			}
			return rapid.IntRange(0, len(h.m.Ops)-1).Draw(t, "op"), true
		}
		t.Repeat(map[string]func(*rapid.T){
			"start": func(t *rapid.T) {
				if len(h.m.Queue)+len(h.m.Ops) >= 24 {
					t.Skip("enough operations")
				}
				mode := rapid.SampledFrom([]string{"succeed", "fail", "running"}).Draw(t, "mode")
				h.nonce++
				if _, err := h.rt.StartJSON(wfTool, `{"mode":"`+mode+`","value":`+strconv.Itoa(h.nonce)+`}`); err != nil {
					t.Fatal(err)
				}
				h.m.Start(mode)
			},
			"prepare": func(t *rapid.T) {
				fail := rapid.Float64().Draw(t, "p") < 0.15
				h.store.fail = fail
				h.nonce++
				c, err := h.e.Prepare(h.ctx, []byte("n-"+strconv.Itoa(h.nonce)))
				h.store.fail = false
				want, claimed := h.m.Prepare(fail)
				if claimed != (c != nil) {
					t.Fatalf("prepare claimed %v, model %v", c != nil, claimed)
				}
				if c != nil {
					in, _ := protocol.CanonicalOperationInputBytes(c.Payload())
					h.keys, h.inputs = append(h.keys, c.OperationKey()), append(h.inputs, in)
				}
				h.check(t, "prepare", kind(err), want)
			},
			"dispatch": func(t *rapid.T) {
				fail := rapid.Float64().Draw(t, "p") < 0.15
				h.nonce++
				d, err := h.e.SealDispatch("d-"+strconv.Itoa(h.nonce), h.auth)
				if err == nil {
					h.store.fail = fail
					_, err = h.e.ApplyDispatchAnswer(h.ctx, d.Request, h.auth, h.send(t, d.Line))
					h.store.fail = false
				}
				h.check(t, "dispatch", kind(err), h.m.Dispatch(fail))
			},
			"approveStep": func(t *rapid.T) {
				current := rapid.Float64().Draw(t, "p") < 0.9
				step := "zzz"
				if current {
					step = h.e.CurrentStep()
				}
				h.check(t, "approveStep", kind(h.e.ApproveStep(step)), h.m.ApproveStep(current))
			},
			"recordCompensation": func(t *rapid.T) {
				op, ok := pickOp(t)
				if !ok {
					t.Skip("no operation")
				}
				fail := rapid.Float64().Draw(t, "p") < 0.15
				revoked := rapid.Float64().Draw(t, "r") < 0.1
				h.store.fail, h.v.revoked = fail, revoked
				in, _ := protocol.CanonicalOperationInputBytes(wfUndo)
				_, err := h.e.RecordCompensation(h.ctx, h.target(op), in, []byte("cmp-nonce"))
				h.store.fail, h.v.revoked = false, false
				h.check(t, "recordCompensation", kind(err), h.m.RecordCompensation(op, fail, revoked))
			},
			"approve": func(t *rapid.T) {
				op, ok := pickOp(t)
				if !ok {
					t.Skip("no operation")
				}
				revoked := rapid.Float64().Draw(t, "r") < 0.1
				h.v.revoked = revoked
				in, _ := protocol.CanonicalOperationInputBytes(wfUndo)
				a, err := h.e.ApproveCompensation(h.target(op), in, h.auth)
				h.v.revoked = false
				if a != nil {
					h.approval = append(h.approval, a)
				}
				h.check(t, "approve", kind(err), h.m.Approve(op, revoked))
			},
			"seal": func(t *rapid.T) {
				op, ok := pickOp(t)
				if !ok || len(h.approval) == 0 {
					t.Skip("nothing to seal")
				}
				a := rapid.IntRange(0, len(h.approval)-1).Draw(t, "approval")
				if rapid.Float64().Draw(t, "same") < 0.8 {
					op = h.m.Approvals[a].Op // mostly the operation the approval is for
				}
				revoked := rapid.Float64().Draw(t, "r") < 0.1
				h.v.revoked = revoked
				h.nonce++
				sealed, err := h.e.SealCompensation(h.target(op), "c-"+strconv.Itoa(h.nonce), wfUndo, h.approval[a], h.auth)
				h.v.revoked = false
				want := h.m.Seal(a, op, revoked)
				if err != nil {
					h.check(t, "seal", kind(err), want)
					return
				}
				h.check(t, "seal", "", want)
				answer := h.send(t, sealed.Line)
				if rapid.Float64().Draw(t, "lost") < 0.2 {
					h.openWorker(t)
					h.m.LoseAnswer()
					return
				}
				fail := rapid.Float64().Draw(t, "p") < 0.15
				h.store.fail = fail
				_, err = h.e.ApplyCompensationAnswer(h.ctx, sealed.Request, h.auth, answer)
				h.store.fail = false
				h.check(t, "compensationAnswer", kind(err), h.m.CompensationAnswer(op, fail))
			},
			"restart": func(t *rapid.T) {
				h.newRuntime(t)
				e, err := workflow.Restore(h.ctx, workflow.Config{Runtime: h.rt, Plan: wfPlan, Store: h.store})
				if err != nil {
					t.Fatal(err)
				}
				h.e, h.approval = e, nil
				h.openWorker(t)
				h.m.Restart()
				h.check(t, "restart", "", "")
			},
			"reconcile": func(t *rapid.T) {
				op, ok := pickOp(t)
				if !ok {
					t.Skip("no operation")
				}
				fail := rapid.Float64().Draw(t, "p") < 0.15
				req, err := h.e.ReconcileRequest(h.keys[op], h.inputs[op], h.auth.SessionID(), "r-1")
				if err == nil {
					res, rerr := protocol.NewOperationReconcileResult(req.SessionID, req.RequestID, req.Tool, req.OperationKey, protocol.Failed("gone"))
					if rerr != nil {
						t.Fatal(rerr)
					}
					h.store.fail = fail
					_, err = h.e.ApplyReconciliation(h.ctx, req, res)
					h.store.fail = false
				}
				h.check(t, "reconcile", kind(err), h.m.Reconcile(op, fail))
			},
			"resume": func(t *rapid.T) {
				decision := rapid.SampledFrom([]string{"none", "accept", "redispatch", "fail"}).Draw(t, "decision")
				d := map[string]workflow.Decision{"none": workflow.DecisionNone, "accept": workflow.DecisionAccept,
					"redispatch": workflow.DecisionRedispatch, "fail": workflow.DecisionFail}[decision]
				err := h.e.Resume(workflow.RecoveryPolicy{Decide: func(ledger.Operation) workflow.Decision { return d }})
				h.check(t, "resume", kind(err), h.m.Resume(decision))
			},
		})
	})
}
