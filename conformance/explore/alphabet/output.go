package alphabet

import (
	"strconv"
	"strings"
)

// Exit says whether and how the worker process ended during a step.
type Exit int

// The exit states. Non-negative values are exit statuses (WRK-092 names their classes).
const (
	// Running: the process did not end during the step.
	Running Exit = -1
	// Gone: the process had already ended before the step; nothing was delivered.
	Gone Exit = -2
	// Killed: the process ended without an exit status (a signal).
	Killed Exit = -3
	// Hung: the step's bound ran out while the process neither answered nor ended, where the
	// specification requires one of the two.
	Hung Exit = -4
)

// The exit statuses of WRK-092.
const (
	ExitClean       Exit = 0
	ExitUsage       Exit = 2
	ExitBootstrap   Exit = 3
	ExitTransport   Exit = 4
	ExitRejected    Exit = 5
	ExitAdapter     Exit = 6
	ExitPersistence Exit = 7
	ExitInternal    Exit = 8
	ExitIntegrity   Exit = 9
)

// String renders the exit for labels: "", "gone", "killed", "hung" or "exit N".
func (e Exit) String() string {
	switch e {
	case Running:
		return ""
	case Gone:
		return "gone"
	case Killed:
		return "killed"
	case Hung:
		return "hung"
	}
	return "exit " + strconv.Itoa(int(e))
}

// Output is the abstract output of one step: the answers the worker wrote, abstracted to their
// message kind and, where the specification fixes it, their outcome or status kind, joined by
// "+" in the order written; and how the process ended, if it did.
type Output struct {
	// Answers is "" when the worker wrote nothing, else for example "result" or
	// "result+cancellation_result:too_late". A line that is not a valid frame of this session
	// is "invalid:<error kind>".
	Answers string
	// Exit is Running unless the process ended during the step (or before it: Gone).
	Exit Exit
}

// Silent is the output of a step that produced nothing and left the process running.
var Silent = Output{Exit: Running}

// String renders the output for labels: the answers and the exit, "-" for silence.
func (o Output) String() string {
	var parts []string
	if o.Answers != "" {
		parts = append(parts, o.Answers)
	}
	if o.Exit != Running {
		parts = append(parts, o.Exit.String())
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// Verdict is the level at which two abstract outputs differ.
type Verdict int

// The verdicts, from no difference to a MUST difference.
const (
	// Same: the outputs agree on everything the specification fixes.
	Same Verdict = iota
	// Advice: they differ only in the class of a failure exit (WRK-097, a SHOULD): reported
	// as INFO.
	Advice
	// Violation: they differ in something a MUST fixes: an answer, or clean against failed or
	// running against ended.
	Violation
)

// String returns "same", "SHOULD" or "MUST".
func (v Verdict) String() string {
	switch v {
	case Same:
		return "same"
	case Advice:
		return "SHOULD"
	}
	return "MUST"
}

// failed reports whether e is a failure exit status (non-zero).
func failed(e Exit) bool { return e > 0 }

// Compare judges the observed output of a step against the expected one. Diagnostic text and
// timing never reach an Output, so they are never compared.
func Compare(expected, observed Output) Verdict {
	if expected == observed {
		return Same
	}
	if expected.Answers == observed.Answers && failed(expected.Exit) && failed(observed.Exit) {
		return Advice
	}
	return Violation
}

// Sink declares, for the learner, that a step after which the process is no longer running is
// followed only by Gone steps: a word's answers after its process ended are known without
// running it.
func Sink(o Output) (Output, bool) { return Output{Exit: Gone}, o.Exit != Running }
