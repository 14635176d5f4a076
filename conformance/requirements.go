package conformance

import (
	"slices"
	"strings"

	"github.com/splashv5/conform/conformance/expect"
	"github.com/splashv5/conform/spec"
)

// RequirementState is what the checks of one run say about one requirement of the
// specification: the worst outcome of the checks that cite it.
type RequirementState string

// The requirement states, from worst to best. A state is derived from the outcomes of the
// checks that cite the requirement by StateOfOutcome and CombineStates.
const (
	// ReqFailed: a check citing the requirement failed, crashed or timed out, and no
	// expectations file lists it.
	ReqFailed RequirementState = "failed"
	// ReqExpectedFailure: a check citing it failed as an expectations file lists.
	ReqExpectedFailure RequirementState = "expected-failure"
	// ReqDeviates: a SHOULD-level check citing it found a deviation that does not count (INFO).
	ReqDeviates RequirementState = "deviates"
	// ReqMet: every check citing it that ran passed.
	ReqMet RequirementState = "met"
	// ReqNotApplicable: every check citing it was skipped (the implementation does not offer
	// what the checks need).
	ReqNotApplicable RequirementState = "not-applicable"
	// ReqUnjudged: no check of the run cites it.
	ReqUnjudged RequirementState = "unjudged"
)

// requirementRank orders the states from worst (0) to best.
var requirementRank = map[RequirementState]int{
	ReqFailed: 0, ReqExpectedFailure: 1, ReqDeviates: 2, ReqMet: 3, ReqNotApplicable: 4, ReqUnjudged: 5,
}

// StateOfOutcome returns the state one check's outcome gives the requirements it cites;
// expected says that an expectations file lists the failure.
func StateOfOutcome(o Outcome, expected bool) RequirementState {
	switch {
	case o.Failed() && expected:
		return ReqExpectedFailure
	case o.Failed():
		return ReqFailed
	case o == Info:
		return ReqDeviates
	case o == Skip:
		return ReqNotApplicable
	}
	return ReqMet
}

// CombineStates returns the worse of two states: a requirement is met only when no check
// citing it found otherwise.
func CombineStates(a, b RequirementState) RequirementState {
	ra, oka := requirementRank[a]
	rb, okb := requirementRank[b]
	switch {
	case !oka:
		return b
	case !okb || ra <= rb:
		return a
	}
	return b
}

// RequirementResult is what one run says about one requirement: its level and chapter from
// the specification, its state and the checks that cite it.
type RequirementResult struct {
	ID string
	// Level and Chapter come from the specification; both are empty for an ID the
	// specification does not define.
	Level   spec.Level
	Chapter string
	State   RequirementState
	// Checks are the IDs of the run's checks that cite the requirement, in run order.
	Checks []string
}

// Requirements returns every requirement the report's checks cite, in specification order
// (an ID the specification lacks last), each with the state its checks give it.
func (r *Report) Requirements() []RequirementResult {
	index := map[string]int{}
	var out []RequirementResult
	for i := range r.Results {
		res := &r.Results[i]
		state := StateOfOutcome(res.Outcome, res.verdict() == expect.Expected)
		for _, id := range res.Requirements {
			j, ok := index[id]
			if !ok {
				j = len(out)
				index[id] = j
				rr := RequirementResult{ID: id, State: ReqUnjudged}
				if found, ok := spec.Find(id); ok {
					rr.Level, rr.Chapter = found.Level, found.Chapter
				}
				out = append(out, rr)
			}
			out[j].State = CombineStates(out[j].State, state)
			out[j].Checks = append(out[j].Checks, res.ID)
		}
	}
	slices.SortStableFunc(out, func(a, b RequirementResult) int { return CompareRequirementIDs(a.ID, b.ID) })
	return out
}

// CompareRequirementIDs orders requirement IDs as the specification does: by chapter, then by
// number; an ID the specification lacks comes after every defined one, in text order.
func CompareRequirementIDs(a, b string) int {
	ra, oka := spec.Find(a)
	rb, okb := spec.Find(b)
	switch {
	case oka && okb && ra.Chapter != rb.Chapter:
		return strings.Compare(ra.Chapter, rb.Chapter)
	case oka && okb:
		return ra.Number - rb.Number
	case oka:
		return -1
	case okb:
		return 1
	}
	return strings.Compare(a, b)
}
