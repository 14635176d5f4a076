package conformance

import (
	"context"
	"io"
	"sync"
)

// RunEach runs run(0) … run(n-1), parallel at a time, until ctx is done, and returns the
// results of those that ran (in index order). After each it prints the result's progress line to
// progress (when not nil). The host and interop suites schedule their checks with it.
func RunEach(ctx context.Context, n, parallel int, run func(i int) Result, progress io.Writer, verbose bool) []Result {
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
schedule:
	for i := range n {
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
