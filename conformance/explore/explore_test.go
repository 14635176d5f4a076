package explore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/explore/alphabet"
	"github.com/splashv5/conform/impl/canonjson"
)

// exploreReference explores the reference worker (with extra worker arguments) by the given
// methods against the committed reference machine.
func exploreReference(t *testing.T, seed uint64, d time.Duration, mode canonjson.Mode, extra []string, methods ...Method) []conformance.Result {
	t.Helper()
	ref, err := ReferenceMachine()
	if err != nil {
		t.Fatal(err)
	}
	port := referenceLauncher(t)
	port.Command = append(port.Command, extra...)
	port.Mode = mode
	results, _, err := Run(context.Background(), Config{
		Port: port, Reference: referenceLauncher(t), ReferenceMachine: ref,
		Alphabet: alphabet.For(allNeeds...), Methods: methods, Seed: seed, Duration: d, Parallel: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	return results
}

// Spec: EXP-009, EXP-011, WRK-041, WRK-093 — no false alarm: the reference worker explores clean over
// several seeds, and so does the reference worker in the lossy number model (the alphabet's
// payloads hold no number, so the number hazard cannot arise).
func TestReferenceExploresClean(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the reference worker")
	}
	for _, c := range []struct {
		name  string
		mode  canonjson.Mode
		extra []string
	}{
		{"preserve", canonjson.Preserve, nil},
		{"lossy", canonjson.Lossy, []string{"--number-mode", "lossy"}},
	} {
		for seed := uint64(1); seed <= 3; seed++ {
			for _, r := range exploreReference(t, seed, 6*time.Second, c.mode, c.extra, MethodWalk, MethodFuzz) {
				if r.Outcome != conformance.Pass {
					t.Errorf("%s, seed %d: %s %s: %s", c.name, seed, r.ID, r.Outcome, r.Detail)
				}
				t.Logf("%s, seed %d: %s %s (%s)", c.name, seed, r.ID, r.Outcome, strings.Join(r.Transcript, "; "))
			}
		}
	}
}
