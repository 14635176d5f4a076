package worker

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance"
)

// TestFinishRun holds the end every suite's command line shares: a failing report exits
// ExitFailures, a passing one ExitOK, an interrupted one ExitUsage whatever its results (its
// report is incomplete), and a report file that cannot be written ExitUsage; every report
// asked for is written, and the closing line is printed last.
func TestFinishRun(t *testing.T) {
	report := func(outcome conformance.Outcome) *conformance.Report {
		r := &conformance.Report{Suite: Suite(), Worker: []string{"w"}, Results: []conformance.Result{
			{ID: "CNF-FRAME-10", Requirements: []string{"FRM-027"}, Level: conformance.Must, Outcome: outcome, Counted: true},
		}}
		r.Summary = conformance.Summarize(r.Results)
		return r
	}
	dir := t.TempDir()
	out := conformance.RunOutputs{JSON: filepath.Join(dir, "r.json"), JUnit: filepath.Join(dir, "r.xml"), HTML: filepath.Join(dir, "r.html")}
	for _, c := range []struct {
		name    string
		outcome conformance.Outcome
		runErr  error
		out     conformance.RunOutputs
		want    int
		stderr  string
	}{
		{"passing", conformance.Pass, nil, out, conformance.ExitOK, ""},
		{"failing", conformance.Fail, nil, out, conformance.ExitFailures, ""},
		{"interrupted and failing", conformance.Fail, errors.New("signal: interrupt"), conformance.RunOutputs{}, conformance.ExitUsage, "prog: interrupted: signal: interrupt"},
		{"interrupted and passing", conformance.Pass, errors.New("signal: interrupt"), conformance.RunOutputs{}, conformance.ExitUsage, "prog: interrupted"},
		{"unwritable report", conformance.Pass, nil, conformance.RunOutputs{JSON: filepath.Join(dir, "missing", "r.json")}, conformance.ExitUsage, "prog: writing the JSON report"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, p := range []string{out.JSON, out.JUnit, out.HTML} {
				_ = os.Remove(p)
			}
			var stdout, stderr bytes.Buffer
			got := conformance.FinishRun("prog", report(c.outcome), c.runErr, &conformance.ExpectFlags{}, nil, c.out, &stdout, &stderr)
			if got != c.want {
				t.Errorf("status %d, want %d (stderr %q)", got, c.want, stderr.String())
			}
			if !strings.Contains(stderr.String(), c.stderr) || c.stderr == "" && stderr.Len() > 0 {
				t.Errorf("stderr %q, want %q", stderr.String(), c.stderr)
			}
			lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
			if last := lines[len(lines)-1]; !strings.HasSuffix(last, "skipped") {
				t.Errorf("the last line printed is %q, not the closing line", last)
			}
			for _, p := range []string{c.out.JSON, c.out.JUnit, c.out.HTML} {
				if _, err := os.Stat(p); p != "" && c.want != conformance.ExitUsage && err != nil {
					t.Errorf("report %s not written: %v", p, err)
				}
			}
		})
	}
}
