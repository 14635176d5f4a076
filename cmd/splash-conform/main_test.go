package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestRunAllVectorsPass runs the command in-process and checks its summary.
func TestRunAllVectorsPass(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(nil, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.HasSuffix(last, " passed, 0 failed") || strings.HasPrefix(last, "0 ") {
		t.Errorf("final line %q", last)
	}
	if len(lines) != 9 {
		t.Errorf("%d lines, want 8 file lines and a total:\n%s", len(lines), out.String())
	}
}

// TestRunRejectsArguments checks the usage error.
func TestRunRejectsArguments(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"extra"}, &out, &errOut); code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
}
