package alphabet_test

import (
	"os"
	"testing"

	"github.com/splashv5/conform/conformance/explore/alphabet"
	"github.com/splashv5/conform/conformance/explore/mealy"
)

func TestTmpDraw(t *testing.T) {
	var names []alphabet.Name
	for _, s := range alphabet.Symbols {
		if s.Simulated {
			names = append(names, s.Name)
		}
	}
	m, _ := alphabet.Expected(names)
	f, _ := os.Create("/tmp/exp.svg")
	defer f.Close()
	mealy.WriteSVG(f, m, mealy.Style[alphabet.Name, alphabet.Output]{Name: "worker", Marked: map[mealy.Transition]bool{{State: 1, Input: 2}: true}})
}
