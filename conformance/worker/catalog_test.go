package worker

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/spec"
)

// TestCatalogIsWellFormed checks every check's ID, level, title, needs and citations.
func TestCatalogIsWellFormed(t *testing.T) {
	citation := regexp.MustCompile(spec.CitationPattern)
	areas := map[string]bool{}
	for _, a := range Areas {
		if areas[a.Name] {
			t.Errorf("area %s listed twice", a.Name)
		}
		areas[a.Name] = true
		// Each constructor returns the checks of its own area only.
		for _, c := range a.Checks() {
			if c.Area() != a.Name {
				t.Errorf("%sChecks returns %s", a.Name, c.ID)
			}
		}
	}
	seen := map[string]bool{}
	checks := Catalog()
	if len(checks) < 100 {
		t.Errorf("the catalog has %d checks; the suite needs its full coverage", len(checks))
	}
	for _, c := range checks {
		if !idPattern.MatchString(c.ID) {
			t.Errorf("%s: ID is not of the form CNF-AREA-NN", c.ID)
		}
		if citation.MatchString(c.ID) {
			t.Errorf("%s: ID would be read as a citation of %s", c.ID, citation.FindString(c.ID))
		}
		if seen[c.ID] {
			t.Errorf("%s: defined twice", c.ID)
		}
		seen[c.ID] = true
		if !areas[c.Area()] {
			t.Errorf("%s: unknown area %q", c.ID, c.Area())
		}
		if c.Level != conformance.Must && c.Level != conformance.Should {
			t.Errorf("%s: level %q", c.ID, c.Level)
		}
		if c.Title == "" || strings.Contains(c.Title, "\n") {
			t.Errorf("%s: title must be one line", c.ID)
		}
		if c.Run == nil {
			t.Errorf("%s: no run function", c.ID)
		}
		if len(c.Requirements) == 0 {
			t.Errorf("%s: cites no requirement", c.ID)
		}
		for _, id := range c.Requirements {
			if _, ok := spec.Find(id); !ok {
				t.Errorf("%s: cites %s, which the specification does not define", c.ID, id)
			}
		}
		for _, n := range c.Needs {
			if _, ok := ParseNeed(string(n)); !ok {
				t.Errorf("%s: unknown need %q", c.ID, n)
			}
		}
	}
}

// TestCatalogCoversTheWorkerChapters lists the requirements of the worker-facing chapters
// that no check cites. Requirements about host-side or library-only behaviour are exempt.
func TestCatalogCoversTheWorkerChapters(t *testing.T) {
	reqs, err := spec.Requirements()
	if err != nil {
		t.Fatal(err)
	}
	cited := map[string]bool{}
	for _, c := range Catalog() {
		for _, id := range c.Requirements {
			cited[id] = true
		}
	}
	// Requirements no black-box check of a worker process can observe: registry and library
	// API rules, in-process guards, the journal store's internals and the reference worker's
	// own configuration.
	exempt := map[string]string{
		"WRK-001": "registry API", "WRK-004": "adapter API",
		"WRK-010": "library API: the role of the authenticator", "WRK-016": "admission internals",
		"WRK-020": "poisoned sessions end the reference worker at once", "WRK-031": "journal access is not observable",
		"WRK-063": "the profile's only reconcilable tool declares a contract", "WRK-070": "journal store internals",
		"WRK-071": "journal store internals", "WRK-072": "covered by the exit classes", "WRK-080": "journal store internals",
		"WRK-082": "journal store internals",
		"CAN-003": "read permits are internal", "CAN-004": "order of internal checks", "CAN-017": "needs an adapter that acknowledges unasked",
		"PRF-019": "fsync is not observable",
		"SEC-001": "broker library API", "SEC-002": "broker library API", "SEC-004": "broker library API",
		"SEC-005": "broker library API", "SEC-006": "zeroing is not observable", "SEC-007": "formatting is not observable",
	}
	var missing []string
	for _, r := range reqs {
		if !slices.Contains([]string{"WRK", "CAN", "PRF", "SEC"}, r.Prefix) || cited[r.ID] {
			continue
		}
		if _, ok := exempt[r.ID]; ok {
			continue
		}
		missing = append(missing, r.ID)
	}
	if len(missing) > 0 {
		t.Errorf("worker-facing requirements cited by no check: %s", strings.Join(missing, " "))
	}
}

// TestSelect covers prefixes, regular expressions, requirement IDs and bad patterns.
func TestSelect(t *testing.T) {
	all := Catalog()
	ids := func(cs []*Check) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	got, err := all.Select("CNF-BOOT-0")
	if err != nil || len(got) != 9 {
		t.Errorf("prefix CNF-BOOT-0 selected %v (%v); want the nine checks CNF-BOOT-01..09", ids(got), err)
	}
	got, err = all.Select("FRAME-0[12]$")
	if err != nil || !slices.Equal(ids(got), []string{"CNF-FRAME-01", "CNF-FRAME-02"}) {
		t.Errorf("regexp selected %v (%v)", ids(got), err)
	}
	got, err = all.Select("FRM-026")
	if err != nil || len(got) == 0 {
		t.Fatalf("requirement FRM-026 selected nothing (%v)", err)
	}
	for _, c := range got {
		if !slices.Contains(c.Requirements, "FRM-026") {
			t.Errorf("requirement FRM-026 selected %s, which does not cite it", c.ID)
		}
	}
	if _, err := all.Select("CNF-("); err == nil {
		t.Error("an invalid regular expression was accepted")
	}
	if got, _ := all.Select(""); len(got) != len(all) {
		t.Error("an empty pattern does not select everything")
	}
}
