package main

import "github.com/splashv5/conform/vectors/vectorfmt"

// buildScripts renders scripts.json from the hand-written table of cases_scripts.go, whose
// expectations come from the rules of chapter 20, not from running the evaluator; the replay
// then holds the evaluator to them.
func buildScripts(c *checker) (string, any, *fileBuilder) {
	b := newFileBuilder(vectorfmt.ScriptsFile, c)
	g := vectorfmt.ScriptGroup{Type: vectorfmt.ScriptEvalType, Tests: []vectorfmt.ScriptTest{}}
	for _, row := range scriptCases() {
		errKind := ""
		switch {
		case row.rejectAt != nil:
			errKind = vectorfmt.ScriptSyntaxRejected
		case row.tooLarge:
			errKind = vectorfmt.ScriptSourceTooLarge
		}
		t := vectorfmt.ScriptTest{Case: b.newCase(row.meta, errKind), Source: vectorfmt.Text(row.source), Tools: row.tools,
			RejectedAt: row.rejectAt, RejectedNaming: row.naming, Diagnostics: row.diags, Calls: row.calls, Runs: row.runs,
			ClockStepMillis: row.clockStep}
		if t.Tools == nil {
			t.Tools = []vectorfmt.ScriptTool{}
		}
		if t.Diagnostics == nil {
			t.Diagnostics = []string{}
		}
		if t.Calls == nil {
			t.Calls = []vectorfmt.ScriptCall{}
		}
		switch {
		case row.tooLarge:
			t.ActualBytes, t.MaximumBytes = len(row.source), scriptMaxSourceBytes
		case row.rejectAt != nil:
			if row.status != "" || len(row.calls) > 0 || len(row.diags) > 0 {
				b.failf("%q: a rejected source has no outcome and calls nothing", row.comment)
			}
		case row.status == "" || row.kind == "":
			b.failf("%q: a source that runs needs a status and a value kind", row.comment)
		default:
			t.Status, t.ValueKind, t.Value = row.status, row.kind, row.value
		}
		g.Tests = append(g.Tests, t)
	}
	doc := vectorfmt.Scripts{TestGroups: []vectorfmt.ScriptGroup{g}}
	doc.Header = b.header()
	return b.name, doc, b
}
