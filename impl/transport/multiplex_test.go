package transport_test

import (
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
)

// scriptedWorker is the worker end of a pair of OS pipes: the test reads host frames and
// writes worker frames by hand.
type scriptedWorker struct {
	t    *testing.T
	auth *protocol.Authenticator
	in   *jsonline.Reader
	inR  *os.File // worker's read end of the host's frames
	out  *os.File // worker's write end towards the host
}

// newMultiplexedPair returns a Multiplexed transport for manifest m (testManifest when nil)
// connected to a scripted worker that has already read open_session.
func newMultiplexedPair(t *testing.T, m *protocol.CapabilityManifest) (*transport.Multiplexed, *scriptedWorker) {
	t.Helper()
	return newMultiplexedPairWith(t, m, nil)
}

// newMultiplexedPairWith is newMultiplexedPair with the host's output passed through wrap.
func newMultiplexedPairWith(t *testing.T, m *protocol.CapabilityManifest, wrap func(io.Writer) io.Writer) (*transport.Multiplexed, *scriptedWorker) {
	t.Helper()
	host, workerAuth := authPair(t, testSession)
	hostIn, workerOut, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	workerIn, hostOut, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	manifest := testManifest(t)
	if m != nil {
		manifest = *m
	}
	var out io.Writer = hostOut
	if wrap != nil {
		out = wrap(hostOut)
	}
	mux, err := transport.NewMultiplexed(manifest, host, hostIn, out)
	if err != nil {
		t.Fatal(err)
	}
	w := &scriptedWorker{t: t, auth: workerAuth, in: jsonline.NewReader(workerIn), inR: workerIn, out: workerOut}
	t.Cleanup(func() {
		mux.Abandon()
		workerOut.Close()
		workerIn.Close()
		hostOut.Close()
		// hostIn is closed last: the reader goroutine ends at the end of stream.
		hostIn.Close()
	})
	w.expect(protocol.TypeOpenSession)
	return mux, w
}

// expect reads and opens the next host frame, which must be of kind want.
func (w *scriptedWorker) expect(want protocol.MessageType) protocol.Message {
	w.t.Helper()
	line, err := w.in.ReadLine()
	if err != nil {
		w.t.Fatalf("worker read: %v", err)
	}
	return openAs(w.t, w.auth, line, want)
}

// send seals and writes one worker frame.
func (w *scriptedWorker) send(m protocol.Message) {
	w.t.Helper()
	_, line := seal(w.t, w.auth, m)
	if _, err := w.out.Write(append(line, '\n')); err != nil {
		w.t.Fatal(err)
	}
}

func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Spec: TRN-045, TRN-046, TRN-051, TRN-053
// The host writes cancel while the invoke's result is outstanding; the worker's result and
// too_late then resolve the invocation first and the cancellation second.
func TestMultiplexedCancelWhileResultOutstanding(t *testing.T) {
	mux, w := newMultiplexedPair(t, nil)
	inv, err := mux.Start(textInvocation(t, "r1", "in"))
	if err != nil {
		t.Fatal(err)
	}
	w.expect(protocol.TypeInvoke)
	// Nothing has come back from the worker: cancelling must not wait for a read.
	c, err := inv.RequestCancellation("c1")
	if err != nil {
		t.Fatal(err)
	}
	w.expect(protocol.TypeCancel)
	if _, done, _ := inv.TryWait(); done {
		t.Fatal("invocation resolved before any worker frame")
	}
	w.send(textResult(t, "r1", "won"))
	w.send(cancellationResult(t, "c1", "r1", toolText, protocol.OutcomeTooLate))
	out, err := inv.Wait(waitCtx(t))
	if err != nil || out.Cancelled || out.Result.Payload.Text != "won" {
		t.Fatalf("invocation: %+v, %v", out, err)
	}
	d, err := c.Wait(waitCtx(t))
	if err != nil || d.Outcome != protocol.OutcomeTooLate || c.CancellationID() != "c1" {
		t.Fatalf("cancellation: %+v, %v", d, err)
	}
	if mux.Phase() != transport.PhaseIdle {
		t.Fatalf("phase %s", mux.Phase())
	}
}

// Spec: TRN-043, TRN-059
// Close sends close_session and succeeds when the worker's stream ends.
func TestMultiplexedCloseOnEndOfStream(t *testing.T) {
	mux, w := newMultiplexedPair(t, nil)
	inv, _ := mux.Start(textInvocation(t, "r1", "in"))
	w.expect(protocol.TypeInvoke)
	wantKind(t, mux.Close(), transport.ErrBusy)
	w.send(textResult(t, "r1", "out"))
	if _, err := inv.Wait(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mux.Close() }()
	w.expect(protocol.TypeCloseSession)
	w.out.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("close did not return after the end of the stream")
	}
	if mux.Phase() != transport.PhaseClosed {
		t.Fatalf("phase %s", mux.Phase())
	}
	_, err := mux.Start(textInvocation(t, "r2", "in"))
	wantKind(t, err, transport.ErrUnavailable)
}

// Spec: TRN-059, TRN-061, TRN-062
// A broken connection while an invocation and its cancellation are pending stops the
// transport: both handles get the same error, and neither is a cancellation.
func TestMultiplexedBrokenConnection(t *testing.T) {
	mux, w := newMultiplexedPair(t, nil)
	inv, _ := mux.Start(textInvocation(t, "r1", "in"))
	c, err := inv.RequestCancellation("c1")
	if err != nil {
		t.Fatal(err)
	}
	w.out.Close()
	out, err := inv.Wait(waitCtx(t))
	wantKind(t, err, transport.ErrUnexpectedMessage)
	if out.Cancelled {
		t.Fatal("end of stream reported as a cancellation")
	}
	_, cerr := c.Wait(waitCtx(t))
	if cerr != err {
		t.Fatalf("cancellation error %v, invocation error %v", cerr, err)
	}
	if mux.Failure() != err || mux.Phase() != transport.PhaseStopped {
		t.Fatalf("failure %v, phase %s", mux.Failure(), mux.Phase())
	}
	_, err = mux.Start(textInvocation(t, "r2", "in"))
	wantKind(t, err, transport.ErrUnavailable)
}

// Spec: TRN-041, TRN-047
// A write failure is fatal: the command fails with Io and the transport stops.
func TestMultiplexedWriteFailure(t *testing.T) {
	mux, w := newMultiplexedPair(t, nil)
	w.inR.Close() // the worker stops reading: the host's next write fails
	_, err := mux.Start(textInvocation(t, "r1", "in"))
	wantKind(t, err, transport.ErrIO)
	if mux.Phase() != transport.PhaseStopped {
		t.Fatalf("phase %s", mux.Phase())
	}
	_, err = mux.Start(textInvocation(t, "r2", "in"))
	wantKind(t, err, transport.ErrUnavailable)
}

// Spec: TRN-044
// Abandoning gives Abandoned to the pending handles.
func TestMultiplexedAbandon(t *testing.T) {
	mux, _ := newMultiplexedPair(t, nil)
	inv, _ := mux.Start(textInvocation(t, "r1", "in"))
	c, _ := inv.RequestCancellation("c1")
	mux.Abandon()
	_, err := inv.Wait(waitCtx(t))
	wantKind(t, err, transport.ErrAbandoned)
	_, err = c.Wait(waitCtx(t))
	wantKind(t, err, transport.ErrAbandoned)
	_, err = inv.RequestCancellation("c2")
	wantKind(t, err, transport.ErrUnavailable)
	wantKind(t, mux.Close(), transport.ErrUnavailable)
}

// Spec: TRN-040
// Construction fails before writing anything when the checks fail, and with Io when the
// open_session frame cannot be written.
func TestMultiplexedConstruction(t *testing.T) {
	host, worker := authPair(t, testSession)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = transport.NewMultiplexed(testManifest(t), worker, r, w)
	wantKind(t, err, transport.ErrRequiresHostAuthenticator)
	w.Close()
	_, err = transport.NewMultiplexed(testManifest(t), host, r, w)
	wantKind(t, err, transport.ErrIO)
	if errors.Is(err, transport.ErrUnavailable) {
		t.Fatal("wrong kind")
	}
}
