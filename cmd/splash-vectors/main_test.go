package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/splashv5/conform/vectors"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

// TestGenerateMatchesCommittedFiles regenerates every file in memory: generation must succeed
// (the implementation agrees with every declared expectation and reference anchor), be
// deterministic, and reproduce the committed files byte for byte.
//
// Spec: FRM-014, FP-017, BOOT-001
func TestGenerateMatchesCommittedFiles(t *testing.T) {
	first, problems := generate()
	for _, p := range problems {
		t.Error(p)
	}
	second, _ := generate()
	if len(first) != len(vectorfmt.FileNames) || len(second) != len(first) {
		t.Fatalf("generated %d and %d files, want %d", len(first), len(second), len(vectorfmt.FileNames))
	}
	for i, f := range first {
		if f.name != vectorfmt.FileNames[i] {
			t.Errorf("file %d is %s, want %s", i, f.name, vectorfmt.FileNames[i])
		}
		if !bytes.Equal(f.body, second[i].body) {
			t.Errorf("%s: two generations differ", f.name)
		}
		if !bytes.HasSuffix(f.body, []byte("}\n")) {
			t.Errorf("%s: no trailing newline", f.name)
		}
		committed, err := os.ReadFile(filepath.Join("..", "..", "vectors", f.name))
		if err != nil {
			t.Errorf("%s: %v", f.name, err)
			continue
		}
		if !bytes.Equal(committed, f.body) {
			t.Errorf("%s: committed file is stale; run make vectors", f.name)
		}
	}
}

// TestTcIDsOnlyAppend checks that every tcId of the committed files keeps its test: a
// regeneration may only add tests after the existing ones.
func TestTcIDsOnlyAppend(t *testing.T) {
	files, _ := generate()
	for _, f := range files {
		committed, err := os.ReadFile(filepath.Join("..", "..", "vectors", f.name))
		if err != nil {
			t.Fatal(err)
		}
		old, cur := commentsByID(t, committed), commentsByID(t, f.body)
		for id, comment := range old {
			if cur[id] != comment {
				t.Errorf("%s: tcId %d was %q, is now %q", f.name, id, comment, cur[id])
			}
		}
	}
}

func commentsByID(t *testing.T, data []byte) map[int]string {
	t.Helper()
	var g vectorfmt.Generic
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for _, grp := range g.TestGroups {
		for _, c := range grp.Tests {
			out[c.TcID] = c.Comment
		}
	}
	return out
}

// TestIndependentLayoutsMatchReferenceAnchors checks the generator's own byte-layout code
// against the outputs recorded from the Rust reference (docs/reference-anchors.md), so that
// the independent expectations are themselves anchored.
//
// Spec: FRM-007, FRM-014, FP-007, FP-016, BOOT-001, JRN-001, STO-010, STO-011, STO-012
func TestIndependentLayoutsMatchReferenceAnchors(t *testing.T) {
	if got := indSeal(key07, "host", 1, sessionOne, mOpen).tag; got != recordedTag1 {
		t.Errorf("anchor A1 tag %s", got)
	}
	if got := indSeal(key07, "worker", 1, sessionOne, mResult).tag; got != recordedTag3 {
		t.Errorf("anchor A3 tag %s", got)
	}
	if got := indSeal(key07, "host", 2, sessionOne, recordedDispatchMessage).line; got != recordedDispatchLine {
		t.Errorf("anchor A4 line %s", got)
	}
	if got := indGrantFingerprint(gRelease); got != "b4586b43cee35f3490e1be033cf424c5d927417c4e5af7cd685123764a8c8be9" {
		t.Errorf("anchor A5 %s", got)
	}
	if got := indInputFingerprint(indCanonicalInput("json", `{"undo":"release"}`)); got != "5cc121e4a0ce2f79ae6b83397eb4f81a66bf12a9b1fe5836835a8118de24d578" {
		t.Errorf("anchor A7 %s", got)
	}
	if got := indBootstrap(sessionOne, keyAB); len(got) != 51 || string(got[:8]) != "SPLPBOOT" {
		t.Errorf("anchor A9 %x", got)
	}
	if got := indJournalJSON("tenant-release", jRel(s42, jUndo(stPending))); got != recordedJournalA8 {
		t.Errorf("anchor A8 %s", got)
	}
	if got := indEnvelope(stoKID, 1, []byte("hello"), indStorageTag(key07, stoNS, stoName, stoKID, 1, []byte("hello"))); got != recordedEnvelopeA10 {
		t.Errorf("anchor A10 %s", got)
	}
}

// TestRunWritesFiles runs the command into a temporary directory.
func TestRunWritesFiles(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if code := run([]string{"-out", dir}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, name := range vectorfmt.FileNames {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	if code := run(nil, &out, &errOut); code != 2 {
		t.Errorf("missing -out: exit %d, want 2", code)
	}
}

// TestCheckAllPass replays the committed vectors in-process and checks the summary: one line
// per embedded vector file and a final "N passed, 0 failed" with N > 0.
func TestCheckAllPass(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"check"}, &out, &errOut); code != 0 {
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

// TestCheckRejectsArguments checks the usage error of the replay form.
func TestCheckRejectsArguments(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"check", "extra"}, &out, &errOut); code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
}

// TestGenerateRefusesWhatReplayRejects checks that the replay is the generator's oracle: a
// rendered file whose expectation the implementation does not meet is reported.
func TestGenerateRefusesWhatReplayRejects(t *testing.T) {
	files, problems := generate()
	if len(problems) != 0 {
		t.Fatalf("generation has problems: %v", problems)
	}
	for i, f := range files {
		if f.name != vectorfmt.CanonicalJSONFile {
			continue
		}
		// Turning the first expected output "[1…" into "[2…" makes one test wrong without
		// breaking the file's structure.
		edited := bytes.Replace(f.body, []byte(`"output": "[1`), []byte(`"output": "[2`), 1)
		if bytes.Equal(edited, f.body) {
			t.Fatal("no output to edit")
		}
		files[i].body = edited
	}
	c := &checker{}
	replayGenerated(c, files)
	if len(c.problems) == 0 {
		t.Fatal("an edited expectation was not reported")
	}
	if !strings.Contains(c.problems[0], "the implementation disagrees") {
		t.Errorf("problem %q", c.problems[0])
	}
}
