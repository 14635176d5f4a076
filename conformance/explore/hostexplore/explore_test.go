package hostexplore

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/conformancetest"
	"github.com/splashv5/conform/conformance/explore/replay"
)

// Spec: EXP-015 — the same seed and stream draw the same sequence; a driver is sent only the
// commands its features admit; a sequence starts with a start and a restart is followed by one.
func TestDrawIsReproducibleAndFeatureBound(t *testing.T) {
	all := []string{featInvoke, featDurable, featCancel, featRecover, featCompensate}
	if a, b := Draw(5, 3, all, 200), Draw(5, 3, all, 200); !slices.Equal(a, b) {
		t.Fatalf("two draws of one seed differ:\n%v\n%v", a, b)
	}
	if a, b := Draw(5, 3, all, 200), Draw(5, 4, all, 200); slices.Equal(a, b) {
		t.Fatal("two streams of one seed draw the same sequence")
	}
	invokeOnly := Draw(9, 0, []string{featInvoke}, 500)
	seen := map[string]bool{}
	for i, s := range invokeOnly {
		seen[s.Op] = true
		if needOf(s.Op) != featInvoke || s.How == howCancel {
			t.Fatalf("step %d: %s drawn for a driver that declares only invoke", i, s)
		}
	}
	for _, op := range []string{"start", "invoke", "close", "wait", "bogus"} {
		if !seen[op] {
			t.Errorf("500 draws never chose %s", op)
		}
	}
	seq := Draw(2, 7, all, 500)
	if seq[0] != (Symbol{Op: "start"}) {
		t.Errorf("the sequence starts with %s", seq[0])
	}
	for i, s := range seq[:len(seq)-1] {
		if s.Op == "restart" && seq[i+1].Op != "start" {
			t.Errorf("step %d: %s follows a restart", i+1, seq[i+1])
		}
	}
	for _, s := range seq {
		if got, ok := ParseSymbol(s.String()); !ok || got != s {
			t.Errorf("%s does not read back (%v, %v)", s, got, ok)
		}
	}
	for _, bad := range []string{"", "invoke:never", "launch", "start:answer"} {
		if _, ok := ParseSymbol(bad); ok {
			t.Errorf("ParseSymbol(%q) accepted", bad)
		}
	}
}

// Spec: EXP-016 — the reference driver explores clean: no invariant breaks over several seeds
// (the false-alarm check of the explorer).
func TestReferenceDriverExploresClean(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the reference driver for about half a minute")
	}
	cfg := testConfig(t, conformancetest.Program(t, conformancetest.DriverPackage))
	walks := 0
	for _, seed := range []uint64{1, 2, 3} {
		cfg.Seed, cfg.Duration, cfg.Parallel = seed, 10*time.Second, 2
		res, err := Explore(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if f := res.Failure; f != nil {
			t.Errorf("seed %d, sequence %d: %v\nshrunk: %s\n%s", seed, f.Walk, f.Run.Violation, symbolsText(f.Shrunk), strings.Join(f.Run.Transcript, "\n"))
		}
		if res.Walks == 0 || res.Steps == 0 {
			t.Errorf("seed %d: %d sequences, %d commands", seed, res.Walks, res.Steps)
		}
		walks += res.Walks
		t.Logf("seed %d: %d sequences, %d commands, features %v", seed, res.Walks, res.Steps, res.Features)
	}
}

// Spec: EXP-009, EXP-010, EXP-017 — a fault of the reference driver is found, shrunk to a
// short sequence that still breaks the same invariant, written as a host replay file that
// decodes back to the same commands; replaying it fails against the faulty driver and passes
// against the reference.
func TestFaultIsShrunkAndReplayed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the faulty driver")
	}
	faulty := conformancetest.Program(t, conformancetest.DriverPackage, "splashfaults")
	cfg := testConfig(t, faulty, "SPLASH_HOST_FAULT=closeframe")
	cfg.Seed, cfg.Duration, cfg.Parallel = 4, 30*time.Second, 2
	res, err := Explore(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := res.Failure
	if f == nil {
		t.Fatal("the closeframe fault (close_session on an ordinary session) was not found")
	}
	if got := f.Run.Violation.Invariant; got != "frame-admitted" {
		t.Fatalf("found as %s, want frame-admitted: %v", got, f.Run.Violation)
	}
	if len(f.Shrunk) > 3 || len(f.Shrunk) >= len(f.Drawn) && len(f.Drawn) > 3 {
		t.Errorf("shrunk from %d to %d commands: %s", len(f.Drawn), len(f.Shrunk), symbolsText(f.Shrunk))
	}
	if f.Minimal && !slices.Equal(f.Shrunk, []Symbol{{Op: "start"}, {Op: "close"}}) {
		t.Errorf("the minimal sequence is %s, want start close", symbolsText(f.Shrunk))
	}
	file, err := ReplayFile(cfg, res.Features, f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := file.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := replay.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := Symbols(back)
	if err != nil || !slices.Equal(syms, f.Shrunk) {
		t.Fatalf("the replay file reads back as %v (%v), want %v", syms, err, f.Shrunk)
	}
	if back.Suite != "host" || back.Seed != cfg.Seed || back.Level != "MUST" || !slices.Contains(back.Spec, "WRK-022") {
		t.Errorf("replay file header %+v", back)
	}
	path := filepath.Join(t.TempDir(), "replay.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := replayMain(cfg, path, &out, &errOut); code != conformance.ExitFailures || !strings.Contains(out.String(), "FAIL frame-admitted") {
		t.Errorf("replay against the faulty driver: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	out.Reset()
	reference := testConfig(t, conformancetest.Program(t, conformancetest.DriverPackage))
	if code := replayMain(reference, path, &out, &errOut); code != conformance.ExitOK {
		t.Errorf("replay against the reference driver: exit %d\n%s%s", code, out.String(), errOut.String())
	}
}

// Spec: EXP-010 — a replay file of another suite, or with a symbol outside the host alphabet,
// is refused.
func TestReplayRefusesForeignFiles(t *testing.T) {
	f := replay.File{Version: replay.Version, Suite: "worker", Numbers: "preserve", Level: "MUST",
		Steps: []replay.Step{{Symbol: "invoke", Expected: "a", Observed: "b"}}}
	if _, err := Symbols(f); err == nil {
		t.Error("a worker replay file was read as a host one")
	}
	f.Suite = "host"
	f.Steps[0].Symbol = "invoke_slow"
	if _, err := Symbols(f); err == nil {
		t.Error("a worker symbol was read as a host one")
	}
}

// TestMainListsInvariantsAndRefusesBadFlags covers the command line: -list names every
// invariant with its requirement IDs, and a bad flag is a usage error.
func TestMainListsInvariantsAndRefusesBadFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Main([]string{"-list"}, &out, &errOut); code != conformance.ExitOK {
		t.Fatalf("-list: exit %d: %s", code, errOut.String())
	}
	for _, iv := range Invariants() {
		if !strings.Contains(out.String(), checkID(iv.Name)) {
			t.Errorf("-list does not name %s", checkID(iv.Name))
		}
	}
	if code := Main([]string{"-length", "0", "--", "true"}, &out, &errOut); code != conformance.ExitUsage {
		t.Errorf("-length 0: exit %d", code)
	}
	if code := Main([]string{"-no-such-flag"}, &out, &errOut); code != conformance.ExitUsage {
		t.Errorf("an unknown flag: exit %d", code)
	}
}
