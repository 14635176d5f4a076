package main

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestDockerfileBuildsStaticRunner runs the go build line of the Dockerfile (which cannot run
// docker here) with its output moved to a scratch directory: the Go toolchain alone builds
// the three executables, they are static (no ELF interpreter, no dynamic section, so they run
// in an empty image), and the runner prints its version.
func TestDockerfileBuildsStaticRunner(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three executables")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the image is a Linux image")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go tool")
	}
	dockerfile, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	build := regexp.MustCompile(`(?m)^RUN (CGO_ENABLED=0 go build .* -o /out/usr/local/bin/ .*)$`).FindSubmatch(dockerfile)
	if build == nil {
		t.Fatal("the Dockerfile has no line RUN CGO_ENABLED=0 go build ... -o /out/usr/local/bin/ ...")
	}
	if !bytes.Contains(dockerfile, []byte("FROM scratch")) || !bytes.Contains(dockerfile, []byte(`ENTRYPOINT ["/usr/local/bin/splash-conform"]`)) {
		t.Error("the Dockerfile's image is not the runner alone on scratch")
	}
	out := t.TempDir()
	line := strings.Replace(string(build[1]), "/out/usr/local/bin/", out+"/", 1)
	cmd := exec.Command(sh, "-c", line)
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, msg)
	}
	for _, name := range []string{"splash-conform", "splash-worker", "splash-host-driver"} {
		f, err := elf.Open(filepath.Join(out, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
				t.Errorf("%s is not static: it has a %v program header", name, p.Type)
			}
		}
		f.Close()
	}
	version, err := exec.Command(filepath.Join(out, "splash-conform"), "-version").Output()
	if err != nil || !strings.Contains(string(version), "worker suite:") || !strings.Contains(string(version), "host suite:") {
		t.Errorf("splash-conform -version: %v\n%s", err, version)
	}
}
