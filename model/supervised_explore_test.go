package model_test

import (
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
	"github.com/splashv5/conform/impl/worker/workertest"
	"github.com/splashv5/conform/model"
)

func supervisedBound() model.Supervised {
	if soak() {
		return model.Supervised{Invocations: 6}
	}
	return model.Supervised{Invocations: 3}
}

// Every interleaving of worker answers, cancellation, the invocation deadline killing the
// worker, and the host's polls, over several invocations of one supervised session: a
// lifecycle stop and a terminal worker event never both win, and an indeterminate outcome
// leaves the operation pending and the session poisoned.
//
// Spec: TRN-062, TRN-074, TRN-082, TRN-084, TRN-085, TRN-087, TRN-088
func TestSupervisedExhaustive(t *testing.T) {
	t.Parallel()
	reportExploration(t, explore("supervised", supervisedBound().System))
}

// Negative control: a session that applies the worker's terminal event without asking the
// supervisor who won is caught with a trace.
//
// Spec: TRN-084, TRN-088
func TestSupervisedNegativeControl(t *testing.T) {
	sys := broken(model.Supervised{Invocations: 2}.System(), func(s model.SupState, mv model.Move[model.SupState, model.SupAction]) model.Move[model.SupState, model.SupAction] {
		if mv.Action.Outcome == model.SupIndeterminate && s.InvResolved == model.SupCompleted {
			n := mv.Next
			n.Poisoned = false
			n.Ops = append([]string(nil), n.Ops...)
			n.Ops[len(n.Ops)-1] = model.SupCompleted
			mv.Next, mv.Action.Outcome = n, model.SupCompleted
		}
		return mv
	})
	expectCaught(t, model.Explore(sys), "a lifecycle stop and a terminal event never both win")
}

// Negative control: a session that does not poison itself when the transport fails before the
// deadline is caught with a trace.
//
// Spec: TRN-087
func TestSupervisedTransportFailureControl(t *testing.T) {
	sys := broken(model.Supervised{Invocations: 2}.System(), func(s model.SupState, mv model.Move[model.SupState, model.SupAction]) model.Move[model.SupState, model.SupAction] {
		if mv.Action.Outcome == model.SupTransport {
			mv.Next.Poisoned = false
		}
		return mv
	})
	expectCaught(t, model.Explore(sys), "a transport failure poisons the session and ends the worker")
}

// supSupervisor is the replay's supervisor: the deadline elapses when the replay says so.
type supSupervisor struct {
	fired      bool
	armed      transport.SupervisionToken
	began      int
	terminated int
}

func (*supSupervisor) SessionID() string { return muxSession }

func (s *supSupervisor) BeginInvocation(time.Duration) (transport.SupervisionToken, error) {
	s.began++
	s.armed, s.fired = transport.SupervisionToken(s.began), false
	return s.armed, nil
}

func (s *supSupervisor) FinishInvocation(t transport.SupervisionToken) (transport.Finish, error) {
	if t != s.armed {
		return transport.Finish{}, errors.New("finish with a token that is not armed")
	}
	s.armed = 0
	if s.fired {
		return transport.Finish{Verdict: transport.FinishDeadlineElapsed, Termination: transport.Termination{Forced: true, Signal: "killed"}}, nil
	}
	return transport.Finish{Verdict: transport.FinishCompleted}, nil
}

func (s *supSupervisor) Terminate() (transport.Termination, error) {
	s.terminated++
	return transport.Termination{Forced: true, Signal: "killed"}, nil
}

// supReplay runs a real SupervisedSession over a multiplexed transport on pipes, with a
// scripted worker and a real runtime.
type supReplay struct {
	t          *testing.T
	rt         *host.Runtime
	mux        *transport.Multiplexed
	s          *transport.SupervisedSession
	sup        *supSupervisor
	worker     *protocol.Authenticator
	in         *jsonline.Reader
	out        *os.File
	files      []*os.File
	ids        []host.OperationID
	hostWorker *workertest.Host
}

func newSupReplay(t *testing.T, c model.Supervised) *supReplay {
	h, hostAuth, workerAuth, m := textSession(t, model.SupTool, c.Invocations)
	hostIn, workerOut, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	workerIn, hostOut, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	mux, err := transport.NewMultiplexed(m, hostAuth, hostIn, hostOut)
	if err != nil {
		t.Fatal(err)
	}
	sup := &supSupervisor{}
	s, err := transport.NewSupervisedSession(mux, sup, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := host.New(host.Config{MaxPendingTools: c.Invocations})
	if err != nil {
		t.Fatal(err)
	}
	p := host.NewPolicy(model.SupTool)
	p.MaxCalls = c.Invocations
	if err := rt.RegisterExternalTool(p, host.Metadata{}); err != nil {
		t.Fatal(err)
	}
	r := &supReplay{t: t, rt: rt, mux: mux, s: s, sup: sup, worker: workerAuth, in: jsonline.NewReader(workerIn),
		out: workerOut, files: []*os.File{workerOut, workerIn, hostOut, hostIn}, hostWorker: h}
	r.expect(protocol.TypeOpenSession)
	return r
}

func (r *supReplay) close() {
	r.mux.Abandon()
	for _, f := range r.files {
		f.Close()
	}
	r.hostWorker.Close()
}

// expect reads the next host frame at the worker, which must be of kind want.
func (r *supReplay) expect(want protocol.MessageType) {
	r.t.Helper()
	line, err := r.in.ReadLine()
	if err != nil {
		r.t.Fatalf("the worker read nothing: %v", err)
	}
	f, err := r.worker.Open(line)
	if err != nil || f.Message.Type() != want {
		r.t.Fatalf("the worker got %v (%v), want %s", f.Message, err, want)
	}
}

// sendTampered writes a worker result frame whose tag does not verify.
func (r *supReplay) sendTampered() {
	r.t.Helper()
	res, err := protocol.NewToolResult(muxSession, "r"+strconv.Itoa(len(r.ids)), protocol.TextPayload("out"))
	if err != nil {
		r.t.Fatal(err)
	}
	f, _, err := r.worker.Seal(protocol.ResultMessage{Result: res})
	if err != nil {
		r.t.Fatal(err)
	}
	f.Tag[0] ^= 1
	if _, err := r.out.Write(append(f.AppendJSON(nil), '\n')); err != nil {
		r.t.Fatal(err)
	}
}

// send writes a worker frame.
func (r *supReplay) send(m protocol.Message) {
	r.t.Helper()
	f, _, err := r.worker.Seal(m)
	if err != nil {
		r.t.Fatal(err)
	}
	line, err := protocol.EncodeFrame(f)
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := r.out.Write(append(line, '\n')); err != nil {
		r.t.Fatal(err)
	}
}

// settle waits until the transport reached the model's phase.
func (r *supReplay) settle(want string) {
	r.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for muxPhases[r.mux.Phase()] != want {
		if time.Now().After(deadline) {
			r.t.Fatalf("transport phase %s, model %s", muxPhases[r.mux.Phase()], want)
		}
		time.Sleep(20 * time.Microsecond)
	}
}

func supOutcome(p transport.SupervisedPoll, err error) string {
	var e *transport.Error
	switch {
	case errors.As(err, &e) && e.Kind == transport.ErrIndeterminate:
		return model.SupIndeterminate
	case errors.As(err, &e) && e.Kind == transport.ErrTransport:
		return model.SupTransport
	case err != nil:
		return "error " + err.Error()
	case p.Kind == transport.SupervisedIndeterminate:
		return model.SupIndeterminate
	}
	switch p.Poll.Kind {
	case transport.ExternalCompleted:
		return model.SupCompleted
	case transport.ExternalCancelled:
		return model.SupCancelled
	case transport.ExternalCancellationTooLate:
		return model.SupTooLate
	case transport.ExternalCancellationUnsupported:
		return model.SupUnsupported
	case transport.ExternalPending:
		return model.SupPending
	}
	return p.Poll.Kind.String()
}

func (r *supReplay) step(a model.SupAction, to model.SupState) {
	r.t.Helper()
	id := "r" + strconv.Itoa(len(r.ids))
	switch a.Kind {
	case model.SupStart:
		if _, err := r.rt.Start(model.SupTool, "in"); err != nil {
			r.t.Fatal(err)
		}
		inv, ok := r.rt.ClaimNextExternal()
		if !ok {
			r.t.Fatal("nothing to claim")
		}
		r.ids = append(r.ids, inv.ID)
		if err := r.s.StartExternalTool(inv, "r"+strconv.Itoa(len(r.ids))); err != nil {
			r.t.Fatalf("start: %v", err)
		}
		r.expect(protocol.TypeInvoke)
	case model.SupCancel:
		req, err := r.rt.RequestExternalCancellation(r.ids[len(r.ids)-1])
		if err != nil {
			r.t.Fatal(err)
		}
		if err := r.s.RequestExternalToolCancellation(req, "c"+id); err != nil {
			r.t.Fatalf("cancel: %v", err)
		}
		r.expect(protocol.TypeCancel)
	case model.SupWorker:
		if a.Frame == model.SupTampered {
			r.sendTampered()
		} else if a.Frame == model.FrameResult {
			res, err := protocol.NewToolResult(muxSession, id, protocol.TextPayload("out"))
			if err != nil {
				r.t.Fatal(err)
			}
			r.send(protocol.ResultMessage{Result: res})
		} else {
			req, err := protocol.NewWorkerCancellationRequest(muxSession, "c"+id, id, model.SupTool)
			if err != nil {
				r.t.Fatal(err)
			}
			outcome := map[string]protocol.WorkerCancellationOutcome{model.MuxAcknowledged: protocol.OutcomeAcknowledged,
				model.MuxTooLate: protocol.OutcomeTooLate, model.MuxUnsupported: protocol.OutcomeUnsupported}[a.Frame]
			res, err := protocol.NewWorkerCancellationResult(req, outcome)
			if err != nil {
				r.t.Fatal(err)
			}
			r.send(protocol.CancellationResultMessage{Result: res})
		}
	case model.SupDeadline:
		r.sup.fired = true
		r.out.Close() // the killed worker's stream ends
	case model.SupPoll:
		if got := supOutcome(r.s.PollExternalTool(r.rt)); got != a.Outcome {
			r.t.Fatalf("poll %q, model %q", got, a.Outcome)
		}
	}
	r.settle(to.Mux.Phase)
	if r.s.Poisoned() != to.Poisoned || r.s.HasActiveInvocation() != to.Active {
		r.t.Fatalf("session poisoned %t active %t, model %t %t", r.s.Poisoned(), r.s.HasActiveInvocation(), to.Poisoned, to.Active)
	}
	for i, opID := range r.ids {
		info, ok := r.rt.Operation(opID)
		got := "gone"
		if ok {
			got = info.State.String()
			if got == "ready" {
				got = model.SupCompleted
				if info.Err != nil && info.Err.Kind == host.ToolCancelled {
					got = model.SupCancelled
				}
			}
		}
		if got != to.Ops[i] {
			r.t.Fatalf("operation %d %s, model %s", i+1, got, to.Ops[i])
		}
	}
}

func replaySupervised(t *testing.T, c model.Supervised, trace []model.SupAction) {
	r := newSupReplay(t, c)
	defer r.close()
	walk(t, c.System(), trace, model.SupAction.Input, func(a model.SupAction, _, to model.SupState) { r.step(a, to) })
}

// The real supervised session, its multiplexed transport and the runtime follow the model
// along every explored transition of the CI bound.
//
// Spec: TRN-082, TRN-083, TRN-084, TRN-085, TRN-087, TRN-088
func TestSupervisedReplay(t *testing.T) {
	t.Parallel()
	c := supervisedBound()
	r := explore("supervised", c.System)
	traces := r.EdgeTraces(0)
	replayEach(t, traces, func(t *testing.T, tr []model.SupAction) { replaySupervised(t, c, tr) })
	t.Logf("%s: replayed %d traces", r.Summary(), len(traces))
}
