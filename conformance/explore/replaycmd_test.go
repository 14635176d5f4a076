package explore

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/explore/alphabet"
	"github.com/splashv5/conform/conformance/explore/replay"
)

// writeReplayFile writes a replay file of [open_baseline close_session] whose last step
// expects want and recorded got (want and got must differ).
func writeReplayFile(t *testing.T, suite, want, got string) string {
	t.Helper()
	f := replay.File{Version: replay.Version, Suite: suite, Needs: []string{"cancel", "compensation", "durable", "store-fault"}, Numbers: "preserve", Seed: 7, Level: "MUST", Spec: []string{"CAN-009"},
		Steps: []replay.Step{{Symbol: "open_baseline", Expected: "-", Observed: "-"}, {Symbol: "close_session", Expected: want, Observed: got}}}
	b, err := f.Encode()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Spec: EXP-010 — replay runs a replay file's session again: status 1 while its last step
// still differs from what it expects, 0 once the worker does what it expects, 2 for a file it
// cannot replay.
func TestReplayMain(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the reference worker")
	}
	worker := append([]string{"--"}, referenceCommand(t)...)
	var out, errOut bytes.Buffer
	// The reference worker refuses close_session in a baseline session (CAN-022, exit 5): a
	// file that expects that no longer fails, one that expects a clean close still does.
	if code := ReplayMain(append([]string{writeReplayFile(t, "worker", "exit 5", "exit 0")}, worker...), &out, &errOut); code != conformance.ExitOK {
		t.Errorf("expected exit 5, the reference gives it: status %d\n%s%s", code, out.String(), errOut.String())
	}
	out.Reset()
	if code := ReplayMain(append([]string{writeReplayFile(t, "worker", "exit 0", "exit 5")}, worker...), &out, &errOut); code != conformance.ExitFailures {
		t.Errorf("expected exit 0, the reference gives exit 5: status %d\n%s", code, out.String())
	}
	if !strings.Contains(out.String(), "still fails") {
		t.Errorf("output %q", out.String())
	}
	if code := ReplayMain(append([]string{writeReplayFile(t, "host", "exit 0", "exit 5")}, worker...), &out, &errOut); code != conformance.ExitUsage {
		t.Errorf("a host replay file: status %d, want 2", code)
	}
	if code := ReplayMain([]string{filepath.Join(t.TempDir(), "missing.json")}, &out, &errOut); code != conformance.ExitUsage {
		t.Errorf("a missing file: status %d, want 2", code)
	}
}

// Spec: EXP-010, EXP-019 — a probe session that fails is shrunk and written as a replay file
// (session "probe": the reference's and the port's output per step, and the problem), and
// replay runs it on the worker and the reference worker alike, judged as the explorer judges
// it: status 1 against the faulty worker, 0 against the reference worker, 2 for a worker
// command that cannot serve the file's needs.
func TestProbeFailureReplayed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the reference worker and its faulty build")
	}
	// The fault lies beyond the learned alphabet: only a probe session reaches it. A short
	// answer wait keeps the still running port's tail short.
	const wait = 600 * time.Millisecond
	faulty := append(referenceCommand(t, "splashfaults"), "--fault", "accept-reflected-role")
	port, reference := referenceLauncher(t), referenceLauncher(t)
	port.Command = faulty
	port.AnswerWait, reference.AnswerWait = wait, wait
	dir := t.TempDir()
	cfg := Config{Port: port, Reference: reference, Alphabet: alphabet.For(allNeeds...), Seed: 5, ReplayDir: dir}
	word := []alphabet.Name{alphabet.OpenProbe, alphabet.InvokeReflected, alphabet.EndOfInput}
	res := result(IDWalk, conformance.Pass, 0)
	art := &Artifacts{}
	probeFailure(context.Background(), cfg, art, &res, word, "process 1: as found")
	if res.Outcome != conformance.Fail || len(art.ReplayFiles) != 1 || len(art.Replays) != 1 || !strings.Contains(res.Detail, "; replay file: "+art.ReplayFiles[0]) {
		t.Fatalf("outcome %s, replay files %v; detail %s", res.Outcome, art.ReplayFiles, res.Detail)
	}
	path := art.ReplayFiles[0]
	if filepath.Dir(path) != dir || !strings.HasPrefix(filepath.Base(path), "replay-5-probe-") {
		t.Errorf("replay file %s", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := replay.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	last := f.Steps[len(f.Steps)-1]
	if !f.Probe() || f.Level != "MUST" || f.Seed != 5 || f.Numbers != "preserve" || !slices.Contains(f.Spec, "EXP-019") || !slices.Contains(f.Spec, "FRM-028") ||
		!strings.Contains(f.Problem, "expected exit 4") || len(f.Steps) >= len(word) || last.Symbol != string(alphabet.InvokeReflected) || last.Expected != "exit 4" || last.Observed == last.Expected {
		t.Errorf("replay file:\n%s", data)
	}
	for _, secret := range [][]byte{[]byte(alphabet.StubSecret), []byte(probeDetail)} {
		if alphabet.LeakForm(data, secret) != "" {
			t.Errorf("the replay file holds a secret:\n%s", data)
		}
	}
	var out, errOut bytes.Buffer
	if code := ReplayMain(append([]string{"-timeout", wait.String(), path, "--"}, faulty...), &out, &errOut); code != conformance.ExitFailures {
		t.Errorf("against the faulty worker: status %d, want 1\n%s%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "still fails") || !strings.Contains(out.String(), "recorded problem: "+f.Problem) || !strings.Contains(out.String(), "≠ ") {
		t.Errorf("output:\n%s", out.String())
	}
	out.Reset()
	if code := ReplayMain(append([]string{"-timeout", wait.String(), path, "--"}, referenceCommand(t)...), &out, &errOut); code != conformance.ExitOK {
		t.Errorf("against the reference worker: status %d, want 0\n%s%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "no longer fails") {
		t.Errorf("output:\n%s", out.String())
	}
	// A worker command that cannot serve the file's needs cannot pass: it is a usage error, as
	// is a need or a symbol the explorer does not know.
	if code := ReplayMain([]string{path, "--", referenceCommand(t)[0]}, &out, &errOut); code != conformance.ExitUsage {
		t.Errorf("a worker command without placeholders: status %d, want 2", code)
	}
	for name, edit := range map[string]func(f *replay.File){
		"unknown need":   func(f *replay.File) { f.Needs = append(f.Needs, "teleport") },
		"unknown symbol": func(f *replay.File) { f.Steps[0].Symbol = "open_teleport" },
	} {
		g := f
		g.Needs, g.Steps = slices.Clone(f.Needs), slices.Clone(f.Steps)
		edit(&g)
		b, err := g.Encode()
		if err != nil {
			t.Fatal(err)
		}
		bad := filepath.Join(t.TempDir(), "bad.json")
		if err := os.WriteFile(bad, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if code := ReplayMain(append([]string{bad, "--"}, faulty...), &out, &errOut); code != conformance.ExitUsage {
			t.Errorf("%s: status %d, want 2", name, code)
		}
	}
}
