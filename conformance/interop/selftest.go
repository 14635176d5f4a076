package interop

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/splashv5/conform/conformance"
)

// TokenPeer in a command of the self-test corpus stands for the misbehaving peers of
// splash-conform: the runner's executable followed by the argument "peer".
const TokenPeer = "{peer}"

// SelfTestCase is one case of the self-test corpus (selftest.json, docs/interop.md): a pair
// with a misbehaving side, a scenario, and the verdict a runner must give.
type SelfTestCase struct {
	// Name names the case.
	Name string `json:"name"`
	// About says how the misbehaving side misbehaves.
	About string `json:"about"`
	// Host and Worker are the pair; their commands may name {peer}, {reference-host},
	// {reference-worker} and the worker placeholders.
	Host   Implementation `json:"host"`
	Worker Implementation `json:"worker"`
	// Scenario is the ID of the scenario to run.
	Scenario string `json:"scenario"`
	// Outcome is the verdict: PASS, FAIL, CRASH, TIMEOUT or INFO.
	Outcome conformance.Outcome `json:"outcome"`
	// Blame is the side the verdict must name as at fault ("host" or "worker"), or "" when
	// the outcome is PASS or INFO.
	Blame Side `json:"blame,omitempty"`
}

// selfTestFile is the layout of selftest.json.
type selfTestFile struct {
	FormatVersion int            `json:"format_version"`
	About         string         `json:"about"`
	Cases         []SelfTestCase `json:"cases"`
}

//go:embed selftest.json
var selfTestJSON []byte

// SelfTest returns the cases of the self-test corpus, checked: every scenario exists, every
// outcome is a verdict and a failing one names a side.
func SelfTest() ([]SelfTestCase, error) {
	dec := json.NewDecoder(bytes.NewReader(selfTestJSON))
	dec.DisallowUnknownFields()
	var f selfTestFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("selftest.json: %w", err)
	}
	if f.FormatVersion != 1 {
		return nil, fmt.Errorf("selftest.json: format_version %d, want 1", f.FormatVersion)
	}
	var ids []string
	for _, s := range Catalog() {
		ids = append(ids, s.ID)
	}
	for _, c := range f.Cases {
		failing := c.Outcome == conformance.Fail || c.Outcome == conformance.Crash || c.Outcome == conformance.Timeout
		switch {
		case !slices.Contains(ids, c.Scenario):
			return nil, fmt.Errorf("selftest.json: case %s names no scenario: %s", c.Name, c.Scenario)
		case !failing && c.Outcome != conformance.Pass && c.Outcome != conformance.Info:
			return nil, fmt.Errorf("selftest.json: case %s: outcome %q", c.Name, c.Outcome)
		case failing != (c.Blame == HostSide || c.Blame == WorkerSide) || !failing && c.Blame != "":
			return nil, fmt.Errorf("selftest.json: case %s: a failing outcome names host or worker, another names none", c.Name)
		}
	}
	return f.Cases, nil
}

// ExpandPeer replaces the {peer} token of command with peer (the runner's executable and
// "peer").
func ExpandPeer(command, peer []string) []string {
	var out []string
	for _, a := range command {
		if a == TokenPeer {
			out = append(out, peer...)
			continue
		}
		out = append(out, a)
	}
	return out
}
