package worker_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/worker"
	"github.com/splashv5/conform/impl/worker/workertest"
)

// gate is a cancellable adapter driven by its input text:
//
//	"wait":   block until released (complete) or cancelled (acknowledge)
//	"ignore": block until released, whatever the token says, then complete
//	"hold":   block until the token is set, then until released, then complete
//	"now":    complete at once
//	"ack":    acknowledge at once (nobody asked)
//	"fail":   fail at once
//	"panic":  panic
//	"big":    complete at once with an output larger than the grant allows
type gate struct {
	worker.Unimplemented
	safety   worker.InvocationSafety
	started  chan struct{}
	release  chan struct{}
	sawToken atomic.Bool
	returned atomic.Int32
}

func newGate() *gate {
	return &gate{safety: worker.ReadOnly, started: make(chan struct{}, 8), release: make(chan struct{}, 8)}
}

func (g *gate) InvocationSafety() worker.InvocationSafety { return g.safety }

func (g *gate) InvokeCancellable(req protocol.ToolInvocation, _ protocol.CapabilityGrant, token *worker.CancelToken) (worker.Completion, error) {
	defer g.returned.Add(1)
	g.started <- struct{}{}
	done := worker.Completed(protocol.TextPayload("done " + req.Payload.Text))
	switch req.Payload.Text {
	case "wait":
		select {
		case <-g.release:
			return done, nil
		case <-token.Done():
			g.sawToken.Store(true)
			return worker.Acknowledged(), nil
		}
	case "ignore":
		<-g.release
		g.sawToken.Store(token.Requested())
		return done, nil
	case "hold":
		<-token.Done()
		g.sawToken.Store(true)
		<-g.release
		return done, nil
	case "ack":
		return worker.Acknowledged(), nil
	case "fail":
		return worker.Completion{}, &worker.AdapterError{Kind: worker.AdapterFailed}
	case "panic":
		panic("gate told to panic")
	case "big":
		return worker.Completed(protocol.TextPayload(strings.Repeat("x", 100))), nil
	}
	return done, nil
}

type driverRig struct {
	t       *testing.T
	host    *workertest.Host
	gate    *gate
	session *worker.Session
	in      *io.PipeWriter
	out     *bufio.Reader
	done    chan error
	lines   []string
	writes  chan []byte
}

const gateTool = "t.gate"

func newDriverRig(t *testing.T, configs ...configure) *driverRig {
	t.Helper()
	host, err := workertest.NewHost("session-1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(host.Close)
	auth, err := host.WorkerAuthenticator(canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	g := newGate()
	reg := worker.NewRegistry()
	if err := reg.RegisterCancellable(gateTool, g); err != nil {
		t.Fatal(err)
	}
	grant := workertest.Grant(gateTool, protocol.FormatText, 10, 0)
	grant.MaxOutputBytes = 50
	cfg := worker.Config{
		Journal: newMemStore(t).durable, Registry: reg,
		Admission: worker.AdmissionFunc(func(context.Context, protocol.CapabilityManifest, string) (uint64, error) { return 1, nil }),
	}
	for _, c := range configs {
		cfg = c(cfg, host)
	}
	s, err := worker.Open(context.Background(), auth, host.Seal(host.OpenSession(grant)), cfg)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	d, err := worker.NewDriver(s, worker.NewFrameReader(inR), outW)
	if err != nil {
		t.Fatal(err)
	}
	r := &driverRig{t: t, host: host, gate: g, session: s, in: inW, out: bufio.NewReader(outR), done: make(chan error, 1),
		writes: make(chan []byte, 16)}
	// One writer keeps the frames in order without blocking the test.
	go func() {
		for line := range r.writes {
			if _, err := inW.Write(line); err != nil {
				return
			}
		}
	}()
	go func() {
		err := d.Run()
		outW.Close()
		r.done <- err
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case g.release <- struct{}{}:
		default:
		}
	})
	return r
}

func (r *driverRig) send(m protocol.Message) {
	r.t.Helper()
	r.sendLine(r.host.Seal(m))
}

func (r *driverRig) sendLine(line []byte) {
	r.t.Helper()
	r.writes <- append(line, '\n')
}

// next reads one answer line and describes it.
func (r *driverRig) next() string {
	r.t.Helper()
	type read struct {
		line string
		err  error
	}
	ch := make(chan read, 1)
	go func() {
		line, err := r.out.ReadString('\n')
		ch <- read{line, err}
	}()
	select {
	case got := <-ch:
		if got.err != nil {
			r.t.Fatalf("no answer: %v", got.err)
		}
		d := r.host.MustOpen([]byte(got.line))
		if strings.Contains(d, "unsupported") {
			r.t.Fatalf("the driver sent %q", d) // CAN-021
		}
		r.lines = append(r.lines, d)
		return d
	case <-time.After(5 * time.Second):
		r.t.Fatal("timed out waiting for an answer")
	}
	return ""
}

func (r *driverRig) expect(want string) {
	r.t.Helper()
	if got := r.next(); got != want {
		r.t.Fatalf("answer %q, want %q", got, want)
	}
}

func (r *driverRig) started() {
	r.t.Helper()
	select {
	case <-r.gate.started:
	case <-time.After(5 * time.Second):
		r.t.Fatal("adapter did not start")
	}
}

// end waits for Run to return, checks that nothing more was written, and returns its error.
func (r *driverRig) end() error {
	r.t.Helper()
	select {
	case err := <-r.done:
		if extra, _ := io.ReadAll(r.out); len(extra) != 0 {
			r.t.Fatalf("the driver wrote after its last answer: %q", extra)
		}
		return err
	case <-time.After(5 * time.Second):
		r.t.Fatal("driver did not stop")
	}
	return nil
}

func (r *driverRig) stillRunning(d time.Duration) {
	r.t.Helper()
	select {
	case err := <-r.done:
		r.t.Fatalf("driver stopped early: %v", err)
	case <-time.After(d):
	}
}

func wantFatal(t *testing.T, err error, k worker.ErrorKind, pk protocol.ErrorKind) {
	t.Helper()
	if !errors.Is(err, k) || (pk.Valid() && !errors.Is(err, pk)) {
		t.Fatalf("driver error %v, want %v/%v", err, k, pk)
	}
}

// Spec: CAN-001
func TestDriverConstruction(t *testing.T) {
	// A poisoned session is refused first.
	r := newRig(t, rigOptions{grants: []protocol.CapabilityGrant{profileGrant(record, 1, 0)}})
	r.store.faults = []string{"error"}
	r.fail(r.host.Dispatch("d1", record, "op-1", workertest.Record("succeed", "1")), worker.ErrJournal, noProtocol)
	if _, err := worker.NewDriver(r.session, nil, io.Discard); !errors.Is(err, worker.ErrSessionPoisoned) {
		t.Fatalf("poisoned: %v", err)
	}
	// The first grant whose adapter is not cancellable is named.
	r = newRig(t, rigOptions{grants: []protocol.CapabilityGrant{profileGrant("conf.slow.cancellable", 1, 0), profileGrant(echo, 1, 0), profileGrant(jsonEcho, 1, 0)}})
	err := func() error { _, err := worker.NewDriver(r.session, nil, io.Discard); return err }()
	var we *worker.Error
	if !errors.Is(err, worker.ErrAdapterNotCancellable) || !errors.As(err, &we) || we.Tool != echo || worker.AllCancellable(r.session) {
		t.Fatalf("mixed manifest: %v", err)
	}
	// A cancellable adapter must declare its invocation safety.
	unsafe := newGate()
	unsafe.safety = worker.SafetyUndeclared
	r = newRig(t, rigOptions{
		grants:   []protocol.CapabilityGrant{workertest.Grant("t.unsafe", protocol.FormatText, 1, 0)},
		register: func(reg *worker.Registry) { _ = reg.RegisterCancellable("t.unsafe", unsafe) },
	})
	if _, err := worker.NewDriver(r.session, nil, io.Discard); !errors.Is(err, worker.ErrInvocationSafetyNotDeclared) {
		t.Fatalf("undeclared safety: %v", err)
	}
	// All cancellable, including the vacuous zero-grant manifest.
	for _, grants := range [][]protocol.CapabilityGrant{nil, {profileGrant("conf.slow.cancellable", 1, 0), profileGrant("conf.slow.uncooperative", 1, 0)}} {
		r = newRig(t, rigOptions{grants: grants})
		if _, err := worker.NewDriver(r.session, nil, io.Discard); err != nil || !worker.AllCancellable(r.session) {
			t.Fatalf("cancellable manifest refused: %v", err)
		}
	}
}

// Spec: CAN-002, CAN-003, CAN-004, CAN-014, CAN-007, CAN-012, CAN-021
func TestDriverCompletionThenTooLate(t *testing.T) {
	r := newDriverRig(t)
	h := r.host
	r.send(h.Invoke("r1", gateTool, text("now")))
	r.started()
	r.expect("result text:done now")
	// Idle with a completed invocation: a cancel for it is too late.
	r.send(h.Cancel("c1", "r1", gateTool))
	r.expect("cancellation_result too_late")
	// Another invocation after that.
	r.send(h.Invoke("r2", gateTool, text("now")))
	r.started()
	r.expect("result text:done now")
	// Only one cancellation per target, ever.
	r.send(h.Cancel("c2", "r2", gateTool))
	r.expect("cancellation_result too_late")
	r.send(h.Cancel("c3", "r2", gateTool))
	wantFatal(t, r.end(), worker.ErrProtocol, protocol.ErrCancellationAlreadyRequested)
}

// Spec: CAN-006, CAN-015, CAN-009, CAN-019
func TestDriverResultWinsTheRace(t *testing.T) {
	r := newDriverRig(t)
	h := r.host
	r.send(h.Invoke("r1", gateTool, text("ignore")))
	r.started()
	// The cancel is authorized and sets the token; the close queued behind it must wait until the
	// adapter has returned, or it would be refused as a close during an active invocation.
	r.send(h.Cancel("c1", "r1", gateTool))
	time.Sleep(20 * time.Millisecond)
	r.send(h.CloseSession())
	r.stillRunning(50 * time.Millisecond)
	r.gate.release <- struct{}{}
	r.expect("result text:done ignore")
	r.expect("cancellation_result too_late")
	if err := r.end(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if !r.gate.sawToken.Load() {
		t.Fatal("the adapter never saw the token of an authorized cancel")
	}
}

// Spec: CAN-016, CAN-008, CAN-020
func TestDriverAcknowledgedCancellation(t *testing.T) {
	r := newDriverRig(t)
	h := r.host
	r.send(h.Invoke("r1", gateTool, text("wait")))
	r.started()
	r.send(h.Cancel("c1", "r1", gateTool))
	r.expect("cancellation_result acknowledged")
	if !r.gate.sawToken.Load() {
		t.Fatal("acknowledged without the token")
	}
	// The invocation never produces a result; the session goes on.
	r.send(h.Invoke("r2", gateTool, text("now")))
	r.started()
	r.expect("result text:done now")
	r.send(h.Invoke("r3", gateTool, text("wait")))
	r.started()
	r.send(h.Cancel("c3", "r3", gateTool))
	r.expect("cancellation_result acknowledged")
	// After an acknowledgement there is no completed target.
	r.send(h.Cancel("c4", "r3", gateTool))
	wantFatal(t, r.end(), worker.ErrCancellationWithoutTarget, noProtocol)
}

// Spec: CAN-005, CAN-019, CAN-002
func TestDriverSecondInvokeIsFatalAndJoinsTheAdapter(t *testing.T) {
	r := newDriverRig(t)
	h := r.host
	r.send(h.Invoke("r1", gateTool, text("wait")))
	r.started()
	r.send(h.Invoke("r2", gateTool, text("now")))
	err := r.end()
	wantFatal(t, err, worker.ErrUnexpectedMessage, noProtocol)
	if r.gate.returned.Load() != 1 || !r.gate.sawToken.Load() {
		t.Fatalf("Run returned before the adapter was cancelled and joined (returned=%d)", r.gate.returned.Load())
	}
}

// Spec: CAN-010, CAN-019
func TestDriverTeardownWaitsForAnUncooperativeAdapter(t *testing.T) {
	r := newDriverRig(t)
	h := r.host
	r.send(h.Invoke("r1", gateTool, text("ignore")))
	r.started()
	r.send(h.CloseSession())
	r.stillRunning(50 * time.Millisecond)
	r.gate.release <- struct{}{}
	wantFatal(t, r.end(), worker.ErrCloseWhileInvocationActive, noProtocol)
	if r.gate.returned.Load() != 1 {
		t.Fatal("adapter not joined")
	}
}

// Spec: CAN-008, CAN-009, CAN-011
func TestDriverIdleFrames(t *testing.T) {
	r := newDriverRig(t)
	r.send(r.host.Cancel("c1", "r1", gateTool))
	wantFatal(t, r.end(), worker.ErrCancellationWithoutTarget, noProtocol)

	r = newDriverRig(t)
	r.send(r.host.Dispatch("d1", gateTool, "op-1", text("x")))
	err := r.end()
	var we *worker.Error
	if wantFatal(t, err, worker.ErrUnexpectedMessage, noProtocol); !errors.As(err, &we) || we.MessageType != "dispatch_operation" {
		t.Fatalf("unexpected dispatch: %v", err)
	}

	r = newDriverRig(t)
	r.send(r.host.CloseSession())
	if err := r.end(); err != nil {
		t.Fatalf("idle close: %v", err)
	}
	if r.gate.returned.Load() != 0 || len(r.lines) != 0 {
		t.Fatal("close ran something or wrote something")
	}
}

// Spec: CAN-013, CAN-019
func TestDriverInputFailures(t *testing.T) {
	r := newDriverRig(t)
	r.sendLine(r.host.Tampered(r.host.Invoke("r1", gateTool, text("now"))))
	wantFatal(t, r.end(), worker.ErrProtocol, protocol.ErrInvalidAuthenticationTag)

	r = newDriverRig(t)
	r.sendLine([]byte("{not json"))
	wantFatal(t, r.end(), worker.ErrProtocol, protocol.ErrSerialization)

	r = newDriverRig(t)
	r.in.Close()
	err := r.end()
	var we *worker.Error
	if wantFatal(t, err, worker.ErrEndOfInput, noProtocol); !errors.As(err, &we) || we.Active || worker.ExitCode(err) != worker.ExitClean {
		t.Fatalf("idle end of input: %v", err)
	}

	// End of input while an invocation runs: the adapter is cancelled and joined.
	r = newDriverRig(t)
	r.send(r.host.Invoke("r1", gateTool, text("wait")))
	r.started()
	time.Sleep(10 * time.Millisecond)
	r.in.Close()
	err = r.end()
	if wantFatal(t, err, worker.ErrEndOfInput, noProtocol); !errors.As(err, &we) || !we.Active || worker.ExitCode(err) != worker.ExitTransport {
		t.Fatalf("active end of input: %v", err)
	}
	if !r.gate.sawToken.Load() || r.gate.returned.Load() != 1 {
		t.Fatal("adapter was not cancelled and joined")
	}

	// A torn last line is a framing failure.
	r = newDriverRig(t)
	r.writes <- []byte(`{"sequence":1`)
	close(r.writes)
	time.Sleep(20 * time.Millisecond)
	r.in.Close()
	wantFatal(t, r.end(), worker.ErrFrame, noProtocol)
}

// Spec: CAN-017, CAN-018, CAN-014
func TestDriverAdapterOutcomes(t *testing.T) {
	for _, tc := range []struct {
		input string
		kind  worker.ErrorKind
		proto protocol.ErrorKind
	}{
		{"ack", worker.ErrUnrequestedAcknowledgement, noProtocol},
		{"fail", worker.ErrAdapter, noProtocol},
		{"panic", worker.ErrAdapterPanicked, noProtocol},
		{"big", worker.ErrProtocol, protocol.ErrOutputTooLarge},
	} {
		t.Run(tc.input, func(t *testing.T) {
			r := newDriverRig(t)
			r.send(r.host.Invoke("r1", gateTool, text(tc.input)))
			wantFatal(t, r.end(), tc.kind, tc.proto)
			if len(r.lines) != 0 {
				t.Fatalf("wrote %v", r.lines)
			}
		})
	}
}

// Spec: CAN-004
func TestDriverInvokeChecks(t *testing.T) {
	r := newDriverRig(t)
	r.send(r.host.Invoke("r1", "t.unknown", text("now")))
	wantFatal(t, r.end(), worker.ErrAdapterNotCancellable, noProtocol)

	r = newDriverRig(t)
	r.send(r.host.Invoke("r1", gateTool, text(strings.Repeat("x", 20000))))
	wantFatal(t, r.end(), worker.ErrProtocol, protocol.ErrInputTooLarge)
	if r.gate.returned.Load() != 0 {
		t.Fatal("an unauthorized invocation started")
	}
}
