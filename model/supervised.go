package model

import (
	"fmt"
	"slices"
	"strings"
)

// This file models the supervised multiplexed session (chapter 22, TRN-080 to TRN-088): a
// host runtime's claimed external operations are started one at a time on a multiplexed
// transport (the Multiplex model) under a supervisor whose invocation deadline may elapse at
// any moment and kill the worker, while the worker answers with results and cancellation
// dispositions. The session's poll decides, through the supervisor, whether a terminal worker
// event or the lifecycle stop won; the loser must leave no trace.

// Supervised poll outcomes (SupAction.Outcome for a poll).
const (
	SupPending       = "pending"       // nothing new
	SupTooLate       = "too_late"      // a non-terminal disposition
	SupUnsupported   = "unsupported"   // a non-terminal disposition
	SupCompleted     = "completed"     // the result was applied: the operation completed
	SupCancelled     = "cancelled"     // the acknowledgement was applied: cancellation confirmed
	SupIndeterminate = "indeterminate" // lifecycle control won; the operation stays pending
	SupTransport     = "transport"     // the transport failed under supervision; the worker is terminated
)

// Kinds of SupAction.
const (
	SupStart    = "start"    // the host starts the next claimed operation
	SupCancel   = "cancel"   // the host requests the operation's cancellation and sends it
	SupWorker   = "worker"   // the worker sends Frame (result, acknowledged, unsupported, too_late)
	SupDeadline = "deadline" // the invocation deadline elapses: the supervisor kills the worker
	SupPoll     = "poll"     // the host polls the session and applies a worker event to the runtime
)

// SupTampered is the worker frame whose tag does not verify.
const SupTampered = "tampered"

// SupAction is one transition of the supervised session. Outcome is the prediction of a poll.
type SupAction struct {
	Kind    string
	Frame   string
	Outcome string
	// Events are the transport's resolutions caused by a worker frame or the worker's death.
	Events []string
}

// Input is the action without its prediction.
func (a SupAction) Input() string { return a.Kind + " " + a.Frame }

// String renders the action.
func (a SupAction) String() string {
	s := a.Kind
	if a.Frame != "" {
		s += " " + a.Frame
	}
	if a.Outcome != "" {
		s += " => " + a.Outcome
	}
	if len(a.Events) > 0 {
		s += " [" + strings.Join(a.Events, ", ") + "]"
	}
	return s
}

// SupState is one state of the supervised session.
type SupState struct {
	Mux *Multiplex
	// Session.
	Poisoned, Active bool
	// Supervisor: Armed while an invocation deadline runs; Fired once it elapsed for the
	// current invocation (the worker is then dead).
	Armed, Fired bool
	// Binding: what the transport resolved and the session has not observed yet.
	InvResolved    string // "", "completed", "cancelled" or "error"
	CancelPending  bool   // the binding holds a cancellation awaiting its disposition
	CancelResolved string // "", an outcome, or "error"
	// Worker: what it received and sent for the current invocation; Disposition is the
	// outcome it sent, or "".
	GotCancel, SentResult, Dead bool
	Disposition                 string
	// Broken: the worker sent a frame whose tag does not verify, which stops the transport
	// before any deadline (at most once per session).
	Broken bool
	// Runtime: the state of each started operation ("claimed", "cancellation_requested",
	// "completed", "cancelled").
	Ops []string
}

// Supervised configures the model: at most Invocations operations.
type Supervised struct{ Invocations int }

// SupTool is the tool of the supervised model.
const SupTool = "work.run"

// Initial returns the initial state.
func (c Supervised) Initial() SupState { return SupState{Mux: NewMultiplex(SupTool, c.Invocations)} }

// Key is the canonical encoding of a state.
func (c Supervised) Key(s SupState) string {
	return fmt.Sprintf("%s|%t%t%t%t|%s|%t|%s|%t%t%t%t|%s|%v", s.Mux.Key(), s.Poisoned, s.Active, s.Armed, s.Fired,
		s.InvResolved, s.CancelPending, s.CancelResolved, s.GotCancel, s.SentResult, s.Dead, s.Broken, s.Disposition, s.Ops)
}

// Describe renders a state for a counterexample.
func (c Supervised) Describe(s SupState) string {
	return fmt.Sprintf("transport %s | session poisoned=%t active=%t | supervisor armed=%t fired=%t | binding inv=%q cancel=%t/%q | worker cancel=%t result=%t disposition=%q dead=%t | runtime %v",
		s.Mux.Phase, s.Poisoned, s.Active, s.Armed, s.Fired, s.InvResolved, s.CancelPending, s.CancelResolved,
		s.GotCancel, s.SentResult, s.Disposition, s.Dead, s.Ops)
}

func (s SupState) clone() SupState {
	s.Mux = s.Mux.Clone()
	s.Ops = slices.Clone(s.Ops)
	return s
}

func (s SupState) requestID() string { return fmt.Sprintf("r%d", len(s.Ops)) }

// absorb records the transport's resolutions in the binding.
func (s *SupState) absorb(events []string) {
	for _, e := range events {
		target, rest, _ := strings.Cut(e, ":")
		kind, _, _ := strings.Cut(rest, ":")
		switch target {
		case "invocation":
			if s.Active && s.InvResolved == "" {
				s.InvResolved = kind
			}
		case "cancellation":
			if s.CancelPending && s.CancelResolved == "" {
				s.CancelResolved = kind
			}
		}
	}
}

// Next returns every transition enabled in s.
func (c Supervised) Next(s SupState) []Move[SupState, SupAction] {
	var out []Move[SupState, SupAction]
	emit := func(n SupState, a SupAction) { out = append(out, Move[SupState, SupAction]{Action: a, Next: n}) }
	if !s.Poisoned && !s.Active && len(s.Ops) < c.Invocations && s.Mux.Phase == MuxIdle {
		n := s.clone()
		n.Ops = append(n.Ops, "claimed")
		n.Mux.Step(MuxStep{Kind: MuxStepStart, RequestID: n.requestID()})
		n.Active, n.Armed, n.Fired = true, true, false
		n.InvResolved, n.CancelPending, n.CancelResolved = "", false, ""
		n.GotCancel, n.SentResult, n.Disposition = false, false, ""
		emit(n, SupAction{Kind: SupStart})
	}
	last := len(s.Ops) - 1
	if s.Active && !s.Poisoned && s.Mux.Phase == MuxActive && s.Ops[last] == "claimed" && !s.Mux.Requested(s.requestID()) {
		n := s.clone()
		n.Ops[last] = "cancellation_requested"
		n.Mux.Step(MuxStep{Kind: MuxStepCancel, RequestID: n.requestID(), CancellationID: "c" + n.requestID()})
		n.CancelPending, n.GotCancel = true, true
		emit(n, SupAction{Kind: SupCancel})
	}
	if s.Active && !s.Dead {
		send := func(frame string, step MuxStep) {
			n := s.clone()
			o := n.Mux.Step(step)
			n.absorb(o.Events)
			if frame == FrameResult {
				n.SentResult = true
			} else {
				n.Disposition = frame
			}
			emit(n, SupAction{Kind: SupWorker, Frame: frame, Events: o.Events})
		}
		id := s.requestID()
		disposition := func(outcome string) MuxStep {
			return MuxStep{Kind: MuxStepCancellationResult, RequestID: id, CancellationID: "c" + id, Tool: SupTool, Outcome: outcome}
		}
		if !s.SentResult && s.Disposition != MuxAcknowledged {
			send(FrameResult, MuxStep{Kind: MuxStepResult, RequestID: id})
		}
		if !s.Broken {
			// The transport fails before the deadline: the session must terminate the
			// worker and poison (TRN-087).
			n := s.clone()
			o := n.Mux.Step(MuxStep{Kind: MuxStepTampered})
			n.absorb(o.Events)
			n.Broken = true
			emit(n, SupAction{Kind: SupWorker, Frame: SupTampered, Events: o.Events})
		}
		if s.GotCancel && s.Disposition == "" {
			if s.SentResult {
				send(MuxTooLate, disposition(MuxTooLate))
			} else {
				send(MuxAcknowledged, disposition(MuxAcknowledged))
				send(MuxUnsupported, disposition(MuxUnsupported))
			}
		}
	}
	if s.Armed && !s.Fired {
		n := s.clone()
		n.Fired, n.Dead = true, true
		o := n.Mux.Step(MuxStep{Kind: MuxStepEnd}) // the killed worker's stream ends
		n.absorb(o.Events)
		emit(n, SupAction{Kind: SupDeadline, Events: o.Events})
	}
	if s.Active && !s.Poisoned {
		n, outcome := c.poll(s.clone())
		if outcome != SupPending {
			emit(n, SupAction{Kind: SupPoll, Outcome: outcome})
		}
	}
	return out
}

// finish is the supervisor's verdict: it disarms the deadline and reports whether the
// lifecycle stop won.
func (s *SupState) finish() (lost bool) {
	s.Armed = false
	return s.Fired
}

// poll is PollExternalTool on s (TRN-084, TRN-085, TRN-087): the invocation is observed
// before the cancellation; a terminal observation first asks the supervisor who won.
func (c Supervised) poll(s SupState) (SupState, string) {
	last := len(s.Ops) - 1
	observed := ""
	switch {
	case s.InvResolved != "":
		observed = s.InvResolved
	case s.CancelPending && s.CancelResolved != "":
		observed = s.CancelResolved
		if observed == MuxAcknowledged {
			observed = "cancelled"
		}
	default:
		return s, SupPending
	}
	// A too_late disposition always follows the worker's result (TRN-053), which the transport
	// buffers and resolves with it; the invocation is observed first, so only an unsupported
	// disposition is ever observed on its own.
	switch observed {
	case MuxUnsupported:
		s.CancelPending, s.CancelResolved = false, ""
		return s, observed
	}
	s.Active, s.CancelPending, s.CancelResolved, s.InvResolved = false, false, "", ""
	lost := s.finish()
	if observed == "error" {
		s.Poisoned = true
		if lost {
			return s, SupIndeterminate
		}
		s.Dead = true // the session terminates the worker
		return s, SupTransport
	}
	if lost {
		s.Poisoned = true
		return s, SupIndeterminate
	}
	s.Ops[last] = observed // "completed" or "cancelled": applied to the runtime
	return s, observed
}

// System returns the explorable system with its invariants.
func (c Supervised) System() System[SupState, SupAction] {
	return System[SupState, SupAction]{
		Name: fmt.Sprintf("supervised(invocations=%d)", c.Invocations),
		Init: []SupState{c.Initial()}, Next: c.Next, Key: c.Key, Describe: c.Describe,
		Invariants: SupervisedInvariants(),
	}
}

// SupervisedInvariants are the safety properties of the supervised session.
func SupervisedInvariants() []Invariant[SupState, SupAction] {
	settled := func(op string) bool { return op == "completed" || op == "cancelled" }
	return []Invariant[SupState, SupAction]{
		{
			Name: "a lifecycle stop and a terminal event never both win", Spec: "TRN-084, TRN-085, TRN-088",
			Step: func(from SupState, a SupAction, to SupState) bool {
				if a.Kind != SupPoll || len(to.Ops) == 0 {
					return true
				}
				applied := !settled(from.Ops[len(from.Ops)-1]) && settled(to.Ops[len(to.Ops)-1])
				return !(applied && from.Fired)
			},
		},
		{
			Name: "an indeterminate outcome leaves the operation pending and poisons", Spec: "TRN-085, TRN-087",
			Step: func(from SupState, a SupAction, to SupState) bool {
				if a.Outcome != SupIndeterminate {
					return true
				}
				return slices.Equal(from.Ops, to.Ops) && to.Poisoned
			},
		},
		{
			Name: "every started invocation is observed to its end", Spec: "TRN-084, TRN-087",
			Final: func(s SupState) bool { return !s.Active && !s.Armed },
		},
		{
			Name: "a transport failure poisons the session and ends the worker", Spec: "TRN-087",
			Step: func(_ SupState, a SupAction, to SupState) bool {
				return a.Outcome != SupTransport || to.Poisoned && to.Dead && !to.Active
			},
		},
		{
			Name: "a poisoned session stays poisoned and idle", Spec: "TRN-082, TRN-087",
			Step: func(from SupState, _ SupAction, to SupState) bool {
				return !from.Poisoned || to.Poisoned && !to.Active
			},
		},
		{
			Name: "an operation is settled only by the worker's own answer", Spec: "TRN-062, TRN-074, TRN-085",
			State: func(s SupState) bool {
				for i, op := range s.Ops {
					if op == "cancelled" && i == len(s.Ops)-1 && !s.GotCancel {
						return false
					}
				}
				return true
			},
		},
	}
}
