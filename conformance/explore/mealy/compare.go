package mealy

import "fmt"

// Difference is one transition of the product of two machines on which they answer
// differently, with the shortest input word that reaches it and shows it.
type Difference[I, O comparable] struct {
	// Word is the input word; its last input is the one on which the outputs differ.
	Word []I
	// Expected and Observed are the outputs of the first and second machine on Word; they agree
	// everywhere but at the last position.
	Expected, Observed []O
	// StateA and StateB are the states of the two machines from which the last input is taken.
	StateA, StateB int
	// Input is the index of the last input in the alphabet.
	Input int
}

// Distinguish returns the shortest input word on which a and b yield different outputs (the
// first in breadth-first order over the alphabet), or ok false when they are equivalent. The
// machines must share their alphabet.
func Distinguish[I, O comparable](a, b *Machine[I, O]) (word []I, ok bool, err error) {
	diffs, err := Differences(a, b, 1)
	if err != nil || len(diffs) == 0 {
		return nil, false, err
	}
	return diffs[0].Word, true, nil
}

// Differences walks the product of a (expected) and b (observed) breadth-first from the pair of
// initial states and returns, for every reachable pair of states and input on which the outputs
// differ, the shortest word that shows it, in breadth-first order, at most limit of them (no
// bound when limit <= 0). Pairs reached only through a difference are walked too, so a
// difference hiding behind another one is reported with its own shortest word.
func Differences[I, O comparable](a, b *Machine[I, O], limit int) ([]Difference[I, O], error) {
	if err := a.Validate(); err != nil {
		return nil, fmt.Errorf("expected machine: %w", err)
	}
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("observed machine: %w", err)
	}
	if !sameAlphabet(a, b) {
		return nil, ErrAlphabet
	}
	type pair struct{ a, b int }
	type visit struct {
		parent int // index into visits, -1 for the root
		input  int
	}
	visits := []visit{{parent: -1}}
	pairs := []pair{{a.Initial, b.Initial}}
	seen := map[pair]bool{pairs[0]: true}
	word := func(k int) []I {
		var rev []I
		for ; visits[k].parent >= 0; k = visits[k].parent {
			rev = append(rev, a.Inputs[visits[k].input])
		}
		w := make([]I, len(rev))
		for j := range rev {
			w[j] = rev[len(rev)-1-j]
		}
		return w
	}
	var out []Difference[I, O]
	for k := 0; k < len(pairs); k++ {
		p := pairs[k]
		for i := range a.Inputs {
			na, oa := a.Step(p.a, i)
			nb, ob := b.Step(p.b, i)
			if oa != ob {
				w := append(word(k), a.Inputs[i])
				ea, _ := a.Run(w)
				eb, _ := b.Run(w)
				out = append(out, Difference[I, O]{Word: w, Expected: ea, Observed: eb, StateA: p.a, StateB: p.b, Input: i})
				if limit > 0 && len(out) >= limit {
					return out, nil
				}
			}
			q := pair{na, nb}
			if !seen[q] {
				seen[q] = true
				pairs = append(pairs, q)
				visits = append(visits, visit{parent: k, input: i})
			}
		}
	}
	return out, nil
}

// Minimize returns the minimal machine equivalent to m, in canonical form: unreachable states
// are dropped and equivalent states merged (partition refinement).
func Minimize[I, O comparable](m *Machine[I, O]) (*Machine[I, O], error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	c := m.Canonical()
	n, k := c.States(), len(c.Inputs)
	// Initial partition: by output row.
	block := make([]int, n)
	{
		ids := map[string]int{}
		outIDs := map[O]int{}
		for s := range n {
			key := make([]byte, 0, 4*k)
			for i := range k {
				o := c.Out[s][i]
				id, ok := outIDs[o]
				if !ok {
					id = len(outIDs)
					outIDs[o] = id
				}
				key = fmt.Appendf(key, "%d,", id)
			}
			id, ok := ids[string(key)]
			if !ok {
				id = len(ids)
				ids[string(key)] = id
			}
			block[s] = id
		}
	}
	count := 0
	for {
		ids := map[string]int{}
		next := make([]int, n)
		for s := range n {
			key := fmt.Appendf(nil, "%d|", block[s])
			for i := range k {
				key = fmt.Appendf(key, "%d,", block[c.Next[s][i]])
			}
			id, ok := ids[string(key)]
			if !ok {
				id = len(ids)
				ids[string(key)] = id
			}
			next[s] = id
		}
		block = next
		if len(ids) == count {
			break
		}
		count = len(ids)
	}
	q := New[I, O](c.Inputs, count)
	for s := range n {
		for i := range k {
			q.Set(block[s], i, block[c.Next[s][i]], c.Out[s][i])
		}
	}
	q.Initial = block[c.Initial]
	return q.Canonical(), nil
}

// Marks returns the transitions of the expected and of the observed machine on which the
// differences show, for Style.Marked.
func Marks[I, O comparable](diffs []Difference[I, O]) (expected, observed map[Transition]bool) {
	expected, observed = map[Transition]bool{}, map[Transition]bool{}
	for _, d := range diffs {
		expected[Transition{State: d.StateA, Input: d.Input}] = true
		observed[Transition{State: d.StateB, Input: d.Input}] = true
	}
	return expected, observed
}
