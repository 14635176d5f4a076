package worker

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/splashv5/conform/spec"
)

// The runner names exactly the statuses of the worker chapter's table, with the same class
// names, so a report never calls a defined status "not a documented exit status".
//
// Spec: WRK-092
func TestExitClassesFollowTheSpecTable(t *testing.T) {
	root, err := spec.FindModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join(root, "spec", "13-worker.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^  \| (\d+) \| ([a-z]+) \|`)
	want := map[int]string{}
	for _, m := range row.FindAllSubmatch(text, -1) {
		code, _ := strconv.Atoi(string(m[1]))
		want[code] = string(m[2])
	}
	if len(want) < 9 {
		t.Fatalf("found %d status rows in the WRK-092 table; the pattern no longer matches the chapter", len(want))
	}
	if diff := cmp.Diff(want, exitClasses); diff != "" {
		t.Fatalf("exit classes differ from the WRK-092 table (-spec +runner):\n%s", diff)
	}
	if got := exitClass(1); got != "not a documented exit status" {
		t.Fatalf("exitClass(1) = %q", got)
	}
}
