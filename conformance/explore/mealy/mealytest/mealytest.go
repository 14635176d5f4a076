// Package mealytest generates random machines for the explorer's tests.
package mealytest

import (
	"math/rand/v2"

	"github.com/splashv5/conform/conformance/explore/mealy"
)

// Random returns a random machine with n states over the inputs 0..inputs-1 whose outputs are
// drawn from 0..outputs-1; every state is reachable (state s > 0 is entered from a state < s).
func Random(r *rand.Rand, n, inputs, outputs int) *mealy.Machine[int, int] {
	alphabet := make([]int, inputs)
	for i := range alphabet {
		alphabet[i] = i
	}
	m := mealy.New[int, int](alphabet, n)
	for s := range n {
		for i := range inputs {
			m.Set(s, i, r.IntN(n), r.IntN(outputs))
		}
	}
	for s := 1; s < n; s++ {
		m.Next[r.IntN(s)][r.IntN(inputs)] = s
	}
	// The rewiring above may have cut a state's only way in; keep redrawing until all reachable.
	for {
		_, reached := m.AccessWords()
		missing := -1
		for s, ok := range reached {
			if !ok {
				missing = s
				break
			}
		}
		if missing < 0 {
			return m
		}
		m.Next[r.IntN(missing)][r.IntN(inputs)] = missing
	}
}

// RandomMinimal returns a random minimal machine with exactly n states (see Random), in
// canonical form. Outputs are drawn from 0..outputs-1; outputs must be at least 2 unless n is 1.
func RandomMinimal(r *rand.Rand, n, inputs, outputs int) *mealy.Machine[int, int] {
	for {
		m, err := mealy.Minimize(Random(r, n, inputs, outputs))
		if err != nil {
			panic(err) // Random builds valid machines only
		}
		if m.States() == n {
			return m
		}
	}
}
