package worker

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/expect"
	"github.com/splashv5/conform/spec"
)

// TestReportRequirements derives each cited requirement's state from the outcomes of the
// checks that cite it: the worst one wins, an expected failure is told from a new one, and the
// level and chapter come from the specification.
func TestReportRequirements(t *testing.T) {
	r := sampleReport()
	// FRM-025 is cited by a passing check too: the failure must still win.
	r.Results = append(r.Results, conformance.Result{ID: "CNF-FRAME-02", Level: conformance.Must, Title: "passes", Requirements: []string{"FRM-025", "BOOT-006"}, Outcome: conformance.Pass, Counted: true})
	// An expected failure, of a requirement no other check cites.
	r.Results = append(r.Results, conformance.Result{ID: "CNF-FRAME-03", Level: conformance.Must, Title: "expected", Requirements: []string{"FRM-026"}, Outcome: conformance.Fail, Counted: true,
		Expectation: &conformance.Expectation{Verdict: expect.Expected}})
	want := map[string]conformance.RequirementState{
		"BOOT-006": conformance.ReqMet, "FRM-025": conformance.ReqFailed, "WRK-091": conformance.ReqFailed, "CAN-006": conformance.ReqFailed, "CAN-015": conformance.ReqFailed,
		"WRK-073": conformance.ReqNotApplicable, "ENC-039": conformance.ReqDeviates, "FRM-026": conformance.ReqExpectedFailure,
	}
	got := r.Requirements()
	if len(got) != len(want) {
		t.Fatalf("got %d requirements, want %d: %+v", len(got), len(want), got)
	}
	for i, req := range got {
		if req.State != want[req.ID] {
			t.Errorf("%s: state %q, want %q (checks %v)", req.ID, req.State, want[req.ID], req.Checks)
		}
		found, ok := spec.Find(req.ID)
		if !ok || req.Level != found.Level || req.Chapter != found.Chapter {
			t.Errorf("%s: level %q chapter %q; want the specification's %q %q", req.ID, req.Level, req.Chapter, found.Level, found.Chapter)
		}
		if i > 0 && conformance.CompareRequirementIDs(got[i-1].ID, req.ID) >= 0 {
			t.Errorf("requirements out of specification order: %s before %s", got[i-1].ID, req.ID)
		}
	}
	for _, req := range got {
		if req.ID == "FRM-025" && strings.Join(req.Checks, ",") != "CNF-FRAME-01,CNF-FRAME-02" {
			t.Errorf("FRM-025 checks = %v, want both citing checks in run order", req.Checks)
		}
	}

	// The JSON index carries the same list.
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var index struct {
		Requirements []struct{ ID, Level, Chapter, State string } `json:"requirements"`
	}
	if err := json.Unmarshal(buf.Bytes(), &index); err != nil {
		t.Fatal(err)
	}
	if len(index.Requirements) != len(got) {
		t.Fatalf("JSON index lists %d requirements, want %d", len(index.Requirements), len(got))
	}
	for i, jr := range index.Requirements {
		if jr.ID != got[i].ID || jr.State != string(got[i].State) || jr.Level != string(got[i].Level) || jr.Chapter != got[i].Chapter {
			t.Errorf("JSON requirement %d = %+v, want %+v", i, jr, got[i])
		}
	}
}

// TestCombineStatesOrder holds the state order: combining is commutative and the worse state
// wins.
func TestCombineStatesOrder(t *testing.T) {
	order := []conformance.RequirementState{conformance.ReqFailed, conformance.ReqExpectedFailure, conformance.ReqDeviates, conformance.ReqMet, conformance.ReqNotApplicable, conformance.ReqUnjudged}
	for i, a := range order {
		for j, b := range order {
			want := order[min(i, j)]
			if got := conformance.CombineStates(a, b); got != want {
				t.Errorf("CombineStates(%s, %s) = %s, want %s", a, b, got, want)
			}
		}
	}
}

// TestHTMLListsUnmetRequirements checks that the page's requirement section names every
// requirement that is not met, and links each to its checks.
func TestHTMLListsUnmetRequirements(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleReport().WriteHTML(&buf, conformance.HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	start := strings.Index(page, `<section id="requirements">`)
	end := strings.Index(page, `<section id="checks">`)
	if start < 0 || end < start {
		t.Fatal("the page has no requirement section before the checks")
	}
	section := page[start:end]
	for _, id := range []string{"FRM-025", "WRK-091", "CAN-006", "CAN-015", "ENC-039"} {
		if !strings.Contains(section, ">"+id+"<") {
			t.Errorf("the requirement section does not list unmet %s", id)
		}
	}
	for _, id := range []string{"BOOT-006", "WRK-073"} {
		if strings.Contains(section, ">"+id+"<") {
			t.Errorf("the requirement section lists %s, which is met or not applicable", id)
		}
	}
	if !strings.Contains(section, `href="#CNF-FRAME-01"`) {
		t.Error("an unmet requirement does not link to its failing check")
	}
}
