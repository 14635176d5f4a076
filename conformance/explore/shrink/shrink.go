// Package shrink reduces a failing sequence of steps to a small one that still fails,
// QuickCheck-style: delta debugging (Zeller and Hildebrandt's ddmin) removes steps, and a
// per-step shrink function replaces a step by simpler ones, until neither makes progress or a
// bound on the number of predicate calls is reached. Everything is deterministic: the same
// input, predicate and shrink function give the same result.
package shrink

import "errors"

// ErrNotFailing is returned when the sequence given to Shrink does not fail to begin with.
var ErrNotFailing = errors.New("shrink: the sequence does not fail")

// DefaultMaxCalls bounds the predicate calls of a run whose Config leaves MaxCalls zero.
const DefaultMaxCalls = 10000

// Config configures a run.
type Config[T any] struct {
	// MaxCalls bounds the calls of the predicate (0: DefaultMaxCalls).
	MaxCalls int
	// Elem returns simpler replacements of one step, simplest first; nil means steps are only
	// removed. Replacements must get simpler, or shrinking stops only at MaxCalls.
	Elem func(T) []T
}

// Result is the outcome of a run.
type Result[T any] struct {
	// Steps is the smallest failing sequence found.
	Steps []T
	// Calls is the number of predicate calls made.
	Calls int
	// Minimal says that the run reached its fixed point within the bound: removing any one
	// step of Steps, or replacing any one by one of its Elem candidates, makes it pass.
	Minimal bool
}

type run[T any] struct {
	fails func([]T) bool
	calls int
	max   int
}

// try calls the predicate unless the bound is reached; out reports a reached bound.
func (r *run[T]) try(steps []T) (failed, out bool) {
	if r.calls >= r.max {
		return false, true
	}
	r.calls++
	return r.fails(steps), false
}

// Shrink returns a smaller sequence on which fails still reports true. fails must report true
// on steps (one call checks it) and must not keep the slice it is given.
func Shrink[T any](steps []T, fails func([]T) bool, cfg Config[T]) (Result[T], error) {
	r := &run[T]{fails: fails, max: cfg.MaxCalls}
	if r.max <= 0 {
		r.max = DefaultMaxCalls
	}
	cur := append([]T(nil), steps...)
	if ok, _ := r.try(cur); !ok {
		return Result[T]{Steps: cur, Calls: r.calls}, ErrNotFailing
	}
	for {
		var out bool
		cur, out = ddmin(r, cur)
		if out {
			return Result[T]{Steps: cur, Calls: r.calls}, nil
		}
		changed := false
		if cfg.Elem != nil {
			cur, changed, out = elements(r, cur, cfg.Elem)
			if out {
				return Result[T]{Steps: cur, Calls: r.calls}, nil
			}
		}
		if !changed {
			return Result[T]{Steps: cur, Calls: r.calls, Minimal: true}, nil
		}
	}
}

// ddmin removes steps: it tries each of n chunks alone and each complement, refining n up to
// one step per chunk, so that its result is 1-minimal.
func ddmin[T any](r *run[T], cur []T) ([]T, bool) {
	n := 2
	for len(cur) >= 1 {
		if len(cur) == 1 {
			// The only smaller sequence is the empty one.
			failed, out := r.try(nil)
			if out {
				return cur, true
			}
			if failed {
				return nil, false
			}
			return cur, false
		}
		n = min(n, len(cur))
		chunks := split(cur, n)
		reduced := false
		for _, c := range chunks {
			failed, out := r.try(c)
			if out {
				return cur, true
			}
			if failed {
				cur, n, reduced = c, 2, true
				break
			}
		}
		if !reduced && n > 2 {
			for k := range chunks {
				comp := complement(chunks, k)
				failed, out := r.try(comp)
				if out {
					return cur, true
				}
				if failed {
					cur, n, reduced = comp, max(n-1, 2), true
					break
				}
			}
		}
		if reduced {
			continue
		}
		if n >= len(cur) {
			return cur, false
		}
		n = min(2*n, len(cur))
	}
	return cur, false
}

// split cuts s into n chunks of nearly equal length, in order.
func split[T any](s []T, n int) [][]T {
	out := make([][]T, 0, n)
	start := 0
	for k := range n {
		end := start + (len(s)-start)/(n-k)
		out = append(out, append([]T(nil), s[start:end]...))
		start = end
	}
	return out
}

func complement[T any](chunks [][]T, skip int) []T {
	var out []T
	for k, c := range chunks {
		if k != skip {
			out = append(out, c...)
		}
	}
	return out
}

// elements replaces each step, left to right, by its first simpler candidate that keeps the
// sequence failing, as long as one does.
func elements[T any](r *run[T], cur []T, elem func(T) []T) ([]T, bool, bool) {
	changed := false
	for k := 0; k < len(cur); k++ {
		for progress := true; progress; {
			progress = false
			for _, c := range elem(cur[k]) {
				next := append([]T(nil), cur...)
				next[k] = c
				failed, out := r.try(next)
				if out {
					return cur, changed, true
				}
				if failed {
					cur, changed, progress = next, true, true
					break
				}
			}
		}
	}
	return cur, changed, false
}
