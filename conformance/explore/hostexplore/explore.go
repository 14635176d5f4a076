package hostexplore

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/driver"
	"github.com/splashv5/conform/conformance/explore/replay"
	"github.com/splashv5/conform/conformance/explore/shrink"
	"github.com/splashv5/conform/conformance/fakeworker"
)

// Defaults of a run.
const (
	// DefaultDuration is the exploration budget: how long new sequences are started.
	DefaultDuration = 60 * time.Second
	// DefaultLength is the number of commands of one sequence.
	DefaultLength = 24
	// DefaultDeadlineMS is the exchange deadline every start gives the driver.
	DefaultDeadlineMS = 400
	// DefaultShrinkRuns bounds the sequences run while shrinking one failure.
	DefaultShrinkRuns = 60
)

// Config describes one exploration of a host driver.
type Config struct {
	// Driver is the host driver command and its arguments. It must not be empty.
	Driver []string
	// FakeWorker is the command that runs the fake worker (the runner appends the socket
	// path); nil means this executable with the argument "fake-worker".
	FakeWorker []string
	// Env is the driver's environment; nil means the runner's.
	Env []string
	// TempDir is the parent of the scratch directories; empty means os.TempDir().
	TempDir string
	// Seed draws every sequence: sequence i of a run is Draw(Seed, i, ...).
	Seed uint64
	// Duration bounds how long new sequences are started (0: DefaultDuration).
	Duration time.Duration
	// Parallel is the number of sequences run at once (0: 1).
	Parallel int
	// Length is the number of commands of a sequence (0: DefaultLength).
	Length int
	// DeadlineMS is the exchange deadline given in start (0: DefaultDeadlineMS).
	DeadlineMS int
	// Limit bounds the wait for one outcome (0: conformance.DefaultTimeout).
	Limit time.Duration
	// ShrinkRuns bounds the runs of shrinking (0: DefaultShrinkRuns; negative: no shrinking).
	ShrinkRuns int
	// Progress receives a line per finished sequence; nil prints nothing.
	Progress io.Writer
}

func (c *Config) env() []string {
	if c.Env == nil {
		return os.Environ()
	}
	return c.Env
}

func (c *Config) fake() []string {
	if c.FakeWorker != nil {
		return c.FakeWorker
	}
	exe, err := os.Executable()
	if err != nil {
		return []string{"splash-conform", fakeworker.Command}
	}
	return []string{exe, fakeworker.Command}
}

func (c *Config) deadlineMS() int {
	if c.DeadlineMS > 0 {
		return c.DeadlineMS
	}
	return DefaultDeadlineMS
}

func (c *Config) limit() time.Duration {
	if c.Limit > 0 {
		return c.Limit
	}
	return conformance.DefaultTimeout
}

// grace bounds the waits for what must already have happened (a contained group gone, an
// open_session relayed), so that a loaded machine is not taken for a faulty host.
func (c *Config) grace() time.Duration { return 2 * time.Second }

// Failure is the first failing sequence of a run, and what shrinking made of it.
type Failure struct {
	// Walk is the index of the failing sequence: Draw(Seed, Walk, ...) gives it.
	Walk int
	// Drawn is the sequence as drawn; Shrunk the smallest failing one found, and Minimal says
	// whether shrinking reached its fixed point.
	Drawn, Shrunk []Symbol
	Minimal       bool
	// Run is the shrunk sequence's run, whose violation is the failure.
	Run Sequence
}

// Result is the outcome of an exploration.
type Result struct {
	Features []string
	Walks    int
	Steps    int
	Failure  *Failure
	Duration time.Duration
}

// Features starts the driver once and returns the features it declares (HDR-010).
func Features(cfg *Config) ([]string, error) {
	d, err := driver.Start(cfg.Driver, cfg.env(), "")
	if err != nil {
		return nil, err
	}
	defer d.Kill()
	id, err := d.Send(map[string]any{"op": "hello"})
	if err != nil {
		return nil, err
	}
	o, err := d.Await(id, time.Now().Add(cfg.limit()))
	if err != nil {
		return nil, err
	}
	if !o.OK {
		return nil, fmt.Errorf("hello answered %s", conformance.Clip(string(o.Raw()), 200))
	}
	return o.Features, nil
}

// Explore runs random sequences for the budget, Parallel at a time, stops at the first
// violation and shrinks it (EXP-009, EXP-017).
func Explore(ctx context.Context, cfg *Config) (*Result, error) {
	started := time.Now()
	features, err := Features(cfg)
	if err != nil {
		return nil, fmt.Errorf("the driver cannot be started: %w", err)
	}
	budget := cfg.Duration
	if budget <= 0 {
		budget = DefaultDuration
	}
	length := cfg.Length
	if length <= 0 {
		length = DefaultLength
	}
	parallel := max(cfg.Parallel, 1)
	until := started.Add(budget)
	res := &Result{Features: features}
	var (
		mu     sync.Mutex
		next   int
		failed *Failure
		runErr error
		wg     sync.WaitGroup
	)
	for range parallel {
		wg.Go(func() {
			for {
				mu.Lock()
				stop := failed != nil || runErr != nil || time.Now().After(until) || ctx.Err() != nil
				i := next
				next++
				mu.Unlock()
				if stop {
					return
				}
				syms := Draw(cfg.Seed, uint64(i), features, length)
				seq, err := Run(cfg, syms)
				mu.Lock()
				switch {
				case err != nil:
					runErr = err
				case seq.Violation != nil && (failed == nil || i < failed.Walk):
					failed = &Failure{Walk: i, Drawn: syms, Run: seq}
				}
				res.Walks++
				res.Steps += len(seq.Outputs)
				if cfg.Progress != nil {
					verdict := "ok"
					if seq.Violation != nil {
						verdict = "FAIL " + seq.Violation.Invariant
					}
					fmt.Fprintf(cfg.Progress, "sequence %d: %d commands, %s\n", i, len(seq.Outputs), verdict)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if runErr != nil {
		return nil, runErr
	}
	if failed != nil {
		shrinkFailure(ctx, cfg, failed)
		res.Failure = failed
	}
	res.Duration = time.Since(started)
	return res, ctx.Err()
}

// shrinkFailure shrinks a failing sequence while the same invariant breaks (EXP-009).
func shrinkFailure(ctx context.Context, cfg *Config, f *Failure) {
	name := f.Run.Violation.Invariant
	drawn := f.Drawn[:f.Run.Violation.Step+1]
	f.Shrunk = drawn
	if cfg.ShrinkRuns < 0 {
		return
	}
	runs := cfg.ShrinkRuns
	if runs == 0 {
		runs = DefaultShrinkRuns
	}
	last := f.Run
	fails := func(syms []Symbol) bool {
		if ctx.Err() != nil || len(syms) == 0 {
			return false
		}
		seq, err := Run(cfg, syms)
		if err != nil || seq.Violation == nil || seq.Violation.Invariant != name {
			return false
		}
		last = seq
		return true
	}
	r, err := shrink.Shrink(drawn, fails, shrink.Config[Symbol]{MaxCalls: runs, Elem: simpler})
	if err != nil {
		// The failure did not show again: keep the drawn sequence and its run.
		return
	}
	f.Shrunk, f.Minimal = r.Steps[:min(len(r.Steps), last.Violation.Step+1)], r.Minimal
	// The run of the shrunk sequence is the last failing one shrinking made.
	f.Run = last
	if len(f.Run.Outputs) != len(f.Shrunk) {
		if seq, err := Run(cfg, f.Shrunk); err == nil && seq.Violation != nil {
			f.Run = seq
		}
	}
}

// ReplayFile is the replay file of a failure (EXP-010, EXP-017): each step's symbol, with the
// abstract outputs observed; the last step expects what the broken invariant demands.
func ReplayFile(cfg *Config, features []string, f *Failure) (replay.File, error) {
	v := f.Run.Violation
	iv := invariant(v.Invariant)
	file := replay.File{Version: replay.Version, Suite: "host", Needs: features, Numbers: "preserve", Seed: cfg.Seed,
		Level: string(iv.Level), Spec: iv.Requirements}
	n := min(len(f.Shrunk), v.Step+1)
	for i := range n {
		out := "-"
		if i < len(f.Run.Outputs) {
			out = f.Run.Outputs[i]
		}
		step := replay.Step{Symbol: f.Shrunk[i].String(), Expected: out, Observed: out}
		if i == n-1 {
			step.Expected = v.Invariant + ": " + v.Expected
			step.Observed = v.Invariant + ": " + v.Observed
		}
		file.Steps = append(file.Steps, step)
	}
	return file, file.Validate()
}

// Symbols reads the commands of a host replay file; an unknown symbol is an error.
func Symbols(f replay.File) ([]Symbol, error) {
	if f.Suite != "host" {
		return nil, fmt.Errorf("%w: suite %q, not host", replay.ErrFile, f.Suite)
	}
	out := make([]Symbol, 0, len(f.Steps))
	for i, s := range f.Steps {
		sym, ok := ParseSymbol(s.Symbol)
		if !ok {
			return nil, fmt.Errorf("%w: step %d: %q is not a host symbol", replay.ErrFile, i, s.Symbol)
		}
		out = append(out, sym)
	}
	return out, nil
}

// Report turns an exploration into the framework's report: one result per invariant,
// FAIL for the broken one with the shrunk sequence as its transcript.
// A SHOULD invariant's violation is INFO unless strict.
func Report(cfg *Config, res *Result, started time.Time, strict bool) *conformance.Report {
	var results []conformance.Result
	for _, iv := range invariants {
		r := conformance.Result{ID: checkID(iv.Name), Level: iv.Level, Title: iv.Title, Requirements: iv.Requirements, Outcome: conformance.Pass}
		if f := res.Failure; f != nil && f.Run.Violation.Invariant == iv.Name {
			v := f.Run.Violation
			r.Outcome = conformance.Fail
			r.Expected, r.Actual = v.Expected, v.Observed
			r.Detail = fmt.Sprintf("sequence %d of seed %d, shrunk to %d commands (minimal: %v): %s", f.Walk, cfg.Seed, len(f.Shrunk), f.Minimal, symbolsText(f.Shrunk))
			r.Transcript, r.Stderr = f.Run.Transcript, f.Run.Stderr
		}
		r.Settle(strict, nil)
		results = append(results, r)
	}
	return conformance.NewReport(Suite(), cfg.Driver, strict, started, results)
}

func symbolsText(syms []Symbol) string {
	var parts []string
	for _, s := range syms {
		parts = append(parts, s.String())
	}
	return strings.Join(parts, " ")
}

// checkID is the report ID of invariant name.
func checkID(name string) string {
	return "EXP-HOST-" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// CatalogEntries returns the digest entries of the host explorer's invariants.
func CatalogEntries() []conformance.CatalogEntry {
	var out []conformance.CatalogEntry
	for _, iv := range invariants {
		out = append(out, conformance.CatalogEntry{ID: checkID(iv.Name), Level: iv.Level, Requirements: iv.Requirements})
	}
	return out
}

// Suite describes the host explorer as a suite of invariants.
func Suite() conformance.SuiteInfo { return conformance.NewSuiteInfo("explore-host", CatalogEntries()) }
