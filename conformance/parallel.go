package conformance

import (
	"context"
	"io"
	"slices"
	"sync"
	"time"
)

// RunOptions are the settings of a run loop.
type RunOptions struct {
	// RunEnv gives each check its time limit (Timeout) and, when Verbose, keeps the evidence of
	// every check, not only of those that did not pass.
	RunEnv
	// Parallel is how many checks run at once; zero means DefaultParallel().
	Parallel int
	// Strict makes SHOULD checks count (Result.Settle).
	Strict bool
	// Progress receives one line per finished check; nil prints nothing.
	Progress io.Writer
}

// RunChecks runs checks, opts.Parallel at a time, until ctx is done, each in the context that
// begin makes for it (at the time given, which starts the check's clock), and returns the
// results of those that ran, in catalog order. The checks with a time limit of their own start
// first, so that none of them is left running alone at the end. A check that records a launch
// error (T.LaunchErr: the command under test cannot be started at all) stops the run; RunChecks
// then returns that error as a *LaunchError and no results.
func RunChecks[X Context](ctx context.Context, checks []*Check[X], opts RunOptions, begin func(c *Check[X], start time.Time) X) ([]Result, error) {
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
	results := make([]Result, len(checks))
	jobs := make(chan int)
	var wg sync.WaitGroup
	parallel := opts.Parallel
	if parallel <= 0 {
		parallel = DefaultParallel()
	}
	for range min(parallel, len(checks)) {
		wg.Go(func() {
			for i := range jobs {
				r, err := runCheck(checks[i], begin, opts)
				mu.Lock()
				results[i] = r
				if err != nil && launchErr == nil {
					launchErr = err
				}
				if opts.Progress != nil {
					WriteProgress(opts.Progress, r, opts.Verbose)
				}
				mu.Unlock()
			}
		})
	}
schedule:
	for _, i := range order {
		mu.Lock()
		stop := launchErr != nil
		mu.Unlock()
		if stop {
			break
		}
		select {
		case jobs <- i:
		case <-ctx.Done():
			break schedule
		}
	}
	close(jobs)
	wg.Wait()
	if launchErr != nil {
		return nil, &LaunchError{Err: launchErr}
	}
	return slices.DeleteFunc(results, func(r Result) bool { return r.ID == "" }), nil
}

// runCheck runs one check: the suite's context prepares the peer and the check runs, both under
// Guard (an End stops them, a panic fails the check); the context tears the peer down, the
// result is settled and the context adds its evidence. The error is a launch error.
func runCheck[X Context](c *Check[X], begin func(*Check[X], time.Time) X, opts RunOptions) (Result, error) {
	start := time.Now()
	t := begin(c, start)
	v := t.Core()
	v.Requirements, v.Started, v.Outcome = c.Requirements, start, Pass
	v.Limit = max(opts.Timeout, c.Timeout)
	v.Deadline = start.Add(v.Limit)
	v.Guard(func() {
		t.Open()
		c.Run(t)
	})
	t.Close()
	e := c.Entry()
	r := Result{ID: e.ID, Level: e.Level, Title: c.Title, Requirements: e.Requirements, Needs: c.Needs, Outcome: v.Outcome,
		Duration: time.Since(start), Detail: v.Detail, Expected: v.Expected, Actual: v.Actual}
	r.Settle(opts.Strict, v.Deviations)
	t.Keep(&r, r.Outcome != Pass && r.Outcome != Skip || opts.Verbose)
	return r, v.LaunchErr
}
