package conformance

// Level is the conformance level of a check.
type Level string

// The check levels. A MUST check that does not pass fails the run; a SHOULD check does so only
// under --strict, and otherwise reports a deviation as INFO.
const (
	Must   Level = "MUST"
	Should Level = "SHOULD"
)

// Outcome is the verdict of one check.
type Outcome string

// The outcomes of a check.
const (
	// Pass: the worker behaved as the cited requirements demand.
	Pass Outcome = "PASS"
	// Fail: the worker behaved differently; the result says what was expected and what
	// happened.
	Fail Outcome = "FAIL"
	// Crash: the worker died of a signal the runner did not send, or printed a runtime panic.
	Crash Outcome = "CRASH"
	// Timeout: the check's time limit passed while the runner waited for the worker.
	Timeout Outcome = "TIMEOUT"
	// Skip: the worker command does not offer what the check needs.
	Skip Outcome = "SKIP"
	// Info: an observation that does not count, such as a SHOULD deviation without --strict.
	Info Outcome = "INFO"
)

// Failed reports whether the outcome counts as a failure when the check is counted.
func (o Outcome) Failed() bool { return o == Fail || o == Crash || o == Timeout }

// Need is a capability a check requires from the implementation under test: in the worker
// suite, what the worker command offers (conformance/worker lists them); in the host and interop
// suites, a feature the peer declares.
type Need string
