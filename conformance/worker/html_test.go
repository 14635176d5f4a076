package worker

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"html/template"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/conformancetest"
	"github.com/splashv5/conform/internal/childproc"
)

// htmlSample is sampleReport with frame records, hostile worker output, and a passing check
// with a record (as under -v).
func htmlSample(t *testing.T) *conformance.Report {
	t.Helper()
	f := newFrameFixture(t)
	f.record(true, conformance.FrameLine, seal(t, f.host, f.invoke(t, "req-1", "hello")))
	f.record(true, conformance.FrameLine, flipLastTagDigit(seal(t, f.host, f.invoke(t, "req-2", "<script>alert(1)</script>"))))
	f.record(false, conformance.FrameLine, []byte(`</pre><script>document.documentElement.setAttribute("data-pwned","frame")</script><img src=x onerror=alert(2)>`))
	f.record(true, conformance.FrameLine, []byte("{\"sequence\":1,\xff}"))
	r := sampleReport()
	for i := range r.Results {
		res := &r.Results[i]
		if res.ID == "CNF-FRAME-01" {
			res.Transcript, res.Frames = f.t.Transcript, f.t.frames
			res.Stderr = "panic: <script>document.documentElement.setAttribute(\"data-pwned\",\"stderr\")</script>\n\x00\x1b[31m]]></pre>"
			res.Actual = `"'><svg onload=alert(3)>`
		}
		if res.ID == "CNF-BOOT-01" {
			res.Transcript = []string{"+1ms worker 1 started"}
			res.Detail = "kept under -v"
		}
	}
	r.Worker = []string{"./my worker", "--journal", "{journal}", "<b>x</b>"}
	return r
}

func renderHTML(t *testing.T, r *conformance.Report, opts conformance.HTMLOptions) string {
	t.Helper()
	var out bytes.Buffer
	if err := r.WriteHTML(&out, opts); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestHTMLStructure checks the page's structure: the summary, the table of areas, one row and
// anchor per check, records under failing checks (open) and under checks kept with -v
// (closed), requirement links to the chapters, frames with their own anchors and the replay
// command.
func TestHTMLStructure(t *testing.T) {
	r := htmlSample(t)
	page := renderHTML(t, r, conformance.HTMLOptions{})
	ids := conformancetest.CheckPage(t, page)
	for _, res := range r.Results {
		if !ids[res.ID] {
			t.Errorf("no anchor for %s", res.ID)
		}
		row := regexp.MustCompile(`(?s)<tbody class="check (\w+)" data-outcome="(\w+)" data-area="(\w+)">\s*<tr id="` + res.ID + `"`).FindStringSubmatch(page)
		if row == nil || row[1] != strings.ToLower(string(res.Outcome)) || row[2] != string(res.Outcome) || row[3] != conformance.AreaOf(res.ID) {
			t.Errorf("%s: row %v", res.ID, row)
		}
	}
	for id, want := range map[string]bool{"CNF-FRAME-01-detail": true, "CNF-BOOT-01-detail": true, "CNF-CANCEL-01-detail": true, "CNF-DURABLE-14-detail": true} {
		if ids[id] != want {
			t.Errorf("record %s present %v; want %v", id, ids[id], want)
		}
	}
	for _, want := range []string{
		`<span id="verdict" class="verdict">DOES NOT CONFORM</span>`,
		`<span class="count pass">1 PASS</span> <span class="count fail">1 FAIL</span> <span class="count crash">1 CRASH</span> <span class="count timeout">1 TIMEOUT</span> <span class="count skip">1 SKIP</span> <span class="count info">1 INFO</span>`,
		`3 counted failures (exit status 1)`,
		`<code id="worker-command">&#39;./my worker&#39; --journal {journal} &#39;&lt;b&gt;x&lt;/b&gt;&#39;</code>`,
		`<time datetime="2025-01-02T03:04:05Z">`,
		`<tr data-area="CANCEL"><th scope="row" title="cooperative cancellation">CANCEL</th><td>2</td><td>0</td><td>0</td><td class="crash">1</td><td class="timeout">1</td><td>0</td><td>0</td></tr>`,
		`<tfoot><tr><th scope="row">total</th><td>6</td><td>1</td><td>1</td><td>1</td><td>1</td><td>1</td><td>1</td></tr></tfoot>`,
		`<a class="req" href="https://github.com/splashv5/conform/blob/main/spec/03-framing.md#:~:text=FRM-025" title="MUST: `,
		`<a class="req" href="https://github.com/splashv5/conform/blob/main/spec/13-worker.md#:~:text=WRK-091"`,
		`<tr class="detail" id="CNF-FRAME-01-detail"><td colspan="6">` + "\n<details open>",
		`<tr class="detail" id="CNF-BOOT-01-detail"><td colspan="6">` + "\n<details>",
		`<details class="frame sent failing" id="CNF-FRAME-01-t1" open>`,
		`<details class="frame sent" id="CNF-FRAME-01-t0">`,
		`<details class="frame received" id="CNF-FRAME-01-t2">`,
		`It decodes <a href="#CNF-FRAME-01-t1">the frame</a>`,
		`<pre class="command">splash-wire -allow-nonportable &lt;&lt;&#39;EOF&#39;` + "\n" + `{&#34;op&#34;:&#34;decode&#34;,&#34;id&#34;:&#34;CNF-FRAME-01&#34;,`,
		`<pre class="tag-input">{&#34;domain&#34;:&#34;splash-worker-auth-v5&#34;,&#34;protocol_version&#34;:5,&#34;sender&#34;:&#34;host&#34;,&#34;sequence&#34;:2,`,
		`<span class="bad">does not decode:</span> protocol: Serialization`,
		`<form id="filters" class="filters" hidden>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(page, `id="CNF-PROFILE`) || strings.Count(page, `<tbody class="check `) != len(r.Results) {
		t.Errorf("%d check bodies for %d results", strings.Count(page, `<tbody class="check `), len(r.Results))
	}

	// The spec links follow the option.
	relative := renderHTML(t, r, conformance.HTMLOptions{SpecBase: "../spec/"})
	if !strings.Contains(relative, `href="../spec/03-framing.md#:~:text=FRM-025"`) {
		t.Error("a relative spec base is not used")
	}
	none := renderHTML(t, r, conformance.HTMLOptions{SpecBase: "-"})
	if strings.Contains(none, `class="req" href=`) || !strings.Contains(none, `<span class="req" title="MUST: `) {
		t.Error(`SpecBase "-" still links requirements`)
	}
	conformancetest.CheckPage(t, none)
}

// TestHTMLEscapesWorkerOutput feeds markup through every text a worker controls (frames,
// standard error, the actual behaviour) and a hostile spec base, and requires it to stay text.
func TestHTMLEscapesWorkerOutput(t *testing.T) {
	r := htmlSample(t)
	if err := r.WriteHTML(io.Discard, conformance.HTMLOptions{SpecBase: "javascript:alert(4)//"}); !errors.Is(err, conformance.ErrSpecBase) {
		t.Errorf("a javascript: spec base gives %v", err)
	}
	page := renderHTML(t, r, conformance.HTMLOptions{})
	conformancetest.CheckPage(t, page)
	for _, bad := range []string{"<script>document", "<script>alert", "<img", "<svg", "</pre><script", "</pre><img", "\x00", "\x1b"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page contains %q", bad)
		}
	}
	for _, want := range []string{
		`&lt;script&gt;document.documentElement.setAttribute(&#34;data-pwned&#34;,&#34;stderr&#34;)&lt;/script&gt;`,
		`&lt;/pre&gt;&lt;script&gt;document.documentElement.setAttribute(&#34;data-pwned&#34;,&#34;frame&#34;)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;`,
		`&#34;&#39;&gt;&lt;svg onload=alert(3)&gt;`,
		"\n\u2400\u241b[31m]]&gt;&lt;/pre&gt;",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks the escaped text %s", want)
		}
	}
	if n := strings.Count(page, "<script>"); n != 2 {
		t.Errorf("%d script elements; the page has 2 of its own", n)
	}
}

// TestHTMLSizeIsBounded renders transcripts far larger than the page's budget: the page stays
// within the budget plus markup, says that it was cut and where, and still lists every check.
func TestHTMLSizeIsBounded(t *testing.T) {
	f := newFrameFixture(t)
	payload := strings.Repeat("y", 1000<<10)
	huge := seal(t, f.host, f.invoke(t, "req-1", payload))
	r := &conformance.Report{Suite: Suite(), Worker: []string{"w"}, Started: time.Unix(0, 0)}
	const checks, frames = 8, 6
	for i := range checks {
		var res conformance.Result
		res.ID, res.Level, res.Title, res.Requirements = fmt.Sprintf("CNF-FRAME-%02d", i+1), conformance.Must, "huge", []string{"FRM-025"}
		res.Outcome, res.Counted = conformance.Fail, true
		res.Expected, res.Actual, res.Stderr = "a", strings.Repeat("z", 3<<20), strings.Repeat("e", 4096)
		for j := range frames {
			res.Transcript = append(res.Transcript, "→ worker 1: …")
			res.Frames = append(res.Frames, conformance.FrameRecord{Entry: j, Worker: 1, Sent: true, Kind: conformance.FrameLine, Raw: huge, Size: len(huge)})
		}
		r.Results = append(r.Results, res)
	}
	r.Summary = conformance.Summarize(r.Results)
	var input int
	for _, res := range r.Results {
		input += len(res.Actual)
		for _, fr := range res.Frames {
			input += len(fr.Raw)
		}
	}
	const budget = 2 << 20
	page := renderHTML(t, r, conformance.HTMLOptions{Budget: budget})
	conformancetest.CheckPage(t, page)
	// Markup, cut notices and replay notes cost a few KiB per check.
	if limit := budget + checks*frames*4096 + 64<<10; len(page) > limit {
		t.Errorf("a page over %d bytes of texts is %d bytes; the bound is %d", input, len(page), limit)
	}
	if !strings.Contains(page, `<p id="capped" class="capped">This page is capped at 2097152 bytes`) {
		t.Error("the page does not say that it was cut")
	}
	if n := strings.Count(page, `<p class="cut">[`); n < checks*frames {
		t.Errorf("%d cut notices for %d cut frames", n, checks*frames)
	}
	if strings.Count(page, `<tbody class="check fail"`) != checks {
		t.Error("a check is missing from the page")
	}

	// The default budget holds a few whole frames of the protocol's maximum size.
	page = renderHTML(t, r, conformance.HTMLOptions{})
	if len(page) > conformance.DefaultHTMLBudget+checks*frames*4096+64<<10 {
		t.Errorf("page of %d bytes with the default budget of %d", len(page), conformance.DefaultHTMLBudget)
	}
	if !strings.Contains(page, template.HTMLEscapeString(string(huge[len(huge)-200:]))) {
		t.Error("the first frame is not shown whole")
	}
}

// TestHTMLReplayRunsInSplashWire pastes the replay command of a page into a shell with a
// freshly built splash-wire: it must decode the failing frame to the recorded message, and
// its re-seal must hash the same tag input as the runner.
func TestHTMLReplayRunsInSplashWire(t *testing.T) {
	if testing.Short() {
		t.Skip("builds splash-wire")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no POSIX shell")
	}
	root, ok := childproc.ModuleRootFrom(mustGetwd())
	if !ok {
		t.Fatal("no module root")
	}
	dir := t.TempDir()
	if err := childproc.Build(root, "./cmd/splash-wire", filepath.Join(dir, "splash-wire")); err != nil {
		t.Fatal(err)
	}
	r := htmlSample(t)
	page := renderHTML(t, r, conformance.HTMLOptions{})
	m := regexp.MustCompile(`(?s)<pre class="command">(.*?)</pre>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no replay command")
	}
	cmd := exec.Command(sh, "-c", html.UnescapeString(m[1]))
	cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the replay command fails: %v\n%s", err, out)
	}
	var rec *conformance.FrameRecord
	for _, res := range r.Results {
		if res.ID == "CNF-FRAME-01" {
			rec = &res.Frames[1]
		}
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		t.Fatalf("splash-wire answered %d lines:\n%s", len(lines), out)
	}
	var decoded struct {
		ID       string `json:"id"`
		Sequence uint64 `json:"sequence"`
		Message  string `json:"message"`
	}
	var sealed struct {
		Results []struct {
			AuthPayload string `json:"auth_payload"`
			Sequence    uint64 `json:"sequence"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &decoded); err != nil || decoded.ID != "CNF-FRAME-01" || decoded.Sequence != 2 || decoded.Message != rec.Message {
		t.Errorf("decode answered %s (%v); want sequence 2 and message %s", lines[0], err, rec.Message)
	}
	if err := json.Unmarshal([]byte(lines[1]), &sealed); err != nil || len(sealed.Results) != 1 ||
		sealed.Results[0].Sequence != 2 || sealed.Results[0].AuthPayload != rec.TagInput {
		t.Errorf("seal answered %s (%v); want the tag input %s", lines[1], err, rec.TagInput)
	}

	// A bad bootstrap replays as bootstrap_read.
	cmdText, note := conformance.ReplayCommand("CNF-BOOT-01", &conformance.FrameRecord{Sent: true, Kind: conformance.FrameBytes, Raw: []byte("SPLPBOOX"), Size: 8})
	if note != "" {
		t.Fatal(note)
	}
	cmd = exec.Command(sh, "-c", cmdText)
	cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err = cmd.Output(); err != nil || !strings.Contains(string(out), `"id":"CNF-BOOT-01"`) || !strings.Contains(string(out), `"error"`) {
		t.Errorf("bootstrap replay: %v\n%s", err, out)
	}
}

// TestFramesMatchSchema validates a JSON index with frame records against the schema.
func TestFramesMatchSchema(t *testing.T) {
	validateReports(t, htmlSample(t))
	var out bytes.Buffer
	r := htmlSample(t)
	if err := r.WriteJSON(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"direction": "sent"`, `"tag_verified": false`, `"tag_input": "{\"domain\":\"splash-worker-auth-v5\"`, `"raw_hex": "7b2273657175656e6365223a312cff7d"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the JSON index lacks %s", want)
		}
	}
}

// TestHTMLFromARealRun runs frame checks against the reference worker with its tag check
// turned off, writes the page through the command line, and finds each failing check with
// its transcript, the frame the worker should have refused, and the tag input.
func TestHTMLFromARealRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the reference worker")
	}
	page, results := realRunPage(t)
	conformancetest.CheckPage(t, page)
	failed := 0
	for _, res := range results {
		if res.Outcome != string(conformance.Fail) {
			continue
		}
		failed++
		if len(res.Frames) == 0 {
			t.Errorf("%s failed without frame records", res.ID)
			continue
		}
		detail := regexp.MustCompile(`(?s)<tr class="detail" id="` + res.ID + `-detail">.*?</tbody>`).FindString(page)
		for _, want := range []string{"<details open>", `class="frame sent failing"`, `<pre class="tag-input">`, `<pre class="command">splash-wire`, `<ol class="transcript" start="0">`} {
			if !strings.Contains(detail, want) {
				t.Errorf("%s: the record lacks %s", res.ID, want)
			}
		}
	}
	if failed == 0 {
		t.Fatal("no check failed against a worker that skips its tag check")
	}
}

// indexResult is what the tests read back from a JSON index.
type indexResult struct {
	ID      string      `json:"id"`
	Outcome string      `json:"outcome"`
	Frames  []jsonFrame `json:"frames"`
}

// realRunPage runs tag checks against a faulty reference worker through Main, with -html and
// -json, and returns the page and the results of the JSON index (validated by its schema).
func realRunPage(t *testing.T) (string, []indexResult) {
	t.Helper()
	cfg := faultyConfig(t, "--fault", "skip-tag-check")
	dir := t.TempDir()
	htmlPath, jsonPath := filepath.Join(dir, "report.html"), filepath.Join(dir, "report.json")
	args := []string{"-run", `CNF-(FRAME-0[1-4]|BOOT-01|PROFILE-01)`, "-parallel", "4", "-timeout", "10s", "-scratch", dir, "-html", htmlPath, "-json", jsonPath, "--"}
	var stdout, stderr bytes.Buffer
	if code := Main(append(args, cfg.Worker...), &stdout, &stderr); code != conformance.ExitFailures {
		t.Fatalf("exit %d; want %d\n%s%s", code, conformance.ExitFailures, stdout.String(), stderr.String())
	}
	page, err := os.ReadFile(htmlPath)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	v := loadSchema(t, "report.schema.json")
	if errs := v.validate(v.root, decodeJSON(t, data), ""); len(errs) > 0 {
		t.Errorf("JSON index violates the schema:\n  %s", strings.Join(errs, "\n  "))
	}
	var index struct {
		Results []indexResult `json:"results"`
	}
	if err := json.Unmarshal(data, &index); err != nil {
		t.Fatal(err)
	}
	return string(page), index.Results
}

// TestSpecBaseFlag checks that the command line refuses a spec base that is no http, https or
// file URL or relative reference before it runs anything.
func TestSpecBaseFlag(t *testing.T) {
	for base, want := range map[string]int{"javascript:alert(1)": conformance.ExitUsage, "data:text/html,x": conformance.ExitUsage, "../spec/": conformance.ExitOK, "-": conformance.ExitOK, "https://example.org/spec/": conformance.ExitOK} {
		var stdout, stderr bytes.Buffer
		if got := Main([]string{"-spec-base", base, "-list", "-run", "CNF-BOOT-01"}, &stdout, &stderr); got != want {
			t.Errorf("-spec-base %q: exit %d; want %d (%s)", base, got, want, stderr.String())
		}
	}
}
