package explore

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance"
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
