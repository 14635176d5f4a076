package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/splashv5/conform/conformance"
)

// DefaultScope is the journal scope the runner assumes when the worker command has no
// {scope} placeholder and Config.Scope is empty.
const DefaultScope = "conformance"

// Config describes one run of the suite.
type Config struct {
	// Worker is the worker command and its arguments, possibly with the placeholders
	// {journal}, {effects} and {scope}. It must not be empty.
	Worker []string
	// Run selects checks (see Select); empty selects all.
	Run string
	// Strict makes SHOULD checks count.
	Strict bool
	// Timeout is the time limit of one check; 0 means DefaultTimeout.
	Timeout time.Duration
	// Parallel is the number of checks run at once; 0 means DefaultParallel().
	Parallel int
	// Verbose keeps the transcript of every check, not only of failed ones.
	Verbose bool
	// FullFrames writes every frame in full in the transcripts (within the per-check bound of
	// frame records), so that a frame can be copied from them and replayed; otherwise a
	// transcript line shows the first 300 bytes. The command sets it for -v and -json.
	FullFrames bool
	// Without lists needs the worker does not offer (beyond the missing placeholders).
	Without []Need
	// Scope is the journal scope of the worker; empty means DefaultScope.
	Scope string
	// Progress receives one line per finished check; nil prints nothing.
	Progress io.Writer
	// Env is the environment of the worker processes; nil means the runner's environment.
	Env []string
	// TempDir is the parent of the run's scratch directory (journals, effect logs); empty
	// means DefaultScratchDir().
	TempDir string
}

// runState is what every check of one run shares.
type runState struct {
	command conformance.WorkerCommand
	env     []string
	timeout time.Duration
	scope   string
	offers  map[Need]bool
	strict  bool
	verbose bool
	// fullFrames is Config.FullFrames.
	fullFrames bool
	tempDir    string
	// frameBytes counts the frame records held by running checks and kept results
	// (bounded by maxRunFrameBytes).
	frameBytes atomic.Int64
}

// Offered returns the needs a configuration offers: {journal} and {effects} come from the
// placeholders of the worker command, every other need is offered unless Without lists it.
func (cfg Config) Offered() map[Need]bool {
	cmd := conformance.WorkerCommand(cfg.Worker)
	offers := map[Need]bool{
		NeedJournal:      cmd.Has(conformance.PlaceholderJournal),
		NeedEffects:      cmd.Has(conformance.PlaceholderEffects),
		NeedStoreFault:   cmd.Has(conformance.PlaceholderStoreFault),
		NeedStorageKey:   cmd.Has(conformance.PlaceholderStorageKey),
		NeedSecretSource: cmd.Has(conformance.PlaceholderSecretSource),
		NeedDurable:      true,
		NeedCompensation: true,
		NeedCancel:       true,
		NeedTypedJSON:    true,
		NeedSecret:       true,
		NeedEffectFence:  true,
	}
	for _, n := range cfg.Without {
		offers[n] = false
	}
	return offers
}

// Run executes the selected checks against the worker and returns the report. It returns an
// error, and no report, for a bad selection or a worker command that cannot be started.
func Run(ctx context.Context, cfg Config) (*conformance.Report, error) {
	if len(cfg.Worker) == 0 {
		return nil, errors.New("no worker command")
	}
	checks, err := Select(Catalog(), cfg.Run)
	if err != nil {
		return nil, err
	}
	if len(checks) == 0 {
		return nil, fmt.Errorf("-run %q selects no check", cfg.Run)
	}
	if _, err := exec.LookPath(cfg.Worker[0]); err != nil {
		return nil, &conformance.LaunchError{Err: err}
	}
	st := &runState{
		command:    conformance.WorkerCommand(cfg.Worker),
		env:        cfg.Env,
		timeout:    cfg.Timeout,
		scope:      cfg.Scope,
		offers:     cfg.Offered(),
		strict:     cfg.Strict,
		verbose:    cfg.Verbose,
		fullFrames: cfg.FullFrames,
	}
	if st.env == nil {
		st.env = os.Environ()
	}
	if st.timeout <= 0 {
		st.timeout = conformance.DefaultTimeout
	}
	if st.scope == "" {
		st.scope = DefaultScope
	}
	parent := cfg.TempDir
	if parent == "" {
		parent = conformance.DefaultScratchDir()
	}
	st.tempDir, err = os.MkdirTemp(parent, "splash-conform-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(st.tempDir)

	parallel := cfg.Parallel
	if parallel <= 0 {
		parallel = conformance.DefaultParallel()
	}
	// The long checks (those that declare a longer time limit) start first, so that none of
	// them is left running alone at the end; results keep the catalog order.
	order := make([]int, 0, len(checks))
	for i, c := range checks {
		if c.Timeout > 0 {
			order = append(order, i)
		}
	}
	for i, c := range checks {
		if c.Timeout == 0 {
			order = append(order, i)
		}
	}
	var (
		mu        sync.Mutex
		launchErr error
	)
	launchFailed := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return launchErr != nil
	}
	started := time.Now()
	done := conformance.RunEach(ctx, len(checks), parallel, conformance.Schedule{Order: order, Stop: launchFailed}, func(i int) conformance.Result {
		r, lerr := runCheck(st, checks[i])
		if lerr != nil {
			mu.Lock()
			if launchErr == nil {
				launchErr = lerr
			}
			mu.Unlock()
		}
		return r
	}, cfg.Progress, st.verbose)
	if launchErr != nil {
		return nil, &conformance.LaunchError{Err: launchErr}
	}
	report := newReport(cfg, st, done, started)
	if err := ctx.Err(); err != nil {
		return report, err
	}
	return report, nil
}

// runCheck runs one check and returns its result; the error is a launch failure.
func runCheck(st *runState, c *Check) (conformance.Result, error) {
	start := time.Now()
	t := &T{check: c, run: st, T: conformance.T{Requirements: c.Requirements, Started: start, Outcome: conformance.Pass}}
	t.deadline = start.Add(t.limit())
	t.Guard(func() {
		var missing []string
		for _, n := range c.Needs {
			if !st.offers[n] {
				missing = append(missing, string(n))
			}
		}
		if len(missing) > 0 {
			t.Skipf("the worker command does not offer %s", strings.Join(missing, ", "))
		}
		c.run(t)
	})
	for _, w := range t.workers {
		w.stop()
	}
	t.scanForKeys()
	if t.dir != "" {
		_ = os.RemoveAll(t.dir)
	}
	r := t.Result(c.Entry(), c.Title, c.Needs)
	r.Settle(st.strict, t.deviations)
	if r.Outcome != conformance.Pass && r.Outcome != conformance.Skip || st.verbose {
		r.Stderr = t.stderrExcerpt()
		r.Transcript = t.Transcript
		r.Frames = t.frames
	} else {
		st.frameBytes.Add(-int64(t.frameBytes))
	}
	return r, t.launchErr
}
