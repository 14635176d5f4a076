package conformance

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/splashv5/conform/conformance/expect"
	"github.com/splashv5/conform/spec"
)

// Exit statuses of every suite's command line.
const (
	// ExitOK: every counted check passed.
	ExitOK = 0
	// ExitFailures: at least one counted check failed, crashed or timed out.
	ExitFailures = 1
	// ExitUsage: bad flags, a bad selection, a worker command that cannot be started, or a
	// report that cannot be written.
	ExitUsage = 2
)

// WriteReportFile writes a report through write into path, atomically.
func WriteReportFile(path string, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".splash-conform-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if err := write(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// WriteSummary prints the table of outcomes per area, the failures, and the duration line.
func WriteSummary(w io.Writer, r *Report) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "AREA\tCHECKS\tPASS\tFAIL\tCRASH\tTIMEOUT\tSKIP\tINFO\t")
	byArea := map[string][]Result{}
	var order []string
	for _, res := range r.Results {
		a := AreaOf(res.ID)
		if byArea[a] == nil {
			order = append(order, a)
		}
		byArea[a] = append(byArea[a], res)
	}
	row := func(name string, s Summary) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", name, s.Total, s.Passed, s.Failed, s.Crashed, s.TimedOut, s.Skipped, s.Info)
	}
	for _, a := range order {
		row(a, Summarize(byArea[a]))
	}
	row("total", r.Summary)
	tw.Flush()

	var failing []Result
	for _, res := range r.Results {
		if res.Failing() {
			failing = append(failing, res)
		}
	}
	WriteExpectationSummary(w, r)
	if len(failing) > 0 {
		heading := "Failures"
		if r.Expectations != nil {
			heading = "New failures, not listed in " + r.Expectations.File
		}
		fmt.Fprintf(w, "\n%s (%d):\n", heading, len(failing))
		for _, res := range failing {
			fmt.Fprintf(w, "  %s %s [%s] %s\n", res.Outcome, res.ID, strings.Join(res.Requirements, ", "), res.Title)
			if res.Expected != "" {
				fmt.Fprintf(w, "      expected: %s\n      actual:   %s\n", indentBy(res.Expected, 16), indentBy(res.Actual, 16))
			} else if res.Detail != "" {
				fmt.Fprintf(w, "      %s\n", indentBy(res.Detail, 6))
			}
			if last := LastStderrLine(res.Stderr); last != "" && !strings.Contains(res.Detail, strings.TrimPrefix(last, "; stderr: ")) {
				fmt.Fprintf(w, "      %s\n", strings.TrimPrefix(last, "; "))
			}
		}
	}
	verdict := r.Verdict()
	strict := ""
	if r.Strict {
		strict = " (strict)"
	}
	noun := "checks"
	if r.Summary.Total == 1 {
		noun = "check"
	}
	fmt.Fprintf(w, "\nsplash-conform: %s%s: %d %s in %s (%s suite %s, catalog %s)\n", verdict, strict, r.Summary.Total, noun, r.Duration.Round(time.Millisecond),
		r.Suite.Name, r.Suite.Version, r.Suite.CatalogDigest)
}

func indentBy(s string, n int) string {
	return strings.ReplaceAll(s, "\n", "\n"+strings.Repeat(" ", n))
}

// DefaultTimeout is the default time limit of one check.
const DefaultTimeout = 5 * time.Second

// WriteProgress prints one line per finished check and the expectation of a failure; when
// verbose, also the transcript and the standard-error excerpt.
func WriteProgress(w io.Writer, r Result, verbose bool) {
	var b strings.Builder
	fmt.Fprintf(&b, "%-7s %-15s %7s  %s\n", r.Outcome, r.ID, FormatDuration(r.Duration), r.Title)
	if r.Outcome != Pass {
		if r.Expected != "" {
			fmt.Fprintf(&b, "        expected: %s\n        actual:   %s\n", indent(r.Expected), indent(r.Actual))
		} else if r.Detail != "" {
			fmt.Fprintf(&b, "        %s\n", indent(r.Detail))
		}
	}
	if verbose {
		for _, line := range r.Transcript {
			fmt.Fprintf(&b, "        | %s\n", line)
		}
		if r.Stderr != "" {
			fmt.Fprintf(&b, "        stderr:\n          %s\n", strings.ReplaceAll(strings.TrimRight(r.Stderr, "\n"), "\n", "\n          "))
		}
	}
	_, _ = io.WriteString(w, b.String())
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n                  ") }

// FormatDuration rounds d for display.
func FormatDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

// DefaultParallel is the default number of checks run at once: twice the number of CPUs,
// because a check spends most of its time waiting for a worker process.
func DefaultParallel() int { return 2 * runtime.NumCPU() }

// DefaultScratchDir returns where a run keeps its journals and effect logs when Config.TempDir
// is empty: $TMPDIR when it is set, else the memory-backed /dev/shm when it is a writable
// directory (journals are written with full synchronisation, which a disk makes slow and
// which the suite does not test), else the system's temporary directory.
func DefaultScratchDir() string {
	if os.Getenv("TMPDIR") != "" {
		return os.TempDir()
	}
	const shm = "/dev/shm"
	if info, err := os.Stat(shm); err == nil && info.IsDir() {
		if f, err := os.CreateTemp(shm, ".splash-conform-probe-"); err == nil {
			name := f.Name()
			f.Close()
			os.Remove(name)
			return shm
		}
	}
	return os.TempDir()
}

// LastStderrLine returns "; stderr: <last line>" for failure messages, or "".
func LastStderrLine(excerpt string) string {
	excerpt = strings.TrimRight(excerpt, "\n")
	if excerpt == "" {
		return ""
	}
	if i := strings.LastIndexByte(excerpt, '\n'); i >= 0 {
		excerpt = excerpt[i+1:]
	}
	return "; stderr: " + Clip(excerpt, 200)
}

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
	// Figures are the drawings the HTML report shows (see HTMLOptions).
	Figures []Figure
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
	WriteSummary(stdout, report)
	status := report.ExitCode()
	if runErr != nil {
		status = ExitUsage
	}
	html := func(w io.Writer) error {
		return report.WriteHTML(w, HTMLOptions{SpecBase: out.SpecBase, Figures: out.Figures})
	}
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
		if err := WriteReportFile(f.path, f.write); err != nil {
			fmt.Fprintf(stderr, "%s: writing the %s report: %v\n", prog, f.what, err)
			status = ExitUsage
		}
	}
	fmt.Fprintln(stdout, report.ClosingLine())
	return status
}

// Clip shortens s to at most n bytes (on a rune boundary) for messages.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// OrDash returns s, or "-" when s is empty, for a table cell.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// LaunchError reports that the command under test (a worker, a driver) could not be started.
type LaunchError struct{ Err error }

// Error describes the failure.
func (e *LaunchError) Error() string { return "launch error: " + e.Err.Error() }

// Unwrap returns the cause.
func (e *LaunchError) Unwrap() error { return e.Err }

// Command describes a suite's command line to Main: the framework owns the flag table, the
// selection, the listing, the expectations and the ending of a run; the suite names its flags
// beyond the shared ones and starts its peer.
type Command[X any] struct {
	// Prog names the command in every message ("splash-conform host").
	Prog string
	// Usage is the text -h prints before the flags.
	Usage string
	// Suite is the suite's name ("worker", "host", "interop").
	Suite string
	// Unit is what the suite calls a check ("check", "scenario").
	Unit string
	// Timeout is the default time limit of one check.
	Timeout time.Duration
	// Strict says whether the suite has SHOULD checks: it then takes -strict and -junit.
	Strict bool
	// Catalog returns the suite's checks in catalog order.
	Catalog func() Catalog[X]
	// Flags are the suite's own flags beyond the shared ones.
	Flags []StringFlag
	// List prints the selected checks for -list.
	List func(w io.Writer, checks Catalog[X])
	// Prepare, when set, checks the suite's own flags before anything is listed or run; it may
	// replace inv.Catalog, the entries an expectations file is checked against (the whole
	// catalog), and inv.Outputs.SpecBase.
	Prepare func(inv *Invocation) error
	// Start starts the peer, runs the selected checks and returns the exit status, mostly
	// through inv.Finish.
	Start func(ctx context.Context, inv *Invocation) int
}

// StringFlag is one of a suite's own flags: -Name sets *Value, Default unless given.
type StringFlag struct {
	Value                *string
	Name, Default, Usage string
}

// Invocation is one parsed command line of a suite.
type Invocation struct {
	// Flags are the shared flags; Args the arguments after them (the command under test).
	Flags RunFlags
	Args  []string
	// Expects are the expectations flags, and Expected the file -expect loaded (or nil).
	Expects  ExpectFlags
	Expected *expect.File
	// Catalog is what an expectations file is checked against.
	Catalog []CatalogEntry
	// Outputs are the report files to write; SpecBase is DefaultSpecBase unless the suite
	// changes it.
	Outputs        RunOutputs
	Stdout, Stderr io.Writer
	prog           string
}

// Failed prints err after the program's name and returns ExitUsage.
func (inv *Invocation) Failed(err error) int {
	fmt.Fprintln(inv.Stderr, inv.prog+":", err)
	return ExitUsage
}

// Printf prints a line of the run's header after the program's name.
func (inv *Invocation) Printf(format string, args ...any) {
	fmt.Fprintf(inv.Stdout, inv.prog+": "+format+"\n", args...)
}

// Peer returns the command under test: the arguments after the flags, else the bundled
// reference program (what: "worker", "driver") that reference finds or builds, with the cleanup
// that removes it.
func (inv *Invocation) Peer(what string, reference func() ([]string, func(), error)) ([]string, func(), error) {
	if len(inv.Args) > 0 {
		return inv.Args, func() {}, nil
	}
	inv.Printf("no %s command given; using the bundled reference %s", what, what)
	return reference()
}

// Finish ends a run with the report and the error a suite's Run returned: a nil report is a
// usage or launch error; otherwise FinishRun judges, prints and writes the report.
func (inv *Invocation) Finish(report *Report, err error) int {
	if report == nil {
		return inv.Failed(err)
	}
	return FinishRun(inv.prog, report, err, &inv.Expects, inv.Expected, inv.Outputs, inv.Stdout, inv.Stderr)
}

// Main is the command-line front end of every suite: it parses args (after the program and
// the subcommand), lists or runs the selected checks through cmd, and returns the exit status
// (ExitOK, ExitFailures or ExitUsage).
func Main[X any](cmd Command[X], args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(cmd.Prog, flag.ContinueOnError)
	fs.SetOutput(stderr)
	inv := &Invocation{Stdout: stdout, Stderr: stderr, prog: cmd.Prog}
	inv.Flags.Register(fs, cmd.Unit, cmd.Timeout, cmd.Strict)
	for _, f := range cmd.Flags {
		fs.StringVar(f.Value, f.Name, f.Default, f.Usage)
	}
	catalog := cmd.Catalog()
	inv.Catalog = catalog.Entries()
	suite := NewSuiteInfo(cmd.Suite, inv.Catalog)
	if code, done := ParseCommandLine(fs, args, stdout, stderr, cmd.Usage, cmd.Unit, suite, &inv.Expects); done {
		return code
	}
	inv.Args = fs.Args()
	run := &inv.Flags
	if run.Timeout <= 0 || run.Parallel <= 0 {
		return inv.Failed(errors.New("-timeout and -parallel must be positive"))
	}
	inv.Outputs = RunOutputs{JSON: run.JSON, JUnit: run.JUnit, HTML: run.HTML, SpecBase: DefaultSpecBase}
	if cmd.Prepare != nil {
		if err := cmd.Prepare(inv); err != nil {
			return inv.Failed(err)
		}
	}
	checks, err := catalog.Select(run.Run)
	if err != nil {
		return inv.Failed(err)
	}
	if run.List {
		cmd.List(stdout, checks)
		return ExitOK
	}
	if len(checks) == 0 {
		return inv.Failed(fmt.Errorf("-run %q selects no %s", run.Run, cmd.Unit))
	}
	if inv.Expected, err = inv.Expects.Load(suite, inv.Catalog); err != nil {
		return inv.Failed(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return cmd.Start(ctx, inv)
}
