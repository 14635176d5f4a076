package learn

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

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

// separators returns, for each two states p < r of m, the shortest word that tells them apart
// (nil when they are equivalent), indexed [p][r].
func separators[I, O comparable](m *mealy.Machine[I, O]) [][][]I {
	sep := make([][][]I, m.States())
	for p := range m.States() {
		sep[p] = make([][]I, m.States())
		for r := p + 1; r < m.States(); r++ {
			a, b := m.Clone(), m.Clone()
			a.Initial, b.Initial = p, r
			if w, ok, _ := mealy.Distinguish(a, b); ok {
				sep[p][r] = w
			}
		}
	}
	return sep
}

// addWord appends w to set unless it is there already.
func addWord[I comparable](set [][]I, w []I) [][]I {
	if slices.ContainsFunc(set, func(x []I) bool { return slices.Equal(x, w) }) {
		return set
	}
	return append(set, w)
}

// Characterization returns a characterization set of m: every single input and, for each two
// states, the shortest word that tells them apart, without repeats, in a deterministic order.
func Characterization[I, O comparable](m *mealy.Machine[I, O]) [][]I {
	var out [][]I
	for _, x := range m.Inputs {
		out = addWord(out, []I{x})
	}
	sep := separators(m)
	for p := range sep {
		for r := p + 1; r < len(sep); r++ {
			if sep[p][r] != nil {
				out = addWord(out, sep[p][r])
			}
		}
	}
	return out
}

// identifiers returns, for each state s of m, the words that tell s apart from every other
// state (its identification set), each the shortest for its pair.
func identifiers[I, O comparable](m *mealy.Machine[I, O]) [][][]I {
	sep := separators(m)
	ids := make([][][]I, m.States())
	for p := range sep {
		for r := p + 1; r < len(sep); r++ {
			if w := sep[p][r]; w != nil {
				ids[p] = addWord(ids[p], w)
				ids[r] = addWord(ids[r], w)
			}
		}
	}
	return ids
}

// middles returns every word of at most k inputs, shortest first.
func middles[I comparable](inputs []I, k int) [][]I {
	out := [][]I{{}}
	layer := [][]I{{}}
	for range k {
		var next [][]I
		for _, m := range layer {
			for _, x := range inputs {
				next = append(next, append(slices.Clone(m), x))
			}
		}
		out = append(out, next...)
		layer = next
	}
	return out
}

// tester asks test words in chunks and stops at the first chunk holding a counterexample.
type tester[I, O comparable] struct {
	ctx   context.Context
	hyp   *mealy.Machine[I, O]
	q     *Queries[I, O]
	batch [][]I
	found []I
	err   error
}

// add queues w; it reports false once a counterexample or an error ends the test.
func (t *tester[I, O]) add(w []I) bool {
	if t.found != nil || t.err != nil {
		return false
	}
	t.batch = append(t.batch, w)
	if len(t.batch) == chunk {
		return t.flush()
	}
	return true
}

func (t *tester[I, O]) flush() bool {
	if t.found == nil && t.err == nil && len(t.batch) > 0 {
		t.found, t.err = check(t.ctx, t.hyp, t.q, t.batch)
		t.batch = t.batch[:0]
	}
	return t.found == nil && t.err == nil
}

// WpMethod is the partial W-method of Fujiwara et al.: the access word of every state,
// followed by every word of at most Extra inputs and every word of the characterization set;
// then every word of the transition cover, followed by every word of at most Extra inputs and
// the identification set of the state it reaches. It finds the same counterexamples as the
// W-method with the same Extra, with fewer words.
type WpMethod[I, O comparable] struct {
	// Extra is the number of states the system may have beyond the hypothesis.
	Extra int
}

// Counterexample runs the Wp-method's test suite in chunks and returns the shortest
// counterexample of the first chunk that holds one.
func (wp WpMethod[I, O]) Counterexample(ctx context.Context, hyp *mealy.Machine[I, O], q *Queries[I, O]) ([]I, error) {
	access, _ := hyp.AccessWords()
	mids := middles(hyp.Inputs, wp.Extra)
	all := Characterization(hyp)
	ids := identifiers(hyp)
	t := &tester[I, O]{ctx: ctx, hyp: hyp, q: q}
	for _, m := range mids {
		for _, a := range access {
			if a == nil {
				continue
			}
			for _, w := range all {
				if !t.add(cat(a, m, w)) {
					return t.found, t.err
				}
			}
		}
	}
	for _, m := range mids {
		for _, a := range access {
			if a == nil {
				continue
			}
			for _, x := range hyp.Inputs {
				p := cat(a, []I{x}, m)
				if !t.add(p) {
					return t.found, t.err
				}
				for _, w := range ids[hyp.StateAfter(p)] {
					if !t.add(cat(p, w)) {
						return t.found, t.err
					}
				}
			}
		}
	}
	t.flush()
	return t.found, t.err
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
	mids := middles(hyp.Inputs, wm.Extra)
	suffixes := Characterization(hyp)
	var batch [][]I
	for _, m := range mids {
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

// String describes the method for a report: "W-method with 1 extra state".
func (wm WMethod[I, O]) String() string { return "W-method with " + extra(wm.Extra) }

// String describes the method for a report: "Wp-method with 1 extra state".
func (wp WpMethod[I, O]) String() string { return "Wp-method with " + extra(wp.Extra) }

// String describes the walks for a report: "2000 random walks of up to 20 inputs, seed 1".
func (rw RandomWalks[I, O]) String() string {
	return fmt.Sprintf("%d random walks of up to %d inputs, seed %d", rw.Walks, max(rw.MaxLength, 1), rw.Seed)
}

// String describes the oracles in order, joined by ", then ".
func (c Chain[I, O]) String() string {
	parts := make([]string, len(c))
	for i, e := range c {
		parts[i] = fmt.Sprint(e)
	}
	return strings.Join(parts, ", then ")
}

func extra(k int) string {
	if k == 1 {
		return "1 extra state"
	}
	return fmt.Sprintf("%d extra states", k)
}

// DefaultEquivalence is the equivalence check Learn uses when Config leaves it nil: the
// Wp-method with one extra state, then 2000 random walks of up to 20 inputs seeded with 1.
func DefaultEquivalence[I, O comparable]() Chain[I, O] {
	return Chain[I, O]{WpMethod[I, O]{Extra: 1}, RandomWalks[I, O]{Seed: 1, Walks: 2000, MaxLength: 20}}
}
