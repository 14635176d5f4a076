//go:build !splashfaults

package main

import (
	"bufio"
	"context"
	"io"

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

	in := bufio.NewReaderSize(stdin, 64<<10)
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
