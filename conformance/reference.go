package conformance

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// ModulePath is the Go module that holds the reference worker.
const ModulePath = "github.com/splashv5/conform"

// ReferenceWorkerPackage is the package of the bundled reference worker, relative to the
// module root.
const ReferenceWorkerPackage = "./cmd/splash-worker"

// ReferenceWorkerArgs are the arguments that give the reference worker a journal, an effect
// log, a scope, a store fault trigger, a storage key and a secret source per check, so that every check of the catalog can run
// against it.
var ReferenceWorkerArgs = []string{"--journal", PlaceholderJournal, "--effect-log", PlaceholderEffects, "--scope", PlaceholderScope,
	"--write-trigger", PlaceholderStoreFault, "--storage-key-file", PlaceholderStorageKey, "--secret-source", PlaceholderSecretSource}

// ReferenceWorker returns the command that runs the bundled reference worker under the suite,
// placeholders included, and a cleanup function that removes whatever was built. It uses a
// splash-worker executable next to the running program when there is one; otherwise it builds
// the reference worker with the go tool from the module that contains the working directory
// (or the running program).
func ReferenceWorker() (command []string, cleanup func(), err error) {
	name := "splash-worker"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	if exe, err := os.Executable(); err == nil {
		sibling := filepath.Join(filepath.Dir(exe), name)
		if info, err := os.Stat(sibling); err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
			return append([]string{sibling}, ReferenceWorkerArgs...), func() {}, nil
		}
	}
	root, err := findModuleRoot()
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "splash-conform-worker-")
	if err != nil {
		return nil, nil, err
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	bin := filepath.Join(dir, name)
	if err := BuildReferenceWorker(root, bin); err != nil {
		cleanup()
		return nil, nil, err
	}
	return append([]string{bin}, ReferenceWorkerArgs...), cleanup, nil
}

// BuildReferenceWorker builds the reference worker of the module at root into out.
func BuildReferenceWorker(root, out string) error { return buildWorker(root, out) }

// buildWorker builds the reference worker of the module at root into out, with the build
// tags given (the mutation test builds the faulty worker with "splashfaults").
func buildWorker(root, out string, tags ...string) error {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("no worker command was given and the go tool is not available to build the reference worker: %w", err)
	}
	args := []string{"build", "-o", out}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.Command(goTool, append(args, ReferenceWorkerPackage)...)
	cmd.Dir = root
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building the reference worker in %s: %v\n%s", root, err, clip(output.String(), 4000))
	}
	return nil
}

// findModuleRoot walks up from the working directory, then from the running program, to the
// go.mod of ModulePath.
func findModuleRoot() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, start := range starts {
		if root, ok := moduleRootFrom(start); ok {
			return root, nil
		}
	}
	return "", errors.New("no worker command was given, and the reference worker cannot be built: no go.mod of " + ModulePath +
		" above the working directory (run inside the repository, or pass -- WORKER-COMMAND)")
}

// moduleRootFrom walks up from dir to a go.mod that declares ModulePath.
func moduleRootFrom(dir string) (string, bool) {
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
		if len(fields) == 2 && fields[0] == "module" && strings.Trim(fields[1], `"`) == ModulePath {
			return true
		}
	}
	return false
}
