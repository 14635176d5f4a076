package worker

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/errkind"
)

// Spec: ERR-022
// TestErrorKindsMatchTheErrorsChapter checks that the worker kinds listed in the errors
// chapter are exactly the names the runtime reports.
func TestErrorKindsMatchTheErrorsChapter(t *testing.T) {
	data, err := os.ReadFile("../../spec/07-errors.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "- **ERR-022**")
	if start < 0 {
		t.Fatal("ERR-022 not found")
	}
	section := text[start:]
	if end := strings.Index(section[1:], "\n- **"); end >= 0 {
		section = section[:end+1]
	}
	cell := regexp.MustCompile("(?m)^  \\| ((?:`[A-Za-z]+`(?:, )?)+) \\|")
	name := regexp.MustCompile("`([A-Za-z]+)`")
	var listed []string
	for _, m := range cell.FindAllStringSubmatch(section, -1) {
		for _, n := range name.FindAllStringSubmatch(m[1], -1) {
			listed = append(listed, n[1])
		}
	}
	var reported []string
	for _, k := range errkind.All[kinds]() {
		reported = append(reported, k.String())
	}
	slices.Sort(listed)
	slices.Sort(reported)
	if !slices.Equal(listed, reported) {
		t.Errorf("ERR-022 lists\n  %v\nthe runtime reports\n  %v", listed, reported)
	}
}
