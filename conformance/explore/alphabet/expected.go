package alphabet

import (
	"fmt"

	"github.com/splashv5/conform/conformance/explore/mealy"
	"github.com/splashv5/conform/impl/protocol"
)

// phase is where a simulated worker process is.
type phase uint8

const (
	fresh  phase = iota // bootstrap read, no frame yet
	opened              // the session opened
	ended               // the process exited
)

// simState is the abstract state of a worker process that decides its answers to the
// simulated symbols. It is comparable, so that reachable states can be enumerated.
type simState struct {
	phase phase
	// rules is the state of impl/protocol's worker rule table (kind, Active, Target).
	rules protocol.WorkerState
	// used says that a request id was reserved, so a reused id is a duplicate (AUZ-005).
	used bool
	// cancelSpent says that a cancellation was authorized for the invocation the session
	// could still cancel (CAN-012).
	cancelSpent bool
}

// exit is the output of a step that ends the process with status e.
func exit(e Exit) Output { return Output{Exit: e} }

// step is the pure simulation of one symbol; it relies on impl/protocol's worker rule table
// for which message kinds a session's kind and state handle, and on chapters 11, 13, 14 and 15
// for what a handled message answers.
func step(s simState, n Name) (simState, Output) {
	sym, _ := Lookup(n)
	if s.phase == ended {
		return s, Output{Exit: Gone}
	}
	end := func(e Exit) (simState, Output) { return simState{phase: ended}, exit(e) }
	// A frame that does not authenticate ends the process in the transport class
	// (WRK-011, WRK-021, WRK-092), before or after the opening.
	switch n {
	case InvokeBadTag, InvokeWrongSeq, InvokeForged:
		return end(ExitTransport)
	case EndOfInput:
		// End of input is clean at a frame boundary after the opening while nothing runs;
		// before the opening or while an invocation is active it is a transport failure.
		if s.phase == opened && !s.rules.Active {
			return end(ExitClean)
		}
		return end(ExitTransport)
	}
	if s.phase == fresh {
		switch n {
		case OpenBaseline, OpenAgain:
			return simState{phase: opened, rules: protocol.WorkerState{Kind: protocol.BaselineSession}}, Silent
		case OpenCancellable:
			return simState{phase: opened, rules: protocol.WorkerState{Kind: protocol.CancellableSession}}, Silent
		}
		// An authenticated opening frame that is not open_session (WRK-012).
		return end(ExitRejected)
	}
	if s.rules.Admit(sym.Message) != protocol.Accepted {
		// UnexpectedMessage, CloseWhileInvocationActive or CancellationWithoutTarget: all
		// rejections (WRK-022, CAN-005, CAN-008, CAN-010, CAN-011, CAN-022, CAN-023).
		return end(ExitRejected)
	}
	cancellable := s.rules.Kind == protocol.CancellableSession
	switch n {
	case Invoke, InvokeReusedID:
		if n == InvokeReusedID && s.used {
			return end(ExitRejected) // DuplicateRequest (AUZ-005)
		}
		s.used = true
		if cancellable {
			// The slow tool with a zero wait completes at once: Idle(this invocation) (CAN-014).
			s.rules.Target, s.cancelSpent = true, false
		}
		return s, Output{Answers: string(protocol.TypeResult), Exit: Running}
	case InvokeSlow:
		if !cancellable {
			return end(ExitRejected) // the slow tool is not granted: UnknownTool (AUZ-008)
		}
		s.used = true
		s.rules.Active, s.rules.Target, s.cancelSpent = true, false, false
		return s, Silent
	case InvokeOverLimit:
		return end(ExitRejected) // InputTooLarge (AUZ-008), or AdapterNotCancellable (CAN-004)
	case CancelCurrent, CancelFinished:
		switch {
		case s.rules.Active && n == CancelCurrent && !s.cancelSpent:
			// The slow tool acknowledges at once: Idle(none) (CAN-006, CAN-016, PRF-016).
			s.rules.Active, s.rules.Target, s.cancelSpent = false, false, false
			return s, Output{Answers: string(protocol.TypeCancellationResult) + ":" + protocol.OutcomeAcknowledged.String(), Exit: Running}
		case !s.rules.Active && s.rules.Target && !s.cancelSpent:
			// Idle(X): too_late, and X can never be cancelled again (CAN-007, CAN-012).
			s.cancelSpent = true
			return s, Output{Answers: string(protocol.TypeCancellationResult) + ":" + protocol.OutcomeTooLate.String(), Exit: Running}
		}
		// A cancel naming another invocation than the target, or a second cancellation.
		return end(ExitRejected)
	case CancelUnknown:
		return end(ExitRejected) // the target does not match (AUZ-015)
	case CloseSession:
		return end(ExitClean) // CAN-009, CAN-024
	case CompensateScope:
		return end(ExitRejected) // the journal refuses the scope (JRN-008, WRK-050)
	case ResultFromHost, OpenBaseline, OpenCancellable, OpenAgain:
		// Admit refuses these kinds in every state; kept for completeness.
		return end(ExitRejected)
	}
	panic(fmt.Sprintf("alphabet: symbol %q has no simulation", n)) // Expected checks Simulated first
}

// Expected derives the machine the specification implies for a worker over the given
// symbols: it explores every abstract state a session can reach from a fresh process
// (breadth-first) with the pure simulation above, and returns the minimal machine in
// canonical form. It refuses an alphabet holding a symbol whose behaviour the simulation
// cannot know (Symbol.Simulated false: durable outcomes, which depend on the journal's
// contents, store faults and restarts); their expected behaviour comes from learning the
// reference worker instead.
//
// What the simulation also leaves out, because a learned word never comes near it: the call
// budget of a grant (1,000 calls in the alphabet's manifests), the 1,024 request ids of a
// session (AUZ-006) and the reconciliation budgets (WRK-061).
func Expected(names []Name) (*mealy.Machine[Name, Output], error) {
	if err := Check(names); err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("alphabet: no symbol")
	}
	for _, n := range names {
		if sym, _ := Lookup(n); !sym.Simulated {
			return nil, fmt.Errorf("alphabet: the behaviour of %q is not derived from the worker rules; learn it from the reference worker", n)
		}
	}
	index := map[simState]int{}
	var states []simState
	add := func(s simState) int {
		if k, ok := index[s]; ok {
			return k
		}
		index[s] = len(states)
		states = append(states, s)
		return len(states) - 1
	}
	m := mealy.New[Name, Output](names, 0)
	add(simState{})
	for k := 0; k < len(states); k++ {
		m.AddState()
		for i, n := range names {
			next, out := step(states[k], n)
			m.Set(k, i, add(next), out)
		}
	}
	return mealy.Minimize(m)
}
