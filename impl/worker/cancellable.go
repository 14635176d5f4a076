package worker

import (
	"errors"
	"fmt"
	"io"

	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/protocol"
)

// Driver runs a session restricted to cancellable ordinary invocations (chapter 14): the
// adapter runs on its own goroutine while the frame loop keeps reading, authenticating and
// authorizing cancel frames.
type Driver struct {
	session *Session
	lines   LineReader
	out     *jsonline.Writer
	loop    *driverLoop // the state of Run
}

// NewDriver returns a driver for an open session that reads frame lines from lines and writes
// answer lines to w (CAN-001). It fails with ErrSessionPoisoned for a poisoned session, and,
// for the first grant in manifest order whose adapter is not registered as cancellable or
// declares no invocation safety, with ErrAdapterNotCancellable or
// ErrInvocationSafetyNotDeclared.
func NewDriver(s *Session, lines LineReader, w io.Writer) (*Driver, error) {
	if s.poisoned {
		return nil, &Error{Kind: ErrSessionPoisoned}
	}
	if err := checkCancellable(s); err != nil {
		return nil, err
	}
	return &Driver{session: s, lines: lines, out: jsonline.NewWriter(w)}, nil
}

func checkCancellable(s *Session) error {
	for _, g := range s.Manifest().Grants {
		a, ok := s.registry.Cancellable(g.Tool)
		if !ok {
			return &Error{Kind: ErrAdapterNotCancellable, Tool: g.Tool}
		}
		if a.InvocationSafety() == SafetyUndeclared {
			return &Error{Kind: ErrInvocationSafetyNotDeclared, Tool: g.Tool}
		}
	}
	return nil
}

// AllCancellable reports whether every tool of the session's manifest has a cancellable
// adapter that declares invocation safety, so the cancellable driver can run it (CAN-023).
func AllCancellable(s *Session) bool { return checkCancellable(s) == nil }

// Session returns the driven session.
func (d *Driver) Session() *Session { return d.session }

// running is the one active invocation.
type running struct {
	authorized   authorizer.AuthorizedInvocation
	token        *CancelToken
	cancellation *authorizer.AuthorizedWorkerCancellation
	done         chan struct{} // closed when the adapter has returned
	completion   Completion
	err          error
}

// driverEvent is what the driver's loop waits for: a frame line (or the read error that ends
// the input), or the completion of the running adapter.
type driverEvent struct {
	line     []byte   // a frame line, when frame is true
	readErr  error    // the read error, when frame is true
	frame    bool     // a frame event; otherwise an adapter completion
	finished *running // the completed invocation
}

// driverLoop is the state of one Run.
type driverLoop struct {
	events     chan driverEvent
	permits    chan struct{} // one permit lets the reader read one more line
	stop       chan struct{} // closed when Run returns
	readerDone chan struct{}
	active     *running                         // the running invocation, if any
	last       *authorizer.AuthorizedInvocation // the last completed invocation, for too_late
	closed     bool                             // an accepted close_session ended the session
}

// Run drives the session until the host closes it or a fatal error stops it. It returns nil
// after an accepted close_session (CAN-009), having written nothing for it; the caller then
// closes the writer so the host sees end of file. Any other return is fatal, and, if an
// adapter was running, happens only after the adapter has been cancelled and has returned
// (CAN-019). After a fatal error the reader goroutine may stay blocked in a read until the
// input is closed; it then exits without delivering anything.
//
// One goroutine reads frame lines, one permit at a time; the loop handles each event with
// one method: onFrame (invoke, cancel, close_session) or onCompletion.
func (d *Driver) Run() error {
	d.loop = &driverLoop{
		events:     make(chan driverEvent),
		permits:    make(chan struct{}, 4),
		stop:       make(chan struct{}),
		readerDone: make(chan struct{}),
	}
	go d.read()
	d.permit()
	for {
		ev := <-d.loop.events
		var err error
		if ev.frame {
			err = d.onFrame(ev)
		} else {
			err = d.onCompletion(ev.finished)
		}
		if err != nil {
			return d.fail(err)
		}
		if d.loop.closed {
			close(d.loop.stop)
			<-d.loop.readerDone
			return nil
		}
	}
}

// read delivers frame lines to the loop, one per permit, until a read fails or Run returns.
func (d *Driver) read() {
	l := d.loop
	defer close(l.readerDone)
	for {
		select {
		case <-l.permits:
		case <-l.stop:
			return
		}
		line, err := d.lines.ReadLine()
		ev := driverEvent{frame: true, readErr: err}
		if err == nil {
			ev.line = append([]byte(nil), line...)
		}
		select {
		case l.events <- ev:
		case <-l.stop:
			return
		}
		if err != nil {
			return
		}
	}
}

// permit lets the reader read one more line.
func (d *Driver) permit() { d.loop.permits <- struct{}{} }

// fail ends Run with a fatal error: a running adapter is cancelled and waited for first.
func (d *Driver) fail(err error) error {
	if active := d.loop.active; active != nil {
		active.token.request()
		if d.session.hooks == nil || !d.session.hooks.detachOnFatal() {
			<-active.done
		}
	}
	close(d.loop.stop)
	return err
}

// send seals m and writes it as one line.
func (d *Driver) send(m protocol.Message) error {
	line, err := d.session.seal(m)
	if err != nil {
		return err
	}
	if err := d.out.WriteLine(line); err != nil {
		return &Error{Kind: ErrWrite, Err: err}
	}
	return nil
}

// sendOutcome answers cancellation c with outcome.
func (d *Driver) sendOutcome(c authorizer.AuthorizedWorkerCancellation, outcome protocol.WorkerCancellationOutcome) error {
	res, err := protocol.NewWorkerCancellationResult(c.Request(), outcome)
	if err != nil {
		return &Error{Kind: ErrProtocol, Stage: StageResult, Err: err}
	}
	if err := d.session.authorizer.ValidateCancellationResult(c, res); err != nil {
		return &Error{Kind: ErrProtocol, Stage: StageResult, Err: err}
	}
	return d.send(protocol.CancellationResultMessage{Result: res})
}

// onFrame authenticates one frame line and handles its message.
func (d *Driver) onFrame(ev driverEvent) error {
	active := d.loop.active
	if ev.readErr != nil {
		var we *Error
		if errors.As(ev.readErr, &we) {
			copied := *we
			copied.Active = active != nil
			return &copied
		}
		return &Error{Kind: ErrFrame, Active: active != nil, Err: ev.readErr}
	}
	frame, err := d.session.opener.Open(ev.line)
	if err != nil {
		return &Error{Kind: ErrProtocol, Stage: StageOpen, Err: err}
	}
	state := protocol.WorkerState{Kind: protocol.CancellableSession, Active: active != nil, Target: d.loop.last != nil}
	switch state.Admit(frame.Message.Type()) {
	case protocol.RefusedCloseWhileActive:
		return &Error{Kind: ErrCloseWhileInvocationActive}
	case protocol.RefusedNoCancelTarget:
		return &Error{Kind: ErrCancellationWithoutTarget}
	case protocol.RefusedUnexpected:
		return &Error{Kind: ErrUnexpectedMessage, MessageType: string(frame.Message.Type())}
	}
	switch m := frame.Message.(type) {
	case protocol.InvokeMessage:
		return d.onInvoke(m)
	case protocol.CancelMessage:
		return d.onCancel(m)
	case protocol.CloseSessionMessage:
		d.loop.closed = true
		return nil
	}
	return &Error{Kind: ErrUnexpectedMessage, MessageType: string(frame.Message.Type())}
}

// onInvoke authorizes an invocation and starts its adapter on a goroutine of its own; the
// reader may read on (CAN-004).
func (d *Driver) onInvoke(m protocol.InvokeMessage) error {
	s := d.session
	inv := m.Invocation
	tool := inv.Tool
	adapter, ok := s.registry.Cancellable(tool)
	if !ok {
		return &Error{Kind: ErrAdapterNotCancellable, Tool: tool}
	}
	if adapter.InvocationSafety() == SafetyUndeclared {
		return &Error{Kind: ErrInvocationSafetyNotDeclared, Tool: tool}
	}
	authorized, err := s.authorizer.Authorize(inv)
	if err != nil {
		return &Error{Kind: ErrProtocol, Stage: StageAuthorize, Err: err}
	}
	r := &running{authorized: authorized, token: NewCancelToken(), done: make(chan struct{})}
	d.loop.active = r
	l := d.loop
	go func() {
		r.err = guard(tool, func() (e error) {
			// The invocation as received; the token holds the same one unless the faulty
			// build authorized a stand-in.
			r.completion, e = adapter.InvokeCancellable(inv, authorized.Grant(), r.token)
			return e
		})
		close(r.done)
		select {
		case l.events <- driverEvent{finished: r}:
		case <-l.stop:
		}
	}()
	d.permit()
	return nil
}

// onCancel authorizes a cancellation. Of the running invocation, it requests the cancellation
// token and pauses reading until the adapter returns (CAN-006); of the last completed one, it
// answers too_late at once.
func (d *Driver) onCancel(m protocol.CancelMessage) error {
	s := d.session
	switch active := d.loop.active; {
	case active != nil:
		c, err := s.authorizer.AuthorizeCancellation(m.Request, active.authorized)
		if err != nil {
			return &Error{Kind: ErrProtocol, Stage: StageAuthorize, Err: err}
		}
		// Only now, after the frame authenticated and was authorized.
		if err := d.requestCancellation(active, c); err != nil {
			return err
		}
		active.cancellation = &c
		return nil // no permit: reading pauses until the adapter returns
	case d.loop.last != nil:
		c, err := s.authorizer.AuthorizeCancellation(m.Request, *d.loop.last)
		if err != nil {
			return &Error{Kind: ErrProtocol, Stage: StageAuthorize, Err: err}
		}
		if err := d.sendOutcome(c, protocol.OutcomeTooLate); err != nil {
			return err
		}
		d.permit()
		return nil
	default:
		return &Error{Kind: ErrCancellationWithoutTarget}
	}
}

// requestCancellation requests the cancellation token of r for the authorized cancellation c.
func (d *Driver) requestCancellation(r *running, c authorizer.AuthorizedWorkerCancellation) error {
	if h := d.session.hooks; h != nil {
		if handled, err := h.cancel(d, r, c); handled {
			return err
		}
	}
	r.token.request()
	return nil
}

// onCompletion answers the running invocation once its adapter has returned: an
// acknowledged cancellation, or the result followed by too_late for a cancellation that
// came too late (CAN-010 to CAN-016).
func (d *Driver) onCompletion(r *running) error {
	if r == nil || r != d.loop.active {
		return errors.New("worker: adapter completion without an active invocation")
	}
	<-r.done
	d.loop.active = nil
	tool := r.authorized.Invocation().Tool
	if r.err != nil {
		var we *Error
		if errors.As(r.err, &we) && we.Kind == ErrAdapterPanicked {
			return r.err
		}
		return &Error{Kind: ErrAdapter, Tool: tool, Err: r.err}
	}
	if s := d.session; s.hooks != nil {
		if handled, err := s.hooks.completion(d, r); handled {
			return err
		}
	}
	if r.completion.Acknowledged {
		if r.cancellation == nil || !r.token.Requested() {
			return &Error{Kind: ErrUnrequestedAcknowledgement, Tool: tool}
		}
		if err := d.sendOutcome(*r.cancellation, protocol.OutcomeAcknowledged); err != nil {
			return err
		}
		d.permit()
		d.loop.last = nil
		return nil
	}
	if err := d.sendResult(r); err != nil {
		return err
	}
	if r.cancellation != nil {
		if err := d.sendOutcome(*r.cancellation, protocol.OutcomeTooLate); err != nil {
			return err
		}
		d.permit()
	}
	authorized := r.authorized
	d.loop.last = &authorized
	return nil
}

// sendResult validates the completed invocation's output against its grant and sends it.
func (d *Driver) sendResult(r *running) error {
	inv := r.authorized.Invocation()
	result, err := protocol.NewToolResult(inv.SessionID, inv.RequestID, r.completion.Payload)
	if err != nil {
		return &Error{Kind: ErrProtocol, Stage: StageResult, Err: err}
	}
	if err := d.session.authorizer.ValidateResult(r.authorized, result); err != nil {
		return &Error{Kind: ErrProtocol, Stage: StageResult, Err: err}
	}
	return d.send(protocol.ResultMessage{Result: result})
}

// String describes the driver without key material.
func (d *Driver) String() string {
	return fmt.Sprintf("worker.Driver(session=%s)", d.session.auth.SessionID())
}
