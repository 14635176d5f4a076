package implreport

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/splashv5/conform/conformance"
)

// stateOrder lists the cell states in the order the summaries count them.
var stateOrder = []conformance.RequirementState{
	conformance.ReqMet, conformance.ReqFailed, conformance.ReqExpectedFailure, conformance.ReqDeviates,
	conformance.ReqNotApplicable, conformance.ReqUnjudged,
}

// WriteText writes the human summary: per level how many requirements one and two
// implementations meet, per implementation its cells by state and the MUSTs it fails, and the
// requirements the reports could not judge.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Implementation report: %d implementations\n\n", len(r.Implementations))
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "level\trequirements\tmet by 1 or more\tmet by 2 or more")
	for _, t := range r.Totals() {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", t.Level, t.Requirements, t.Met[0], t.Met[1])
	}
	tw.Flush()
	b.WriteString("\n")
	tw = tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	header := []string{"implementation"}
	for _, s := range stateOrder {
		header = append(header, string(s))
	}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for col, impl := range r.Implementations {
		counts := r.ImplementationCounts(col)
		line := []string{impl.Name}
		for _, s := range stateOrder {
			line = append(line, fmt.Sprint(counts[s]))
		}
		fmt.Fprintln(tw, strings.Join(line, "\t"))
	}
	tw.Flush()
	for col, impl := range r.Implementations {
		if failed := r.FailedMusts(col); len(failed) > 0 {
			fmt.Fprintf(&b, "\n%s fails %d MUST requirements:\n", impl.Name, len(failed))
			for _, f := range failed {
				fmt.Fprintf(&b, "  %s\n", f)
			}
		}
	}
	for _, g := range r.Gaps {
		fmt.Fprintf(&b, "\n%s: %s could not judge %d requirements the current %s suite judges (%s): %s\n",
			g.Implementation, describeSource(g.Source), len(g.Requirements), g.Source.Suite, gapReason(g.Source), strings.Join(g.Requirements, " "))
	}
	if len(r.Unknown) > 0 {
		fmt.Fprintf(&b, "\nRequirement IDs the specification does not define (retired or misspelt): %s\n", strings.Join(r.Unknown, "; "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func describeSource(s Source) string {
	if s.Version == "" {
		return s.File
	}
	return fmt.Sprintf("%s (suite %s)", s.File, s.Version)
}

// gapReason says why a report lacks what the current catalog judges.
func gapReason(s Source) string {
	switch {
	case s.Version == "":
		return "the report does not record its suite version; an earlier version, a selection (-run) or a pair that could not run"
	case s.Version != conformance.SuiteVersion:
		return fmt.Sprintf("written by suite %s, before these checks, or with a selection (-run)", s.Version)
	}
	return "a selection (-run), or checks left out of the run"
}

// JSON layout of the merged report (format 1).
type jsonReport struct {
	Tool            string     `json:"tool"`
	Kind            string     `json:"kind"`
	FormatVersion   int        `json:"format_version"`
	SuiteVersion    string     `json:"suite_version"`
	ProtocolVersion int        `json:"protocol_version"`
	Implementations []jsonImpl `json:"implementations"`
	Totals          []jsonTot  `json:"totals"`
	Requirements    []jsonReq  `json:"requirements"`
	Gaps            []jsonGap  `json:"gaps"`
	Unknown         []string   `json:"unknown_requirements"`
}

type jsonImpl struct {
	Name    string         `json:"name"`
	Sources []jsonSource   `json:"sources"`
	Counts  map[string]int `json:"counts"`
}

type jsonSource struct {
	File          string `json:"file"`
	Suite         string `json:"suite"`
	Version       string `json:"version,omitempty"`
	CatalogDigest string `json:"catalog_digest,omitempty"`
	FormatVersion int    `json:"format_version"`
}

type jsonTot struct {
	Level        string `json:"level"`
	Requirements int    `json:"requirements"`
	MetByOne     int    `json:"met_by_one_or_more"`
	MetByTwo     int    `json:"met_by_two_or_more"`
}

type jsonReq struct {
	ID      string              `json:"id"`
	Level   string              `json:"level"`
	Chapter string              `json:"chapter"`
	Meeting int                 `json:"implementations_meeting"`
	Cells   map[string]jsonCell `json:"cells"`
}

type jsonCell struct {
	State    string         `json:"state"`
	Evidence []jsonEvidence `json:"evidence,omitempty"`
}

type jsonEvidence struct {
	Suite   string `json:"suite"`
	Version string `json:"version,omitempty"`
	Source  string `json:"source"`
	Check   string `json:"check"`
	Peer    string `json:"peer,omitempty"`
	Outcome string `json:"outcome"`
	State   string `json:"state"`
}

// FormatVersion is the version of the merged report's JSON layout.
const FormatVersion = 1

// WriteJSON writes the merged report as JSON: the implementations and their reports, the
// totals per level, and every requirement with its cell per implementation and the checks
// that decide it.
func (r *Report) WriteJSON(w io.Writer) error {
	out := jsonReport{
		Tool: "splash-conform", Kind: "implementation-report", FormatVersion: FormatVersion,
		SuiteVersion: conformance.SuiteVersion, ProtocolVersion: conformance.ProtocolVersion,
		Implementations: []jsonImpl{}, Totals: []jsonTot{}, Requirements: []jsonReq{}, Gaps: []jsonGap{}, Unknown: []string{},
	}
	for col, impl := range r.Implementations {
		ji := jsonImpl{Name: impl.Name, Counts: map[string]int{}}
		for _, s := range impl.Sources {
			ji.Sources = append(ji.Sources, jsonSource(s))
		}
		for s, n := range r.ImplementationCounts(col) {
			ji.Counts[string(s)] = n
		}
		out.Implementations = append(out.Implementations, ji)
	}
	for _, t := range r.Totals() {
		out.Totals = append(out.Totals, jsonTot{Level: string(t.Level), Requirements: t.Requirements, MetByOne: t.Met[0], MetByTwo: t.Met[1]})
	}
	for _, ch := range r.Chapters {
		for _, rw := range ch.Rows {
			jr := jsonReq{ID: rw.Requirement.ID, Level: string(rw.Requirement.Level), Chapter: ch.File, Meeting: rw.Meeting, Cells: map[string]jsonCell{}}
			for col, c := range rw.Cells {
				jc := jsonCell{State: string(c.State)}
				for _, e := range c.Evidence {
					jc.Evidence = append(jc.Evidence, jsonEvidence{Suite: e.Suite, Version: e.Version, Source: e.Source, Check: e.Check, Peer: e.Peer, Outcome: e.Outcome, State: string(e.State)})
				}
				jr.Cells[r.Implementations[col].Name] = jc
			}
			out.Requirements = append(out.Requirements, jr)
		}
	}
	for _, g := range r.Gaps {
		out.Gaps = append(out.Gaps, jsonGap{Implementation: g.Implementation, Source: g.Source.File, Suite: g.Source.Suite, Version: g.Source.Version, Requirements: g.Requirements})
	}
	out.Unknown = append(out.Unknown, r.Unknown...)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

type jsonGap struct {
	Implementation string   `json:"implementation"`
	Source         string   `json:"source"`
	Suite          string   `json:"suite"`
	Version        string   `json:"version,omitempty"`
	Requirements   []string `json:"requirements"`
}
