package worker

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/expect"
)

// The faults of the faulty reference worker that the expectations tests plant: three known
// bugs, each failing one check of the AUTHZ and COMP areas, and a fourth that regresses two more.
const (
	knownFaults   = "ignore-grant,skip-scope-check,accept-second-compensation-key"
	regression    = "ignore-call-budget"
	expectedRun   = "^CNF-(AUTHZ|COMP)-[01]" // CNF-COMP-21 fails under accept-second-compensation-key too
	knownFailures = "CNF-AUTHZ-01 CNF-COMP-08 CNF-COMP-11"
)

// conform runs Main against the faulty worker with the faults given and returns the exit
// status and the output.
func conform(t *testing.T, faults string, flags ...string) (int, string, string) {
	t.Helper()
	worker := append([]string{faultyWorkerBinary(t)}, conformance.ReferenceWorkerArgs...)
	worker = append(worker, "--fault", faults)
	args := append([]string{"-run", expectedRun, "-timeout", "10s"}, flags...)
	args = append(append(args, "--"), worker...)
	var out, errOut bytes.Buffer
	code := Main(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func readJSONReport(t *testing.T, path string) (report struct {
	ExitCode int                 `json:"exit_code"`
	Summary  conformance.Summary `json:"summary"`
	Suite    jsonSuite           `json:"suite"`
	Results  []struct {
		ID          string      `json:"id"`
		Expectation *jsonExpect `json:"expectation"`
	} `json:"results"`
}) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v := loadSchema(t, "report.schema.json")
	if errs := v.validate(v.root, decodeJSON(t, data), ""); len(errs) > 0 {
		t.Errorf("%s violates report.schema.json:\n  %s", path, strings.Join(errs, "\n  "))
	}
	if err := json.Unmarshal(data, &report); err != nil {
		t.Fatal(err)
	}
	return report
}

// Spec: AUZ-008, JRN-008, JRN-021
// TestExpectationsGateRegressions is the adoption path of a port: a worker that fails three
// known checks writes its expectations file in one command, passes with it, fails when a
// fourth bug regresses other checks, and is told when a listed check is fixed.
func TestExpectationsGateRegressions(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the faulty reference worker")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "expectations.json")

	// One command writes the file of the current failures, and the run passes against it.
	code, out, errOut := conform(t, knownFaults, "-write-expectations", file)
	if code != conformance.ExitOK {
		t.Fatalf("-write-expectations: exit %d\n%s%s", code, out, errOut)
	}
	written, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	f, err := expect.Parse(written)
	if err != nil {
		t.Fatalf("the written file does not parse: %v\n%s", err, written)
	}
	var ids []string
	for _, e := range f.Expectations {
		ids = append(ids, e.ID)
		if e.Outcome != expect.Fail || e.Reason == "" {
			t.Errorf("entry %s", e)
		}
	}
	slices.Sort(ids)
	if strings.Join(ids, " ") != knownFailures || f.Suite != "worker" || f.CatalogDigest != Suite().CatalogDigest {
		t.Errorf("written file lists %v for suite %q digest %q, want %s\n%s", ids, f.Suite, f.CatalogDigest, knownFailures, written)
	}

	// The same worker passes against the file; every report shows the failures as expected
	// and carries the suite version, protocol version and catalog digest.
	jsonPath, junitPath, htmlPath := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.xml"), filepath.Join(dir, "r.html")
	code, out, errOut = conform(t, knownFaults, "-expect", file, "-json", jsonPath, "-junit", junitPath, "-html", htmlPath)
	if code != conformance.ExitOK {
		t.Fatalf("-expect with the known failures: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"Expected failures (3, listed in " + file, "MATCHES EXPECTATIONS", Suite().CatalogDigest, "(3 failures expected, 0 new, 0 fixed)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	rep := readJSONReport(t, jsonPath)
	if rep.ExitCode != 0 || rep.Summary.Expected != 3 || rep.Summary.Failing != 0 || rep.Summary.Failed != 3 ||
		rep.Suite.CatalogDigest != Suite().CatalogDigest || rep.Suite.Version != conformance.SuiteVersion {
		t.Errorf("JSON report: exit %d, summary %+v, suite %+v", rep.ExitCode, rep.Summary, rep.Suite)
	}
	for _, r := range rep.Results {
		listed := strings.Contains(knownFailures, r.ID)
		if listed != (r.Expectation != nil) || listed && r.Expectation.Verdict != "expected" {
			t.Errorf("%s: expectation %+v", r.ID, r.Expectation)
		}
	}
	junit, err := os.ReadFile(junitPath)
	if err != nil {
		t.Fatal(err)
	}
	j := loadSchema(t, "junit.schema.json")
	if errs := j.validate(j.root, xmlTree(t, junit), ""); len(errs) > 0 {
		t.Errorf("JUnit report violates junit.schema.json:\n  %s", strings.Join(errs, "\n  "))
	}
	for _, want := range []string{`failures="0"`, `<skipped message="expected failure, listed as FAIL in ` + file, `name="catalog_digest" value="` + Suite().CatalogDigest,
		`name="suite_version" value="` + conformance.SuiteVersion, `name="protocol_version" value="5"`} {
		if !strings.Contains(string(junit), want) {
			t.Errorf("JUnit report lacks %q", want)
		}
	}
	page, err := os.ReadFile(htmlPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"MATCHES EXPECTATIONS", Suite().CatalogDigest, "worker suite " + conformance.SuiteVersion, "3 as expected", `class="expectation expected"`, "Splash worker protocol v5"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("HTML report lacks %q", want)
		}
	}

	// A fourth bug regresses two checks that the file does not list: the run fails, and the
	// report tells the new failures from the known ones.
	code, out, _ = conform(t, knownFaults+","+regression, "-expect", file, "-json", jsonPath)
	if code != conformance.ExitFailures {
		t.Fatalf("a regression with -expect: exit %d, want 1\n%s", code, out)
	}
	if !strings.Contains(out, "New failures, not listed in "+file+" (2)") || !strings.Contains(out, "FAIL CNF-AUTHZ-06") || !strings.Contains(out, "DOES NOT CONFORM") {
		t.Errorf("the regression is not reported as new:\n%s", out)
	}
	if rep := readJSONReport(t, jsonPath); rep.Summary.Failing != 2 || rep.Summary.Expected != 3 || rep.ExitCode != 1 {
		t.Errorf("JSON summary with a regression: %+v exit %d", rep.Summary, rep.ExitCode)
	}

	// Fixing one bug leaves a stale entry: reported with the line to delete, exit 0, and 1
	// under -expect-strict.
	fixedLine := ""
	for i, line := range strings.Split(string(written), "\n") {
		if strings.Contains(line, "CNF-COMP-08") {
			fixedLine = "line " + strconv.Itoa(i+1) + ": " + strings.TrimSuffix(strings.TrimSpace(line), ",")
		}
	}
	less := "ignore-grant,skip-scope-check"
	code, out, _ = conform(t, less, "-expect", file, "-html", htmlPath)
	if code != conformance.ExitOK || !strings.Contains(out, "CNF-COMP-08 is now PASS: "+fixedLine) {
		t.Errorf("a fixed check: exit %d, want 0 and the entry %q\n%s", code, fixedLine, out)
	}
	if page, err := os.ReadFile(htmlPath); err != nil || !strings.Contains(string(page), `<div id="fixed" class="fixed-list">`) ||
		!strings.Contains(string(page), `<a href="#CNF-COMP-08">CNF-COMP-08</a> is now PASS: line`) {
		t.Errorf("the HTML report does not list the fixed entry: %v", err)
	}
	if code, out, _ = conform(t, less, "-expect", file, "-expect-strict"); code != conformance.ExitFailures {
		t.Errorf("a fixed check under -expect-strict: exit %d, want 1\n%s", code, out)
	}

	// Writing again keeps the reasons a person wrote.
	edited := strings.Replace(string(written), `"id": "CNF-COMP-11", "outcome": "FAIL", "reason": "`, `"id": "CNF-COMP-11", "outcome": "FAIL", "reason": "scope check planned; `, 1)
	if err := os.WriteFile(file, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(dir, "again.json")
	if code, out, errOut = conform(t, knownFaults, "-expect", file, "-write-expectations", again); code != conformance.ExitOK {
		t.Fatalf("rewrite: exit %d\n%s%s", code, out, errOut)
	}
	if got, _ := os.ReadFile(again); string(got) != edited {
		t.Errorf("rewriting the same failures changed the file:\n%s\nwant:\n%s", got, edited)
	}
}

// TestExpectationsFileErrors checks that a file naming a check that does not exist, or for
// another suite, is a usage error that names the entry, before any worker starts.
func TestExpectationsFileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, text, want string
		args             []string
	}{
		{"retired", `{"format": "splash-conform-expectations", "format_version": 1, "expectations": [
  {"id": "CNF-FRAME-99", "outcome": "FAIL", "reason": "x"}]}`, "line 2: expectations: the entry selects no check of the catalog: CNF-FRAME-99", nil},
		{"host", `{"format": "splash-conform-expectations", "format_version": 1, "suite": "host", "expectations": []}`, "the file is for the host suite", nil},
		{"syntax", `{"format": "splash-conform-expectations"`, "not an expectations file", nil},
		{"strict alone", "", "-expect-strict needs -expect", []string{"-expect-strict"}},
	} {
		args := tc.args
		if tc.text != "" {
			path := filepath.Join(dir, tc.name+".json")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			args = []string{"-expect", path}
		}
		var out, errOut bytes.Buffer
		if code := Main(append(args, "--", "/nonexistent/worker"), &out, &errOut); code != conformance.ExitUsage || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", tc.name, code, errOut.String(), tc.want)
		}
	}
	// The errors keep their kinds for callers of the package.
	x := conformance.ExpectFlags{File: filepath.Join(dir, "retired.json")}
	if _, err := x.Load(Suite(), CatalogEntries()); !errors.Is(err, expect.ErrUnknownCheck) {
		t.Errorf("Load: %v", err)
	}
}

// TestVersionFlag checks -version: the suite version, the protocol version and the catalog
// digest, which changes with any ID, level or requirement ID of the catalog.
func TestVersionFlag(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Main([]string{"-version"}, &out, &errOut); code != conformance.ExitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	want := "splash-conform " + conformance.SuiteVersion + "\nprotocol: Splash worker protocol v5\nworker suite: " +
		strconv.Itoa(len(Catalog())) + " checks, catalog " + Suite().CatalogDigest + "\n"
	if out.String() != want {
		t.Errorf("-version printed %q, want %q", out.String(), want)
	}
	entries := CatalogEntries()
	base := conformance.CatalogDigest(entries)
	if !strings.HasPrefix(base, "sha256:") || len(base) != len("sha256:")+64 {
		t.Errorf("digest %q", base)
	}
	reversed := slices.Clone(entries)
	slices.Reverse(reversed)
	if conformance.CatalogDigest(reversed) != base {
		t.Error("the digest depends on the order of the catalog")
	}
	for name, edit := range map[string]func(e *conformance.CatalogEntry){
		"level":       func(e *conformance.CatalogEntry) { e.Level = conformance.Should },
		"requirement": func(e *conformance.CatalogEntry) { e.Requirements = append(slices.Clone(e.Requirements), "FRM-001") },
		"id":          func(e *conformance.CatalogEntry) { e.ID = "CNF-BOOT-99" },
	} {
		changed := slices.Clone(entries)
		edit(&changed[0])
		if conformance.CatalogDigest(changed) == base {
			t.Errorf("changing the %s of a check leaves the digest as it is", name)
		}
	}
}

// TestKnownFailuresKeepsWhatStillHolds checks what -write-expectations writes when it is given
// the previous file: the failures (with their old reasons), the SKIP and INFO entries that still
// hold, the entries for checks the run did not select; not the entries that no longer hold.
func TestKnownFailuresKeepsWhatStillHolds(t *testing.T) {
	r := &conformance.Report{Suite: Suite(), Results: []conformance.Result{
		{ID: "CNF-FRAME-10", Requirements: []string{"FRM-027"}, Level: conformance.Must, Outcome: conformance.Fail, Counted: true},
		{ID: "CNF-FRAME-17", Title: "version 4 is rejected", Requirements: []string{"MSG-001"}, Level: conformance.Must, Outcome: conformance.Crash, Counted: true},
		{ID: "CNF-CANCEL-01", Requirements: []string{"CAN-016"}, Level: conformance.Must, Outcome: conformance.Skip},
		{ID: "CNF-NUMBER-01", Requirements: []string{"ENC-039"}, Level: conformance.Should, Outcome: conformance.Pass},
		{ID: "CNF-NUMBER-02", Requirements: []string{"ENC-053"}, Level: conformance.Should, Outcome: conformance.Info},
	}}
	previous := &expect.File{Expectations: []expect.Entry{
		{ID: "CNF-FRAME-10", Outcome: expect.Fail, Reason: "session id not compared"},
		{ID: "CNF-CANCEL-*", Outcome: expect.Skip, Reason: "no cancellable driver"},
		{Requirement: "ENC-039", Outcome: expect.Info, Reason: "lossy numbers"},
		{ID: "CNF-NUMBER-02", Outcome: expect.Info, Reason: "lossy numbers"},
		{ID: "CNF-BOOT-01", Outcome: expect.Fail, Reason: "not run this time", Line: 9},
	}}
	got := r.KnownFailures(previous)
	want := []expect.Entry{
		{ID: "CNF-FRAME-10", Outcome: expect.Fail, Reason: "session id not compared"},
		{ID: "CNF-FRAME-17", Outcome: expect.Fail, Reason: "recorded by -write-expectations; the check: version 4 is rejected"},
		{ID: "CNF-CANCEL-*", Outcome: expect.Skip, Reason: "no cancellable driver"},
		{ID: "CNF-NUMBER-02", Outcome: expect.Info, Reason: "lossy numbers"},
		{ID: "CNF-BOOT-01", Outcome: expect.Fail, Reason: "not run this time"},
	}
	if !slices.Equal(got.Expectations, want) {
		t.Errorf("written entries:\n%v\nwant:\n%v", got.Expectations, want)
	}
	if got.Suite != "worker" || got.CatalogDigest != Suite().CatalogDigest || got.SuiteVersion != conformance.SuiteVersion {
		t.Errorf("header %+v", got)
	}
}
