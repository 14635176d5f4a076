// Package walk generates the seeded random sessions of the explorer's stateful random testing
// (spec chapter 32): words over an alphabet that a guide machine steers away from its sink, so
// that long sessions stay alive, and the comparison of a session's outputs with the expected
// ones, step by step, at the first difference.
package walk

import (
	"math/rand/v2"

	"github.com/splashv5/conform/conformance/explore/mealy"
)

// Config shapes the random words.
type Config[O comparable] struct {
	// Length is the number of inputs of a word.
	Length int
	// Ends reports whether an output ends the session (the guide's sink is reached).
	Ends func(O) bool
	// EndChance is the chance, in percent, that a step may pick an input that ends the session
	// while another input keeps it alive; the last input of a word always may.
	EndChance int
}

// Word returns a random word of cfg.Length inputs, drawn with r. It follows the guide machine
// from its initial state: at each step it picks uniformly among the inputs whose output does
// not end the session, and with cfg.EndChance percent among all inputs; when every input ends
// the session it picks among all, and the word ends there. The same r state, guide and cfg give
// the same word.
func Word[I, O comparable](r *rand.Rand, guide *mealy.Machine[I, O], cfg Config[O]) []I {
	var word []I
	s := guide.Initial
	for len(word) < cfg.Length {
		var alive []int
		for i := range guide.Inputs {
			if cfg.Ends == nil || !cfg.Ends(guide.Out[s][i]) {
				alive = append(alive, i)
			}
		}
		last := len(word) == cfg.Length-1
		i := 0
		if len(alive) == 0 || last || r.IntN(100) < cfg.EndChance {
			i = r.IntN(len(guide.Inputs))
		} else {
			i = alive[r.IntN(len(alive))]
		}
		word = append(word, guide.Inputs[i])
		if cfg.Ends != nil && cfg.Ends(guide.Out[s][i]) {
			break
		}
		s = guide.Next[s][i]
	}
	return word
}

// FirstDifference returns the index of the first step whose observed output differs from the
// expected one under compare (a step missing from observed differs), or -1 when none does.
func FirstDifference[O any](expected, observed []O, same func(expected, observed O) bool) int {
	for k := range expected {
		if k >= len(observed) || !same(expected[k], observed[k]) {
			return k
		}
	}
	return -1
}
