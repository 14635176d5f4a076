package workflow

import (
	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/transport"
)

// ClaimOrdinary claims the next queued external operation of the current step for an ordinary,
// cancellable invocation on a supervised multiplexed worker and retains it as the step's
// suspension (WFL-030). Such an invocation has no durable identity: use Prepare for an effect
// that must survive a crash. It returns false when nothing is queued.
func (e *Engine) ClaimOrdinary() (host.Invocation, bool, error) {
	if err := e.usable(false); err != nil {
		return host.Invocation{}, false, err
	}
	if err := e.stepReady(); err != nil {
		return host.Invocation{}, false, err
	}
	inv, ok := e.rt.ClaimNextExternal()
	if !ok {
		return host.Invocation{}, false, nil
	}
	e.ordinary, e.hasOrd, e.step = inv.ID, true, StepSuspended
	return inv, true, nil
}

// RequestCancellation asks the worker of s to stop the retained ordinary invocation: s's active
// invocation must be the retained one (BindingMismatch, checked before anything changes), then
// the runtime records its cancellation request, then the request is sent (WFL-031). If sending
// fails the operation stays cancellation-requested and indeterminate; it is never made
// dispatchable again.
func (e *Engine) RequestCancellation(s *transport.SupervisedSession, cancellationID string) (host.CancellationRequest, error) {
	if err := e.usable(false); err != nil {
		return host.CancellationRequest{}, err
	}
	id, ok := s.ActiveExternalID()
	if !e.hasOrd || !ok || id != e.ordinary {
		return host.CancellationRequest{}, newError(ErrBindingMismatch, "")
	}
	req, err := e.rt.RequestExternalCancellation(id)
	if err != nil {
		return host.CancellationRequest{}, err
	}
	if err := s.RequestExternalToolCancellation(req, cancellationID); err != nil {
		return req, &Error{Kind: ErrWorker, Err: err}
	}
	return req, nil
}

// WorkerPoll is what polling a supervised worker did to the engine.
type WorkerPoll struct {
	// Kind is the worker event's kind, or 0 for an indeterminate outcome.
	Kind transport.ExternalEventKind
	// Settlement is the runtime's settlement of a completion or an acknowledged cancellation.
	Settlement host.Settlement
	// Indeterminate is set when lifecycle control won: nothing was applied, the step stays
	// suspended and the operation must be reconciled.
	Indeterminate bool
	Cause         transport.IndeterminateCause
}

// PollWorker polls s once and applies what it observed through the engine (WFL-032): a worker
// event goes to ApplyWorkerEvent; an indeterminate outcome changes nothing.
func (e *Engine) PollWorker(s *transport.SupervisedSession) (WorkerPoll, error) {
	if err := e.usable(false); err != nil {
		return WorkerPoll{}, err
	}
	ev, err := s.PollExternalToolEvent()
	if err != nil {
		return WorkerPoll{}, &Error{Kind: ErrWorker, Err: err}
	}
	if ev.Kind == transport.SupervisedIndeterminate {
		return WorkerPoll{Indeterminate: true, Cause: ev.Cause}, nil
	}
	return e.ApplyWorkerEvent(ev.Event)
}

// ApplyWorkerEvent applies one authenticated worker event of the retained ordinary invocation
// (WFL-032): a completion settles its promise and the step becomes idle, so the retained step
// goes on; an acknowledged cancellation is confirmed to the runtime and the step fails (the
// step-failure path: no further operation runs in it); too_late, unsupported and pending change
// nothing. A terminal event for another operation is BindingMismatch.
func (e *Engine) ApplyWorkerEvent(ev transport.ExternalEvent) (WorkerPoll, error) {
	if err := e.usable(false); err != nil {
		return WorkerPoll{}, err
	}
	if ev.Terminal() && (!e.hasOrd || ev.ID != e.ordinary) {
		return WorkerPoll{}, newError(ErrBindingMismatch, "")
	}
	p, err := transport.ApplyToRuntime(ev, e.rt)
	if err != nil {
		return WorkerPoll{}, err
	}
	switch ev.Kind {
	case transport.ExternalCompleted:
		e.hasOrd, e.step = false, StepIdle
	case transport.ExternalCancelled:
		e.hasOrd, e.step = false, StepFailed
	}
	return WorkerPoll{Kind: p.Kind, Settlement: p.Settlement}, nil
}
