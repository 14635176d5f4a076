package protocol

// The rules of this file say which host message a worker accepts in an open session, and which
// tenant scope a compensation may bind. The reference worker (impl/worker) applies them, and the
// host suite's fake worker (conformance/host) judges a host by the same table, so that the fake
// worker is never more lenient than the real one.

// SessionKind is the kind of session a worker runs once the session opened (CAN-023).
type SessionKind uint8

const (
	// BaselineSession is chapter 13's session: one frame at a time, no closed state.
	BaselineSession SessionKind = iota + 1
	// CancellableSession is chapter 14's driver: ordinary invocations that a cancel can stop.
	CancellableSession
)

// String returns "baseline" or "cancellable".
func (k SessionKind) String() string {
	switch k {
	case BaselineSession:
		return "baseline"
	case CancellableSession:
		return "cancellable"
	}
	return "unknown"
}

// WorkerState is the part of an open worker session that decides which host message it
// accepts next.
type WorkerState struct {
	// Kind is the session's kind.
	Kind SessionKind
	// Active says that an invocation runs (a cancellable session's Active state).
	Active bool
	// Target says that the last invocation completed with a result, so a cancel naming it is
	// answered too_late (a cancellable session's Idle(X) state, CAN-007).
	Target bool
}

// Refusal says why a worker rejects a host message; Accepted means it handles it.
type Refusal uint8

const (
	// Accepted: the worker handles the message.
	Accepted Refusal = iota
	// RefusedUnexpected: the message kind is not handled in this kind of session or state
	// (UnexpectedMessage: WRK-022, CAN-011, CAN-022, CAN-023).
	RefusedUnexpected
	// RefusedCloseWhileActive: close_session while an invocation runs
	// (CloseWhileInvocationActive, CAN-010).
	RefusedCloseWhileActive
	// RefusedNoCancelTarget: a cancel with neither a running nor a completed invocation
	// (CancellationWithoutTarget, CAN-008).
	RefusedNoCancelTarget
)

// String names the refusal after the worker error variant that reports it.
func (r Refusal) String() string {
	switch r {
	case Accepted:
		return "accepted"
	case RefusedUnexpected:
		return "UnexpectedMessage"
	case RefusedCloseWhileActive:
		return "CloseWhileInvocationActive"
	case RefusedNoCancelTarget:
		return "CancellationWithoutTarget"
	}
	return "unknown"
}

// workerRules is, per kind of session, the host messages a worker handles and the rule of the
// state it handles them in; every message missing from a kind's row is RefusedUnexpected.
var workerRules = map[SessionKind]map[MessageType]func(WorkerState) Refusal{
	BaselineSession: {
		TypeInvoke:              always,
		TypeDispatchOperation:   always,
		TypeCompensateOperation: always,
		TypeReconcileOperation:  always,
	},
	CancellableSession: {
		TypeInvoke:       idleOr(RefusedUnexpected),
		TypeCloseSession: idleOr(RefusedCloseWhileActive),
		TypeCancel: func(s WorkerState) Refusal {
			if s.Active || s.Target {
				return Accepted
			}
			return RefusedNoCancelTarget
		},
	},
}

func always(WorkerState) Refusal { return Accepted }

// idleOr accepts a message while no invocation runs and refuses it with r otherwise.
func idleOr(r Refusal) func(WorkerState) Refusal {
	return func(s WorkerState) Refusal {
		if s.Active {
			return r
		}
		return Accepted
	}
}

// Admit says whether a worker in state s handles a host message of type t after the session
// opened (open_session is the opening frame only, WRK-012).
func (s WorkerState) Admit(t MessageType) Refusal {
	rule, ok := workerRules[s.Kind][t]
	if !ok {
		return RefusedUnexpected
	}
	return rule(s)
}

// ValidateJournalScope checks the tenant scope a request binds against the worker's journal
// scope (JRN-008): requested must be a token (InvalidToken, field "operation journal scope")
// and equal journalScope (OperationJournalScopeMismatch, expected requested, actual
// journalScope).
func ValidateJournalScope(requested, journalScope string) error {
	if err := ValidateToken(FieldJournalScope, requested); err != nil {
		return err
	}
	if requested != journalScope {
		return &Error{Kind: ErrOperationJournalScopeMismatch, ExpectedText: requested, ActualText: journalScope}
	}
	return nil
}
