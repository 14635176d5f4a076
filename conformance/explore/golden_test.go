package explore

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/splashv5/conform/conformance/explore/alphabet"
	"github.com/splashv5/conform/conformance/explore/mealy"
	"github.com/splashv5/conform/impl/canonjson"
)

var update = flag.Bool("update", false, "rewrite the reference machine and its drawing")

// referenceLauncher returns a launcher of the reference worker with every need.
func referenceLauncher(t testing.TB, tags ...string) *Launcher {
	return &Launcher{Command: referenceCommand(t, tags...), Scope: "explore", Needs: allNeeds, Mode: canonjson.Preserve}
}

// Spec: EXP-006, EXP-007, EXP-014, EXP-018 — the reference worker learned black-box over the
// whole alphabet, one fresh process per query, each step settled by attribution, is the
// committed machine; the committed drawing is the machine's (EXP-008).
func TestReferenceMachineGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("learns the reference worker")
	}
	start := time.Now()
	l := referenceLauncher(t)
	// The answer wait is only the bound for a worker that hangs (EXP-018); a loaded machine, a
	// race-built test, must not turn a slow answer into a hang.
	l.AnswerWait = 10 * time.Second
	m, stats, err := Learn(context.Background(), l, alphabet.For(allNeeds...), 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	starts, _, _ := l.Counts()
	t.Logf("reference machine: %d states, %d queries (%d symbols), %d process starts (%d prefix probes) in %s: %.1f queries/s, %.1f starts/s",
		m.States(), stats.Queries, stats.Symbols, starts, l.Probes(), took.Round(time.Millisecond), float64(stats.Queries)/took.Seconds(), float64(starts)/took.Seconds())
	got, err := EncodeMachine(m)
	if err != nil {
		t.Fatal(err)
	}
	var svg bytes.Buffer
	if err := mealy.WriteSVG(&svg, m, Style("reference worker", nil)); err != nil {
		t.Fatal(err)
	}
	svgPath := filepath.Join("..", "..", "docs", "explore-reference.svg")
	if *update {
		if err := os.WriteFile(ReferenceMachineFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(svgPath, svg.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := ReferenceMachine()
	if err != nil {
		t.Fatal(err)
	}
	if diffs, err := mealy.Differences(want, m, 10); err != nil || len(diffs) > 0 {
		for _, d := range diffs {
			t.Errorf("after %s the committed machine says %s, the live reference worker did %s", words(d.Word), outputs(d.Expected), outputs(d.Observed))
		}
		t.Fatalf("the committed reference machine is stale (err %v): run go test ./conformance/explore -run TestReferenceMachineGolden -update", err)
	}
	committed, err := os.ReadFile(svgPath)
	if err != nil {
		t.Fatal(err)
	}
	var wantSVG bytes.Buffer
	_ = mealy.WriteSVG(&wantSVG, want, Style("reference worker", nil))
	if !bytes.Equal(committed, wantSVG.Bytes()) {
		t.Errorf("docs/explore-reference.svg is not the drawing of the committed machine: run with -update")
	}
}
