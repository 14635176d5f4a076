package transport

import (
	"context"
	"errors"
	"time"

	"github.com/splashv5/conform/impl/host"
)

// SupervisedSession couples a Multiplexed transport to the Supervisor of the same worker
// session (TRN-080 to TRN-088). It runs one external-tool invocation at a time: it arms the
// supervisor's deadline before it writes invoke, and before it exposes a terminal worker event
// it disarms the deadline and asks the supervisor who won. When the deadline or some other
// lifecycle control won, the session is poisoned and the invocation is reported
// indeterminate, never cancelled: the runtime's operation is left pending for reconciliation.
//
// A SupervisedSession is used by one goroutine at a time.
type SupervisedSession struct {
	transport  *Multiplexed
	supervisor Supervisor
	deadline   time.Duration
	active     *ExternalBinding
	token      SupervisionToken
	poisoned   bool
}

// NewSupervisedSession returns a session over t supervised by s, arming deadline for every
// invocation. Checks, in order: s names t's session (ErrSessionMismatch, Expected is the
// transport's session); deadline is positive (ErrInvalidDeadline).
func NewSupervisedSession(t *Multiplexed, s Supervisor, deadline time.Duration) (*SupervisedSession, error) {
	if t.SessionID() != s.SessionID() {
		return nil, &Error{Kind: ErrSessionMismatch, Expected: t.SessionID(), Actual: s.SessionID()}
	}
	if deadline <= 0 {
		return nil, &Error{Kind: ErrInvalidDeadline}
	}
	return &SupervisedSession{transport: t, supervisor: s, deadline: deadline}, nil
}

// SessionID returns the session id.
func (s *SupervisedSession) SessionID() string { return s.transport.SessionID() }

// Poisoned reports whether the session refuses every further call.
func (s *SupervisedSession) Poisoned() bool { return s.poisoned }

// HasActiveInvocation reports whether an invocation is active.
func (s *SupervisedSession) HasActiveInvocation() bool { return s.active != nil }

// ActiveExternalID returns the runtime operation id of the active invocation.
func (s *SupervisedSession) ActiveExternalID() (host.OperationID, bool) {
	if s.active == nil {
		return 0, false
	}
	return s.active.ExternalID(), true
}

// StartExternalTool arms supervision and starts the claimed external invocation inv under
// requestID (TRN-082). The armed deadline is the session's, shortened to the invocation's
// remaining deferred deadline when that is shorter (TRN-111). Checks, in order: ErrPoisoned;
// ErrBusy while an invocation is active; the binding is prepared (a failure is ErrBridge and
// does not poison); an invocation whose deadline already elapsed is ErrBridge wrapping the
// runtime's ErrDeadlineElapsed and does not poison; the deadline is armed
// (a failure poisons, terminates the worker and is ErrSupervisor); the invoke is started. Any
// start failure, a host-side authorization refusal included, poisons the session and is
// resolved by failTransport.
func (s *SupervisedSession) StartExternalTool(inv host.Invocation, requestID string) error {
	if s.poisoned {
		return &Error{Kind: ErrPoisoned}
	}
	if s.active != nil {
		return &Error{Kind: ErrBusy}
	}
	p, err := prepareBinding(s.transport.SessionID(), inv, requestID)
	if err != nil {
		return &Error{Kind: ErrBridge, Err: err}
	}
	d := invocationDeadline(s.deadline, inv)
	if d <= 0 {
		return &Error{Kind: ErrBridge, Err: &host.ExternalError{Kind: host.ErrDeadlineElapsed, ID: inv.ID}}
	}
	token, err := s.supervisor.BeginInvocation(d)
	if err != nil {
		s.poisoned = true
		return s.supervisorFailed(err)
	}
	b, err := p.dispatch(s.transport)
	if err != nil {
		return s.failTransport(p.id, token, err)
	}
	s.active, s.token = b, token
	return nil
}

// RequestExternalToolCancellation sends the runtime's cancellation request req for the active
// invocation (TRN-083). Errors: ErrPoisoned; ErrNoActiveInvocation; when the invocation was
// started without an identity slot free for its cancellation, the worker is contained instead
// (TRN-112): the session is poisoned, the worker stopped, and the error is ErrIndeterminate
// with CauseContained, so the runtime's operation stays pending for reconciliation; a transport
// failure poisons and is resolved by failTransport; any other binding refusal is ErrBridge
// without poisoning.
func (s *SupervisedSession) RequestExternalToolCancellation(req host.CancellationRequest, cancellationID string) error {
	if s.poisoned {
		return &Error{Kind: ErrPoisoned}
	}
	if s.active == nil {
		return &Error{Kind: ErrNoActiveInvocation}
	}
	err := s.active.RequestCancellation(req, cancellationID)
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrCancelSlotUnavailable) {
		return s.contain(err)
	}
	if e, ok := err.(*Error); ok && e.Kind == ErrTransport {
		b := s.take()
		return s.failTransport(b.ExternalID(), s.token, e.Err)
	}
	return &Error{Kind: ErrBridge, Err: err}
}

// SupervisedEventKind says whether a supervised event comes from the worker or from lifecycle
// control.
type SupervisedEventKind uint8

// The supervised event kinds.
const (
	// SupervisedWorker: an authenticated worker event; for a terminal one the deadline was
	// disarmed first.
	SupervisedWorker SupervisedEventKind = iota + 1
	// SupervisedIndeterminate: lifecycle control won the race; nothing was applied anywhere
	// and the runtime's operation must stay pending for reconciliation.
	SupervisedIndeterminate
)

// SupervisedEvent is one observation of a SupervisedSession. Event is set for SupervisedWorker;
// ExternalID, Cause and Termination for SupervisedIndeterminate.
type SupervisedEvent struct {
	Kind        SupervisedEventKind
	Event       ExternalEvent
	ExternalID  host.OperationID
	Cause       IndeterminateCause
	Termination Termination
}

// PollExternalToolEvent returns at most one observation of the active invocation without
// blocking (TRN-084). A non-terminal worker observation is returned as is. A terminal one
// first finishes supervision: when supervision completed, the worker event is returned; when
// a deadline or termination won, the session is poisoned and the event is
// SupervisedIndeterminate; when the supervisor fails, the session is poisoned, the worker
// terminated and the error is ErrSupervisor. A transport failure is resolved by failTransport.
// Errors before that: ErrPoisoned, ErrNoActiveInvocation.
func (s *SupervisedSession) PollExternalToolEvent() (SupervisedEvent, error) {
	if s.poisoned {
		return SupervisedEvent{}, &Error{Kind: ErrPoisoned}
	}
	if s.active == nil {
		return SupervisedEvent{}, &Error{Kind: ErrNoActiveInvocation}
	}
	o, err := s.active.observe()
	if err != nil {
		b := s.take()
		return SupervisedEvent{}, s.failTransport(b.ExternalID(), s.token, err)
	}
	if o.kind != 0 {
		ev, err := s.active.event(o)
		if err != nil {
			return SupervisedEvent{}, &Error{Kind: ErrBridge, Err: err}
		}
		return SupervisedEvent{Kind: SupervisedWorker, Event: ev}, nil
	}
	b := s.take()
	fin, err := s.supervisor.FinishInvocation(s.token)
	if err != nil {
		s.poisoned = true
		return SupervisedEvent{}, s.supervisorFailed(err)
	}
	if cause, lost := lostTo(fin.Verdict); lost {
		s.poisoned = true
		return SupervisedEvent{Kind: SupervisedIndeterminate, ExternalID: b.ExternalID(), Cause: cause,
			Termination: fin.Termination}, nil
	}
	ev, err := b.event(o)
	if err != nil {
		return SupervisedEvent{}, &Error{Kind: ErrBridge, Err: err}
	}
	return SupervisedEvent{Kind: SupervisedWorker, Event: ev}, nil
}

// WaitExternalToolEvent blocks until PollExternalToolEvent has something other than a pending
// worker event, or ctx ends. A worker killed at its deadline ends its stream, so the wait
// ends then too.
func (s *SupervisedSession) WaitExternalToolEvent(ctx context.Context) (SupervisedEvent, error) {
	for {
		ev, err := s.PollExternalToolEvent()
		if err != nil || ev.Kind != SupervisedWorker || ev.Event.Kind != ExternalPending {
			return ev, err
		}
		if err := s.active.Wait(ctx); err != nil {
			return SupervisedEvent{}, err
		}
	}
}

// Wait blocks until the active invocation or its pending cancellation has resolved, so that the
// next poll has something to report, or until ctx ends. Without an active invocation it
// returns at once.
func (s *SupervisedSession) Wait(ctx context.Context) error {
	if s.poisoned || s.active == nil {
		return nil
	}
	return s.active.Wait(ctx)
}

// SupervisedPoll is a supervised event after it was applied to a runtime.
type SupervisedPoll struct {
	Kind        SupervisedEventKind
	Poll        ExternalPoll
	ExternalID  host.OperationID
	Cause       IndeterminateCause
	Termination Termination
}

// PollExternalTool is PollExternalToolEvent followed, for a worker event, by ApplyToRuntime
// (whose refusal is ErrBridge). An indeterminate observation leaves rt untouched, so the
// operation stays pending and is never confirmed as cancelled (TRN-085).
func (s *SupervisedSession) PollExternalTool(rt *host.Runtime) (SupervisedPoll, error) {
	ev, err := s.PollExternalToolEvent()
	if err != nil {
		return SupervisedPoll{}, err
	}
	if ev.Kind == SupervisedIndeterminate {
		return SupervisedPoll{Kind: ev.Kind, ExternalID: ev.ExternalID, Cause: ev.Cause, Termination: ev.Termination}, nil
	}
	p, err := ApplyToRuntime(ev.Event, rt)
	if err != nil {
		return SupervisedPoll{}, &Error{Kind: ErrBridge, Err: err}
	}
	return SupervisedPoll{Kind: ev.Kind, Poll: p}, nil
}

// Close closes an idle, healthy session and returns the supervisor, so the host can reap the
// worker (TRN-086). Errors: ErrBusy while active; ErrPoisoned; a failed transport close
// terminates the worker and is ErrTransport. Once Close was called, every call fails with
// ErrPoisoned.
func (s *SupervisedSession) Close() (Supervisor, error) {
	if s.active != nil {
		return nil, &Error{Kind: ErrBusy}
	}
	if s.poisoned {
		return nil, &Error{Kind: ErrPoisoned}
	}
	s.poisoned = true
	if err := s.transport.Close(); err != nil {
		e := &Error{Kind: ErrTransport, Err: err}
		s.terminate(e)
		return nil, e
	}
	return s.supervisor, nil
}

// take removes the active binding.
func (s *SupervisedSession) take() *ExternalBinding {
	b := s.active
	s.active = nil
	return b
}

// failTransport resolves a transport failure of the invocation of id (TRN-087): it poisons the
// session, then lets the supervisor decide. Supervision completed normally: the worker is
// terminated and the error is ErrTransport. A deadline or termination won: ErrIndeterminate.
// The supervisor failed: the worker is terminated and the error is ErrSupervisor.
func (s *SupervisedSession) failTransport(id host.OperationID, token SupervisionToken, cause error) error {
	s.poisoned = true
	fin, err := s.supervisor.FinishInvocation(token)
	if err != nil {
		return s.supervisorFailed(err)
	}
	if c, lost := lostTo(fin.Verdict); lost {
		t := fin.Termination
		return &Error{Kind: ErrIndeterminate, Err: cause, ExternalID: id, Cause: c, Termination: &t}
	}
	e := &Error{Kind: ErrTransport, Err: cause}
	s.terminate(e)
	return e
}

// contain stops the worker of the active invocation, whose cancellation cannot be carried, and
// reports the invocation indeterminate (TRN-112).
func (s *SupervisedSession) contain(cause error) error {
	b := s.take()
	s.poisoned = true
	if _, err := s.supervisor.FinishInvocation(s.token); err != nil {
		return s.supervisorFailed(err)
	}
	e := &Error{Kind: ErrIndeterminate, Err: cause, ExternalID: b.ExternalID(), Cause: CauseContained}
	s.terminate(e)
	return e
}

// supervisorFailed terminates the worker and returns ErrSupervisor.
func (s *SupervisedSession) supervisorFailed(cause error) error {
	e := &Error{Kind: ErrSupervisor, Err: cause}
	s.terminate(e)
	return e
}

// terminate stops the worker and records the outcome in e.
func (s *SupervisedSession) terminate(e *Error) { terminateInto(s.supervisor, e) }

// lostTo maps a verdict other than FinishCompleted to its indeterminate cause. A verdict
// outside the four defined ones counts as a termination: it is not proof that supervision
// completed.
func lostTo(v FinishVerdict) (IndeterminateCause, bool) {
	switch v {
	case FinishCompleted:
		return 0, false
	case FinishDeadlineElapsed:
		return CauseDeadlineElapsed, true
	case FinishSessionDeadlineElapsed:
		return CauseSessionDeadlineElapsed, true
	}
	return CauseWorkerTerminated, true
}
