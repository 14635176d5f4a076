package transport

import (
	"time"

	"github.com/splashv5/conform/impl/host"
)

// DefaultExchangeDeadline bounds one exchange of an OperationTransport whose host set no
// deadline of its own (RUN-200).
const DefaultExchangeDeadline = 30 * time.Second

// Within runs exchange bounded by deadline d, as every synchronous transport of this package
// does; sup may be nil. A transport outside this package (the in-process one) uses it to keep
// the same deadline rule.
func Within(d time.Duration, sup Supervisor, exchange func() error) error {
	return within(d, sup, exchange)
}

// within runs exchange, which must return once the worker answers or its stream ends, and
// bounds it by deadline d (TRN-110, TRN-111).
//
// With a supervisor, the supervisor's deadline is armed before exchange runs and disarmed
// after it returns: when the deadline elapses, the supervisor stops the worker, which ends the
// blocked exchange, and the verdict turns any outcome into ErrIndeterminate. Without one,
// exchange runs on its own goroutine and within returns ErrIndeterminate at the deadline; that
// goroutine then ends when the worker's stream does, which is the host's to bring about.
//
// A deadline that is not positive is ErrInvalidDeadline and runs nothing.
func within(d time.Duration, sup Supervisor, exchange func() error) error {
	if d <= 0 {
		return &Error{Kind: ErrInvalidDeadline}
	}
	if sup != nil {
		token, err := sup.BeginInvocation(d)
		if err != nil {
			e := &Error{Kind: ErrSupervisor, Err: err}
			terminateInto(sup, e)
			return e
		}
		xerr := exchange()
		fin, err := sup.FinishInvocation(token)
		if err != nil {
			e := &Error{Kind: ErrSupervisor, Err: err}
			terminateInto(sup, e)
			return e
		}
		if cause, lost := lostTo(fin.Verdict); lost {
			t := fin.Termination
			return &Error{Kind: ErrIndeterminate, Err: xerr, Cause: cause, Termination: &t}
		}
		return xerr
	}
	done := make(chan error, 1)
	go func() { done <- exchange() }()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		return &Error{Kind: ErrIndeterminate, Cause: CauseDeadlineElapsed}
	}
}

// terminateInto stops the supervised worker and records how it ended in e.
func terminateInto(sup Supervisor, e *Error) {
	t, err := sup.Terminate()
	if err != nil {
		e.TerminationErr = err
		return
	}
	e.Termination = &t
}

// invocationDeadline is d, shortened to the invocation's remaining deferred deadline when it
// has one (RUN-200). An invocation whose deadline already elapsed gives 0.
func invocationDeadline(d time.Duration, inv host.Invocation) time.Duration {
	if rem, ok := inv.RemainingDeadline(); ok && rem < d {
		return rem
	}
	return d
}

// checkSupervisor rejects a supervisor of another session.
func checkSupervisor(sessionID string, sup Supervisor) error {
	if sup != nil && sup.SessionID() != sessionID {
		return &Error{Kind: ErrSessionMismatch, Expected: sessionID, Actual: sup.SessionID()}
	}
	return nil
}
