package conformance_test

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance"
)

// This file holds the meaning test: catalog-meanings.txt records the meaning digest
// (conformance.MeaningDigest of the title) of every check of the three suites, and a check whose
// title differs from its record needs a changelog line under ## Unreleased. The catalog digest
// sees IDs, levels and requirement IDs only; this test sees a change of what a check expects.

var update = flag.Bool("update", false, "rewrite catalog-meanings.txt; it is written only when every changed meaning has its changelog line")

// meaningsFile is the record of the meaning digests.
const meaningsFile = "catalog-meanings.txt"

const meaningsHeader = `# The meaning digest of every check: suite, ID and conformance.MeaningDigest of its title,
# tab-separated. A check whose title changes needs a changed line under ## Unreleased in
# CHANGELOG.md; then rewrite this file with: go test ./conformance/ -run TestCatalogMeanings -update
`

// parseMeanings reads catalog-meanings.txt.
func parseMeanings(text string) (map[catalogKey]string, error) {
	out := map[catalogKey]string{}
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 3 || !slices.Contains(suites, f[0]) || len(f[2]) != 16 {
			return nil, fmt.Errorf("%s line %d: %q is not suite, ID and digest", meaningsFile, i+1, line)
		}
		out[catalogKey{f[0], f[1]}] = f[2]
	}
	return out, nil
}

// formatMeanings writes the record of titles, suite by suite in the order of suites, by ID.
func formatMeanings(titles map[catalogKey]string) string {
	keys := make([]catalogKey, 0, len(titles))
	for k := range titles {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b catalogKey) int {
		if a.suite != b.suite {
			return slices.Index(suites, a.suite) - slices.Index(suites, b.suite)
		}
		return strings.Compare(a.id, b.id)
	})
	var b strings.Builder
	b.WriteString(meaningsHeader)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s\t%s\t%s\n", k.suite, k.id, conformance.MeaningDigest(titles[k]))
	}
	return b.String()
}

// verifyMeanings compares the recorded digests with the checks' titles. A check whose digest
// changed needs an added or changed entry under ## Unreleased; the error lists the lines to add.
// stale reports that the record differs from the code at all (a new, retired or documented
// change), so that it must be rewritten.
func verifyMeanings(changelog string, recorded map[catalogKey]string, current catalogState, titles map[catalogKey]string) (stale bool, err error) {
	sections, err := parseChangelog(changelog)
	if err != nil {
		return false, err
	}
	documented := map[catalogKey]bool{}
	if len(sections) > 0 && sections[0].version == "Unreleased" {
		for _, e := range sections[0].entries {
			if e.op != "retired" {
				documented[catalogKey{e.suite, e.entry.ID}] = true
			}
		}
	}
	var missing []string
	for k, title := range titles {
		rec, ok := recorded[k]
		switch {
		case !ok:
			stale = true // a new check: the catalog test asks for its added line
		case rec != conformance.MeaningDigest(title) && documented[k]:
			stale = true
		case rec != conformance.MeaningDigest(title):
			e := current[k]
			missing = append(missing, fmt.Sprintf("### %s suite: - changed %s (%s; %s): WHAT CHANGED (its title now reads: %s)",
				strings.ToUpper(k.suite[:1])+k.suite[1:], k.id, e.Level, strings.Join(e.Requirements, ", "), title))
		}
	}
	for k := range recorded {
		if _, ok := titles[k]; !ok {
			stale = true // a retired check: the catalog test asks for its retired line
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return stale, fmt.Errorf("the meaning of these checks changed (their titles differ from %s) without a changelog entry; "+
			"add under ## Unreleased in conformance/CHANGELOG.md:\n  %s\nthen record the new meanings: go test ./conformance/ -run TestCatalogMeanings -update",
			meaningsFile, strings.Join(missing, "\n  "))
	}
	return stale, nil
}

// TestCatalogMeanings holds catalog-meanings.txt and CHANGELOG.md to the checks' titles: a title
// that changed needs its changelog line, and then the record must be rewritten (-update).
func TestCatalogMeanings(t *testing.T) {
	changelog, err := os.ReadFile("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(meaningsFile)
	if err != nil && !(errors.Is(err, os.ErrNotExist) && *update) {
		t.Fatal(err)
	}
	recorded, err := parseMeanings(string(text))
	if err != nil {
		t.Fatal(err)
	}
	current, titles := codeCatalogs()
	stale, err := verifyMeanings(string(changelog), recorded, current, titles)
	switch {
	case err != nil:
		t.Fatal(err)
	case stale && *update:
		if err := os.WriteFile(meaningsFile, []byte(formatMeanings(titles)), 0o644); err != nil {
			t.Fatal(err)
		}
	case stale:
		t.Errorf("%s differs from the checks' titles, and the changelog has every line it needs; record them: go test ./conformance/ -run TestCatalogMeanings -update", meaningsFile)
	}
}

// TestMeaningsCatchUndocumentedChanges shows that a new title without a changelog line fails
// the meaning test with the line to add, and that with the line the test only asks for the
// record to be rewritten.
func TestMeaningsCatchUndocumentedChanges(t *testing.T) {
	changelog, err := os.ReadFile("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	current, titles := codeCatalogs()
	recorded := map[catalogKey]string{}
	for k, title := range titles {
		recorded[k] = conformance.MeaningDigest(title)
	}
	if stale, err := verifyMeanings(string(changelog), recorded, current, titles); stale || err != nil {
		t.Fatalf("a record of today's titles: stale %v, %v", stale, err)
	}
	for _, suite := range suites {
		var k catalogKey
		for key := range titles {
			if key.suite == suite && (k.id == "" || key.id < k.id) {
				k = key
			}
		}
		edited := maps.Clone(titles)
		edited[k] = titles[k] + ", and now something more"
		want := "### " + strings.ToUpper(suite[:1]) + suite[1:] + " suite: - changed " + k.id + " ("
		_, err := verifyMeanings(string(changelog), recorded, current, edited)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "and now something more") {
			t.Errorf("%s: a changed title without a changelog line: %v; want it to ask for %q", k.id, err, want)
		}
		e := current[k]
		entry := "### " + strings.ToUpper(suite[:1]) + suite[1:] + " suite\n\n- changed " + k.id + " (" + string(e.Level) + "; " +
			strings.Join(e.Requirements, ", ") + "): it now expects something more\n"
		stale, err := verifyMeanings(appendUnreleased(string(changelog), entry), recorded, current, edited)
		if err != nil || !stale {
			t.Errorf("%s: with its changelog line: stale %v, %v; want only a stale record", k.id, stale, err)
		}
	}
}
