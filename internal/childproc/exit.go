package childproc

import "os"

// Exit is how a child process ended.
type Exit struct {
	Exited       bool   // it exited by itself, with status Code
	Code         int    // the exit status; -1 when it did not exit by itself
	Signaled     bool   // a signal ended it
	Signal       string // the signal's name, when Signaled
	SignalNumber int    // the signal's number, when Signaled
}

// ShellStatus is the status a shell reports for the child: the exit status, or 128 plus the
// signal's number when a signal ended it.
func (e Exit) ShellStatus() int {
	if e.Signaled {
		return 128 + e.SignalNumber
	}
	return e.Code
}

// Classify reports how the process of state ended. A nil state (never waited for) is an Exit
// with Code -1 and neither flag.
func Classify(state *os.ProcessState) Exit {
	if state == nil {
		return Exit{Code: -1}
	}
	e := Exit{Code: -1}
	if name, number, ok := signalOf(state); ok {
		e.Signaled, e.Signal, e.SignalNumber = true, name, number
		return e
	}
	if state.Exited() {
		e.Exited, e.Code = true, state.ExitCode()
	}
	return e
}
