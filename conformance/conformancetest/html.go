package conformancetest

import (
	"crypto/sha256"
	"encoding/base64"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance"
)

// The parts of a page CheckPage reads.
var (
	tagRE      = regexp.MustCompile(`<(/?)([a-zA-Z][a-zA-Z0-9]*)([^>]*)>`)
	quotedRE   = regexp.MustCompile(`"[^"]*"`)
	idRE       = regexp.MustCompile(`\sid="([^"]*)"`)
	hrefRE     = regexp.MustCompile(`\shref="([^"]*)"`)
	scriptRE   = regexp.MustCompile(`(?s)<script>(.*?)</script>`)
	styleRE    = regexp.MustCompile(`(?s)<style>(.*?)</style>`)
	voidTags   = map[string]bool{"meta": true, "input": true, "br": true, "hr": true, "img": true, "link": true}
	rawTextTag = regexp.MustCompile(`(?s)<(script|style)>.*?</(script|style)>`)
)

// CheckPage fails the test unless page holds what every HTML page of the suites holds:
// balanced elements, unique ids, in-page links that resolve, no external resource, and a content
// security policy that admits exactly the page's own scripts and style. It returns the page's
// ids.
func CheckPage(t testing.TB, page string) map[string]bool {
	t.Helper()
	if !strings.HasPrefix(page, "<!DOCTYPE html>\n<html lang=\"en\">") {
		t.Errorf("page starts %q", conformance.Clip(page, 60))
	}
	body := rawTextTag.ReplaceAllString(page, "<$1></$2>")
	var stack []string
	for _, m := range tagRE.FindAllStringSubmatch(body, -1) {
		name := strings.ToLower(m[2])
		switch {
		case voidTags[name]:
		case m[1] == "":
			stack = append(stack, name)
		case len(stack) == 0 || stack[len(stack)-1] != name:
			t.Fatalf("</%s> closes %v", name, stack)
		default:
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) != 0 {
		t.Errorf("unclosed elements %v", stack)
	}
	ids := map[string]bool{}
	for _, m := range idRE.FindAllStringSubmatch(body, -1) {
		if ids[m[1]] {
			t.Errorf("id %q is not unique", m[1])
		}
		ids[m[1]] = true
	}
	for _, m := range hrefRE.FindAllStringSubmatch(body, -1) {
		if target, ok := strings.CutPrefix(m[1], "#"); ok && !ids[target] {
			t.Errorf("link %q has no target", m[1])
		}
	}
	for _, m := range tagRE.FindAllStringSubmatch(body, -1) {
		attrs := strings.ToLower(quotedRE.ReplaceAllString(m[3], `""`))
		switch name := strings.ToLower(m[2]); {
		case name == "img" || name == "link" || name == "iframe" || name == "object" || name == "embed" || name == "svg":
			t.Errorf("the page embeds <%s>", name)
		case strings.Contains(attrs, "src=") || strings.Contains(attrs, "style=") || strings.Contains(attrs, " on"):
			t.Errorf("the page has a tag with a resource, style or handler attribute: %s", m[0])
		}
	}
	if strings.Contains(page, "url(") || strings.Contains(page, "@import") {
		t.Error("the style loads something")
	}
	scripts, styles := scriptRE.FindAllStringSubmatch(page, -1), styleRE.FindAllStringSubmatch(page, -1)
	if len(scripts) != 2 || len(styles) != 1 {
		t.Fatalf("%d scripts and %d styles; want the page's 2 and 1", len(scripts), len(styles))
	}
	csp := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)">`).FindStringSubmatch(page)
	if csp == nil {
		t.Fatal("no content security policy")
	}
	policy := html.UnescapeString(csp[1])
	hash := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	want := "default-src 'none'; script-src " + hash(scripts[0][1]) + " " + hash(scripts[1][1]) + "; style-src " + hash(styles[0][1]) + "; base-uri 'none'; form-action 'none'"
	if policy != want {
		t.Errorf("content security policy\n %s\nwant\n %s", policy, want)
	}
	return ids
}
