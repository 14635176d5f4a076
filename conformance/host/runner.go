package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/splashv5/conform/conformance"
)

// Config describes one run of the host suite.
type Config struct {
	// RunConfig holds what every suite's configuration holds; an empty TempDir means
	// os.TempDir(), a zero Timeout conformance.DefaultTimeout.
	conformance.RunConfig
	// Driver is the host driver command and its arguments. It must not be empty.
	Driver []string
	// FakeWorker is the command that runs the fake worker (the runner appends the socket path);
	// nil means this executable with the argument "fake-worker".
	FakeWorker []string
	// Strict makes SHOULD checks count.
	Strict bool
}

// runState is what every check of one run shares.
type runState struct {
	conformance.RunEnv
	driver, fake []string
}

// Run executes the selected checks against the driver and returns the report.
func Run(ctx context.Context, cfg Config) (*conformance.Report, error) {
	if len(cfg.Driver) == 0 {
		return nil, errors.New("no driver command")
	}
	checks, err := Catalog().Pick(cfg.Run, "check")
	if err != nil {
		return nil, err
	}
	if _, err := exec.LookPath(cfg.Driver[0]); err != nil {
		return nil, &conformance.LaunchError{Err: err}
	}
	fake, err := conformance.OrSelf(cfg.FakeWorker, FakeWorkerCommand)
	if err != nil {
		return nil, err
	}
	// Unix socket paths are short: prefer a short parent directory.
	opts, cleanup, err := cfg.Options(conformance.DefaultTimeout, "", "shc-", cfg.Strict)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	st := &runState{RunEnv: opts.RunEnv, driver: cfg.Driver, fake: fake}
	started := time.Now()
	done, err := conformance.RunChecks(ctx, checks, opts, func(c *Check, _ time.Time) *T { return &T{check: c, run: st} })
	if err != nil {
		return nil, err
	}
	return conformance.NewReport(Suite(), cfg.Driver, cfg.Strict, started, done), ctx.Err()
}

// Close kills every fake worker's process group and the driver's, and removes the scratch
// directory; it is bounded (HDR-031).
func (t *T) Close() {
	for _, w := range t.workers {
		w.stop()
	}
	if t.drv != nil {
		t.drv.Kill()
	}
	t.side.Close()
}

// Keep adds the transcript and the driver's standard error to r when keep.
func (t *T) Keep(r *conformance.Result, keep bool) {
	if keep {
		r.Transcript = t.Transcript
		if t.drv != nil {
			r.Stderr, _ = t.drv.Texts()
		}
	}
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
	return conformance.Main(conformance.Command[*T]{
		Prog: "splash-conform host", Usage: usageText, Suite: "host", Unit: "check", Timeout: conformance.DefaultTimeout, Strict: true,
		Catalog: Catalog,
		List: func(w io.Writer, checks conformance.Catalog[*T]) {
			for _, c := range checks {
				fmt.Fprintf(w, "%-17s %-6s %-28s %s\n", c.ID, c.Level, strings.Join(c.Requirements, ","), c.Title)
			}
			fmt.Fprintf(w, "%d checks\n", len(checks))
		},
		Start: func(ctx context.Context, inv *conformance.Invocation) int {
			run := inv.Flags
			cfg := Config{RunConfig: run.Config(), Driver: inv.Args, Strict: run.Strict}
			command, cleanup, err := inv.Peer("driver", func() ([]string, func(), error) {
				bin, cleanup, err := conformance.ReferenceDriver()
				return []string{bin}, cleanup, err
			})
			if err != nil {
				return inv.Failed(err)
			}
			defer cleanup()
			cfg.Driver = command
			inv.Printf("driver: %s", strings.Join(cfg.Driver, " "))
			inv.Printf("strict: %v; timeout: %v; parallel: %d\n", cfg.Strict, run.Timeout, run.Parallel)
			cfg.Progress = inv.Stdout
			return inv.Finish(Run(ctx, cfg))
		},
	}, args, stdout, stderr)
}
