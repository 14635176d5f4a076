package implreport

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/splashv5/conform/conformance"
)

const usageText = `usage: splash-conform report [flags] [NAME=]REPORT.json...

Merges the JSON reports of the worker suite, the host suite and the interop suite (one pair's
JSON index, or a matrix report) of any number of implementations into one implementation
report: every requirement of the specification against every implementation, and per
requirement the number of implementations that meet it.

Each argument is one report:
  NAME=worker.json      a worker or host suite's JSON index (-json), judging implementation NAME
                        (without NAME=, the file's base name names it)
  HOST/WORKER=pair.json one interop pair's JSON index
  matrix.json           an interop matrix report, which names its implementations itself
Give a port's worker report and host report under the same NAME to make one column of both.
Reports written by earlier suite versions are read; what they could not judge is listed.

flags:
`

// Main is the report subcommand's front end: it parses args (without the subcommand's name),
// merges the reports and writes the summary to stdout and the files the flags name. It
// returns 0 when the report was written, 2 on a usage error or an unreadable report.
func Main(args []string, stdout, stderr io.Writer, catalogs Catalogs) int {
	fs := flag.NewFlagSet("splash-conform report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jsonPath := fs.String("json", "", "write the merged report as JSON to `FILE`")
	htmlPath := fs.String("html", "", "write the merged report as a self-contained HTML page to `FILE`")
	specBase := fs.String("spec-base", "", "`URL` prefix of the specification chapters that requirement IDs link to (default: the suites' default; \"-\": no links)")
	fs.Usage = func() {
		fmt.Fprint(stderr, usageText)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "splash-conform report: no report given")
		fs.Usage()
		return 2
	}
	base := *specBase
	if base == "" {
		base = conformance.DefaultSpecBase
	}
	var inputs []Input
	for _, arg := range fs.Args() {
		inputs = append(inputs, ParseInput(arg))
	}
	rep, err := Merge(inputs, catalogs)
	if err != nil {
		fmt.Fprintln(stderr, "splash-conform report:", err)
		return 2
	}
	for _, out := range []struct {
		path  string
		write func(io.Writer) error
	}{
		{*jsonPath, rep.WriteJSON},
		{*htmlPath, func(w io.Writer) error { return rep.WriteHTML(w, base) }},
	} {
		if out.path == "" {
			continue
		}
		var buf bytes.Buffer
		if err := out.write(&buf); err != nil {
			fmt.Fprintln(stderr, "splash-conform report:", err)
			return 2
		}
		if err := os.WriteFile(out.path, buf.Bytes(), 0o644); err != nil {
			fmt.Fprintln(stderr, "splash-conform report:", err)
			return 2
		}
	}
	if err := rep.WriteText(stdout); err != nil {
		fmt.Fprintln(stderr, "splash-conform report:", err)
		return 2
	}
	return 0
}
