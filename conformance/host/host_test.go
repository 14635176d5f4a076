package host

import (
	"context"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/conformancetest"
)

func runSuite(t testing.TB, driver []string, run string, env []string) *conformance.Report {
	t.Helper()
	// A check's default limit is ample for a correct driver on a loaded machine, but the race
	// detector runs every process several times slower: give it what the worker suite's tests
	// give it.
	var limit time.Duration
	if raceBuild {
		limit = 10 * time.Second
	}
	report, err := Run(context.Background(), Config{Driver: driver, FakeWorker: fakeWorkerCommand(t),
		RunConfig: conformance.RunConfig{Run: run, Env: env, TempDir: t.TempDir(), Timeout: limit}})
	if err != nil {
		t.Fatal(err)
	}
	return report
}

// TestReferenceDriverPassesEveryCheck runs the whole host suite against the bundled driver
// (HDR-001 to HDR-025 through the checks that cite them).
func TestReferenceDriverPassesEveryCheck(t *testing.T) {
	report := runSuite(t, []string{referenceDriver(t)}, "", nil)
	if len(report.Results) != len(Catalog()) {
		t.Fatalf("%d results for %d checks", len(report.Results), len(Catalog()))
	}
	for _, r := range report.Results {
		if r.Outcome != conformance.Pass {
			t.Errorf("%s: %s: %s\n%s", r.ID, r.Outcome, r.Detail, r.Stderr)
		}
	}
}

// TestCatalog checks the IDs, levels and requirement citations of the host checks.
func TestCatalog(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Catalog() {
		if seen[c.ID] {
			t.Errorf("%s defined twice", c.ID)
		}
		seen[c.ID] = true
		if len(c.Requirements) == 0 || c.Title == "" || c.Run == nil || (c.Level != conformance.Must && c.Level != conformance.Should) {
			t.Errorf("%s is incomplete", c.ID)
		}
	}
}

// TestHostileDrivers runs the suite against drivers that hang, flood, crash, never start the
// worker, start it twice or leak its key: every check fails or times out within its limit, and
// no process of any driver's group survives the run (HDR-031).
func TestHostileDrivers(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The hostile driver is this test binary. On a loaded machine (make test runs packages
	// in parallel) it has needed about a second to start a worker and answer, and several
	// times that under the race detector.
	limit := 2 * time.Second
	if raceBuild {
		limit = 4 * time.Second
	}
	for _, tc := range []struct {
		mode, run string
		want      []conformance.Outcome
	}{
		{"hang", "CNF-HOPEN-01", []conformance.Outcome{conformance.Fail}},
		{"flood", "CNF-HOPEN-01", []conformance.Outcome{conformance.Fail}},
		{"crash", "CNF-HOPEN-01", []conformance.Outcome{conformance.Crash, conformance.Fail}},
		{"nostart", "CNF-HOPEN-01", []conformance.Outcome{conformance.Fail}},
		{"twice", "CNF-HBOOT-04", []conformance.Outcome{conformance.Fail}},
		{"leak", "CNF-HBOOT-03", []conformance.Outcome{conformance.Fail, conformance.Timeout}},
		{"leakfile", "CNF-HBOOT-05", []conformance.Outcome{conformance.Fail}},
		{"fixedkey", "CNF-HBOOT-06", []conformance.Outcome{conformance.Fail}},
		{"counterkey", "CNF-HBOOT-06", []conformance.Outcome{conformance.Fail}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			pids := t.TempDir()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			report, err := Run(context.Background(), Config{Driver: []string{exe, hostileDriverCommand, tc.mode}, FakeWorker: fakeWorkerCommand(t),
				RunConfig: conformance.RunConfig{Run: tc.run, Timeout: limit, Env: append(os.Environ(), "HOSTCONF_PIDS="+pids), TempDir: t.TempDir()}})
			took := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			conformancetest.CheckCitations(t, report)
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 64<<20 {
				t.Errorf("the heap grew by %d MiB", grown>>20)
			}
			if took > limit+3*time.Second {
				t.Errorf("the run took %v with a %v limit", took, limit)
			}
			for _, r := range report.Results {
				if !slices.Contains(tc.want, r.Outcome) {
					t.Errorf("%s: %s (%s), want one of %v", r.ID, r.Outcome, r.Detail, tc.want)
				}
				if tc.mode == "leakfile" && !strings.Contains(r.Detail, "the key in the file") {
					t.Errorf("%s: %s, want the key found in a file", r.ID, r.Detail)
				}
			}
			if left := conformancetest.Survivors(t, pids, time.Second); len(left) > 0 {
				t.Errorf("process groups %v survive the run", left)
			}
		})
	}
}

// BenchmarkHostSuite runs the whole host suite against the bundled driver.
func BenchmarkHostSuite(b *testing.B) {
	driver := []string{referenceDriver(b)}
	for b.Loop() {
		report := runSuite(b, driver, "", nil)
		if report.Summary.Failing > 0 {
			b.Fatalf("%d checks fail", report.Summary.Failing)
		}
	}
}

// TestVerboseTranscriptShowsStartFields runs a ledger check verbosely against the bundled
// driver: its transcript must show the start command's plan, scope and state, which a line cut
// after the manifest never reached.
func TestVerboseTranscriptShowsStartFields(t *testing.T) {
	report, err := Run(context.Background(), Config{Driver: []string{referenceDriver(t)}, FakeWorker: fakeWorkerCommand(t),
		RunConfig: conformance.RunConfig{Run: "^CNF-HCOMP-02$", TempDir: t.TempDir(), Verbose: true}})
	if err != nil {
		t.Fatal(err)
	}
	transcript := strings.Join(report.Results[0].Transcript, "\n")
	for _, want := range []string{`"op":"start"`, `"plan":{`, `"scope":"` + workerScope + `"`, `"state":"`, `"manifest":{`} {
		if !strings.Contains(transcript, want) {
			t.Errorf("the transcript lacks %s:\n%s", want, transcript)
		}
	}
}
