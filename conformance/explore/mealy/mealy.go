// Package mealy holds deterministic, complete Mealy machines over a finite alphabet of
// comparable abstract inputs: running them, comparing two of them (the shortest input word on
// which they answer differently, and every difference found by a breadth-first walk of their
// product), minimizing them, and drawing them as Graphviz DOT or as self-contained SVG.
//
// Every result is deterministic: states are numbered in breadth-first order from the initial
// state by Canonical, inputs keep the order of the alphabet, and drawings sort what they emit,
// so that goldens can pin them.
package mealy

import (
	"errors"
	"fmt"
)

// Machine is a deterministic, complete Mealy machine: from every state, every input of the
// alphabet leads to exactly one state and yields exactly one output.
//
// States are the integers 0..States()-1. Inputs are addressed by their index in Inputs. The
// methods that follow transitions (Step, Run, StateAfter, AccessWords, Canonical) expect a
// machine that passes Validate; the package's functions check it themselves.
type Machine[I, O comparable] struct {
	// Inputs is the alphabet, in a fixed order.
	Inputs []I
	// Initial is the initial state.
	Initial int
	// Next[s][i] is the state reached from s on Inputs[i].
	Next [][]int
	// Out[s][i] is the output yielded from s on Inputs[i].
	Out [][]O
}

// ErrInvalid is returned (wrapped) by Validate and by the functions that need a valid machine.
var ErrInvalid = errors.New("mealy: invalid machine")

// ErrAlphabet is returned (wrapped) when two machines do not share the same alphabet.
var ErrAlphabet = errors.New("mealy: machines have different alphabets")

// New returns a machine with n states over inputs whose transitions all lead to state 0 with
// the zero output; Set fills them in.
func New[I, O comparable](inputs []I, n int) *Machine[I, O] {
	m := &Machine[I, O]{Inputs: append([]I(nil), inputs...)}
	for range n {
		m.AddState()
	}
	return m
}

// AddState adds a state whose transitions lead to state 0 with the zero output, and returns it.
func (m *Machine[I, O]) AddState() int {
	m.Next = append(m.Next, make([]int, len(m.Inputs)))
	m.Out = append(m.Out, make([]O, len(m.Inputs)))
	return len(m.Next) - 1
}

// Set sets the transition of state s on the input of index i.
func (m *Machine[I, O]) Set(s, i, next int, out O) {
	m.Next[s][i] = next
	m.Out[s][i] = out
}

// States returns the number of states.
func (m *Machine[I, O]) States() int { return len(m.Next) }

// Index returns the index of input in the alphabet, or -1.
func (m *Machine[I, O]) Index(input I) int {
	for i, x := range m.Inputs {
		if x == input {
			return i
		}
	}
	return -1
}

// Validate checks that the machine is complete and deterministic: at least one state, a valid
// initial state, a row of the alphabet's length per state, every target a state, and no input
// listed twice.
func (m *Machine[I, O]) Validate() error {
	if len(m.Next) == 0 {
		return fmt.Errorf("%w: no state", ErrInvalid)
	}
	if len(m.Out) != len(m.Next) {
		return fmt.Errorf("%w: %d output rows for %d states", ErrInvalid, len(m.Out), len(m.Next))
	}
	if m.Initial < 0 || m.Initial >= len(m.Next) {
		return fmt.Errorf("%w: initial state %d out of range", ErrInvalid, m.Initial)
	}
	seen := make(map[I]bool, len(m.Inputs))
	for _, x := range m.Inputs {
		if seen[x] {
			return fmt.Errorf("%w: input %v listed twice", ErrInvalid, x)
		}
		seen[x] = true
	}
	for s := range m.Next {
		if len(m.Next[s]) != len(m.Inputs) || len(m.Out[s]) != len(m.Inputs) {
			return fmt.Errorf("%w: state %d has %d transitions for %d inputs", ErrInvalid, s, len(m.Next[s]), len(m.Inputs))
		}
		for i, t := range m.Next[s] {
			if t < 0 || t >= len(m.Next) {
				return fmt.Errorf("%w: state %d on input %v leads to %d", ErrInvalid, s, m.Inputs[i], t)
			}
		}
	}
	return nil
}

// Step returns the state reached from s on the input of index i and the output yielded.
func (m *Machine[I, O]) Step(s, i int) (int, O) { return m.Next[s][i], m.Out[s][i] }

// Run returns the outputs the machine yields on word from its initial state. An input outside
// the alphabet ends the run: the outputs so far are returned with ok false.
func (m *Machine[I, O]) Run(word []I) (out []O, ok bool) {
	s := m.Initial
	out = make([]O, 0, len(word))
	for _, x := range word {
		i := m.Index(x)
		if i < 0 {
			return out, false
		}
		var o O
		s, o = m.Step(s, i)
		out = append(out, o)
	}
	return out, true
}

// StateAfter returns the state reached from the initial state on word, or -1 when word holds
// an input outside the alphabet.
func (m *Machine[I, O]) StateAfter(word []I) int {
	s := m.Initial
	for _, x := range word {
		i := m.Index(x)
		if i < 0 {
			return -1
		}
		s = m.Next[s][i]
	}
	return s
}

// AccessWords returns, for every state reachable from the initial state, the shortest input
// word that reaches it (the first in breadth-first order over the alphabet's order); an
// unreachable state's entry is nil and its reached entry false.
func (m *Machine[I, O]) AccessWords() (words [][]I, reached []bool) {
	words = make([][]I, len(m.Next))
	reached = make([]bool, len(m.Next))
	reached[m.Initial] = true
	words[m.Initial] = []I{}
	queue := []int{m.Initial}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for i, t := range m.Next[s] {
			if !reached[t] {
				reached[t] = true
				words[t] = append(append(make([]I, 0, len(words[s])+1), words[s]...), m.Inputs[i])
				queue = append(queue, t)
			}
		}
	}
	return words, reached
}

// Clone returns a deep copy of m.
func (m *Machine[I, O]) Clone() *Machine[I, O] {
	c := &Machine[I, O]{Inputs: append([]I(nil), m.Inputs...), Initial: m.Initial}
	for s := range m.Next {
		c.Next = append(c.Next, append([]int(nil), m.Next[s]...))
		c.Out = append(c.Out, append([]O(nil), m.Out[s]...))
	}
	return c
}

// Canonical returns a copy of m restricted to its reachable states, numbered in breadth-first
// order from the initial state (which becomes 0), exploring inputs in the alphabet's order.
// Two isomorphic machines over the same alphabet have equal canonical forms.
func (m *Machine[I, O]) Canonical() *Machine[I, O] {
	number := make([]int, len(m.Next))
	for s := range number {
		number[s] = -1
	}
	order := []int{m.Initial}
	number[m.Initial] = 0
	for k := 0; k < len(order); k++ {
		for _, t := range m.Next[order[k]] {
			if number[t] < 0 {
				number[t] = len(order)
				order = append(order, t)
			}
		}
	}
	c := New[I, O](m.Inputs, len(order))
	for n, s := range order {
		for i, t := range m.Next[s] {
			c.Set(n, i, number[t], m.Out[s][i])
		}
	}
	return c
}

// Equal reports whether a and b have the same alphabet (same inputs in the same order) and
// identical tables: same states, initial state, transitions and outputs. Compare canonical
// forms of minimal machines to test isomorphism, or use Distinguish to test equivalence.
func Equal[I, O comparable](a, b *Machine[I, O]) bool {
	if !sameAlphabet(a, b) || a.Initial != b.Initial || len(a.Next) != len(b.Next) {
		return false
	}
	for s := range a.Next {
		for i := range a.Inputs {
			if a.Next[s][i] != b.Next[s][i] || a.Out[s][i] != b.Out[s][i] {
				return false
			}
		}
	}
	return true
}

func sameAlphabet[I, O comparable](a, b *Machine[I, O]) bool {
	if len(a.Inputs) != len(b.Inputs) {
		return false
	}
	for i := range a.Inputs {
		if a.Inputs[i] != b.Inputs[i] {
			return false
		}
	}
	return true
}
