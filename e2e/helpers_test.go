package e2e_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
	"github.com/splashv5/conform/impl/transport/transporttest"
	"github.com/splashv5/conform/impl/worker/workertest"
)

// Binaries built once for the package: the reference worker, its faulty build (for the
// crash-test pauses) and the documentation example.
var (
	binaries           workertest.Binaries
	workerBinary       string
	faultyWorkerBinary string
	exampleBinary      string
)

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	defer binaries.Remove()
	var err error
	if workerBinary, err = binaries.Worker(); err == nil {
		if faultyWorkerBinary, err = binaries.Worker("splashfaults"); err == nil {
			exampleBinary, err = binaries.Build("./docs/examples/host-e2e")
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	return m.Run()
}

// waitCtx bounds one blocking wait of a test.
func waitCtx(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// startWorker launches the reference worker for session with args under clock (nil: the
// system clock). The worker is terminated when the test ends if it still runs.
func startWorker(t testing.TB, session string, clock transport.Clock, args ...string) (*transport.Process, *workertest.Output) {
	t.Helper()
	return transporttest.StartWorker(t, workerBinary, session, clock, []string{}, args...)
}

// pausedWorker launches the faulty build of the reference worker for session with args, to
// pause at the persistence point pause (such as "after-adapter"), where the test kills it.
func pausedWorker(t testing.TB, session, pause string, args ...string) (*transport.Process, *workertest.Output) {
	t.Helper()
	return transporttest.StartWorker(t, faultyWorkerBinary, session, nil, []string{}, append(args, "--fault", "pause-"+pause)...)
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
