package transport

import (
	"strconv"
	"time"
)

// Supervisor is the host's lifecycle control over one worker session (TRN-080): it arms a
// deadline for each invocation, decides afterwards whether the deadline or some other
// lifecycle event won the race against the worker's answer, and can stop the worker for good.
// A Supervisor is used by one goroutine at a time.
type Supervisor interface {
	// SessionID returns the session the supervised worker serves.
	SessionID() string
	// BeginInvocation arms a deadline of d (positive) for one invocation and returns the
	// token that FinishInvocation takes.
	BeginInvocation(d time.Duration) (SupervisionToken, error)
	// FinishInvocation disarms the invocation's deadline and reports whether the invocation
	// finished under supervision (FinishCompleted) or lifecycle control won.
	FinishInvocation(t SupervisionToken) (Finish, error)
	// Terminate stops the worker for good, reaps it and reports how it ended.
	Terminate() (Termination, error)
}

// SupervisionToken identifies one armed invocation deadline of a Supervisor.
type SupervisionToken uint64

// FinishVerdict says who won the race between an invocation and its supervision.
type FinishVerdict uint8

// The verdicts of FinishInvocation.
const (
	// FinishCompleted: the deadline was disarmed before it elapsed and the worker still runs.
	FinishCompleted FinishVerdict = iota + 1
	// FinishDeadlineElapsed: the invocation deadline elapsed and the worker was stopped.
	FinishDeadlineElapsed
	// FinishSessionDeadlineElapsed: the session's overall deadline elapsed and the worker was
	// stopped.
	FinishSessionDeadlineElapsed
	// FinishTerminated: the worker ended, or was stopped, for another reason.
	FinishTerminated
)

// String returns the reference variant name.
func (v FinishVerdict) String() string {
	switch v {
	case FinishCompleted:
		return "Completed"
	case FinishDeadlineElapsed:
		return "DeadlineElapsed"
	case FinishSessionDeadlineElapsed:
		return "SessionDeadlineElapsed"
	case FinishTerminated:
		return "Terminated"
	}
	return "FinishVerdict(" + strconv.Itoa(int(v)) + ")"
}

// Finish is the verdict of FinishInvocation; Termination is set for every verdict but
// FinishCompleted.
type Finish struct {
	Verdict     FinishVerdict
	Termination Termination
}

// Termination reports how a supervised worker process ended.
type Termination struct {
	// Forced is true when the supervisor killed the worker.
	Forced bool
	// Exited is true when the process exited by itself with ExitCode.
	Exited   bool
	ExitCode int
	// Signal names the signal that ended the process, when one did.
	Signal string
}

// String describes the termination.
func (t Termination) String() string {
	s := "worker "
	switch {
	case t.Exited:
		s += "exited with status " + strconv.Itoa(t.ExitCode)
	case t.Signal != "":
		s += "ended by signal " + t.Signal
	default:
		s += "ended"
	}
	if t.Forced {
		s += " (stopped by its supervisor)"
	}
	return s
}

// Clock is the time source of a Process supervisor; tests inject a manual clock.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has elapsed, unless the returned timer
	// is stopped first.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending call of Clock.AfterFunc.
type Timer interface {
	// Stop prevents the call and reports whether it did; false means the call already
	// happened or is happening.
	Stop() bool
}

// SystemClock is the Clock of the operating system.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// AfterFunc is time.AfterFunc.
func (SystemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
