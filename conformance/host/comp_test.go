package host

import (
	"context"
	"os"
	"testing"

	"github.com/splashv5/conform/conformance"
)

// lateIntentRuns is how many times TestHCOMP01CatchesLateIntentEveryRun runs the check per
// driver: a race lost once in ten would show.
const lateIntentRuns = 20

// TestHCOMP01CatchesLateIntentEveryRun runs CNF-HCOMP-01 lateIntentRuns times against the test
// build's intent-late fault, a host that records a compensation's intent only once its frame is
// written (WFL-022, HDR-043), and as often against the same build without a fault: the fault
// fails every run and the correct host passes every run. The state directories are on a tmpfs
// where there is one, where the late write, its fsync included, is quickest: a check that only
// raced the host's write lost about one run in five there.
func TestHCOMP01CatchesLateIntentEveryRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the test driver and runs one check forty times")
	}
	bin, cleanup, err := BuildDriver("splashfaults")
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	tmp := fastTempDir(t)
	for _, c := range []struct {
		fault string
		want  conformance.Outcome
	}{{"intent-late", conformance.Fail}, {"", conformance.Pass}} {
		got := 0
		for range lateIntentRuns {
			report, err := Run(context.Background(), Config{Driver: []string{bin}, FakeWorker: fakeWorkerCommand(t),
				Run: "CNF-HCOMP-01", Env: append(os.Environ(), "SPLASH_HOST_FAULT="+c.fault), TempDir: tmp})
			if err != nil {
				t.Fatal(err)
			}
			if len(report.Results) != 1 {
				t.Fatalf("%d results", len(report.Results))
			}
			if r := report.Results[0]; r.Outcome == c.want {
				got++
			} else {
				t.Logf("fault %q: %s: %s", c.fault, r.Outcome, r.Detail)
			}
		}
		t.Logf("fault %q: %s in %d/%d runs", c.fault, c.want, got, lateIntentRuns)
		if got != lateIntentRuns {
			t.Errorf("fault %q: %s in %d/%d runs, want every run", c.fault, c.want, got, lateIntentRuns)
		}
	}
}

// fastTempDir is a fresh directory on the Linux shared-memory tmpfs when there is one, else
// the test's temporary directory.
func fastTempDir(t *testing.T) string {
	if dir, err := os.MkdirTemp("/dev/shm", "hconf-"); err == nil {
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
		return dir
	}
	return t.TempDir()
}
