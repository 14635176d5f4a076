package host

import (
	"context"
	"os"
	"testing"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/conformancetest"
)

// TestSlowDriverPassesPacedChecks runs the checks of a thousand round trips, and CNF-HCOMP-01,
// against the test build's slow driver, a correct host about ten times slower than the
// reference driver: their limits and waits are sized from the driver's measured pace, so they
// pass within the default check limit.
func TestSlowDriverPassesPacedChecks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the test driver and runs two long checks")
	}
	bin := conformancetest.Program(t, conformancetest.DriverPackage, "splashfaults")
	report, err := Run(context.Background(), Config{Driver: []string{bin}, FakeWorker: fakeWorkerCommand(t),
		RunConfig: conformance.RunConfig{Run: "CNF-HBUDGET-02|CNF-HCANCEL-08|CNF-HCOMP-01", Env: append(os.Environ(), "SPLASH_HOST_FAULT=slow"), TempDir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Results) != 3 {
		t.Fatalf("%d results", len(report.Results))
	}
	for _, r := range report.Results {
		if r.Outcome != conformance.Pass {
			t.Errorf("%s: %s: %s", r.ID, r.Outcome, r.Detail)
		}
	}
}
