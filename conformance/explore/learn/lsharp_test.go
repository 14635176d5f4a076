package learn_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/splashv5/conform/conformance/explore/learn"
	"github.com/splashv5/conform/conformance/explore/mealy"
	"github.com/splashv5/conform/conformance/explore/mealy/mealytest"
)

// Spec: EXP-004 — L# recovers the exact machine too.
func TestLSharpLearnsRandomMachines(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for n := 1; n <= 30; n++ {
		inputs := 2 + r.IntN(11)
		target := mealytest.RandomMinimal(r, n, inputs, 2+r.IntN(2))
		var runs atomic.Int64
		got, stats, err := learn.LearnLSharp(context.Background(), machineOracle(target, &runs), learn.Config[int, int]{
			Inputs: target.Inputs, Equivalence: perfect{target},
		})
		if err != nil {
			t.Fatalf("n=%d inputs=%d: %v", n, inputs, err)
		}
		exact(t, target, got)
		if int64(stats.Queries) != runs.Load() {
			t.Fatalf("stats count %d queries, the oracle ran %d", stats.Queries, runs.Load())
		}
	}
	for _, n := range []int{2, 7, 15, 30} {
		for _, inputs := range []int{2, 5, 12} {
			target := mealytest.RandomMinimal(r, n, inputs, 2)
			var a, b atomic.Int64
			got, s1, err := learn.LearnLSharp(context.Background(), machineOracle(target, &a), learn.Config[int, int]{Inputs: target.Inputs})
			if err != nil {
				t.Fatalf("n=%d inputs=%d: %v", n, inputs, err)
			}
			exact(t, target, got)
			_, s2, err := learn.Learn(context.Background(), machineOracle(target, &b), learn.Config[int, int]{Inputs: target.Inputs})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("n=%2d inputs=%2d: L# %5d learning + %5d equivalence queries; L* %5d + %5d",
				n, inputs, s1.Queries-s1.EquivalenceQueries, s1.EquivalenceQueries, s2.Queries-s2.EquivalenceQueries, s2.EquivalenceQueries)
		}
	}
}

func TestLSharpFindsTheLockAndHandlesSinks(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	for _, n := range []int{3, 8, 15} {
		target := withSink(mealytest.RandomMinimal(r, n, 6, 2), r)
		var runs atomic.Int64
		got, _, err := learn.LearnLSharp(context.Background(), machineOracle(target, &runs), learn.Config[int, int]{Inputs: target.Inputs, Sink: sinkOf})
		if err != nil {
			t.Fatal(err)
		}
		exact(t, target, got)
	}
	// A long combination lock needs counterexample processing.
	code := []int{1, 0, 0, 1, 1, 0, 1}
	lock := mealy.New[int, int]([]int{0, 1}, len(code)+1)
	for s := range code {
		for i := range 2 {
			next, out := 0, 0
			if i == code[s] {
				next = s + 1
			}
			if next == len(code) {
				out = 1
			}
			lock.Set(s, i, next, out)
		}
	}
	lock.Set(len(code), 0, len(code), 1)
	lock.Set(len(code), 1, 0, 0)
	min, _ := mealy.Minimize(lock)
	var runs atomic.Int64
	got, stats, err := learn.LearnLSharp(context.Background(), machineOracle(min, &runs), learn.Config[int, int]{Inputs: min.Inputs, Equivalence: perfect{min}})
	if err != nil {
		t.Fatal(err)
	}
	exact(t, min, got)
	if stats.Counterexamples == 0 {
		t.Fatal("the lock was learned without a counterexample; the test's premise is wrong")
	}
}

// Spec: EXP-006
func TestLSharpReportsNondeterminism(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	target := mealytest.RandomMinimal(r, 6, 3, 2)
	var calls atomic.Int64
	flaky := learn.OracleFunc[int, int](func(_ context.Context, words [][]int) ([][]int, error) {
		out := make([][]int, len(words))
		for k, w := range words {
			out[k], _ = target.Run(w)
			if calls.Add(1)%5 == 0 && len(w) > 0 {
				out[k][0] ^= 1
			}
		}
		return out, nil
	})
	_, _, err := learn.LearnLSharp(context.Background(), flaky, learn.Config[int, int]{Inputs: target.Inputs, Budget: 100000})
	if !errors.Is(err, learn.ErrNondeterministic) {
		t.Fatalf("err = %v, want ErrNondeterministic", err)
	}
}

// BenchmarkLearnLSharp reports L#'s queries per learned state on the machines of
// BenchmarkLearn.
func BenchmarkLearnLSharp(b *testing.B) {
	r := rand.New(rand.NewPCG(19, 20))
	var learning, equivalence, states int
	for b.Loop() {
		target := mealytest.RandomMinimal(r, 20, 8, 2)
		var runs atomic.Int64
		_, stats, err := learn.LearnLSharp(context.Background(), machineOracle(target, &runs), learn.Config[int, int]{Inputs: target.Inputs})
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
