package model

import (
	"fmt"
	"strconv"
)

// This file models the durable life of one workflow operation between the host's ledger
// (chapter 23) and the worker's journal (chapter 12), with the failures a deployment sees: a
// first write that never reaches the worker, a worker that dies before or after its adapter ran,
// a lost answer, a crash while reconciling, and (optionally) a journal that goes back. Its
// liveness property is that every prepared operation settles once the failures stop: the
// recovery rule of WFL-043 is what makes it hold.

// LedgerLife configures the explored operation life.
type LedgerLife struct {
	// Faults bounds the failures the environment injects along a run.
	Faults int
	// Redispatch is the rule of WFL-043: after a worker refused to reconcile a pending
	// operation, the next recovery sends its recorded dispatch. Without it the host only ever
	// reconciles (the reference's own engine leaves the rest to host policy).
	Redispatch bool
	// Rollback lets the worker's journal go back to before it held the key (a restored
	// backup): the case WFL-044 names as unsafe.
	Rollback bool
}

// LedgerLifeState is one state of the explored life.
type LedgerLifeState struct {
	// Host is the operation in the host's ledger: "none" (not prepared), "pending" or
	// "settled" (a worker's terminal answer recorded).
	Host string
	// Refused is the host's durable note that a worker refused to reconcile the key.
	Refused bool
	// Journal is the key in the worker's journal: "absent", "pending" (admitted, the answer
	// not persisted) or "terminal".
	Journal string
	// Effects counts the adapter effects performed under the key.
	Effects int
	// Faults is how many failures may still happen.
	Faults int
}

// LedgerLifeAction is one transition: a host command ("step", "recover") with the worker's
// behaviour and the failure it met, or an environment failure ("rollback").
type LedgerLifeAction struct {
	Kind string
	// Fault names the failure the action met ("" for none).
	Fault string
	// Outcome describes what the host observed.
	Outcome string
}

// String renders the action.
func (a LedgerLifeAction) String() string {
	s := a.Kind
	if a.Fault != "" {
		s += " [" + a.Fault + "]"
	}
	if a.Outcome != "" {
		s += " => " + a.Outcome
	}
	return s
}

// Calm reports whether the action met no failure.
func (a LedgerLifeAction) Calm() bool { return a.Fault == "" }

// Initial is the state before the step: nothing prepared, nothing journaled.
func (c LedgerLife) Initial() LedgerLifeState {
	return LedgerLifeState{Host: "none", Journal: "absent", Faults: c.Faults}
}

// deliverDispatch is the worker handling a dispatch_operation of the key (WRK-040 to WRK-042):
// a new key is persisted pending, the adapter runs and the answer is persisted; a terminal
// record is answered from the journal without the adapter (WRK-041); a pending record is an exact
// duplicate still pending, refused with status 6 and no answer. It returns the state and whether
// an answer was written.
func deliverDispatch(s LedgerLifeState) (LedgerLifeState, bool) {
	switch s.Journal {
	case "absent":
		s.Journal, s.Effects = "terminal", s.Effects+1
		return s, true
	case "terminal":
		return s, true
	}
	return s, false
}

// Next returns every transition from s.
func (c LedgerLife) Next(s LedgerLifeState) []Move[LedgerLifeState, LedgerLifeAction] {
	var out []Move[LedgerLifeState, LedgerLifeAction]
	add := func(n LedgerLifeState, a LedgerLifeAction) {
		if a.Fault != "" {
			n.Faults--
		}
		out = append(out, Move[LedgerLifeState, LedgerLifeAction]{Action: a, Next: n})
	}
	faulty := s.Faults > 0
	switch s.Host {
	case "none":
		// The step: the key is recorded durably, then the frame is written (WFL-001).
		p := s
		p.Host = "pending"
		n, answered := deliverDispatch(p)
		if answered {
			n.Host = "settled"
		}
		add(n, LedgerLifeAction{Kind: "step", Outcome: "answered"})
		if faulty {
			add(p, LedgerLifeAction{Kind: "step", Fault: "first write lost", Outcome: "Channel"})
			early := p
			early.Journal = "pending"
			add(early, LedgerLifeAction{Kind: "step", Fault: "worker died before its adapter ran", Outcome: "Channel"})
			mid := early
			mid.Effects++
			add(mid, LedgerLifeAction{Kind: "step", Fault: "worker died after its adapter ran", Outcome: "Channel"})
			lost, _ := deliverDispatch(p)
			add(lost, LedgerLifeAction{Kind: "step", Fault: "answer lost", Outcome: "Channel"})
		}
	case "pending":
		if c.Redispatch && s.Refused {
			// WFL-043: the refusal is spent durably, then the recorded dispatch is sent.
			p := s
			p.Refused = false
			n, answered := deliverDispatch(p)
			outcome := "no answer, exit 6 (an exact duplicate still pending)"
			if answered {
				n.Host, outcome = "settled", "answered"
			}
			add(n, LedgerLifeAction{Kind: "recover: recorded dispatch", Outcome: outcome})
			if faulty {
				lost, _ := deliverDispatch(p)
				add(lost, LedgerLifeAction{Kind: "recover: recorded dispatch", Fault: "answer lost", Outcome: "Channel"})
			}
			break
		}
		// WFL-041: reconcile under the recorded key on a fresh session.
		switch s.Journal {
		case "absent":
			// JRN-017, WRK-060: UnknownOperation, no answer, exit 5.
			n := s
			n.Refused = c.Redispatch
			add(n, LedgerLifeAction{Kind: "recover: reconcile", Outcome: "refused: no answer, exit 5"})
		default:
			// The adapter reports the effect or its absence; the journal and the host record it.
			n := s
			n.Journal, n.Host = "terminal", "settled"
			add(n, LedgerLifeAction{Kind: "recover: reconcile", Outcome: "answered"})
		}
		if faulty {
			add(s, LedgerLifeAction{Kind: "recover: reconcile", Fault: "worker crashed", Outcome: "no answer, exit 1"})
		}
	}
	if c.Rollback && faulty && s.Journal != "absent" {
		n := s
		n.Journal = "absent"
		add(n, LedgerLifeAction{Kind: "rollback", Fault: "the worker's journal went back", Outcome: "the key is gone, its effect stays"})
	}
	return out
}

// Key is the canonical encoding of a state.
func (c LedgerLife) Key(s LedgerLifeState) string {
	return s.Host + " " + strconv.FormatBool(s.Refused) + " " + s.Journal + " " + strconv.Itoa(s.Effects) + " " + strconv.Itoa(s.Faults)
}

// Describe renders a state for a counterexample.
func (c LedgerLife) Describe(s LedgerLifeState) string {
	return fmt.Sprintf("host %s refused=%t, journal %s, %d effect(s), %d failure(s) left", s.Host, s.Refused, s.Journal, s.Effects, s.Faults)
}

// System returns the explorable life with its safety invariants.
func (c LedgerLife) System() System[LedgerLifeState, LedgerLifeAction] {
	return System[LedgerLifeState, LedgerLifeAction]{
		Name: fmt.Sprintf("ledger life(faults=%d redispatch=%t rollback=%t)", c.Faults, c.Redispatch, c.Rollback),
		Init: []LedgerLifeState{c.Initial()}, Next: c.Next, Key: c.Key, Describe: c.Describe,
		Invariants: []Invariant[LedgerLifeState, LedgerLifeAction]{
			{
				Name: "an operation has at most one effect", Spec: "WFL-043, WFL-044, WRK-041",
				State: func(s LedgerLifeState) bool { return s.Effects <= 1 },
			},
			{
				Name: "the recorded dispatch follows a refused reconciliation", Spec: "WFL-043, WFL-044",
				Step: func(from LedgerLifeState, a LedgerLifeAction, _ LedgerLifeState) bool {
					return a.Kind != "recover: recorded dispatch" || from.Refused
				},
			},
		},
	}
}

// LedgerSettles is the liveness property of the life: every prepared operation eventually
// settles when workers stop failing.
const LedgerSettles = "every prepared operation eventually settles when workers stop failing"

// Settled reports whether no prepared operation is unsettled.
func (s LedgerLifeState) Settled() bool { return s.Host != "pending" }

// Liveness checks LedgerSettles over every reachable state of the life (WFL-043).
func (c LedgerLife) Liveness() *Violation[LedgerLifeState, LedgerLifeAction] {
	return Eventually(c.System(), LedgerSettles, "WFL-043", LedgerLifeAction.Calm, LedgerLifeState.Settled)
}

// Eventually checks a liveness property of sys under the assumption that failures stop: from
// every reachable state (reached by any transitions, failures included), some run of calm
// transitions reaches a goal state. When the calm transitions of a state are deterministic, as
// the host's recovery is, this is "every calm run reaches the goal". The counterexample is a
// shortest trace to a state from which no calm run reaches the goal, followed by its calm run
// until it repeats a state (or stops). It returns nil when the property holds.
func Eventually[S, A any](sys System[S, A], name, spec string, calm func(A) bool, goal func(S) bool) *Violation[S, A] {
	var (
		states []S
		parent []int
		via    []A
		calmTo [][]int // successors by calm transitions
		calmBy [][]A
	)
	index := map[string]int{}
	add := func(s S, from int, a A) int {
		k := sys.Key(s)
		if i, ok := index[k]; ok {
			return i
		}
		index[k] = len(states)
		states, parent, via = append(states, s), append(parent, from), append(via, a)
		calmTo, calmBy = append(calmTo, nil), append(calmBy, nil)
		return len(states) - 1
	}
	var zero A
	for _, s := range sys.Init {
		add(s, -1, zero)
	}
	for i := 0; i < len(states); i++ {
		for _, mv := range sys.Next(states[i]) {
			j := add(mv.Next, i, mv.Action)
			if calm(mv.Action) {
				calmTo[i], calmBy[i] = append(calmTo[i], j), append(calmBy[i], mv.Action)
			}
		}
	}
	// good: the states from which a calm run reaches the goal (a fixpoint over calm edges).
	good := make([]bool, len(states))
	for i, s := range states {
		good[i] = goal(s)
	}
	for changed := true; changed; {
		changed = false
		for i := range states {
			if good[i] {
				continue
			}
			for _, j := range calmTo[i] {
				if good[j] {
					good[i], changed = true, true
					break
				}
			}
		}
	}
	for i := range states {
		if good[i] {
			continue
		}
		// The BFS order makes the trace to i a shortest one.
		var path []int
		for k := i; k >= 0; k = parent[k] {
			path = append([]int{k}, path...)
		}
		descr := sys.Describe
		if descr == nil {
			descr = func(s S) string { return fmt.Sprintf("%+v", s) }
		}
		v := &Violation[S, A]{System: sys.Name, Invariant: name, Spec: spec, descr: descr}
		v.States = append(v.States, states[path[0]])
		for _, k := range path[1:] {
			v.Actions, v.States = append(v.Actions, via[k]), append(v.States, states[k])
		}
		seen := map[int]bool{i: true}
		for k := i; len(calmTo[k]) > 0; {
			a, next := calmBy[k][0], calmTo[k][0]
			v.Actions, v.States = append(v.Actions, a), append(v.States, states[next])
			if seen[next] {
				break
			}
			seen[next], k = true, next
		}
		return v
	}
	return nil
}
