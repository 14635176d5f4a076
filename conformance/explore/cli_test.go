package explore

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/explore/alphabet"
	"github.com/splashv5/conform/conformance/explore/mealy"
)

// Spec: EXP-004, EXP-014 — the committed reference machine decodes, is minimal, spans the
// whole alphabet, and agrees with the machine the worker rules imply wherever the rules can
// say what a worker does.
func TestCommittedReferenceMachine(t *testing.T) {
	ref, err := ReferenceMachine()
	if err != nil {
		t.Fatal(err)
	}
	if got := ref.Inputs; !slicesEqual(got, alphabet.For(allNeeds...)) {
		t.Fatalf("the committed machine's alphabet %v is not the whole alphabet", got)
	}
	min, err := mealy.Minimize(ref)
	if err != nil {
		t.Fatal(err)
	}
	if min.States() != ref.States() {
		t.Errorf("the committed machine has %d states, its minimal form %d", ref.States(), min.States())
	}
	again, err := EncodeMachine(ref)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, referenceMachineJSON) {
		t.Error("EncodeMachine(DecodeMachine(file)) is not the file")
	}
	// Every word over the simulated symbols that starts from a fresh process gets the answers
	// alphabet.Expected gives: walk the transition cover of the expected machine.
	var sim []alphabet.Name
	for _, s := range alphabet.Symbols {
		if s.Simulated {
			sim = append(sim, s.Name)
		}
	}
	exp, err := alphabet.Expected(sim)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range transitionCover(exp) {
		want, _ := exp.Run(w)
		got, _ := ref.Run(w)
		if got[len(w)-1] != want[len(w)-1] {
			t.Errorf("after %s the reference machine answers %s, the worker rules imply %s", words(w), got[len(w)-1], want[len(w)-1])
		}
	}
}

func slicesEqual(a, b []alphabet.Name) bool {
	return strings.Join(names(a), ",") == strings.Join(names(b), ",")
}

func names(ns []alphabet.Name) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = string(n)
	}
	return out
}

// A machine file with a member the format does not have, or a machine that does not validate,
// is refused.
func TestDecodeMachineRefuses(t *testing.T) {
	for _, bad := range []string{
		`{"inputs":["invoke"],"initial":0,"next":[[0]],"out":[[{"Answers":"","Exit":-1}]],"extra":1}`,
		`{"inputs":["invoke"],"initial":0,"next":[[3]],"out":[[{"Answers":"","Exit":-1}]]}`,
		`not json`,
	} {
		if _, err := DecodeMachine([]byte(bad)); err == nil {
			t.Errorf("DecodeMachine(%s) = nil error", bad)
		}
	}
}

// The command line refuses bad flags with status 2, and -list names the results of the
// selected methods.
func TestMainFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Main([]string{"-methods", "learn,guess"}, &out, &errOut); code != conformance.ExitUsage {
		t.Errorf("-methods learn,guess: status %d, want %d", code, conformance.ExitUsage)
	}
	if !strings.Contains(errOut.String(), `unknown method "guess"`) {
		t.Errorf("-methods learn,guess: stderr %q", errOut.String())
	}
	out.Reset()
	if code := Main([]string{"-list", "-methods", "walk,fuzz"}, &out, &errOut); code != conformance.ExitOK {
		t.Fatalf("-list: status %d", code)
	}
	if got := out.String(); !strings.Contains(got, IDWalk) || !strings.Contains(got, IDFuzz) || strings.Contains(got, IDStateMust) {
		t.Errorf("-list -methods walk,fuzz:\n%s", got)
	}
	out.Reset()
	if code := Main([]string{"-list", "-run", "CNF-EXP-LEARN"}, &out, &errOut); code != conformance.ExitOK || strings.Contains(out.String(), IDWalk) || !strings.Contains(out.String(), IDStateShould) {
		t.Errorf("-list -run CNF-EXP-LEARN: status %d:\n%s", code, out.String())
	}
}

// Spec: EXP-001 — a need whose placeholder the worker command lacks is left out, so that a store
// fault the worker is never told about is not read as a worker ignoring it.
func TestServableNeeds(t *testing.T) {
	all := []alphabet.Need{alphabet.NeedDurable, alphabet.NeedCancel, alphabet.NeedCompensation, alphabet.NeedStoreFault, alphabet.NeedEffectFence}
	for _, c := range []struct {
		cmd     []string
		kept    []alphabet.Need
		dropped map[alphabet.Need]string
	}{
		{[]string{"w", "--journal", "{journal}", "--effect-log", "{effects}", "--store-fault", "{store-fault}"}, all, nil},
		{[]string{"w", "--journal={journal}"}, []alphabet.Need{alphabet.NeedDurable, alphabet.NeedCancel, alphabet.NeedCompensation},
			map[alphabet.Need]string{alphabet.NeedStoreFault: "{store-fault}", alphabet.NeedEffectFence: "{effects}"}},
		{[]string{"w"}, []alphabet.Need{alphabet.NeedCancel},
			map[alphabet.Need]string{alphabet.NeedDurable: "{journal}", alphabet.NeedCompensation: "{journal}", alphabet.NeedStoreFault: "{journal}", alphabet.NeedEffectFence: "{journal}"}},
	} {
		kept, dropped := servableNeeds(all, conformance.WorkerCommand(c.cmd))
		if !slices.Equal(kept, c.kept) || !maps.Equal(dropped, c.dropped) {
			t.Errorf("%q: kept %v, left out %v; want %v and %v", c.cmd, kept, dropped, c.kept, c.dropped)
		}
	}
}
