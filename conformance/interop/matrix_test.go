package interop

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/conformancetest"
	"github.com/splashv5/conform/conformance/expect"
)

// TestBundledMatrixFile reads the bundled implementations file: one host, the reference worker
// in both number models.
func TestBundledMatrixFile(t *testing.T) {
	f, err := os.Open("implementations.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := ReadMatrix(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Hosts) != 1 || len(m.Workers) != 2 || m.Workers[1].Numbers != NumbersLossy || !m.Workers[1].offers(NeedJournal) {
		t.Fatalf("%+v", m)
	}
}

// TestReadMatrixRefusesBadFiles: a file with no worker, a name used twice, no command, an
// unknown number model or an unknown field is refused.
func TestReadMatrixRefusesBadFiles(t *testing.T) {
	ok := `{"name":"w","command":["w"],"numbers":"preserve"}`
	for _, bad := range []string{
		`{"hosts":[{"name":"h","command":["h"],"numbers":"preserve"}],"workers":[]}`,
		`{"hosts":[{"name":"w","command":["h"],"numbers":"preserve"}],"workers":[` + ok + `]}`,
		`{"hosts":[{"name":"h","command":[],"numbers":"preserve"}],"workers":[` + ok + `]}`,
		`{"hosts":[{"name":"h","command":["h"],"numbers":"exact"}],"workers":[` + ok + `]}`,
		`{"hosts":[{"name":"h","command":["h"],"numbers":"preserve","extra":1}],"workers":[` + ok + `]}`,
	} {
		if _, err := ReadMatrix(strings.NewReader(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

// TestMatrixOutputs writes a finished matrix of three cells (passing, hazard, error) as text,
// JSON and HTML.
func TestMatrixOutputs(t *testing.T) {
	results := func(o conformance.Outcome) *conformance.Report {
		r := []conformance.Result{{ID: "CNF-IOP-ECHO-01", Title: "echo", Outcome: conformance.Pass}, {ID: "CNF-IOP-NUMBER-01", Title: "numbers", Outcome: o, Detail: "documented hazard: <lossy>"}}
		return &conformance.Report{Results: r, Summary: conformance.Summarize(r)}
	}
	m := &MatrixResult{Matrix: &Matrix{Hosts: []Implementation{{Name: "h", Numbers: NumbersPreserve}},
		Workers: []Implementation{{Name: "w1", Numbers: NumbersPreserve}, {Name: "w2", Numbers: NumbersLossy}, {Name: "w3", Numbers: NumbersPreserve}}},
		Cells: []Cell{{Host: "h", Worker: "w1", Report: results(conformance.Pass)}, {Host: "h", Worker: "w2", Report: results(conformance.Info)},
			{Host: "h", Worker: "w3", Err: errors.New("no relay")}}, Started: time.Now(), Duration: time.Second}
	var text bytes.Buffer
	m.WriteText(&text)
	for _, want := range []string{"PASS 2/2", "HAZARD 2/2", "ERROR", "h × w2: HAZARD", "documented hazard", "no relay"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text output lacks %q:\n%s", want, text.String())
		}
	}
	if !m.Failing() {
		t.Error("a matrix with an ERROR cell does not fail")
	}
	var js bytes.Buffer
	if err := m.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back jsonMatrix
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Cells) != 3 || back.Cells[1].Verdict != "HAZARD" {
		t.Fatalf("JSON %s: %v", js.String(), err)
	}
}

var (
	hrefRE  = regexp.MustCompile(`\shref="([^"]*)"`)
	rawText = regexp.MustCompile(`(?s)<(script|style)>(.*?)</(script|style)>`)
)

// TestMatrixHTML renders a matrix of four cells (pass, hazard, expected failure, error) with
// hostile text: the page carries exactly the report's style, scripts and content security
// policy, its elements balance, its ids are unique and its links resolve, every text is
// escaped, and each cell links to its scenarios.
func TestMatrixHTML(t *testing.T) {
	pwn := `<script>document.documentElement.setAttribute("data-pwned","1")</script>`
	cell := func(host, worker string, o conformance.Outcome, listed bool) Cell {
		r := []conformance.Result{{ID: "CNF-IOP-ECHO-01", Title: "echo", Requirements: []string{"IOP-002"}, Outcome: conformance.Pass, Counted: true},
			{ID: "CNF-IOP-NUMBER-01", Title: "numbers", Requirements: []string{"ENC-055"}, Outcome: o, Counted: true, Detail: "detail " + pwn, Transcript: []string{"relay 1: host #1 " + pwn}}}
		if listed {
			r[1].Expectation = &conformance.Expectation{Entry: expect.Entry{ID: "CNF-IOP-NUMBER-01", Outcome: expect.Fail, Reason: "known " + pwn}, Verdict: expect.Expected}
		}
		return Cell{Host: host, Worker: worker, Report: &conformance.Report{Results: r, Summary: conformance.Summarize(r)}}
	}
	host := "host <b>a</b>"
	m := &MatrixResult{Matrix: &Matrix{Hosts: []Implementation{{Name: host, Numbers: NumbersPreserve, Notes: pwn}},
		Workers: []Implementation{{Name: "w1", Numbers: NumbersPreserve}, {Name: "w2", Numbers: NumbersLossy}, {Name: "w3", Numbers: NumbersPreserve}, {Name: "w4", Numbers: NumbersPreserve}}},
		Cells: []Cell{cell(host, "w1", conformance.Pass, false), cell(host, "w2", conformance.Info, false), cell(host, "w3", conformance.Fail, true),
			{Host: host, Worker: "w4", Err: errors.New("no relay " + pwn)}}, Started: time.Now(), Duration: time.Second}
	var out bytes.Buffer
	if err := m.WriteHTML(&out); err != nil {
		t.Fatal(err)
	}
	page := out.String()

	assets := conformance.HTMLAssets()
	raw := rawText.FindAllStringSubmatch(page, -1)
	if len(raw) != 3 || raw[0][2] != string(assets.OnErrorScript) || raw[1][2] != string(assets.Style) || raw[2][2] != string(assets.Script) {
		t.Fatalf("the page does not carry exactly the report's scripts and style (%d raw texts)", len(raw))
	}
	conformancetest.CheckPage(t, page)
	body := rawText.ReplaceAllString(page, "<$1></$3>")
	for _, m := range hrefRE.FindAllStringSubmatch(body, -1) {
		if !strings.HasPrefix(m[1], "#") {
			t.Errorf("link %q leaves the page", m[1])
		}
	}
	if strings.Contains(body, "<b>") || strings.Count(body, "<script>") != 2 {
		t.Error("a text of the matrix is not escaped")
	}
	for _, want := range []string{
		`<span id="verdict" class="verdict">FAILS</span>`,
		`<a href="#cell-0"><span class="badge pass">PASS</span></a>`,
		`<a href="#cell-1"><span class="badge info">HAZARD</span></a>`,
		`<a href="#cell-2"><span class="badge skip">EXPECTED</span></a>`,
		`<a href="#cell-3"><span class="badge crash">ERROR</span></a>`,
		`<tr id="cell-2-CNF-IOP-NUMBER-01" class="row">`,
		`<span class="expectation expected" title="known &lt;script&gt;`,
		`<span class="req">ENC-055</span>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}
