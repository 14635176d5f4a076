package worker

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/conformancetest"
)

// referenceWorkerBinary returns the reference worker, built once per test binary.
func referenceWorkerBinary(t testing.TB) string {
	return conformancetest.Program(t, conformancetest.WorkerPackage)
}

// faultyWorkerBinary returns the faulty build of the reference worker (build tag
// splashfaults), which the mutation test runs with --fault.
func faultyWorkerBinary(t testing.TB) string {
	return conformancetest.Program(t, conformancetest.WorkerPackage, "splashfaults")
}

func mustGetwd() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return wd
}

// referenceConfig runs every check against the reference worker with a journal, an effect
// log and a scope per check.
func referenceConfig(t testing.TB, extra ...string) Config {
	return workerConfig(referenceWorkerBinary(t), extra...)
}

// faultyConfig is referenceConfig for the faulty build.
func faultyConfig(t testing.TB, extra ...string) Config {
	return workerConfig(faultyWorkerBinary(t), extra...)
}

func workerConfig(bin string, extra ...string) Config {
	worker := append([]string{bin}, conformance.ReferenceWorkerArgs...)
	return Config{RunConfig: conformance.RunConfig{Parallel: 4, Timeout: 10 * time.Second}, Worker: append(worker, extra...), Strict: true}
}

// Spec: WRK-090, WRK-091, WRK-092, WRK-093, WRK-094, CAN-024, PRF-001, PRF-002
// TestReferenceWorkerConforms runs the whole suite, strictly, against the bundled reference
// worker: every check must pass, and both reports must match their schemas.
func TestReferenceWorkerConforms(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the reference worker")
	}
	cfg := referenceConfig(t)
	report, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range report.Results {
		if r.Outcome != conformance.Pass {
			t.Errorf("%s %s [%v]: %s\n  stderr: %s", r.Outcome, r.ID, r.Requirements, r.Detail, conformance.LastStderrLine(r.Stderr))
		}
	}
	if len(report.Results) != len(Catalog()) {
		t.Errorf("%d results for %d checks", len(report.Results), len(Catalog()))
	}
	if report.ExitCode() != 0 {
		t.Errorf("exit code %d", report.ExitCode())
	}
	validateReports(t, report)
	t.Logf("%d checks against the reference worker in %v (parallel %d): %s",
		len(report.Results), report.Duration.Round(time.Millisecond), cfg.Parallel, report.ClosingLine())
}

// BenchmarkReferenceSuite measures one full run of the suite against the reference worker
// (report "s/suite"; the target is under 10 s on 2 cores).
func BenchmarkReferenceSuite(b *testing.B) {
	cfg := referenceConfig(b)
	cfg.Strict = false
	b.ResetTimer()
	for b.Loop() {
		report, err := Run(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		if report.ExitCode() != 0 {
			b.Fatalf("the reference worker failed the suite: %s", report.ClosingLine())
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/suite")
}

// Spec: ENC-036, ENC-039, ENC-055
// TestNumberChecksSeeTheLossyModel runs the number-model checks against the reference worker
// in the lossy model of a standalone Rust worker: it cannot verify frames whose payload
// numbers it would rewrite, which is INFO by default and a failure under --strict. The
// durable check of the same numbers passes: the lossy worker refuses the dispatch before its
// effect, which strands nothing.
func TestNumberChecksSeeTheLossyModel(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the reference worker")
	}
	for _, strict := range []bool{false, true} {
		cfg := referenceConfig(t, "--number-mode", "lossy")
		cfg.Run = "CNF-NUMBER-"
		cfg.Strict = strict
		report, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		want, wantExit := conformance.Info, 0
		if strict {
			want, wantExit = conformance.Fail, 1
		}
		if len(report.Results) != 5 {
			t.Fatalf("%d results; want the five number checks", len(report.Results))
		}
		for _, r := range report.Results {
			if r.Outcome != want || !strings.Contains(r.Actual, "status 4 (transport)") {
				t.Errorf("strict=%v: %s %s %q; want %s after a transport rejection", strict, r.ID, r.Outcome, r.Detail, want)
			}
		}
		if report.ExitCode() != wantExit {
			t.Errorf("strict=%v: exit %d; want %d", strict, report.ExitCode(), wantExit)
		}
	}
	cfg := referenceConfig(t, "--number-mode", "lossy")
	cfg.Run = "CNF-DURABLE-26"
	cfg.Strict = true
	report, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Results) != 1 || report.Results[0].Outcome != conformance.Pass {
		t.Fatalf("a lossy worker refuses the dispatch before its effect; got %+v", report.Results)
	}
}
