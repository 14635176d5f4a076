package model

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// This file makes the Lifecycle model explorable: a small alphabet of host calls on external
// operations (start, claim, retry, two-phase and direct cancellation, completion, reconciliation,
// clock advances and expiry, await, release and collection), a canonical encoding of the model's
// state, and the invariants that every operation settles exactly once and no budget goes
// negative.

// LifeAction is one host call of the explored lifecycle. Kind names a Lifecycle method
// ("start", "claimNext", "retry", "requestCancel", "confirm", "cancel", "complete",
// "reconcile", "advance", "expire", "await", "release", "collect"); ID is the operation, Arg
// the call's argument (a completion's "ok" or "fail", a reconciliation state, milliseconds).
// Result is the model's prediction.
type LifeAction struct {
	Kind   string
	ID     uint64
	Arg    string
	Result LifecycleResult
}

// Input is the action without its predicted result.
func (a LifeAction) Input() string { return fmt.Sprintf("%s %d %s", a.Kind, a.ID, a.Arg) }

// String renders the action and its result.
func (a LifeAction) String() string {
	s := a.Kind
	if a.ID != 0 {
		s += " #" + strconv.FormatUint(a.ID, 10)
	}
	if a.Arg != "" {
		s += " " + a.Arg
	}
	r := a.Result
	switch {
	case r.Err != "":
		s += " => " + r.Err
	case r.ToolErr != "":
		s += " => " + r.ToolErr
	case r.AwaitErr != "":
		s += " => " + r.AwaitErr
	}
	for _, st := range r.Settled {
		s += fmt.Sprintf(" => settled #%d %s", st.ID, lifeResult(st.Output, st.Err))
	}
	return s
}

// LifeState is one state of the explored lifecycle: the model and the operations settled so
// far.
type LifeState struct {
	M       *Lifecycle
	Settled []uint64
}

// LifecycleExploration configures the explored lifecycle: the tool under test, the pending
// limit, the clock step and the latest time reached, and the nonce label of idempotency keys.
type LifecycleExploration struct {
	Tool       LifecycleTool
	NonceLabel string
	MaxPending int
	StepMs     int64
	MaxMs      int64
}

// Initial returns a fresh runtime with the tool registered.
func (c LifecycleExploration) Initial() LifeState {
	return LifeState{M: NewLifecycle([]LifecycleTool{c.Tool}, c.MaxPending, LifecycleAuditCap, c.NonceLabel)}
}

// Clone returns an independent copy of the model (the tool table is shared: it never changes).
func (m *Lifecycle) Clone() *Lifecycle {
	c := m.cloneState()
	c.events = slices.Clone(m.events)
	return c
}

// cloneState copies everything but the audit trail, which the explorer does not need.
func (m *Lifecycle) cloneState() *Lifecycle {
	c := *m
	c.calls = map[string]int{}
	for k, v := range m.calls {
		c.calls[k] = v
	}
	c.ops = make(map[uint64]*lifecycleOp, len(m.ops))
	for id, op := range m.ops {
		copied := *op
		c.ops[id] = &copied
	}
	c.events = nil
	return &c
}

// StateKey is a canonical encoding of everything that determines the model's future answers.
// The audit trail is left out: it only grows, and no answer depends on it.
func (m *Lifecycle) StateKey() string {
	b := make([]byte, 0, 128)
	num := func(n int64) { b = strconv.AppendInt(append(b, ' '), n, 10) }
	str := func(s string) { b = append(append(append(b, ' '), s...), 0) }
	flag := func(f bool) { b = strconv.AppendBool(append(b, ' '), f) }
	num(m.now)
	num(int64(m.nextSeq))
	num(int64(m.nextID))
	for _, name := range slices.Sorted(maps.Keys(m.calls)) {
		str(name)
		num(int64(m.calls[name]))
	}
	for _, id := range m.sortedIDs() {
		op := m.ops[id]
		b = append(b, '|')
		num(int64(op.ID))
		str(op.Name)
		str(op.State)
		num(int64(op.Sequence))
		num(int64(op.CallIndex))
		num(int64(op.Attempt))
		str(op.Key)
		num(int64(op.Chunks))
		num(int64(op.Source))
		num(int64(op.Emitted))
		flag(op.Awaited)
		flag(op.Released)
		flag(op.Orphaned)
		str(op.Output)
		str(op.Err)
		str(op.input)
		num(op.start)
		flag(op.sync)
	}
	return string(b)
}

// Call performs an action on m and returns its result.
func (c LifecycleExploration) Call(m *Lifecycle, a LifeAction) LifecycleResult {
	name := c.Tool.Name
	var r LifecycleResult
	switch a.Kind {
	case "start":
		r = m.Start(name, a.Arg, false)
	case "claimNext":
		r = m.ClaimNext()
	case "retry":
		r = m.Retry(a.ID, "transient")
	case "requestCancel":
		r = m.RequestCancel(a.ID)
	case "confirm":
		r = m.Confirm(a.ID)
	case "cancel":
		r = m.Cancel(a.ID)
	case "complete":
		if a.Arg == "fail" {
			r = m.Complete(a.ID, "", "Failed: m")
		} else {
			r = m.Complete(a.ID, a.Arg, "")
		}
	case "reconcile":
		payload := ""
		switch a.Arg {
		case "succeeded":
			payload = "ok"
		case "failed":
			payload = "bad"
		}
		r = m.Reconcile(a.ID, a.Arg, payload, false)
	case "advance":
		ms, _ := strconv.ParseInt(a.Arg, 10, 64)
		m.Advance(ms)
	case "expire":
		r = m.Expire(c.MaxPending)
	case "await":
		r = m.Await(a.ID)
	case "release":
		r = m.Release(a.ID)
	case "collect":
		r = m.Collect()
	default:
		panic("model: unknown lifecycle action " + a.Kind)
	}
	return r
}

// Apply performs an action on a copy of s (without its audit trail) and returns the new state
// and the action with its result.
func (c LifecycleExploration) Apply(s LifeState, a LifeAction) (LifeState, LifeAction) {
	m := s.M.cloneState()
	r := c.Call(m, a)
	a.Result = r
	n := LifeState{M: m, Settled: slices.Clone(s.Settled)}
	for _, st := range r.Settled {
		n.Settled = append(n.Settled, st.ID)
	}
	slices.Sort(n.Settled)
	return n, a
}

// Next returns every enabled action (every action whose model call is defined) from s.
func (c LifecycleExploration) Next(s LifeState) []Move[LifeState, LifeAction] {
	inputs := []LifeAction{{Kind: "claimNext"}, {Kind: "expire"}, {Kind: "collect"}}
	// Every start reserves a sequence number, even a denied one; bounding them keeps the space
	// finite while still reaching the pending and call budget denials.
	if s.M.nextSeq < uint64(c.Tool.MaxCalls+1) {
		inputs = append(inputs, LifeAction{Kind: "start", Arg: "a"})
	}
	if s.M.now+c.StepMs <= c.MaxMs {
		inputs = append(inputs, LifeAction{Kind: "advance", Arg: strconv.FormatInt(c.StepMs, 10)})
	}
	for _, op := range s.M.Ops() {
		id := op.ID
		for _, k := range []string{"retry", "requestCancel", "confirm", "cancel", "await", "release"} {
			inputs = append(inputs, LifeAction{Kind: k, ID: id})
		}
		inputs = append(inputs, LifeAction{Kind: "complete", ID: id, Arg: "ok"}, LifeAction{Kind: "complete", ID: id, Arg: "fail"})
		for _, st := range []string{"running", "succeeded", "failed", "cancelled"} {
			inputs = append(inputs, LifeAction{Kind: "reconcile", ID: id, Arg: st})
		}
	}
	out := make([]Move[LifeState, LifeAction], 0, len(inputs))
	for _, in := range inputs {
		n, a := c.Apply(s, in)
		out = append(out, Move[LifeState, LifeAction]{Action: a, Next: n})
	}
	return out
}

func lifeResult(output, err string) string {
	if err != "" {
		return "error " + strconv.Quote(err)
	}
	return "output " + strconv.Quote(output)
}

// Key is the canonical encoding of a state.
func (c LifecycleExploration) Key(s LifeState) string { return s.M.StateKey() + fmt.Sprint(s.Settled) }

// Describe renders a state for a counterexample.
func (c LifecycleExploration) Describe(s LifeState) string {
	var parts []string
	for _, op := range s.M.Ops() {
		p := fmt.Sprintf("#%d %s attempt %d awaited=%t released=%t", op.ID, op.State, op.Attempt, op.Awaited, op.Released)
		if op.State == "ready" {
			p += " " + lifeResult(op.Output, op.Err)
		}
		parts = append(parts, p)
	}
	return fmt.Sprintf("t=%dms calls=%d settled=%v ops: %s", s.M.now, s.M.calls[c.Tool.Name], s.Settled, strings.Join(parts, "; "))
}

// System returns the explorable system with its invariants.
func (c LifecycleExploration) System() System[LifeState, LifeAction] {
	return System[LifeState, LifeAction]{
		Name: fmt.Sprintf("lifecycle(calls=%d attempts=%d pending=%d deadline=%dms clock<=%dms)", c.Tool.MaxCalls,
			c.Tool.MaxAttempts, c.MaxPending, c.Tool.DeadlineMs, c.MaxMs),
		Init: []LifeState{c.Initial()}, Next: c.Next, Key: c.Key, Describe: c.Describe,
		Invariants: c.Invariants(),
	}
}

// Invariants are the safety properties of the explored lifecycle.
func (c LifecycleExploration) Invariants() []Invariant[LifeState, LifeAction] {
	t := c.Tool
	return []Invariant[LifeState, LifeAction]{
		{
			Name: "only a requested cancellation is confirmed", Spec: "RUN-076, RUN-132",
			Step: func(from LifeState, a LifeAction, _ LifeState) bool {
				if a.Kind != "confirm" || len(a.Result.Settled) == 0 {
					return true
				}
				op := from.M.ops[a.ID]
				return op != nil && op.State == "cancellation_requested"
			},
		},
		{
			Name: "an operation settles at most once", Spec: "RUN-055, RUN-076, RUN-077, RUN-078, RUN-083, RUN-140",
			Step: func(from LifeState, a LifeAction, _ LifeState) bool {
				seen := slices.Clone(from.Settled)
				for _, st := range a.Result.Settled {
					if slices.Contains(seen, st.ID) {
						return false
					}
					seen = append(seen, st.ID)
				}
				return true
			},
		},
		{
			Name: "a settled operation is ready with exactly one result until collected", Spec: "RUN-053, RUN-054, RUN-140",
			State: func(s LifeState) bool {
				for _, op := range s.M.Ops() {
					settled := slices.Contains(s.Settled, op.ID)
					if settled != (op.State == "ready") || op.State == "ready" && op.Output != "" && op.Err != "" {
						return false
					}
				}
				return true
			},
		},
		{
			Name: "budgets never go negative", Spec: "RUN-033, RUN-051, RUN-100, RUN-101, RUN-114",
			State: func(s LifeState) bool {
				if s.M.calls[t.Name] > t.MaxCalls || len(s.M.ops) > c.MaxPending {
					return false
				}
				for _, op := range s.M.Ops() {
					if op.Attempt < 1 || op.Attempt > t.MaxAttempts || op.CallIndex < 1 || op.CallIndex > t.MaxCalls {
						return false
					}
				}
				return true
			},
		},
		{
			Name: "a remaining deadline is never negative", Spec: "RUN-110, RUN-114",
			Step: func(_ LifeState, a LifeAction, _ LifeState) bool {
				return a.Kind != "claimNext" && a.Kind != "retry" || !a.Result.HasInv || a.Result.Inv.RemainingMs >= -1 && (t.DeadlineMs < 0) == (a.Result.Inv.RemainingMs == -1)
			},
		},
	}
}

// LifecycleAuditCap is the audit capacity of the explored lifecycle.
const LifecycleAuditCap = 1024
