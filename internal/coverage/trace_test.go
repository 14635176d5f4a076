package coverage

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestTraceabilityIsCurrent holds docs/traceability.md and docs/traceability.json to what the
// generator writes from the specification, the catalogs, the vectors, the models and the tests
// today; -update rewrites both.
func TestTraceabilityIsCurrent(t *testing.T) {
	root, cov := moduleCoverage(t)
	data, err := cov.TraceabilityJSON()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]byte{"traceability.md": cov.Traceability(), "traceability.json": data} {
		path := filepath.Join(root, "docs", name)
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("docs/%s is stale (a requirement, check, scenario, vector, model invariant or test citation changed); regenerate it: go test ./internal/coverage/ -run TestTraceabilityIsCurrent -update", name)
		}
	}
}

// TestTraceabilityFindsEachKindOfProof checks, on the real sources, one requirement per kind of
// proof, each found where the project keeps it: a model invariant named by a constant (fencing's
// one-effect invariant), one named by a string (the cancellation model's), a test function by
// its name, and the class of a requirement proved by nothing but tests.
func TestTraceabilityFindsEachKindOfProof(t *testing.T) {
	_, cov := moduleCoverage(t)
	byID := map[string]Entry{}
	for _, e := range cov.Entries {
		byID[e.ID] = e
	}
	hasPrefix := func(list []string, prefix string) bool {
		return slices.ContainsFunc(list, func(s string) bool { return strings.HasPrefix(s, prefix) })
	}
	if e := byID["WRK-041"]; !hasPrefix(e.Models, "model/fencing.go: ") {
		t.Errorf("WRK-041's models = %v, want the fencing model's one-effect invariant", e.Models)
	}
	if e := byID["CAN-016"]; !slices.Contains(e.Models, "model/cancellation.go: never a result after an acknowledgement") {
		t.Errorf("CAN-016's models = %v, want the cancellation invariant by its text", e.Models)
	}
	if e := byID["STO-089"]; !slices.Contains(e.TestFuncs, "cmd/splash-worker/etcdurl_test.go: TestParseEtcdJournalRefusesMalformedValues") {
		t.Errorf("STO-089's tests = %v, want the URL parser's table test by its function", e.TestFuncs)
	}
	// The driver's hello is applied by the runner in every host check, and listed by none.
	if e := byID["HDR-010"]; e.ProvedOnlyHere() || !hasPrefix(e.Runner, "conformance/") {
		t.Errorf("HDR-010: runner %v, proved only here %v; want the runner's hello, which judges every port", e.Runner, e.ProvedOnlyHere())
	}
	// That creating an error performs no I/O is proved by this implementation's tests alone.
	if e := byID["ERR-021"]; !e.ProvedOnlyHere() || len(e.TestFuncs) == 0 {
		t.Errorf("ERR-021: proved only here %v, tests %v; want it listed as proved by this implementation's tests alone", e.ProvedOnlyHere(), e.TestFuncs)
	}
	data, err := cov.TraceabilityJSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Requirements []struct {
			ID     string   `json:"id"`
			Models []string `json:"models"`
		} `json:"requirements"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Requirements) != len(cov.Entries) {
		t.Errorf("traceability.json holds %d requirements, want %d", len(doc.Requirements), len(cov.Entries))
	}
}

// TestFuncIndexNamesTheEnclosingFunction holds the attribution of a citation line to the
// function whose doc comment or body holds it.
func TestFuncIndexNamesTheEnclosingFunction(t *testing.T) {
	dir := t.TempDir()
	src := "package p\n\n// Spec: FRM-001\nfunc TestA(t *T) {\n\t_ = 1 // FRM-002\n}\n\ntype S struct{}\n\n// FRM-003\nfunc (s *S) M() {}\n\nvar x = 1 // FRM-004\n"
	if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	x := newFuncIndex(dir)
	for line, want := range map[int]string{3: "p_test.go: TestA", 5: "p_test.go: TestA", 10: "p_test.go: S.M", 13: "p_test.go"} {
		if got := x.at("p_test.go", line); got != want {
			t.Errorf("line %d: %q, want %q", line, got, want)
		}
	}
}
