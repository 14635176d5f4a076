package implreport

import (
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/splashv5/conform/conformance"
)

// HTML bounds: a cell's record is a summary, the full transcript stays in the suite's report.
const (
	maxDetailBytes     = 2000
	maxTranscriptLines = 60
)

// cellClass maps a state to the outcome class of the suites' page style.
var cellClass = map[conformance.RequirementState]string{
	conformance.ReqMet: "pass", conformance.ReqFailed: "fail", conformance.ReqExpectedFailure: "skip",
	conformance.ReqDeviates: "info", conformance.ReqNotApplicable: "skip", conformance.ReqUnjudged: "",
}

// cellMark is the short text of a state in a table cell.
var cellMark = map[conformance.RequirementState]string{
	conformance.ReqMet: "met", conformance.ReqFailed: "FAIL", conformance.ReqExpectedFailure: "expected",
	conformance.ReqDeviates: "deviates", conformance.ReqNotApplicable: "n/a", conformance.ReqUnjudged: "·",
}

type htmlCell struct {
	Class, Mark, State string
	Evidence           []htmlEvidence
}

type htmlEvidence struct {
	Check, Title, Outcome, Class, Source, Version, Peer, Detail string
	Transcript                                                  []string
	Cut                                                         int
}

type htmlRow struct {
	ID, URL, Title, Level string
	Meeting               int
	Cells                 []htmlCell
}

type htmlChapter struct {
	File, Title string
	Rows        []htmlRow
}

// WriteHTML writes the merged report as one self-contained page in the style of the suites'
// HTML report: the totals, the implementations and their reports, and per chapter every
// requirement against every implementation, each cell opening to the checks that decide it.
// specBase is the URL prefix requirement IDs link to ("" or "-": no links).
func (r *Report) WriteHTML(w io.Writer, specBase string) error {
	if err := conformance.CheckSpecBase(specBase); err != nil {
		return err
	}
	if specBase == "-" {
		specBase = ""
	}
	var chapters []htmlChapter
	for _, ch := range r.Chapters {
		hc := htmlChapter{File: ch.File, Title: ch.Title}
		for _, rw := range ch.Rows {
			req := rw.Requirement
			hr := htmlRow{ID: req.ID, Title: string(req.Level) + ": " + clip(req.Text, 400), Level: string(req.Level), Meeting: rw.Meeting}
			if specBase != "" {
				hr.URL = specBase + req.Chapter + "#:~:text=" + req.ID
			}
			for _, c := range rw.Cells {
				hcell := htmlCell{Class: cellClass[c.State], Mark: cellMark[c.State], State: string(c.State)}
				for _, e := range c.Evidence {
					he := htmlEvidence{Check: e.Check, Title: e.Title, Outcome: e.Outcome, Class: strings.ToLower(e.Outcome),
						Source: e.Source, Version: e.Version, Peer: e.Peer, Detail: clip(e.Detail, maxDetailBytes)}
					he.Transcript = e.Transcript
					if len(he.Transcript) > maxTranscriptLines {
						he.Cut = len(he.Transcript) - maxTranscriptLines
						he.Transcript = he.Transcript[:maxTranscriptLines]
					}
					hcell.Evidence = append(hcell.Evidence, he)
				}
				hr.Cells = append(hr.Cells, hcell)
			}
			hc.Rows = append(hc.Rows, hr)
		}
		chapters = append(chapters, hc)
	}
	type implView struct {
		Implementation
		Counts []int
	}
	var impls []implView
	for col, impl := range r.Implementations {
		counts := r.ImplementationCounts(col)
		v := implView{Implementation: impl}
		for _, s := range stateOrder {
			v.Counts = append(v.Counts, counts[s])
		}
		impls = append(impls, v)
	}
	return page.Execute(w, map[string]any{
		"Assets": conformance.HTMLAssets(), "Totals": r.Totals(), "Impls": impls, "States": stateOrder,
		"Chapters": chapters, "Gaps": r.Gaps, "Unknown": r.Unknown, "SuiteVersion": conformance.SuiteVersion,
	})
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("… (%d more bytes in the suite's report)", len(s)-n)
}

var page = template.Must(template.New("implreport").Funcs(template.FuncMap{
	"reason": gapReason,
	"join":   strings.Join,
}).Parse(`{{.Assets.Head "splash-conform report" "splash-conform: implementation report"}}
<p id="script-error" class="script-error" hidden>The page's script failed: <span id="script-error-text"></span>.</p>
<header id="summary" class="summary conforms">
<h1>Implementation report</h1>
<p>Each requirement of the specification against each implementation: a cell is <b>met</b> when every check citing the requirement that ran passed, <b>FAIL</b> when one failed, <b>expected</b> when the failure is listed in the implementation's expectations, <b>deviates</b> for a SHOULD deviation, <b>n/a</b> when every such check was skipped, and · when no report judged it. An interop scenario speaks for the host on host requirements, for the worker on worker requirements, and for both on the wire core. Merged by splash-conform {{.SuiteVersion}}.</p>
<table class="areas" id="totals">
<thead><tr><th>Level</th><th>Requirements</th><th>Met by one or more</th><th>Met by two or more</th></tr></thead>
<tbody>
{{- range .Totals}}
<tr><th scope="row">{{.Level}}</th><td>{{.Requirements}}</td><td>{{index .Met 0}}</td><td>{{index .Met 1}}</td></tr>
{{- end}}
</tbody>
</table>
</header>

<section id="implementations">
<h2>Implementations</h2>
<table class="areas">
<thead><tr><th>Implementation</th>{{range .States}}<th>{{.}}</th>{{end}}<th>Reports</th></tr></thead>
<tbody>
{{- range .Impls}}
<tr><th scope="row">{{.Name}}</th>{{range .Counts}}<td>{{.}}</td>{{end}}<td>{{range .Sources}}<code>{{.File}}</code> ({{.Suite}}{{if .Version}} {{.Version}}{{end}}) {{end}}</td></tr>
{{- end}}
</tbody>
</table>
{{- if .Gaps}}
<h3>What the reports could not judge</h3>
<ul id="gaps">
{{- range .Gaps}}
<li><b>{{.Implementation}}</b>: <code>{{.Source.File}}</code> ({{.Source.Suite}}{{if .Source.Version}} {{.Source.Version}}{{end}}) could not judge {{len .Requirements}} requirements the current suite judges: {{reason .Source}}. <span class="req">{{join .Requirements " "}}</span></li>
{{- end}}
</ul>
{{- end}}
{{- if .Unknown}}
<p class="capped">Requirement IDs the specification does not define: {{join .Unknown "; "}}</p>
{{- end}}
</section>

{{- $impls := .Impls}}
{{- range .Chapters}}
<section id="chapter-{{.File}}">
<h2>{{.Title}}</h2>
<table class="checks">
<thead><tr><th class="c-id">Requirement</th><th class="c-level">Level</th>{{range $impls}}<th>{{.Name}}</th>{{end}}<th>Met by</th></tr></thead>
<tbody>
{{- range .Rows}}
<tr id="{{.ID}}" class="row"><td class="id">{{if .URL}}<a class="req" href="{{.URL}}" title="{{.Title}}">{{.ID}}</a>{{else}}<span class="req" title="{{.Title}}">{{.ID}}</span>{{end}}</td><td>{{.Level}}</td>
{{- range .Cells}}<td class="{{.Class}}">{{if .Evidence}}<details class="frame"><summary title="{{.State}}">{{.Mark}}</summary><ul>
{{- range .Evidence}}<li><code>{{.Check}}</code> <span class="badge {{.Class}}">{{.Outcome}}</span> {{.Title}}{{if .Peer}} (with {{.Peer}}){{end}} <span class="needs">{{.Source}}{{if .Version}}, suite {{.Version}}{{end}}</span>{{if .Detail}}<pre>{{.Detail}}</pre>{{end}}{{if .Transcript}}<pre>{{join .Transcript "\n"}}{{if .Cut}}
… {{.Cut}} more lines in the suite's report{{end}}</pre>{{end}}</li>{{end}}
</ul></details>{{else}}{{.Mark}}{{end}}</td>{{end}}
<td>{{.Meeting}}</td></tr>
{{- end}}
</tbody>
</table>
</section>
{{- end}}
<footer><p>Generated by splash-conform report. The same data is in the JSON report (<code>-json</code>).</p></footer>
<script>{{.Assets.Script}}</script>
</body>
</html>
`))
