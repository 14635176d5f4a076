package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/expect"
)

// Matrix is the implementations file of a matrix run (docs/interop.md): every host is paired
// with every worker.
type Matrix struct {
	Hosts   []Implementation `json:"hosts"`
	Workers []Implementation `json:"workers"`
}

// Tokens a matrix command may name instead of a program: the bundled reference programs,
// built from this module when they are not next to the running executable.
const (
	TokenReferenceHost   = "{reference-host}"
	TokenReferenceWorker = "{reference-worker}"
)

// ReadMatrix reads and checks an implementations file.
func ReadMatrix(r io.Reader) (*Matrix, error) {
	dec := json.NewDecoder(io.LimitReader(r, 1<<20))
	dec.DisallowUnknownFields()
	var m Matrix
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("the implementations file: %w", err)
	}
	if len(m.Hosts) == 0 || len(m.Workers) == 0 {
		return nil, errors.New("the implementations file lists no host or no worker")
	}
	names := map[string]bool{}
	for _, impl := range slices.Concat(m.Hosts, m.Workers) {
		switch {
		case impl.Name == "" || names[impl.Name]:
			return nil, fmt.Errorf("implementation name %q is empty or used twice", impl.Name)
		case strings.ContainsFunc(impl.Name, func(r rune) bool { return r == '/' || r < ' ' }):
			return nil, fmt.Errorf("implementation name %q holds a slash or a control character (a cell's scenarios are named HOST/WORKER/ID)", impl.Name)
		case len(impl.Command) == 0:
			return nil, fmt.Errorf("implementation %s has no command", impl.Name)
		case impl.Numbers != NumbersPreserve && impl.Numbers != NumbersLossy:
			return nil, fmt.Errorf("implementation %s: numbers must be %q or %q", impl.Name, NumbersPreserve, NumbersLossy)
		}
		names[impl.Name] = true
	}
	return &m, nil
}

// Cell is the result of one pair.
type Cell struct {
	Host, Worker string
	Report       *conformance.Report
	// Err is set when the pair could not run at all.
	Err error
}

// Verdict is the cell's one word: PASS, HAZARD (passing, with documented hazards), EXPECTED
// (every failure is listed in the expectations file), FAIL or ERROR.
func (c Cell) Verdict() string {
	if c.Err != nil {
		return "ERROR"
	}
	switch s := c.Report.Summary; {
	case s.Failing > 0:
		return "FAIL"
	case s.Failed+s.Crashed+s.TimedOut > 0:
		return "EXPECTED"
	case s.Info > 0:
		return "HAZARD"
	}
	return "PASS"
}

// CellID names a scenario of the cell of host and worker, as the expectations of a matrix run
// name it: HOST/WORKER/ID (docs/interop.md).
func CellID(host, worker, id string) string { return host + "/" + worker + "/" + id }

// MatrixEntries returns the catalog entries of every cell of m, their IDs qualified by
// CellID: what an expectations file of a matrix run may name.
func MatrixEntries(m *Matrix) []conformance.CatalogEntry {
	var out []conformance.CatalogEntry
	for _, h := range m.Hosts {
		for _, w := range m.Workers {
			for _, e := range CatalogEntries() {
				e.ID = CellID(h.Name, w.Name, e.ID)
				out = append(out, e)
			}
		}
	}
	return out
}

// Judge judges every cell against the expectations as x says (-expect, -expect-strict,
// -write-expectations; loaded is the -expect file or nil) and returns the report of the whole
// matrix: every cell's results under their CellID, whose exit code is the run's.
func (m *MatrixResult) Judge(x *conformance.ExpectFlags, loaded *expect.File) (*conformance.Report, error) {
	all := &conformance.Report{Suite: Suite(), Started: m.Started, Duration: m.Duration}
	for _, c := range m.Cells {
		if c.Report == nil {
			continue
		}
		all.Worker = append(all.Worker, c.Report.Worker...)
		for _, r := range c.Report.Results {
			r.ID = CellID(c.Host, c.Worker, r.ID)
			all.Results = append(all.Results, r)
		}
	}
	all.Summary = conformance.Summarize(all.Results)
	if err := x.Apply(all, loaded); err != nil {
		return nil, err
	}
	i := 0
	for _, c := range m.Cells {
		if c.Report == nil {
			continue
		}
		for k := range c.Report.Results {
			c.Report.Results[k].Expectation = all.Results[i].Expectation
			i++
		}
		c.Report.Expectations = all.Expectations
		c.Report.Summary = conformance.Summarize(c.Report.Results)
	}
	return all, nil
}

// MatrixResult is a finished matrix run.
type MatrixResult struct {
	Matrix   *Matrix
	Cells    []Cell // hosts × workers, host-major
	Started  time.Time
	Duration time.Duration
}

// Failing reports whether a cell failed or could not run.
func (m *MatrixResult) Failing() bool {
	return slices.ContainsFunc(m.Cells, func(c Cell) bool { return c.Verdict() == "FAIL" || c.Verdict() == "ERROR" })
}

// RunMatrix runs every host × worker pair of m, one pair after another (each pair runs its
// scenarios in parallel), with cfg's other settings.
func RunMatrix(ctx context.Context, m *Matrix, cfg Config) (*MatrixResult, error) {
	res := &MatrixResult{Matrix: m, Started: time.Now()}
	for _, h := range m.Hosts {
		for _, w := range m.Workers {
			c := cfg
			c.Pair = Pair{Host: h, Worker: w}
			if cfg.Progress != nil {
				fmt.Fprintf(cfg.Progress, "\n== %s × %s\n", h.Name, w.Name)
			}
			report, err := Run(ctx, c)
			res.Cells = append(res.Cells, Cell{Host: h.Name, Worker: w.Name, Report: report, Err: err})
			if ctx.Err() != nil {
				res.Duration = time.Since(res.Started)
				return res, ctx.Err()
			}
		}
	}
	res.Duration = time.Since(res.Started)
	return res, nil
}

// WriteText writes the matrix as a table, then the cells that did not pass with their
// scenarios.
func (m *MatrixResult) WriteText(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprint(tw, "HOST \\ WORKER")
	for _, wk := range m.Matrix.Workers {
		fmt.Fprintf(tw, "\t%s (%s)", wk.Name, wk.Numbers)
	}
	fmt.Fprintln(tw)
	for i, h := range m.Matrix.Hosts {
		fmt.Fprintf(tw, "%s (%s)", h.Name, h.Numbers)
		for j := range m.Matrix.Workers {
			c := m.Cells[i*len(m.Matrix.Workers)+j]
			fmt.Fprintf(tw, "\t%s %s", c.Verdict(), c.counts())
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	for _, c := range m.Cells {
		if c.Verdict() == "PASS" {
			continue
		}
		fmt.Fprintf(w, "\n%s × %s: %s\n", c.Host, c.Worker, c.Verdict())
		if c.Err != nil {
			fmt.Fprintf(w, "  %v\n", c.Err)
			continue
		}
		for _, r := range c.Report.Results {
			if r.Outcome != conformance.Pass && r.Outcome != conformance.Skip {
				fmt.Fprintf(w, "  %-7s %s%s: %s\n", r.Outcome, r.ID, expectationNote(r), r.Detail)
			}
		}
	}
	fmt.Fprintf(w, "\nmatrix: %d pairs in %s\n", len(m.Cells), conformance.FormatDuration(m.Duration))
}

// expectationNote is " (expected)", " (fixed)" or " (regressed)" for a result an expectations
// file lists, and "" otherwise.
func expectationNote(r conformance.Result) string {
	if r.Expectation == nil {
		return ""
	}
	return " (" + string(r.Expectation.Verdict) + ")"
}

// counts is "passed/total" with skips noted.
func (c Cell) counts() string {
	if c.Report == nil {
		return ""
	}
	s := c.Report.Summary
	out := fmt.Sprintf("%d/%d", s.Passed+s.Info, s.Total-s.Skipped)
	if s.Skipped > 0 {
		out += fmt.Sprintf(" (%d skipped)", s.Skipped)
	}
	return out
}

// jsonMatrix is the JSON layout of a matrix run.
type jsonMatrix struct {
	FormatVersion int              `json:"format_version"`
	Suite         jsonMatrixSuite  `json:"suite"`
	Started       string           `json:"started"`
	Seconds       float64          `json:"duration_seconds"`
	Hosts         []Implementation `json:"hosts"`
	Workers       []Implementation `json:"workers"`
	Cells         []jsonCell       `json:"cells"`
}

// jsonMatrixSuite names the interop suite that ran the matrix: its version and catalog digest.
type jsonMatrixSuite struct {
	Version       string `json:"version"`
	CatalogDigest string `json:"catalog_digest"`
}

type jsonCell struct {
	Host      string               `json:"host"`
	Worker    string               `json:"worker"`
	Verdict   string               `json:"verdict"`
	Error     string               `json:"error,omitempty"`
	Summary   *conformance.Summary `json:"summary,omitempty"`
	Scenarios []jsonScenario       `json:"scenarios,omitempty"`
}

type jsonScenario struct {
	ID           string   `json:"id"`
	Title        string   `json:"title"`
	Requirements []string `json:"requirements"`
	Outcome      string   `json:"outcome"`
	Seconds      float64  `json:"duration_seconds"`
	Detail       string   `json:"detail,omitempty"`
	Transcript   []string `json:"transcript,omitempty"`
	// Expectation is the verdict of the expectations file's entry for the scenario, if any:
	// expected, fixed or regressed.
	Expectation string `json:"expectation,omitempty"`
	// Reason is that entry's reason.
	Reason string `json:"reason,omitempty"`
}

func (m *MatrixResult) jsonView() jsonMatrix {
	suite := Suite()
	out := jsonMatrix{FormatVersion: 1, Suite: jsonMatrixSuite{Version: suite.Version, CatalogDigest: suite.CatalogDigest},
		Started: m.Started.UTC().Format(time.RFC3339), Seconds: m.Duration.Seconds(), Hosts: m.Matrix.Hosts, Workers: m.Matrix.Workers}
	for _, c := range m.Cells {
		jc := jsonCell{Host: c.Host, Worker: c.Worker, Verdict: c.Verdict()}
		if c.Err != nil {
			jc.Error = c.Err.Error()
		}
		if c.Report != nil {
			s := c.Report.Summary
			jc.Summary = &s
			for _, r := range c.Report.Results {
				js := jsonScenario{ID: r.ID, Title: r.Title, Requirements: r.Requirements,
					Outcome: string(r.Outcome), Seconds: r.Duration.Seconds(), Detail: r.Detail, Transcript: r.Transcript}
				if e := r.Expectation; e != nil {
					js.Expectation, js.Reason = string(e.Verdict), e.Entry.Reason
				}
				jc.Scenarios = append(jc.Scenarios, js)
			}
		}
		out.Cells = append(out.Cells, jc)
	}
	return out
}

// WriteJSON writes the matrix as JSON.
func (m *MatrixResult) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(m.jsonView())
}

// WriteHTML writes the matrix as one self-contained page with the style and script of the
// suites' HTML report (conformance.HTMLAssets): a table of pairs, each cell linking to its
// scenarios, and every scenario opening to its detail and transcript.
func (m *MatrixResult) WriteHTML(w io.Writer) error {
	view := m.jsonView()
	type row struct {
		Host  Implementation
		Cells []int // indexes into view.Cells
	}
	var rows []row
	for i, h := range view.Hosts {
		r := row{Host: h}
		for j := range view.Workers {
			r.Cells = append(r.Cells, i*len(view.Workers)+j)
		}
		rows = append(rows, r)
	}
	return matrixPage.Execute(w, map[string]any{"M": view, "Rows": rows, "Failing": m.Failing(), "Assets": conformance.HTMLAssets()})
}

// verdictClasses maps a cell's verdict to the outcome class of the report's style.
var verdictClasses = map[string]string{"PASS": "pass", "FAIL": "fail", "ERROR": "crash", "HAZARD": "info", "EXPECTED": "skip"}

var matrixPage = template.Must(template.New("matrix").Funcs(template.FuncMap{
	"lower":   strings.ToLower,
	"join":    strings.Join,
	"verdict": func(v string) string { return verdictClasses[v] },
}).Parse(`{{.Assets.Head "splash-conform interop" (print "Splash interop matrix: " (or (and .Failing "FAILS") "PASSES"))}}
<p id="script-error" class="script-error" hidden>The page's script failed: <span id="script-error-text"></span>.</p>
<header id="summary" class="summary {{if .Failing}}fails{{else}}conforms{{end}}">
<h1>Splash interop matrix <span id="verdict" class="verdict">{{if .Failing}}FAILS{{else}}PASSES{{end}}</span></h1>
<dl class="run">
<dt>Started</dt><dd><time datetime="{{.M.Started}}">{{.M.Started}}</time></dd>
<dt>Duration</dt><dd>{{printf "%.1f" .M.Seconds}} s</dd>
<dt>Wire</dt><dd>every frame of both directions verified by the relay; a deviation names the side that sent it</dd>
</dl>
</header>
<section id="matrix">
<h2>Hosts × workers</h2>
<table class="areas">
<thead><tr><th>host \ worker</th>{{range .M.Workers}}<th>{{.Name}}<br><span class="needs">numbers: {{.Numbers}}{{if .Notes}} · {{.Notes}}{{end}}</span></th>{{end}}</tr></thead>
<tbody>
{{- range .Rows}}
<tr><th scope="row">{{.Host.Name}}<br><span class="needs">numbers: {{.Host.Numbers}}{{if .Host.Notes}} · {{.Host.Notes}}{{end}}</span></th>
{{- range .Cells}}{{$n := .}}{{with index $.M.Cells $n}}<td><a href="#cell-{{$n}}"><span class="badge {{verdict .Verdict}}">{{.Verdict}}</span></a>{{with .Summary}} {{.Passed}} passed · {{.Info}} hazard · {{.Failed}} failed · {{.Skipped}} skipped{{end}}</td>{{end}}{{end}}</tr>
{{- end}}
</tbody>
</table>
</section>
{{- range $i, $c := .M.Cells}}
<section id="cell-{{$i}}">
<h2>{{$c.Host}} × {{$c.Worker}} <span class="badge {{verdict $c.Verdict}}">{{$c.Verdict}}</span></h2>
{{- with $c.Summary}}
<p class="counts"><span class="count pass">{{.Passed}} PASS</span> <span class="count fail">{{.Failed}} FAIL</span> <span class="count crash">{{.Crashed}} CRASH</span> <span class="count timeout">{{.TimedOut}} TIMEOUT</span> <span class="count skip">{{.Skipped}} SKIP</span> <span class="count info">{{.Info}} INFO</span></p>
{{- end}}
{{- if $c.Error}}
<pre class="actual">{{$c.Error}}</pre>
{{- end}}
{{- if $c.Scenarios}}
<table class="checks">
<thead><tr><th class="c-id">ID</th><th>Title</th><th class="c-reqs">Requirements</th><th class="c-outcome">Outcome</th><th class="c-duration">Duration</th></tr></thead>
{{- range $c.Scenarios}}
<tbody class="check {{lower .Outcome}}">
<tr id="cell-{{$i}}-{{.ID}}" class="row">
<td class="id"><a href="#cell-{{$i}}-{{.ID}}">{{.ID}}</a></td>
<td class="title">{{.Title}}</td>
<td class="reqs">{{range .Requirements}}<span class="req">{{.}}</span> {{end}}</td>
<td class="outcome"><span class="badge {{lower .Outcome}}">{{.Outcome}}</span>{{if .Expectation}} <span class="expectation {{.Expectation}}" title="{{.Reason}}">{{.Expectation}}</span>{{end}}</td>
<td class="duration">{{printf "%.2f" .Seconds}} s</td>
</tr>
{{- if or .Detail .Transcript}}
<tr class="detail"><td colspan="5">
<details{{if eq .Outcome "FAIL" "CRASH" "TIMEOUT"}} open{{end}}>
<summary>Record of {{.ID}}</summary>
{{- if .Detail}}
<p class="detail-text">{{.Detail}}</p>
{{- end}}
{{- if .Transcript}}
<h3>Transcript</h3>
<pre class="transcript">{{join .Transcript "\n"}}</pre>
{{- end}}
</details>
</td></tr>
{{- end}}
</tbody>
{{- end}}
</table>
{{- end}}
</section>
{{- end}}
<footer><p>Generated by splash-conform interop. The JSON matrix (<code>-json</code>) holds the same cells and scenarios.</p></footer>
<script>{{.Assets.Script}}</script>
</body>
</html>
`))

// loadMatrixFile reads the implementations file at path.
func loadMatrixFile(path string) (*Matrix, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadMatrix(f)
}
