// Command splash-conform checks the Go reference implementation of the Splash worker protocol
// v5 against the embedded golden vectors.
//
// This is the interim version of the conformance runner: with no arguments it replays every
// golden vector (package vectors/replay) and verifies the structure of the vector files, then
// prints one summary line per file and a final line "N passed, N failed". It exits with
// status 1 if anything failed.
//
//	splash-conform        summary only
//	splash-conform -v     also list every failing test
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/splashv5/conform/vectors"
	"github.com/splashv5/conform/vectors/replay"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("splash-conform", flag.ContinueOnError)
	fs.SetOutput(stderr)
	verbose := fs.Bool("v", false, "list every failing test")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: splash-conform [-v]")
		return 2
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
		return 1
	}
	return 0
}
