package conformance_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/host"
	"github.com/splashv5/conform/conformance/interop"
	"github.com/splashv5/conform/conformance/worker"
)

// TestUsageNamesEveryPlaceholder holds the -h text of the worker and interop suites to the
// placeholders the runners substitute: a placeholder a porter cannot find in -h is one their
// worker command never uses.
func TestUsageNamesEveryPlaceholder(t *testing.T) {
	placeholders := []string{conformance.PlaceholderJournal, conformance.PlaceholderEffects, conformance.PlaceholderScope, conformance.PlaceholderStoreFault}
	for name, main := range map[string]func(args []string, stdout, stderr *bytes.Buffer) int{
		"splash-conform":         func(a []string, o, e *bytes.Buffer) int { return worker.Main(a, o, e) },
		"splash-conform interop": func(a []string, o, e *bytes.Buffer) int { return interop.Main(a, o, e) },
	} {
		var stdout, stderr bytes.Buffer
		main([]string{"-h"}, &stdout, &stderr)
		usage := stdout.String() + stderr.String()
		for _, p := range placeholders {
			if !strings.Contains(usage, p) {
				t.Errorf("%s -h does not name the placeholder %s:\n%s", name, p, usage)
			}
		}
	}
}

// countPhrase finds a count of checks or scenarios in prose: "all 183 checks", "48 host checks",
// "15 interop scenarios". A count of something else ("37 to 49 checks failed") names no suite
// and is not "all N".
var countPhrase = regexp.MustCompile(`\b(?:all ([0-9][0-9,]*) (?:worker )?checks|([0-9][0-9,]*) (worker|host) checks|([0-9][0-9,]*) (?:interop )?scenarios)\b`)

// TestDocsCountsMatchCatalogs holds every count of checks or scenarios in the documentation to
// the catalogs: docs/*.md and README.md to the catalogs of the code, and the 1.0.0 section of
// CHANGELOG.md to catalog-1.0.0.txt.
func TestDocsCountsMatchCatalogs(t *testing.T) {
	current := map[string]int{"worker": len(worker.Catalog()), "host": len(host.Catalog()), "interop": len(interop.Catalog())}
	files, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("..", "README.md"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkCounts(t, f, string(data), current)
	}
	base, err := os.ReadFile("catalog-1.0.0.txt")
	if err != nil {
		t.Fatal(err)
	}
	released := map[string]int{}
	for _, line := range strings.Split(string(base), "\n") {
		if suite, _, ok := strings.Cut(line, "\t"); ok && !strings.HasPrefix(line, "#") {
			released[suite]++
		}
	}
	changelog, err := os.ReadFile("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	_, oldest, ok := strings.Cut(string(changelog), "\n## 1.0.0\n")
	if !ok {
		t.Fatal("CHANGELOG.md has no ## 1.0.0 section")
	}
	checkCounts(t, "CHANGELOG.md (1.0.0)", oldest, released)
}

// checkCounts reports each count phrase of text that differs from counts.
func checkCounts(t *testing.T, file, text string, counts map[string]int) {
	t.Helper()
	for _, m := range countPhrase.FindAllStringSubmatch(text, -1) {
		suite, n := "worker", m[1]
		switch {
		case m[2] != "":
			suite, n = m[3], m[2]
		case m[4] != "":
			suite, n = "interop", m[4]
		}
		got, err := strconv.Atoi(strings.ReplaceAll(n, ",", ""))
		if err != nil || got != counts[suite] {
			t.Errorf("%s: %q, but the %s catalog holds %d; write the number the catalog has, or none", file, m[0], suite, counts[suite])
		}
	}
}
