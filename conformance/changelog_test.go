package conformance_test

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/host"
	"github.com/splashv5/conform/conformance/interop"
	"github.com/splashv5/conform/conformance/worker"
)

// This file holds the changelog test: CHANGELOG.md, replayed over the 1.0.0 catalogs
// (catalog-1.0.0.txt), must give the catalogs in the code, and each released version's digests.

// suites are the catalog suites, in the order of their digests in a "Catalog digests:" line.
var suites = []string{"worker", "host", "interop"}

// catalogKey names one check of one suite.
type catalogKey struct{ suite, id string }

// catalogState is a set of catalogs: every check of every suite.
type catalogState map[catalogKey]conformance.CatalogEntry

func (s catalogState) digest(suite string) string {
	var entries []conformance.CatalogEntry
	for k, e := range s {
		if k.suite == suite {
			entries = append(entries, e)
		}
	}
	return conformance.CatalogDigest(entries)
}

// changelogEntry is one line "- added|changed|retired ID ...".
type changelogEntry struct {
	line  int
	op    string
	suite string
	entry conformance.CatalogEntry
}

// changelogSection is one "## VERSION" section.
type changelogSection struct {
	version string // "Unreleased" or X.Y.Z
	line    int
	digests map[string]string
	entries []changelogEntry
}

var (
	versionHeading = regexp.MustCompile(`^## (Unreleased|[0-9]+\.[0-9]+\.[0-9]+)$`)
	suiteHeading   = regexp.MustCompile(`^### (Worker|Host|Interop) suite$`)
	entryStart     = regexp.MustCompile(`^- (added|changed|retired)\b`)
	entryLine      = regexp.MustCompile(`^- (added|changed) (CNF-[A-Z]+(?:-[A-Z]+)?-[0-9]{2}) \((MUST|SHOULD); ([A-Z]+-[0-9]{3}(?:, [A-Z]+-[0-9]{3})*)\): \S.*$|^- (retired) (CNF-[A-Z]+(?:-[A-Z]+)?-[0-9]{2}): \S.*$`)
	// The interop digest is absent from the versions released before the interop catalog.
	digestLine = regexp.MustCompile("^Catalog digests: worker `(sha256:[0-9a-f]{64})`, host `(sha256:[0-9a-f]{64})`(?:, interop `(sha256:[0-9a-f]{64})`)?\\.$")
)

// parseChangelog reads the sections of the changelog, newest first as written.
func parseChangelog(text string) ([]changelogSection, error) {
	var sections []changelogSection
	var errs []error
	suite := ""
	fence := false
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		if strings.HasPrefix(line, "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		if m := versionHeading.FindStringSubmatch(line); m != nil {
			sections = append(sections, changelogSection{version: m[1], line: n, digests: map[string]string{}})
			suite = ""
			continue
		}
		if strings.HasPrefix(line, "## ") {
			if len(sections) > 0 {
				errs = append(errs, fmt.Errorf("line %d: %q is not a version heading (## Unreleased or ## X.Y.Z)", n, line))
			}
			continue
		}
		if len(sections) == 0 {
			continue
		}
		sec := &sections[len(sections)-1]
		switch {
		case suiteHeading.MatchString(line):
			suite = strings.ToLower(suiteHeading.FindStringSubmatch(line)[1])
		case strings.HasPrefix(line, "Catalog digests:"):
			m := digestLine.FindStringSubmatch(line)
			if m == nil {
				errs = append(errs, fmt.Errorf("line %d: want \"Catalog digests: worker `sha256:…`, host `sha256:…`, interop `sha256:…`.\"", n))
				continue
			}
			sec.digests["worker"], sec.digests["host"], sec.digests["interop"] = m[1], m[2], m[3]
		case entryStart.MatchString(line):
			m := entryLine.FindStringSubmatch(line)
			switch {
			case m == nil:
				errs = append(errs, fmt.Errorf("line %d: %q does not follow the entry format", n, line))
			case suite == "":
				errs = append(errs, fmt.Errorf("line %d: entry outside a ### Worker suite, ### Host suite or ### Interop suite heading", n))
			case m[1] != "":
				sec.entries = append(sec.entries, changelogEntry{line: n, op: m[1], suite: suite, entry: conformance.CatalogEntry{
					ID: m[2], Level: conformance.Level(m[3]), Requirements: strings.Split(m[4], ", ")}})
			default:
				sec.entries = append(sec.entries, changelogEntry{line: n, op: m[5], suite: suite, entry: conformance.CatalogEntry{ID: m[6]}})
			}
		}
	}
	return sections, errors.Join(errs...)
}

// parseBaseline reads catalog-VERSION.txt: suite, ID, level and requirement IDs per line.
func parseBaseline(text string) (catalogState, error) {
	st := catalogState{}
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 4 || !slices.Contains(suites, f[0]) {
			return nil, fmt.Errorf("baseline line %d: %q", i+1, line)
		}
		st[catalogKey{f[0], f[1]}] = conformance.CatalogEntry{ID: f[1], Level: conformance.Level(f[2]), Requirements: strings.Split(f[3], ",")}
	}
	return st, nil
}

// versionLess reports whether the version a (X.Y.Z) is older than b.
func versionLess(a, b string) bool {
	parse := func(v string) []int {
		var out []int
		for _, p := range strings.SplitN(v, ".", 3) {
			n, _ := strconv.Atoi(p) // the heading pattern admits digits only
			out = append(out, n)
		}
		return out
	}
	return slices.Compare(parse(a), parse(b)) < 0
}

// verifyChangelog replays the changelog over the baseline and compares the result with the
// catalogs of the code (current, with the checks' titles for the suggested entries). It
// returns every problem; a missing entry is reported with the line to add.
func verifyChangelog(changelog string, readBaseline func(version string) (string, error), current catalogState, titles map[catalogKey]string, suiteVersion string) error {
	sections, err := parseChangelog(changelog)
	if err != nil {
		return err
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if len(sections) == 0 {
		return errors.New("no version section")
	}
	// Order: at most one Unreleased, first; then released versions, newest first.
	newestReleased := ""
	for i, s := range sections {
		if s.version == "Unreleased" {
			if i != 0 {
				bad("line %d: ## Unreleased must be the first section", s.line)
			}
			continue
		}
		if newestReleased == "" {
			newestReleased = s.version
		}
		if i > 0 && sections[i-1].version != "Unreleased" && !versionLess(s.version, sections[i-1].version) {
			bad("line %d: version %s is not older than the section above it", s.line, s.version)
		}
	}
	if newestReleased != suiteVersion {
		bad("the newest released version in the changelog is %q, but conformance.SuiteVersion is %q", newestReleased, suiteVersion)
	}
	oldest := sections[len(sections)-1]
	if len(oldest.entries) > 0 {
		bad("line %d: the oldest version %s is the baseline of catalog-%s.txt and has no entries", oldest.line, oldest.version, oldest.version)
	}
	baseText, err := readBaseline(oldest.version)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	st, err := parseBaseline(baseText)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	retired := map[catalogKey]bool{}
	for i := len(sections) - 1; i >= 0; i-- {
		s := sections[i]
		for _, e := range s.entries {
			k := catalogKey{e.suite, e.entry.ID}
			_, exists := st[k]
			switch {
			case e.op == "added" && (exists || retired[k]):
				bad("line %d: %s is added, but it exists or was retired (IDs are never reused)", e.line, e.entry.ID)
			case e.op != "added" && !exists:
				bad("line %d: %s is %s, but the %s catalog has no such check at that point", e.line, e.entry.ID, e.op, e.suite)
			case e.op == "retired":
				delete(st, k)
				retired[k] = true
			default:
				st[k] = e.entry
			}
		}
		if s.version == "Unreleased" {
			continue
		}
		if len(s.digests) == 0 {
			bad("line %d: released version %s needs the line: Catalog digests: worker `%s`, host `%s`, interop `%s`.", s.line, s.version, st.digest("worker"), st.digest("host"), st.digest("interop"))
		}
		for _, suite := range suites {
			if got := st.digest(suite); s.digests[suite] != "" && s.digests[suite] != got {
				bad("line %d: version %s: the %s catalog replayed to this version has digest %s, the line says %s", s.line, s.version, suite, got, s.digests[suite])
			}
		}
	}
	// What the code has that the replay does not, and the other way round.
	var missing []string
	keys := slices.SortedFunc(maps.Keys(mergeKeys(st, current)), func(a, b catalogKey) int {
		return strings.Compare(a.suite+a.id, b.suite+b.id)
	})
	for _, k := range keys {
		have, inCode := current[k]
		was, inLog := st[k]
		heading := "### " + strings.ToUpper(k.suite[:1]) + k.suite[1:] + " suite"
		switch {
		case inCode && !inLog:
			missing = append(missing, fmt.Sprintf("%s: - added %s (%s; %s): %s", heading, k.id, have.Level, strings.Join(have.Requirements, ", "), titles[k]))
		case !inCode && inLog:
			missing = append(missing, fmt.Sprintf("%s: - retired %s: WHY", heading, k.id))
		case have.Line() != was.Line():
			missing = append(missing, fmt.Sprintf("%s: - changed %s (%s; %s): WHAT CHANGED", heading, k.id, have.Level, strings.Join(have.Requirements, ", ")))
		}
	}
	if len(missing) > 0 {
		bad("the catalogs changed without a changelog entry; add under ## Unreleased in conformance/CHANGELOG.md:\n  %s", strings.Join(missing, "\n  "))
	}
	return errors.Join(errs...)
}

func mergeKeys(a, b catalogState) catalogState {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}

// codeCatalogs returns the catalogs of the code and the checks' titles.
func codeCatalogs() (catalogState, map[catalogKey]string) {
	st, titles := catalogState{}, map[catalogKey]string{}
	for _, c := range worker.Catalog() {
		k := catalogKey{"worker", c.ID}
		st[k] = conformance.CatalogEntry{ID: c.ID, Level: c.Level, Requirements: c.Requirements}
		titles[k] = c.Title
	}
	for _, c := range host.Catalog() {
		k := catalogKey{"host", c.ID}
		st[k] = conformance.CatalogEntry{ID: c.ID, Level: c.Level, Requirements: c.Requirements}
		titles[k] = c.Title
	}
	for _, s := range interop.Catalog() {
		k := catalogKey{"interop", s.ID}
		st[k] = conformance.CatalogEntry{ID: s.ID, Level: conformance.Must, Requirements: s.Requirements}
		titles[k] = s.Title
	}
	return st, titles
}

func readBaselineFile(version string) (string, error) {
	data, err := os.ReadFile("catalog-" + version + ".txt")
	return string(data), err
}

// TestCatalogChangelog holds CHANGELOG.md to the catalogs: replayed over catalog-1.0.0.txt it
// must give every check of both suites with its level and requirement IDs, each released
// version's digests must match, and the newest released version must be SuiteVersion.
func TestCatalogChangelog(t *testing.T) {
	text, err := os.ReadFile("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	current, titles := codeCatalogs()
	if err := verifyChangelog(string(text), readBaselineFile, current, titles, conformance.SuiteVersion); err != nil {
		t.Error(err)
	}
	// The suites report the digests the test computes.
	if worker.Suite().CatalogDigest != current.digest("worker") || host.Suite().CatalogDigest != current.digest("host") ||
		interop.Suite().CatalogDigest != current.digest("interop") {
		t.Error("the suites' digests differ from the digests of their catalogs")
	}
}

// TestChangelogCatchesUndocumentedChanges shows that the changelog test fails when a check is
// added, retired or changed in level or requirement IDs without an entry, and passes once the
// entry it asks for is written.
func TestChangelogCatchesUndocumentedChanges(t *testing.T) {
	text, err := os.ReadFile("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	changelog := string(text)
	current, titles := codeCatalogs()
	anyWorker := catalogKey{"worker", worker.Catalog()[0].ID}
	anyHost := catalogKey{"host", host.Catalog()[0].ID}
	added := catalogKey{"worker", "CNF-FRAME-98"}
	for _, tc := range []struct {
		name  string
		edit  func(st catalogState)
		want  string // the suggested line
		entry string // the entry that documents the change, under Unreleased
	}{
		{"level", func(st catalogState) { e := st[anyWorker]; e.Level = conformance.Should; st[anyWorker] = e },
			"- changed " + anyWorker.id + " (SHOULD;", "### Worker suite\n\n- changed " + anyWorker.id + " (SHOULD; " + strings.Join(current[anyWorker].Requirements, ", ") + "): a deviation is now INFO\n"},
		{"requirement", func(st catalogState) {
			e := st[anyHost]
			e.Requirements = append(slices.Clone(e.Requirements), "FRM-001")
			st[anyHost] = e
		}, "### Host suite: - changed " + anyHost.id, "### Host suite\n\n- changed " + anyHost.id + " (MUST; " + strings.Join(current[anyHost].Requirements, ", ") + ", FRM-001): also cites FRM-001\n"},
		{"added", func(st catalogState) {
			st[added] = conformance.CatalogEntry{ID: added.id, Level: conformance.Must, Requirements: []string{"FRM-012"}}
		}, "- added CNF-FRAME-98 (MUST; FRM-012): ", "### Worker suite\n\n- added CNF-FRAME-98 (MUST; FRM-012): a new check\n"},
		{"retired", func(st catalogState) { delete(st, anyWorker) }, "- retired " + anyWorker.id + ": WHY", "### Worker suite\n\n- retired " + anyWorker.id + ": folded into another check\n"},
	} {
		edited := maps.Clone(current)
		tc.edit(edited)
		err := verifyChangelog(changelog, readBaselineFile, edited, titles, conformance.SuiteVersion)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: the changelog test does not ask for %q: %v", tc.name, tc.want, err)
		}
		documented := appendUnreleased(changelog, tc.entry)
		if err := verifyChangelog(documented, readBaselineFile, edited, titles, conformance.SuiteVersion); err != nil {
			t.Errorf("%s: with the entry the test still fails: %v", tc.name, err)
		}
	}
}

// TestChangelogRejectsBadEntries checks the rules of the file itself.
func TestChangelogRejectsBadEntries(t *testing.T) {
	text, err := os.ReadFile("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	current, titles := codeCatalogs()
	first := worker.Catalog()[0]
	for _, tc := range []struct{ name, insert, want string }{
		{"re-added", "### Worker suite\n\n- added " + first.ID + " (MUST; FRM-012): again\n", "it exists or was retired"},
		{"unknown", "### Worker suite\n\n- retired CNF-FRAME-97: never existed\n", "has no such check"},
		{"grammar", "### Worker suite\n\n- added CNF-FRAME-97 MUST FRM-012: no parenthesis\n", "does not follow the entry format"},
		{"no suite", "- retired " + first.ID + ": gone\n", "outside a ### Worker suite"},
	} {
		edited := strings.Replace(string(text), "## Unreleased\n", "## Unreleased\n\n"+tc.insert, 1)
		if err := verifyChangelog(edited, readBaselineFile, current, titles, conformance.SuiteVersion); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	if err := verifyChangelog(string(text), readBaselineFile, current, titles, "9.9.9"); err == nil || !strings.Contains(err.Error(), "SuiteVersion") {
		t.Errorf("a suite version the changelog does not name: %v", err)
	}
	wrongDigest := regexp.MustCompile("worker `sha256:[0-9a-f]{64}`").ReplaceAllString(string(text), "worker `sha256:"+strings.Repeat("0", 64)+"`")
	if err := verifyChangelog(wrongDigest, readBaselineFile, current, titles, conformance.SuiteVersion); err == nil || !strings.Contains(err.Error(), "the line says sha256:000") {
		t.Errorf("a wrong digest line: %v", err)
	}
	noDigest := regexp.MustCompile("(?m)^Catalog digests:.*$").ReplaceAllString(string(text), "")
	if err := verifyChangelog(noDigest, readBaselineFile, current, titles, conformance.SuiteVersion); err == nil || !strings.Contains(err.Error(), "needs the line: Catalog digests: worker `sha256:") {
		t.Errorf("a released version without digests: %v", err)
	}
}

// appendUnreleased adds entry at the end of the Unreleased section, so that it applies after
// every entry already there (a check may already have one).
func appendUnreleased(changelog, entry string) string {
	start := strings.Index(changelog, "## Unreleased\n")
	if start < 0 {
		return changelog
	}
	end := strings.Index(changelog[start+1:], "\n## ")
	if end < 0 {
		return changelog + "\n" + entry
	}
	at := start + 1 + end + 1
	return changelog[:at] + entry + "\n" + changelog[at:]
}
