package interop

import (
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance"
)

// TestBlameAtTheEnds holds the choice of the side at fault, when no frame broke a rule, to
// its order: a worker that did not start; a scenario's own judgement; a worker that failed or
// left a request unanswered after valid frames (unless the runner cut it, or the host sent a
// number another build reads differently); otherwise the host.
func TestBlameAtTheEnds(t *testing.T) {
	status := func(n int) *int { return &n }
	hostHint := &blameHint{side: HostSide, why: "the scenario's own reason"}
	for _, tc := range []struct {
		name string
		ev   []relayEvidence
		hint *blameHint
		side Side
		why  string
	}{
		{"no relay", nil, nil, HostSide, "never started the worker"},
		{"worker did not start", []relayEvidence{{index: 1, startErr: "no such file"}}, hostHint, WorkerSide, "did not start"},
		{"the scenario knows", []relayEvidence{{index: 1, exit: status(5)}}, hostHint, HostSide, "the scenario's own reason"},
		{"worker failed", []relayEvidence{{index: 1, exit: status(0)}, {index: 2, exit: status(1), diag: "refusing 5e-324"}}, nil, WorkerSide,
			`relay 2: every frame of the host followed the rules, and the worker ended the session with exit status 1; its diagnostic: "refusing 5e-324"`},
		{"worker killed by a signal", []relayEvidence{{index: 1, exit: status(-1), signal: "segmentation fault"}}, nil, WorkerSide, "killed by signal segmentation fault"},
		{"worker unanswered", []relayEvidence{{index: 1, unanswered: 1}}, nil, WorkerSide, "left 1 of its requests unanswered (still running"},
		{"cut by the runner", []relayEvidence{{index: 1, cut: true, unanswered: 1, exit: status(-1), signal: "killed"}}, nil, HostSide, "the outcome the scenario refused is the host driver's"},
		{"worker refused a hazard", []relayEvidence{{index: 1, exit: status(4), hazards: 1}}, nil, HostSide, "the outcome the scenario refused is the host driver's"},
		{"everything answered", []relayEvidence{{index: 1, exit: status(0)}}, nil, HostSide, "the worker answered every request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			side, why := blameAtTheEnds(tc.ev, tc.hint)
			if side != tc.side || !strings.Contains(why, tc.why) {
				t.Errorf("blame %s: %q; want %s: …%s…", side, why, tc.side, tc.why)
			}
		})
	}
}

// TestFailingVerdictsShowTheWorkersEnd: every failing verdict names a side and shows how each
// worker ended, on the wire and at the ends; a passing one is left alone.
func TestFailingVerdictsShowTheWorkersEnd(t *testing.T) {
	zero, three := 0, 3
	ev := []relayEvidence{{index: 1, exit: &zero}, {index: 2, exit: &three, diag: "worker: cannot go on"}, {index: 3}, {index: 4, gone: true}}
	wire := append([]relayEvidence(nil), ev...)
	wire[0].devs = []Deviation{{Side: HostSide, Line: 2, Rule: "FRM-005", Detail: "not canonical"}}
	for _, tc := range []struct {
		name string
		ev   []relayEvidence
		want string
	}{
		{"at the ends", ev, "at the ends (blame: worker): relay 2: "},
		{"on the wire", wire, "on the wire (blame: host): relay 1: host line 2 breaks a rule of its sender (FRM-005): not canonical"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reqs := []string{"FRM-005", "IOP-005"}
			vt := &T{sc: &Scenario{Requirements: reqs}, T: conformance.T{Requirements: reqs}}
			vt.Outcome, vt.Detail = "FAIL", "expected x; got y"
			vt.judgeSides(tc.ev)
			for _, want := range []string{tc.want, "expected x; got y",
				"worker: relay 1: exit status 0, relay 2: exit status 3, relay 3: still running when the scenario ended, relay 4: status unknown: the relay ended without reporting it"} {
				if !strings.Contains(vt.Detail, want) {
					t.Errorf("%q lacks %q", vt.Detail, want)
				}
			}
		})
	}
	vt := &T{}
	vt.Outcome = "PASS"
	vt.judgeSides(ev)
	if vt.Outcome != "PASS" || vt.Detail != "" {
		t.Errorf("a passing scenario became %s %q", vt.Outcome, vt.Detail)
	}
}
