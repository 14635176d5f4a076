package expect

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var catalog = []Check{
	{ID: "CNF-FRAME-06", Requirements: []string{"FRM-025"}},
	{ID: "CNF-FRAME-10", Requirements: []string{"FRM-027"}},
	{ID: "CNF-CANCEL-01", Requirements: []string{"CAN-016", "CAN-006"}},
	{ID: "CNF-CANCEL-02", Requirements: []string{"CAN-015"}},
	{ID: "CNF-NUMBER-01", Requirements: []string{"ENC-039"}},
}

const sample = `{
  "format": "splash-conform-expectations",
  "format_version": 1,
  "suite": "worker",
  "expectations": [
    {"id": "CNF-CANCEL-*", "outcome": "SKIP", "reason": "no cancellable driver"},
    {"id": "CNF-CANCEL-02", "outcome": "FAIL", "reason": "too_late written first"},

    {"requirement": "FRM-027",
     "outcome": "FAIL", "reason": "session id not checked"},
    {"requirement": "ENC-039", "outcome": "INFO", "reason": "lossy numbers <&>"}
  ]
}
`

// TestParseRecordsLines checks decoding and the line of every entry.
func TestParseRecordsLines(t *testing.T) {
	f, err := Parse([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, e := range f.Expectations {
		lines = append(lines, e.Line)
	}
	if diff := cmp.Diff([]int{6, 7, 9, 11}, lines); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if err := f.Check("worker", catalog); err != nil {
		t.Errorf("Check: %v", err)
	}
}

// TestLookupPrefersTheMostSpecificEntry checks the precedence: exact ID, pattern, requirement.
func TestLookupPrefersTheMostSpecificEntry(t *testing.T) {
	f, err := Parse([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		check   Check
		outcome string
		found   bool
	}{
		{catalog[0], "", false},
		{catalog[1], Fail, true},
		{catalog[2], Skip, true},
		{catalog[3], Fail, true},
		{catalog[4], Info, true},
	} {
		e, ok := f.Lookup(tc.check)
		if ok != tc.found || e.Outcome != tc.outcome {
			t.Errorf("%s: entry %+v found %v, want outcome %q found %v", tc.check.ID, e, ok, tc.outcome, tc.found)
		}
	}
}

// TestQualifiedIDs checks entries for checks that run in several places (QUALIFIER/ID): a plain
// entry names the check everywhere, a qualified one where its qualifier matches, and wins over
// a plain entry of the same kind.
func TestQualifiedIDs(t *testing.T) {
	f, err := Parse([]byte(`{"format": "splash-conform-expectations", "format_version": 1, "expectations": [
  {"id": "CNF-IOP-ECHO-01", "outcome": "FAIL", "reason": "everywhere"},
  {"id": "host a/worker b/CNF-IOP-ECHO-01", "outcome": "INFO", "reason": "one pair"},
  {"id": "*/worker b/CNF-IOP-NUMBER-*", "outcome": "INFO", "reason": "one worker, every host"}
]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id, outcome string
	}{
		{"host a/worker b/CNF-IOP-ECHO-01", Info},
		{"host a/worker c/CNF-IOP-ECHO-01", Fail},
		{"CNF-IOP-ECHO-01", Fail},
		{"host z/worker b/CNF-IOP-NUMBER-01", Info},
		{"host z/worker c/CNF-IOP-NUMBER-01", ""},
		{"CNF-IOP-NUMBER-01", ""},
	} {
		e, _ := f.Lookup(Check{ID: tc.id})
		if e.Outcome != tc.outcome {
			t.Errorf("%s: entry %v, want outcome %q", tc.id, e, tc.outcome)
		}
	}
	err = f.Check("", []Check{{ID: "host a/worker c/CNF-IOP-ECHO-01"}, {ID: "host z/worker b/CNF-IOP-NUMBER-01"}})
	if !errors.Is(err, ErrUnknownCheck) || !strings.Contains(err.Error(), "line 3:") ||
		strings.Contains(err.Error(), "line 2:") || strings.Contains(err.Error(), "line 4:") {
		t.Errorf("Check: %v, want only the entry of line 3 (a pair the catalog lacks) refused", err)
	}
}

// TestJudge checks every verdict.
func TestJudge(t *testing.T) {
	fail, skip := Entry{ID: "X", Outcome: Fail}, Entry{ID: "X", Outcome: Skip}
	for _, tc := range []struct {
		e       Entry
		found   bool
		outcome string
		want    Verdict
	}{
		{Entry{}, false, "FAIL", Unlisted},
		{fail, true, "FAIL", Expected},
		{fail, true, "CRASH", Expected},
		{fail, true, "TIMEOUT", Expected},
		{fail, true, "PASS", Fixed},
		{fail, true, "SKIP", Fixed},
		{skip, true, "SKIP", Expected},
		{skip, true, "PASS", Fixed},
		{skip, true, "CRASH", Regressed},
		{Entry{ID: "X", Outcome: Info}, true, "FAIL", Regressed},
	} {
		if got := Judge(tc.e, tc.found, tc.outcome); got != tc.want {
			t.Errorf("Judge(%s, %v, %s) = %q, want %q", tc.e.Outcome, tc.found, tc.outcome, got, tc.want)
		}
	}
}

// TestParseRejects checks each rule's error kind.
func TestParseRejects(t *testing.T) {
	wrap := func(entries string) string {
		return `{"format": "splash-conform-expectations", "format_version": 1, "expectations": [` + entries + `]}`
	}
	for _, tc := range []struct {
		name, text string
		want       error
	}{
		{"not JSON", `{"format":`, ErrSyntax},
		{"unknown member", `{"format": "splash-conform-expectations", "format_version": 1, "expectations": [], "x": 1}`, ErrSyntax},
		{"other format", `{"format": "x", "format_version": 1, "expectations": []}`, ErrSyntax},
		{"newer version", `{"format": "splash-conform-expectations", "format_version": 2, "expectations": []}`, ErrSyntax},
		{"two objects", wrap(``) + `{}`, ErrSyntax},
		{"no selector", wrap(`{"outcome": "FAIL", "reason": "r"}`), ErrEntry},
		{"two selectors", wrap(`{"id": "CNF-A-01", "requirement": "FRM-001", "outcome": "FAIL", "reason": "r"}`), ErrEntry},
		{"bad outcome", wrap(`{"id": "CNF-A-01", "outcome": "PASS", "reason": "r"}`), ErrEntry},
		{"no reason", wrap(`{"id": "CNF-A-01", "outcome": "FAIL", "reason": " "}`), ErrEntry},
		{"bad requirement", wrap(`{"requirement": "frm-1", "outcome": "FAIL", "reason": "r"}`), ErrEntry},
		{"bad pattern", wrap(`{"id": "CNF-[", "outcome": "FAIL", "reason": "r"}`), ErrEntry},
		{"duplicate", wrap(`{"id": "CNF-A-01", "outcome": "FAIL", "reason": "r"}, {"id": "CNF-A-01", "outcome": "SKIP", "reason": "r"}`), ErrEntry},
	} {
		_, err := Parse([]byte(tc.text))
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
		}
	}
}

// TestCheckRejectsWhatSelectsNothing checks that a listed ID, pattern or requirement that no
// check of the catalog has is an error, and that a file for another suite is refused.
func TestCheckRejectsWhatSelectsNothing(t *testing.T) {
	f := &File{Suite: "host", Expectations: []Entry{
		{ID: "CNF-FRAME-99", Outcome: Fail, Reason: "retired", Line: 3},
		{ID: "CNF-OPEN-*", Outcome: Fail, Reason: "r", Line: 4},
		{Requirement: "FRM-001", Outcome: Fail, Reason: "r", Line: 5},
		{ID: "CNF-FRAME-06", Outcome: Fail, Reason: "r", Line: 6},
	}}
	err := f.Check("worker", catalog)
	if !errors.Is(err, ErrUnknownCheck) || !errors.Is(err, ErrSuite) {
		t.Fatalf("error %v", err)
	}
	for _, want := range []string{"line 3", "CNF-FRAME-99", "line 4", "CNF-OPEN-*", "line 5", "requirement FRM-001"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "line 6") {
		t.Errorf("a valid entry is reported: %v", err)
	}
}

// TestWriteRoundTrips checks that a written file parses back to the same entries, one per line.
func TestWriteRoundTrips(t *testing.T) {
	in := &File{Suite: "worker", SuiteVersion: "1.0.0", CatalogDigest: "sha256:00", Expectations: []Entry{
		{ID: "CNF-FRAME-10", Outcome: Fail, Reason: `quotes " and "," and <html> & \ slashes`},
		{Requirement: "ENC-039", Outcome: Info, Reason: "lossy"},
	}}
	var out bytes.Buffer
	if err := Write(&out, in); err != nil {
		t.Fatal(err)
	}
	back, err := Parse(out.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	in.Format, in.FormatVersion = Format, FormatVersion
	in.Expectations[0].Line, in.Expectations[1].Line = 8, 9
	if diff := cmp.Diff(in, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s\n%s", diff, out.String())
	}
	lines := strings.Split(out.String(), "\n")
	if lines[7] != "    "+in.Expectations[0].String()+"," || !strings.Contains(lines[7], "<html> &") {
		t.Errorf("line 8 is %q", lines[7])
	}
	var empty bytes.Buffer
	if err := Write(&empty, &File{}); err != nil {
		t.Fatal(err)
	}
	if f, err := Parse(empty.Bytes()); err != nil || len(f.Expectations) != 0 {
		t.Errorf("empty file: %v %+v\n%s", err, f, empty.String())
	}
}

// TestReadFileBoundsTheSize checks that a file over MaxFileSize is refused.
func TestReadFileBoundsTheSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(path, bytes.Repeat([]byte(" "), MaxFileSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(path); !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("ReadFile: %v", err)
	}
	small := filepath.Join(t.TempDir(), "small.json")
	if err := os.WriteFile(small, []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err := ReadFile(small); err != nil || len(f.Expectations) != 4 {
		t.Errorf("ReadFile: %v", err)
	}
}
