package transporttest

import (
	"testing"

	"github.com/splashv5/conform/impl/transport"
	"github.com/splashv5/conform/impl/worker/workertest"
)

// StartWorker starts binary as the worker process of session under clock (nil: the system
// clock) with args and the environment env, collecting its standard error. The process is
// terminated when the test ends, and a failure to terminate it fails the test.
func StartWorker(t testing.TB, binary, session string, clock transport.Clock, env []string, args ...string) (*transport.Process, *workertest.Output) {
	t.Helper()
	stderr := &workertest.Output{}
	p, err := transport.StartProcess(transport.ProcessConfig{Path: binary, Args: args, SessionID: session,
		Stderr: stderr, Clock: clock, Env: env})
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
