package childproc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Module is the module whose packages Build builds.
const Module = "github.com/splashv5/conform"

// buildOutputLimit bounds how much of the go tool's output a build error quotes.
const buildOutputLimit = 4000

// Build builds pkg (a path relative to the module root, such as "./cmd/splash-worker") of
// the module at root into the executable out, with the build tags given. It needs the go
// tool; its error quotes the tool's output, bounded.
func Build(root, pkg, out string, tags ...string) error {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("building %s needs the go tool, which is not available: %w", pkg, err)
	}
	args := []string{"build", "-o", out}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.Command(goTool, append(args, pkg)...)
	cmd.Dir = root
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s (tags %q) in %s: %v\n%s", pkg, tags, root, err, clip(output.String(), buildOutputLimit))
	}
	return nil
}

// ModuleRoot walks up from the working directory, then from the running program, to the
// directory whose go.mod declares Module.
func ModuleRoot() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, start := range starts {
		if root, ok := ModuleRootFrom(start); ok {
			return root, nil
		}
	}
	return "", ErrNoModule
}

// ErrNoModule reports that no go.mod of Module is above the working directory or the
// running program.
var ErrNoModule = errors.New("no go.mod of " + Module + " above the working directory or the running program")

// ModuleRootFrom walks up from dir to a go.mod that declares Module.
func ModuleRootFrom(dir string) (string, bool) {
	for {
		if declaresModule(filepath.Join(dir, "go.mod")) {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

func declaresModule(gomod string) bool {
	f, err := os.Open(gomod)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 2 && fields[0] == "module" && strings.Trim(fields[1], `"`) == Module {
			return true
		}
	}
	return false
}

// Builds builds packages of the module once each per set of tags, into one temporary
// directory. The zero value is ready to use and safe for concurrent use; Remove deletes what
// was built.
type Builds struct {
	mu    sync.Mutex
	dir   string
	built map[string]string
}

// Build returns the path of pkg (relative to the module root) built with tags, building it
// on first use.
func (b *Builds) Build(pkg string, tags ...string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	id := pkg + " " + strings.Join(tags, ",")
	if path, ok := b.built[id]; ok {
		return path, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	if b.dir == "" {
		if b.dir, err = os.MkdirTemp("", "splash-test-bin-"); err != nil {
			return "", err
		}
		b.built = map[string]string{}
	}
	// Each build in a directory of its own keeps the package's name as the program's.
	sub := filepath.Join(b.dir, strconv.Itoa(len(b.built)))
	if err := os.Mkdir(sub, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(sub, filepath.Base(pkg))
	if err := Build(root, pkg, path, tags...); err != nil {
		return "", err
	}
	b.built[id] = path
	return path, nil
}

// Remove deletes every executable built.
func (b *Builds) Remove() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dir != "" {
		_ = os.RemoveAll(b.dir)
		b.dir, b.built = "", nil
	}
}

// clip shortens s to at most n bytes, cut on a rune boundary and marked with an ellipsis.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
