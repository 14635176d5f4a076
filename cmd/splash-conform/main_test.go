package main

import (
	"bytes"
	"io/fs"
	"strings"
	"testing"

	"github.com/splashv5/conform/vectors"
)

// TestVectorsAllPass runs the vector replay in-process and checks its summary: one line per
// embedded vector file and a final "N passed, 0 failed" with N > 0.
func TestVectorsAllPass(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"vectors"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.HasSuffix(last, " passed, 0 failed") || strings.HasPrefix(last, "0 ") {
		t.Errorf("final line %q", last)
	}
	files, err := fs.Glob(vectors.FS, "*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != len(files)+1 {
		t.Errorf("%d lines, want %d file lines and a total:\n%s", len(lines), len(files), out.String())
	}
}

// TestVectorsRejectArguments checks the usage error of the replay form.
func TestVectorsRejectArguments(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"vectors", "extra"}, &out, &errOut); code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
}

// TestRunnerListsChecks checks that the default form reaches the conformance runner: -list
// prints the catalog without launching a worker.
func TestRunnerListsChecks(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"-list"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "CNF-FRAME-01") {
		t.Errorf("catalog listing lacks CNF-FRAME-01:\n%.400s", out.String())
	}
}
