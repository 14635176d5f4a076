package conformance

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/splashv5/conform/conformance/expect"
	"github.com/splashv5/conform/spec"
)

// The functions below let another suite (package conformance/host) build and print reports
// with the same layout as this one.

// Summarize counts the outcomes of results.
func Summarize(results []Result) Summary { return summarize(results) }

// WriteProgress prints the line of one finished check (and, when verbose, its transcript).
func WriteProgress(w io.Writer, r Result, verbose bool) { writeProgress(w, r, verbose) }

// WriteSummary prints the table of outcomes per area, the failures and the verdict line.
func WriteSummary(w io.Writer, r *Report) { writeSummary(w, r) }

// WriteExpectationSummary prints the expected failures and the fixed entries of a report judged
// against an expectations file (nothing without one).
func WriteExpectationSummary(w io.Writer, r *Report) { writeExpectationSummary(w, r) }

// FormatDuration rounds d for display.
func FormatDuration(d time.Duration) string { return formatDuration(d) }

// WriteReportFile writes a report through write into path, atomically.
func WriteReportFile(path string, write func(io.Writer) error) error { return writeFile(path, write) }

// citation finds a requirement ID in a verdict's text.
var citation = regexp.MustCompile(spec.CitationPattern)

// StrayCitations returns the requirement IDs that the verdict's text (Detail, Expected and
// Actual) cites and the check does not list in Requirements, each once, in order of first
// appearance. A port that selects checks by a requirement ID (-run ID) runs only the checks that
// list it, so a failure citing a rule its check does not list is one that filter misses: every
// verdict of the three suites must return none.
func (r *Result) StrayCitations() []string {
	var stray []string
	for _, text := range []string{r.Detail, r.Expected, r.Actual} {
		for _, id := range citation.FindAllString(text, -1) {
			if !slices.Contains(r.Requirements, id) && !slices.Contains(stray, id) {
				stray = append(stray, id)
			}
		}
	}
	return stray
}

// Settle applies the run's counting rule to a result whose Level and Outcome are set. A
// passing check that missed SHOULD parts (deviations, such as an exit status outside the
// documented class) fails under strict and is INFO otherwise; a passing or skipped result
// keeps no expected and actual text. Without strict, a SHOULD check that failed or timed out
// becomes INFO. MUST checks, and SHOULD checks under strict, count unless skipped or INFO.
func (r *Result) Settle(strict bool, deviations []string) {
	if r.Outcome == Pass && len(deviations) > 0 {
		r.Outcome = Fail
		r.Detail = "SHOULD part missed: " + strings.Join(deviations, "; ")
		if !strict {
			r.Outcome = Info
			r.Detail = "deviation from a SHOULD (it counts under --strict): " + strings.Join(deviations, "; ")
		}
	} else if r.Outcome == Pass || r.Outcome == Skip {
		r.Expected, r.Actual = "", ""
	}
	if r.Level == Should && !strict && (r.Outcome == Fail || r.Outcome == Timeout) {
		r.Outcome = Info
		r.Detail = "deviation from a SHOULD (it counts under --strict): " + r.Detail
	}
	r.Counted = r.Outcome != Skip && r.Outcome != Info && (r.Level == Must || strict)
}

// RunOutputs are the report files a command-line run writes (an empty path is not written) and
// the specification base its HTML report links requirement IDs to.
type RunOutputs struct {
	JSON, JUnit, HTML string
	SpecBase          string
}

// FinishRun ends a suite's command-line run once Run has returned a report: it judges the
// report against the expectations, prints the summary, writes the report files and the closing
// line, and returns the exit status. runErr is the error Run returned with the report; such a
// run was interrupted, and since its report is incomplete it exits ExitUsage. prog prefixes
// every message.
func FinishRun(prog string, report *Report, runErr error, expects *ExpectFlags, expected *expect.File, out RunOutputs, stdout, stderr io.Writer) int {
	if runErr != nil {
		fmt.Fprintln(stderr, prog+": interrupted:", runErr)
	}
	if err := expects.Apply(report, expected); err != nil {
		fmt.Fprintln(stderr, prog+": writing the expectations:", err)
		return ExitUsage
	}
	writeSummary(stdout, report)
	status := report.ExitCode()
	if runErr != nil {
		status = ExitUsage
	}
	html := func(w io.Writer) error { return report.WriteHTML(w, HTMLOptions{SpecBase: out.SpecBase}) }
	for _, f := range []struct {
		path, what string
		write      func(io.Writer) error
	}{
		{out.JSON, "JSON", report.WriteJSON},
		{out.JUnit, "JUnit", report.WriteJUnit},
		{out.HTML, "HTML", html},
	} {
		if f.path == "" {
			continue
		}
		if err := writeFile(f.path, f.write); err != nil {
			fmt.Fprintf(stderr, "%s: writing the %s report: %v\n", prog, f.what, err)
			status = ExitUsage
		}
	}
	fmt.Fprintln(stdout, report.ClosingLine())
	return status
}
