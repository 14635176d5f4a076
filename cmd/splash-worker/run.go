//go:build !splashfaults

package main

import (
	"bufio"
	"context"
	"io"
	"runtime"
	"time"

	"github.com/splashv5/conform/impl/bootstrap"
	"github.com/splashv5/conform/impl/worker"
)

// run is the worker process: flags, stores, bootstrap, then one session over the standard
// streams. It returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr, nil)
	if err != nil {
		return report(stderr, worker.ExitUsage, err)
	}
	p, code, err := setUp(o, stderr)
	if err != nil {
		return report(stderr, code, err)
	}
	defer p.close()

	in := bufio.NewReaderSize(&yieldingReader{r: stdin}, 64<<10)
	boot, err := bootstrap.Read(in)
	if err != nil {
		return report(stderr, worker.ExitBootstrap, err)
	}
	auth, err := p.authenticator(boot)
	if err != nil {
		return report(stderr, worker.ExitBootstrap, err)
	}
	defer auth.Close()

	cfg := p.serve
	cfg.Auth, cfg.Lines, cfg.Output = auth, worker.NewFrameReader(in), stdout
	err = worker.Serve(context.Background(), p.withWriteTrigger(cfg))
	if code := worker.ExitCode(err); code != worker.ExitClean {
		return report(stderr, code, err)
	}
	return worker.ExitClean
}

// yieldingReader passes through the scheduler before a read from standard input when it has
// not done so for yieldEvery. Without it the serving goroutine never enters the scheduler (it
// only makes system calls), so after 10 ms the runtime's monitor takes it for a goroutine
// hogging its processor and, from then on, takes that processor away during every read that
// blocks: each frame then pays a hand-off on the way back, and the monitor thread wakes every
// 20 µs. A yield hands the goroutine to the scheduler's global queue and wakes another
// thread, so it is done rarely: well within the monitor's 10 ms. See docs/performance.md.
type yieldingReader struct {
	r         io.Reader
	lastYield time.Time
}

// yieldEvery is how often the serving goroutine passes through the scheduler at most.
const yieldEvery = 2 * time.Millisecond

func (y *yieldingReader) Read(p []byte) (int, error) {
	if now := time.Now(); now.Sub(y.lastYield) >= yieldEvery {
		runtime.Gosched()
		y.lastYield = now
	}
	return y.r.Read(p)
}
