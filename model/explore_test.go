package model_test

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/splashv5/conform/model"
)

// counterState is two processes that each add one to a shared counter by a read and a later
// write: the textbook lost update.
type counterState struct {
	Shared int
	PC     [2]int // 0 before the read, 1 read, 2 written
	Local  [2]int
}

func counterSystem(atomic bool) model.System[counterState, string] {
	return model.System[counterState, string]{
		Name: "counter",
		Init: []counterState{{}},
		Next: func(s counterState) []model.Move[counterState, string] {
			var out []model.Move[counterState, string]
			for p := range 2 {
				n := s
				switch s.PC[p] {
				case 0:
					if atomic {
						n.Shared++
						n.PC[p] = 2
					} else {
						n.Local[p] = s.Shared
						n.PC[p] = 1
					}
				case 1:
					n.Shared = s.Local[p] + 1
					n.PC[p] = 2
				default:
					continue
				}
				out = append(out, model.Move[counterState, string]{Action: fmt.Sprintf("p%d step", p), Next: n})
			}
			return out
		},
		Key: func(s counterState) string { return fmt.Sprint(s) },
		Invariants: []model.Invariant[counterState, string]{{
			Name: "no lost update",
			Spec: "toy",
			State: func(s counterState) bool {
				done := 0
				for _, pc := range s.PC {
					if pc == 2 {
						done++
					}
				}
				return done < 2 || s.Shared == 2
			},
		}},
	}
}

// The explorer visits every state of a finite system and finds nothing when the property
// holds; with the race it reports a shortest counterexample.
func TestExplorerFindsShortestCounterexample(t *testing.T) {
	ok := model.Explore(counterSystem(true))
	if ok.Violation != nil || !ok.Complete {
		t.Fatalf("atomic counter: %v %v", ok.Violation, ok.Summary())
	}
	// States: each process 0 or 2 -> 4 distinct states (shared follows).
	if ok.States != 4 || ok.Transitions != 4 {
		t.Fatalf("atomic counter: %s", ok.Summary())
	}
	bad := model.Explore(counterSystem(false))
	if bad.Violation == nil {
		t.Fatal("the lost update was not found")
	}
	v := bad.Violation
	if len(v.Actions) != 4 || len(v.States) != 5 {
		t.Fatalf("trace of %d steps, want the shortest (4):\n%s", len(v.Actions), v)
	}
	text := v.String()
	for _, want := range []string{`invariant "no lost update" (toy) violated after 4 steps`, "0. initial", "4. p"} {
		if !strings.Contains(text, want) {
			t.Fatalf("counterexample lacks %q:\n%s", want, text)
		}
	}
}

// A step invariant sees the transition itself, and a depth bound stops the search without
// claiming completeness.
func TestExplorerStepInvariantAndBounds(t *testing.T) {
	sys := counterSystem(false)
	sys.Invariants = []model.Invariant[counterState, string]{{
		Name: "p1 never writes", Spec: "toy",
		Step: func(from counterState, a string, to counterState) bool { return !(from.PC[1] == 1 && to.PC[1] == 2) },
	}}
	r := model.Explore(sys)
	if r.Violation == nil || len(r.Violation.Actions) != 2 || r.Violation.Actions[1] != "p1 step" {
		t.Fatalf("step violation: %v", r.Violation)
	}
	// A final invariant is checked where no transition is left.
	sys.Invariants = []model.Invariant[counterState, string]{{
		Name: "ends at 2", Spec: "toy", Final: func(s counterState) bool { return s.Shared == 2 },
	}}
	r = model.Explore(sys)
	if r.Violation == nil || r.Violation.States[len(r.Violation.States)-1].Shared != 1 || len(r.Violation.Actions) != 4 {
		t.Fatalf("final violation: %v", r.Violation)
	}
	sys.Invariants = nil
	sys.MaxDepth = 2
	r = model.Explore(sys)
	if r.Complete || r.Depth != 2 {
		t.Fatalf("depth bound: %s", r.Summary())
	}
	sys.MaxDepth, sys.MaxStates = 0, 3
	r = model.Explore(sys)
	if r.Complete || r.States != 3 {
		t.Fatalf("state bound: %s", r.Summary())
	}
	// Every state lies on a replayed trace.
	full := model.Explore(counterSystem(false))
	visited := map[string]bool{}
	for _, tr := range full.Traces(0) {
		s := counterSystem(false).Init[0]
		visited[fmt.Sprint(s)] = true
		for _, a := range tr {
			for _, mv := range counterSystem(false).Next(s) {
				if mv.Action == a {
					s = mv.Next
					break
				}
			}
			visited[fmt.Sprint(s)] = true
		}
	}
	if len(visited) != full.States {
		t.Fatalf("traces visit %d of %d states", len(visited), full.States)
	}
	if got := len(full.Traces(2)); got != 2 {
		t.Fatalf("sample of 2 traces has %d", got)
	}
}

// explorations caches explorations shared by the exhaustive and the replay tests.
var explorations sync.Map // name -> *exploration

type exploration struct {
	once sync.Once
	r    any
}

// explore returns the exploration of sys, computed once per test binary under name, also when
// parallel tests ask for it at the same time.
func explore[S, A any](name string, sys func() model.System[S, A]) *model.Exploration[S, A] {
	e, _ := explorations.LoadOrStore(name, &exploration{})
	x := e.(*exploration)
	x.once.Do(func() { x.r = model.Explore(sys()) })
	return x.r.(*model.Exploration[S, A])
}

// soak reports whether the larger bounds apply.
func soak() bool { return os.Getenv("SPLASH_SOAK") != "" }

// reportExploration logs the counts of an exploration and fails on a violation or a bound
// that cut the search.
func reportExploration[S, A any](t *testing.T, r *model.Exploration[S, A]) {
	t.Helper()
	t.Log(r.Summary())
	if r.Violation != nil {
		t.Fatalf("%s", r.Violation)
	}
	if !r.Complete {
		t.Fatalf("the bound cut the search: %s", r.Summary())
	}
}

// expectCaught checks that a negative control is caught by the named invariant and that its
// counterexample reads as a trace.
func expectCaught[S, A any](t *testing.T, r *model.Exploration[S, A], invariant string) {
	t.Helper()
	if r.Violation == nil {
		t.Fatalf("the broken transition was not caught: %s", r.Summary())
	}
	text := r.Violation.String()
	t.Logf("caught as expected:\n%s", text)
	if r.Violation.Invariant != invariant {
		t.Fatalf("caught by %q, want %q:\n%s", r.Violation.Invariant, invariant, text)
	}
	if !strings.Contains(text, "0. initial") || len(r.Violation.Actions) == 0 {
		t.Fatalf("unreadable counterexample:\n%s", text)
	}
}

// Edge traces take every explored transition.
func TestExplorerEdgeTraces(t *testing.T) {
	sys := counterSystem(false)
	sys.Invariants = nil
	full := model.Explore(sys)
	type edge struct {
		from string
		a    string
	}
	taken := map[edge]bool{}
	for _, tr := range full.EdgeTraces(0) {
		s := sys.Init[0]
		for _, a := range tr {
			for _, mv := range sys.Next(s) {
				if mv.Action == a {
					taken[edge{fmt.Sprint(s), a}] = true
					s = mv.Next
					break
				}
			}
		}
	}
	if len(taken) != full.Transitions {
		t.Fatalf("edge traces take %d of %d transitions", len(taken), full.Transitions)
	}
}

// broken returns sys with every transition passed through mutate: a negative control.
func broken[S, A any](sys model.System[S, A], mutate func(s S, mv model.Move[S, A]) model.Move[S, A]) model.System[S, A] {
	next := sys.Next
	sys.Next = func(s S) []model.Move[S, A] {
		moves := next(s)
		for i, mv := range moves {
			moves[i] = mutate(s, mv)
		}
		return moves
	}
	return sys
}

// walk follows trace through sys from its first initial state, matching each action to a
// transition by input, and calls step with the action and the states around it.
func walk[S, A any](t *testing.T, sys model.System[S, A], trace []A, input func(A) string, step func(a A, from, to S)) {
	t.Helper()
	s := sys.Init[0]
	for i, a := range trace {
		var next *S
		for _, mv := range sys.Next(s) {
			if input(mv.Action) == input(a) {
				next = &mv.Next
				break
			}
		}
		if next == nil {
			t.Fatalf("step %d %v is not a model transition", i+1, a)
		}
		t.Logf("step %d: %v", i+1, a)
		step(a, s, *next)
		s = *next
	}
}

// replayEach replays every trace in a subtest of its own and stops at the first failure.
func replayEach[A any](t *testing.T, traces [][]A, replay func(t *testing.T, trace []A)) {
	t.Helper()
	for _, tr := range traces {
		if !t.Run("", func(t *testing.T) { replay(t, tr) }) {
			return
		}
	}
}

// replayed returns the traces of r to replay: in CI one for every new pair of transition
// labels (PairTraces); under SPLASH_SOAK=1 those and every explored transition (EdgeTraces), or,
// with soakLimit > 0, an even sample of soakLimit of them where every transition would take
// hours.
func replayed[S, A any](r *model.Exploration[S, A], label func(A) string, soakLimit int) [][]A {
	pairs := r.PairTraces(label)
	if !soak() {
		return pairs
	}
	return append(pairs, r.EdgeTraces(soakLimit)...)
}
