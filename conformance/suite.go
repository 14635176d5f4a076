package conformance

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Check is one check of a suite whose checks run in a context of type X, the suite's own T
// (which embeds T and holds the peer under test).
type Check[X any] struct {
	// ID is the permanent identifier, CNF-AREA-NN (the host suite's areas start with H, the
	// interop suite's IDs with CNF-IOP-).
	ID string
	// Level is MUST or SHOULD; empty means MUST.
	Level Level
	// Requirements are the spec requirement IDs the check proves.
	Requirements []string
	// Title is a one-line description of the expected behaviour.
	Title string
	// Needs lists what the worker under test must offer for the check to run (in the worker
	// suite, what the worker command offers; in the interop suite, the worker's features).
	Needs []Need
	// Features lists the host driver features (HDR-010) the check needs; a driver that does
	// not declare one makes the check SKIP (HDR-011).
	Features []string
	// Unreachable, when set, says why no deliberate fault of the reference implementation can
	// make this check fail (the mutation harnesses accept it instead of a killing fault).
	Unreachable string
	// Timeout, when set, overrides the run's time limit of one check (RunOptions.Timeout) when
	// it is longer.
	Timeout time.Duration
	// Run performs the check, once the suite's context has prepared the peer (Context.Open).
	Run func(t X)
}

// Entry returns what the catalog digest covers of the check.
func (c *Check[X]) Entry() CatalogEntry {
	level := c.Level
	if level == "" {
		level = Must
	}
	return CatalogEntry{ID: c.ID, Level: level, Requirements: slices.Clone(c.Requirements)}
}

// Area returns the AREA part of the check's ID (AreaOf).
func (c *Check[X]) Area() string { return AreaOf(c.ID) }

// Catalog is a suite's checks, in catalog order.
type Catalog[X any] []*Check[X]

// SortedCatalog returns checks as a catalog ordered by ID (a stable sort).
func SortedCatalog[X any](checks ...[]*Check[X]) Catalog[X] {
	all := Catalog[X](slices.Concat(checks...))
	slices.SortStableFunc(all, func(a, b *Check[X]) int { return strings.Compare(a.ID, b.ID) })
	return all
}

// Entries returns the digest entries of the catalog.
func (cat Catalog[X]) Entries() []CatalogEntry {
	out := make([]CatalogEntry, 0, len(cat))
	for _, c := range cat {
		out = append(out, c.Entry())
	}
	return out
}

// Lookup returns the check with the given ID.
func (cat Catalog[X]) Lookup(id string) (*Check[X], bool) {
	i := slices.IndexFunc(cat, func(c *Check[X]) bool { return c.ID == id })
	if i < 0 {
		return nil, false
	}
	return cat[i], true
}

// Select returns the checks that pattern selects: a check is selected when its ID starts with
// pattern, when pattern (a regular expression) matches its ID, or when pattern equals one of
// its requirement IDs. An empty pattern selects every check.
func (cat Catalog[X]) Select(pattern string) (Catalog[X], error) {
	if pattern == "" {
		return cat, nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("-run %q is neither an ID prefix nor a valid regular expression: %w", pattern, err)
	}
	var out Catalog[X]
	for _, c := range cat {
		if strings.HasPrefix(c.ID, pattern) || re.MatchString(c.ID) || slices.Contains(c.Requirements, pattern) {
			out = append(out, c)
		}
	}
	return out, nil
}

// Pick is Select for a run: it is an error when pattern selects nothing, whose checks are
// called unit ("check", "scenario").
func (cat Catalog[X]) Pick(pattern, unit string) (Catalog[X], error) {
	checks, err := cat.Select(pattern)
	if err == nil && len(checks) == 0 {
		err = fmt.Errorf("-run %q selects no %s", pattern, unit)
	}
	return checks, err
}

// Context is what the run loop needs of a suite's check context (its *T, which embeds T).
type Context interface {
	// Core returns the framework's part of the context (promoted from the embedded T).
	Core() *T
	// Open prepares the peer before the check runs; like the check, it may end the check
	// (a missing need is a SKIP).
	Open()
	// Close tears the peer down once the check has ended, bounded in time; it may still
	// change the verdict from what it saw (it must not call End).
	Close()
	// Keep adds the evidence of the peer to r, the settled result: the transcript and the
	// standard-error excerpt when keep (a check that did not pass, or a verbose run).
	Keep(r *Result, keep bool)
}

// Core returns v; a suite's T, which embeds T, offers it to the run loop (Context).
func (v *T) Core() *T { return v }

// RunEnv is what every check of one run shares in each suite: the environment of the programs
// under test, the time limit of one check, whether the run keeps every transcript, and the
// run's scratch directory.
type RunEnv struct {
	Env     []string
	Timeout time.Duration
	Verbose bool
	Dir     string
}

// RunConfig is what every suite's Config holds: which checks run, their time limit, how many
// run at once, the transcripts kept, where progress goes, the environment of the programs under
// test and the parent of the run's scratch directory.
type RunConfig struct {
	// Run selects checks by ID prefix, regular expression or cited requirement; empty selects
	// all.
	Run string
	// Timeout is the time limit of one check; 0 means the suite's default.
	Timeout time.Duration
	// Parallel is the number of checks run at once; 0 means DefaultParallel().
	Parallel int
	// Verbose keeps the transcript of every check, not only of those that did not pass.
	Verbose bool
	// Progress receives one line per finished check; nil prints nothing.
	Progress io.Writer
	// Env is the environment of the programs under test; nil means the runner's.
	Env []string
	// TempDir is the parent of the run's scratch directory; empty means the suite's default.
	TempDir string
}

// Config returns the RunConfig the shared flags set.
func (f RunFlags) Config() RunConfig {
	return RunConfig{Run: f.Run, Timeout: f.Timeout, Parallel: f.Parallel, Verbose: f.Verbose}
}

// Options returns the options of a run of c: its environment (c.Env, or the runner's when nil),
// its time limit (c.Timeout, or timeout when not positive), strict, and a fresh scratch
// directory named after prefix in c.TempDir (parent when empty, then the system's temporary
// directory), which cleanup removes.
func (c RunConfig) Options(timeout time.Duration, parent, prefix string, strict bool) (opts RunOptions, cleanup func(), err error) {
	env := c.Env
	if env == nil {
		env = os.Environ()
	}
	if c.Timeout > 0 {
		timeout = c.Timeout
	}
	dir, err := os.MkdirTemp(cmp.Or(c.TempDir, parent), prefix)
	if err != nil {
		return RunOptions{}, nil, err
	}
	opts = RunOptions{RunEnv: RunEnv{Env: env, Timeout: timeout, Verbose: c.Verbose, Dir: dir},
		Parallel: c.Parallel, Strict: strict, Progress: c.Progress}
	return opts, func() { _ = os.RemoveAll(dir) }, nil
}

// OrSelf returns command, or, when it is nil, this executable run with the argument sub (the
// host suite's fake worker, the interop relay).
func OrSelf(command []string, sub string) ([]string, error) {
	if command != nil {
		return command, nil
	}
	exe, err := os.Executable()
	return []string{exe, sub}, err
}
