package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/splashv5/conform/internal/childproc"
)

// ModulePath is the Go module that holds the reference worker.
const ModulePath = childproc.Module

// ReferenceWorkerPackage is the package of the bundled reference worker, relative to the
// module root.
const ReferenceWorkerPackage = "./cmd/splash-worker"

// Placeholders the worker command may contain.
const (
	// PlaceholderJournal is replaced by the path of the check's journal file.
	PlaceholderJournal = "{journal}"
	// PlaceholderEffects is replaced by the path of the check's effect log.
	PlaceholderEffects = "{effects}"
	// PlaceholderScope is replaced by the journal scope the runner uses for compensation.
	PlaceholderScope = "{scope}"
	// PlaceholderStoreFault is replaced by the path of the check's store fault trigger
	// (PRF-021), a file the runner creates to make the worker's journal writes fail.
	PlaceholderStoreFault = "{store-fault}"
	// PlaceholderStorageKey is replaced by the path of a file that holds the check's storage
	// key in 64 hexadecimal digits, a fresh random key per check, so the runner can look for
	// it in every output (WRK-093).
	PlaceholderStorageKey = "{storage-key}"
	// PlaceholderSecretSource is replaced by the path of the check's secret source (PRF-033),
	// a file the runner creates to choose what the secret tool's provider returns.
	PlaceholderSecretSource = "{secret-source}"
)

// ReferenceWorkerArgs are the arguments that give the reference worker a journal, an effect
// log, a scope, a store fault trigger, a storage key and a secret source per check, so that every check of the catalog can run
// against it.
var ReferenceWorkerArgs = []string{"--journal", PlaceholderJournal, "--effect-log", PlaceholderEffects, "--scope", PlaceholderScope,
	"--write-trigger", PlaceholderStoreFault, "--storage-key-file", PlaceholderStorageKey, "--secret-source", PlaceholderSecretSource}

// ReferenceWorker returns the command that runs the bundled reference worker under the suite,
// placeholders included, and a cleanup function that removes whatever was built (see
// ReferenceProgram).
func ReferenceWorker() (command []string, cleanup func(), err error) {
	bin, cleanup, err := ReferenceProgram("splash-worker", ReferenceWorkerPackage)
	if err != nil {
		return nil, nil, err
	}
	return append([]string{bin}, ReferenceWorkerArgs...), cleanup, nil
}

// ReferenceProgram returns the bundled program name, of package pkg (relative to the module
// root), and a cleanup function that removes whatever was built. It uses an executable of
// that name next to the running program when there is one; otherwise it builds pkg with the
// go tool from the module that contains the working directory (or the running program).
func ReferenceProgram(name, pkg string) (bin string, cleanup func(), err error) {
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	if exe, err := os.Executable(); err == nil {
		sibling := filepath.Join(filepath.Dir(exe), name)
		if info, err := os.Stat(sibling); err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
			return sibling, func() {}, nil
		}
	}
	why := "no " + name + " is next to the runner, and it cannot be built"
	root, err := childproc.ModuleRoot()
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w (run inside the repository, or give the command to run)", why, err)
	}
	dir, err := os.MkdirTemp("", "splash-conform-"+name+"-")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	bin = filepath.Join(dir, name)
	if err := childproc.Build(root, pkg, bin); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("%s: %w", why, err)
	}
	return bin, cleanup, nil
}

// ReferenceDriver returns the bundled reference host driver (see ReferenceProgram).
func ReferenceDriver() (bin string, cleanup func(), err error) {
	return ReferenceProgram("splash-host-driver", "./cmd/splash-host-driver")
}
