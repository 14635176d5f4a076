//go:build splashfaults

package worker_test

import (
	"bufio"
	"io"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/worker"
)

// ruleCancellable waits for its token or its release; it acknowledges a requested token and
// completes otherwise.
type ruleCancellable struct {
	worker.Unimplemented
	release chan struct{}
}

func (*ruleCancellable) InvocationSafety() worker.InvocationSafety { return worker.ReadOnly }

func (a *ruleCancellable) InvokeCancellable(_ protocol.ToolInvocation, _ protocol.CapabilityGrant, token *worker.CancelToken) (worker.Completion, error) {
	select {
	case <-token.Done():
		return worker.Acknowledged(), nil
	case <-a.release:
		return worker.Completed(protocol.TextPayload("done")), nil
	}
}

// Spec: CAN-006
// The cancellation token is set only by the path that runs after the cancel frame was
// authenticated and re-authorized. With that path switched off (the ignore-cancel fault), an
// authorized cancel leaves the token alone: the adapter completes, and the pending cancellation
// is answered too_late, never acknowledged.
func TestCancellationTokenOnlyAfterReauthorization(t *testing.T) {
	j, err := journal.New("tenant-a")
	if err != nil {
		t.Fatal(err)
	}
	a := &ruleCancellable{release: make(chan struct{})}
	s, h, _ := ruleSession(t, "session-1", a, j, 0, faulty(t, worker.FaultIgnoreCancel))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	d, err := worker.NewDriver(s, worker.NewFrameReader(inR), outW)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- d.Run()
		outW.Close()
	}()
	t.Cleanup(func() { inW.Close() })
	write := func(line []byte) {
		if _, err := inW.Write(append(line, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	write(h.Seal(h.Invoke("r1", ruleTool, protocol.TextPayload("x"))))
	write(h.Seal(h.Cancel("c1", "r1", ruleTool)))
	// The driver handles the cancel long before the adapter is released.
	time.Sleep(200 * time.Millisecond)
	close(a.release)
	out := bufio.NewReader(outR)
	for _, want := range []string{"result text:done", "cancellation_result too_late"} {
		line, err := out.ReadBytes('\n')
		if err != nil {
			t.Fatalf("waiting for %q: %v", want, err)
		}
		if got := h.MustOpen(line); got != want {
			t.Fatalf("answer %q, want %q", got, want)
		}
	}
	write(h.Seal(h.CloseSession()))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
