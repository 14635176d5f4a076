package interop

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/conformance"
)

// iopFault is one deliberate fault of the reference host driver or the reference worker (their
// splashfaults builds) and the scenarios it must fail.
type iopFault struct {
	name      string
	host      bool     // a host fault (SPLASH_HOST_FAULT), else a worker fault (--fault)
	scenarios []string // the scenarios the fault fails
	blame     string   // the side the verdict names as at fault
}

// iopFaults proves every scenario: each names the faults that make it fail, and the side the
// verdict must name as at fault, from the frames or from the ends (IOP-002, IOP-003, IOP-005).
var iopFaults = []iopFault{
	{"reuse-outgoing-sequence", false, []string{"CNF-IOP-ECHO-01"}, "blame: worker"},
	{"float-payload", true, []string{"CNF-IOP-ECHO-02", "CNF-IOP-NUMBER-01"}, "blame: host"},
	{"budget-early", true, []string{"CNF-IOP-BUDGET-01"}, "blame: host"},
	{"authorize-late", true, []string{"CNF-IOP-BUDGET-01"}, "blame: host"},
	{"limit-off-by-one", false, []string{"CNF-IOP-BUDGET-01"}, "blame: worker"},
	{"overlimit", true, []string{"CNF-IOP-BUDGET-02"}, "blame: host"},
	{"opkey", true, []string{"CNF-IOP-DURABLE-01"}, "blame: host"},
	{"reuse", true, []string{"CNF-IOP-DURABLE-01"}, "blame: host"},
	{"rerun-duplicate-dispatch", false, []string{"CNF-IOP-DURABLE-02"}, "blame: worker"},
	{"redispatch", true, []string{"CNF-IOP-DURABLE-03"}, "blame: host"},
	{"recover-redispatch", true, []string{"CNF-IOP-RECOVER-01"}, "blame: host"},
	{"noredispatch", true, []string{"CNF-IOP-RECOVER-02"}, "blame: host"},
	{"redispatch-first", true, []string{"CNF-IOP-RECOVER-02"}, "blame: host"},
	{"redispatch-newkey", true, []string{"CNF-IOP-RECOVER-02"}, "blame: host"},
	{"refusal-memory", true, []string{"CNF-IOP-RECOVER-02"}, "blame: host"},
	{"tenant", true, []string{"CNF-IOP-COMP-01"}, "blame: host"},
	{"cmp-fresh", true, []string{"CNF-IOP-COMP-02"}, "blame: host"},
	{"rerun-duplicate-compensation", false, []string{"CNF-IOP-COMP-02"}, "blame: worker"},
	{"result-after-ack", false, []string{"CNF-IOP-CANCEL-01"}, "blame: worker"},
	{"too-late-before-result", false, []string{"CNF-IOP-CANCEL-02"}, "blame: worker"},
	{"finish-cancelled", true, []string{"CNF-IOP-CANCEL-02"}, "blame: host"},
	{"closeframe", true, []string{"CNF-IOP-CLOSE-01"}, "blame: host"},
	{"exitcode", true, []string{"CNF-IOP-CLOSE-01"}, "blame: host"},
	{"noclose", true, []string{"CNF-IOP-CLOSE-02"}, "blame: host"},
}

// TestEveryScenarioHasAFault fails when a scenario of the catalog is failed by no fault of the
// table, or when the table names a scenario that does not exist.
func TestEveryScenarioHasAFault(t *testing.T) {
	proved := map[string]bool{}
	for _, f := range iopFaults {
		for _, id := range f.scenarios {
			proved[id] = true
		}
	}
	for _, s := range Catalog() {
		if !proved[s.ID] {
			t.Errorf("%s: no deliberate fault fails it; add one to iopFaults", s.ID)
		}
		delete(proved, s.ID)
	}
	for id := range proved {
		t.Errorf("iopFaults names %s, which is no scenario", id)
	}
}

// TestFaultsAreBlamedOnTheirSide runs each fault's scenarios with the faulty build of the host
// driver or of the worker: every one fails, names the side that has the fault, and shows the
// worker's end.
func TestFaultsAreBlamedOnTheirSide(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the faulty driver and worker")
	}
	pair := referencePair(t)
	for _, tc := range iopFaults {
		t.Run(tc.name, func(t *testing.T) {
			p := pair
			var env []string
			if tc.host {
				p.Host.Command = []string{faultyDriverBin}
				env = append(os.Environ(), "SPLASH_HOST_FAULT="+tc.name)
			} else {
				p.Worker.Command = slices.Concat([]string{faultyWorkerBin, "--fault", tc.name}, p.Worker.Command[1:])
			}
			report := runPairT(t, p, "^("+strings.Join(tc.scenarios, "|")+")$", 10*time.Second, env)
			if len(report.Results) != len(tc.scenarios) {
				t.Fatalf("%d results for %d scenarios", len(report.Results), len(tc.scenarios))
			}
			for _, r := range report.Results {
				if !r.Outcome.Failed() {
					t.Errorf("%s passes with the fault %s", r.ID, tc.name)
					continue
				}
				if !strings.Contains(r.Detail, tc.blame) {
					t.Errorf("%s: %q, want %q", r.ID, r.Detail, tc.blame)
				}
				if !strings.Contains(r.Detail, "worker: relay 1: ") {
					t.Errorf("%s: %q, want the worker's end shown", r.ID, r.Detail)
				}
				t.Logf("%s %s in %s: %s", r.ID, r.Outcome, conformance.FormatDuration(r.Duration), conformance.Clip(r.Detail, 300))
			}
		})
	}
}

// TestNewChecksFailUnderMisbehavingPeers runs each check added to a scenario against the peer
// or the fault that breaks exactly its rule: the scenario fails at that check, blaming the
// side the check names.
func TestNewChecksFailUnderMisbehavingPeers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the faulty driver and worker")
	}
	pair := referencePair(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, scenario string
		host, worker   []string // replacement commands, or nil
		env            []string
		want           string
	}{
		{"host keeps the input", "CNF-IOP-CLOSE-02", []string{exe, PeerCommand, "host", PeerHostKeepInput, "--", driverBin}, nil, nil,
			"(blame: host): the host sent close_session but never ended the worker's input"},
		{"host dispatches again", "CNF-IOP-DURABLE-03", []string{faultyDriverBin}, nil, []string{"SPLASH_HOST_FAULT=redispatch"},
			"(blame: host): the host did not reconcile the operation whose answer was lost"},
		{"host compensates under a fresh key", "CNF-IOP-COMP-02", []string{faultyDriverBin}, nil, []string{"SPLASH_HOST_FAULT=cmp-fresh"},
			"(blame: host): the host did not deliver the lost compensation again under its compensation key"},
		{"worker writes too_late first", "CNF-IOP-CANCEL-02", nil, slices.Concat([]string{faultyWorkerBin, "--fault", "too-late-before-result"}, pair.Worker.Command[1:]), nil,
			"(blame: worker): relay 1: worker line 1 breaks a rule of its sender (CAN-015)"},
		{"worker refuses portable numbers", "CNF-IOP-ECHO-02", nil, slices.Concat([]string{exe, PeerCommand, "worker", PeerWorkerRefuseNumbers, "--"}, pair.Worker.Command), nil,
			"ended the session with exit status 1; its diagnostic: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := pair
			if tc.host != nil {
				p.Host.Command = tc.host
			}
			if tc.worker != nil {
				p.Worker.Command = tc.worker
			}
			env := tc.env
			if env != nil {
				env = append(os.Environ(), env...)
			}
			report := runPairT(t, p, "^"+tc.scenario+"$", 10*time.Second, env)
			if len(report.Results) != 1 {
				t.Fatalf("%d results", len(report.Results))
			}
			if r := report.Results[0]; r.Outcome != conformance.Fail || !strings.Contains(r.Detail, tc.want) {
				t.Errorf("%s: %s %q, want FAIL with %q", r.ID, r.Outcome, r.Detail, tc.want)
			}
		})
	}
}
