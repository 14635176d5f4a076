// Command splash-conform runs the Splash worker protocol v5 conformance suite.
//
//	splash-conform [flags] [-- WORKER-COMMAND [ARGS...]]
//	splash-conform vectors [-v]
//
// The first form launches a worker executable once per check and reports, check by check, what
// conforms (see docs/conformance.md and package conformance). Without a worker command it runs
// against the bundled reference worker, cmd/splash-worker.
//
// The second form replays every embedded golden vector (package vectors/replay) against the Go
// reference implementation, checks the structure of the vector files, and prints one summary
// line per file and a final line "N passed, N failed".
//
// Both forms exit with status 0 when everything counted passed, 1 on a failure and 2 on a usage
// or launch error.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/vectors"
	"github.com/splashv5/conform/vectors/replay"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches to the vector replay or to the conformance runner.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "vectors" {
		return runVectors(args[1:], stdout, stderr)
	}
	return conformance.Main(args, stdout, stderr)
}

// runVectors replays the golden vectors and prints a per-file summary.
func runVectors(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("splash-conform vectors", flag.ContinueOnError)
	fs.SetOutput(stderr)
	verbose := fs.Bool("v", false, "list every failing test")
	if err := fs.Parse(args); err != nil {
		return conformance.ExitUsage
	}
	if fs.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: splash-conform vectors [-v]")
		return conformance.ExitUsage
	}
	report := replay.Run(vectors.FS)
	structure := replay.Verify(vectors.FS)
	passed, failed := report.Passed(), report.Failed()+len(structure)
	for _, f := range report.Files {
		status := "ok"
		if len(f.Failures) > 0 {
			status = "FAIL"
		}
		fmt.Fprintf(stdout, "%-4s %-20s %4d passed, %3d failed (%d valid, %d invalid)\n",
			status, f.Name, f.Passed, len(f.Failures), f.Valid, f.Invalid)
		if *verbose {
			for _, x := range f.Failures {
				fmt.Fprintf(stdout, "     tcId %d (%s): %s\n", x.TcID, x.Comment, x.Detail)
			}
		}
	}
	for _, p := range structure {
		fmt.Fprintf(stdout, "FAIL structure: %s\n", p)
	}
	fmt.Fprintf(stdout, "%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		return conformance.ExitFailures
	}
	return conformance.ExitOK
}
