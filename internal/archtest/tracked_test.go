package archtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// maxTrackedBytes bounds every tracked file; the largest legitimate ones are vector files of a
// few hundred kilobytes.
const maxTrackedBytes = 1 << 20

// executableMagics are the leading bytes of compiled executables (ELF, Mach-O, PE).
var executableMagics = [][]byte{
	[]byte("\x7fELF"),
	{0xcf, 0xfa, 0xed, 0xfe},
	{0xce, 0xfa, 0xed, 0xfe},
	[]byte("MZ"),
}

// TestNoBuildOutputIsTracked fails when a compiled program or an oversized file is in the
// repository: a bare `go build` at the root leaves a binary there, easy to commit by mistake.
func TestNoBuildOutputIsTracked(t *testing.T) {
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skip("not in a git checkout")
	}
	root := string(bytes.TrimSpace(top))
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := bytes.Split(bytes.TrimRight(out, "\x00"), []byte{0})
	if len(files) < 100 {
		t.Fatalf("git ls-files listed %d files; expected the whole module", len(files))
	}
	for _, name := range files {
		path := filepath.Join(root, string(name))
		info, err := os.Lstat(path)
		if err != nil {
			continue // deleted in the work tree, not yet committed
		}
		if info.Size() > maxTrackedBytes {
			t.Errorf("%s: %d bytes tracked; build output or data that belongs outside the repository", name, info.Size())
		}
		head := make([]byte, 4)
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := f.Read(head)
		f.Close()
		for _, magic := range executableMagics {
			if bytes.HasPrefix(head[:n], magic) && (len(magic) > 2 || info.Mode()&0o111 != 0) {
				t.Errorf("%s: a compiled executable is tracked", name)
			}
		}
	}
}
