package workertest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// WorkerPackage is the reference worker's package, relative to the module root.
const WorkerPackage = "./cmd/splash-worker"

// Binaries builds commands of this module for the tests of one package: each package and
// set of build tags once, into one temporary directory. The zero value is ready to use;
// Remove deletes what was built (call it from TestMain after m.Run).
type Binaries struct {
	mu    sync.Mutex
	dir   string
	built map[string]string
}

// Worker returns the path of the reference worker built with tags (none: the released
// build; "splashfaults": the faulty build of the mutation and crash tests).
func (b *Binaries) Worker(tags ...string) (string, error) { return b.Build(WorkerPackage, tags...) }

// Build returns the path of pkg (relative to the module root, such as "./cmd/splash-worker")
// built with tags, building it on first use.
func (b *Binaries) Build(pkg string, tags ...string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	id := pkg + " " + strings.Join(tags, ",")
	if path, ok := b.built[id]; ok {
		return path, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	if b.dir == "" {
		if b.dir, err = os.MkdirTemp("", "splash-test-bin-"); err != nil {
			return "", err
		}
		b.built = map[string]string{}
	}
	path := filepath.Join(b.dir, fmt.Sprintf("%s-%d", filepath.Base(pkg), len(b.built)))
	cmd := exec.Command("go", "build", "-tags", strings.Join(tags, ","), "-o", path, pkg)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s (tags %q): %v\n%s", pkg, tags, err, out)
	}
	b.built[id] = path
	return path, nil
}

// MustWorker is Worker that fails tb on error.
func (b *Binaries) MustWorker(tb testing.TB, tags ...string) string {
	tb.Helper()
	path, err := b.Worker(tags...)
	if err != nil {
		tb.Fatal(err)
	}
	return path
}

// Remove deletes every binary built.
func (b *Binaries) Remove() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dir != "" {
		_ = os.RemoveAll(b.dir)
		b.dir, b.built = "", nil
	}
}

// moduleRoot walks up from the working directory to the directory holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("workertest: no go.mod above the working directory")
		}
		dir = parent
	}
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
