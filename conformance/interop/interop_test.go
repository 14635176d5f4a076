package interop

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/conformancetest"
)

// TestReferencePairPassesEveryScenario runs every scenario on the reference host driver and the
// reference worker: each passes, judged at both ends and on the wire (IOP-001, IOP-005).
func TestReferencePairPassesEveryScenario(t *testing.T) {
	report := runPairT(t, referencePair(t), "", 0, nil)
	if len(report.Results) != len(Catalog()) {
		t.Fatalf("%d results for %d scenarios", len(report.Results), len(Catalog()))
	}
	for _, r := range report.Results {
		if r.Outcome != conformance.Pass {
			t.Errorf("%s: %s: %s\n%s", r.ID, r.Outcome, r.Detail, strings.Join(r.Transcript, "\n"))
		}
	}
}

// TestLossyWorkerShowsTheNumberHazard pairs the reference host with the reference worker in
// Lossy mode: the number scenario is the documented hazard (INFO, explained), the others pass
// (IOP-007, ENC-055).
func TestLossyWorkerShowsTheNumberHazard(t *testing.T) {
	pair := referencePair(t)
	pair.Worker.Command = append(slices.Clone(pair.Worker.Command), "--number-mode", "lossy")
	pair.Worker.Numbers = NumbersLossy
	report := runPairT(t, pair, "CNF-IOP-NUMBER|CNF-IOP-ECHO", 0, nil)
	for _, r := range report.Results {
		switch {
		case r.ID == "CNF-IOP-NUMBER-01":
			if r.Outcome != conformance.Info || !strings.Contains(r.Detail, "documented hazard") || !strings.Contains(r.Detail, "ENC-055") {
				t.Errorf("%s: %s %q, want INFO with the documented hazard", r.ID, r.Outcome, r.Detail)
			}
			if r.Counted {
				t.Errorf("%s: the hazard counts", r.ID)
			}
		case r.Outcome != conformance.Pass:
			t.Errorf("%s: %s: %s", r.ID, r.Outcome, r.Detail)
		}
	}
}

// TestScenariosSkipWhatASideLacks removes features from each side in turn: a worker without
// the durable, compensation and cancel features, then a host restricted to invoke. Each
// scenario that needs a missing feature is SKIP, naming the side and the feature, and none of
// its commands is sent (nothing for a worker's lack, only the hello that learns the host's
// features for a host's); a scenario that needs nothing missing still runs and passes (IOP-008).
func TestScenariosSkipWhatASideLacks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		lack    func(p *Pair)
		skipped []string
		why     string
	}{
		{"worker", func(p *Pair) { p.Worker.Features = nil },
			[]string{"CNF-IOP-DURABLE-01", "CNF-IOP-CANCEL-01", "CNF-IOP-COMP-01", "CNF-IOP-CLOSE-02"}, "the worker reference worker does not offer"},
		{"host", func(p *Pair) { p.Host.Features = []string{featureInvoke} },
			[]string{"CNF-IOP-DURABLE-01", "CNF-IOP-CANCEL-01", "CNF-IOP-COMP-01", "CNF-IOP-RECOVER-01", "CNF-IOP-CLOSE-02"}, "the host reference host does not declare the feature"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pair := referencePair(t)
			tc.lack(&pair)
			run := "^(" + strings.Join(tc.skipped, "|") + "|CNF-IOP-ECHO-01)$"
			report, err := Run(t.Context(), Config{RunConfig: conformance.RunConfig{Run: run, Verbose: true, Parallel: 2}, Pair: pair, Relay: relayCommand(t)})
			if err != nil {
				t.Fatal(err)
			}
			if len(report.Results) != len(tc.skipped)+1 {
				t.Fatalf("%d results, want %d", len(report.Results), len(tc.skipped)+1)
			}
			for _, r := range report.Results {
				if r.ID == "CNF-IOP-ECHO-01" {
					if r.Outcome != conformance.Pass {
						t.Errorf("%s: %s %q, want PASS: it needs nothing the side lacks", r.ID, r.Outcome, r.Detail)
					}
					continue
				}
				if r.Outcome != conformance.Skip || !strings.Contains(r.Detail, tc.why) {
					t.Errorf("%s: %s %q, want SKIP: %s …", r.ID, r.Outcome, r.Detail, tc.why)
				}
				// The worker's features are known before the driver starts; the host's from its hello.
				isHello := func(l string) bool {
					return strings.Contains(l, "driver: command ") && strings.Contains(l, `"op":"hello"`)
				}
				hello := slices.ContainsFunc(r.Transcript, isHello)
				if hello != (tc.name == "host") {
					t.Errorf("%s: the transcript %q: hello sent %v", r.ID, r.Transcript, hello)
				}
				for _, line := range r.Transcript {
					if strings.Contains(line, "driver: command") && !isHello(line) || strings.Contains(line, "relay ") {
						t.Errorf("%s: a skipped scenario sent %q", r.ID, line)
					}
				}
			}
		})
	}
}

// TestHostilePeers runs a scenario against workers and drivers that flood, hang, write garbage
// or exit early: each costs at most the time limit, and no process of their groups survives the
// run (IOP-006).
func TestHostilePeers(t *testing.T) {
	pair := referencePair(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	limit := 3 * time.Second
	for _, tc := range []struct {
		name   string
		worker string // a hostile worker mode, or ""
		driver string // a hostile driver mode, or ""
	}{
		{"worker-flood", "flood", ""}, {"worker-garbage", "garbage", ""}, {"worker-hang", "hang", ""},
		{"worker-exit", "exit", ""}, {"worker-child", "child", ""},
		{"driver-hang", "", "hang"}, {"driver-flood", "", "flood"}, {"driver-exit", "", "exit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pids := t.TempDir()
			p := pair
			if tc.worker != "" {
				p.Worker.Command = []string{exe, hostileWorkerCommand, tc.worker}
			}
			if tc.driver != "" {
				p.Host.Command = []string{exe, hostileDriverCommand, tc.driver}
			}
			start := time.Now()
			report := runPairT(t, p, "CNF-IOP-CLOSE-01", limit, append(os.Environ(), "IOP_PIDS="+pids))
			if took := time.Since(start); took > limit+3*time.Second {
				t.Errorf("the run took %v with a %v limit", took, limit)
			}
			for _, r := range report.Results {
				if !r.Outcome.Failed() {
					t.Errorf("%s: %s, want a failure", r.ID, r.Outcome)
				}
				if tc.worker == "garbage" && !strings.Contains(r.Detail, "blame: worker") {
					t.Errorf("%s: %q, want the garbage blamed on the worker", r.ID, r.Detail)
				}
			}
			if entries, _ := os.ReadDir(pids); len(entries) == 0 {
				t.Fatal("no hostile process recorded its group")
			}
			if left := conformancetest.Survivors(t, pids, time.Second); len(left) > 0 {
				t.Fatalf("process groups %v survive the run", left)
			}
		})
	}
}

// TestCatalog checks the scenarios' IDs, titles and requirement citations.
func TestCatalog(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Catalog() {
		if seen[s.ID] || !strings.HasPrefix(s.ID, "CNF-IOP-") {
			t.Errorf("%s: defined twice or not a CNF-IOP ID", s.ID)
		}
		seen[s.ID] = true
		if len(s.Requirements) == 0 || s.Title == "" || s.Run == nil {
			t.Errorf("%s is incomplete", s.ID)
		}
	}
}

// BenchmarkBundledMatrix runs the bundled matrix: the reference host driver with the reference
// worker in both number models.
func BenchmarkBundledMatrix(b *testing.B) {
	pair := referencePair(b)
	lossy := pair.Worker
	lossy.Name, lossy.Numbers = "reference worker (lossy)", NumbersLossy
	lossy.Command = append(slices.Clone(lossy.Command), "--number-mode", "lossy")
	m := &Matrix{Hosts: []Implementation{pair.Host}, Workers: []Implementation{pair.Worker, lossy}}
	for b.Loop() {
		res, err := RunMatrix(b.Context(), m, Config{RunConfig: conformance.RunConfig{TempDir: b.TempDir()}, Relay: relayCommand(b)})
		if err != nil {
			b.Fatal(err)
		}
		if res.Failing() {
			b.Fatal("the bundled matrix fails")
		}
	}
}

// TestLostAnswerScenariosPass runs the scenarios in which the relay cuts the worker's answer
// with the reference pair. Run it with -count under load: the cut must take every time, since
// the runner lets the host send the request only once the relay has acknowledged the order.
func TestLostAnswerScenariosPass(t *testing.T) {
	report := runPairT(t, referencePair(t), "^(CNF-IOP-DURABLE-03|CNF-IOP-COMP-02|CNF-IOP-RECOVER-01)$", 0, nil)
	if len(report.Results) != 3 {
		t.Fatalf("%d results, want 3", len(report.Results))
	}
	for _, r := range report.Results {
		if r.Outcome != conformance.Pass {
			t.Errorf("%s: %s: %s\n%s", r.ID, r.Outcome, r.Detail, strings.Join(r.Transcript, "\n"))
		}
	}
}

// TestSelfTestCorpus runs every case of the shipped self-test corpus on this runner, with the
// shipped peers: each scenario gets the verdict the corpus gives, and a failing one names the
// side the corpus names (IOP-005, IOP-006).
func TestSelfTestCorpus(t *testing.T) {
	cases, err := SelfTest()
	if err != nil {
		t.Fatal(err)
	}
	programs(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tokens := map[string]string{TokenReferenceHost: driverBin, TokenReferenceWorker: workerBin}
	resolve := func(cmd []string) []string {
		out := ExpandPeer(cmd, []string{exe, PeerCommand})
		for i, a := range out {
			if p, ok := tokens[a]; ok {
				out[i] = p
			}
		}
		return out
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			pair := Pair{Host: c.Host, Worker: c.Worker}
			pair.Host.Command, pair.Worker.Command = resolve(c.Host.Command), resolve(c.Worker.Command)
			report := runPairT(t, pair, "^"+c.Scenario+"$", 8*time.Second, nil)
			if len(report.Results) != 1 {
				t.Fatalf("%d results", len(report.Results))
			}
			r := report.Results[0]
			t.Logf("%s: %s", r.Outcome, r.Detail)
			if r.Outcome != c.Outcome {
				t.Errorf("%s: %s, want %s: %s", r.ID, r.Outcome, c.Outcome, r.Detail)
			}
			if c.Blame != "" && !strings.Contains(r.Detail, "blame: "+string(c.Blame)+")") {
				t.Errorf("%s: %q, want the %s blamed", r.ID, r.Detail, c.Blame)
			}
			if c.Blame != "" && !strings.Contains(r.Detail, "worker: ") {
				t.Errorf("%s: %q, want the worker's end shown", r.ID, r.Detail)
			}
		})
	}
}
