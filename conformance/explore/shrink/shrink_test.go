package shrink_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/splashv5/conform/conformance/explore/shrink"
)

func containsAll(need ...int) func([]int) bool {
	return func(s []int) bool {
		for _, x := range need {
			if !slices.Contains(s, x) {
				return false
			}
		}
		return true
	}
}

// Spec: EXP-009 — a reported failure is 1-minimal.
func TestDDMinFindsTheNeededSteps(t *testing.T) {
	steps := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	res, err := shrink.Shrink(steps, containsAll(7, 3), shrink.Config[int]{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Steps, []int{3, 7}) || !res.Minimal {
		t.Fatalf("got %v (minimal %v), want [3 7] minimal", res.Steps, res.Minimal)
	}
}

func TestDDMinKeepsOrderForASubsequence(t *testing.T) {
	// Fails when 1, 2, 3 occur in this order.
	inOrder := func(s []int) bool {
		want := []int{1, 2, 3}
		for _, x := range s {
			if len(want) > 0 && x == want[0] {
				want = want[1:]
			}
		}
		return len(want) == 0
	}
	steps := []int{3, 1, 9, 9, 2, 1, 4, 3, 2, 3}
	res, err := shrink.Shrink(steps, inOrder, shrink.Config[int]{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Steps, []int{1, 2, 3}) || !res.Minimal {
		t.Fatalf("got %v, want [1 2 3]", res.Steps)
	}
}

func TestEmptySequenceWhenNothingIsNeeded(t *testing.T) {
	res, err := shrink.Shrink([]int{4, 5, 6}, func([]int) bool { return true }, shrink.Config[int]{})
	if err != nil || len(res.Steps) != 0 || !res.Minimal {
		t.Fatalf("got %v, %v; want the empty sequence", res.Steps, err)
	}
}

// Spec: EXP-009
func TestRandomMonotoneFailuresShrinkToExactlyTheirCause(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for trial := range 300 {
		n := 1 + r.IntN(60)
		steps := r.Perm(n)
		var need []int
		for _, x := range steps {
			if r.IntN(8) == 0 {
				need = append(need, x)
			}
		}
		res, err := shrink.Shrink(steps, containsAll(need...), shrink.Config[int]{})
		if err != nil {
			t.Fatal(err)
		}
		// The cause, in the order of the input.
		var want []int
		for _, x := range steps {
			if slices.Contains(need, x) {
				want = append(want, x)
			}
		}
		if !slices.Equal(res.Steps, want) || !res.Minimal {
			t.Fatalf("trial %d: got %v, want %v", trial, res.Steps, want)
		}
	}
}

func halve(x int) []int {
	if x <= 0 {
		return nil
	}
	return []int{0, x / 2, x - 1}
}

// Spec: EXP-009
func TestElementShrinkingReachesA1MinimalSequence(t *testing.T) {
	sumAtLeast10 := func(s []int) bool {
		total := 0
		for _, x := range s {
			total += x
		}
		return total >= 10
	}
	r := rand.New(rand.NewPCG(23, 24))
	for trial := range 200 {
		steps := make([]int, 1+r.IntN(20))
		for k := range steps {
			steps[k] = r.IntN(30)
		}
		if !sumAtLeast10(steps) {
			continue
		}
		res, err := shrink.Shrink(steps, sumAtLeast10, shrink.Config[int]{Elem: halve})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Minimal || !sumAtLeast10(res.Steps) {
			t.Fatalf("trial %d: %v minimal=%v", trial, res.Steps, res.Minimal)
		}
		// Checked here independently: no single removal or replacement still fails.
		for k := range res.Steps {
			if sumAtLeast10(slices.Delete(slices.Clone(res.Steps), k, k+1)) {
				t.Fatalf("trial %d: %v still fails without step %d", trial, res.Steps, k)
			}
			for _, c := range halve(res.Steps[k]) {
				next := slices.Clone(res.Steps)
				next[k] = c
				if sumAtLeast10(next) {
					t.Fatalf("trial %d: %v still fails with step %d replaced by %d", trial, res.Steps, k, c)
				}
			}
		}
		if total := sumOf(res.Steps); total != 10 {
			t.Fatalf("trial %d: %v sums to %d; a 1-minimal sequence under x-1 sums to 10", trial, res.Steps, total)
		}
	}
}

func sumOf(s []int) int {
	t := 0
	for _, x := range s {
		t += x
	}
	return t
}

func TestBoundOnPredicateCalls(t *testing.T) {
	steps := rand.New(rand.NewPCG(25, 26)).Perm(500)
	calls := 0
	pred := func(s []int) bool { calls++; return containsAll(17, 400, 3)(s) }
	res, err := shrink.Shrink(steps, pred, shrink.Config[int]{MaxCalls: 12})
	if err != nil {
		t.Fatal(err)
	}
	if res.Calls != calls || calls > 12 {
		t.Fatalf("%d calls made, %d reported, bound 12", calls, res.Calls)
	}
	if res.Minimal || !pred(res.Steps) || len(res.Steps) >= 500 {
		t.Fatalf("bounded run: minimal=%v, %d steps", res.Minimal, len(res.Steps))
	}
}

func TestNotFailingAndDeterminism(t *testing.T) {
	if _, err := shrink.Shrink([]int{1, 2}, containsAll(9), shrink.Config[int]{}); !errors.Is(err, shrink.ErrNotFailing) {
		t.Fatalf("err = %v, want ErrNotFailing", err)
	}
	steps := rand.New(rand.NewPCG(27, 28)).Perm(80)
	a, _ := shrink.Shrink(steps, containsAll(5, 50, 70), shrink.Config[int]{Elem: halve})
	b, _ := shrink.Shrink(steps, containsAll(5, 50, 70), shrink.Config[int]{Elem: halve})
	if !slices.Equal(a.Steps, b.Steps) || a.Calls != b.Calls {
		t.Fatal("two runs on the same input differ")
	}
}
