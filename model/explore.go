package model

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
)

// This file is a small explicit-state model checker. It explores a System breadth first from
// its initial states, keeps every visited state under a canonical key, checks every invariant
// on every state and every transition it discovers, and on the first violation returns the
// shortest trace that reaches it. Breadth-first order is what makes that trace shortest.

// Move is one enabled transition: the action taken and the state it leads to.
type Move[S, A any] struct {
	Action A
	Next   S
}

// Invariant is one property of a System. Spec names the requirement IDs the property checks.
// Exactly one of State, Step and Final is set: State must hold in every reachable state, Step
// on every transition, and Final in every reachable state that has no transition at all (so a
// run that stops anywhere else is reported as a deadlock).
type Invariant[S, A any] struct {
	Name  string
	Spec  string
	State func(S) bool
	Step  func(from S, a A, to S) bool
	Final func(S) bool
}

// System is a finite transition system for Explore.
type System[S, A any] struct {
	Name string
	Init []S
	// Next returns every transition enabled in a state. It must not change its argument.
	Next func(S) []Move[S, A]
	// Key returns the canonical encoding of a state: two states with the same key are the
	// same state.
	Key func(S) string
	// Describe renders a state in a counterexample; nil uses %+v.
	Describe   func(S) string
	Invariants []Invariant[S, A]
	// MaxDepth bounds the length of explored traces (0: unbounded). States at the bound are
	// checked but not expanded.
	MaxDepth int
	// MaxStates stops the search once that many states are known (0: unbounded).
	MaxStates int
}

// Exploration reports an exploration.
type Exploration[S, A any] struct {
	// States is the number of distinct states reached; Transitions the number of transitions
	// taken from expanded states (including those into known states).
	States, Transitions int
	// Depth is the length of the longest shortest trace to a reached state.
	Depth int
	// Complete is true when no bound cut the search: every reachable state was explored.
	Complete bool
	// Violation is the first invariant violation found, with its shortest trace, or nil.
	Violation *Violation[S, A]

	states   []S
	parent   []int32
	action   []A
	depth    []int32
	leaf     []bool
	move     []int32 // index of the move in its parent's Next list
	moves    []int32 // number of moves of an expanded state
	next     func(S) []Move[S, A]
	maxDepth int
	descr    func(S) string
	sysName  string
}

// Violation is a counterexample: the broken invariant and a shortest trace to it.
type Violation[S, A any] struct {
	System    string
	Invariant string
	Spec      string
	// Actions are the transitions from States[0], an initial state; States[i+1] follows
	// Actions[i]. For a step invariant the last action is the offending transition.
	Actions []A
	States  []S
	descr   func(S) string
}

// String renders the counterexample, one numbered line per step with the state after it.
func (v *Violation[S, A]) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: invariant %q (%s) violated after %d steps\n", v.System, v.Invariant, v.Spec, len(v.Actions))
	fmt.Fprintf(&b, "  0. initial\n       %s\n", v.descr(v.States[0]))
	for i, a := range v.Actions {
		fmt.Fprintf(&b, "  %d. %v\n       %s\n", i+1, a, v.descr(v.States[i+1]))
	}
	return b.String()
}

// expansion is what a worker computes for one state: its moves, their successors' keys, the
// first step invariant each breaks (-1 for none) and, without moves, the first final invariant
// the state breaks.
type expansion[S, A any] struct {
	moves []Move[S, A]
	keys  []string
	step  []int
	final int
}

// exploreBatch is how many states the workers expand before the search merges their results.
const exploreBatch = 4096

// Explore runs the breadth-first search of sys. The expansion of states (Next, Key and the
// invariants) runs on all cores, batch by batch, and the results are merged in the order of the
// sequential search, so the outcome (state numbering, counts, the counterexample) is the same
// on any number of cores.
func Explore[S, A any](sys System[S, A]) *Exploration[S, A] {
	descr := sys.Describe
	if descr == nil {
		descr = func(s S) string { return fmt.Sprintf("%+v", s) }
	}
	r := &Exploration[S, A]{Complete: true, descr: descr, sysName: sys.Name, next: sys.Next, maxDepth: sys.MaxDepth}
	seen := map[string]int32{}
	add := func(s S, k string, parent int32, a A, move int, depth int32) (int32, bool) {
		if i, ok := seen[k]; ok {
			return i, false
		}
		i := int32(len(r.states))
		seen[k] = i
		r.states = append(r.states, s)
		r.parent = append(r.parent, parent)
		r.action = append(r.action, a)
		r.depth = append(r.depth, depth)
		r.leaf = append(r.leaf, true)
		r.move = append(r.move, int32(move))
		r.moves = append(r.moves, 0)
		if int(depth) > r.Depth {
			r.Depth = int(depth)
		}
		return i, true
	}
	stateBreaks := func(s S) int {
		for n, inv := range sys.Invariants {
			if inv.State != nil && !inv.State(s) {
				return n
			}
		}
		return -1
	}
	var zero A
	for _, s := range sys.Init {
		if i, fresh := add(s, sys.Key(s), -1, zero, -1, 0); fresh {
			if n := stateBreaks(s); n >= 0 {
				r.Violation = r.violation(sys.Invariants[n].Name, sys.Invariants[n].Spec, i, nil)
				return r.finish()
			}
		}
	}
	expand := func(from S) expansion[S, A] {
		e := expansion[S, A]{moves: sys.Next(from), final: -1}
		e.keys, e.step = make([]string, len(e.moves)), make([]int, len(e.moves))
		for m, mv := range e.moves {
			e.keys[m], e.step[m] = sys.Key(mv.Next), -1
			for n, inv := range sys.Invariants {
				if inv.Step != nil && !inv.Step(from, mv.Action, mv.Next) {
					e.step[m] = n
					break
				}
			}
		}
		if len(e.moves) == 0 {
			for n, inv := range sys.Invariants {
				if inv.Final != nil && !inv.Final(from) {
					e.final = n
					break
				}
			}
		}
		return e
	}
	workers := runtime.GOMAXPROCS(0)
	for head := 0; head < len(r.states); {
		end := min(len(r.states), head+exploreBatch)
		batch := make([]expansion[S, A], end-head)
		parallel(workers, len(batch), func(k int) {
			if i := head + k; sys.MaxDepth == 0 || int(r.depth[i]) < sys.MaxDepth {
				batch[k] = expand(r.states[i])
			}
		})
		firstFresh := len(r.states)
		var stop func()
		for k := 0; k < len(batch) && stop == nil; k++ {
			i := int32(head + k)
			if sys.MaxDepth > 0 && int(r.depth[i]) >= sys.MaxDepth {
				r.Complete = false
				continue
			}
			e := batch[k]
			r.moves[i] = int32(len(e.moves))
			if e.final >= 0 {
				stop = func() { r.Violation = r.violation(sys.Invariants[e.final].Name, sys.Invariants[e.final].Spec, i, nil) }
				break
			}
			for m, mv := range e.moves {
				r.Transitions++
				if n := e.step[m]; n >= 0 {
					stop = func() { r.Violation = r.violation(sys.Invariants[n].Name, sys.Invariants[n].Spec, i, &mv) }
					break
				}
				if sys.MaxStates > 0 && len(r.states) >= sys.MaxStates {
					if _, known := seen[e.keys[m]]; !known {
						r.Complete = false
						continue
					}
				}
				if _, fresh := add(mv.Next, e.keys[m], i, mv.Action, m, r.depth[i]+1); fresh {
					r.leaf[i] = false
				}
			}
		}
		// The states this batch added, checked on all cores; the first broken one in the
		// sequential order comes before any violation found while merging.
		fresh := r.states[firstFresh:]
		broken := make([]int, len(fresh))
		parallel(workers, len(fresh), func(k int) { broken[k] = stateBreaks(fresh[k]) })
		for k, n := range broken {
			if n >= 0 {
				j := int32(firstFresh + k)
				r.Violation = r.violation(sys.Invariants[n].Name, sys.Invariants[n].Spec, j, nil)
				return r.finish()
			}
		}
		if stop != nil {
			stop()
			return r.finish()
		}
		head = end
	}
	return r.finish()
}

// parallel calls f(0) to f(n-1) on up to workers goroutines.
func parallel(workers, n int, f func(int)) {
	if workers <= 1 || n < 64 {
		for k := range n {
			f(k)
		}
		return
	}
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += chunk {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			for k := lo; k < hi; k++ {
				f(k)
			}
		}(lo, min(n, lo+chunk))
	}
	wg.Wait()
}

func (r *Exploration[S, A]) finish() *Exploration[S, A] {
	r.States = len(r.states)
	if r.Violation != nil {
		r.Complete = false
	}
	return r
}

func (r *Exploration[S, A]) violation(name, spec string, at int32, last *Move[S, A]) *Violation[S, A] {
	actions, states := r.path(at)
	if last != nil {
		actions = append(actions, last.Action)
		states = append(states, last.Next)
	}
	return &Violation[S, A]{System: r.sysName, Invariant: name, Spec: spec, Actions: actions, States: states, descr: r.descr}
}

// path returns the actions and states of the shortest trace to state i.
func (r *Exploration[S, A]) path(i int32) ([]A, []S) {
	n := int(r.depth[i])
	actions := make([]A, n)
	states := make([]S, n+1)
	for k := n; ; k-- {
		states[k] = r.states[i]
		if k == 0 {
			break
		}
		actions[k-1] = r.action[i]
		i = r.parent[i]
	}
	return actions, states
}

// Traces returns the shortest traces to the leaves of the search tree (states that were
// reached first through no other state), at most limit of them (0: all), spread evenly over the
// leaves in discovery order so that a sample is deterministic. Every reached state lies on at
// least one of the full set of traces, so replaying them all visits every state.
func (r *Exploration[S, A]) Traces(limit int) [][]A {
	var leaves []int32
	for i, l := range r.leaf {
		if l {
			leaves = append(leaves, int32(i))
		}
	}
	if limit > 0 && len(leaves) > limit {
		picked := make([]int32, 0, limit)
		for k := 0; k < limit; k++ {
			picked = append(picked, leaves[k*len(leaves)/limit])
		}
		leaves = picked
	}
	out := make([][]A, 0, len(leaves))
	for _, i := range leaves {
		a, _ := r.path(i)
		out = append(out, a)
	}
	return out
}

// EdgeTraces returns, besides the traces of Traces(0), one trace for every explored transition
// that is not on them: the shortest trace to its source followed by the transition. Replaying
// them all takes every explored transition at least once. At most limit traces are returned
// (0: all), spread evenly over that list, so a sample is deterministic. System.Next must list
// moves in a deterministic order.
func (r *Exploration[S, A]) EdgeTraces(limit int) [][]A {
	leaves := r.Traces(0)
	tree := map[[2]int32]bool{}
	children := make([]int32, len(r.states))
	for j, p := range r.parent {
		if p >= 0 {
			tree[[2]int32{p, r.move[j]}] = true
			children[p]++
		}
	}
	total := len(leaves)
	for i := range r.states {
		total += int(r.moves[i] - children[i])
	}
	picks := make([]int, 0, total)
	for k := range total {
		if limit > 0 && total > limit {
			if k >= limit {
				break
			}
			picks = append(picks, k*total/limit)
		} else {
			picks = append(picks, k)
		}
	}
	out := make([][]A, 0, len(picks))
	p := 0
	for ; p < len(picks) && picks[p] < len(leaves); p++ {
		out = append(out, leaves[picks[p]])
	}
	base := len(leaves)
	for i := range r.states {
		n := int(r.moves[i] - children[i])
		if p >= len(picks) {
			break
		}
		if picks[p] >= base+n {
			base += n
			continue
		}
		prefix, _ := r.path(int32(i))
		k := base
		for m, mv := range r.next(r.states[i]) {
			if tree[[2]int32{int32(i), int32(m)}] {
				continue
			}
			for p < len(picks) && picks[p] == k {
				out = append(out, append(prefix[:len(prefix):len(prefix)], mv.Action))
				p++
			}
			k++
		}
		base += n
	}
	return out
}

// Summary is a one-line report of the exploration.
func (r *Exploration[S, A]) Summary() string {
	bound := "complete"
	if !r.Complete {
		bound = "bounded"
	}
	return fmt.Sprintf("%s: %d states, %d transitions, depth %d (%s)", r.sysName, r.States, r.Transitions, r.Depth, bound)
}

// expanded reports whether state i's transitions were explored.
func (r *Exploration[S, A]) expanded(i int) bool {
	return r.maxDepth == 0 || int(r.depth[i]) < r.maxDepth
}

// eachTransition calls f with the index of every expanded state, the label of the transition
// that first reached it ("" for an initial state), and each of its explored moves in order.
func (r *Exploration[S, A]) eachTransition(label func(A) string, f func(i int, in string, m int, mv Move[S, A])) {
	for i := range r.states {
		if !r.expanded(i) {
			continue
		}
		in := ""
		if r.parent[i] >= 0 {
			in = label(r.action[i])
		}
		for m, mv := range r.next(r.states[i]) {
			f(i, in, m, mv)
		}
	}
}

// Coverage counts the explored transitions per label: label names a transition's kind (its
// action and outcome, say), so that a kind the model defines but the search never took shows
// up as a missing or zero entry.
func (r *Exploration[S, A]) Coverage(label func(A) string) map[string]int {
	out := map[string]int{}
	r.eachTransition(label, func(_ int, _ string, _ int, mv Move[S, A]) { out[label(mv.Action)]++ })
	return out
}

// PairTraces returns, for every pair of transition labels (the transition that first reached
// a state, then one leaving it) that some explored transition covers, the first such
// transition's trace: the shortest trace to its source followed by it. Replaying them takes
// every kind of transition after every kind of transition that leads to it, in far fewer
// traces than EdgeTraces.
func (r *Exploration[S, A]) PairTraces(label func(A) string) [][]A {
	seen := map[[2]string]bool{}
	var out [][]A
	r.eachTransition(label, func(i int, in string, _ int, mv Move[S, A]) {
		p := [2]string{in, label(mv.Action)}
		if seen[p] {
			return
		}
		seen[p] = true
		prefix, _ := r.path(int32(i))
		out = append(out, append(prefix[:len(prefix):len(prefix)], mv.Action))
	})
	return out
}
