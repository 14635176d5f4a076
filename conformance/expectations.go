package conformance

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/splashv5/conform/conformance/expect"
)

// Expectation is the entry of the expectations file that names a check, and how the check's
// outcome compares with it.
type Expectation struct {
	Entry   expect.Entry
	Verdict expect.Verdict
}

// ExpectationsInfo describes the expectations file a report was judged against.
type ExpectationsInfo struct {
	// File is the path as given.
	File string
	// Strict makes a fixed entry (a listed check that no longer fails) fail the run.
	Strict bool
	// Entries is the number of entries of the file.
	Entries int
}

// Failing reports whether the result fails the run: a counted FAIL, CRASH or TIMEOUT that no
// expectation lists.
func (r *Result) Failing() bool {
	return r.Counted && r.Outcome.Failed() && (r.Expectation == nil || r.Expectation.Verdict != expect.Expected)
}

// verdict returns the result's expectation verdict (expect.Unlisted without one).
func (r *Result) verdict() expect.Verdict {
	if r.Expectation == nil {
		return expect.Unlisted
	}
	return r.Expectation.Verdict
}

// ApplyExpectations judges every result against the file f (read from info.File) and
// recounts the summary: a failure the file lists no longer fails the run, a listed check that
// no longer has its listed outcome is reported as fixed, and fails the run under info.Strict.
func (r *Report) ApplyExpectations(f *expect.File, info ExpectationsInfo) {
	info.Entries = len(f.Expectations)
	r.Expectations = &info
	for i := range r.Results {
		res := &r.Results[i]
		e, found := f.Lookup(expect.Check{ID: res.ID, Requirements: res.Requirements})
		res.Expectation = nil
		if found {
			res.Expectation = &Expectation{Entry: e, Verdict: expect.Judge(e, true, string(res.Outcome))}
		}
	}
	r.Summary = Summarize(r.Results)
}

// KnownFailures returns the expectations file of the run's failures: one FAIL entry per
// counted check that failed, crashed or timed out (with the reason of the entry of previous
// that listed it, if any), then, unchanged, the SKIP and INFO entries of previous that still
// hold for a check of the run and the entries of previous that name none of the run's checks.
// previous may be nil.
func (r *Report) KnownFailures(previous *expect.File) *expect.File {
	f := &expect.File{
		Format: expect.Format, FormatVersion: expect.FormatVersion,
		Suite: r.Suite.Name, SuiteVersion: r.Suite.Version, CatalogDigest: r.Suite.CatalogDigest,
		Expectations: []expect.Entry{},
	}
	for _, res := range r.Results {
		if !res.Counted || !res.Outcome.Failed() {
			continue
		}
		reason := "recorded by -write-expectations; the check: " + res.Title
		if previous != nil {
			if e, ok := previous.Lookup(expect.Check{ID: res.ID, Requirements: res.Requirements}); ok {
				reason = e.Reason
			}
		}
		f.Expectations = append(f.Expectations, expect.Entry{ID: res.ID, Outcome: expect.Fail, Reason: reason})
	}
	if previous == nil {
		return f
	}
	for _, e := range previous.Expectations {
		selected, holds := false, false
		for _, res := range r.Results {
			if e.Selects(expect.Check{ID: res.ID, Requirements: res.Requirements}) {
				selected = true
				holds = holds || e.Outcome != expect.Fail && expect.Judge(e, true, string(res.Outcome)) == expect.Expected
			}
		}
		if !selected || holds {
			e.Line = 0
			f.Expectations = append(f.Expectations, e)
		}
	}
	return f
}

// Verdict returns the verdict of the run: CONFORMS when every counted check passed, MATCHES
// EXPECTATIONS when the only counted failures are listed in the expectations file, and DOES
// NOT CONFORM otherwise.
func (r *Report) Verdict() string {
	switch {
	case r.ExitCode() != 0:
		return "DOES NOT CONFORM"
	case r.expectedFailures() > 0:
		return "MATCHES EXPECTATIONS"
	default:
		return "CONFORMS"
	}
}

// expectedFailures counts the counted failures the expectations list.
func (r *Report) expectedFailures() int {
	n := 0
	for _, res := range r.Results {
		if res.Counted && res.Outcome.Failed() && res.verdict() == expect.Expected {
			n++
		}
	}
	return n
}

// ExpectFlags are the expectations flags of a suite's command line: -expect, -expect-strict
// and -write-expectations.
type ExpectFlags struct {
	// File is the expectations file to judge the run against.
	File string
	// Strict makes a fixed entry fail the run.
	Strict bool
	// Write is the file the run's failures are written to.
	Write string
}

// Register defines the flags on fs.
func (x *ExpectFlags) Register(fs *flag.FlagSet) {
	fs.StringVar(&x.File, "expect", "", "judge the run against the expectations `FILE`: a listed failure does not fail the run, an unlisted one does (docs/conformance.md)")
	fs.BoolVar(&x.Strict, "expect-strict", false, "with -expect, also fail the run when a listed check no longer fails (its entry is stale)")
	fs.StringVar(&x.Write, "write-expectations", "", "write the run's failures as an expectations `FILE` and judge the run against it")
}

// Load reads the -expect file and checks it against the suite and its whole catalog. It
// returns nil without -expect.
func (x *ExpectFlags) Load(suite SuiteInfo, catalog []CatalogEntry) (*expect.File, error) {
	if x.File == "" {
		if x.Strict {
			return nil, fmt.Errorf("-expect-strict needs -expect")
		}
		return nil, nil
	}
	f, err := expect.ReadFile(x.File)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", x.File, err)
	}
	checks := make([]expect.Check, 0, len(catalog))
	for _, e := range catalog {
		checks = append(checks, expect.Check{ID: e.ID, Requirements: e.Requirements})
	}
	if err := f.Check(suite.Name, checks); err != nil {
		return nil, fmt.Errorf("%s: %w", x.File, err)
	}
	return f, nil
}

// Apply judges the report: with -write-expectations it first writes the run's failures to
// that file (keeping the reasons of loaded, the -expect file, which may be nil) and judges the
// report against what it wrote; otherwise against loaded, if any.
func (x *ExpectFlags) Apply(r *Report, loaded *expect.File) error {
	if x.Write != "" {
		var text bytes.Buffer
		if err := expect.Write(&text, r.KnownFailures(loaded)); err != nil {
			return err
		}
		// Read back, the entries carry the lines the summary cites.
		known, err := expect.Parse(text.Bytes())
		if err != nil {
			return err
		}
		if err := WriteReportFile(x.Write, func(w io.Writer) error { _, err := w.Write(text.Bytes()); return err }); err != nil {
			return err
		}
		r.ApplyExpectations(known, ExpectationsInfo{File: x.Write, Strict: x.Strict})
		return nil
	}
	if loaded != nil {
		r.ApplyExpectations(loaded, ExpectationsInfo{File: x.File, Strict: x.Strict})
	}
	return nil
}

// WriteExpectationSummary prints the expected failures and the fixed entries.
func WriteExpectationSummary(w io.Writer, r *Report) {
	if r.Expectations == nil {
		return
	}
	var expected, fixed []Result
	for _, res := range r.Results {
		switch res.verdict() {
		case expect.Expected:
			if res.Outcome.Failed() {
				expected = append(expected, res)
			}
		case expect.Fixed:
			fixed = append(fixed, res)
		}
	}
	if len(expected) > 0 {
		fmt.Fprintf(w, "\nExpected failures (%d, listed in %s):\n", len(expected), r.Expectations.File)
		for _, res := range expected {
			fmt.Fprintf(w, "  %s %s (line %d): %s\n", res.Outcome, res.ID, res.Expectation.Entry.Line, res.Expectation.Entry.Reason)
		}
	}
	if len(fixed) > 0 {
		what := "they do not fail the run (they do under -expect-strict)"
		if r.Expectations.Strict {
			what = "they fail the run under -expect-strict"
		}
		fmt.Fprintf(w, "\nFixed (%d): these checks no longer have the outcome %s lists; delete or narrow the entries; %s:\n", len(fixed), r.Expectations.File, what)
		for _, res := range fixed {
			e := res.Expectation.Entry
			fmt.Fprintf(w, "  %s is now %s: line %d: %s\n", res.ID, res.Outcome, e.Line, e)
		}
	}
}

// ParseCommandLine finishes the flag set of a suite's command line and parses args: it adds
// -version and the expectations flags (into expects), and sets the usage text to usage, the
// flags and the exit statuses, whose runs are made of units ("check", "scenario"). When done
// is true the caller returns code at once: help was asked for, a flag is wrong, or -version
// printed suite.
func ParseCommandLine(fs *flag.FlagSet, args []string, stdout, stderr io.Writer, usage, unit string, suite SuiteInfo, expects *ExpectFlags) (code int, done bool) {
	version := fs.Bool("version", false, "print the suite version, the protocol version and the catalog digest, and exit")
	expects.Register(fs)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
		fmt.Fprintf(stderr, "\nexit status: 0 every counted %s passed, 1 a counted %s failed, 2 usage or launch error\n", unit, unit)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK, true
		}
		return ExitUsage, true
	}
	if *version {
		WriteVersion(stdout, suite)
		return ExitOK, true
	}
	return 0, false
}
