package implreport

import (
	"fmt"
	"slices"
	"strings"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/spec"
)

// Side is which peer a requirement binds, for crediting an interop scenario: a scenario runs a
// host and a worker, and its verdict speaks for each only on the requirements that bind it.
type Side string

// The sides.
const (
	SideWorker Side = "worker"
	SideHost   Side = "host"
	SideBoth   Side = "both"
)

// workerPrefixes and hostPrefixes are the chapters that bind one peer: storage, the
// authorizer, the journal, the worker runtime, cancellation, the profile and secrets bind the
// worker; the runtime, the script subset, the transports, the workflow engine and the host
// driver bind the host. The wire core (chapters 1 to 7) and the interop chapter bind both.
var (
	workerPrefixes = []string{"STO", "AUZ", "JRN", "WRK", "CAN", "PRF", "SEC"}
	hostPrefixes   = []string{"RUN", "SCR", "TRN", "WFL", "HDR"}
)

// SideOf returns the peer the requirement ID binds.
func SideOf(id string) Side {
	prefix, _, _ := strings.Cut(id, "-")
	switch {
	case slices.Contains(workerPrefixes, prefix):
		return SideWorker
	case slices.Contains(hostPrefixes, prefix):
		return SideHost
	}
	return SideBoth
}

// Evidence is one check's outcome that speaks for a requirement of an implementation.
type Evidence struct {
	// Suite, Version and Source name the report: its suite, the suite version that wrote it
	// and its file.
	Suite, Version, Source string
	// Check is the check's (or scenario's) ID and Title its title.
	Check, Title string
	// Peer is, for an interop scenario, the other implementation of the pair.
	Peer string
	// Outcome is the check's outcome (PASS, FAIL, CRASH, TIMEOUT, SKIP, INFO) and State the
	// state it gives the requirement.
	Outcome string
	State   conformance.RequirementState
	// Detail and Transcript are the check's record, when the report kept one.
	Detail     string
	Transcript []string
}

// Cell is what every report says about one requirement of one implementation.
type Cell struct {
	State    conformance.RequirementState
	Evidence []Evidence
}

// Row is one requirement against every implementation.
type Row struct {
	Requirement spec.Requirement
	// Cells holds one cell per implementation, in the order of Report.Implementations.
	Cells []Cell
	// Meeting is the number of implementations whose cell is met.
	Meeting int
}

// Chapter is the rows of one chapter of the specification.
type Chapter struct {
	// File is the chapter's file name (for example 03-framing.md) and Title its heading.
	File, Title string
	Rows        []Row
}

// Implementation is one column: a name and the reports that speak for it.
type Implementation struct {
	Name    string
	Sources []Source
}

// Gap is a run that could not judge requirements its suite's current catalog judges: a
// report from an earlier suite version, or a run limited by -run.
type Gap struct {
	Source         Source
	Implementation string
	Requirements   []string
}

// Report is the merged implementation report.
type Report struct {
	Implementations []Implementation
	Chapters        []Chapter
	Gaps            []Gap
	// Unknown lists the requirement IDs that reports cite and the specification lacks
	// (retired or misspelt), each with the report that cites it.
	Unknown []string
}

// Catalogs are the current catalogs of the suites, by suite name (worker, host, interop):
// what a current run of each suite judges.
type Catalogs map[string][]conformance.CatalogEntry

// Merge reads every input and merges them into one report.
func Merge(inputs []Input, catalogs Catalogs) (*Report, error) {
	var runs []run
	for _, in := range inputs {
		rs, err := readInput(in)
		if err != nil {
			return nil, err
		}
		runs = append(runs, rs...)
	}
	return merge(runs, catalogs)
}

func merge(runs []run, catalogs Catalogs) (*Report, error) {
	reqs, err := spec.Requirements()
	if err != nil {
		return nil, err
	}
	rep := &Report{}
	column := map[string]int{}
	addImpl := func(name string, src Source) int {
		i, ok := column[name]
		if !ok {
			i = len(rep.Implementations)
			column[name] = i
			rep.Implementations = append(rep.Implementations, Implementation{Name: name})
		}
		impl := &rep.Implementations[i]
		if !slices.Contains(impl.Sources, src) {
			impl.Sources = append(impl.Sources, src)
		}
		return i
	}
	row := map[string]int{}
	for i, r := range reqs {
		row[r.ID] = i
	}
	cells := map[[2]int]*Cell{}
	unknown := map[string]bool{}
	for _, r := range runs {
		// Who the run speaks for, and on which side.
		type target struct {
			col  int
			side Side
			peer string
		}
		var targets []target
		if r.impl != "" {
			targets = []target{{addImpl(r.impl, r.source), SideBoth, ""}}
		} else {
			targets = []target{{addImpl(r.host, r.source), SideHost, r.worker}, {addImpl(r.worker, r.source), SideWorker, r.host}}
		}
		judged := map[string]bool{}
		for _, res := range r.results {
			state := conformance.StateOfOutcome(conformance.Outcome(res.Outcome), res.Expected)
			for _, id := range res.Requirements {
				judged[id] = true
				ri, ok := row[id]
				if !ok {
					unknown[id+" (cited by "+res.ID+" in "+r.source.File+")"] = true
					continue
				}
				for _, t := range targets {
					if side := SideOf(id); t.side != SideBoth && side != SideBoth && side != t.side {
						continue
					}
					key := [2]int{ri, t.col}
					c := cells[key]
					if c == nil {
						c = &Cell{State: conformance.ReqUnjudged}
						cells[key] = c
					}
					c.State = conformance.CombineStates(c.State, state)
					c.Evidence = append(c.Evidence, Evidence{
						Suite: r.source.Suite, Version: r.source.Version, Source: r.source.File,
						Check: res.ID, Title: res.Title, Peer: t.peer, Outcome: res.Outcome, State: state,
						Detail: res.Detail, Transcript: res.Transcript,
					})
				}
			}
		}
		if missing := catalogGap(catalogs[r.source.Suite], judged); len(missing) > 0 {
			for _, t := range targets {
				rep.Gaps = append(rep.Gaps, Gap{Source: r.source, Implementation: rep.Implementations[t.col].Name, Requirements: missing})
			}
		}
	}
	for id := range unknown {
		rep.Unknown = append(rep.Unknown, id)
	}
	slices.Sort(rep.Unknown)
	chapterIndex := map[string]int{}
	for i, r := range reqs {
		ci, ok := chapterIndex[r.Chapter]
		if !ok {
			ci = len(rep.Chapters)
			chapterIndex[r.Chapter] = ci
			rep.Chapters = append(rep.Chapters, Chapter{File: r.Chapter, Title: chapterTitle(r.Chapter)})
		}
		rw := Row{Requirement: r, Cells: make([]Cell, len(rep.Implementations))}
		for col := range rep.Implementations {
			if c := cells[[2]int{i, col}]; c != nil {
				rw.Cells[col] = *c
			} else {
				rw.Cells[col] = Cell{State: conformance.ReqUnjudged}
			}
			if rw.Cells[col].State == conformance.ReqMet {
				rw.Meeting++
			}
		}
		rep.Chapters[ci].Rows = append(rep.Chapters[ci].Rows, rw)
	}
	return rep, nil
}

// catalogGap returns the requirement IDs the catalog cites that judged lacks, in
// specification order.
func catalogGap(catalog []conformance.CatalogEntry, judged map[string]bool) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range catalog {
		for _, id := range e.Requirements {
			if !judged[id] && !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	slices.SortFunc(out, conformance.CompareRequirementIDs)
	return out
}

// chapterTitle returns the chapter's file name as a title: "03-framing.md" is "3. framing".
func chapterTitle(file string) string {
	name := strings.TrimSuffix(file, ".md")
	num, rest, ok := strings.Cut(name, "-")
	if !ok {
		return name
	}
	return strings.TrimLeft(num, "0") + ". " + strings.ReplaceAll(rest, "-", " ")
}

// Totals counts, for every level, how many requirements are met by at least n implementations
// for n = 0, 1, 2 (two is the standards bodies' bar).
type Totals struct {
	Level        spec.Level
	Requirements int
	// Met[n] is the number of requirements met by at least n+1 implementations, for n = 0, 1.
	Met [2]int
}

// Totals returns the totals per level, MUST first.
func (r *Report) Totals() []Totals {
	by := map[spec.Level]*Totals{}
	var order []spec.Level
	for _, ch := range r.Chapters {
		for _, rw := range ch.Rows {
			t := by[rw.Requirement.Level]
			if t == nil {
				t = &Totals{Level: rw.Requirement.Level}
				by[rw.Requirement.Level] = t
				order = append(order, rw.Requirement.Level)
			}
			t.Requirements++
			for n := range t.Met {
				if rw.Meeting > n {
					t.Met[n]++
				}
			}
		}
	}
	levelRank := []spec.Level{spec.Must, spec.MustNot, spec.Should, spec.ShouldNot, spec.May}
	slices.SortFunc(order, func(a, b spec.Level) int { return slices.Index(levelRank, a) - slices.Index(levelRank, b) })
	out := make([]Totals, 0, len(order))
	for _, l := range order {
		out = append(out, *by[l])
	}
	return out
}

// ImplementationCounts counts one implementation's cells by state.
func (r *Report) ImplementationCounts(col int) map[conformance.RequirementState]int {
	out := map[conformance.RequirementState]int{}
	for _, ch := range r.Chapters {
		for _, rw := range ch.Rows {
			out[rw.Cells[col].State]++
		}
	}
	return out
}

// FailedMusts returns, for one implementation, the MUST and MUST NOT requirements its checks
// found failed, each with the checks that failed it.
func (r *Report) FailedMusts(col int) []string {
	var out []string
	for _, ch := range r.Chapters {
		for _, rw := range ch.Rows {
			c := rw.Cells[col]
			if c.State != conformance.ReqFailed || (rw.Requirement.Level != spec.Must && rw.Requirement.Level != spec.MustNot) {
				continue
			}
			var checks []string
			for _, e := range c.Evidence {
				if e.State == conformance.ReqFailed && !slices.Contains(checks, e.Check) {
					checks = append(checks, e.Check)
				}
			}
			out = append(out, fmt.Sprintf("%s (%s)", rw.Requirement.ID, strings.Join(checks, ", ")))
		}
	}
	return out
}
