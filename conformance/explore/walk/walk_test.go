package walk_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/splashv5/conform/conformance/explore/alphabet"
	"github.com/splashv5/conform/conformance/explore/replay"
	"github.com/splashv5/conform/conformance/explore/shrink"
	"github.com/splashv5/conform/conformance/explore/walk"
)

func simulated() []alphabet.Name {
	var names []alphabet.Name
	for _, s := range alphabet.Symbols {
		if s.Simulated {
			names = append(names, s.Name)
		}
	}
	return names
}

func ends(o alphabet.Output) bool { return o.Exit != alphabet.Running }

// Long random sessions stay alive until their last step, reproducibly.
func TestWordsStayAliveAndAreReproducible(t *testing.T) {
	guide, err := alphabet.Expected(simulated())
	if err != nil {
		t.Fatal(err)
	}
	cfg := walk.Config[alphabet.Output]{Length: 200, Ends: ends}
	seen := map[alphabet.Name]bool{}
	for seed := range uint64(50) {
		w := walk.Word(rand.New(rand.NewPCG(seed, 1)), guide, cfg)
		again := walk.Word(rand.New(rand.NewPCG(seed, 1)), guide, cfg)
		if !slices.Equal(w, again) {
			t.Fatalf("seed %d: two words differ", seed)
		}
		out, _ := guide.Run(w)
		for k, o := range out {
			if ends(o) && k != len(w)-1 {
				t.Fatalf("seed %d: the session ends at step %d of %d", seed, k, len(w))
			}
		}
		if len(w) < 10 {
			t.Fatalf("seed %d: a word of %d inputs; the guide should keep it alive", seed, len(w))
		}
		for _, x := range w {
			seen[x] = true
		}
	}
	// Live sessions reach both kinds of session and the cancels.
	for _, want := range []alphabet.Name{alphabet.OpenBaseline, alphabet.OpenCancellable, alphabet.InvokeSlow, alphabet.CancelCurrent, alphabet.CancelFinished, alphabet.Invoke} {
		if !seen[want] {
			t.Errorf("no word used %s", want)
		}
	}
	// With a high end chance, words end early.
	short := walk.Word(rand.New(rand.NewPCG(3, 1)), guide, walk.Config[alphabet.Output]{Length: 200, Ends: ends, EndChance: 100})
	if len(short) > 20 {
		t.Errorf("EndChance 100 gave a word of %d inputs", len(short))
	}
}

func TestFirstDifference(t *testing.T) {
	same := func(a, b alphabet.Output) bool { return alphabet.Compare(a, b) == alphabet.Same }
	r := alphabet.Output{Answers: "result", Exit: alphabet.Running}
	e5 := alphabet.Output{Exit: 5}
	if k := walk.FirstDifference([]alphabet.Output{alphabet.Silent, r, e5}, []alphabet.Output{alphabet.Silent, r, e5}, same); k != -1 {
		t.Fatalf("equal sessions differ at %d", k)
	}
	if k := walk.FirstDifference([]alphabet.Output{alphabet.Silent, r, e5}, []alphabet.Output{alphabet.Silent, r, {Exit: 0}}, same); k != 2 {
		t.Fatalf("difference at %d, want 2", k)
	}
	if k := walk.FirstDifference([]alphabet.Output{alphabet.Silent, r}, []alphabet.Output{alphabet.Silent}, same); k != 1 {
		t.Fatalf("a missing step at %d, want 1", k)
	}
}

// Spec: EXP-009, EXP-010 — a random session that shows a planted bug is shrunk to the 1-minimal
// word that shows it and written as a replay file.
func TestRandomSessionShrinksToTheBug(t *testing.T) {
	names := simulated()
	guide, err := alphabet.Expected(names)
	if err != nil {
		t.Fatal(err)
	}
	// The port accepts close_session while an invocation is active (CAN-010 broken).
	port := guide.Clone()
	active := port.StateAfter([]alphabet.Name{alphabet.OpenCancellable, alphabet.InvokeSlow})
	port.Out[active][port.Index(alphabet.CloseSession)] = alphabet.Output{Exit: 0}
	same := func(a, b alphabet.Output) bool { return alphabet.Compare(a, b) == alphabet.Same }
	fails := func(w []alphabet.Name) bool {
		exp, _ := guide.Run(w)
		obs, _ := port.Run(w)
		return walk.FirstDifference(exp, obs, same) >= 0
	}
	var found []alphabet.Name
	for seed := uint64(0); seed < 500 && found == nil; seed++ {
		w := walk.Word(rand.New(rand.NewPCG(seed, 2)), guide, walk.Config[alphabet.Output]{Length: 60, Ends: ends, EndChance: 5})
		if fails(w) {
			found = w
		}
	}
	if found == nil {
		t.Fatal("500 random sessions never showed the planted bug")
	}
	res, err := shrink.Shrink(found, fails, shrink.Config[alphabet.Name]{})
	if err != nil {
		t.Fatal(err)
	}
	want := []alphabet.Name{alphabet.OpenCancellable, alphabet.InvokeSlow, alphabet.CloseSession}
	if !res.Minimal || !slices.Equal(res.Steps, want) {
		t.Fatalf("a session of %d steps shrank to %v (minimal %v), want %v", len(found), res.Steps, res.Minimal, want)
	}
	exp, _ := guide.Run(res.Steps)
	obs, _ := port.Run(res.Steps)
	f := replay.File{Version: replay.Version, Suite: "worker", Needs: []string{"cancel"}, Numbers: "preserve", Seed: 2, Level: "MUST"}
	for k, x := range res.Steps {
		f.Steps = append(f.Steps, replay.Step{Symbol: string(x), Expected: exp[k].String(), Observed: obs[k].String()})
	}
	sym, _ := alphabet.Lookup(alphabet.CloseSession)
	f.Spec = sym.Spec
	data, err := f.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := replay.Decode(data)
	if err != nil || !slices.Equal(back.Symbols(), []string{"open_cancellable", "invoke_slow", "close_session"}) {
		t.Fatalf("replay file round trip: %v, %v", back.Symbols(), err)
	}
	if last := back.Steps[2]; last.Expected != "exit 5" || last.Observed != "exit 0" {
		t.Fatalf("last step %+v", last)
	}
	t.Logf("a %d-step random session shrank to %v in %d runs", len(found), res.Steps, res.Calls)
}
