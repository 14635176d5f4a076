package model_test

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/model"
	"lukechampine.com/blake3"
	"pgregory.net/rapid"
)

var lifecycleTools = []model.LifecycleTool{
	{Name: "local", MaxCalls: 6, MaxAttempts: 1, MaxInput: 16, MaxOutput: 8, DeadlineMs: 30},
	{Name: "remote", External: true, MaxCalls: 30, MaxAttempts: 2, MaxInput: 6, MaxOutput: 5, DeadlineMs: 60,
		Stream: &model.LifecycleStream{MaxChunks: 4, MaxChunkBytes: 4, MaxTotalBytes: 6, MaxEmittedBytes: 9}},
	{Name: "free", External: true, MaxCalls: 20, MaxAttempts: 1, MaxInput: 16, MaxOutput: 16, DeadlineMs: -1},
	{Name: "rj", External: true, JSON: true, MaxCalls: 10, MaxAttempts: 3, MaxInput: 16, MaxOutput: 16, DeadlineMs: -1,
		Stream: &model.LifecycleStream{MaxChunks: 2, MaxChunkBytes: 3, MaxTotalBytes: 5, MaxEmittedBytes: 7}},
}

const lifecycleSession = 3

var lifecycleNonce = []byte("lifecycle-model-nonce")

// lifecycleLabel is the nonce label of spec RUN-003, computed here from the formula.
func lifecycleLabel() string {
	h := blake3.New(32, nil)
	h.Write([]byte("splash-capability-session-nonce-v1"))
	h.Write(binary.BigEndian.AppendUint64(nil, lifecycleSession))
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(lifecycleNonce))))
	h.Write(lifecycleNonce)
	return hex.EncodeToString(h.Sum(nil))
}

type lifecycleHarness struct {
	rt    *host.Runtime
	m     *model.Lifecycle
	now   time.Time
	steps []string
}

func newLifecycleHarness(t *rapid.T) *lifecycleHarness {
	maxPending := rapid.IntRange(2, 8).Draw(t, "maxPending")
	auditCap := rapid.SampledFrom([]int{4, 16, 1024}).Draw(t, "auditCap")
	return newLifecycleHarnessWith(t, lifecycleTools, maxPending, auditCap)
}

// fataler is what the harnesses need of a *testing.T or a *rapid.T.
type fataler interface {
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// newLifecycleHarnessWith returns a runtime with tools registered and the model beside it.
func newLifecycleHarnessWith(t fataler, tools []model.LifecycleTool, maxPending, auditCap int) *lifecycleHarness {
	h := &lifecycleHarness{now: time.Unix(1_800_000_000, 0)}
	nonce, err := host.NewSessionNonce(lifecycleNonce)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := host.New(host.Config{MaxPendingTools: maxPending, SessionNonce: &nonce, SessionID: lifecycleSession,
		Clock: func() time.Time { return h.now }})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.SetMaxAuditEvents(auditCap); err != nil {
		t.Fatal(err)
	}
	for _, lt := range tools {
		p := host.NewPolicy(lt.Name)
		if lt.JSON {
			p = host.JSONPolicy(lt.Name)
		}
		p.MaxCalls, p.MaxAttempts, p.MaxInputBytes, p.MaxOutputBytes = lt.MaxCalls, uint32(lt.MaxAttempts), lt.MaxInput, lt.MaxOutput
		if lt.DeadlineMs >= 0 {
			p = p.WithDeadline(time.Duration(lt.DeadlineMs) * time.Millisecond)
		}
		if s := lt.Stream; s != nil {
			p = p.WithStream(host.StreamPolicy{MaxChunks: s.MaxChunks, MaxChunkBytes: s.MaxChunkBytes, MaxTotalBytes: s.MaxTotalBytes, MaxEmittedBytes: s.MaxEmittedBytes})
		}
		if lt.External {
			err = rt.RegisterExternalTool(p, host.Metadata{})
		} else {
			err = rt.RegisterTool(p, host.Metadata{}, func(req host.ToolRequest) (string, error) { return "ok:" + req.Input, nil })
		}
		if err != nil {
			t.Fatal(err)
		}
		if lt.Stream != nil {
			if err := rt.SetExternalStreamRedactor(lt.Name, func(s string) string { return strings.ReplaceAll(s, "x", "xx") }); err != nil {
				t.Fatal(err)
			}
		}
	}
	h.rt = rt
	h.m = model.NewLifecycle(tools, maxPending, auditCap, lifecycleLabel())
	return h
}

func toolErr(err error) string {
	var te *host.ToolError
	if errors.As(err, &te) {
		return te.Kind.String() + ": " + te.Message
	}
	return ""
}

func hostErr(err error) string {
	var xe *host.ExternalError
	if errors.As(err, &xe) {
		return xe.Kind.String()
	}
	if err != nil {
		return "unexpected: " + err.Error()
	}
	return ""
}

func toModelInv(inv host.Invocation) model.LifecycleInvocation {
	rem := int64(-1)
	if inv.HasDeadline {
		rem = int64(inv.RemainingDeadlineMillis)
	}
	return model.LifecycleInvocation{ID: uint64(inv.ID), Name: inv.Name, Input: inv.Input, CallIndex: inv.CallIndex,
		Attempt: int(inv.Attempt), MaxAttempts: int(inv.MaxAttempts), Key: inv.IdempotencyKey, RemainingMs: rem}
}

func toModelSettlements(sts []host.Settlement) []model.LifecycleSettlement {
	var out []model.LifecycleSettlement
	for _, s := range sts {
		e := ""
		if s.Err != nil {
			e = s.Err.Kind.String() + ": " + s.Err.Message
		}
		out = append(out, model.LifecycleSettlement{ID: uint64(s.ID), Awaited: s.Awaited, Output: s.Output, Err: e})
	}
	return out
}

func (h *lifecycleHarness) check(t fataler, action string, got, want model.LifecycleResult) {
	h.steps = append(h.steps, action)
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("%s: result differs (-model +runtime):\n%s\nsteps: %v", action, d, h.steps)
	}
	var ops []model.LifecycleOp
	for _, o := range h.rt.Operations() {
		e := ""
		if o.Err != nil {
			e = o.Err.Kind.String() + ": " + o.Err.Message
		}
		ops = append(ops, model.LifecycleOp{ID: uint64(o.ID), Name: o.Name, State: o.State.String(), Sequence: o.Sequence,
			CallIndex: o.CallIndex, Attempt: int(o.Attempt), Key: o.IdempotencyKey, Chunks: o.Chunks, Source: o.SourceBytes,
			Emitted: o.EmittedBytes, Awaited: o.Awaited, Released: o.Released, Orphaned: o.Orphaned, Output: o.Output, Err: e})
	}
	if d := cmp.Diff(h.m.Ops(), ops, cmp.Comparer(func(a, b []model.LifecycleOp) bool { return len(a) == 0 && len(b) == 0 || cmp.Equal(a, b) })); d != "" {
		t.Fatalf("%s: operations differ (-model +runtime):\n%s\nsteps: %v", action, d, h.steps)
	}
	var events []model.LifecycleEvent
	for _, e := range h.rt.Audit() {
		class := ""
		if e.RetryClass != 0 {
			class = e.RetryClass.String()
		}
		events = append(events, model.LifecycleEvent{EventSequence: e.EventSequence, Sequence: e.Sequence, Tool: e.Tool,
			InputBytes: e.InputBytes, OutputBytes: e.OutputBytes, Outcome: e.Outcome.String(), RetryClass: class})
		if err := e.ValidateForTelemetry(); err != nil {
			t.Fatalf("%s: audit event %+v: %v", action, e, err)
		}
	}
	wantEvents, wantDropped := h.m.Audit()
	if d := cmp.Diff(wantEvents, events, cmp.Comparer(func(a, b []model.LifecycleEvent) bool { return len(a) == 0 && len(b) == 0 || cmp.Equal(a, b) })); d != "" {
		t.Fatalf("%s: audit differs (-model +runtime):\n%s\nsteps: %v", action, d, h.steps)
	}
	if got := h.rt.DroppedAuditEvents(); got != wantDropped {
		t.Fatalf("%s: dropped %d, model %d", action, got, wantDropped)
	}
	if h.rt.PendingTools() != len(h.m.Ops()) {
		t.Fatalf("%s: pending %d, model %d", action, h.rt.PendingTools(), len(h.m.Ops()))
	}
}

// spread turns a drawn index into a choice among n that also rotates with the step number:
// rapid biases draws toward small values, so without the rotation the first choices would
// dominate every sequence.
func (h *lifecycleHarness) spread(t *rapid.T, n, stride int, label string) int {
	return (rapid.IntRange(0, n-1).Draw(t, label) + stride*len(h.steps)) % n
}

// id draws a retained operation most of the time, otherwise any ID up to the next one (0 and
// the next ID are never issued).
func (h *lifecycleHarness) id(t *rapid.T) uint64 {
	ops := h.m.Ops()
	var claimed []model.LifecycleOp
	for _, op := range ops {
		if op.State == "claimed" || op.State == "cancellation_requested" {
			claimed = append(claimed, op)
		}
	}
	switch c := rapid.IntRange(0, 9).Draw(t, "which"); {
	case c < 5 && len(claimed) > 0:
		return claimed[h.spread(t, len(claimed), 1, "claimed")].ID
	case c < 9 && len(ops) > 0:
		return ops[h.spread(t, len(ops), 1, "op")].ID
	}
	return rapid.Uint64Range(0, h.m.NextID()).Draw(t, "id")
}

// lifecycleWeights gives each action its relative frequency.
var lifecycleWeights = map[string]int{
	"start": 5, "call": 1, "peek": 1, "claimNext": 3, "claim": 2, "validate": 1, "retry": 2,
	"requestCancel": 2, "confirm": 2, "cancel": 1, "complete": 3, "push": 4, "pump": 2,
	"expire": 2, "advance": 3, "await": 2, "release": 1, "collect": 1, "reconcile": 2, "burst": 3,
	"drop": 2,
}

var (
	lifecycleNames  = []string{"local", "remote", "remote", "free", "rj", "nope"}
	lifecycleInputs = []string{"", "a", "xx", "abcdefg", "{}", "[1]", "5", `{"a"`}
	lifecycleOuts   = []string{"", "ok", "toolong", "{}", "[]", "7", "{"}
	lifecycleChunks = []string{"", "x", "ab", "abc", "abcd", "xxxx", "abcde"}
)

// Spec: RUN-030, RUN-031, RUN-033, RUN-050, RUN-051, RUN-053, RUN-054, RUN-055, RUN-070, RUN-071
// Spec: RUN-072, RUN-073, RUN-074, RUN-075, RUN-076, RUN-077, RUN-078, RUN-079, RUN-081, RUN-082
// Spec: RUN-083, RUN-084, RUN-100, RUN-101, RUN-110, RUN-111, RUN-112, RUN-113, RUN-114, RUN-121
// Spec: RUN-122, RUN-130, RUN-131, RUN-132, RUN-133, RUN-140, RUN-151, RUN-153, RUN-161
func TestLifecycleModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := newLifecycleHarness(t)
		r, m := h.rt, h.m
		actions := map[string]func(*rapid.T){
			"start": func(t *rapid.T) {
				name := rapid.SampledFrom(lifecycleNames).Draw(t, "name")
				input := rapid.SampledFrom(lifecycleInputs).Draw(t, "input")
				js := rapid.Bool().Draw(t, "json")
				var id host.OperationID
				var err error
				if js {
					id, err = r.StartJSON(name, input)
				} else {
					id, err = r.Start(name, input)
				}
				h.check(t, "start "+name, model.LifecycleResult{ID: uint64(id), ToolErr: toolErr(err)}, m.Start(name, input, js))
			},
			"call": func(t *rapid.T) {
				name := rapid.SampledFrom(lifecycleNames).Draw(t, "name")
				input := rapid.SampledFrom(lifecycleInputs).Draw(t, "input")
				js := rapid.Bool().Draw(t, "json")
				var out string
				var err error
				if js {
					out, err = r.CallJSON(name, input)
				} else {
					out, err = r.Call(name, input)
				}
				h.check(t, "call "+name, model.LifecycleResult{Text: out, ToolErr: toolErr(err)}, m.Call(name, input, js))
			},
			"peek": func(t *rapid.T) {
				inv, ok := r.PeekNextExternal()
				got := model.LifecycleResult{HasInv: ok}
				if ok {
					got.Inv = toModelInv(inv)
				}
				h.check(t, "peek", got, m.Peek())
			},
			"claimNext": func(t *rapid.T) {
				inv, ok := r.ClaimNextExternal()
				got := model.LifecycleResult{HasInv: ok}
				if ok {
					got.Inv = toModelInv(inv)
				}
				h.check(t, "claimNext", got, m.ClaimNext())
			},
			"claim": func(t *rapid.T) {
				id := h.id(t)
				inv, err := r.ClaimExternal(host.OperationID(id))
				got := model.LifecycleResult{Err: hostErr(err)}
				if err == nil {
					got.HasInv, got.Inv = true, toModelInv(inv)
				}
				h.check(t, "claim", got, m.Claim(id))
			},
			"validate": func(t *rapid.T) {
				id := h.id(t)
				err := r.ValidateClaimedExternal(host.OperationID(id))
				h.check(t, "validate", model.LifecycleResult{Err: hostErr(err)}, m.Validate(id))
			},
			"retry": func(t *rapid.T) {
				id := h.id(t)
				class := rapid.SampledFrom([]host.RetryClass{host.RetryTransient, host.RetryRateLimited}).Draw(t, "class")
				inv, err := r.RetryExternal(host.OperationID(id), class)
				got := model.LifecycleResult{Err: hostErr(err)}
				if err == nil {
					got.HasInv, got.Inv = true, toModelInv(inv)
				}
				h.check(t, "retry", got, m.Retry(id, class.String()))
			},
			"requestCancel": func(t *rapid.T) {
				id := h.id(t)
				req, err := r.RequestExternalCancellation(host.OperationID(id))
				got := model.LifecycleResult{Err: hostErr(err)}
				if err == nil {
					got.HasInv = true
					got.Inv = model.LifecycleInvocation{ID: uint64(req.ID), Name: req.Name, CallIndex: req.CallIndex, Attempt: int(req.Attempt), Key: req.IdempotencyKey}
				}
				h.check(t, "requestCancel", got, m.RequestCancel(id))
			},
			"confirm": func(t *rapid.T) {
				id := h.id(t)
				st, err := r.ConfirmExternalCancellation(host.OperationID(id))
				got := model.LifecycleResult{Err: hostErr(err)}
				if err == nil {
					got.Settled = toModelSettlements([]host.Settlement{st})
				}
				h.check(t, "confirm", got, m.Confirm(id))
			},
			"cancel": func(t *rapid.T) {
				id := h.id(t)
				st, err := r.CancelExternal(host.OperationID(id))
				got := model.LifecycleResult{Err: hostErr(err)}
				if err == nil {
					got.Settled = toModelSettlements([]host.Settlement{st})
				}
				h.check(t, "cancel", got, m.Cancel(id))
			},
			"complete": func(t *rapid.T) {
				id := h.id(t)
				res := host.OK(rapid.SampledFrom(lifecycleOuts).Draw(t, "output"))
				modelErr := ""
				if rapid.IntRange(0, 3).Draw(t, "fail") == 0 {
					kind := rapid.SampledFrom([]host.ToolErrorKind{host.ToolDenied, host.ToolFailed, host.ToolCancelled, host.ToolTimedOut}).Draw(t, "kind")
					res = host.Fail(&host.ToolError{Kind: kind, Message: "m"})
					modelErr = kind.String() + ": m"
				}
				st, err := r.CompleteExternal(host.OperationID(id), res)
				got := model.LifecycleResult{Err: hostErr(err)}
				if err == nil {
					got.Settled = toModelSettlements([]host.Settlement{st})
				}
				h.check(t, "complete", got, m.Complete(id, res.Output, modelErr))
			},
			"push": func(t *rapid.T) {
				id := h.id(t)
				text := rapid.SampledFrom(lifecycleChunks).Draw(t, "chunk")
				ch, err := r.PushExternalChunk(host.OperationID(id), text)
				got := model.LifecycleResult{Err: hostErr(err)}
				if err == nil {
					got.Text, got.ChunkIndex = ch.Text, ch.ChunkIndex
				}
				h.check(t, "push", got, m.Push(id, text))
			},
			"burst": func(t *rapid.T) { // several chunks on one operation in a row
				id := h.id(t)
				for i := 0; i < 2+rapid.IntRange(0, 2).Draw(t, "chunks"); i++ {
					text := lifecycleChunks[h.spread(t, len(lifecycleChunks), 3, "chunk")]
					ch, err := r.PushExternalChunk(host.OperationID(id), text)
					got := model.LifecycleResult{Err: hostErr(err)}
					if err == nil {
						got.Text, got.ChunkIndex = ch.Text, ch.ChunkIndex
					}
					h.check(t, "burst", got, m.Push(id, text))
				}
			},
			"drop": func(t *rapid.T) { // a script drops a promise and the host collects
				id := h.id(t)
				h.check(t, "drop release", model.LifecycleResult{Ready: r.ReleasePromise(host.OperationID(id))}, m.Release(id))
				h.check(t, "drop collect", model.LifecycleResult{ID: uint64(r.CollectGarbage())}, m.Collect())
			},
			"pump": func(t *rapid.T) {
				n := rapid.IntRange(1, 3).Draw(t, "n")
				h.check(t, "pump", model.LifecycleResult{Settled: toModelSettlements(r.PumpUpTo(n))}, m.Pump(n))
			},
			"expire": func(t *rapid.T) {
				n := rapid.IntRange(1, 3).Draw(t, "n")
				h.check(t, "expire", model.LifecycleResult{Settled: toModelSettlements(r.ExpireTimedOutUpTo(n))}, m.Expire(n))
			},
			"advance": func(t *rapid.T) {
				ms := rapid.SampledFrom([]int{0, 1, 5, 29, 30, 31, 59, 60, 61, 100}).Draw(t, "ms")
				h.now = h.now.Add(time.Duration(ms) * time.Millisecond)
				m.Advance(int64(ms))
				h.check(t, "advance", model.LifecycleResult{}, model.LifecycleResult{})
			},
			"await": func(t *rapid.T) {
				id := h.id(t)
				out, ready, err := r.Await(host.OperationID(id))
				got := model.LifecycleResult{Ready: ready, Text: out, ToolErr: toolErr(err)}
				if err != nil && got.ToolErr == "" {
					got.AwaitErr = err.Error()
				}
				h.check(t, "await", got, m.Await(id))
			},
			"release": func(t *rapid.T) {
				id := h.id(t)
				h.check(t, "release", model.LifecycleResult{Ready: r.ReleasePromise(host.OperationID(id))}, m.Release(id))
			},
			"collect": func(t *rapid.T) {
				h.check(t, "collect", model.LifecycleResult{ID: uint64(r.CollectGarbage())}, m.Collect())
			},
			"reconcile": func(t *rapid.T) {
				id := h.id(t)
				state := rapid.SampledFrom([]string{"running", "succeeded", "failed", "cancelled"}).Draw(t, "state")
				jsonPayload := rapid.Bool().Draw(t, "jsonPayload")
				name, key := "free", "k"
				if info, ok := r.Operation(host.OperationID(id)); ok {
					name = info.Name
					if info.IdempotencyKey != "" {
						key = info.IdempotencyKey
					}
				}
				status, modelPayload := protocol.Running(), ""
				switch state {
				case "succeeded":
					if jsonPayload {
						v, _ := canonjson.ParseValue([]byte(`{"b":1,"a":2}`), canonjson.Preserve)
						status, modelPayload = protocol.Succeeded(protocol.JSONPayload(v)), `{"a":2,"b":1}`
					} else {
						status, modelPayload = protocol.Succeeded(protocol.TextPayload("ok")), "ok"
					}
				case "failed":
					status, modelPayload = protocol.Failed("bad"), "bad"
				case "cancelled":
					status = protocol.Cancelled()
				}
				got := reconcileExternal(t, r, host.OperationID(id), name, key, status)
				h.check(t, "reconcile "+state, got, m.Reconcile(id, state, modelPayload, jsonPayload))
			},
		}
		var deck []string
		for _, name := range slices.Sorted(maps.Keys(lifecycleWeights)) {
			if actions[name] == nil {
				t.Fatalf("no action %q", name)
			}
			for i := 0; i < lifecycleWeights[name]; i++ {
				deck = append(deck, name)
			}
		}
		steps := 80 + rapid.IntRange(0, 80).Draw(t, "steps")
		for i := 0; i < steps; i++ {
			actions[deck[h.spread(t, len(deck), 7, "action")]](t)
		}
	})
}

// reconcileExternal applies a worker status for operation id of tool name under key and
// describes the runtime's answer as the model does.
func reconcileExternal(t fataler, r *host.Runtime, id host.OperationID, name, key string, status protocol.OperationStatus) model.LifecycleResult {
	req, err := protocol.NewOperationReconcileRequest("session-1", "reconcile-1", name, key)
	if err != nil {
		t.Fatal(err)
	}
	res, err := protocol.NewOperationReconcileResult("session-1", "reconcile-1", name, key, status)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.ReconcileExternal(id, req, res)
	got := model.LifecycleResult{Err: hostErr(err), Running: rec.Running}
	if err == nil && !rec.Running {
		got.Settled = toModelSettlements([]host.Settlement{rec.Settlement})
	}
	return got
}
