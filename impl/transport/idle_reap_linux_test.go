//go:build linux

package transport_test

import (
	"testing"
	"time"

	"github.com/splashv5/conform/impl/transport"
	"github.com/splashv5/conform/impl/transport/transporttest"
)

// Spec: TRN-080, TRN-096
// The session deadline bounds the life of an idle worker too: with no invocation armed, the
// group is killed and the worker reaped when it elapses, and an invocation armed afterwards
// is reported SessionDeadlineElapsed.
func TestProcessSessionDeadlineReapsAnIdleWorker(t *testing.T) {
	clock := transporttest.NewManualClock()
	p, err := transport.StartProcess(transport.ProcessConfig{Path: "/bin/sh", Args: []string{"-c", "exec sleep 60"},
		SessionID: testSession, Clock: clock, SessionDeadline: 10 * time.Second})
	if err != nil {
		t.Skip("no /bin/sh:", err)
	}
	defer p.Terminate()
	clock.Advance(10 * time.Second)
	select {
	case <-p.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("the idle worker outlived its session deadline")
	}
	if term := p.Wait(); !term.Forced || term.Signal != "killed" {
		t.Fatalf("termination %+v", term)
	}
	token, err := p.BeginInvocation(time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if fin, err := p.FinishInvocation(token); err != nil || fin.Verdict != transport.FinishSessionDeadlineElapsed {
		t.Fatalf("finish %+v, %v", fin, err)
	}
}
