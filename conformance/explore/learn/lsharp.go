package learn

import (
	"context"
	"fmt"
	"slices"

	"github.com/splashv5/conform/conformance/explore/mealy"
)

// LearnLSharp infers the minimal Mealy machine of the system behind oracle with L#
// (Vaandrager, Garhewal, Rot and Wißmann, 2022): it keeps the answers in an observation tree,
// grows a basis of pairwise apart tree nodes, and asks only the queries that extend the basis,
// tell frontier nodes apart, or process a counterexample. The cache, the batching, the budget,
// the sink and the equivalence check are those of Learn, and so is the guarantee: the result is
// exact when the equivalence oracle finds a counterexample to every wrong hypothesis.
func LearnLSharp[I, O comparable](ctx context.Context, oracle Oracle[I, O], cfg Config[I, O]) (*mealy.Machine[I, O], Stats, error) {
	if len(cfg.Inputs) == 0 {
		return nil, Stats{}, fmt.Errorf("%w: empty alphabet", ErrOracle)
	}
	eq := cfg.Equivalence
	if eq == nil {
		eq = DefaultEquivalence[I, O]()
	}
	q := NewQueries(oracle, cfg.Batch, cfg.Budget).WithSink(cfg.Sink)
	l := &lsharp[I, O]{inputs: slices.Clone(cfg.Inputs), q: q}
	l.basis = []*node[I, O]{q.root}
	l.access = map[*node[I, O]][]I{q.root: {}}
	for {
		progressed, err := l.step(ctx)
		if err != nil {
			return nil, q.stats, err
		}
		if progressed {
			continue
		}
		hyp := l.hypothesis()
		q.stats.Rounds++
		cex := l.inconsistency(hyp)
		if cex == nil {
			q.equivalence = true
			cex, err = eq.Counterexample(ctx, hyp, q)
			q.equivalence = false
			if err != nil {
				return nil, q.stats, err
			}
			if cex == nil {
				m, err := mealy.Minimize(hyp)
				return m, q.stats, err
			}
			if _, err := l.ask(ctx, [][]I{cex}); err != nil {
				return nil, q.stats, err
			}
		}
		q.stats.Counterexamples++
		if err := l.counterexample(ctx, hyp, cex); err != nil {
			return nil, q.stats, err
		}
	}
}

type lsharp[I, O comparable] struct {
	inputs []I
	q      *Queries[I, O]
	basis  []*node[I, O]
	access map[*node[I, O]][]I // access words of the basis and frontier nodes
}

// ask asks words and writes every answer into the tree, the outputs the sink implies included.
func (l *lsharp[I, O]) ask(ctx context.Context, words [][]I) ([][]O, error) {
	out, err := l.q.Ask(ctx, words)
	if err != nil {
		return nil, err
	}
	for k, w := range words {
		if err := l.q.insert(w, out[k]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// walk returns the tree node a word reaches, or nil.
func (l *lsharp[I, O]) walk(from *node[I, O], w []I) *node[I, O] {
	n := from
	for _, x := range w {
		c, ok := n.children[x]
		if !ok {
			return nil
		}
		n = c
	}
	return n
}

// witness returns the shortest word on which the tree answers differently from p and from r,
// or nil when they are not apart.
func witness[I, O comparable](inputs []I, p, r *node[I, O]) []I {
	type item struct {
		p, r *node[I, O]
		w    []I
	}
	queue := []item{{p, r, nil}}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		for _, x := range inputs {
			a, ok1 := it.p.children[x]
			b, ok2 := it.r.children[x]
			if !ok1 || !ok2 {
				continue
			}
			w := append(slices.Clone(it.w), x)
			if a.out != b.out {
				return w
			}
			queue = append(queue, item{a, b, w})
		}
	}
	return nil
}

func (l *lsharp[I, O]) inBasis(n *node[I, O]) bool { return slices.Contains(l.basis, n) }

// frontier returns the children of basis nodes outside the basis, in basis and input order,
// recording their access words.
func (l *lsharp[I, O]) frontier() []*node[I, O] {
	var out []*node[I, O]
	for _, b := range l.basis {
		for _, x := range l.inputs {
			c, ok := b.children[x]
			if ok && !l.inBasis(c) {
				l.access[c] = append(slices.Clone(l.access[b]), x)
				out = append(out, c)
			}
		}
	}
	return out
}

// candidates returns the basis nodes that f is not apart from.
func (l *lsharp[I, O]) candidates(f *node[I, O]) []*node[I, O] {
	var out []*node[I, O]
	for _, b := range l.basis {
		if witness(l.inputs, f, b) == nil {
			out = append(out, b)
		}
	}
	return out
}

// step applies the first rule of L# that applies (promotion, extension, separation) and
// reports whether one did.
func (l *lsharp[I, O]) step(ctx context.Context) (bool, error) {
	front := l.frontier()
	for _, f := range front {
		if len(l.candidates(f)) == 0 {
			l.basis = append(l.basis, f)
			return true, nil
		}
	}
	var ext [][]I
	for _, b := range l.basis {
		for _, x := range l.inputs {
			if _, ok := b.children[x]; !ok {
				ext = append(ext, append(slices.Clone(l.access[b]), x))
			}
		}
	}
	if len(ext) > 0 {
		_, err := l.ask(ctx, ext)
		return true, err
	}
	var sep [][]I
	for _, f := range front {
		if c := l.candidates(f); len(c) >= 2 {
			sep = append(sep, cat(l.access[f], witness(l.inputs, c[0], c[1])))
		}
	}
	if len(sep) > 0 {
		_, err := l.ask(ctx, sep)
		return true, err
	}
	return false, nil
}

// hypothesis builds the machine whose states are the basis nodes (state k is l.basis[k]): a
// transition to a basis child goes to it, one to a frontier node to its only candidate.
func (l *lsharp[I, O]) hypothesis() *mealy.Machine[I, O] {
	m := mealy.New[I, O](l.inputs, len(l.basis))
	for k, b := range l.basis {
		for i, x := range l.inputs {
			c := b.children[x]
			t := c
			if !l.inBasis(c) {
				t = l.candidates(c)[0]
			}
			m.Set(k, i, slices.Index(l.basis, t), c.out)
		}
	}
	return m
}

// inconsistency returns a word of the tree that the hypothesis answers differently, or nil.
func (l *lsharp[I, O]) inconsistency(hyp *mealy.Machine[I, O]) []I {
	type item struct {
		n *node[I, O]
		s int
		w []I
	}
	queue := []item{{l.q.root, hyp.Initial, nil}}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		for i, x := range l.inputs {
			c, ok := it.n.children[x]
			if !ok {
				continue
			}
			next, out := hyp.Step(it.s, i)
			w := append(slices.Clone(it.w), x)
			if out != c.out {
				return w
			}
			queue = append(queue, item{c, next, w})
		}
	}
	return nil
}

// counterexample processes a word of the tree that the hypothesis answers differently: it cuts
// it to its shortest such prefix without the last input, σ, where the tree node σ reaches is
// apart from the basis node the hypothesis reaches, and narrows σ down by binary search until
// that tree node is a frontier node (the paper's ProcCounterEx).
func (l *lsharp[I, O]) counterexample(ctx context.Context, hyp *mealy.Machine[I, O], cex []I) error {
	got, ok := l.q.lookup(cex)
	if !ok {
		return fmt.Errorf("%w: counterexample %v is not in the tree", ErrOracle, cex)
	}
	want, _ := hyp.Run(cex)
	k := 0
	for k < len(cex) && got[k] == want[k] {
		k++
	}
	if k == len(cex) {
		return fmt.Errorf("%w: counterexample %v is answered as the hypothesis predicts", ErrOracle, cex)
	}
	sigma := slices.Clone(cex[:k])
	for range 64 * (len(cex) + 1) {
		r := l.walk(l.q.root, sigma)
		qs := hyp.StateAfter(sigma)
		qn := l.basis[qs]
		if r == nil {
			return fmt.Errorf("%w: counterexample prefix %v left the tree", ErrNondeterministic, sigma)
		}
		if l.inBasis(r) || slices.Contains(l.frontier(), r) {
			return nil
		}
		// rho: the prefix of sigma whose node is in the frontier.
		rho := 0
		for n := l.q.root; l.inBasis(n); rho++ {
			n = n.children[sigma[rho]]
		}
		h := (rho + len(sigma)) / 2
		s1, s2 := sigma[:h], sigma[h:]
		q1 := l.basis[hyp.StateAfter(s1)]
		r1 := l.walk(l.q.root, s1)
		eta := witness(l.inputs, r, qn)
		if eta == nil {
			return fmt.Errorf("%w: counterexample %v shows no apartness (the answers contradict each other)", ErrNondeterministic, cex)
		}
		if _, err := l.ask(ctx, [][]I{cat(l.access[q1], s2, eta)}); err != nil {
			return err
		}
		if witness(l.inputs, r1, q1) != nil {
			sigma = slices.Clone(s1)
		} else {
			sigma = cat(l.access[q1], s2)
		}
	}
	return fmt.Errorf("%w: counterexample %v did not resolve", ErrNondeterministic, cex)
}
