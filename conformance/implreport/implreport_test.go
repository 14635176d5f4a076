package implreport

import (
	"bytes"
	"encoding/json"
	stdhtml "html"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/conformancetest"
	"github.com/splashv5/conform/conformance/expect"
)

// writeIndex writes r as the suites write their JSON index and returns the file.
func writeIndex(t *testing.T, name string, r *conformance.Report) string {
	t.Helper()
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func suiteReport(suite string, results ...conformance.Result) *conformance.Report {
	return &conformance.Report{Suite: conformance.NewSuiteInfo(suite, nil), Worker: []string{"w"}, Started: time.Unix(0, 0), Results: results}
}

func res(id string, outcome conformance.Outcome, reqs ...string) conformance.Result {
	return conformance.Result{ID: id, Level: conformance.Must, Title: id, Requirements: reqs, Outcome: outcome, Counted: true}
}

// cell finds the cell of requirement id for implementation name.
func cell(t *testing.T, rep *Report, id, name string) Cell {
	t.Helper()
	col := -1
	for i, impl := range rep.Implementations {
		if impl.Name == name {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("no implementation %q in %+v", name, rep.Implementations)
	}
	for _, ch := range rep.Chapters {
		for _, rw := range ch.Rows {
			if rw.Requirement.ID == id {
				return rw.Cells[col]
			}
		}
	}
	t.Fatalf("no requirement %s", id)
	return Cell{}
}

func meeting(t *testing.T, rep *Report, id string) int {
	t.Helper()
	for _, ch := range rep.Chapters {
		for _, rw := range ch.Rows {
			if rw.Requirement.ID == id {
				return rw.Meeting
			}
		}
	}
	t.Fatalf("no requirement %s", id)
	return 0
}

// TestMergeJudgesEachImplementation merges a worker report and a host report of one port, the
// worker report of another, an interop pair and a matrix, and checks every kind of cell.
func TestMergeJudgesEachImplementation(t *testing.T) {
	expected := res("CNF-FRAME-03", conformance.Fail, "FRM-026")
	expected.Expectation = &conformance.Expectation{Verdict: expect.Expected}
	goWorker := writeIndex(t, "go-worker.json", suiteReport("worker",
		res("CNF-FRAME-01", conformance.Pass, "FRM-025", "WRK-091"),
		res("CNF-FRAME-02", conformance.Fail, "FRM-025"),
		expected,
		res("CNF-CANCEL-01", conformance.Skip, "CAN-006"),
		res("CNF-NUMBER-01", conformance.Info, "ENC-039"),
	))
	jsWorker := writeIndex(t, "js.json", suiteReport("worker",
		res("CNF-FRAME-01", conformance.Pass, "FRM-025", "WRK-091"),
		res("CNF-FRAME-04", conformance.Crash, "FRM-026"),
	))
	jsHost := writeIndex(t, "js-host.json", suiteReport("host", res("CNF-HOPEN-01", conformance.Pass, "HDR-001", "FRM-025")))
	// One interop pair: a failing scenario citing a worker rule, a host rule and a wire rule.
	pair := writeIndex(t, "pair.json", suiteReport("interop",
		res("CNF-IOP-ECHO-01", conformance.Fail, "WRK-091", "HDR-002", "FRM-027")))
	matrix := writeFile(t, "matrix.json", `{"format_version": 1, "cells": [
		{"host": "js", "worker": "go", "verdict": "PASS", "scenarios": [
			{"id": "CNF-IOP-ECHO-02", "title": "t", "requirements": ["HDR-003", "WRK-092", "BOOT-006"], "outcome": "PASS"}]}]}`)

	rep, err := Merge([]Input{
		ParseInput("go=" + goWorker), ParseInput("js=" + jsWorker), ParseInput("js=" + jsHost),
		ParseInput("js/go=" + pair), ParseInput(matrix),
	}, Catalogs{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Implementations) != 2 || rep.Implementations[0].Name != "go" || rep.Implementations[1].Name != "js" {
		t.Fatalf("implementations = %+v, want go and js in order of appearance", rep.Implementations)
	}
	want := []struct {
		id, impl string
		state    conformance.RequirementState
	}{
		{"FRM-025", "go", conformance.ReqFailed},          // a pass and a failure: the failure wins
		{"FRM-026", "go", conformance.ReqExpectedFailure}, // listed in the expectations
		{"CAN-006", "go", conformance.ReqNotApplicable},   // skipped
		{"ENC-039", "go", conformance.ReqDeviates},        // INFO
		{"FRM-025", "js", conformance.ReqMet},             // the worker and the host report both pass it
		{"FRM-026", "js", conformance.ReqFailed},          // a crash
		{"HDR-001", "js", conformance.ReqMet},             // from the host report
		{"WRK-091", "go", conformance.ReqFailed},          // the pair's failure speaks for the worker on WRK
		{"WRK-091", "js", conformance.ReqMet},             // ... and not for the host
		{"HDR-002", "js", conformance.ReqFailed},          // ... but for the host on HDR
		{"HDR-002", "go", conformance.ReqUnjudged},        // ... and not for the worker
		{"FRM-027", "go", conformance.ReqFailed},          // the wire core binds both
		{"FRM-027", "js", conformance.ReqFailed},
		{"HDR-003", "js", conformance.ReqMet}, // the matrix cell
		{"WRK-092", "go", conformance.ReqMet},
		{"BOOT-006", "go", conformance.ReqMet},
		{"BOOT-006", "js", conformance.ReqMet},
		{"BOOT-001", "go", conformance.ReqUnjudged},
	}
	for _, w := range want {
		if got := cell(t, rep, w.id, w.impl).State; got != w.state {
			t.Errorf("%s × %s = %s, want %s", w.id, w.impl, got, w.state)
		}
	}
	if ev := cell(t, rep, "WRK-091", "go").Evidence; len(ev) != 2 || ev[1].Check != "CNF-IOP-ECHO-01" || ev[1].Peer != "js" {
		t.Errorf("WRK-091 × go evidence = %+v, want the worker check and the pair's scenario with peer js", ev)
	}
	for id, n := range map[string]int{"BOOT-006": 2, "FRM-025": 1, "FRM-027": 0, "BOOT-001": 0} {
		if got := meeting(t, rep, id); got != n {
			t.Errorf("%s is met by %d implementations, want %d", id, got, n)
		}
	}
	if failed := rep.FailedMusts(0); len(failed) == 0 || !strings.HasPrefix(failed[0], "FRM-025 (CNF-FRAME-02)") {
		t.Errorf("go's failed MUSTs = %v, want FRM-025 first, naming only its failing check", failed)
	}
}

// TestMergeListsWhatOlderReportsCannotJudge feeds a report written by an earlier suite
// version in format 2 (without the requirement list), whose catalog lacks a check the current
// catalog has: the merge reads it and names the requirements it could not judge.
func TestMergeListsWhatOlderReportsCannotJudge(t *testing.T) {
	old := writeFile(t, "old.json", `{"tool": "splash-conform", "format_version": 2, "protocol_version": 5,
		"suite": {"name": "worker", "version": "1.0.0", "checks": 1, "catalog_digest": "sha256:00"},
		"results": [{"id": "CNF-FRAME-01", "level": "MUST", "title": "t", "requirements": ["FRM-025"], "outcome": "PASS"}]}`)
	catalogs := Catalogs{"worker": {
		{ID: "CNF-FRAME-01", Level: conformance.Must, Requirements: []string{"FRM-025"}},
		{ID: "CNF-SECRET-01", Level: conformance.Must, Requirements: []string{"SEC-003", "PRF-028"}},
	}}
	rep, err := Merge([]Input{ParseInput(old)}, catalogs)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Implementations[0].Name != "old" {
		t.Errorf("a report without NAME= is named %q, want its file's base name", rep.Implementations[0].Name)
	}
	if len(rep.Gaps) != 1 || strings.Join(rep.Gaps[0].Requirements, " ") != "SEC-003 PRF-028" && strings.Join(rep.Gaps[0].Requirements, " ") != "PRF-028 SEC-003" {
		t.Fatalf("gaps = %+v, want the two requirements only the newer check judges", rep.Gaps)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "written by suite 1.0.0") || !strings.Contains(text.String(), "could not judge 2 requirements") {
		t.Errorf("the summary does not say what the 1.0.0 report could not judge:\n%s", text.String())
	}
}

// TestMergeRefusesWhatItCannotRead: a file that is not a report, a format from a newer runner,
// an interop pair without HOST/WORKER and a matrix given a name are refused with a message
// that says what to do.
func TestMergeRefusesWhatItCannotRead(t *testing.T) {
	pair := writeIndex(t, "pair.json", suiteReport("interop", res("CNF-IOP-ECHO-01", conformance.Pass, "IOP-002")))
	cases := []struct {
		arg, want string
	}{
		{writeFile(t, "x.json", `{"hello": 1}`), "neither a JSON index"},
		{writeFile(t, "x.json", `not json`), "not a splash-conform report"},
		{writeFile(t, "x.json", `{"tool": "splash-conform", "format_version": 9, "suite": {"name": "worker"}}`), "format 9"},
		{"p=" + pair, "name them HOST/WORKER="},
		{"m=" + writeFile(t, "m.json", `{"format_version": 1, "cells": []}`), "without NAME="},
		{filepath.Join(t.TempDir(), "missing.json"), "no such file"},
	}
	for _, c := range cases {
		_, err := Merge([]Input{ParseInput(c.arg)}, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one saying %q", c.arg, err, c.want)
		}
	}
}

// TestReportCommand runs the subcommand on a report and checks its exit statuses and files:
// the JSON holds every requirement with a cell per implementation, and the HTML page is
// self-contained under the suites' content security policy (no style attribute, no extra
// style or script).
func TestReportCommand(t *testing.T) {
	in := writeIndex(t, "w.json", suiteReport("worker", res("CNF-FRAME-01", conformance.Pass, "FRM-025")))
	dir := t.TempDir()
	jsonOut, htmlOut := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html")
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"-json", jsonOut, "-html", htmlOut, "impl=" + in}, &stdout, &stderr, Catalogs{}); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "Implementation report: 1 implementations") {
		t.Errorf("stdout = %q", stdout.String())
	}
	data, err := os.ReadFile(jsonOut)
	if err != nil {
		t.Fatal(err)
	}
	var js struct {
		Kind         string `json:"kind"`
		Requirements []struct {
			ID    string                     `json:"id"`
			Cells map[string]json.RawMessage `json:"cells"`
		} `json:"requirements"`
	}
	if err := json.Unmarshal(data, &js); err != nil {
		t.Fatal(err)
	}
	if js.Kind != "implementation-report" || len(js.Requirements) < 100 {
		t.Fatalf("JSON report kind %q with %d requirements", js.Kind, len(js.Requirements))
	}
	for _, r := range js.Requirements {
		if _, ok := r.Cells["impl"]; !ok {
			t.Fatalf("%s has no cell for impl", r.ID)
		}
	}
	page, err := os.ReadFile(htmlOut)
	if err != nil {
		t.Fatal(err)
	}
	assets := conformance.HTMLAssets()
	if !strings.Contains(string(page), `content="`+stdhtml.EscapeString(assets.CSP)+`"`) {
		t.Error("the page does not keep to the suites' content security policy")
	}
	if ids := conformancetest.CheckPage(t, string(page)); !ids["FRM-025"] {
		t.Error("the page has no row for FRM-025")
	}
	for _, args := range [][]string{{}, {"-json"}, {filepath.Join(dir, "missing.json")}} {
		stderr.Reset()
		if code := Main(args, &stdout, &stderr, Catalogs{}); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}
