package worker

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/conformance"
)

// chromiumEnv names a headless Chromium to use instead of the first one found on PATH.
const chromiumEnv = "SPLASH_CHROMIUM"

// chromiumBinary returns a headless Chromium. Without one the test is skipped, except in CI
// (CI set), where it fails: CI installs the Debian package chromium-headless-shell.
func chromiumBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(chromiumEnv); p != "" {
		return p
	}
	for _, name := range []string{"chromium-headless-shell", "chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no headless Chromium on PATH: install the Debian package chromium-headless-shell (or chromium), or set " + chromiumEnv
	if os.Getenv("CI") != "" {
		t.Fatal(msg + "; CI must run the browser test")
	}
	t.Skip(msg)
	return ""
}

// chromium runs a headless Chromium on a page and returns its standard output and error.
// The sandbox is off because CI containers run as root; the pages are the runner's own, and
// their content security policy admits no script but theirs.
func chromium(t *testing.T, bin, page string, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
		"--hide-scrollbars", "--user-data-dir=" + t.TempDir(),
	}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), page)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, errOut.String())
	}
	if strings.Contains(errOut.String(), "Uncaught") || strings.Contains(errOut.String(), "Refused to") {
		t.Errorf("the browser reports a script error or a blocked resource:\n%s", errOut.String())
	}
	return out.String(), errOut.String()
}

func fileURL(path, query string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: query}
	return u.String()
}

// TestHTMLInABrowser loads pages in headless Chromium and reads the rendered DOM and a
// screenshot: the summary, the failing checks with their transcripts and the filters are
// there, the page's script ran without error, a preset filter hides what it should, and
// markup in worker output never runs.
func TestHTMLInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the reference worker and a browser")
	}
	bin := chromiumBinary(t)
	page, results := realRunPage(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, []byte(page), 0o600); err != nil {
		t.Fatal(err)
	}

	dom, _ := chromium(t, bin, fileURL(path, ""), "--dump-dom")
	if !regexp.MustCompile(`<html[^>]*\sdata-script="ok"`).MatchString(dom) || regexp.MustCompile(`<html[^>]*\sdata-script-error=`).MatchString(dom) {
		t.Fatalf("the page's script did not finish cleanly:\n%s", conformance.Clip(dom, 2000))
	}
	var failing, total int
	for _, res := range results {
		total++
		if res.Outcome != string(conformance.Fail) {
			continue
		}
		failing++
		for _, want := range []string{`<tr id="` + res.ID + `" class="row">`, `<tr class="detail" id="` + res.ID + `-detail">`} {
			if !strings.Contains(dom, want) {
				t.Errorf("the rendered page lacks %s", want)
			}
		}
	}
	if failing == 0 {
		t.Fatal("the run has no failing check")
	}
	for _, want := range []string{
		`<span id="verdict" class="verdict">DOES NOT CONFORM</span>`,
		`<form id="filters" class="filters">`,
		`<output id="shown" for="filters">` + strconv.Itoa(total) + " of " + strconv.Itoa(total) + ` checks shown</output>`,
		`<ol class="transcript" start="0">`,
		`<pre class="tag-input">`,
		`<pre class="command">splash-wire`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered page lacks %s", want)
		}
	}

	// A preset filter hides every check but the failures.
	dom, _ = chromium(t, bin, fileURL(path, "outcome=FAIL"), "--dump-dom")
	shownRE := regexp.MustCompile(`<tbody class="check (\w+)( filtered-out)?"`)
	for _, m := range shownRE.FindAllStringSubmatch(dom, -1) {
		if hidden := m[2] != ""; hidden != (m[1] != "fail") {
			t.Errorf("with ?outcome=FAIL a %s check is hidden: %v", m[1], hidden)
		}
	}
	if !strings.Contains(dom, `<output id="shown" for="filters">`+strconv.Itoa(failing)+" of "+strconv.Itoa(total)+` checks shown</output>`) {
		t.Error("the filter count is wrong")
	}

	// The screenshot shows the failing verdict's colour and the passing badges'.
	shot := filepath.Join(dir, "report.png")
	chromium(t, bin, fileURL(path, ""), "--window-size=1200,900", "--screenshot="+shot)
	img := decodePNG(t, shot)
	if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 900 {
		t.Errorf("screenshot is %v", b)
	}
	for name, c := range map[string]color.RGBA{"fail": {0xcf, 0x22, 0x2e, 0xff}, "pass": {0x1a, 0x7f, 0x37, 0xff}} {
		if n := countColor(img, c); n < 100 {
			t.Errorf("the screenshot has %d pixels of the %s colour; the page is not styled", n, name)
		}
	}

	// Markup in worker output stays text in a real browser.
	hostile := filepath.Join(dir, "hostile.html")
	if err := os.WriteFile(hostile, []byte(renderHTML(t, htmlSample(t), conformance.HTMLOptions{})), 0o600); err != nil {
		t.Fatal(err)
	}
	dom, _ = chromium(t, bin, fileURL(hostile, ""), "--dump-dom")
	if regexp.MustCompile(`<[a-zA-Z][^<>]*\sdata-pwned=`).MatchString(dom) || strings.Contains(dom, "<img") || strings.Contains(dom, "<svg") {
		t.Errorf("worker output became markup:\n%s", dom)
	}
	if !strings.Contains(dom, `data-script="ok"`) || !strings.Contains(dom, `&lt;script&gt;document.documentElement.setAttribute("data-pwned","stderr")&lt;/script&gt;`) {
		t.Errorf("the hostile page did not render its text:\n%s", conformance.Clip(dom, 4000))
	}
}

func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	return img
}

func countColor(img image.Image, want color.RGBA) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if uint8(r>>8) == want.R && uint8(g>>8) == want.G && uint8(bl>>8) == want.B {
				n++
			}
		}
	}
	return n
}
