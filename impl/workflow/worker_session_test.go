package workflow_test

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
	"github.com/splashv5/conform/impl/workflow"
)

// errWriteFailed is the failure of the host's pipe to the worker.
var errWriteFailed = errors.New("injected write failure")

// failingWriter accepts its first ok writes and fails every later one.
type failingWriter struct {
	mu sync.Mutex
	ok int
}

func (w *failingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ok == 0 {
		return 0, errWriteFailed
	}
	w.ok--
	return len(p), nil
}

// verdictSupervisor supervises one invocation and reports verdict when it is finished.
type verdictSupervisor struct {
	verdict    transport.FinishVerdict
	terminated int
}

func (*verdictSupervisor) SessionID() string { return session }
func (*verdictSupervisor) BeginInvocation(time.Duration) (transport.SupervisionToken, error) {
	return 1, nil
}
func (s *verdictSupervisor) FinishInvocation(transport.SupervisionToken) (transport.Finish, error) {
	return transport.Finish{Verdict: s.verdict}, nil
}
func (s *verdictSupervisor) Terminate() (transport.Termination, error) {
	s.terminated++
	return transport.Termination{}, nil
}

// retained claims a queued ordinary operation through the engine and starts it on a supervised
// multiplexed session whose host writes go to out and whose worker frames come from the
// returned writer, sealed by the returned worker authenticator.
func retained(t *testing.T, f *fixture, out io.Writer, sup transport.Supervisor) (host.OperationID, *transport.SupervisedSession, *io.PipeWriter, *protocol.Authenticator) {
	t.Helper()
	id := f.start("succeed", "1")
	inv, ok, err := f.e.ClaimOrdinary()
	if err != nil || !ok || inv.ID != id {
		t.Fatalf("claim %+v %v %v", inv, ok, err)
	}
	key, err := protocol.GenerateSessionKey()
	if err != nil {
		t.Fatal(err)
	}
	defer key.Close()
	h, err := protocol.NewAuthenticator(session, key, protocol.RoleHost, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	w, err := protocol.NewAuthenticator(session, key, protocol.RoleWorker, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	m, err := protocol.NewCapabilityManifest(session, []protocol.CapabilityGrant{recordGrant()})
	if err != nil {
		t.Fatal(err)
	}
	r, pw := io.Pipe()
	t.Cleanup(func() { pw.Close() })
	mux, err := transport.NewMultiplexed(m, h, r, out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mux.Abandon)
	s, err := transport.NewSupervisedSession(mux, sup, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.StartExternalTool(inv, "request-1"); err != nil {
		t.Fatal(err)
	}
	return id, s, pw, w
}

// Spec: WFL-031
// A cancellation whose send fails: the runtime recorded the request before the send, the error
// is the engine's Worker kind wrapping the transport's failure, and the operation stays
// cancellation-requested, never claimable or dispatchable again; the step stays suspended on
// it and the session is poisoned.
func TestCancellationSendFailureLeavesTheRequestRecorded(t *testing.T) {
	f := newFixture(t)
	sup := &verdictSupervisor{verdict: transport.FinishCompleted}
	id, s, _, _ := retained(t, f, &failingWriter{ok: 2}, sup) // open_session and invoke
	req, err := f.e.RequestCancellation(s, "cancel-1")
	wantKind(t, err, workflow.ErrWorker)
	wantKind(t, err, transport.ErrTransport)
	if req.ID != id || !req.Issued() {
		t.Fatalf("request %+v", req)
	}
	if f.state(id) != host.StateCancellationRequested {
		t.Fatalf("state %v after the failed send", f.state(id))
	}
	if _, ok := f.rt.ClaimNextExternal(); ok {
		t.Fatal("the operation became claimable again")
	}
	if f.e.Step() != workflow.StepSuspended || !s.Poisoned() || sup.terminated == 0 {
		t.Fatalf("step %v, poisoned %v, terminated %d", f.e.Step(), s.Poisoned(), sup.terminated)
	}
}

// Spec: WFL-032, TRN-084, TRN-085
// When lifecycle control wins the race against the worker's result (here: the invocation
// deadline), polling through the engine reports the operation indeterminate with its cause and
// applies nothing: the worker's result is not delivered, the runtime's operation stays claimed
// for reconciliation, the step stays suspended and the session is poisoned.
func TestPollWorkerIndeterminateAppliesNothing(t *testing.T) {
	f := newFixture(t)
	sup := &verdictSupervisor{verdict: transport.FinishDeadlineElapsed}
	id, s, pw, w := retained(t, f, io.Discard, sup)
	v, err := canonjson.ParseValue([]byte(`{"ok":true}`), canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	_, line, err := w.Seal(protocol.ResultMessage{Result: protocol.ToolResult{ProtocolVersion: protocol.ProtocolVersion,
		SessionID: session, RequestID: "request-1", Payload: protocol.JSONPayload(v)}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = pw.Write(append(line, '\n')) }()
	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	if err := s.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := f.e.PollWorker(s)
	if err != nil || !p.Indeterminate || p.Cause != transport.CauseDeadlineElapsed || p.Kind != 0 || p.Settlement.Output != "" {
		t.Fatalf("poll %+v, %v", p, err)
	}
	if f.state(id) != host.StateClaimed || f.e.Step() != workflow.StepSuspended || !s.Poisoned() {
		t.Fatalf("state %v, step %v, poisoned %v", f.state(id), f.e.Step(), s.Poisoned())
	}
	_, err = f.e.PollWorker(s)
	wantKind(t, err, workflow.ErrWorker)
	wantKind(t, err, transport.ErrPoisoned)
}
