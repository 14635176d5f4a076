package learn

import (
	"context"
	"math/rand/v2"
	"slices"

	"github.com/splashv5/conform/conformance/explore/mealy"
)

// Equivalence looks for a counterexample to a hypothesis: an input word on which the system
// (asked through q) and the hypothesis answer differently. It returns nil when it finds none.
type Equivalence[I, O comparable] interface {
	Counterexample(ctx context.Context, hyp *mealy.Machine[I, O], q *Queries[I, O]) ([]I, error)
}

// chunk is the number of test words an equivalence oracle generates before asking them.
const chunk = 512

// check asks words and returns the shortest one the system answers differently from hyp.
func check[I, O comparable](ctx context.Context, hyp *mealy.Machine[I, O], q *Queries[I, O], words [][]I) ([]I, error) {
	answers, err := q.Ask(ctx, words)
	if err != nil {
		return nil, err
	}
	var best []I
	for k, w := range words {
		want, _ := hyp.Run(w)
		if !slices.Equal(answers[k], want) && (best == nil || len(w) < len(best)) {
			best = w
		}
	}
	return best, nil
}

// Chain asks each equivalence oracle in turn and returns the first counterexample.
type Chain[I, O comparable] []Equivalence[I, O]

// Counterexample asks the oracles in order.
func (c Chain[I, O]) Counterexample(ctx context.Context, hyp *mealy.Machine[I, O], q *Queries[I, O]) ([]I, error) {
	for _, e := range c {
		w, err := e.Counterexample(ctx, hyp, q)
		if err != nil || w != nil {
			return w, err
		}
	}
	return nil, nil
}

// WMethod is Chow's W-method: every word p·m·w with p in the hypothesis's transition cover
// (the access word of each state, alone and followed by each input), m any word of at most Extra
// inputs and w in a characterization set (a word telling each two states apart, and each
// single input). It finds a counterexample whenever the system has at most Extra more states
// than the hypothesis and differs from it.
type WMethod[I, O comparable] struct {
	// Extra is the number of states the system may have beyond the hypothesis.
	Extra int
}

// Characterization returns a characterization set of m: every single input and, for each two
// states, the shortest word that tells them apart, without repeats, in a deterministic order.
func Characterization[I, O comparable](m *mealy.Machine[I, O]) [][]I {
	var out [][]I
	has := func(w []I) bool {
		return slices.ContainsFunc(out, func(x []I) bool { return slices.Equal(x, w) })
	}
	for _, x := range m.Inputs {
		out = append(out, []I{x})
	}
	for p := range m.States() {
		for r := p + 1; r < m.States(); r++ {
			a, b := m.Clone(), m.Clone()
			a.Initial, b.Initial = p, r
			w, ok, _ := mealy.Distinguish(a, b)
			if ok && !has(w) {
				out = append(out, w)
			}
		}
	}
	return out
}

// Counterexample runs the W-method's test suite in chunks and returns the shortest
// counterexample of the first chunk that holds one.
func (wm WMethod[I, O]) Counterexample(ctx context.Context, hyp *mealy.Machine[I, O], q *Queries[I, O]) ([]I, error) {
	access, _ := hyp.AccessWords()
	var cover [][]I
	for _, a := range access {
		if a == nil {
			continue
		}
		cover = append(cover, a)
		for _, x := range hyp.Inputs {
			cover = append(cover, append(slices.Clone(a), x))
		}
	}
	middles := [][]I{{}}
	layer := [][]I{{}}
	for range wm.Extra {
		var next [][]I
		for _, m := range layer {
			for _, x := range hyp.Inputs {
				next = append(next, append(slices.Clone(m), x))
			}
		}
		middles = append(middles, next...)
		layer = next
	}
	suffixes := Characterization(hyp)
	var batch [][]I
	for _, m := range middles {
		for _, p := range cover {
			for _, s := range suffixes {
				batch = append(batch, cat(p, m, s))
				if len(batch) == chunk {
					if w, err := check(ctx, hyp, q, batch); err != nil || w != nil {
						return w, err
					}
					batch = batch[:0]
				}
			}
		}
	}
	return check(ctx, hyp, q, batch)
}

// RandomWalks tests seeded random words: the access word of a state chosen at random,
// followed by up to MaxLength random inputs. The same seed and hypothesis give the same words.
type RandomWalks[I, O comparable] struct {
	Seed      uint64
	Walks     int
	MaxLength int
}

// Counterexample runs the walks in chunks and returns the shortest counterexample of the first
// chunk that holds one.
func (rw RandomWalks[I, O]) Counterexample(ctx context.Context, hyp *mealy.Machine[I, O], q *Queries[I, O]) ([]I, error) {
	r := rand.New(rand.NewPCG(rw.Seed, uint64(hyp.States())))
	access, reached := hyp.AccessWords()
	var states []int
	for s, ok := range reached {
		if ok {
			states = append(states, s)
		}
	}
	maxLen := max(rw.MaxLength, 1)
	var batch [][]I
	for range rw.Walks {
		w := slices.Clone(access[states[r.IntN(len(states))]])
		for range 1 + r.IntN(maxLen) {
			w = append(w, hyp.Inputs[r.IntN(len(hyp.Inputs))])
		}
		batch = append(batch, w)
		if len(batch) == chunk {
			if w, err := check(ctx, hyp, q, batch); err != nil || w != nil {
				return w, err
			}
			batch = batch[:0]
		}
	}
	return check(ctx, hyp, q, batch)
}
