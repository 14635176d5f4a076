package worker

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/conformance"
)

// TestSlowStartsPassMultiStartChecks runs CNF-COMP-21, which starts the worker four times,
// against the reference worker behind a wrapper that waits 0.6 s before each start, under a
// 2 s limit: the four starts take longer than one limit, each far less. Every start renews the
// limit, so the correct worker passes; before, the check timed out.
func TestSlowStartsPassMultiStartChecks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the reference worker")
	}
	cfg := referenceConfig(t)
	cfg.Worker = append([]string{"/bin/sh", "-c", `sleep 0.6; exec "$@"`, "slow-start"}, cfg.Worker...)
	cfg.Run, cfg.Timeout, cfg.Verbose = "^CNF-COMP-21$", 2*time.Second, true
	report, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := resultOf(t, report, "CNF-COMP-21")
	starts := 0
	for _, line := range r.Transcript {
		if strings.Contains(line, " started (pid ") {
			starts++
		}
	}
	if r.Outcome != conformance.Pass || starts < 4 || r.Duration < 2*time.Second {
		t.Errorf("%s after %v with %d worker starts: %s\n%s", r.Outcome, r.Duration, starts, r.Detail, strings.Join(r.Transcript, "\n"))
	}
}
