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
	return StartWorkerWith(t, transport.ProcessConfig{Path: binary, Args: args, SessionID: session, Clock: clock, Env: env})
}

// StartWorkerWith is StartWorker for a whole process configuration, whose Stderr it sets.
func StartWorkerWith(t testing.TB, cfg transport.ProcessConfig) (*transport.Process, *workertest.Output) {
	t.Helper()
	stderr := &workertest.Output{}
	cfg.Stderr = stderr
	p, err := transport.StartProcess(cfg)
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
