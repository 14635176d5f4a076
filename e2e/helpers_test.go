package e2e_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
)

// Binaries built once for the package: the reference worker, its faulty build (for the
// crash-test pauses) and the documentation example.
var (
	workerBinary       string
	faultyWorkerBinary string
	exampleBinary      string
)

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "splash-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	workerBinary = filepath.Join(dir, "splash-worker")
	faultyWorkerBinary = filepath.Join(dir, "splash-worker-faulty")
	exampleBinary = filepath.Join(dir, "host-e2e")
	for _, b := range []struct{ out, pkg, tags string }{
		{workerBinary, "./cmd/splash-worker", ""},
		{faultyWorkerBinary, "./cmd/splash-worker", "splashfaults"},
		{exampleBinary, "./docs/examples/host-e2e", ""},
	} {
		build := exec.Command("go", "build", "-tags", b.tags, "-o", b.out, b.pkg)
		build.Dir = root
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: building %s: %v\n", b.pkg, err)
			return 1
		}
	}
	return m.Run()
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
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// waitCtx bounds one blocking wait of a test.
func waitCtx(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// lockedBuffer collects a worker's standard error while the worker runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor polls until the buffer contains s, for at most ten seconds.
func (l *lockedBuffer) waitFor(t testing.TB, s string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(l.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("the worker never wrote %q on standard error (it wrote %q)", s, l.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// startWorker launches the reference worker for session with args under clock (nil: the
// system clock). The worker is terminated when the test ends if it still runs.
func startWorker(t testing.TB, session string, clock transport.Clock, args ...string) (*transport.Process, *lockedBuffer) {
	t.Helper()
	return startBinary(t, workerBinary, session, clock, args...)
}

// pausedWorker launches the faulty build of the reference worker for session with args, to
// pause at the persistence point pause (such as "after-adapter"), where the test kills it.
func pausedWorker(t testing.TB, session, pause string, args ...string) (*transport.Process, *lockedBuffer) {
	t.Helper()
	return startBinary(t, faultyWorkerBinary, session, nil, append(args, "--fault", "pause-"+pause)...)
}

func startBinary(t testing.TB, binary, session string, clock transport.Clock, args ...string) (*transport.Process, *lockedBuffer) {
	t.Helper()
	stderr := &lockedBuffer{}
	p, err := transport.StartProcess(transport.ProcessConfig{Path: binary, Args: args, SessionID: session,
		Stderr: stderr, Clock: clock, Env: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := p.Terminate(); err != nil {
			t.Error(err)
		}
	})
	return p, stderr
}

// manifest returns the version-5 manifest of session granting each tool calls times in its
// profile format, with the default byte limits.
func manifest(t testing.TB, session string, calls uint32, grants ...protocol.CapabilityGrant) protocol.CapabilityManifest {
	t.Helper()
	for i := range grants {
		grants[i].MaxCalls = calls
	}
	m, err := protocol.NewCapabilityManifest(session, grants)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
