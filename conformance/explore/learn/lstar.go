package learn

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/splashv5/conform/conformance/explore/mealy"
)

// Config configures a learning run.
type Config[I, O comparable] struct {
	// Inputs is the alphabet.
	Inputs []I
	// Batch is the most words per oracle call (0: 64); Budget the most words sent in all (0: no
	// bound).
	Batch, Budget int
	// Equivalence looks for counterexamples to each hypothesis; when nil, DefaultEquivalence.
	Equivalence Equivalence[I, O]
	// Sink, when set, declares the system's sink outputs (see Queries.WithSink).
	Sink func(O) (O, bool)
}

// Learn infers the minimal Mealy machine of the system behind oracle. The result is exact when
// the equivalence oracle finds a counterexample to every wrong hypothesis; with the W-method
// or the Wp-method and k extra states, that holds whenever the system has at most k more states
// than the returned machine.
func Learn[I, O comparable](ctx context.Context, oracle Oracle[I, O], cfg Config[I, O]) (*mealy.Machine[I, O], Stats, error) {
	if len(cfg.Inputs) == 0 {
		return nil, Stats{}, fmt.Errorf("%w: empty alphabet", ErrOracle)
	}
	eq := cfg.Equivalence
	if eq == nil {
		eq = DefaultEquivalence[I, O]()
	}
	q := NewQueries(oracle, cfg.Batch, cfg.Budget).WithSink(cfg.Sink)
	t := &table[I, O]{inputs: slices.Clone(cfg.Inputs), q: q, outIDs: map[O]int{}}
	t.S = [][]I{{}}
	for _, x := range t.inputs {
		t.E = append(t.E, []I{x})
	}
	for {
		if err := t.close(ctx); err != nil {
			return nil, q.stats, err
		}
		hyp := t.hypothesis()
		q.stats.Rounds++
		q.equivalence = true
		cex, err := eq.Counterexample(ctx, hyp, q)
		q.equivalence = false
		if err != nil {
			return nil, q.stats, err
		}
		if cex == nil {
			m, err := mealy.Minimize(hyp)
			return m, q.stats, err
		}
		q.stats.Counterexamples++
		if err := t.process(ctx, hyp, cex); err != nil {
			return nil, q.stats, err
		}
	}
}

// table is the observation table: rows S (access words, pairwise distinct rows) and S·Σ,
// columns E (suffixes, starting with every single input).
type table[I, O comparable] struct {
	inputs []I
	q      *Queries[I, O]
	S, E   [][]I
	outIDs map[O]int
	rows   map[string]string // word key -> row key, for S and S·Σ
}

func (t *table[I, O]) wordKey(w []I) string {
	var b strings.Builder
	for _, x := range w {
		b.WriteString(strconv.Itoa(slices.Index(t.inputs, x)))
		b.WriteByte(',')
	}
	return b.String()
}

func cat[I any](ws ...[]I) []I {
	var out []I
	for _, w := range ws {
		out = append(out, w...)
	}
	return out
}

// fill asks every cell of the rows of words and returns their row keys.
func (t *table[I, O]) fill(ctx context.Context, words [][]I) ([]string, error) {
	var ask [][]I
	for _, u := range words {
		for _, e := range t.E {
			ask = append(ask, cat(u, e))
		}
	}
	answers, err := t.q.Ask(ctx, ask)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(words))
	k := 0
	for j, u := range words {
		var b strings.Builder
		for range t.E {
			for _, o := range answers[k][len(u):] {
				id, ok := t.outIDs[o]
				if !ok {
					id = len(t.outIDs)
					t.outIDs[o] = id
				}
				b.WriteString(strconv.Itoa(id))
				b.WriteByte(',')
			}
			b.WriteByte('|')
			k++
		}
		keys[j] = b.String()
	}
	return keys, nil
}

// close fills the table and extends S until every row of S·Σ is a row of S.
func (t *table[I, O]) close(ctx context.Context) error {
	for {
		var words [][]I
		for _, u := range t.S {
			words = append(words, u)
			for _, x := range t.inputs {
				words = append(words, cat(u, []I{x}))
			}
		}
		keys, err := t.fill(ctx, words)
		if err != nil {
			return err
		}
		t.rows = map[string]string{}
		sRows := map[string]bool{}
		for j, w := range words {
			t.rows[t.wordKey(w)] = keys[j]
		}
		for _, u := range t.S {
			sRows[t.rows[t.wordKey(u)]] = true
		}
		if len(sRows) != len(t.S) {
			return fmt.Errorf("%w: two access words have equal rows after a counterexample", ErrNondeterministic)
		}
		grown := false
		for j, w := range words {
			if !sRows[keys[j]] {
				sRows[keys[j]] = true
				t.S = append(t.S, w)
				grown = true
			}
		}
		if !grown {
			return nil
		}
	}
}

// hypothesis builds the machine of a closed table: one state per row of S, state k being the
// one S[k] reaches.
func (t *table[I, O]) hypothesis() *mealy.Machine[I, O] {
	state := map[string]int{}
	for k, u := range t.S {
		state[t.rows[t.wordKey(u)]] = k
	}
	m := mealy.New[I, O](t.inputs, len(t.S))
	for k, u := range t.S {
		for i, x := range t.inputs {
			ux := cat(u, []I{x})
			out, _ := t.q.lookup(ux)
			m.Set(k, i, state[t.rows[t.wordKey(ux)]], out[len(out)-1])
		}
	}
	return m
}

// process adds to E the suffix that the counterexample's Rivest–Schapire decomposition finds:
// the index i at which replacing the prefix w[:i] by the access word of the hypothesis state it
// reaches stops changing the system's answer on the rest.
func (t *table[I, O]) process(ctx context.Context, hyp *mealy.Machine[I, O], w []I) error {
	answer, err := t.q.Ask(ctx, [][]I{w})
	if err != nil {
		return err
	}
	want, _ := hyp.Run(w)
	if slices.Equal(answer[0], want) {
		return fmt.Errorf("%w: counterexample %v is answered as the hypothesis predicts", ErrOracle, w)
	}
	// agrees(i): the system's answer on w[i:] after the access word of the hypothesis state
	// reached by w[:i] equals the hypothesis's prediction. agrees(0) is false, agrees(len) true.
	agrees := func(i int) (bool, error) {
		s := hyp.StateAfter(w[:i])
		u := t.S[s]
		a, err := t.q.Ask(ctx, [][]I{cat(u, w[i:])})
		if err != nil {
			return false, err
		}
		hypSuffix := runFrom(hyp, s, w[i:])
		return slices.Equal(a[0][len(u):], hypSuffix), nil
	}
	lo, hi := 0, len(w)
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		ok, err := agrees(mid)
		if err != nil {
			return err
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	suffix := slices.Clone(w[lo+1:])
	if len(suffix) == 0 {
		// The last output after an access word is a cell of the table: it cannot disagree.
		return fmt.Errorf("%w: counterexample %v contradicts an answer the table holds", ErrNondeterministic, w)
	}
	for _, e := range t.E {
		if slices.Equal(e, suffix) {
			return fmt.Errorf("%w: counterexample %v gives no new suffix (the answers of the system contradict each other)", ErrNondeterministic, w)
		}
	}
	t.E = append(t.E, suffix)
	return nil
}

func runFrom[I, O comparable](m *mealy.Machine[I, O], s int, w []I) []O {
	out := make([]O, 0, len(w))
	for _, x := range w {
		var o O
		s, o = m.Step(s, m.Index(x))
		out = append(out, o)
	}
	return out
}
