// Command splash-vectors generates the golden vector files of the Splash worker protocol v5
// into a directory (normally vectors/), and replays the committed ones.
//
//	splash-vectors -out DIR
//	splash-vectors check [-v]
//
// The first form generates. The inputs and every expected error kind come from case tables in
// this command, written independently of the implementation; verbatim outputs recorded by
// running the Rust reference (docs/reference-anchors.md) are anchors. Every expected output is
// either written in a table or computed here from the byte layouts of the specification (tags,
// frame lines, bootstrap bytes, fingerprints), never taken from the implementation. The
// rendered files are then replayed against the Go implementation by package vectors/replay,
// the only oracle, and checked for structure; the generator refuses to write anything if
// either finds a problem, listing every one.
//
// Output is deterministic: fixed keys and inputs, object keys sorted, two-space indentation,
// a trailing newline, and no timestamps, so regenerating produces byte-identical files.
// Test case IDs follow the order of the case tables; new cases are appended, never inserted.
//
// The second form replays every embedded golden vector (package vectors) against the Go
// reference implementation, checks the structure of the vector files, and prints one summary
// line per file and a final line "N passed, N failed". It exits with status 0 when everything
// passed, 1 on a failure and 2 on a usage error.
package main

import (
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing/fstest"

	"github.com/splashv5/conform/vectors"
	"github.com/splashv5/conform/vectors/replay"
	"github.com/splashv5/conform/vectors/vectorfmt"
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
	buildSecrets,
	buildScripts,
	buildContractSchemas,
}

// run dispatches to the replay of the committed vectors or to the generator.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "check" {
		return runCheck(args[1:], stdout, stderr)
	}
	return runGenerate(args, stdout, stderr)
}

// runGenerate generates the vector files into the directory given by -out.
func runGenerate(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("splash-vectors", flag.ContinueOnError)
	flags.SetOutput(stderr)
	outDir := flags.String("out", "", "directory to write the vector files into (required)")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if *outDir == "" || flags.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: splash-vectors -out DIR")
		return 2
	}
	files, problems := generate()
	files = withManifest(files)
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
		if f.name == vectorfmt.VersionFile || f.name == vectorfmt.ManifestFile {
			continue
		}
		total += f.valid + f.invalid
		fmt.Fprintf(stdout, "%-20s %4d tests (%d valid, %d invalid)\n", f.name, f.valid+f.invalid, f.valid, f.invalid)
	}
	fmt.Fprintf(stdout, "%d tests in %d files, version %s\n", total, len(files)-2, vectorfmt.Version)
	return 0
}

// withManifest appends the version file and the manifest of every file generated.
func withManifest(files []generated) []generated {
	version := generated{name: vectorfmt.VersionFile, body: []byte(vectorfmt.Version + "\n")}
	bodies := map[string][]byte{version.name: version.body}
	for _, f := range files {
		bodies[f.name] = f.body
	}
	return append(files, version, generated{name: vectorfmt.ManifestFile, body: vectorfmt.Manifest(bodies)})
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
	if len(files) == len(builders) {
		replayGenerated(c, files)
	}
	return files, c.problems
}

// replayGenerated checks the rendered files the way a reader sees them: their structure, and
// every test replayed against the implementation by package vectors/replay, the one oracle.
func replayGenerated(c *checker, files []generated) {
	fsys := fstest.MapFS{}
	for _, f := range files {
		fsys[f.name] = &fstest.MapFile{Data: f.body, Mode: 0o644}
	}
	for _, p := range replay.Verify(fsys) {
		c.failf("structure: %s", p)
	}
	for _, f := range replay.Run(fsys).Files {
		for _, x := range f.Failures {
			c.failf("%s: tcId %d (%s): the implementation disagrees: %s", f.Name, x.TcID, x.Comment, x.Detail)
		}
	}
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

// runCheck replays the committed vectors and prints a per-file summary.
func runCheck(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("splash-vectors check", flag.ContinueOnError)
	flags.SetOutput(stderr)
	verbose := flags.Bool("v", false, "list every failing test")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if flags.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: splash-vectors check [-v]")
		return 2
	}
	if failed := printReplay(vectors.FS, *verbose, stdout); failed > 0 {
		return 1
	}
	return 0
}

// printReplay replays the vector files of fsys, prints one line per file and a total, and
// returns the number of failures (failing tests and structure problems).
func printReplay(fsys fs.FS, verbose bool, stdout io.Writer) int {
	report := replay.Run(fsys)
	structure := replay.Verify(fsys)
	passed, failed := report.Passed(), report.Failed()+len(structure)
	for _, f := range report.Files {
		status := "ok"
		if len(f.Failures) > 0 {
			status = "FAIL"
		}
		fmt.Fprintf(stdout, "%-4s %-20s %4d passed, %3d failed (%d valid, %d invalid)\n",
			status, f.Name, f.Passed, len(f.Failures), f.Valid, f.Invalid)
		if verbose {
			for _, x := range f.Failures {
				fmt.Fprintf(stdout, "     tcId %d (%s): %s\n", x.TcID, x.Comment, x.Detail)
			}
		}
	}
	for _, p := range structure {
		fmt.Fprintf(stdout, "FAIL structure: %s\n", p)
	}
	fmt.Fprintf(stdout, "%d passed, %d failed\n", passed, failed)
	return failed
}
