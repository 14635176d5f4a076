package model_test

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
	"github.com/splashv5/conform/impl/worker"
	"github.com/splashv5/conform/impl/worker/workertest"
	"github.com/splashv5/conform/model"
)

func cancellationBound() model.Cancellation {
	if soak() {
		return model.Cancellation{Invocations: 5, Tampers: 2, FaultyAdapter: true}
	}
	return model.Cancellation{Invocations: 3, Tampers: 1, FaultyAdapter: true}
}

// hostileBound adds a hostile peer on the worker's stream to the bound.
func hostileBound() model.Cancellation {
	c := cancellationBound()
	c.Hostile = 1
	return c
}

// With a hostile peer on the worker's stream, which may write a duplicate of a result or an
// acknowledgement nobody requested at any moment: the host takes neither as an answer, never
// resolves an invocation twice, and stops.
//
// Spec: TRN-050, TRN-055, TRN-056, TRN-057, TRN-061
func TestCancellationHostilePeer(t *testing.T) {
	t.Parallel()
	reportExploration(t, explore("cancellation hostile", hostileBound().System))
}

// Negative control: a host that ignores a duplicate result instead of failing on it is caught
// by an invariant, not only by the random property tests.
//
// Spec: TRN-055
func TestCancellationDuplicateResultControl(t *testing.T) {
	c := model.Cancellation{Invocations: 2, Hostile: 1}
	sys := broken(c.System(), func(s model.CancelState, mv model.Move[model.CancelState, model.CancelAction]) model.Move[model.CancelState, model.CancelAction] {
		if mv.Action.Actor == model.ActorNet && mv.Action.Forged && mv.Action.Kind == model.MuxStepResult {
			mv.Next.Host, mv.Action.Events = s.Host.Clone(), nil
		}
		return mv
	})
	expectCaught(t, model.Explore(sys), "the host takes no forged frame as an answer: it stops")
}

// Every interleaving of the host's multiplexed transport and the worker's cancellable driver
// over two channels, with the adapter completing, acknowledging or failing at any point and a
// host frame corrupted in transit: no result after an acknowledgement or the reverse, at most
// one cancel per target, the token only after authorization, a fatal error only after the
// adapter returned, and no protocol violation seen by the host.
//
// Spec: CAN-004, CAN-006, CAN-007, CAN-009, CAN-012, CAN-013, CAN-014, CAN-015, CAN-016, CAN-019
// Spec: CAN-020, TRN-042, TRN-050, TRN-051, TRN-052, TRN-053, TRN-059, TRN-061, TRN-062
func TestCancellationExhaustive(t *testing.T) {
	t.Parallel()
	reportExploration(t, explore("cancellation", cancellationBound().System))
}

// Negative controls: a driver that acknowledges a cancellation it answered too late, one that
// issues no read permit after too_late (the run deadlocks), and one that returns a fatal error
// without waiting for the adapter, are each caught with a trace.
//
// Spec: CAN-015, CAN-019
func TestCancellationNegativeControls(t *testing.T) {
	c := model.Cancellation{Invocations: 2, Tampers: 1}
	t.Run("too_late answered as acknowledged", func(t *testing.T) {
		r := model.Explore(broken(c.System(), func(s model.CancelState, mv model.Move[model.CancelState, model.CancelAction]) model.Move[model.CancelState, model.CancelAction] {
			if mv.Action.Actor == model.ActorAdapter && len(mv.Action.Written) == 2 {
				w := slices.Clone(mv.Action.Written)
				w[1].Outcome = model.MuxAcknowledged
				mv.Action.Written = w
				n := mv.Next
				n.ToHost = append(slices.Clone(n.ToHost[:len(n.ToHost)-1]), w[1])
				mv.Next = n
			}
			return mv
		}))
		expectCaught(t, r, "never an acknowledgement after a result")
	})
	t.Run("no read permit after too_late", func(t *testing.T) {
		r := model.Explore(broken(c.System(), func(s model.CancelState, mv model.Move[model.CancelState, model.CancelAction]) model.Move[model.CancelState, model.CancelAction] {
			if mv.Action.Actor == model.ActorAdapter && len(mv.Action.Written) == 2 {
				mv.Next.Worker.Permit = false
			}
			return mv
		}))
		expectCaught(t, r, "a run ends only with both sides finished")
	})
	t.Run("fatal error without waiting for the adapter", func(t *testing.T) {
		r := model.Explore(broken(c.System(), func(s model.CancelState, mv model.Move[model.CancelState, model.CancelAction]) model.Move[model.CancelState, model.CancelAction] {
			if mv.Next.Worker.Phase == model.DriverStopping {
				mv.Next.Worker.Phase = model.DriverStopped
			}
			return mv
		}))
		expectCaught(t, r, "a fatal error waits for the adapter")
	})
}

// cancelReader is the driver's line reader: each read announces itself and waits for the
// replay to hand it a line.
type cancelReader struct {
	waiting chan struct{}
	feed    chan []byte
	closed  chan struct{}
}

func (r *cancelReader) ReadLine() ([]byte, error) {
	select {
	case r.waiting <- struct{}{}:
	case <-r.closed:
		return nil, io.EOF
	}
	select {
	case line := <-r.feed:
		return line, nil
	case <-r.closed:
		return nil, io.EOF
	}
}

// cancelWriter collects the driver's lines.
type cancelWriter struct {
	mu    sync.Mutex
	buf   []byte
	lines chan []byte
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.lines <- append([]byte(nil), w.buf[:i]...)
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}

// cancelAdapter is a cancellable adapter whose every return is a step of the replay.
type cancelAdapter struct {
	worker.Unimplemented
	started chan *worker.CancelToken
	cmd     chan string
}

func (*cancelAdapter) InvocationSafety() worker.InvocationSafety { return worker.ReadOnly }

func (a *cancelAdapter) InvokeCancellable(req protocol.ToolInvocation, _ protocol.CapabilityGrant, token *worker.CancelToken) (worker.Completion, error) {
	a.started <- token
	switch <-a.cmd {
	case model.AdapterAcknowledge:
		return worker.Acknowledged(), nil
	case model.AdapterFail:
		return worker.Completion{}, &worker.AdapterError{Kind: worker.AdapterFailed}
	}
	return worker.Completed(protocol.TextPayload("out")), nil
}

// cancelReplay runs the real coordinator and the real driver along a trace.
type cancelReplay struct {
	t        *testing.T
	host     *workertest.Host
	c        *transport.Coordinator
	reader   *cancelReader
	writer   *cancelWriter
	adapter  *cancelAdapter
	done     chan error
	runErr   error
	returned bool
	toWorker [][]byte
	toHost   [][]byte
	token    *worker.CancelToken
	waiting  bool
	// The last sequence numbers the coordinator and the driver sealed, and the lines a hostile
	// peer forged at the next one.
	hostSeq, workerSeq uint64
	forged             map[string]bool
}

const cancelWait = 5 * time.Second

// textSession returns a test host for the session, host and worker authenticators, and a
// manifest granting one text tool calls calls.
func textSession(t *testing.T, tool string, calls int) (*workertest.Host, *protocol.Authenticator, *protocol.Authenticator, protocol.CapabilityManifest) {
	host, err := workertest.NewHost(muxSession)
	if err != nil {
		t.Fatal(err)
	}
	hostAuth, err := host.Authenticator(protocol.RoleHost, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	workerAuth, err := host.WorkerAuthenticator(canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	m, err := protocol.NewCapabilityManifest(muxSession, []protocol.CapabilityGrant{workertest.Grant(tool, protocol.FormatText, uint32(calls), 0)})
	if err != nil {
		t.Fatal(err)
	}
	return host, hostAuth, workerAuth, m
}

func newCancelReplay(t *testing.T, c model.Cancellation) *cancelReplay {
	host, hostAuth, workerAuth, m := textSession(t, model.CancelTool, c.Invocations)
	coord, line, err := transport.NewCoordinator(m, hostAuth)
	if err != nil {
		t.Fatal(err)
	}
	a := &cancelAdapter{started: make(chan *worker.CancelToken), cmd: make(chan string)}
	reg := worker.NewRegistry()
	if err := reg.RegisterCancellable(model.CancelTool, a); err != nil {
		t.Fatal(err)
	}
	j, err := journal.New("tenant-c")
	if err != nil {
		t.Fatal(err)
	}
	s, err := worker.Open(context.Background(), workerAuth, line, worker.Config{Journal: j, Registry: reg,
		Admission: worker.AdmissionFunc(func(context.Context, protocol.CapabilityManifest, string) (uint64, error) { return 1, nil })})
	if err != nil {
		t.Fatal(err)
	}
	r := &cancelReplay{t: t, host: host, c: coord, adapter: a, done: make(chan error, 1), forged: map[string]bool{},
		reader: &cancelReader{waiting: make(chan struct{}), feed: make(chan []byte), closed: make(chan struct{})},
		writer: &cancelWriter{lines: make(chan []byte, 64)}}
	d, err := worker.NewDriver(s, r.reader, r.writer)
	if err != nil {
		t.Fatal(err)
	}
	go func() { r.done <- d.Run() }()
	return r
}

func (r *cancelReplay) close() {
	close(r.reader.closed)
	if !r.returned {
		for {
			select {
			case <-r.adapter.started:
				continue
			case r.adapter.cmd <- model.AdapterComplete:
				continue
			case <-r.done:
			case <-time.After(cancelWait):
				r.t.Fatal("the driver did not stop")
			}
			break
		}
	}
	r.host.Close()
}

func (r *cancelReplay) fail(format string, args ...any) {
	r.t.Helper()
	r.t.Fatalf(format, args...)
}

// sync waits until the driver reaches the model's state: the lines it wrote, its permit, its
// adapter's start and token, its return.
func (r *cancelReplay) sync(from, to model.Driver, written int) {
	r.t.Helper()
	timeout := time.After(cancelWait)
	for range written {
		select {
		case line := <-r.writer.lines:
			r.toHost = append(r.toHost, line)
			if f, err := protocol.DecodeFrame(line, canonjson.Preserve); err == nil {
				r.workerSeq = f.Sequence
			}
		case <-timeout:
			r.fail("the driver wrote %d of %d lines", len(r.toHost), written)
		}
	}
	if to.Running && !from.Running {
		select {
		case r.token = <-r.adapter.started:
		case <-timeout:
			r.fail("the adapter did not start")
		}
	}
	if to.Token && !from.Token {
		select {
		case <-r.token.Done():
		case <-timeout:
			r.fail("the token was not set")
		}
	}
	if to.Reads() && !r.waiting {
		select {
		case <-r.reader.waiting:
			r.waiting = true
		case <-timeout:
			r.fail("the driver did not issue a read permit")
		}
	}
	if (to.Phase == model.DriverStopped || to.Phase == model.DriverClosed) && !r.returned {
		select {
		case r.runErr = <-r.done:
			r.returned = true
		case <-timeout:
			r.fail("the driver did not return")
		}
	}
}

// runOutcome names the driver's return in the model's vocabulary.
func runOutcome(err error) string {
	if err == nil {
		return ""
	}
	name, _ := sessErrorName(err)
	return name
}

func modelRunOutcome(d model.Driver) string {
	if d.Phase == model.DriverClosed {
		return ""
	}
	if v, ok := strings.CutPrefix(d.Err, "Protocol:"); ok {
		return v
	}
	kind, _, _ := strings.Cut(d.Err, ":")
	return kind
}

// forge writes a hostile peer's frame, authenticated with the session key at the next sequence
// number of its stream.
func (r *cancelReplay) forge(a model.CancelAction) {
	r.t.Helper()
	if a.Kind == model.PeerForgedCancel {
		line := r.host.SealAt(r.hostSeq+1, r.host.Cancel(a.CancellationID, a.RequestID, model.CancelTool))
		r.toWorker = append(r.toWorker, line)
		return
	}
	var m protocol.Message
	if a.Kind == model.PeerDuplicateResult {
		res, err := protocol.NewToolResult(muxSession, a.RequestID, protocol.TextPayload("out"))
		if err != nil {
			r.fail("%v", err)
		}
		m = protocol.ResultMessage{Result: res}
	} else {
		req, err := protocol.NewWorkerCancellationRequest(muxSession, a.CancellationID, a.RequestID, model.CancelTool)
		if err != nil {
			r.fail("%v", err)
		}
		res, err := protocol.NewWorkerCancellationResult(req, protocol.OutcomeAcknowledged)
		if err != nil {
			r.fail("%v", err)
		}
		m = protocol.CancellationResultMessage{Result: res}
	}
	// A fresh worker authenticator, advanced to the driver's next sequence number.
	wa, err := r.host.WorkerAuthenticator(canonjson.Preserve)
	if err != nil {
		r.fail("%v", err)
	}
	for {
		f, line, err := wa.Seal(m)
		if err != nil {
			r.fail("%v", err)
		}
		if f.Sequence == r.workerSeq+1 {
			r.toHost = append(r.toHost, line)
			r.forged[string(line)] = true
			return
		}
		if f.Sequence > r.workerSeq+1 {
			r.fail("cannot seal at sequence %d", r.workerSeq+1)
		}
	}
}

// frameOf describes a worker line in the model's vocabulary.
func (r *cancelReplay) frameOf(line []byte) model.CancelFrame {
	f, err := protocol.DecodeFrame(line, canonjson.Preserve)
	if err != nil {
		r.fail("undecodable worker line: %v", err)
	}
	forged := r.forged[string(line)]
	switch m := f.Message.(type) {
	case protocol.ResultMessage:
		return model.CancelFrame{Kind: model.FrameResult, RequestID: m.Result.RequestID, Forged: forged}
	case protocol.CancellationResultMessage:
		return model.CancelFrame{Kind: model.FrameCancellationResult, RequestID: m.Result.RequestID,
			CancellationID: m.Result.CancellationID, Outcome: m.Result.Outcome.String(), Forged: forged}
	}
	return model.CancelFrame{Kind: string(f.Message.Type())}
}

func (r *cancelReplay) hostOutput(out transport.Output, err error) (string, []string) {
	sent := ""
	if err != nil {
		sent = "refused: " + errName(err)
	}
	if out.Line != nil {
		f, err := protocol.DecodeFrame(out.Line, canonjson.Preserve)
		if err != nil {
			r.fail("undecodable host line: %v", err)
		}
		sent = string(f.Message.Type())
		r.toWorker = append(r.toWorker, out.Line)
		r.hostSeq = f.Sequence
	}
	var events []string
	for _, e := range out.Events {
		events = append(events, eventName(e))
	}
	return sent, events
}

// step applies one action to the implementation and checks its outcome against the model's.
func (r *cancelReplay) step(from, to model.CancelState, a model.CancelAction) {
	r.t.Helper()
	switch a.Actor {
	case model.ActorHost:
		var out transport.Output
		var err error
		switch a.Kind {
		case model.MuxStepStart:
			inv, e := protocol.NewToolInvocation(muxSession, a.RequestID, model.CancelTool, protocol.TextPayload("in"))
			if e != nil {
				r.fail("%v", e)
			}
			out, err = r.c.Start(inv)
		case model.MuxStepCancel:
			out, err = r.c.Cancel(a.CancellationID, a.RequestID, model.CancelTool)
		case model.MuxStepClose:
			out, err = r.c.Close()
		}
		sent, events := r.hostOutput(out, err)
		if sent != a.Sent || !slices.Equal(events, a.Events) {
			r.fail("%v: the host sent %q with events %v", a, sent, events)
		}
	case model.ActorWorker:
		if !r.waiting || len(r.toWorker) == 0 {
			r.fail("%v: the driver is not reading or nothing was sent", a)
		}
		line := r.toWorker[0]
		r.toWorker = r.toWorker[1:]
		if a.Kind == model.FrameTampered {
			f, err := protocol.DecodeFrame(line, canonjson.Preserve)
			if err != nil {
				r.fail("%v", err)
			}
			f.Tag[0] ^= 0x80
			if line, err = protocol.EncodeFrame(f); err != nil {
				r.fail("%v", err)
			}
		}
		r.waiting = false
		r.reader.feed <- line
		r.sync(from.Worker, to.Worker, len(a.Written))
	case model.ActorAdapter:
		r.adapter.cmd <- a.Kind
		r.sync(from.Worker, to.Worker, len(a.Written))
	case model.ActorPeer:
		r.forge(a)
	case model.ActorNet:
		var out transport.Output
		if a.Kind == model.MuxStepEnd {
			if !r.returned {
				r.fail("%v: the driver has not returned", a)
			}
			out = r.c.ReceiveFailed(&jsonline.Error{Kind: jsonline.ErrUnexpectedEndOfStream})
		} else {
			f, err := protocol.DecodeFrame(r.toHost[0], canonjson.Preserve)
			if err != nil {
				r.fail("%v", err)
			}
			r.toHost = r.toHost[1:]
			out = r.c.Receive(f)
		}
		if _, events := r.hostOutput(out, nil); !slices.Equal(events, a.Events) {
			r.fail("%v: the host resolved %v", a, events)
		}
	}
	// The frames in flight to the host, the host's phase and the driver's return.
	var inFlight []model.CancelFrame
	for _, line := range r.toHost {
		inFlight = append(inFlight, r.frameOf(line))
	}
	if !slices.Equal(inFlight, to.ToHost) {
		r.fail("%v: frames to the host %v, model %v", a, inFlight, to.ToHost)
	}
	if p := muxPhases[r.c.Phase()]; p != to.Host.Phase {
		r.fail("%v: host phase %s, model %s", a, p, to.Host.Phase)
	}
	if r.returned {
		if got, want := runOutcome(r.runErr), modelRunOutcome(to.Worker); got != want {
			r.fail("%v: the driver returned %q (%v), model %q", a, got, r.runErr, want)
		}
	}
}

func replayCancellation(t *testing.T, c model.Cancellation, trace []model.CancelAction) {
	r := newCancelReplay(t, c)
	defer r.close()
	r.sync(model.Driver{}, c.Initial().Worker, 0) // the first permit
	walk(t, c.System(), trace, model.CancelAction.Input, func(a model.CancelAction, from, to model.CancelState) { r.step(from, to, a) })
}

// The real coordinator and the real cancellable driver, joined by the replay, follow the model
// along every explored transition of the bound with correct peers, and along one trace for
// every pair of transition kinds of the bound with a hostile peer (every transition under
// SPLASH_SOAK=1).
//
// Spec: CAN-003, CAN-006, CAN-014, CAN-015, CAN-016, CAN-018, CAN-019, TRN-050, TRN-051, TRN-052
// Spec: TRN-053, TRN-059
func TestCancellationReplay(t *testing.T) {
	t.Parallel()
	c := cancellationBound()
	r := explore("cancellation", c.System)
	traces := r.EdgeTraces(0)
	replayEach(t, traces, func(t *testing.T, tr []model.CancelAction) { replayCancellation(t, c, tr) })
	t.Logf("%s: replayed %d traces", r.Summary(), len(traces))
	h := hostileBound()
	hr := explore("cancellation hostile", h.System)
	traces = replayed(hr, cancelLabel, 0)
	replayEach(t, traces, func(t *testing.T, tr []model.CancelAction) { replayCancellation(t, h, tr) })
	t.Logf("%s: replayed %d traces", hr.Summary(), len(traces))
}
