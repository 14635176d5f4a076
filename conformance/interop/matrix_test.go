package interop

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/conformance"
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
	var page bytes.Buffer
	if err := m.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `class="hazard"`) || !strings.Contains(page.String(), "documented hazard: &lt;lossy&gt;") {
		t.Errorf("the HTML page lacks the hazard cell or escapes nothing")
	}
}
