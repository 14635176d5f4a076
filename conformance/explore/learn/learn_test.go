package learn_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/splashv5/conform/conformance/explore/learn"
	"github.com/splashv5/conform/conformance/explore/mealy"
	"github.com/splashv5/conform/conformance/explore/mealy/mealytest"
)

// machineOracle answers from a known machine and counts the words it runs.
func machineOracle(m *mealy.Machine[int, int], runs *atomic.Int64) learn.Oracle[int, int] {
	return learn.Parallel(2, func(_ context.Context, w []int) ([]int, error) {
		runs.Add(1)
		out, ok := m.Run(w)
		if !ok {
			return nil, fmt.Errorf("word %v leaves the alphabet", w)
		}
		return out, nil
	})
}

// perfect is an equivalence oracle that knows the target: the shortest difference, if any.
type perfect struct{ target *mealy.Machine[int, int] }

func (p perfect) Counterexample(_ context.Context, hyp *mealy.Machine[int, int], _ *learn.Queries[int, int]) ([]int, error) {
	w, ok, err := mealy.Distinguish(p.target, hyp)
	if !ok {
		return nil, err
	}
	return w, err
}

func exact(t *testing.T, target, got *mealy.Machine[int, int]) {
	t.Helper()
	if w, ok, err := mealy.Distinguish(target, got); err != nil || ok {
		t.Fatalf("learned machine differs from the target on %v (err %v)", w, err)
	}
	if got.States() != target.States() {
		t.Fatalf("learned %d states, target has %d", got.States(), target.States())
	}
	if !mealy.Equal(got, target.Canonical()) {
		t.Fatal("learned machine is equivalent and minimal but not in the target's canonical form")
	}
}

// Spec: EXP-004 — the learner recovers the exact machine whenever each wrong hypothesis gets a
// counterexample.
func TestLearnsRandomMachinesWithAPerfectTeacher(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for n := 1; n <= 30; n++ {
		inputs := 2 + r.IntN(11)
		target := mealytest.RandomMinimal(r, n, inputs, 2+r.IntN(3))
		var runs atomic.Int64
		got, stats, err := learn.Learn(context.Background(), machineOracle(target, &runs), learn.Config[int, int]{
			Inputs: target.Inputs, Equivalence: perfect{target},
		})
		if err != nil {
			t.Fatalf("n=%d inputs=%d: %v", n, inputs, err)
		}
		exact(t, target, got)
		if int64(stats.Queries) != runs.Load() {
			t.Fatalf("stats count %d queries, the oracle ran %d", stats.Queries, runs.Load())
		}
		if stats.Rounds != stats.Counterexamples+1 {
			t.Fatalf("%d rounds for %d counterexamples", stats.Rounds, stats.Counterexamples)
		}
	}
}

// Spec: EXP-007 — W-method with extra states and random walks as the equivalence oracle.
func TestLearnsRandomMachinesBlackBox(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	sizes := []int{1, 2, 3, 5, 8, 12, 17, 23, 30}
	for _, n := range sizes {
		for _, inputs := range []int{2, 5, 12} {
			if n == 30 && inputs == 12 && testing.Short() {
				continue
			}
			target := mealytest.RandomMinimal(r, n, inputs, 2)
			var runs atomic.Int64
			got, stats, err := learn.Learn(context.Background(), machineOracle(target, &runs), learn.Config[int, int]{
				Inputs: target.Inputs, Batch: 128,
			})
			if err != nil {
				t.Fatalf("n=%d inputs=%d: %v", n, inputs, err)
			}
			exact(t, target, got)
			t.Logf("n=%2d inputs=%2d: %6d queries (%5d for equivalence), %3d rounds, %.1f learning queries per state",
				n, inputs, stats.Queries, stats.EquivalenceQueries, stats.Rounds,
				float64(stats.Queries-stats.EquivalenceQueries)/float64(n))
		}
	}
}

func TestWMethodFindsAHiddenState(t *testing.T) {
	// A combination lock: only the word 0 1 1 0 yields 1 (then stays open). Random walks of
	// length 1 cannot find it; the W-method with enough extra states must.
	lock := mealy.New[int, int]([]int{0, 1}, 5)
	code := []int{0, 1, 1, 0}
	for s := range 4 {
		for i := range 2 {
			next := 0
			if i == code[s] {
				next = s + 1
			} else if i == code[0] {
				next = 1
			}
			out := 0
			if next == 4 {
				out = 1
			}
			lock.Set(s, i, next, out)
		}
	}
	lock.Set(4, 0, 4, 1)
	lock.Set(4, 1, 4, 1)
	min, _ := mealy.Minimize(lock)
	var runs atomic.Int64
	for _, eq := range []learn.Equivalence[int, int]{learn.WMethod[int, int]{Extra: 4}, learn.WpMethod[int, int]{Extra: 4}} {
		got, _, err := learn.Learn(context.Background(), machineOracle(min, &runs), learn.Config[int, int]{
			Inputs: min.Inputs, Equivalence: eq,
		})
		if err != nil {
			t.Fatal(err)
		}
		exact(t, min, got)
	}
	// With no extra state, the first hypothesis (one state, always 0) survives.
	runs.Store(0)
	got, _, err := learn.Learn(context.Background(), machineOracle(min, &runs), learn.Config[int, int]{
		Inputs: min.Inputs, Equivalence: learn.WMethod[int, int]{Extra: 0},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.States() != 1 {
		t.Fatalf("W-method with no extra state learned %d states; the test's premise is wrong", got.States())
	}
}

// Spec: EXP-006 — a system that answers the same word differently is reported, not looped on.
func TestNondeterministicOracleIsReported(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	target := mealytest.RandomMinimal(r, 6, 3, 2)
	var calls atomic.Int64
	flaky := learn.OracleFunc[int, int](func(_ context.Context, words [][]int) ([][]int, error) {
		out := make([][]int, len(words))
		for k, w := range words {
			out[k], _ = target.Run(w)
			// Every seventh answer flips its first output.
			if calls.Add(1)%7 == 0 && len(w) > 0 {
				out[k][0] ^= 1
			}
		}
		return out, nil
	})
	_, _, err := learn.Learn(context.Background(), flaky, learn.Config[int, int]{Inputs: target.Inputs, Budget: 100000})
	if !errors.Is(err, learn.ErrNondeterministic) {
		t.Fatalf("err = %v, want ErrNondeterministic", err)
	}
	var nd *learn.NondeterminismError[int, int]
	if errors.As(err, &nd) {
		if slices.Equal(nd.First, nd.Second) || len(nd.First) != len(nd.Word) {
			t.Fatalf("report %+v does not show two different answers to the word", nd)
		}
	}
}

func TestBudgetStopsLearning(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	target := mealytest.RandomMinimal(r, 20, 6, 2)
	var runs atomic.Int64
	_, stats, err := learn.Learn(context.Background(), machineOracle(target, &runs), learn.Config[int, int]{Inputs: target.Inputs, Budget: 50})
	if !errors.Is(err, learn.ErrBudget) {
		t.Fatalf("err = %v, want ErrBudget", err)
	}
	if stats.Queries > 50 || runs.Load() > 50 {
		t.Fatalf("%d queries (%d runs) with a budget of 50", stats.Queries, runs.Load())
	}
}

func TestOracleErrorsAndWrongLengthsStopLearning(t *testing.T) {
	boom := errors.New("boom")
	_, _, err := learn.Learn(context.Background(), learn.Parallel(3, func(context.Context, []int) ([]int, error) { return nil, boom }),
		learn.Config[int, int]{Inputs: []int{0, 1}})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	short := learn.OracleFunc[int, int](func(_ context.Context, words [][]int) ([][]int, error) {
		return make([][]int, len(words)), nil
	})
	if _, _, err := learn.Learn(context.Background(), short, learn.Config[int, int]{Inputs: []int{0, 1}}); !errors.Is(err, learn.ErrOracle) {
		t.Fatalf("err = %v, want ErrOracle", err)
	}
}

func TestCacheAnswersPrefixesAndRepeats(t *testing.T) {
	m := mealytest.RandomMinimal(rand.New(rand.NewPCG(1, 1)), 4, 2, 2)
	var runs atomic.Int64
	q := learn.NewQueries(machineOracle(m, &runs), 0, 0)
	words := [][]int{{0, 1, 1}, {0, 1}, {0}, {0, 1, 1}, {1}}
	got, err := q.Ask(context.Background(), words)
	if err != nil {
		t.Fatal(err)
	}
	for k, w := range words {
		want, _ := m.Run(w)
		if !slices.Equal(got[k], want) {
			t.Fatalf("answer to %v = %v, want %v", w, got[k], want)
		}
	}
	if runs.Load() != 2 {
		t.Fatalf("%d words sent, want 2 ([0 1 1] and [1])", runs.Load())
	}
	if _, err := q.Ask(context.Background(), [][]int{{0, 1}, {1}}); err != nil || runs.Load() != 2 {
		t.Fatalf("known words were asked again (%d runs, err %v)", runs.Load(), err)
	}
}

// BenchmarkLearn reports membership queries per learned state for 20-state machines over 8
// inputs, and the equivalence queries separately.
func BenchmarkLearn(b *testing.B) {
	r := rand.New(rand.NewPCG(19, 20))
	var learning, equivalence, states int
	for b.Loop() {
		target := mealytest.RandomMinimal(r, 20, 8, 2)
		var runs atomic.Int64
		_, stats, err := learn.Learn(context.Background(), machineOracle(target, &runs), learn.Config[int, int]{Inputs: target.Inputs})
		if err != nil {
			b.Fatal(err)
		}
		learning += stats.Queries - stats.EquivalenceQueries
		equivalence += stats.EquivalenceQueries
		states += target.States()
	}
	b.ReportMetric(float64(learning)/float64(states), "queries/state")
	b.ReportMetric(float64(equivalence)/float64(states), "eqqueries/state")
}

// withSink returns target extended by a sink: from every state, input 0 of a few states ends
// the run with output 100, after which every output is 101.
func withSink(target *mealy.Machine[int, int], r *rand.Rand) *mealy.Machine[int, int] {
	m := target.Clone()
	sink := m.AddState()
	for i := range m.Inputs {
		m.Set(sink, i, sink, 101)
	}
	for s := range target.States() {
		for i := range m.Inputs {
			if r.IntN(3) == 0 {
				m.Set(s, i, sink, 100)
			}
		}
	}
	min, _ := mealy.Minimize(m)
	return min
}

func sinkOf(o int) (int, bool) { return 101, o == 100 || o == 101 }

func TestSinkDeclarationSavesQueriesAndStaysExact(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 30))
	for _, n := range []int{3, 8, 15} {
		target := withSink(mealytest.RandomMinimal(r, n, 6, 2), r)
		var plain, sunk atomic.Int64
		got, s1, err := learn.Learn(context.Background(), machineOracle(target, &plain), learn.Config[int, int]{Inputs: target.Inputs})
		if err != nil {
			t.Fatal(err)
		}
		exact(t, target, got)
		got, s2, err := learn.Learn(context.Background(), machineOracle(target, &sunk), learn.Config[int, int]{Inputs: target.Inputs, Sink: sinkOf})
		if err != nil {
			t.Fatal(err)
		}
		exact(t, target, got)
		if s2.Queries >= s1.Queries {
			t.Fatalf("n=%d: %d queries with the sink declared, %d without", n, s2.Queries, s1.Queries)
		}
		t.Logf("n=%d (+sink): %d queries without the declaration, %d with it", n, s1.Queries, s2.Queries)
	}
}

func TestSinkContradictionIsReported(t *testing.T) {
	// The system answers 100 and then keeps answering 0: not a sink.
	liar := learn.OracleFunc[int, int](func(_ context.Context, words [][]int) ([][]int, error) {
		out := make([][]int, len(words))
		for k, w := range words {
			out[k] = make([]int, len(w))
			out[k][0] = 100
		}
		return out, nil
	})
	_, _, err := learn.Learn(context.Background(), liar, learn.Config[int, int]{Inputs: []int{0, 1}, Sink: sinkOf})
	if !errors.Is(err, learn.ErrOracle) {
		t.Fatalf("err = %v, want ErrOracle", err)
	}
}

// Spec: EXP-007 — with k extra states, the W- and Wp-methods find a counterexample to every
// hypothesis that differs from a system with at most k more states.
func TestWAndWpMethodsAreComplete(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for trial := range 150 {
		k := r.IntN(3)
		n := 1 + r.IntN(6)
		inputs := 2 + r.IntN(2)
		target := mealytest.RandomMinimal(r, n+r.IntN(k+1), inputs, 2)
		hyp := mealytest.RandomMinimal(r, n, inputs, 2)
		if r.IntN(3) == 0 {
			// A near miss: the target with one output changed, minimized.
			h := target.Clone()
			h.Out[r.IntN(h.States())][r.IntN(inputs)] ^= 1
			hyp, _ = mealy.Minimize(h)
			if hyp.States()+k < target.States() {
				continue
			}
		}
		_, differs, _ := mealy.Distinguish(target, hyp)
		for _, eq := range []learn.Equivalence[int, int]{learn.WMethod[int, int]{Extra: k}, learn.WpMethod[int, int]{Extra: k}} {
			var runs atomic.Int64
			q := learn.NewQueries(machineOracle(target, &runs), 0, 0)
			cex, err := eq.Counterexample(context.Background(), hyp, q)
			if err != nil {
				t.Fatal(err)
			}
			if differs != (cex != nil) {
				t.Fatalf("trial %d, %T k=%d: target %d states, hypothesis %d: differs=%v, counterexample %v",
					trial, eq, k, target.States(), hyp.States(), differs, cex)
			}
			if cex != nil {
				a, _ := target.Run(cex)
				b, _ := hyp.Run(cex)
				if slices.Equal(a, b) {
					t.Fatalf("trial %d: %v is no counterexample", trial, cex)
				}
			}
		}
	}
}

// Spec: EXP-007 — the report states the method, the extra states, the walks and their seed.
func TestEquivalenceDescriptions(t *testing.T) {
	got := fmt.Sprint(learn.DefaultEquivalence[int, int]())
	want := "Wp-method with 1 extra state, then 2000 random walks of up to 20 inputs, seed 1"
	if got != want {
		t.Fatalf("%q, want %q", got, want)
	}
	if got := fmt.Sprint(learn.WMethod[int, int]{Extra: 2}); got != "W-method with 2 extra states" {
		t.Fatalf("%q", got)
	}
}
