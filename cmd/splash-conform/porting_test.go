package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/expect"
	"github.com/splashv5/conform/conformance/host"
	"github.com/splashv5/conform/conformance/interop"
	"github.com/splashv5/conform/conformance/worker"
)

// codeBlocks returns the fenced code blocks of docs/porting.md in the language given.
func codeBlocks(t *testing.T, lang string) []string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(root, "docs", "porting.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, m := range regexp.MustCompile("(?ms)^```"+regexp.QuoteMeta(lang)+"\n(.*?)^```$").FindAllStringSubmatch(string(doc), -1) {
		blocks = append(blocks, m[1])
	}
	if len(blocks) == 0 {
		t.Fatalf("docs/porting.md has no %s block", lang)
	}
	return blocks
}

// TestPortingReplayLoops runs the Python and JavaScript replay loops of docs/porting.md, as
// written, on vectors/bootstrap.json (every test passes) and on a copy with one expected output
// changed (the loop reports it and fails). Each is skipped when its interpreter is missing.
func TestPortingReplayLoops(t *testing.T) {
	vectorFile, err := filepath.Abs(filepath.Join(root, "vectors", "bootstrap.json"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(vectorFile)
	if err != nil {
		t.Fatal(err)
	}
	var header struct {
		NumberOfTests int `json:"numberOfTests"`
	}
	if err := json.Unmarshal(data, &header); err != nil || header.NumberOfTests == 0 {
		t.Fatalf("bootstrap.json: %v", err)
	}
	tampered := bytes.Replace(data, []byte(`"output_hex": "53504c`), []byte(`"output_hex": "63504c`), 1)
	if bytes.Equal(tampered, data) {
		t.Fatal("no output_hex to tamper with")
	}
	dir := t.TempDir()
	tamperedFile := filepath.Join(dir, "tampered.json")
	if err := os.WriteFile(tamperedFile, tampered, 0o644); err != nil {
		t.Fatal(err)
	}
	allPass := strconv.Itoa(header.NumberOfTests) + " passed, 0 failed\n"
	oneFails := strconv.Itoa(header.NumberOfTests-1) + " passed, 1 failed\n"
	if doc, _ := os.ReadFile(filepath.Join(root, "docs", "porting.md")); !bytes.Contains(doc, []byte("(`"+strings.TrimSuffix(allPass, "\n")+"`)")) {
		t.Errorf("docs/porting.md does not announce %q", allPass)
	}
	for _, tc := range []struct{ interpreter, lang, file string }{
		{"python3", "python", "replay.py"},
		{"node", "js", "replay.mjs"},
	} {
		t.Run(tc.interpreter, func(t *testing.T) {
			bin, err := exec.LookPath(tc.interpreter)
			if err != nil {
				t.Skipf("no %s", tc.interpreter)
			}
			script := filepath.Join(dir, tc.file)
			if err := os.WriteFile(script, []byte(codeBlocks(t, tc.lang)[0]), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(bin, script, vectorFile).CombinedOutput()
			if err != nil || string(out) != allPass {
				t.Errorf("%s %s bootstrap.json: %v\n%s", tc.interpreter, tc.file, err, out)
			}
			out, err = exec.Command(bin, script, tamperedFile).CombinedOutput()
			if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 || !strings.HasSuffix(string(out), oneFails) || !strings.Contains(string(out), "FAIL "+tamperedFile+" tcId 30:") {
				t.Errorf("%s %s on a tampered file: %v\n%s", tc.interpreter, tc.file, err, out)
			}
		})
	}
}

// TestPortingExamples holds the other examples of docs/porting.md to the code: the starter
// expectations file is valid for the worker suite, every splash-conform flag the commands use
// exists, and the CI examples pin the current suite version.
func TestPortingExamples(t *testing.T) {
	f, err := expect.Parse([]byte(codeBlocks(t, "json")[0]))
	if err != nil {
		t.Fatalf("the example expectations file: %v", err)
	}
	if err := f.Check("worker", toChecks(worker.CatalogEntries())); err != nil {
		t.Errorf("the example expectations file: %v", err)
	}

	var workerUsage, hostUsage, interopUsage bytes.Buffer
	worker.Main([]string{"-h"}, &workerUsage, &workerUsage)
	host.Main([]string{"-h"}, &hostUsage, &hostUsage)
	interop.Main([]string{"-h"}, &interopUsage, &interopUsage)
	flagPattern := regexp.MustCompile(`^-[a-z-]+$`)
	commands := 0
	for _, block := range codeBlocks(t, "sh") {
		for _, line := range strings.Split(block, "\n") {
			fields := strings.Fields(line)
			if len(fields) == 0 || fields[0] != "splash-conform" {
				continue
			}
			commands++
			usage := workerUsage.String()
			if len(fields) > 1 && fields[1] == "host" {
				usage, fields = hostUsage.String(), fields[1:]
			}
			if len(fields) > 1 && fields[1] == "interop" {
				usage, fields = interopUsage.String(), fields[1:]
			}
			for _, f := range fields[1:] {
				if f == "--" {
					break
				}
				if flagPattern.MatchString(f) && f != "-version" && !strings.Contains(usage, "\n  "+f+" ") && !strings.Contains(usage, "\n  "+f+"\n") {
					t.Errorf("docs/porting.md: %q uses %s, which is not a flag of that suite", line, f)
				}
			}
		}
	}
	if commands < 6 {
		t.Errorf("found %d splash-conform commands in docs/porting.md", commands)
	}
	pinned := regexp.MustCompile(`(?:splashv5/conform@|SPLASH_CONFORM_REF: )(v[0-9.]+)`)
	yaml := strings.Join(codeBlocks(t, "yaml"), "\n")
	pins := pinned.FindAllStringSubmatch(yaml, -1)
	if len(pins) != 2 {
		t.Errorf("the CI examples pin %d refs, want 2", len(pins))
	}
	for _, m := range pins {
		if m[1] != "v"+conformance.SuiteVersion {
			t.Errorf("a CI example pins %s, the suite is %s", m[1], conformance.SuiteVersion)
		}
	}
}

func toChecks(entries []conformance.CatalogEntry) []expect.Check {
	var out []expect.Check
	for _, e := range entries {
		out = append(out, expect.Check{ID: e.ID, Requirements: e.Requirements})
	}
	return out
}
