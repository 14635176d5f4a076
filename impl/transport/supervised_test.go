package transport_test

import (
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
)

// eventLog records, in order, what the supervisor did and which frames the host wrote.
type eventLog struct {
	mu      sync.Mutex
	entries []string
}

func (l *eventLog) add(e string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, e)
}

func (l *eventLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.entries)
}

// loggedWriter logs the message kind of every frame line the host writes.
type loggedWriter struct {
	w   io.Writer
	log *eventLog
}

func (w loggedWriter) Write(p []byte) (int, error) {
	for _, kind := range []string{"open_session", "invoke", "cancel", "close_session"} {
		if strings.Contains(string(p), `"type":"`+kind+`"`) {
			w.log.add("write:" + kind)
			break
		}
	}
	return w.w.Write(p)
}

// fakeSupervisor is a scripted Supervisor.
type fakeSupervisor struct {
	session      string
	log          *eventLog
	beginErr     error
	finish       transport.Finish
	finishErr    error
	terminateErr error
	armed        transport.SupervisionToken
	began        int
	finished     int
	terminated   int
}

func newFakeSupervisor(log *eventLog) *fakeSupervisor {
	return &fakeSupervisor{session: testSession, log: log, finish: transport.Finish{Verdict: transport.FinishCompleted}}
}

func (s *fakeSupervisor) SessionID() string { return s.session }

func (s *fakeSupervisor) BeginInvocation(d time.Duration) (transport.SupervisionToken, error) {
	s.log.add("begin")
	if s.beginErr != nil {
		return 0, s.beginErr
	}
	if d != time.Minute {
		panic("unexpected deadline")
	}
	s.began++
	s.armed = transport.SupervisionToken(s.began + 100)
	return s.armed, nil
}

func (s *fakeSupervisor) FinishInvocation(t transport.SupervisionToken) (transport.Finish, error) {
	s.log.add("finish")
	if t != s.armed {
		panic("finish with a token that is not armed")
	}
	s.finished++
	s.armed = 0
	return s.finish, s.finishErr
}

func (s *fakeSupervisor) Terminate() (transport.Termination, error) {
	s.log.add("terminate")
	s.terminated++
	return transport.Termination{Forced: true, Signal: "killed"}, s.terminateErr
}

type supervisedFixture struct {
	t   *testing.T
	s   *transport.SupervisedSession
	sup *fakeSupervisor
	w   *scriptedWorker
	rt  *host.Runtime
	inv host.Invocation
	log *eventLog
}

func newSupervised(t *testing.T, m *protocol.CapabilityManifest) *supervisedFixture {
	t.Helper()
	log := &eventLog{}
	mux, w := newMultiplexedPairWith(t, m, func(out io.Writer) io.Writer { return loggedWriter{out, log} })
	sup := newFakeSupervisor(log)
	s, err := transport.NewSupervisedSession(mux, sup, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	rt, inv := claimed(t, toolText, "release")
	return &supervisedFixture{t: t, s: s, sup: sup, w: w, rt: rt, inv: inv, log: log}
}

// started starts the claimed invocation and lets the worker read its invoke.
func (f *supervisedFixture) started() {
	f.t.Helper()
	if err := f.s.StartExternalTool(f.inv, "request-1"); err != nil {
		f.t.Fatal(err)
	}
	f.w.expect(protocol.TypeInvoke)
}

func (f *supervisedFixture) wantPoisoned() {
	f.t.Helper()
	if !f.s.Poisoned() || f.s.HasActiveInvocation() {
		f.t.Fatalf("poisoned %v, active %v", f.s.Poisoned(), f.s.HasActiveInvocation())
	}
	wantKind(f.t, f.s.StartExternalTool(f.inv, "request-9"), transport.ErrPoisoned)
	_, err := f.s.PollExternalToolEvent()
	wantKind(f.t, err, transport.ErrPoisoned)
	_, err = f.s.Close()
	wantKind(f.t, err, transport.ErrPoisoned)
}

// Spec: TRN-080, TRN-081
// The supervisor must serve the transport's session, and the deadline must be positive.
func TestSupervisedConstruction(t *testing.T) {
	mux, _ := newMultiplexedPair(t, nil)
	sup := newFakeSupervisor(&eventLog{})
	sup.session = "session-2"
	_, err := transport.NewSupervisedSession(mux, sup, time.Minute)
	wantKind(t, err, transport.ErrSessionMismatch)
	sup.session = testSession
	for _, d := range []time.Duration{0, -time.Second} {
		_, err = transport.NewSupervisedSession(mux, sup, d)
		wantKind(t, err, transport.ErrInvalidDeadline)
	}
}

// Spec: TRN-082, TRN-084
// The deadline is armed before the invoke is written and finished before the terminal event
// is exposed; non-terminal observations leave supervision alone.
func TestSupervisedCompletedUnderSupervision(t *testing.T) {
	f := newSupervised(t, nil)
	f.started()
	if got := f.log.list(); !slices.Equal(got, []string{"write:open_session", "begin", "write:invoke"}) {
		t.Fatalf("order %v", got)
	}
	if id, ok := f.s.ActiveExternalID(); !ok || id != f.inv.ID {
		t.Fatalf("active id %v %v", id, ok)
	}
	wantKind(t, f.s.StartExternalTool(f.inv, "request-2"), transport.ErrBusy)
	ev, err := f.s.PollExternalToolEvent()
	if err != nil || ev.Kind != transport.SupervisedWorker || ev.Event.Kind != transport.ExternalPending || f.sup.finished != 0 {
		t.Fatalf("pending poll: %+v, %v, finished %d", ev, err, f.sup.finished)
	}
	f.w.send(textResult(t, "request-1", "done"))
	ev, err = f.s.WaitExternalToolEvent(waitCtx(t))
	if err != nil || ev.Kind != transport.SupervisedWorker || ev.Event.Kind != transport.ExternalCompleted || ev.Event.Output != "done" {
		t.Fatalf("event %+v, %v", ev, err)
	}
	if f.sup.finished != 1 || f.s.Poisoned() || f.s.HasActiveInvocation() {
		t.Fatalf("finished %d, poisoned %v", f.sup.finished, f.s.Poisoned())
	}
	if _, err := transport.ApplyToRuntime(ev.Event, f.rt); err != nil {
		t.Fatal(err)
	}
	_, err = f.s.PollExternalToolEvent()
	wantKind(t, err, transport.ErrNoActiveInvocation)
}

// Spec: TRN-084, TRN-085, TRN-088
// When the deadline or a termination wins, the worker's terminal event is dropped, the session
// is poisoned, and the runtime operation stays pending: a result is not completed and an
// acknowledgement is not confirmed.
func TestSupervisedLifecycleWins(t *testing.T) {
	cases := []struct {
		name    string
		verdict transport.FinishVerdict
		cause   transport.IndeterminateCause
		cancel  bool
	}{
		{"deadline over a result", transport.FinishDeadlineElapsed, transport.CauseDeadlineElapsed, false},
		{"session deadline over a result", transport.FinishSessionDeadlineElapsed, transport.CauseSessionDeadlineElapsed, false},
		{"termination over an acknowledgement", transport.FinishTerminated, transport.CauseWorkerTerminated, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newSupervised(t, nil)
			f.sup.finish = transport.Finish{Verdict: c.verdict, Termination: transport.Termination{Forced: true, Signal: "killed"}}
			f.started()
			before := host.StateClaimed
			if c.cancel {
				req, err := f.rt.RequestExternalCancellation(f.inv.ID)
				if err != nil {
					t.Fatal(err)
				}
				if err := f.s.RequestExternalToolCancellation(req, "c1"); err != nil {
					t.Fatal(err)
				}
				f.w.expect(protocol.TypeCancel)
				f.w.send(cancellationResult(t, "c1", "request-1", toolText, protocol.OutcomeAcknowledged))
				before = host.StateCancellationRequested
			} else {
				f.w.send(textResult(t, "request-1", "done"))
			}
			p, err := waitSupervisedPoll(t, f)
			if err != nil || p.Kind != transport.SupervisedIndeterminate || p.Cause != c.cause ||
				p.ExternalID != f.inv.ID || !p.Termination.Forced {
				t.Fatalf("poll %+v, %v", p, err)
			}
			if info := state(t, f.rt, f.inv.ID); info.State != before {
				t.Fatalf("runtime state %s, want %s", info.State, before)
			}
			f.wantPoisoned()
		})
	}
}

// waitSupervisedPoll waits and polls with PollExternalTool until something other than a
// pending worker event arrives.
func waitSupervisedPoll(t *testing.T, f *supervisedFixture) (transport.SupervisedPoll, error) {
	t.Helper()
	for {
		if err := f.s.Wait(waitCtx(t)); err != nil {
			return transport.SupervisedPoll{}, err
		}
		p, err := f.s.PollExternalTool(f.rt)
		if err != nil || p.Kind != transport.SupervisedWorker || p.Poll.Kind != transport.ExternalPending {
			return p, err
		}
	}
}

// Spec: TRN-087, TRN-088
// A transport failure poisons the session; the supervisor decides whether it is a plain
// transport failure (worker terminated), indeterminate, or a supervisor failure.
func TestSupervisedTransportFailure(t *testing.T) {
	cases := []struct {
		name       string
		finish     transport.Finish
		finishErr  error
		kind       transport.ErrorKind
		terminates bool
	}{
		{"completed", transport.Finish{Verdict: transport.FinishCompleted}, nil, transport.ErrTransport, true},
		{"deadline", transport.Finish{Verdict: transport.FinishDeadlineElapsed}, nil, transport.ErrIndeterminate, false},
		{"terminated", transport.Finish{Verdict: transport.FinishTerminated}, nil, transport.ErrIndeterminate, false},
		{"supervisor", transport.Finish{}, errors.New("watchdog lost"), transport.ErrSupervisor, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newSupervised(t, nil)
			f.sup.finish, f.sup.finishErr = c.finish, c.finishErr
			f.started()
			f.w.out.Close() // the worker's stream breaks
			_, err := f.s.WaitExternalToolEvent(waitCtx(t))
			wantKind(t, err, c.kind)
			if c.kind != transport.ErrSupervisor {
				wantKind(t, err, transport.ErrUnexpectedMessage) // the cause is kept
			}
			if (f.sup.terminated == 1) != c.terminates {
				t.Fatalf("terminated %d times", f.sup.terminated)
			}
			var e *transport.Error
			if errors.As(err, &e) && c.kind == transport.ErrIndeterminate && (e.ExternalID != f.inv.ID || e.Termination == nil) {
				t.Fatalf("indeterminate error %+v", e)
			}
			if state(t, f.rt, f.inv.ID).State != host.StateClaimed {
				t.Fatal("the runtime operation moved")
			}
			f.wantPoisoned()
		})
	}
}

// Spec: TRN-082
// Start refusals: Busy, a binding that cannot be prepared (not poisoning, nothing armed), an
// arming failure (poisons, terminates), and a host authorization refusal (poisons, resolved by
// the supervisor).
func TestSupervisedStartFailures(t *testing.T) {
	t.Run("bridge", func(t *testing.T) {
		f := newSupervised(t, nil)
		err := f.s.StartExternalTool(host.Invocation{ID: 3, Name: toolJSON, Format: host.FormatJSON, Input: "1"}, "request-1")
		wantKind(t, err, transport.ErrBridge)
		wantKind(t, err, transport.ErrExternal)
		if f.s.Poisoned() || f.sup.began != 0 || len(f.log.list()) != 1 {
			t.Fatalf("poisoned %v, log %v", f.s.Poisoned(), f.log.list())
		}
		f.started()
	})
	t.Run("arming", func(t *testing.T) {
		f := newSupervised(t, nil)
		f.sup.beginErr = errors.New("no watchdog")
		err := f.s.StartExternalTool(f.inv, "request-1")
		wantKind(t, err, transport.ErrSupervisor)
		if got := f.log.list(); !slices.Equal(got, []string{"write:open_session", "begin", "terminate"}) {
			t.Fatalf("order %v", got)
		}
		f.wantPoisoned()
	})
	t.Run("authorization", func(t *testing.T) {
		only, err := protocol.NewCapabilityManifest(testSession, []protocol.CapabilityGrant{grant(toolJSON, protocol.FormatJSON, 1)})
		if err != nil {
			t.Fatal(err)
		}
		f := newSupervised(t, &only)
		err = f.s.StartExternalTool(f.inv, "request-1")
		wantKind(t, err, transport.ErrTransport)
		wantProtocolKind(t, err, protocol.ErrUnknownTool)
		if got := f.log.list(); !slices.Equal(got, []string{"write:open_session", "begin", "finish", "terminate"}) {
			t.Fatalf("order %v", got)
		}
		f.wantPoisoned()
	})
}

// Spec: TRN-083, TRN-084
// Cancellation: refused without an active invocation; a binding refusal is Bridge and does not
// poison; an unsupported disposition is returned without finishing supervision.
func TestSupervisedCancellation(t *testing.T) {
	f := newSupervised(t, nil)
	req := host.CancellationRequest{ID: f.inv.ID}
	wantKind(t, f.s.RequestExternalToolCancellation(req, "c1"), transport.ErrNoActiveInvocation)
	f.started()
	err := f.s.RequestExternalToolCancellation(req, "c1")
	wantKind(t, err, transport.ErrBridge)
	wantKind(t, err, transport.ErrCancellationBindingMismatch)
	if f.s.Poisoned() {
		t.Fatal("a binding refusal poisoned the session")
	}
	req, _ = f.rt.RequestExternalCancellation(f.inv.ID)
	if err := f.s.RequestExternalToolCancellation(req, "c1"); err != nil {
		t.Fatal(err)
	}
	f.w.expect(protocol.TypeCancel)
	f.w.send(cancellationResult(t, "c1", "request-1", toolText, protocol.OutcomeUnsupported))
	ev, err := f.s.WaitExternalToolEvent(waitCtx(t))
	if err != nil || ev.Kind != transport.SupervisedWorker || ev.Event.Kind != transport.ExternalCancellationUnsupported || f.sup.finished != 0 {
		t.Fatalf("event %+v, %v, finished %d", ev, err, f.sup.finished)
	}
	f.w.send(textResult(t, "request-1", "after all"))
	ev, err = f.s.WaitExternalToolEvent(waitCtx(t))
	if err != nil || ev.Event.Kind != transport.ExternalCompleted || f.sup.finished != 1 {
		t.Fatalf("event %+v, %v", ev, err)
	}
}

// Spec: TRN-083, TRN-087
// A transport failure while sending the cancellation poisons and is resolved by the
// supervisor.
func TestSupervisedCancellationTransportFailure(t *testing.T) {
	f := newSupervised(t, nil)
	f.started()
	f.w.inR.Close() // the worker stops reading: the cancel cannot be written
	req, _ := f.rt.RequestExternalCancellation(f.inv.ID)
	err := f.s.RequestExternalToolCancellation(req, "c1")
	wantKind(t, err, transport.ErrTransport)
	wantKind(t, err, transport.ErrIO)
	if f.sup.finished != 1 || f.sup.terminated != 1 {
		t.Fatalf("finished %d, terminated %d", f.sup.finished, f.sup.terminated)
	}
	f.wantPoisoned()
}

// Spec: TRN-086
// Close: Busy while active; success returns the supervisor; a failed close terminates.
func TestSupervisedClose(t *testing.T) {
	f := newSupervised(t, nil)
	f.started()
	_, err := f.s.Close()
	wantKind(t, err, transport.ErrBusy)
	f.w.send(textResult(t, "request-1", "done"))
	if _, err := f.s.WaitExternalToolEvent(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	var sup transport.Supervisor
	go func() {
		var err error
		sup, err = f.s.Close()
		done <- err
	}()
	f.w.expect(protocol.TypeCloseSession)
	f.w.out.Close()
	if err := <-done; err != nil || sup != f.sup || f.sup.terminated != 0 {
		t.Fatalf("close: %v, terminated %d", err, f.sup.terminated)
	}

	g := newSupervised(t, nil)
	go func() {
		_, err := g.s.Close()
		done <- err
	}()
	g.w.expect(protocol.TypeCloseSession)
	g.w.send(textResult(t, "request-1", "unexpected")) // not the end of the stream
	err = <-done
	wantKind(t, err, transport.ErrTransport)
	if g.sup.terminated != 1 {
		t.Fatal("a failed close did not terminate the worker")
	}
}

// Spec: TRN-111
// A claim whose deferred deadline already elapsed is refused before anything is armed or
// written, and the session stays usable.
func TestSupervisedRefusesAnElapsedClaim(t *testing.T) {
	f := newSupervised(t, nil)
	rt, err := host.New(host.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.RegisterExternalTool(host.NewPolicy(toolText).WithDeadline(0), host.Metadata{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Start(toolText, "x"); err != nil {
		t.Fatal(err)
	}
	inv, _ := rt.ClaimNextExternal()
	err = f.s.StartExternalTool(inv, "request-1")
	wantKind(t, err, transport.ErrBridge)
	if !errors.Is(err, host.ErrDeadlineElapsed) || f.s.Poisoned() || f.sup.began != 0 {
		t.Fatalf("err %v, poisoned %v, armed %d", err, f.s.Poisoned(), f.sup.began)
	}
	f.started()
}
