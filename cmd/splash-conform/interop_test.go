package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance/interop"
	"github.com/splashv5/conform/internal/childproc"
)

// TestInteropRunsFromAnEmptyDirectory builds the three released programs into one directory
// and runs splash-conform interop from another, empty one, with no go tool on the PATH: the
// runner finds the reference worker and host driver beside itself and every scenario passes.
// With the runner alone, it says which program is missing, where it looked and how to install
// it, and exits 2.
func TestInteropRunsFromAnEmptyDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three executables")
	}
	bin := t.TempDir()
	for _, p := range interop.Programs {
		if err := childproc.Build(root, "./cmd/"+p, filepath.Join(bin, p)); err != nil {
			t.Fatal(err)
		}
	}
	// No go tool, no module around: a program that is not beside the runner cannot be built.
	env := []string{"PATH=" + t.TempDir(), "HOME=" + t.TempDir(), "TMPDIR=" + t.TempDir()}
	run := func(runner string, args ...string) (string, int) {
		cmd := exec.Command(runner, append([]string{"interop"}, args...)...)
		cmd.Dir, cmd.Env = t.TempDir(), env
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	t.Run("released programs side by side", func(t *testing.T) {
		out, code := run(filepath.Join(bin, "splash-conform"))
		if code != 0 || !strings.Contains(out, " passed, 0 failed, 0 skipped") || !strings.Contains(out, "CONFORMS") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})
	t.Run("the runner alone", func(t *testing.T) {
		alone := t.TempDir()
		data, err := os.ReadFile(filepath.Join(bin, "splash-conform"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(alone, "splash-conform"), data, 0o755); err != nil {
			t.Fatal(err)
		}
		host := filepath.Join(bin, "splash-host-driver")
		out, code := run(filepath.Join(alone, "splash-conform"), "-host", host)
		for _, want := range []string{"the reference worker is missing", "no splash-worker in " + alone, interop.InstallCommand, "a worker command after --"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if code != 2 {
			t.Errorf("exit %d, want 2", code)
		}
		out, code = run(filepath.Join(alone, "splash-conform"), "--", filepath.Join(bin, "splash-worker"))
		if code != 2 || !strings.Contains(out, "the reference host driver is missing") || !strings.Contains(out, "-host COMMAND") {
			t.Errorf("exit %d, want 2 and the missing host driver named:\n%s", code, out)
		}
	})
}
