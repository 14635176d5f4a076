package workertest

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/splashv5/conform/internal/childproc"
)

// WorkerPackage is the reference worker's package, relative to the module root.
const WorkerPackage = "./cmd/splash-worker"

// Binaries builds commands of this module for the tests of one package: each package and
// set of build tags once, into one temporary directory (see childproc.Builds). The zero value
// is ready to use; Remove deletes what was built (call it from TestMain after m.Run).
type Binaries struct{ childproc.Builds }

// Worker returns the path of the reference worker built with tags (none: the released
// build; "splashfaults": the faulty build of the mutation and crash tests).
func (b *Binaries) Worker(tags ...string) (string, error) { return b.Build(WorkerPackage, tags...) }

// MustWorker is Worker that fails tb on error.
func (b *Binaries) MustWorker(tb testing.TB, tags ...string) string {
	tb.Helper()
	path, err := b.Worker(tags...)
	if err != nil {
		tb.Fatal(err)
	}
	return path
}

// Output collects what a worker process writes to one stream, typically standard error,
// while it runs. It is safe for concurrent use.
type Output struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

// String returns everything written so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// WaitFor polls until the output contains s, and fails tb if it does not within ten seconds.
func (o *Output) WaitFor(tb testing.TB, s string) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(o.String(), s) {
		if time.Now().After(deadline) {
			tb.Fatalf("the worker never wrote %q (it wrote %q)", s, o.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
