// Package implreport merges the JSON reports of the conformance suites (worker, host and
// interop, one pair or a whole matrix) written for any number of implementations into one
// implementation report: every requirement of the specification, grouped by chapter, against
// every implementation, each cell the state the implementation's checks give the requirement,
// and per requirement the number of implementations that meet it. It is the table a standards
// body reads to judge whether every requirement has two independent implementations.
//
// It reads the reports as files, so that reports written by earlier versions of the runner
// (JSON index format 2 and 3, matrix format 1) merge with current ones; what an earlier suite
// version could not judge is listed per report. It writes the merged report as text, JSON and a
// self-contained HTML page (splash-conform report, docs/porting.md).
package implreport
