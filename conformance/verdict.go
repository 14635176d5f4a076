package conformance

import (
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// T is the context every suite's check runs in, which each suite's own T embeds and extends
// with its peer: what the check has found so far (its outcome, the expected and actual text of
// a failure, its transcript) and the requirement IDs it proves. End, and the methods built on
// it, stop the check by panicking with a value that Guard recovers, so a check reads as
// straight-line code.
type T struct {
	// Requirements are the requirement IDs the running check lists (Cite keeps only these).
	Requirements []string
	Started      time.Time
	Outcome      Outcome
	Detail       string
	Expected     string
	Actual       string
	Transcript   []string
	// Keep is how many transcript lines to keep; zero keeps MaxTranscript.
	Keep int
	// Deviations are the SHOULD parts of a MUST check that the peer missed; they make a
	// passing check INFO (FAIL under strict, Result.Settle).
	Deviations []string
	// Limit is the check's time limit (the run's, or the check's own when longer), and Deadline
	// when it passes: the run loop sets both as the check starts.
	Limit    time.Duration
	Deadline time.Time
	// LaunchErr, when set, says that the command under test cannot be started at all: it
	// stops the run (RunChecks).
	LaunchErr error
}

// stopCheck is the panic value with which End stops a check; Guard recovers it.
type stopCheck struct{}

// MaxTranscript is how many transcript lines a verdict keeps unless told otherwise; one more
// line says the rest was dropped.
const MaxTranscript = 200

// Logf adds a line to the transcript, stamped with the time since the check started.
func (v *T) Logf(format string, args ...any) {
	keep := v.Keep
	if keep <= 0 {
		keep = MaxTranscript
	}
	switch n := len(v.Transcript); {
	case n < keep:
		elapsed := time.Since(v.Started).Round(100 * time.Microsecond)
		v.Transcript = append(v.Transcript, fmt.Sprintf("%8s ", "+"+elapsed.String())+fmt.Sprintf(format, args...))
	case n == keep:
		v.Transcript = append(v.Transcript, "[transcript truncated]")
	}
}

// RenewDeadline gives the check its whole time limit again from now. A check that takes several
// independent steps (a worker check that restarts the worker, a host check that starts twelve
// workers one after another) holds each step to the limit, so a slow but correct peer passes
// under load while a hung one still fails within one limit of its step.
func (v *T) RenewDeadline() {
	if renewed := time.Now().Add(v.Limit); renewed.After(v.Deadline) {
		v.Deadline = renewed
	}
}

// End records the outcome and stops the check.
func (v *T) End(o Outcome, detail string) {
	v.Outcome, v.Detail = o, detail
	panic(stopCheck{})
}

// Failf fails the check with what was expected and what happened.
func (v *T) Failf(expected, actual string) {
	v.Expected, v.Actual = expected, actual
	v.End(Fail, "expected "+expected+"; got "+actual)
}

// Skipf ends the check with SKIP.
func (v *T) Skipf(format string, args ...any) { v.End(Skip, fmt.Sprintf(format, args...)) }

// Internal ends the check because the runner itself failed (a bug, or the machine).
func (v *T) Internal(err error) { v.End(Fail, "internal runner error: "+err.Error()) }

// Guard runs f, the body of a check. It recovers the stop of End; any other panic is a bug of
// the runner, which fails the check with the stack rather than the whole run.
func (v *T) Guard(f func()) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(stopCheck); !ok {
				v.Outcome = Fail
				v.Detail = fmt.Sprintf("internal runner error: %v\n%s", r, debug.Stack())
			}
		}
	}()
	f()
}

// Cite returns the IDs among ids that the running check lists, as " (ID, ID)", or "" (the
// function Cite).
func (v *T) Cite(ids ...string) string { return Cite(v.Requirements, ids...) }

// Cite returns the IDs among ids that requirements (the running check's list) holds, as
// " (ID, ID)", or "" when it holds none of them. A failure message cites only requirement IDs of
// its check (Result.StrayCitations), because a port that selects checks by a requirement ID runs
// only the checks that list it; a helper shared by checks of different lists cites through Cite,
// so that each check's message names the rules that check proves.
func Cite(requirements []string, ids ...string) string {
	var kept []string
	for _, id := range ids {
		if slices.Contains(requirements, id) {
			kept = append(kept, id)
		}
	}
	if len(kept) == 0 {
		return ""
	}
	return " (" + strings.Join(kept, ", ") + ")"
}
