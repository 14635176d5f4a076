package explore

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance/explore/alphabet"
	"github.com/splashv5/conform/impl/canonjson"
)

// Spec: EXP-019 — a probe session is judged process by process: answers count however they
// fall into steps and an end counts at whatever step it came; different answers, running
// against ended or clean against failed are MUST differences, failure classes alone SHOULD.
func TestJudgeSegments(t *testing.T) {
	out := func(answers string, exit alphabet.Exit) alphabet.Output {
		return alphabet.Output{Answers: answers, Exit: exit}
	}
	run := alphabet.Running
	word := []alphabet.Name{alphabet.OpenProbe, alphabet.Invoke, alphabet.Invoke, alphabet.Restart, alphabet.OpenProbe, alphabet.EndOfInput}
	ref := []alphabet.Output{out("", run), out("result", run), out("result", run), out("", run), out("", run), out("", 0)}
	for _, c := range []struct {
		name string
		port []alphabet.Output
		want alphabet.Verdict
	}{
		{"the same", ref, alphabet.Same},
		{"answers late for their step", []alphabet.Output{out("", run), out("", run), out("result+result", run), out("", run), out("", run), out("", 0)}, alphabet.Same},
		{"the end one step early", []alphabet.Output{out("", run), out("result", run), out("result", run), out("", run), out("", 0), out("", alphabet.Gone)}, alphabet.Same},
		{"an answer missing", []alphabet.Output{out("", run), out("result", run), out("", run), out("", run), out("", run), out("", 0)}, alphabet.Violation},
		{"the first process ended", []alphabet.Output{out("", run), out("result", run), out("result", 5), out("", run), out("", run), out("", 0)}, alphabet.Violation},
		{"the second process never ends", []alphabet.Output{out("", run), out("result", run), out("result", run), out("", run), out("", run), out("", run)}, alphabet.Violation},
	} {
		if v, d := judgeSegments(word, ref, c.port); v != c.want {
			t.Errorf("%s: verdict %s (%s), want %s", c.name, v, d, c.want)
		}
	}
	refused := []alphabet.Output{out("", run), out("", 5)}
	if v, _ := judgeSegments(word[:2], refused, []alphabet.Output{out("", run), out("", 6)}); v != alphabet.Advice {
		t.Errorf("another failure class: verdict %s, want SHOULD", v)
	}
}

// Spec: EXP-019 — no false alarm: the reference worker, and the reference worker in the lossy
// number model (without the number probes), run the whole probe cover and random probe sessions
// as the reference does.
func TestProbeSessionsClean(t *testing.T) {
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
		port := referenceLauncher(t)
		port.Command = append(port.Command, c.extra...)
		port.Mode = c.mode
		cfg := Config{Port: port, Reference: referenceLauncher(t), Alphabet: alphabet.For(allNeeds...)}
		symbols := probeSymbols(cfg)
		ws := probeCover(symbols)
		if c.mode == canonjson.Lossy && slices.ContainsFunc(ws, func(w []alphabet.Name) bool { return slices.Contains(w, alphabet.InvokeNumbers) }) {
			t.Errorf("%s: the number probes are explored in the lossy number model", c.name)
		}
		r := rand.New(rand.NewPCG(7, 7))
		for range 12 {
			ws = append(ws, probeWord(r, symbols))
		}
		found := 0
		for _, w := range ws {
			must, should := checkProbe(context.Background(), cfg, w)
			if must != "" || should != "" {
				t.Errorf("%s: %s: %s%s", c.name, words(w), must, should)
			}
			for _, n := range w {
				if _, ok := alphabet.LookupProbe(n); ok {
					found++
					break
				}
			}
		}
		if found != len(ws) {
			t.Errorf("%s: %d of %d sessions hold a probe", c.name, found, len(ws))
		}
	}
}

// Spec: EXP-019 — probe sessions find faults the learned alphabet cannot reach: a reflected
// role, an exact duplicate dispatch run again, the secret in the answer, a superseded worker
// that still persists (MUST), and a scalar
// JSON input authorized, then refused by the adapter in another failure class (SHOULD).
func TestProbeSessionsFindFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the reference worker")
	}
	for _, c := range []struct {
		fault string
		word  []alphabet.Name
		want  string
		level string
	}{
		{"accept-reflected-role", []alphabet.Name{alphabet.OpenProbe, alphabet.InvokeReflected}, "expected exit 4", "MUST"},
		{"rerun-duplicate-dispatch", []alphabet.Name{alphabet.OpenProbe, alphabet.Dispatch, alphabet.DispatchAgain, alphabet.EndOfInput}, "effect log", "MUST"},
		{"secret-in-result", []alphabet.Name{alphabet.OpenProbe, alphabet.InvokeSecret, alphabet.EndOfInput}, "secret", "MUST"},
		{"ignore-fence", []alphabet.Name{alphabet.OpenProbe, alphabet.Invoke, alphabet.Supersede, alphabet.Dispatch, alphabet.EndOfInput}, "expected result+newer[result exit 0] exit 7", "MUST"},
		{"accept-scalar-json", []alphabet.Name{alphabet.OpenProbe, alphabet.InvokeJSONScalar}, "expected exit 5, observed exit 6", "SHOULD"},
	} {
		port := referenceLauncher(t, "splashfaults")
		port.Command = append(slices.Clone(port.Command), "--fault", c.fault)
		cfg := Config{Port: port, Reference: referenceLauncher(t), Alphabet: alphabet.For(allNeeds...)}
		must, should := checkProbe(context.Background(), cfg, c.word)
		got := must
		if c.level == "SHOULD" {
			got = should
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("%s: %s: MUST %q, SHOULD %q; want a %s difference naming %q", c.fault, words(c.word), must, should, c.level, c.want)
		}
	}
}
