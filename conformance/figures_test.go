package conformance

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// The HTML report shows the figures it is given before the checks, the SVG as written and the
// caption escaped; without figures it has no figure section.
func TestHTMLFigures(t *testing.T) {
	r := NewReport(SuiteInfo{Name: "explore"}, []string{"w"}, false, time.Unix(0, 0), []Result{{ID: "CNF-EXP-LEARN-01", Level: Must, Outcome: Pass, Counted: true}})
	svg := `<svg xmlns="http://www.w3.org/2000/svg"><text>a &lt; b</text></svg>`
	var b bytes.Buffer
	if err := r.WriteHTML(&b, HTMLOptions{Figures: []Figure{{Caption: "port <machine>", SVG: []byte(svg)}}}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	fig := strings.Index(page, svg)
	checks := strings.Index(page, `<section id="checks">`)
	if fig < 0 || checks < 0 || fig > checks {
		t.Fatalf("the figure is not shown before the checks (figure at %d, checks at %d)", fig, checks)
	}
	if !strings.Contains(page, "port &lt;machine&gt;") {
		t.Error("the caption is not escaped")
	}
	b.Reset()
	if err := r.WriteHTML(&b, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `id="figures"`) {
		t.Error("a report without figures has a figure section")
	}
}
