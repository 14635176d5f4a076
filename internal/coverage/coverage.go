// Package coverage maps every requirement of the specification to what proves it: the checks of
// the worker and host suites, the scenarios of the interop suite, the results of the explorer
// and the golden vectors, which judge a port black-box, and the Go tests, which prove this
// implementation only. It writes the list of docs/requirements-coverage.md, and its data serves
// an implementation report: per requirement, the checks, scenarios, vectors and tests that
// prove it.
package coverage

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/splashv5/conform/conformance/explore"
	"github.com/splashv5/conform/conformance/explore/hostexplore"
	"github.com/splashv5/conform/conformance/host"
	"github.com/splashv5/conform/conformance/interop"
	"github.com/splashv5/conform/conformance/worker"
	"github.com/splashv5/conform/spec"
)

// Evidence is what proves one requirement.
type Evidence struct {
	// WorkerChecks and HostChecks are the IDs of the checks of the worker and host suites that
	// list the requirement.
	WorkerChecks, HostChecks []string
	// Scenarios are the IDs of the interop scenarios that list it.
	Scenarios []string
	// Explorer are the IDs of the results of `splash-conform explore` (worker and host) that
	// list it: the explorer judges a port on it, finding by finding.
	Explorer []string
	// Vectors are the golden vectors that list it in their requirements, as "file.json#id".
	Vectors []string
	// Tests are the places in Go tests (and test-support packages) that cite it, as
	// "path:line": they prove this implementation, not a port.
	Tests []string
	// TestFuncs are the functions those places belong to, as "path: Name", each once.
	TestFuncs []string
	// Runner are the places in the suites' own code (conformance/, not a catalog entry) that
	// cite it, as "path: Name": rules the runner applies in every check, such as the driver's
	// hello, which no single check lists.
	Runner []string
	// Models are the invariants and properties of the models (model/) that cite it, as
	// "model/FILE: NAME": they prove the protocol's rules on its state machines, and, through
	// the replays, this implementation.
	Models []string
}

// Entry is one requirement and its evidence.
type Entry struct {
	spec.Requirement
	Evidence
}

// BlackBox reports whether a port is judged on the requirement: a check, a scenario, an explorer
// result or a vector proves it.
func (e Entry) BlackBox() bool {
	return len(e.WorkerChecks)+len(e.HostChecks)+len(e.Scenarios)+len(e.Explorer)+len(e.Vectors) > 0
}

// Must reports whether the requirement is a MUST or MUST NOT.
func (e Entry) Must() bool { return e.Level == spec.Must || e.Level == spec.MustNot }

// Gap reports whether the requirement is a MUST that binds ports (it carries no implementation
// only marker), that nothing judges black-box and that names no check or vector that would.
func (e Entry) Gap() bool {
	return e.Must() && e.ImplementationOnly == "" && e.Needed == "" && !e.BlackBox()
}

// StaleNeeded reports whether the requirement still says a check or vector is needed although a
// check, scenario, explorer result or vector now judges it: the marker should go.
func (e Entry) StaleNeeded() bool { return e.Needed != "" && e.BlackBox() }

// Coverage is the evidence of every requirement, in the specification's order.
type Coverage struct {
	Entries []Entry
}

// Build collects the evidence of every requirement from the three suites' catalogs, the vector
// files under root/vectors and the citations of the Go tests under root (the module root).
func Build(root string) (*Coverage, error) {
	reqs, err := spec.Requirements()
	if err != nil {
		return nil, err
	}
	ev := map[string]*Evidence{}
	for _, r := range reqs {
		ev[r.ID] = &Evidence{}
	}
	add := func(id string, to func(e *Evidence)) error {
		e, ok := ev[id]
		if !ok {
			return fmt.Errorf("%s is cited but is no requirement of the specification", id)
		}
		to(e)
		return nil
	}
	var errs []error
	for _, c := range worker.Catalog() {
		for _, id := range c.Requirements {
			errs = append(errs, add(id, func(e *Evidence) { e.WorkerChecks = append(e.WorkerChecks, c.ID) }))
		}
	}
	for _, c := range host.Catalog() {
		for _, id := range c.Requirements {
			errs = append(errs, add(id, func(e *Evidence) { e.HostChecks = append(e.HostChecks, c.ID) }))
		}
	}
	for _, s := range interop.Catalog() {
		for _, id := range s.Requirements {
			errs = append(errs, add(id, func(e *Evidence) { e.Scenarios = append(e.Scenarios, s.ID) }))
		}
	}
	for _, r := range slices.Concat(explore.CatalogEntries(), hostexplore.CatalogEntries()) {
		for _, id := range r.Requirements {
			errs = append(errs, add(id, func(e *Evidence) { e.Explorer = append(e.Explorer, r.ID) }))
		}
	}
	vectors, err := vectorRequirements(filepath.Join(root, "vectors"))
	if err != nil {
		return nil, err
	}
	for _, v := range vectors {
		errs = append(errs, add(v.requirement, func(e *Evidence) { e.Vectors = append(e.Vectors, v.name) }))
	}
	cited, err := spec.Cited(root)
	if err != nil {
		return nil, err
	}
	funcs := newFuncIndex(root)
	for _, c := range cited {
		if strings.HasPrefix(c.File, "conformance/") && strings.HasSuffix(c.File, ".go") && !strings.HasSuffix(c.File, "_test.go") {
			if e, ok := ev[c.ID]; ok {
				if f := funcs.at(c.File, c.Line); !slices.Contains(e.Runner, f) {
					e.Runner = append(e.Runner, f)
				}
			}
		}
		if strings.HasSuffix(c.File, "_test.go") || !strings.HasPrefix(c.File, "conformance/") && !strings.HasPrefix(c.File, "vectors/") {
			if e, ok := ev[c.ID]; ok {
				e.Tests = append(e.Tests, fmt.Sprintf("%s:%d", c.File, c.Line))
				if strings.HasSuffix(c.File, ".go") {
					if f := funcs.at(c.File, c.Line); !slices.Contains(e.TestFuncs, f) {
						e.TestFuncs = append(e.TestFuncs, f)
					}
				}
			}
		}
	}
	models, err := modelInvariants(root)
	if err != nil {
		return nil, err
	}
	for id, invs := range models {
		errs = append(errs, add(id, func(e *Evidence) { e.Models = append(e.Models, invs...) }))
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	cov := &Coverage{}
	for _, r := range reqs {
		e := ev[r.ID]
		for _, list := range []*[]string{&e.WorkerChecks, &e.HostChecks, &e.Scenarios, &e.Explorer, &e.Vectors, &e.Tests, &e.Models} {
			*list = slices.Compact(*list)
		}
		cov.Entries = append(cov.Entries, Entry{Requirement: r, Evidence: *e})
	}
	return cov, nil
}

// vectorCitation is one requirement a vector lists.
type vectorCitation struct{ name, requirement string }

// maxVectorFile bounds how much of a vector file Build reads.
const maxVectorFile = 64 << 20

// vectorRequirements reads the requirements arrays of the vector files in dir (*.json), of
// every object that has one, named "file.json#id" by the object's id (or by the file alone).
func vectorRequirements(dir string) ([]vectorCitation, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []vectorCitation
	for _, f := range files {
		info, err := os.Stat(f)
		if err != nil {
			return nil, err
		}
		if info.Size() > maxVectorFile {
			return nil, fmt.Errorf("%s: %d bytes, over the %d this reader takes", f, info.Size(), maxVectorFile)
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var doc any
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		base := filepath.Base(f)
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				if reqs, ok := v["requirements"].([]any); ok {
					name := base
					if id, ok := v["id"].(string); ok {
						name += "#" + id
					}
					for _, r := range reqs {
						if s, ok := r.(string); ok {
							out = append(out, vectorCitation{name: name, requirement: s})
						}
					}
				}
				for _, x := range v {
					walk(x)
				}
			case []any:
				for _, x := range v {
					walk(x)
				}
			}
		}
		walk(doc)
	}
	slices.SortFunc(out, func(a, b vectorCitation) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// maxListed is how many check or scenario IDs a row of the list names before it counts the rest.
const maxListed = 6

// Markdown returns docs/requirements-coverage.md: a summary, the gaps, the requirements that
// await a conformance check or vectors and what they would do, the requirements that bind only this
// implementation, and every MUST requirement, chapter by chapter, with what judges a port on it.
func (c *Coverage) Markdown() []byte {
	var b strings.Builder
	var musts, judged, implOnly, needed []Entry
	var gaps []Entry
	for _, e := range c.Entries {
		if !e.Must() {
			continue
		}
		musts = append(musts, e)
		switch {
		case e.BlackBox():
			judged = append(judged, e)
		case e.ImplementationOnly != "":
			implOnly = append(implOnly, e)
		case e.Needed != "":
			needed = append(needed, e)
		default:
			gaps = append(gaps, e)
		}
	}
	b.WriteString(`# Requirements coverage

<!-- Generated by: go test ./internal/coverage/ -run TestCoverageDocIsCurrent -update
     Do not edit: a test fails when this file differs from what the generator writes. -->

Every MUST (and MUST NOT) requirement of the specification, and what judges a port on it
black-box: a check of the worker suite (` + "`splash-conform`" + `) or of the host suite
(` + "`splash-conform host`" + `), a scenario of the interop suite (` + "`splash-conform interop`" + `), a
result of the explorer (` + "`splash-conform explore`" + `, worker or host), or a golden vector
(` + "`vectors/`" + `). A requirement that binds only this implementation carries the marker
` + "`[implementation only: reason]`" + ` in the specification (spec/README.md), and the reason is listed
here. A requirement a port can break observably that nothing judges yet names what would: the
marker ` + "`[check needed: what to check]`" + ` when only a running worker or host can show it, or
` + "`[vector needed: what the vectors hold]`" + ` when golden vectors can; both are listed here. A MUST
judged by nothing black-box and marked in none of these ways is a gap: a port can break it
unseen, and nobody has said how to judge it. The Go tests that cite a requirement prove this
implementation only; their number is given for reference.

`)
	fmt.Fprintf(&b, "## Summary\n\n| MUST requirements | Count |\n|---|---|\n")
	fmt.Fprintf(&b, "| judged black-box (check, scenario, explorer result or vector) | %d |\n", len(judged))
	fmt.Fprintf(&b, "| binding only this implementation | %d |\n", len(implOnly))
	fmt.Fprintf(&b, "| awaiting a check or vectors (named below) | %d |\n", len(needed))
	fmt.Fprintf(&b, "| gaps | %d |\n", len(gaps))
	fmt.Fprintf(&b, "| total | %d |\n\n", len(musts))

	b.WriteString("## Gaps\n\nMUST requirements that bind a port and that no check, scenario, explorer result or vector judges.\n\n")
	if len(gaps) == 0 {
		b.WriteString("None.\n")
	}
	for _, e := range gaps {
		fmt.Fprintf(&b, "- **%s** ([%s](../spec/%s#:~:text=%s); cited by Go tests: %d): %s\n", e.ID, e.Chapter, e.Chapter, e.ID, len(e.Tests), excerpt(e.Text, 160))
	}
	b.WriteString("\n## Checks and vectors needed\n\nMUST requirements a port can break observably that nothing judges yet, and what would judge a\nport on each: a conformance check (only a running worker or host can show it) or golden vectors.\n\n")
	if len(needed) == 0 {
		b.WriteString("None.\n")
	}
	for _, e := range needed {
		fmt.Fprintf(&b, "- **%s** ([%s](../spec/%s#:~:text=%s); cited by Go tests: %d): %s needed: %s\n", e.ID, e.Chapter, e.Chapter, e.ID, len(e.Tests), e.NeededKind, e.Needed)
	}
	b.WriteString("\n## Binding only this implementation\n\n")
	if len(implOnly) == 0 {
		b.WriteString("None.\n")
	}
	for _, e := range implOnly {
		fmt.Fprintf(&b, "- **%s** ([%s](../spec/%s#:~:text=%s)): %s\n", e.ID, e.Chapter, e.Chapter, e.ID, e.ImplementationOnly)
	}

	b.WriteString("\n## Every MUST requirement\n")
	chapter := ""
	for _, e := range musts {
		if e.Chapter != chapter {
			chapter = e.Chapter
			fmt.Fprintf(&b, "\n### [%s](../spec/%s)\n\n| ID | Judged by | Go tests |\n|---|---|---|\n", chapter, chapter)
		}
		fmt.Fprintf(&b, "| %s | %s | %d |\n", e.ID, judgedBy(e), len(e.Tests))
	}
	return []byte(b.String())
}

// judgedBy is the "Judged by" cell of an entry.
func judgedBy(e Entry) string {
	var parts []string
	list := func(ids []string, what string) {
		switch {
		case len(ids) == 0:
		case len(ids) <= maxListed:
			parts = append(parts, strings.Join(ids, ", "))
		default:
			parts = append(parts, fmt.Sprintf("%s and %d more %s", strings.Join(ids[:maxListed], ", "), len(ids)-maxListed, what))
		}
	}
	list(e.WorkerChecks, "worker checks")
	list(e.HostChecks, "host checks")
	list(e.Scenarios, "scenarios")
	list(e.Explorer, "explorer results")
	if len(e.Vectors) > 0 {
		counts := map[string]int{}
		var files []string
		for _, v := range e.Vectors {
			f, _, _ := strings.Cut(v, "#")
			if counts[f] == 0 {
				files = append(files, f)
			}
			counts[f]++
		}
		var vs []string
		for _, f := range files {
			vs = append(vs, fmt.Sprintf("%s (%d)", f, counts[f]))
		}
		parts = append(parts, "vectors "+strings.Join(vs, ", "))
	}
	switch {
	case len(parts) > 0:
		return strings.Join(parts, "; ")
	case e.ImplementationOnly != "":
		return "implementation only: " + escapeCell(e.ImplementationOnly)
	case e.Needed != "":
		return "**" + e.NeededKind + " needed**: " + escapeCell(e.Needed)
	}
	return "**gap**"
}

// excerpt shortens text to about n bytes at a word boundary.
func excerpt(text string, n int) string {
	if len(text) <= n {
		return text
	}
	cut := strings.LastIndexByte(text[:n], ' ')
	if cut < n/2 {
		cut = n
	}
	return text[:cut] + " …"
}

// escapeCell makes text safe inside a table cell.
func escapeCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
