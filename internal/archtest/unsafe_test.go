package archtest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// unsafeImporters are the only packages allowed to import unsafe: the canonical JSON package's
// string views (impl/canonjson/unsafe.go) and the worker suite's FIONREAD ioctl, which
// needs a pointer argument (conformance/worker/pending_linux.go).
var unsafeImporters = []string{"conformance/worker", "impl/canonjson"}

// TestUnsafeStaysInItsPlaces lists every package of the module whose files (tests and every
// build tag of the project included) import unsafe, and fails on any outside unsafeImporters.
func TestUnsafeStaysInItsPlaces(t *testing.T) {
	for _, tags := range []string{"", "splashfaults,splashetcd,splashprofile"} {
		out, err := exec.Command("go", "list", "-tags", tags,
			"-f", "{{.ImportPath}} {{join .Imports \" \"}} {{join .TestImports \" \"}} {{join .XTestImports \" \"}}",
			module+"/...").Output()
		if err != nil {
			t.Fatalf("go list -tags %q: %v", tags, err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) < 20 {
			t.Fatalf("go list -tags %q listed %d packages; expected the module", tags, len(lines))
		}
		for _, line := range lines {
			fields := strings.Fields(line)
			path := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
			if slices.Contains(fields[1:], "unsafe") && !slices.Contains(unsafeImporters, path) {
				t.Errorf("%s imports unsafe (tags %q); only %v may", fields[0], tags, unsafeImporters)
			}
		}
	}
}
