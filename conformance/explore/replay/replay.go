// Package replay is the replay file of the explorer (spec chapter 32): a failing session,
// shrunk, written so that `splash-conform replay FILE -- WORKER…` runs it again. A replay file
// holds the recipe of the session (the worker's needs, its number model, the abstract inputs
// and the mutations of their frames) and what was expected and observed at each step; it holds
// no frame bytes, so no session key or tag is ever written.
//
// A file records one of two sessions. A walk session (no session member) is judged step by
// step against the reference machine, and only its last step differs. A probe session
// (EXP-019, session "probe") is judged process by process against the reference worker run
// the same way; its steps hold the reference's output as expected and the port's as observed,
// and its problem member says what differed, which may be no step's output at all (the effect
// log, an invariant, a leak).
package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Version is the version of the replay format.
const Version = 1

// MaxBytes bounds a replay file.
const MaxBytes = 1 << 20

// SessionProbe is the session member of a probe session's file (EXP-019).
const SessionProbe = "probe"

// Mutation says that the frame of a step is mutated by a mutator of package mutate.
type Mutation struct {
	Kind string `json:"kind"`
	Seed uint64 `json:"seed"`
}

// Step is one input of the session and the outputs at that step.
type Step struct {
	// Symbol is the abstract input (a name of package alphabet).
	Symbol string `json:"symbol"`
	// Mutation, when present, changes the symbol's frame.
	Mutation *Mutation `json:"mutation,omitempty"`
	// Expected and Observed are the abstract outputs (alphabet.Output's text form); in a probe
	// session, the reference worker's and the port's.
	Expected string `json:"expected"`
	Observed string `json:"observed"`
}

// File is one replay file.
type File struct {
	Version int `json:"version"`
	// Suite is "worker" or "host".
	Suite string `json:"suite"`
	// Session is SessionProbe for a probe session of the worker suite, empty for a walk session
	// (and for every host session).
	Session string `json:"session,omitempty"`
	// Needs are the needs the explored worker declared.
	Needs []string `json:"needs"`
	// Numbers is the number model, "preserve" or "lossy".
	Numbers string `json:"numbers"`
	// Seed is the seed of the run that found the failure.
	Seed uint64 `json:"seed"`
	// Level is "MUST" or "SHOULD": the level of the first difference.
	Level string `json:"level"`
	// Spec lists the requirement IDs the failing step exercises.
	Spec []string `json:"spec"`
	// Steps is the shrunk session. In a walk session the last step is the first that differs;
	// in a probe session any step, or none, may differ.
	Steps []Step `json:"steps"`
	// Problem, in a probe session only, is the difference found, as the explorer reported it.
	Problem string `json:"problem,omitempty"`
}

// Probe reports whether the file records a probe session.
func (f File) Probe() bool { return f.Session == SessionProbe }

// ErrFile is returned (wrapped) for a file that does not decode or does not hold together.
var ErrFile = errors.New("replay: bad replay file")

// Validate checks the file: version, suite, session, number model, level, at least one step;
// for a walk session, that the last step, and only the last, shows a difference; for a probe
// session, that it is of the worker suite, names its problem, and that every step has both
// outputs and no mutation.
func (f File) Validate() error {
	switch {
	case f.Version != Version:
		return fmt.Errorf("%w: version %d, want %d", ErrFile, f.Version, Version)
	case f.Suite != "worker" && f.Suite != "host":
		return fmt.Errorf("%w: suite %q", ErrFile, f.Suite)
	case f.Session != "" && f.Session != SessionProbe:
		return fmt.Errorf("%w: session %q", ErrFile, f.Session)
	case f.Probe() && f.Suite != "worker":
		return fmt.Errorf("%w: a probe session of the %s suite", ErrFile, f.Suite)
	case f.Probe() && strings.TrimSpace(f.Problem) == "":
		return fmt.Errorf("%w: a probe session without its problem", ErrFile)
	case !f.Probe() && f.Problem != "":
		return fmt.Errorf("%w: a problem outside a probe session", ErrFile)
	case f.Numbers != "preserve" && f.Numbers != "lossy":
		return fmt.Errorf("%w: number model %q", ErrFile, f.Numbers)
	case f.Level != "MUST" && f.Level != "SHOULD":
		return fmt.Errorf("%w: level %q", ErrFile, f.Level)
	case len(f.Steps) == 0:
		return fmt.Errorf("%w: no step", ErrFile)
	}
	for i, s := range f.Steps {
		if s.Symbol == "" {
			return fmt.Errorf("%w: step %d has no symbol", ErrFile, i)
		}
		if s.Mutation != nil && s.Mutation.Kind == "" {
			return fmt.Errorf("%w: step %d has a mutation without a kind", ErrFile, i)
		}
		if f.Probe() {
			switch {
			case s.Mutation != nil:
				return fmt.Errorf("%w: step %d of a probe session has a mutation", ErrFile, i)
			case s.Expected == "" || s.Observed == "":
				return fmt.Errorf("%w: step %d of a probe session lacks an output", ErrFile, i)
			}
			continue
		}
		differs := s.Expected != s.Observed
		if last := i == len(f.Steps)-1; differs != last {
			if last {
				return fmt.Errorf("%w: the last step shows no difference", ErrFile)
			}
			return fmt.Errorf("%w: step %d differs before the last step", ErrFile, i)
		}
	}
	return nil
}

// Symbols returns the abstract inputs of the steps, in order.
func (f File) Symbols() []string {
	out := make([]string, len(f.Steps))
	for i, s := range f.Steps {
		out[i] = s.Symbol
	}
	return out
}

// Encode validates f and returns its indented JSON with a final newline.
func (f File) Encode() ([]byte, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if f.Needs == nil {
		f.Needs = []string{}
	}
	if f.Spec == nil {
		f.Spec = []string{}
	}
	f.Needs, f.Spec = slices.Clone(f.Needs), slices.Clone(f.Spec)
	slices.Sort(f.Needs)
	slices.Sort(f.Spec)
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Decode reads and validates a replay file; unknown fields and trailing data are refused.
func Decode(data []byte) (File, error) {
	if len(data) > MaxBytes {
		return File{}, fmt.Errorf("%w: %d bytes, at most %d", ErrFile, len(data), MaxBytes)
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	var f File
	if err := d.Decode(&f); err != nil {
		return File{}, fmt.Errorf("%w: %w", ErrFile, err)
	}
	if d.More() {
		return File{}, fmt.Errorf("%w: data after the file", ErrFile)
	}
	return f, f.Validate()
}
