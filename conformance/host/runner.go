package host

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"time"

	"github.com/splashv5/conform/conformance"
)

// Config describes one run of the host suite.
type Config struct {
	// Driver is the host driver command and its arguments. It must not be empty.
	Driver []string
	// FakeWorker is the command that runs the fake worker (the runner appends the socket path);
	// nil means this executable with the argument "fake-worker".
	FakeWorker []string
	// Run selects checks as in the worker suite; empty selects all.
	Run string
	// Strict makes SHOULD checks count.
	Strict bool
	// Timeout is the time limit of one check; 0 means conformance.DefaultTimeout.
	Timeout time.Duration
	// Parallel is the number of checks run at once; 0 means conformance.DefaultParallel().
	Parallel int
	// Verbose keeps the transcript of every check.
	Verbose bool
	// Progress receives one line per finished check; nil prints nothing.
	Progress io.Writer
	// Env is the environment of the driver; nil means the runner's.
	Env []string
	// TempDir is the parent of the run's scratch directory; empty means os.TempDir().
	TempDir string
}

// runState is what every check of one run shares.
type runState struct {
	driver, fake []string
	env          []string
	timeout      time.Duration
	strict       bool
	verbose      bool
	tempDir      string
}

// Run executes the selected checks against the driver and returns the report.
func Run(ctx context.Context, cfg Config) (*conformance.Report, error) {
	if len(cfg.Driver) == 0 {
		return nil, errors.New("no driver command")
	}
	checks, err := Select(Catalog(), cfg.Run)
	if err != nil {
		return nil, err
	}
	if len(checks) == 0 {
		return nil, fmt.Errorf("-run %q selects no check", cfg.Run)
	}
	if _, err := exec.LookPath(cfg.Driver[0]); err != nil {
		return nil, &conformance.LaunchError{Err: err}
	}
	st := &runState{driver: cfg.Driver, fake: cfg.FakeWorker, env: cfg.Env, timeout: cfg.Timeout, strict: cfg.Strict, verbose: cfg.Verbose}
	if st.fake == nil {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		st.fake = []string{exe, FakeWorkerCommand}
	}
	if st.env == nil {
		st.env = os.Environ()
	}
	if st.timeout <= 0 {
		st.timeout = conformance.DefaultTimeout
	}
	// Unix socket paths are short: prefer a short parent directory.
	st.tempDir, err = os.MkdirTemp(cfg.TempDir, "shc-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(st.tempDir)
	parallel := cfg.Parallel
	if parallel <= 0 {
		parallel = conformance.DefaultParallel()
	}
	started := time.Now()
	done := conformance.RunEach(ctx, len(checks), parallel, conformance.Schedule{}, func(i int) conformance.Result {
		return runCheck(st, checks[i])
	}, cfg.Progress, st.verbose)
	return conformance.NewReport(Suite(), cfg.Driver, st.strict, started, done), ctx.Err()
}

// runCheck runs one check with its own driver and returns its result.
func runCheck(st *runState, c *Check) conformance.Result {
	start := time.Now()
	t := &T{check: c, run: st, T: conformance.T{Requirements: c.Requirements, Started: start, Outcome: conformance.Pass}, deadline: start.Add(st.timeout)}
	t.Guard(func() {
		t.open()
		c.run(t)
	})
	t.teardown()
	r := t.Result(c.Entry(), c.Title, nil)
	r.Settle(st.strict, nil)
	if r.Outcome != conformance.Pass && r.Outcome != conformance.Skip || st.verbose {
		r.Transcript = t.Transcript
		if t.drv != nil {
			r.Stderr, _ = t.drv.Texts()
		}
	}
	return r
}

// teardown kills every fake worker's process group and the driver's, and removes the scratch
// directory; it is bounded (HDR-031).
func (t *T) teardown() {
	for _, w := range t.workers {
		w.stop()
	}
	if t.drv != nil {
		t.drv.Kill()
	}
	t.side.Close()
}

const usageText = `usage: splash-conform host [flags] [-- DRIVER-COMMAND [ARGS...]]

Runs the Splash host conformance suite against a host driver (spec/30-host-driver.md,
docs/conformance-host.md). The runner plays the worker: it tells the driver to start its own
fake worker and checks what the host sends and how it treats correct and hostile answers.

Without a driver command, the suite runs against the bundled reference driver
(cmd/splash-host-driver), built from this module when needed.

With -expect FILE, a failure the expectations file lists does not fail the run; an unlisted
one does. -write-expectations FILE writes today's failures as such a file (docs/porting.md).

flags:
`

// DriverPackage is the package of the bundled reference host driver.
const DriverPackage = "./cmd/splash-host-driver"

// Main is the command-line front end of "splash-conform host": it parses args (after "host"),
// runs the suite and returns the exit status (conformance.ExitOK, ExitFailures or ExitUsage).
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("splash-conform host", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		run     conformance.RunFlags
		expects conformance.ExpectFlags
	)
	run.Register(fs, "check", conformance.DefaultTimeout, true)
	if code, done := conformance.ParseCommandLine(fs, args, stdout, stderr, usageText, "check", Suite(), &expects); done {
		return code
	}
	expected, err := expects.Load(Suite(), CatalogEntries())
	if err != nil {
		fmt.Fprintln(stderr, "splash-conform host:", err)
		return conformance.ExitUsage
	}
	if run.Timeout <= 0 || run.Parallel <= 0 {
		fmt.Fprintln(stderr, "splash-conform host: -timeout and -parallel must be positive")
		return conformance.ExitUsage
	}
	cfg := Config{Driver: fs.Args(), Run: run.Run, Strict: run.Strict, Timeout: run.Timeout, Parallel: run.Parallel, Verbose: run.Verbose}
	checks, err := Select(Catalog(), cfg.Run)
	if err != nil {
		fmt.Fprintln(stderr, "splash-conform host:", err)
		return conformance.ExitUsage
	}
	if run.List {
		for _, c := range checks {
			fmt.Fprintf(stdout, "%-17s %-6s %-28s %s\n", c.ID, c.Level, strings.Join(c.Requirements, ","), c.Title)
		}
		fmt.Fprintf(stdout, "%d checks\n", len(checks))
		return conformance.ExitOK
	}
	if len(checks) == 0 {
		fmt.Fprintf(stderr, "splash-conform host: -run %q selects no check\n", cfg.Run)
		return conformance.ExitUsage
	}
	if len(cfg.Driver) == 0 {
		fmt.Fprintln(stdout, "splash-conform host: no driver command given; using the bundled reference driver")
		bin, cleanup, err := conformance.ReferenceDriver()
		if err != nil {
			fmt.Fprintln(stderr, "splash-conform host:", err)
			return conformance.ExitUsage
		}
		defer cleanup()
		cfg.Driver = []string{bin}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fmt.Fprintf(stdout, "splash-conform host: driver: %s\n", strings.Join(cfg.Driver, " "))
	fmt.Fprintf(stdout, "splash-conform host: strict: %v; timeout: %v; parallel: %d\n\n", cfg.Strict, run.Timeout, run.Parallel)
	cfg.Progress = stdout
	report, err := Run(ctx, cfg)
	if report == nil {
		fmt.Fprintln(stderr, "splash-conform host:", err)
		return conformance.ExitUsage
	}
	return conformance.FinishRun("splash-conform host", report, err, &expects, expected,
		conformance.RunOutputs{JSON: run.JSON, JUnit: run.JUnit, HTML: run.HTML, SpecBase: conformance.DefaultSpecBase}, stdout, stderr)
}
