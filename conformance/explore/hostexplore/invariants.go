package hostexplore

import (
	"slices"

	"github.com/splashv5/conform/conformance"
)

// Invariant is one rule the explorer judges over a whole run, from what reached the fake
// worker and what the driver answered (EXP-016).
type Invariant struct {
	// Name is the invariant's stable name; its check ID is "EXP-HOST-" and the name in capitals.
	Name string
	// Level is MUST or SHOULD: a MUST violation fails the run, a SHOULD one is INFO.
	Level conformance.Level
	// Requirements are the spec requirement IDs the invariant stands for.
	Requirements []string
	// Title says what must hold.
	Title string
}

// Invariants returns every invariant the host explorer judges, in a fixed order.
func Invariants() []Invariant { return slices.Clone(invariants) }

var invariants = []Invariant{
	{"driver-lines", conformance.Must, []string{"HDR-001", "HDR-002", "HDR-003", "HDR-031"},
		"the driver answers every command with one outcome line, in order, and keeps running until it is killed"},
	{"start", conformance.Must, []string{"HDR-020", "TRN-011"},
		"a start runs the given worker command once, writes a valid bootstrap and open_session and answers ok"},
	{"frame-verifies", conformance.Must, []string{"FRM-005", "FRM-025", "FRM-026"},
		"every host frame verifies under the session's key, in sequence, and is canonical"},
	{"frame-admitted", conformance.Must, []string{"TRN-011", "WRK-022", "CAN-022"},
		"every host frame is one the worker's rule table accepts in its session's kind and state"},
	{"one-durable-exchange", conformance.Must, []string{"HDR-026", "TRN-113"},
		"a session carries at most one durable exchange"},
	{"request-as-given", conformance.Must, []string{"HDR-021", "HDR-026", "HDR-027", "HDR-041", "HDR-042", "HDR-043", "HDR-047"},
		"a request frame is the kind its command sends, with the command's request id and the tool, key and payload as given"},
	{"authorized", conformance.Must, []string{"HDR-021", "HDR-022", "AUZ-007", "AUZ-008", "AUZ-010", "AUZ-011"},
		"an invocation the session's authorizer refuses (a tool not granted, an input over the limit, the call budget spent) is refused with no frame; one it admits is sent"},
	{"dispatch-once", conformance.Must, []string{"RUN-187", "WFL-043", "WFL-044", "HDR-042", "HDR-055"},
		"an operation key is dispatched at most once, and again only after a worker refused its reconciliation"},
	{"refusal-honoured", conformance.Must, []string{"HDR-055", "WFL-043"},
		"after a refused reconciliation, recovering that operation sends its recorded dispatch, not another reconciliation"},
	{"recover-settles", conformance.Must, []string{"HDR-042", "WFL-040", "HDR-040"},
		"a recover on a fresh session sends the recovery of an operation or compensation whose answer the host never reported"},
	{"lost-input", conformance.Must, []string{"HDR-050", "HDR-056"},
		"a recovery whose kept input was lost sends no frame"},
	{"cancel", conformance.Must, []string{"HDR-023", "HDR-028", "HDR-051", "HDR-052", "AUZ-016", "HDR-045"},
		"a cancellable session's cancel and finish report what the worker answered, a cancel refused without a frame leaves the worker running, and close sends close_session and answers once the worker's output ended"},
	{"compensate-once", conformance.Must, []string{"WFL-011", "HDR-044", "WFL-026"},
		"an operation is compensated under one compensation key, resent only while its answer is unknown"},
	{"tenant", conformance.Must, []string{"HDR-043", "JRN-008"},
		"a compensation is bound to the journal scope given in start"},
	{"effect-reported", conformance.Must, []string{"HDR-021", "HDR-026", "HDR-027", "HDR-041", "HDR-042", "HDR-043", "ENC-051"},
		"an answer the worker gave in time, a state tag given as its variant index included, is the command's outcome: its payload or status, and a step's key"},
	{"hostile-refused", conformance.Must, []string{"HDR-022", "HDR-055", "RUN-200", "FRM-025", "FRM-026"},
		"a late, missing, forged, out-of-sequence or broken answer, or a refusal, is an error outcome"},
	{"poisoned-silent", conformance.Must, []string{"TRN-012", "TRN-003", "FRM-036"},
		"the host sends no frame on a session after an exchange on it failed"},
	{"deadline", conformance.Must, []string{"RUN-200", "HDR-021", "HDR-024"},
		"a command whose worker does not answer is answered within the exchange deadline"},
	{"contained", conformance.Must, []string{"RUN-200", "HDR-024", "HDR-053"},
		"the worker's process group is gone once a deadline passed or a new start replaced it"},
	{"portable-numbers", conformance.Should, []string{"ENC-034", "ENC-037", "ENC-039", "FRM-022"},
		"a payload number that the other number model reads differently is refused or never sent as is"},
	{"exit-reported", conformance.Must, []string{"HDR-024"},
		"wait reports the status of a worker that exited by itself, and -1 for one it had to kill"},
	{"keys-derived", conformance.Must, []string{"WFL-001", "WFL-010", "WFL-045", "HDR-049"},
		"a step's operation key and a compensation's key are derived from the plan's steps and the input and nonce the command gave"},
	{"line-bound", conformance.Must, []string{"FRM-003", "FRM-032", "TRN-098"},
		"an answer line that passes 1 MiB, counted in bytes, is refused at the bound, long before the deadline"},
}

// invariant returns the invariant called name.
func invariant(name string) Invariant {
	for _, iv := range invariants {
		if iv.Name == name {
			return iv
		}
	}
	return Invariant{Name: name, Level: conformance.Must}
}
