package host

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/splashv5/conform/conformance/driver"
	"github.com/splashv5/conform/impl/protocol"
)

// maxScannedFile bounds the bytes read of one file the driver left.
const maxScannedFile = 16 << 20

// fileChecks judge the files a host leaves: the key must never be written to one.
func fileChecks() []*Check {
	return []*Check{
		{ID: "CNF-HBOOT-05", Level: must, Requirements: []string{"FRM-040", "HDR-025", "HDR-046"}, Features: []string{FeatureInvoke},
			Title:       "the key never appears in a file under the driver's working directory or TMPDIR",
			Unreachable: unreachableKey,
			Run: func(t *T) {
				w := t.session(echoGrant())
				t.keyNotInFiles(w.boot.Key, "after start")
				roundTrip(t, w, "req-1")
				t.call(map[string]any{"op": "close"})
				w.exitAndEnd(0)
				t.call(map[string]any{"op": "wait"})
				t.keyNotInFiles(w.boot.Key, "after the session")
			}},
	}
}

// freshDirChecks are the checks whose driver starts in a fresh working directory with a fresh
// TMPDIR (HDR-046).
var freshDirChecks = []string{"CNF-HBOOT-05"}

// startInFreshDirs starts the driver in a fresh empty working directory with TMPDIR set to
// another (HDR-046). A relative program path is made absolute first.
func (t *T) startInFreshDirs() (*driver.Process, error) {
	t.workDir, t.tmpDir = filepath.Join(t.side.Dir, "driver-wd"), filepath.Join(t.side.Dir, "driver-tmp")
	for _, d := range []string{t.workDir, t.tmpDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, err
		}
	}
	argv := slices.Clone(t.run.driver)
	if strings.ContainsRune(argv[0], filepath.Separator) && !filepath.IsAbs(argv[0]) {
		abs, err := filepath.Abs(argv[0])
		if err != nil {
			return nil, err
		}
		argv[0] = abs
	}
	env := append(slices.Clone(t.run.Env), "TMPDIR="+t.tmpDir)
	if t.run.Env == nil {
		env = append(os.Environ(), "TMPDIR="+t.tmpDir)
	}
	return driver.Start(argv, env, t.workDir)
}

// keyNotInFiles fails the check when an encoding of key is in a file under the driver's working
// directory or TMPDIR (the first maxScannedFile bytes of each).
func (t *T) keyNotInFiles(key *protocol.SessionKey, when string) {
	files := 0
	for _, root := range []string{t.workDir, t.tmpDir} {
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			f, err := os.Open(path)
			if err != nil {
				return nil
			}
			defer f.Close()
			data, _ := io.ReadAll(io.LimitReader(f, maxScannedFile))
			files++
			if leaks(key, map[string]string{path: string(data)}) != "" {
				rel, _ := filepath.Rel(t.side.Dir, path)
				t.Failf("no encoding of the session key in a file"+t.Cite("FRM-040", "HDR-046"), "the key in the file "+rel+" "+when)
			}
			return nil
		})
	}
	t.Logf("%s: %d files under the driver's working directory and TMPDIR, none holds the key", when, files)
}
