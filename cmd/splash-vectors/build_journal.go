package main

import (
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

func buildJournal(c *checker) (string, any, *fileBuilder) {
	b := newFileBuilder(vectorfmt.JournalFile, c)
	trans := map[canonjson.Mode]*vectorfmt.JournalGroup{}
	loads := map[canonjson.Mode]*vectorfmt.JournalGroup{}
	for _, m := range modes {
		trans[m] = &vectorfmt.JournalGroup{Type: vectorfmt.JournalTransitionType, Mode: m.String(), SessionID: sessionOne, Tests: []vectorfmt.JournalTest{}}
		loads[m] = &vectorfmt.JournalGroup{Type: vectorfmt.JournalLoadType, Mode: m.String(), Tests: []vectorfmt.JournalTest{}}
	}
	for _, row := range journalCases() {
		if (row.lossy != nil && !sameJournalSteps(row.steps, row.lossy)) != hasFlag(row.flags, "ModeDependent") {
			b.failf("%q: ModeDependent flag does not match the expectations", row.comment)
		}
		runs := map[canonjson.Mode][]jStep{canonjson.Preserve: row.steps}
		if row.lossy != nil {
			runs[canonjson.Lossy] = row.lossy
		}
		for _, m := range modes {
			steps, ok := runs[m]
			if !ok {
				continue
			}
			t := buildJournalTransition(b, row, steps, m)
			trans[m].Tests = append(trans[m].Tests, t)
		}
	}
	for _, row := range journalLoadCases() {
		lossy := row.lossy
		if lossy.isZero() {
			lossy = row.preserve
		}
		if (row.lossyToo && lossy != row.preserve) != hasFlag(row.flags, "ModeDependent") {
			b.failf("%q: ModeDependent flag does not match the expectations", row.comment)
		}
		for _, m := range modes {
			exp := row.preserve
			if m == canonjson.Lossy {
				if !row.lossyToo {
					continue
				}
				exp = lossy
			}
			t := vectorfmt.JournalTest{Case: b.newCase(row.meta, exp.err), Input: b.text(row.input), Scope: row.scope}
			if exp.err == "" {
				t.Output = b.text(exp.out)
			}
			loads[m].Tests = append(loads[m].Tests, t)
		}
	}
	doc := vectorfmt.Journal{TestGroups: []vectorfmt.JournalGroup{
		*trans[canonjson.Preserve], *trans[canonjson.Lossy], *loads[canonjson.Preserve], *loads[canonjson.Lossy],
	}}
	doc.Header = b.header()
	return b.name, doc, b
}

func sameJournalSteps(a, b []jStep) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// buildJournalTransition renders one transition row in mode m.
func buildJournalTransition(b *fileBuilder, row jCase, steps []jStep, m canonjson.Mode) vectorfmt.JournalTest {
	what := row.comment + " [" + m.String() + "]"
	t := vectorfmt.JournalTest{Manifest: b.text(row.manifest), Steps: []vectorfmt.JournalStep{}}
	var current string
	switch {
	case row.newScope != "" && row.initial == "":
		current = indJournalJSON(row.newScope)
		scope := row.newScope
		t.NewScope = &scope
	case row.newScope == "" && row.initial != "":
		current = row.initial
		t.Journal = b.text(row.initial)
	default:
		b.failf("%s: a row starts from exactly one of a journal and a new scope", what)
	}
	testErr := ""
	for i, s := range steps {
		checkJournalStep(b, what, i, s)
		after := current
		if s.err == "" && s.after != "" {
			after = s.after
		}
		if testErr == "" {
			testErr = s.err
		}
		st := vectorfmt.JournalStep{Op: s.op, Request: b.text(s.request), Error: s.err, Admission: s.admission, Journal: b.text(after)}
		if s.manifest != "" {
			st.Manifest = b.text(s.manifest)
		}
		if s.status != "" {
			st.Status = b.text(s.status)
		}
		if s.state != "" {
			st.State = b.text(s.state)
		}
		t.Steps = append(t.Steps, st)
		current = after
	}
	t.Case = b.newCase(row.meta, testErr)
	return t
}

// checkJournalStep rejects malformed table steps.
func checkJournalStep(b *fileBuilder, what string, i int, s jStep) {
	observe := s.op == vectorfmt.OpObserve || s.op == vectorfmt.OpObserveReconciliation || s.op == vectorfmt.OpObserveCompensation
	admit := s.op == vectorfmt.OpAdmit || s.op == vectorfmt.OpAdmitCompensation
	switch {
	case observe != (s.status != ""):
		b.failf("%s: step %d: a status is given exactly for observe operations", what, i)
	case s.err != "" && (s.admission != "" || s.state != "" || s.after != ""):
		b.failf("%s: step %d: a failing step has no outputs", what, i)
	case s.err == "" && admit && s.admission == "":
		b.failf("%s: step %d: a successful admission names its outcome", what, i)
	case s.err == "" && admit && (s.admission == vectorfmt.AdmissionExisting) != (s.state != ""):
		b.failf("%s: step %d: exactly an existing admission reports a state", what, i)
	case s.err == "" && observe && s.state == "":
		b.failf("%s: step %d: a successful observation reports a state", what, i)
	case s.op == vectorfmt.OpValidateReconciliation && (s.state != "" || s.admission != "" || s.after != ""):
		b.failf("%s: step %d: validate_reconciliation has no outputs", what, i)
	}
}
