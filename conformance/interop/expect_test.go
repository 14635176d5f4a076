package interop

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/expect"
)

// expectRun is the selection of the expectations tests: the scenario the known worker fault
// fails and the one the regression fails.
const expectRun = "^CNF-IOP-(DURABLE-02|CANCEL-02)$"

// interopMain runs Main with args and returns the exit status and the output.
func interopMain(args ...string) (int, string) {
	var out bytes.Buffer
	code := Main(args, &out, &out)
	return code, out.String()
}

// faultyWorker is the reference worker command with the faulty build and the faults given.
func faultyWorker(t *testing.T, faults string) []string {
	programs(t)
	return slices.Concat([]string{faultyWorkerBin}, conformance.ReferenceWorkerArgs, []string{"--fault", faults})
}

// TestInteropExpectations: a pair with a known failing scenario writes its expectations file in
// one command and passes with it, fails when a second scenario regresses, and is told when the
// listed scenario is fixed (failing under -expect-strict).
func TestInteropExpectations(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the faulty reference worker")
	}
	programs(t)
	file := filepath.Join(t.TempDir(), "expectations.json")
	pair := func(worker []string, flags ...string) (int, string) {
		args := slices.Concat([]string{"-host", driverBin, "-run", expectRun, "-parallel", "2"}, flags, []string{"--"}, worker)
		return interopMain(args...)
	}
	if code, out := pair(faultyWorker(t, "rerun-duplicate-dispatch"), "-write-expectations", file); code != conformance.ExitOK {
		t.Fatalf("-write-expectations: exit %d\n%s", code, out)
	}
	f, err := expect.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Expectations) != 1 || f.Expectations[0].ID != "CNF-IOP-DURABLE-02" || f.Suite != "interop" || f.CatalogDigest != Suite().CatalogDigest {
		t.Fatalf("written file: %+v", f)
	}
	if code, out := pair(faultyWorker(t, "rerun-duplicate-dispatch"), "-expect", file); code != conformance.ExitOK || !strings.Contains(out, "MATCHES EXPECTATIONS") {
		t.Errorf("the known failure with its file: exit %d\n%s", code, out)
	}
	code, out := pair(faultyWorker(t, "rerun-duplicate-dispatch,too-late-before-result"), "-expect", file)
	if code != conformance.ExitFailures || !strings.Contains(out, "CNF-IOP-CANCEL-02") {
		t.Errorf("a regression: exit %d\n%s", code, out)
	}
	reference := slices.Concat([]string{workerBin}, conformance.ReferenceWorkerArgs)
	if code, out := pair(reference, "-expect", file); code != conformance.ExitOK || !strings.Contains(out, "CNF-IOP-DURABLE-02 is now PASS: line ") {
		t.Errorf("a fixed scenario: exit %d\n%s", code, out)
	}
	if code, out := pair(reference, "-expect", file, "-expect-strict"); code != conformance.ExitFailures {
		t.Errorf("a fixed scenario under -expect-strict: exit %d\n%s", code, out)
	}
	var version bytes.Buffer
	if code := Main([]string{"-version"}, &version, &version); code != conformance.ExitOK || !strings.Contains(version.String(), "interop suite: ") ||
		!strings.Contains(version.String(), Suite().CatalogDigest) {
		t.Errorf("-version: %d %s", code, version.String())
	}
}

// TestMatrixExpectations: in a matrix, an entry HOST/WORKER/ID names a scenario of one cell and a
// plain ID names it in every cell; -write-expectations writes the failures under their cells.
func TestMatrixExpectations(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the faulty reference worker")
	}
	programs(t)
	dir := t.TempDir()
	m := Matrix{
		Hosts: []Implementation{{Name: "ref-host", Command: []string{driverBin}, Numbers: NumbersPreserve}},
		Workers: []Implementation{
			{Name: "ref-worker", Command: slices.Concat([]string{workerBin}, conformance.ReferenceWorkerArgs), Numbers: NumbersPreserve, Features: []string{NeedDurable, NeedCancel}},
			{Name: "rerun worker", Command: faultyWorker(t, "rerun-duplicate-dispatch"), Numbers: NumbersPreserve, Features: []string{NeedDurable, NeedCancel}},
		},
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	matrixFile := filepath.Join(dir, "implementations.json")
	if err := os.WriteFile(matrixFile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(flags ...string) (int, string) {
		return interopMain(slices.Concat([]string{"-matrix", matrixFile, "-run", "^CNF-IOP-DURABLE-02$", "-parallel", "2"}, flags)...)
	}
	written := filepath.Join(dir, "written.json")
	if code, out := run("-write-expectations", written); code != conformance.ExitOK || !strings.Contains(out, "EXPECTED") {
		t.Fatalf("-write-expectations: exit %d\n%s", code, out)
	}
	f, err := expect.ReadFile(written)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Expectations) != 1 || f.Expectations[0].ID != CellID("ref-host", "rerun worker", "CNF-IOP-DURABLE-02") {
		t.Fatalf("written file: %+v", f.Expectations)
	}
	for _, tc := range []struct {
		name, entries string
		code          int
		output        string
	}{
		{"the cell's entry", `{"id": "ref-host/rerun worker/CNF-IOP-DURABLE-02", "outcome": "FAIL", "reason": "r"}`, conformance.ExitOK, "EXPECTED"},
		{"a plain entry, fixed in the other cell", `{"id": "CNF-IOP-DURABLE-02", "outcome": "FAIL", "reason": "r"}`, conformance.ExitOK, "ref-host/ref-worker/CNF-IOP-DURABLE-02 is now PASS"},
		{"another cell's entry", `{"id": "*/ref-worker/CNF-IOP-DURABLE-*", "outcome": "FAIL", "reason": "r"}`, conformance.ExitFailures, "FAIL    CNF-IOP-DURABLE-02: "},
		{"a pair the matrix lacks", `{"id": "other/ref-worker/CNF-IOP-DURABLE-02", "outcome": "FAIL", "reason": "r"}`, conformance.ExitUsage, "selects no check"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "expect.json")
			text := `{"format": "splash-conform-expectations", "format_version": 1, "suite": "interop", "expectations": [` + tc.entries + `]}`
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			if code, out := run("-expect", path); code != tc.code || !strings.Contains(out, tc.output) {
				t.Errorf("exit %d, want %d with %q\n%s", code, tc.code, tc.output, out)
			}
		})
	}
}
