// Command splash-vectors generates the golden vector files of the Splash worker protocol v5
// into a directory (normally vectors/).
//
//	splash-vectors -out DIR
//
// The inputs and every expected error kind come from case tables in this command, written
// independently of the implementation; verbatim outputs recorded by running the Rust
// reference (docs/reference-anchors.md) are anchors. Every expected output is either written in a table
// or computed here from the byte layouts of the specification (tags, frame lines, bootstrap
// bytes, fingerprints), never taken from the implementation. The generator runs the Go
// implementation on every case and refuses to write anything if it disagrees with an
// expectation, listing every disagreement.
//
// Output is deterministic: fixed keys and inputs, object keys sorted, two-space indentation,
// a trailing newline, and no timestamps, so regenerating produces byte-identical files.
// Test case IDs follow the order of the case tables; new cases are appended, never inserted.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// generated is one rendered vector file.
type generated struct {
	name           string
	body           []byte
	valid, invalid int
}

// builders produce the vector files, in the order of vectorfmt.FileNames.
var builders = []func(*checker) (string, any, *fileBuilder){
	buildCanonicalJSON,
	buildMessages,
	buildFramesSeal,
	buildFramesOpen,
	buildBootstrap,
	buildManifests,
	buildAttenuation,
	buildFingerprints,
	buildAuthorizer,
	buildJournal,
	buildStorage,
	buildHostScenarios,
	buildLedger,
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("splash-vectors", flag.ContinueOnError)
	fs.SetOutput(stderr)
	outDir := fs.String("out", "", "directory to write the vector files into (required)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *outDir == "" || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: splash-vectors -out DIR")
		return 2
	}
	files, problems := generate()
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(stderr, "splash-vectors:", p)
		}
		fmt.Fprintf(stderr, "splash-vectors: %d problem(s); no file written\n", len(problems))
		return 1
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		fmt.Fprintln(stderr, "splash-vectors:", err)
		return 1
	}
	total := 0
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(*outDir, f.name), f.body, 0o644); err != nil {
			fmt.Fprintln(stderr, "splash-vectors:", err)
			return 1
		}
		total += f.valid + f.invalid
		fmt.Fprintf(stdout, "%-20s %4d tests (%d valid, %d invalid)\n", f.name, f.valid+f.invalid, f.valid, f.invalid)
	}
	fmt.Fprintf(stdout, "%d tests in %d files\n", total, len(files))
	return 0
}

// generate builds and renders every file, returning all problems found.
func generate() ([]generated, []string) {
	c := &checker{}
	var files []generated
	for _, build := range builders {
		name, doc, b := build(c)
		body, err := encodeFile(doc)
		if err != nil {
			c.failf("%s: encoding: %v", name, err)
			continue
		}
		files = append(files, generated{name: name, body: body, valid: b.counts.valid, invalid: b.counts.invalid})
	}
	checkGlobalMinimums(c, files)
	for _, e := range tableErrors {
		c.failf("case table: %s", e)
	}
	return files, c.problems
}

// checkGlobalMinimums enforces the suite-wide size floor.
func checkGlobalMinimums(c *checker, files []generated) {
	total := 0
	for _, f := range files {
		total += f.valid + f.invalid
	}
	if len(files) == len(builders) && total < 400 {
		c.failf("only %d tests in total; at least 400 are required", total)
	}
}
