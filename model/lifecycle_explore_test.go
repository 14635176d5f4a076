package model_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/model"
)

// lifecycleBound is the explored external tool: two calls, two attempts, two pending
// operations and a 30 ms deadline that one clock step reaches; the soak bound allows three
// calls.
func lifecycleBound() model.LifecycleExploration {
	c := model.LifecycleExploration{
		Tool:       model.LifecycleTool{Name: "remote", External: true, MaxCalls: 2, MaxAttempts: 2, MaxInput: 8, MaxOutput: 8, DeadlineMs: 30},
		NonceLabel: lifecycleLabel(), MaxPending: 2, StepMs: 30, MaxMs: 30,
	}
	if soak() {
		c.Tool.MaxCalls = 3
	}
	return c
}

// Every sequence of host calls on the external operations of one tool within the bound: each
// operation settles exactly once, a settled operation keeps its one result, and no call,
// attempt, pending or deadline budget goes negative.
//
// Spec: RUN-033, RUN-051, RUN-053, RUN-054, RUN-055, RUN-076, RUN-077, RUN-078, RUN-083, RUN-100
// Spec: RUN-101, RUN-110, RUN-114, RUN-140
func TestLifecycleExhaustive(t *testing.T) {
	t.Parallel()
	reportExploration(t, explore("lifecycle", lifecycleBound().System))
	if soak() {
		// A finer clock: four instants (0, 15, 30 and 45 ms), so that operations reserved
		// at different times reach their deadlines apart.
		c := lifecycleBound()
		c.Tool.MaxCalls, c.StepMs, c.MaxMs = 2, 15, 45
		reportExploration(t, model.Explore(c.System()))
	}
}

// Negative controls: a direct cancel that settles an operation again, and a confirmation that
// settles an operation whose cancellation nobody requested, are each caught by an invariant,
// not only by the replay.
//
// Spec: RUN-055, RUN-076, RUN-077, RUN-140
func TestLifecycleNegativeControl(t *testing.T) {
	for _, control := range []struct{ kind, refusal, invariant string }{
		{"cancel", "AlreadyCompleted", "an operation settles at most once"},
		{"confirm", "CancellationNotRequested", "only a requested cancellation is confirmed"},
	} {
		t.Run(control.kind, func(t *testing.T) {
			sys := broken(lifecycleBound().System(), func(_ model.LifeState, mv model.Move[model.LifeState, model.LifeAction]) model.Move[model.LifeState, model.LifeAction] {
				if mv.Action.Kind == control.kind && mv.Action.Result.Err == control.refusal {
					mv.Action.Result = model.LifecycleResult{Settled: []model.LifecycleSettlement{{ID: mv.Action.ID, Err: "Cancelled: again"}}}
				}
				return mv
			})
			expectCaught(t, model.Explore(sys), control.invariant)
		})
	}
}

// lifecycleCall makes the runtime call of an explored action and describes its result as the
// model does.
func lifecycleCall(t fataler, h *lifecycleHarness, a model.LifeAction, tool string) model.LifecycleResult {
	r, id := h.rt, host.OperationID(a.ID)
	switch a.Kind {
	case "start":
		got, err := r.Start(tool, a.Arg)
		return model.LifecycleResult{ID: uint64(got), ToolErr: toolErr(err)}
	case "claimNext":
		inv, ok := r.ClaimNextExternal()
		got := model.LifecycleResult{HasInv: ok}
		if ok {
			got.Inv = toModelInv(inv)
		}
		return got
	case "retry":
		inv, err := r.RetryExternal(id, host.RetryTransient)
		got := model.LifecycleResult{Err: hostErr(err)}
		if err == nil {
			got.HasInv, got.Inv = true, toModelInv(inv)
		}
		return got
	case "requestCancel":
		req, err := r.RequestExternalCancellation(id)
		got := model.LifecycleResult{Err: hostErr(err)}
		if err == nil {
			got.HasInv = true
			got.Inv = model.LifecycleInvocation{ID: uint64(req.ID), Name: req.Name, CallIndex: req.CallIndex, Attempt: int(req.Attempt), Key: req.IdempotencyKey}
		}
		return got
	case "confirm", "cancel", "complete":
		var st host.Settlement
		var err error
		switch a.Kind {
		case "confirm":
			st, err = r.ConfirmExternalCancellation(id)
		case "cancel":
			st, err = r.CancelExternal(id)
		default:
			res := host.OK(a.Arg)
			if a.Arg == "fail" {
				res = host.Fail(&host.ToolError{Kind: host.ToolFailed, Message: "m"})
			}
			st, err = r.CompleteExternal(id, res)
		}
		got := model.LifecycleResult{Err: hostErr(err)}
		if err == nil {
			got.Settled = toModelSettlements([]host.Settlement{st})
		}
		return got
	case "reconcile":
		name, key := tool, "k"
		if info, ok := r.Operation(id); ok && info.IdempotencyKey != "" {
			key = info.IdempotencyKey
		}
		status := map[string]protocol.OperationStatus{"running": protocol.Running(), "succeeded": protocol.Succeeded(protocol.TextPayload("ok")),
			"failed": protocol.Failed("bad"), "cancelled": protocol.Cancelled()}[a.Arg]
		return reconcileExternal(t, r, id, name, key, status)
	case "advance":
		ms, _ := strconv.Atoi(a.Arg)
		h.now = h.now.Add(time.Duration(ms) * time.Millisecond)
		return model.LifecycleResult{}
	case "expire":
		return model.LifecycleResult{Settled: toModelSettlements(r.ExpireTimedOutUpTo(h.m.MaxPending()))}
	case "await":
		out, ready, err := r.Await(id)
		got := model.LifecycleResult{Ready: ready, Text: out, ToolErr: toolErr(err)}
		if err != nil && got.ToolErr == "" {
			got.AwaitErr = err.Error()
		}
		return got
	case "release":
		return model.LifecycleResult{Ready: r.ReleasePromise(id)}
	case "collect":
		return model.LifecycleResult{ID: uint64(r.CollectGarbage())}
	}
	t.Fatalf("no runtime call for %v", a)
	return model.LifecycleResult{}
}

// lifecycleSoakReplays bounds the soak replay of the lifecycle: its soak bound has about two
// million transitions, each replayed on a fresh runtime.
const lifecycleSoakReplays = 50000

// The runtime follows the model along one trace for every pair of transition kinds the
// exploration covers (and under SPLASH_SOAK=1 an even sample of lifecycleSoakReplays of its
// explored transitions besides): results, operation records, the audit trail and the pending
// count after every call.
//
// Spec: RUN-050, RUN-051, RUN-054, RUN-055, RUN-071, RUN-076, RUN-077, RUN-078, RUN-083, RUN-100
// Spec: RUN-110, RUN-111, RUN-113, RUN-114
func TestLifecycleReplay(t *testing.T) {
	t.Parallel()
	c := lifecycleBound()
	r := explore("lifecycle", c.System)
	traces := replayed(r, lifeLabel, lifecycleSoakReplays)
	for _, tr := range traces {
		h := newLifecycleHarnessWith(t, []model.LifecycleTool{c.Tool}, c.MaxPending, model.LifecycleAuditCap)
		s := c.Initial()
		for i, a := range tr {
			next, predicted := c.Apply(s, a)
			want := c.Call(h.m, a)
			if d := cmp.Diff(predicted.Result, want); d != "" {
				t.Fatalf("the explored prediction differs from the model:\n%s", d)
			}
			got := lifecycleCall(t, h, a, c.Tool.Name)
			h.check(t, strconv.Itoa(i+1)+". "+predicted.String(), got, want)
			s = next
		}
	}
	t.Logf("%s: replayed %d traces", r.Summary(), len(traces))
}
