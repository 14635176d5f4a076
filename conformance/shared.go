package conformance

import (
	"io"
	"time"
)

// The functions below let another suite (package conformance/host) build and print reports
// with the same layout as this one.

// Summarize counts the outcomes of results.
func Summarize(results []Result) Summary { return summarize(results) }

// WriteProgress prints the line of one finished check (and, when verbose, its transcript).
func WriteProgress(w io.Writer, r Result, verbose bool) { writeProgress(w, r, verbose) }

// WriteSummary prints the table of outcomes per area, the failures and the verdict line.
func WriteSummary(w io.Writer, r *Report) { writeSummary(w, r) }

// FormatDuration rounds d for display.
func FormatDuration(d time.Duration) string { return formatDuration(d) }

// WriteReportFile writes a report through write into path, atomically.
func WriteReportFile(path string, write func(io.Writer) error) error { return writeFile(path, write) }
