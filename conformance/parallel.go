package conformance

import (
	"context"
	"io"
	"sync"
)

// Schedule says in which order RunEach starts its runs and when it stops starting them.
type Schedule struct {
	// Order lists the indices in the order to start them; nil starts them in index order.
	Order []int
	// Stop, when set, is asked before each start; once it reports true, no run starts.
	Stop func() bool
}

// RunEach runs run(0) … run(n-1), parallel at a time, in the order of sched, until ctx is done
// or sched.Stop reports true, and returns the results of those that ran (in index order). After
// each it prints the result's progress line to progress (when not nil). Every suite schedules
// its checks with it.
func RunEach(ctx context.Context, n, parallel int, sched Schedule, run func(i int) Result, progress io.Writer, verbose bool) []Result {
	results := make([]Result, n)
	var mu sync.Mutex
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(parallel, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				results[i] = run(i)
				if progress != nil {
					mu.Lock()
					WriteProgress(progress, results[i], verbose)
					mu.Unlock()
				}
			}
		}()
	}
	order := sched.Order
	if order == nil {
		order = make([]int, n)
		for i := range order {
			order[i] = i
		}
	}
schedule:
	for _, i := range order {
		if sched.Stop != nil && sched.Stop() {
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
	var done []Result
	for _, r := range results {
		if r.ID != "" {
			done = append(done, r)
		}
	}
	return done
}
