package worker

import (
	"cmp"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"

	"github.com/splashv5/conform/conformance"
)

// DefaultScope is the journal scope the runner assumes when the worker command has no
// {scope} placeholder and Config.Scope is empty.
const DefaultScope = "conformance"

// Config describes one run of the suite.
type Config struct {
	// RunConfig holds what every suite's configuration holds; an empty TempDir means
	// DefaultScratchDir(), a zero Timeout DefaultTimeout.
	conformance.RunConfig
	// Worker is the worker command and its arguments, possibly with the placeholders
	// {journal}, {effects} and {scope}. It must not be empty.
	Worker []string
	// Strict makes SHOULD checks count.
	Strict bool
	// FullFrames writes every frame in full in the transcripts (within the per-check bound of
	// frame records), so that a frame can be copied from them and replayed; otherwise a
	// transcript line shows the first 300 bytes. The command sets it for -v and -json.
	FullFrames bool
	// Without lists needs the worker does not offer (beyond the missing placeholders).
	Without []Need
	// Scope is the journal scope of the worker; empty means DefaultScope.
	Scope string
}

// runState is what every check of one run shares.
type runState struct {
	conformance.RunEnv
	command conformance.WorkerCommand
	scope   string
	offers  map[Need]bool
	// fullFrames is Config.FullFrames.
	fullFrames bool
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
	checks, err := catalog.Pick(cfg.Run, "check")
	if err != nil {
		return nil, err
	}
	if _, err := exec.LookPath(cfg.Worker[0]); err != nil {
		return nil, &conformance.LaunchError{Err: err}
	}
	opts, cleanup, err := cfg.Options(conformance.DefaultTimeout, conformance.DefaultScratchDir(), "splash-conform-", cfg.Strict)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	st := &runState{RunEnv: opts.RunEnv, command: conformance.WorkerCommand(cfg.Worker), scope: cmp.Or(cfg.Scope, DefaultScope),
		offers: cfg.Offered(), fullFrames: cfg.FullFrames}
	started := time.Now()
	done, err := conformance.RunChecks(ctx, checks, opts, func(c *Check, start time.Time) *T {
		return &T{check: c, run: st, started: start}
	})
	if err != nil {
		return nil, err
	}
	report := conformance.NewReport(Suite(), cfg.Worker, cfg.Strict, started, done)
	report.AreaDescriptions = areaDescriptions()
	for _, n := range AllNeeds {
		if st.offers[n] {
			report.Offered = append(report.Offered, n)
		}
	}
	return report, ctx.Err()
}

// areaDescriptions says what each area of the catalog covers.
func areaDescriptions() map[string]string {
	out := make(map[string]string, len(Areas))
	for _, a := range Areas {
		out[a.Name] = a.Description
	}
	return out
}

// Open skips the check when the worker command does not offer one of its needs.
func (t *T) Open() {
	var missing []string
	for _, n := range t.check.Needs {
		if !t.run.offers[n] {
			missing = append(missing, string(n))
		}
	}
	if len(missing) > 0 {
		t.Skipf("the worker command does not offer %s", strings.Join(missing, ", "))
	}
}

// Close stops the check's workers, looks for the storage key in their output and removes the
// check's scratch directory.
func (t *T) Close() {
	for _, w := range t.workers {
		w.stop()
	}
	t.scanForKeys()
	if t.dir != "" {
		_ = os.RemoveAll(t.dir)
	}
}

// Keep adds the workers' standard error, the transcript and the frames to r when keep, and
// otherwise gives the frames back to the run's bound.
func (t *T) Keep(r *conformance.Result, keep bool) {
	if keep {
		r.Stderr = t.stderrExcerpt()
		r.Transcript = t.Transcript
		r.Frames = t.frames
	} else {
		t.run.frameBytes.Add(-int64(t.frameBytes))
	}
}
