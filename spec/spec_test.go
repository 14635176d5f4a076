package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// TestRequirementsAreWellFormed parses every chapter and fails on malformed items, duplicate IDs,
// unknown prefixes, mixed prefixes within a chapter, numbering gaps and re-defined retired IDs.
func TestRequirementsAreWellFormed(t *testing.T) {
	reqs, err := Requirements()
	if err != nil {
		t.Fatalf("the specification does not parse cleanly:\n%v", err)
	}
	if len(reqs) == 0 {
		t.Fatal("no requirement found in the embedded chapters")
	}
	wantChapters := map[string]string{
		"01-encoding.md":     "ENC",
		"02-messages.md":     "MSG",
		"03-framing.md":      "FRM",
		"04-bootstrap.md":    "BOOT",
		"05-manifests.md":    "MAN",
		"06-fingerprints.md": "FP",
		"07-errors.md":       "ERR",
	}
	seen := map[string]int{}
	for _, r := range reqs {
		if want, ok := wantChapters[r.Chapter]; ok && r.Prefix != want {
			t.Errorf("%s:%d: %s in a chapter whose prefix is %s", r.Chapter, r.Line, r.ID, want)
		}
		if r.Text == "" {
			t.Errorf("%s:%d: %s has no text", r.Chapter, r.Line, r.ID)
		}
		seen[r.Chapter]++
	}
	for chapter := range wantChapters {
		if seen[chapter] == 0 {
			t.Errorf("chapter %s defines no requirement", chapter)
		}
	}
	if _, err := Retired(); err != nil {
		t.Fatalf("retired list: %v", err)
	}
}

// TestFind looks up a requirement by ID.
func TestFind(t *testing.T) {
	r, ok := Find("FRM-001")
	if !ok {
		t.Fatal("FRM-001 not found")
	}
	if r.Chapter != "03-framing.md" || r.Level != Must || r.Number != 1 || r.Prefix != "FRM" {
		t.Errorf("FRM-001 = %+v", r)
	}
	if _, ok := Find("FRM-999"); ok {
		t.Error("FRM-999 found, but it is not defined")
	}
}

// TestCitationsNameExistingRequirements fails when a test, vector or conformance check cites an
// ID that is not defined, or one that is retired.
func TestCitationsNameExistingRequirements(t *testing.T) {
	// A parse problem is reported by TestRequirementsAreWellFormed; check what did parse.
	reqs, _ := Requirements()
	retired, _ := Retired()
	citations := repositoryCitations(t)
	defined := map[string]bool{}
	for _, r := range reqs {
		defined[r.ID] = true
	}
	retiredSet := map[string]bool{}
	for _, r := range retired {
		retiredSet[r.ID] = true
	}
	var unknown, stale []string
	for _, c := range citations {
		switch {
		case retiredSet[c.ID]:
			stale = append(stale, fmt.Sprintf("%s:%d cites retired %s", c.File, c.Line, c.ID))
		case !defined[c.ID]:
			unknown = append(unknown, fmt.Sprintf("%s:%d cites %s", c.File, c.Line, c.ID))
		}
	}
	if len(unknown) > 0 {
		t.Errorf("%d citation(s) name requirements that do not exist:\n  %s", len(unknown), strings.Join(unknown, "\n  "))
	}
	if len(stale) > 0 {
		t.Errorf("%d citation(s) name retired requirements:\n  %s", len(stale), strings.Join(stale, "\n  "))
	}
}

// TestEveryRequirementIsCited fails while any requirement is cited by nothing, and lists all of
// them, grouped by chapter.
func TestEveryRequirementIsCited(t *testing.T) {
	// A parse problem is reported by TestRequirementsAreWellFormed; check what did parse.
	reqs, _ := Requirements()
	cited := map[string]bool{}
	for _, c := range repositoryCitations(t) {
		cited[c.ID] = true
	}
	var lines []string
	byChapter := map[string][]string{}
	var chapters []string
	for _, r := range reqs {
		if cited[r.ID] {
			continue
		}
		if _, ok := byChapter[r.Chapter]; !ok {
			chapters = append(chapters, r.Chapter)
		}
		byChapter[r.Chapter] = append(byChapter[r.Chapter], r.ID)
	}
	total := 0
	for _, chapter := range chapters {
		ids := byChapter[chapter]
		total += len(ids)
		lines = append(lines, fmt.Sprintf("%s (%d): %s", chapter, len(ids), strings.Join(ids, " ")))
	}
	if total > 0 {
		t.Errorf("%d of %d requirement(s) are cited by no test, vector or conformance check:\n  %s",
			total, len(reqs), strings.Join(lines, "\n  "))
	}
}

// repositoryCitations scans the repository that contains this package.
func repositoryCitations(t *testing.T) []Citation {
	t.Helper()
	root, err := FindModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	citations, err := Cited(root)
	if err != nil {
		t.Fatal(err)
	}
	return citations
}

// TestParserRejectsBadSpecifications exercises the parser on small synthetic chapters.
func TestParserRejectsBadSpecifications(t *testing.T) {
	good := "# X\n\n- **ENC-001** (MUST) One.\n  continued here.\n\n  > **Decision.** note\n\n- **ENC-002** (MUST NOT) Two.\n" +
		"- **ENC-003** (SHOULD) Three.\n- **ENC-004** (MAY) Four.\n\n```\n- **ENC-001** (MUST) inside a fence is ignored\n```\n"
	cases := []struct {
		name    string
		files   map[string]string
		wantErr string // substring; empty means no error
		wantIDs []string
	}{
		{name: "good", files: map[string]string{"01-a.md": good},
			wantIDs: []string{"ENC-001", "ENC-002", "ENC-003", "ENC-004"}},
		{name: "duplicate", files: map[string]string{"01-a.md": good, "02-b.md": "- **ENC-004** (MUST) again.\n"},
			wantErr: "already defined"},
		{name: "two digits", files: map[string]string{"01-a.md": "- **ENC-01** (MUST) x\n"},
			wantErr: "malformed"},
		{name: "missing level", files: map[string]string{"01-a.md": "- **ENC-001** x\n"},
			wantErr: "malformed"},
		{name: "unknown level", files: map[string]string{"01-a.md": "- **ENC-001** (MUSTN'T) x\n"},
			wantErr: "malformed"},
		{name: "lowercase prefix", files: map[string]string{"01-a.md": "- **enc-001** (MUST) x\n"},
			wantErr: "malformed"},
		{name: "unknown prefix", files: map[string]string{"01-a.md": "- **XYZ-001** (MUST) x\n"},
			wantErr: "unknown prefix"},
		{name: "mixed prefixes", files: map[string]string{"01-a.md": "- **ENC-001** (MUST) x\n- **MSG-001** (MUST) y\n"},
			wantErr: "chapter's prefix"},
		{name: "gap", files: map[string]string{"01-a.md": "- **ENC-001** (MUST) x\n- **ENC-010** (MUST) y\n"},
			wantIDs: []string{"ENC-001", "ENC-010"}},
		{name: "gap with retirement", files: map[string]string{
			"01-a.md":   "- **ENC-001** (MUST) x\n- **ENC-003** (MUST) y\n",
			"README.md": "# Spec\n\n## Retired\n\n- **ENC-002** (retired) merged into ENC-001.\n"},
			wantIDs: []string{"ENC-001", "ENC-003"}},
		{name: "retired then defined", files: map[string]string{
			"01-a.md":   "- **ENC-001** (MUST) x\n",
			"README.md": "## Retired\n\n- **ENC-001** (retired) gone.\n"},
			wantErr: "retired and must not be defined"},
		{name: "retired outside section", files: map[string]string{"01-a.md": "- **ENC-001** (retired) gone.\n"},
			wantErr: "outside the Retired section"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for name, body := range tc.files {
				fsys[name] = &fstest.MapFile{Data: []byte(body)}
			}
			d := parseChapters(fsys)
			if tc.wantErr == "" {
				if d.err != nil {
					t.Fatalf("unexpected error: %v", d.err)
				}
			} else if d.err == nil || !strings.Contains(d.err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want one containing %q", d.err, tc.wantErr)
			}
			if tc.wantIDs != nil {
				var got []string
				for _, r := range d.requirements {
					got = append(got, r.ID)
				}
				if !slices.Equal(got, tc.wantIDs) {
					t.Fatalf("IDs = %v, want %v", got, tc.wantIDs)
				}
			}
		})
	}
}

// TestParserKeepsLevelAndText checks the fields of a parsed item, including a continuation line
// and a decision note that must not leak into the text.
func TestParserKeepsLevelAndText(t *testing.T) {
	body := "- **FP-001** (MUST NOT) First line\n  second line.\n\n  > **Decision.** not part of the text.\n"
	reqs, _, errs := parseChapter("06-x.md", []byte(body))
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if len(reqs) != 1 {
		t.Fatalf("got %d requirements", len(reqs))
	}
	want := Requirement{ID: "FP-001", Prefix: "FP", Number: 1, Level: MustNot, Chapter: "06-x.md", Line: 1,
		Text: "First line second line."}
	if reqs[0] != want {
		t.Fatalf("got %+v, want %+v", reqs[0], want)
	}
}

// TestParserReadsTheImplementationOnlyMarker checks the marker of a requirement that binds only
// this implementation: its reason is kept, the text loses it, and a marker without a reason or a
// second marker is an error.
func TestParserReadsTheImplementationOnlyMarker(t *testing.T) {
	body := "- **RUN-001** (MUST) The runtime MUST do x [implementation only: the Go runtime's own\n  bookkeeping, invisible on the wire] before y.\n"
	reqs, _, errs := parseChapter("21-x.md", []byte(body))
	if len(errs) != 0 || len(reqs) != 1 {
		t.Fatalf("%d requirements, errors %v", len(reqs), errs)
	}
	if got := reqs[0]; got.ImplementationOnly != "the Go runtime's own bookkeeping, invisible on the wire" || got.Text != "The runtime MUST do x before y." {
		t.Errorf("got reason %q, text %q", got.ImplementationOnly, got.Text)
	}
	for _, bad := range []string{
		"- **RUN-001** (MUST) x [implementation only: ] y.\n",
		"- **RUN-001** (MUST) x [implementation only: a] y [implementation only: b].\n",
	} {
		if _, _, errs := parseChapter("21-x.md", []byte(bad)); len(errs) == 0 {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestParserReadsTheCheckNeededMarker checks the markers of a requirement that awaits a
// conformance check or a vector: what is needed is kept, the text loses it, and an empty marker, a
// second marker or an implementation-only marker beside it are errors.
func TestParserReadsTheCheckNeededMarker(t *testing.T) {
	body := "- **RUN-001** (MUST) The runtime MUST do x [check needed: send x and\n  watch for y] before y.\n"
	reqs, _, errs := parseChapter("21-x.md", []byte(body))
	if len(errs) != 0 || len(reqs) != 1 {
		t.Fatalf("%d requirements, errors %v", len(reqs), errs)
	}
	if got := reqs[0]; got.Needed != "send x and watch for y" || got.NeededKind != "check" || got.Text != "The runtime MUST do x before y." || got.ImplementationOnly != "" {
		t.Errorf("got %s needed %q, text %q, reason %q", got.NeededKind, got.Needed, got.Text, got.ImplementationOnly)
	}
	reqs, _, errs = parseChapter("21-x.md", []byte("- **RUN-002** (MUST) y [vector needed: a group of cases].\n"))
	if len(errs) != 0 || len(reqs) != 1 || reqs[0].NeededKind != "vector" || reqs[0].Needed != "a group of cases" || reqs[0].Text != "y." {
		t.Errorf("vector marker: %+v, %v", reqs, errs)
	}
	for _, bad := range []string{
		"- **RUN-001** (MUST) x [check needed: ] y.\n",
		"- **RUN-001** (MUST) x [check needed: a] y [check needed: b].\n",
		"- **RUN-001** (MUST) x [check needed: a] y [implementation only: b].\n",
		"- **RUN-001** (MUST) x [check needed: a] y [vector needed: b].\n",
		"- **RUN-001** (MUST) x [vector needed: ] y.\n",
	} {
		if _, _, errs := parseChapter("21-x.md", []byte(bad)); len(errs) == 0 {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestCitedScansOnlyCitingFiles builds a small tree and checks which files count as citations.
func TestCitedScansOnlyCitingFiles(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"go.mod":                             "module example\n",
		"a/x_test.go":                        "// Spec: ENC-001, MSG-002\n\n// FRM-003\n",
		"a/x.go":                             "// ENC-004 in a non-test file does not count\n",
		"vectors/v.json":                     `{"requirements":["BOOT-005"]}`,
		"vectors/sub/w.json":                 `{"requirements":["MAN-006"]}`,
		"conformance/check/c.go":             "// Spec: FP-007\n",
		"impl/x/xtest/suite.go":              "// Spec: STO-020\n",
		"impl/x/latest/notes.go":             "// Spec: STO-021 (a name ending in test is not enough)\n",
		"impl/x/plain.go":                    "// Spec: STO-022 (not a test-support package)\n",
		"conformance/check/testdata/t.go":    "// Spec: ERR-008 (testdata is skipped)\n",
		"spec/spec_test.go":                  "// ENC-009 in the spec package does not count\n",
		".hidden/h_test.go":                  "// ENC-010 hidden\n",
		"docs/guide.md":                      "ENC-011 in docs does not count\n",
		"b/notanid_test.go":                  "// XENC-012, ENC-0133, ENC-14\n",
		"vectors/readme.txt":                 "ENC-015\n",
		"conformance/README.md":              "ENC-016\n",
		"conformance/deep/er/more/d_test.go": "/* JRN-017 */\n",
	}
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Cited(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []Citation{
		{ID: "ENC-001", File: "a/x_test.go", Line: 1},
		{ID: "MSG-002", File: "a/x_test.go", Line: 1},
		{ID: "FRM-003", File: "a/x_test.go", Line: 3},
		{ID: "FP-007", File: "conformance/check/c.go", Line: 1},
		{ID: "JRN-017", File: "conformance/deep/er/more/d_test.go", Line: 1},
		{ID: "STO-020", File: "impl/x/xtest/suite.go", Line: 1},
		{ID: "MAN-006", File: "vectors/sub/w.json", Line: 1},
		{ID: "BOOT-005", File: "vectors/v.json", Line: 1},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Cited =\n%v\nwant\n%v", got, want)
	}
	nested := filepath.Join(root, "a")
	if r, err := FindModuleRoot(nested); err != nil || r != root {
		t.Fatalf("FindModuleRoot(%s) = %q, %v; want %q", nested, r, err, root)
	}
}
