package coverage

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/splashv5/conform/spec"
)

var update = flag.Bool("update", false, "rewrite docs/requirements-coverage.md")

// TestCoverageDocIsCurrent holds docs/requirements-coverage.md to what the generator writes from
// the specification, the suites' catalogs and the vectors today; -update rewrites it.
func TestCoverageDocIsCurrent(t *testing.T) {
	root, cov := moduleCoverage(t)
	want := cov.Markdown()
	path := filepath.Join(root, "docs", "requirements-coverage.md")
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/requirements-coverage.md is stale (a check, scenario, vector or requirement changed); regenerate it: go test ./internal/coverage/ -run TestCoverageDocIsCurrent -update")
	}
}

// TestCoverageClassifiesEachMust checks the three classes on the real data and on made-up
// entries: a MUST judged by a check, scenario or vector; one marked implementation only; and a
// gap, which the list names plainly.
func TestCoverageClassifiesEachMust(t *testing.T) {
	_, cov := moduleCoverage(t)
	byID := map[string]Entry{}
	for _, e := range cov.Entries {
		byID[e.ID] = e
	}
	// FRM-025 (a tag that does not verify is rejected) is judged by both suites and by vectors.
	if e := byID["FRM-025"]; len(e.WorkerChecks) == 0 || len(e.HostChecks) == 0 || len(e.Vectors) == 0 || e.Gap() {
		t.Errorf("FRM-025: %+v", e.Evidence)
	}
	made := &Coverage{Entries: []Entry{
		{Requirement: spec.Requirement{ID: "ENC-001", Level: spec.Must, Chapter: "01-encoding.md", Text: "judged"}, Evidence: Evidence{Vectors: []string{"canonical_json.json#a", "canonical_json.json#b"}}},
		{Requirement: spec.Requirement{ID: "ENC-002", Level: spec.MustNot, Chapter: "01-encoding.md", Text: "mine", ImplementationOnly: "the Go cache"}, Evidence: Evidence{Tests: []string{"x_test.go:1"}}},
		{Requirement: spec.Requirement{ID: "ENC-003", Level: spec.Must, Chapter: "01-encoding.md", Text: "nobody judges this"}},
		{Requirement: spec.Requirement{ID: "ENC-004", Level: spec.Should, Chapter: "01-encoding.md", Text: "a SHOULD"}},
		{Requirement: spec.Requirement{ID: "ENC-005", Level: spec.Must, Chapter: "01-encoding.md", Text: "a worker does it", Needed: "send x, expect y", NeededKind: "check"}, Evidence: Evidence{Tests: []string{"y_test.go:2"}}},
	}}
	md := string(made.Markdown())
	for _, want := range []string{
		"| judged black-box (check, scenario, explorer result or vector) | 1 |\n| binding only this implementation | 1 |\n| awaiting a check or vectors (named below) | 1 |\n| gaps | 1 |\n| total | 4 |",
		"- **ENC-005** ([01-encoding.md](../spec/01-encoding.md#:~:text=ENC-005); cited by Go tests: 1): check needed: send x, expect y",
		"| ENC-005 | **check needed**: send x, expect y | 1 |",
		"- **ENC-003** ([01-encoding.md](../spec/01-encoding.md#:~:text=ENC-003); cited by Go tests: 0): nobody judges this",
		"- **ENC-002** ([01-encoding.md](../spec/01-encoding.md#:~:text=ENC-002)): the Go cache",
		"| ENC-001 | vectors canonical_json.json (2) | 0 |",
		"| ENC-003 | **gap** | 0 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the list lacks %q", want)
		}
	}
	if strings.Contains(md, "ENC-004 |") {
		t.Error("a SHOULD is listed")
	}
	if made.Entries[4].Gap() || made.Entries[4].StaleNeeded() {
		t.Error("a requirement that names its check is counted as a gap or as stale")
	}
	stale := Entry{Requirement: spec.Requirement{ID: "ENC-006", Level: spec.Must, Needed: "x", NeededKind: "vector"}, Evidence: Evidence{HostChecks: []string{"HOST-01"}}}
	if !stale.StaleNeeded() {
		t.Error("a judged requirement that still asks for a check is not stale")
	}
}

// TestNoNeededMarkerIsStale fails when a requirement still says a conformance check or vectors
// are needed although a check, scenario or vector now judges it.
func TestNoNeededMarkerIsStale(t *testing.T) {
	_, cov := moduleCoverage(t)
	for _, e := range cov.Entries {
		if e.StaleNeeded() {
			t.Errorf("%s (%s:%d) is judged by %s but still carries [%s needed: %s]; remove the marker", e.ID, e.Chapter, e.Line, judgedBy(e), e.NeededKind, e.Needed)
		}
	}
}

// TestNoUnexplainedGap fails when a MUST requirement that binds a port is judged by no check,
// scenario or vector and says neither why it binds only this implementation nor what check or
// vectors would judge it.
func TestNoUnexplainedGap(t *testing.T) {
	_, cov := moduleCoverage(t)
	for _, e := range cov.Entries {
		if e.Gap() {
			t.Errorf("%s (%s:%d) is a MUST that nothing judges black-box: cite it in a check, scenario or vector that judges it, "+
				"or add to its first paragraph [check needed: what a check would do], [vector needed: what the vectors would hold] "+
				"or, if no port can break it observably, [implementation only: why]", e.ID, e.Chapter, e.Line)
		}
	}
}
