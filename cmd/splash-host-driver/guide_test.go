package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var updateGuide = flag.Bool("update", false, "rewrite the size table of docs/conformance-host.md")

// guidePath is the host guide, whose size table describes this driver's files.
const guidePath = "../../docs/conformance-host.md"

var (
	// faultWord is a line that names the test build's fault selection.
	faultWord = regexp.MustCompile(`\bfault\b`)
	// faultBlock is a line that opens a block run only under a fault: `if fault …{`, or
	// `} else if fault …{`.
	faultBlock = regexp.MustCompile(`^(\s*)(\} else )?if fault\b.*\{$`)
	// sizeRow is a row of the size table: `| files | what | lines | fault switch |`.
	sizeRow = regexp.MustCompile("^\\| (`[^|]+) \\| ([^|]+) \\| (\\d+) \\| (\\d+) \\|$")
	// coreSentence states the size of the command loop without the fault switch.
	coreSentence = regexp.MustCompile(`is (\d+) lines without the fault`)
	// fileName is one file pattern of a row's first cell.
	fileName = regexp.MustCompile("`([^`]+\\.go)`")
)

// driverSize returns the lines of a driver source file and the lines of its fault switch:
// each block under `if fault …`, whole, and every other line that names fault.
func driverSize(t *testing.T, path string) (lines, fault int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ls := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i := 0; i < len(ls); i++ {
		if !faultWord.MatchString(ls[i]) {
			continue
		}
		m := faultBlock.FindStringSubmatch(ls[i])
		if m == nil {
			fault++
			continue
		}
		end := i + 1
		for end < len(ls) && !strings.HasPrefix(ls[end], m[1]+"}") {
			end++
		}
		fault += end - i + 1
		i = end
	}
	return len(ls), fault
}

// The host guide's size table gives, for every file of the driver, its lines and those of the
// test build's fault switch, as they are; -update rewrites the table from the files. Every
// source file of the driver is in one row, so a new file cannot go unmentioned.
func TestGuideSizeTable(t *testing.T) {
	doc, err := os.ReadFile(guidePath)
	if err != nil {
		t.Fatal(err)
	}
	sources, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	var stale []string
	var coreLines, coreFault int
	out := strings.Split(string(doc), "\n")
	for i, line := range out {
		m := sizeRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var lines, fault int
		for _, pat := range fileName.FindAllStringSubmatch(m[1], -1) {
			files, err := filepath.Glob(pat[1])
			if err != nil || len(files) == 0 {
				t.Errorf("the size table names %s, which matches no file of the driver", pat[1])
				continue
			}
			all := strings.Contains(pat[1], "*") // a row of fault files counts whole
			for _, f := range files {
				listed[f] = true
				l, fl := driverSize(t, f)
				lines += l
				if all {
					fl = l
				}
				fault += fl
			}
		}
		if m[1] == "`main.go`" {
			coreLines, coreFault = lines, fault
		}
		want := fmt.Sprintf("| %s | %s | %d | %d |", m[1], m[2], lines, fault)
		if line != want {
			stale = append(stale, fmt.Sprintf("%q should read %q", line, want))
			out[i] = want
		}
	}
	for _, f := range sources {
		if !strings.HasSuffix(f, "_test.go") && !listed[f] {
			t.Errorf("%s is in no row of the size table of %s", f, guidePath)
		}
	}
	text := strings.Join(out, "\n")
	if m := coreSentence.FindStringSubmatch(text); m == nil {
		t.Errorf("%s no longer states the size of the command loop", guidePath)
	} else if core := strconv.Itoa(coreLines - coreFault); m[1] != core {
		stale = append(stale, fmt.Sprintf("the command loop is %s lines without the fault switch, not %s", core, m[1]))
		text = coreSentence.ReplaceAllString(text, "is "+core+" lines without the fault")
	}
	if len(stale) == 0 {
		return
	}
	if *updateGuide {
		if err := os.WriteFile(guidePath, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the size table of %s is stale (go test ./cmd/splash-host-driver/ -run TestGuideSizeTable -update):\n%s", guidePath, strings.Join(stale, "\n"))
}
