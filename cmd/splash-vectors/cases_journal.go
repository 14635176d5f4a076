package main

import (
	"fmt"
	"strings"

	"github.com/splashv5/conform/vectors/vectorfmt"
)

// ---- fixtures ----

// fpJSON and fpText are the input fingerprints (FP-007) of a json payload whose canonical
// value is written by hand, and of a text payload.
func fpJSON(canonical string) string {
	return indInputFingerprint(indCanonicalInput("json", canonical))
}
func fpText(s string) string { return indInputFingerprint(indCanonicalInput("text", s)) }

var (
	jAdd      = grantJSON("math.add", "json", 4, 1024, 1024, 0, "")
	jEcho     = grantJSON("text.echo", "text", 4, 1024, 1024, 0, "")
	jLedger   = grantJSON("ledger.post", "json", 4, 1024, 1024, 2, "")
	jLedgerFP = indGrantFingerprint(jLedger)
	jManifest = manifestJSON(sessionOne, jAdd, jEcho, gRelease, jLedger)

	// The first payload of reference anchor A7, as written there, and its canonical form.
	a7First      = `{"b":[1,{"z":1,"a":"x"}],"a":null,"B":true}`
	a7FirstCanon = `{"B":true,"a":null,"b":[1,{"a":"x","z":1}]}`
	undoRelease  = `{"undo":"release"}`

	pvA = `{"a":1,"b":2}`
	fpA = fpJSON(pvA)

	sA  = stOK(jsv(`{"total":3}`))
	sB  = stOK(jsv(`{"total":4}`))
	s42 = stOK(jsv(`{"total":42}`))
	f0  = stFail("adder crashed")
	f1  = stFail("adder stalled")
)

// Recorded verbatim from the Rust reference (reference anchor A8, docs/reference-anchors.md).
const recordedJournalA8 = `{"format_version":2,"scope":"tenant-release","records":[{"tool":"release.publish","operation_key":"release-42-add","input_fingerprint":"47a67a884b85e9385cedfd6cb717c9ff4f361ac2fee1f2085096df0902e4936d","state":{"state":"succeeded","payload":{"format":"json","value":{"total":42}}},"compensation":{"compensation_key":"cmp-undo-1","input_fingerprint":"5cc121e4a0ce2f79ae6b83397eb4f81a66bf12a9b1fe5836835a8118de24d578","grant_fingerprint":"b4586b43cee35f3490e1be033cf424c5d927417c4e5af7cd685123764a8c8be9","state":{"state":"pending"}}}]}`

// jD is a math.add dispatch of operation key with payload value v.
func jD(key, v string) string { return dispBody("d1", "math.add", key, jsv(v)) }

// jOp is the math.add record op-7 with input pvA in state.
func jOp(state string) jRec { return jRec{"math.add", "op-7", fpA, state, nil} }

// opJ is a tenant-a journal holding only jOp(state).
func opJ(state string) string { return indJournalJSON("tenant-a", jOp(state)) }

// jRel is the release.publish record of anchor A8 in state, with compensation comp.
func jRel(state string, comp *jComp) jRec {
	return jRec{"release.publish", "release-42-add", fpJSON(a7FirstCanon), state, comp}
}

// jUndo is the compensation of anchor A8 in state.
func jUndo(state string) *jComp {
	return &jComp{"cmp-undo-1", fpJSON(undoRelease), grantFP, state}
}

// compJ is a tenant-release journal holding the succeeded release record with compensation
// jUndo(state).
func compJ(state string) string { return indJournalJSON("tenant-release", jRel(s42, jUndo(state))) }

// jC is the compensation request of anchor A8.
var jC = compBody("c1", "release.publish", "release-42-add", "cmp-undo-1", "tenant-release", grantFP, jsv(undoRelease))

// ---- steps ----

// jStep is one journal step of a case table. For a failing step after is empty (the
// journal is unchanged); for a successful one after is the journal written after the step,
// or empty when the step changes nothing.
type jStep struct {
	op, manifest, request, status string
	err                           string
	admission, state, after       string
}

func admitS(request, admission, state, after string) jStep {
	return jStep{op: vectorfmt.OpAdmit, request: request, admission: admission, state: state, after: after}
}
func observeS(request, status, after string) jStep {
	return jStep{op: vectorfmt.OpObserve, request: request, status: status, state: status, after: after}
}
func admitCompS(request, admission, state, after string) jStep {
	return jStep{op: vectorfmt.OpAdmitCompensation, request: request, admission: admission, state: state, after: after}
}
func observeCompS(request, status, after string) jStep {
	return jStep{op: vectorfmt.OpObserveCompensation, request: request, status: status, state: status, after: after}
}
func jFail(op, request, status, kind string) jStep {
	return jStep{op: op, request: request, status: status, err: kind}
}
func (s jStep) under(manifest string) jStep { s.manifest = manifest; return s }

// jCase is one transition row: an initial journal (initial JSON, which must be canonical, or
// an empty journal for newScope) and steps, run in preserve mode and, when lossy is set, also
// in lossy mode with those steps.
type jCase struct {
	meta
	manifest string
	initial  string
	newScope string
	steps    []jStep
	lossy    []jStep
}

// transitionTable is the table of JRN-018, written out: for each stored state, the outcome
// of observing running, S(a), S(b), F(m0), F(m1) and cancelled.
var transitionTable = []struct {
	name, stored string
	cells        [6]string
}{
	{"pending", stPending, [6]string{"store", "store", "store", "store", "store", "store"}},
	{"running", stRunning, [6]string{"same", "store", "store", "store", "store", "store"}},
	{"succeeded S(a)", sA, [6]string{"error", "same", "error", "error", "error", "error"}},
	{"failed F(m0)", f0, [6]string{"error", "error", "error", "same", "error", "error"}},
	{"cancelled", stCancelled, [6]string{"error", "error", "error", "error", "error", "same"}},
}

var observedStates = []struct{ name, status string }{
	{"running", stRunning}, {"S(a)", sA}, {"S(b)", sB}, {"F(m0)", f0}, {"F(m1)", f1}, {"cancelled", stCancelled},
}

// fillerJournal returns a journal for scope holding the records head followed by filler
// records (text.echo, succeeded with runs of "x") whose serialized form is exactly total
// bytes.
func fillerJournal(scope string, total int, head ...jRec) string {
	const fillers = 12
	recs := append([]jRec{}, head...)
	for i := 0; i < fillers; i++ {
		recs = append(recs, jRec{"text.echo", fmt.Sprintf("fill-%02d", i), fpText("x"), stOK(txt("")), nil})
	}
	extra := total - len(indJournalJSON(scope, recs...))
	if extra < 0 || extra > fillers*30000 {
		tableErrors = append(tableErrors, fmt.Sprintf("filler journal of %d bytes cannot be built", total))
		return ""
	}
	for i := 0; i < fillers; i++ {
		n := extra / fillers
		if i < extra%fillers {
			n++
		}
		recs[len(head)+i].state = stOK(txt(strings.Repeat("x", n)))
	}
	out := indJournalJSON(scope, recs...)
	if len(out) != total {
		tableErrors = append(tableErrors, fmt.Sprintf("filler journal is %d bytes, want %d", len(out), total))
	}
	return out
}

const maxJournalBytes = 262144

func journalCases() []jCase {
	var cs []jCase
	add := func(comment string, f []string, r []string, initial string, steps ...jStep) {
		cs = append(cs, jCase{meta: meta{comment, f, r}, manifest: jManifest, initial: initial, steps: steps})
	}
	both := func(comment string, f []string, r []string, initial string, preserve, lossy []jStep) {
		cs = append(cs, jCase{meta: meta{comment, f, r}, manifest: jManifest, initial: initial, steps: preserve, lossy: lossy})
	}
	const (
		identity  = "OperationIdentityMismatch"
		unknownOp = "UnknownOperation"
		opTrans   = "InvalidWorkerOperationTransition"
		cmpTrans  = "InvalidWorkerCompensationTransition"
		tooLarge  = "OperationJournalTooLarge"
		scopeMis  = "OperationJournalScopeMismatch"
		needsOK   = "CompensationRequiresSucceededOperation"
		cmpIdent  = "CompensationIdentityMismatch"
		cmpTool   = "CompensationToolMismatch"
		outTooBig = "OutputTooLarge"
		dispatch  = vectorfmt.AdmissionDispatch
		existing  = vectorfmt.AdmissionExisting
	)
	d7 := jD("op-7", pvA)

	// ---- reference anchor A8 ----
	cs = append(cs, jCase{
		meta:     meta{"reference anchor A8: admit, observe succeeded, admit the compensation", flags("ReferenceAnchor", "Admission", "Compensation"), reqs("JRN-001", "JRN-002", "JRN-013", "JRN-015", "JRN-020", "JRN-011")},
		manifest: manifestJSON(sessionOne, gRelease),
		newScope: "tenant-release",
		steps: []jStep{
			admitS(dispBody("d1", "release.publish", "release-42-add", jsv(a7First)), dispatch, "", indJournalJSON("tenant-release", jRel(stPending, nil))),
			observeS(dispBody("d1", "release.publish", "release-42-add", jsv(a7First)), s42, indJournalJSON("tenant-release", jRel(s42, nil))),
			admitCompS(jC, dispatch, "", recordedJournalA8),
		},
	})

	// ---- a longer life ----
	{
		d8 := jD("op-8", `{"a":2,"b":2}`)
		op8 := func(state string) jRec { return jRec{"math.add", "op-8", fpJSON(`{"a":2,"b":2}`), state, nil} }
		r7 := recBody("rc1", "math.add", "op-7")
		cs = append(cs, jCase{
			meta:     meta{"one operation from admission to success, then a second one appended after it", flags("Admission", "Reconciliation"), reqs("JRN-013", "JRN-015", "JRN-017", "JRN-018", "JRN-009")},
			manifest: jManifest,
			newScope: "tenant-a",
			steps: []jStep{
				admitS(d7, dispatch, "", opJ(stPending)),
				admitS(rep(d7, `"d1"`, `"d2"`), existing, stPending, ""),
				observeS(d7, stRunning, opJ(stRunning)),
				observeS(d7, stRunning, ""),
				observeS(d7, sA, opJ(sA)),
				admitS(d7, existing, sA, ""),
				{op: vectorfmt.OpValidateReconciliation, request: r7},
				{op: vectorfmt.OpObserveReconciliation, request: r7, status: sA, state: sA},
				admitS(d8, dispatch, "", indJournalJSON("tenant-a", jOp(sA), op8(stPending))),
				observeS(d8, f0, indJournalJSON("tenant-a", jOp(sA), op8(f0))),
			},
		})
	}

	// ---- every cell of the transition table, for operations and compensations (JRN-018) ----
	for _, row := range transitionTable {
		for i, obs := range observedStates {
			comment := fmt.Sprintf("operation: stored %s, observed %s", row.name, obs.name)
			var step jStep
			switch row.cells[i] {
			case "store":
				step = observeS(d7, obs.status, opJ(obs.status))
			case "same":
				step = observeS(d7, obs.status, "")
			default:
				step = jFail(vectorfmt.OpObserve, d7, obs.status, opTrans)
			}
			add(comment, flags("TransitionCell"), reqs("JRN-018", "JRN-015"), opJ(row.stored), step)
		}
	}
	for _, row := range transitionTable {
		for i, obs := range observedStates {
			comment := fmt.Sprintf("compensation: stored %s, observed %s", row.name, obs.name)
			var step jStep
			switch row.cells[i] {
			case "store":
				step = observeCompS(jC, obs.status, compJ(obs.status))
			case "same":
				step = observeCompS(jC, obs.status, "")
			default:
				step = jFail(vectorfmt.OpObserveCompensation, jC, obs.status, cmpTrans)
			}
			add(comment, flags("TransitionCell", "Compensation"), reqs("JRN-018", "JRN-022"), compJ(row.stored), step)
		}
	}
	r7 := recBody("rc1", "math.add", "op-7")
	add("reconciliation: stored pending, observed S(a)", flags("TransitionCell", "Reconciliation"), reqs("JRN-018", "JRN-017"), opJ(stPending),
		jStep{op: vectorfmt.OpObserveReconciliation, request: r7, status: sA, state: sA, after: opJ(sA)})
	add("reconciliation: stored S(a), observed S(a)", flags("TransitionCell", "Reconciliation"), reqs("JRN-018", "JRN-017"), opJ(sA),
		jStep{op: vectorfmt.OpObserveReconciliation, request: r7, status: sA, state: sA})
	add("reconciliation: stored S(a), observed running", flags("TransitionCell", "Reconciliation"), reqs("JRN-018", "JRN-017"), opJ(sA),
		jFail(vectorfmt.OpObserveReconciliation, r7, stRunning, opTrans))
	add("pending is not a wire status: observing it fails to decode", flags("WireStatus"), reqs("JRN-018", "MSG-023"), opJ(stRunning),
		jFail(vectorfmt.OpObserve, d7, stPending, "Serialization"))
	add("pending is not a wire status for a compensation either", flags("WireStatus", "Compensation"), reqs("JRN-018", "MSG-023"), compJ(stPending),
		jFail(vectorfmt.OpObserveCompensation, jC, stPending, "Serialization"))

	// ---- payload equality (JRN-019) ----
	{
		v10 := `{"v":1.0}`
		j10 := indJournalJSON("tenant-a", jRec{"math.add", "op-7", fpA, stOK(jsv(v10)), nil})
		// step observes v; the returned state is the observed status in canonical form.
		step := func(v, canonical string) jStep {
			s := observeS(d7, stOK(jsv(v)), "")
			s.state = stOK(jsv(canonical))
			return s
		}
		both("succeeded 1.0 observed as 1.00: different text when preserved, the same value in lossy mode", flags("PayloadEquality", "ModeDependent", "NonPortable"), reqs("JRN-019", "ENC-033"),
			j10, []jStep{jFail(vectorfmt.OpObserve, d7, stOK(jsv(`{"v":1.00}`)), opTrans)}, []jStep{step(`{"v":1.00}`, v10)})
		both("succeeded 1.0 observed as 1: an integer never equals a float", flags("PayloadEquality"), reqs("JRN-019", "ENC-033", "FP-010"),
			j10, []jStep{jFail(vectorfmt.OpObserve, d7, stOK(jsv(`{"v":1}`)), opTrans)}, []jStep{jFail(vectorfmt.OpObserve, d7, stOK(jsv(`{"v":1}`)), opTrans)})
		both("succeeded payload observed with its members in another order", flags("PayloadEquality", "KeyOrder"), reqs("JRN-019", "ENC-033"),
			opJ(stOK(jsv(`{"a":1,"b":[true,null]}`))), []jStep{step(`{"b":[true,null],"a":1}`, `{"a":1,"b":[true,null]}`)}, []jStep{step(`{"b":[true,null],"a":1}`, `{"a":1,"b":[true,null]}`)})
		add("a json payload observed where a text payload is stored: the text grant refuses it first", flags("GrantRecheck", "CheckOrder"), reqs("JRN-015", "JRN-016"),
			indJournalJSON("tenant-a", jRec{"text.echo", "op-t", fpText("hi"), stOK(txt("3")), nil}),
			jFail(vectorfmt.OpObserve, dispBody("d1", "text.echo", "op-t", txt("hi")), stOK(jsv(`[3]`)), "PayloadFormatMismatch"))
		add("failed messages are compared byte for byte (composed and decomposed e-acute)", flags("PayloadEquality", "Unicode"), reqs("JRN-019"),
			opJ(stFail("caf\u00e9")), jFail(vectorfmt.OpObserve, d7, stFail("cafe\u0301"), opTrans))
	}

	// ---- admission (JRN-013, JRN-014, JRN-016) ----
	add("admitting a new operation key appends a pending record", flags("Admission"), reqs("JRN-013", "JRN-014"), indJournalJSON("any-scope"),
		admitS(d7, dispatch, "", indJournalJSON("any-scope", jOp(stPending))))
	add("an operation key admitted for another tool", flags("Admission"), reqs("JRN-013"), opJ(stPending),
		jFail(vectorfmt.OpAdmit, dispBody("d1", "ledger.post", "op-7", jsv(pvA)), "", identity))
	add("an operation key admitted with another input", flags("Admission"), reqs("JRN-013"), opJ(stPending),
		jFail(vectorfmt.OpAdmit, jD("op-7", `{"a":1,"b":3}`), "", identity))
	add("the input identity is canonical: the same input spelled differently is the same operation", flags("Admission", "Whitespace", "KeyOrder"), reqs("JRN-013", "JRN-011"),
		opJ(sA), admitS(jD("op-7", `{ "b" : 2 , "a" : 1 }`), existing, sA, ""))
	both("an input of 1.0 where 1 was admitted is another input in both modes", flags("Admission"), reqs("JRN-013", "FP-010"), opJ(stPending),
		[]jStep{jFail(vectorfmt.OpAdmit, jD("op-7", `{"a":1.0,"b":2}`), "", identity)}, []jStep{jFail(vectorfmt.OpAdmit, jD("op-7", `{"a":1.0,"b":2}`), "", identity)})
	{
		j15 := indJournalJSON("tenant-a", jRec{"math.add", "op-7", fpJSON(`{"x":1.5}`), stPending, nil})
		both("an input of 1.50 where 1.5 was admitted: another input when preserved, the same in lossy mode", flags("Admission", "ModeDependent", "NonPortable"), reqs("JRN-011", "FP-011"),
			j15, []jStep{jFail(vectorfmt.OpAdmit, jD("op-7", `{"x":1.50}`), "", identity)}, []jStep{admitS(jD("op-7", `{"x":1.50}`), existing, stPending, "")})
	}
	for _, st := range []struct{ name, state string }{{"running", stRunning}, {"failed", f0}, {"cancelled", stCancelled}} {
		add("an exact duplicate of a "+st.name+" operation reports it without change", flags("Admission"), reqs("JRN-013"), opJ(st.state),
			admitS(d7, existing, st.state, ""))
	}
	{
		small := func(out int) string {
			return manifestJSON(sessionOne, grantJSON("math.add", "json", 4, 1024, out, 0, ""))
		}
		add("a stored succeeded payload of 11 bytes under a current output limit of 11", flags("Admission", "GrantRecheck", "Boundary"), reqs("JRN-016", "JRN-013"), opJ(sA),
			admitS(d7, existing, sA, "").under(small(11)))
		add("a stored succeeded payload of 11 bytes under a current output limit of 10", flags("Admission", "GrantRecheck", "Boundary"), reqs("JRN-016", "JRN-013"), opJ(sA),
			jFail(vectorfmt.OpAdmit, d7, "", outTooBig).under(small(10)))
		add("a stored failure needs no output limit", flags("Admission", "GrantRecheck"), reqs("JRN-016"), opJ(f0),
			admitS(d7, existing, f0, "").under(small(1)))
		add("a stored json payload for a tool whose current grant is text", flags("Admission", "GrantRecheck"), reqs("JRN-016"),
			indJournalJSON("tenant-a", jRec{"text.echo", "op-t", fpText("hi"), sA, nil}),
			jFail(vectorfmt.OpAdmit, dispBody("d1", "text.echo", "op-t", txt("hi")), "", "PayloadFormatMismatch"))
		add("observing a succeeded payload over the current output limit", flags("GrantRecheck"), reqs("JRN-016", "JRN-015"), opJ(stRunning),
			jFail(vectorfmt.OpObserve, d7, sA, outTooBig).under(small(10)))
	}

	// ---- the 64-record bound (JRN-009, JRN-013) ----
	{
		var recs []jRec
		for i := 0; i < 64; i++ {
			recs = append(recs, jRec{"math.add", fmt.Sprintf("op-%02d", i), fpA, stPending, nil})
		}
		full := indJournalJSON("tenant-a", recs...)
		add("a new operation key in a journal of 64 records", flags("Admission", "JournalBound", "Boundary"), reqs("JRN-009", "JRN-013"), full,
			jFail(vectorfmt.OpAdmit, jD("op-64", pvA), "", "TooManyWorkerOperations"))
		add("a known operation key in a journal of 64 records", flags("Admission", "JournalBound", "Boundary"), reqs("JRN-013"), full,
			admitS(jD("op-63", pvA), existing, stPending, ""))
	}

	// ---- the 262,144-byte bound after every mutation (JRN-010) ----
	{
		newRec := len(indRecordJSON(jOp(stPending))) + 1 // and its comma
		fits := fillerJournal("tenant-a", maxJournalBytes-newRec)
		add("admission that makes the journal exactly 262,144 bytes", flags("Admission", "JournalBound", "Boundary", "LargeInput"), reqs("JRN-010", "JRN-013"), fits,
			admitS(d7, dispatch, "", fillerJournalAfterAdmit(fits)))
		add("admission that would make the journal 262,145 bytes", flags("Admission", "JournalBound", "Boundary", "LargeInput"), reqs("JRN-010", "JRN-013"),
			fillerJournal("tenant-a", maxJournalBytes-newRec+1), jFail(vectorfmt.OpAdmit, d7, "", tooLarge))
		grow := len(sA) - len(stPending)
		obsFits := fillerJournal("tenant-a", maxJournalBytes-grow, jOp(stPending))
		add("observation that makes the journal exactly 262,144 bytes", flags("JournalBound", "Boundary", "LargeInput"), reqs("JRN-010", "JRN-015"), obsFits,
			observeS(d7, sA, strings.Replace(obsFits, stPending, sA, 1)))
		add("observation that would make the journal 262,145 bytes", flags("JournalBound", "Boundary", "LargeInput"), reqs("JRN-010", "JRN-015"),
			fillerJournal("tenant-a", maxJournalBytes-grow+1, jOp(stPending)), jFail(vectorfmt.OpObserve, d7, sA, tooLarge))
		cgrow := len(indRecordJSON(jRel(s42, jUndo(stPending)))) - len(indRecordJSON(jRel(s42, nil)))
		add("compensation admission that would make the journal 262,145 bytes", flags("Compensation", "Admission", "JournalBound", "Boundary", "LargeInput"), reqs("JRN-010", "JRN-020"),
			fillerJournal("tenant-release", maxJournalBytes-cgrow+1, jRel(s42, nil)), jFail(vectorfmt.OpAdmitCompensation, jC, "", tooLarge))
	}

	// ---- observe: check order (JRN-015) ----
	add("an invalid status for an unknown operation: the status is checked first", flags("CheckOrder"), reqs("JRN-015"), opJ(stPending),
		jFail(vectorfmt.OpObserve, jD("op-9", pvA), stFail(""), "InvalidOperationFailure"))
	add("a status over the output limit for an unknown operation: the grant is checked first", flags("CheckOrder", "GrantRecheck"), reqs("JRN-015", "JRN-016"), opJ(stPending),
		jFail(vectorfmt.OpObserve, jD("op-9", pvA), stOK(jsv(jsonOfSize(1025))), outTooBig))
	add("observing an operation key that was never admitted", flags(), reqs("JRN-015"), opJ(stPending),
		jFail(vectorfmt.OpObserve, jD("op-9", pvA), stRunning, unknownOp))
	add("observing an operation key under another tool", flags(), reqs("JRN-015"), opJ(stPending),
		jFail(vectorfmt.OpObserve, dispBody("d1", "ledger.post", "op-7", jsv(pvA)), stRunning, identity))
	add("observing an operation key with another input, in a state that refuses the status: identity comes first", flags("CheckOrder"), reqs("JRN-015"), opJ(stCancelled),
		jFail(vectorfmt.OpObserve, jD("op-7", `{"a":9}`), stRunning, identity))
	add("observing a text payload for a json grant", flags(), reqs("JRN-015", "JRN-016"), opJ(stRunning),
		jFail(vectorfmt.OpObserve, d7, stOK(txt("3")), "PayloadFormatMismatch"))

	// ---- reconciliation (JRN-017) ----
	vr := func(request, kind string) jStep {
		return jStep{op: vectorfmt.OpValidateReconciliation, request: request, err: kind}
	}
	add("reconciliation of an admitted operation", flags("Reconciliation"), reqs("JRN-017"), opJ(stRunning), vr(r7, ""))
	add("reconciliation of an operation key that was never admitted", flags("Reconciliation"), reqs("JRN-017"), opJ(stRunning), vr(recBody("rc1", "math.add", "op-9"), unknownOp))
	add("reconciliation of an operation key under another tool", flags("Reconciliation"), reqs("JRN-017"), opJ(stRunning), vr(recBody("rc1", "ledger.post", "op-7"), identity))
	add("reconciliation of a stored payload over the current output limit", flags("Reconciliation", "GrantRecheck"), reqs("JRN-017", "JRN-016"), opJ(sA),
		vr(r7, outTooBig).under(manifestJSON(sessionOne, grantJSON("math.add", "json", 4, 1024, 10, 0, ""))))
	add("reconciliation status for an unknown operation: the record is checked before the status", flags("Reconciliation", "CheckOrder"), reqs("JRN-017"), opJ(stPending),
		jFail(vectorfmt.OpObserveReconciliation, recBody("rc1", "math.add", "op-9"), stFail(""), unknownOp))
	add("reconciliation with an invalid status", flags("Reconciliation"), reqs("JRN-017"), opJ(stPending),
		jFail(vectorfmt.OpObserveReconciliation, r7, stFail(""), "InvalidOperationFailure"))
	add("reconciliation with a stored payload over the limit and an invalid status: the stored state is checked first", flags("Reconciliation", "CheckOrder", "GrantRecheck"), reqs("JRN-017"), opJ(sA),
		jFail(vectorfmt.OpObserveReconciliation, r7, stFail(""), outTooBig).under(manifestJSON(sessionOne, grantJSON("math.add", "json", 4, 1024, 10, 0, ""))))

	// ---- compensation admission (JRN-020, JRN-021) ----
	relOnly := func(state string) string { return indJournalJSON("tenant-release", jRel(state, nil)) }
	add("compensation of a succeeded operation", flags("Compensation", "Admission"), reqs("JRN-020"), relOnly(s42), admitCompS(jC, dispatch, "", compJ(stPending)))
	add("compensation for another tenant scope", flags("Compensation", "Scope"), reqs("JRN-020", "JRN-008"), relOnly(s42),
		jFail(vectorfmt.OpAdmitCompensation, rep(jC, "tenant-release", "tenant-other"), "", scopeMis))
	add("compensation for another tenant scope and an unknown operation: the scope comes first", flags("Compensation", "Scope", "CheckOrder"), reqs("JRN-020"), relOnly(s42),
		jFail(vectorfmt.OpAdmitCompensation, rep(rep(jC, "tenant-release", "tenant-other"), "release-42-add", "release-43-add"), "", scopeMis))
	add("compensation of an operation key that was never admitted", flags("Compensation"), reqs("JRN-020"), relOnly(s42),
		jFail(vectorfmt.OpAdmitCompensation, rep(jC, "release-42-add", "release-43-add"), "", unknownOp))
	ledgerComp := compBody("c1", "ledger.post", "release-42-add", "cmp-undo-1", "tenant-release", jLedgerFP, jsv(undoRelease))
	add("compensation of an operation through another tool", flags("Compensation"), reqs("JRN-020"), relOnly(s42),
		jFail(vectorfmt.OpAdmitCompensation, ledgerComp, "", cmpTool))
	add("compensation through another tool of a pending operation: the tool comes first", flags("Compensation", "CheckOrder"), reqs("JRN-020"), relOnly(stPending),
		jFail(vectorfmt.OpAdmitCompensation, ledgerComp, "", cmpTool))
	for _, st := range []struct{ name, state string }{{"pending", stPending}, {"running", stRunning}, {"failed", f0}, {"cancelled", stCancelled}} {
		add("compensation of a "+st.name+" operation", flags("Compensation"), reqs("JRN-020"), relOnly(st.state),
			jFail(vectorfmt.OpAdmitCompensation, jC, "", needsOK))
	}
	add("the same compensation again reports its pending state", flags("Compensation", "Admission"), reqs("JRN-020"), compJ(stPending),
		admitCompS(rep(jC, `"c1"`, `"c2"`), existing, stPending, ""))
	add("the same compensation after it succeeded reports that state", flags("Compensation", "Admission"), reqs("JRN-020"), compJ(sA),
		admitCompS(jC, existing, sA, ""))
	add("a second compensation key for one operation", flags("Compensation", "CompensationIdentity"), reqs("JRN-020", "JRN-021"), compJ(stPending),
		jFail(vectorfmt.OpAdmitCompensation, rep(jC, "cmp-undo-1", "cmp-undo-2"), "", cmpIdent))
	add("the compensation key with another input", flags("Compensation", "CompensationIdentity"), reqs("JRN-020"), compJ(stPending),
		jFail(vectorfmt.OpAdmitCompensation, rep(jC, undoRelease, `{"undo":"all"}`), "", cmpIdent))
	{
		// The same tool under a grant with two calls: another grant fingerprint.
		rel2 := rep(gRelease, `"max_calls":1`, `"max_calls":2`)
		rel2FP := indGrantFingerprint(rel2)
		add("the compensation under a grant with another fingerprint", flags("Compensation", "CompensationIdentity"), reqs("JRN-020", "JRN-012"), compJ(stPending),
			jFail(vectorfmt.OpAdmitCompensation, rep(jC, grantFP, rel2FP), "", cmpIdent).under(manifestJSON(sessionOne, rel2)))
		// A compensation recorded under a grant with a 10-byte output limit re-checked under it.
		rel10 := rep(gRelease, `"max_output_bytes":65536`, `"max_output_bytes":10`)
		rel10FP := indGrantFingerprint(rel10)
		j := indJournalJSON("tenant-release", jRel(s42, &jComp{"cmp-undo-1", fpJSON(undoRelease), rel10FP, sA}))
		add("the same compensation whose stored payload exceeds the current output limit", flags("Compensation", "GrantRecheck"), reqs("JRN-020", "JRN-016"), j,
			jFail(vectorfmt.OpAdmitCompensation, rep(jC, grantFP, rel10FP), "", outTooBig).under(manifestJSON(sessionOne, rel10)))
	}

	// ---- compensation observation (JRN-022) ----
	add("an invalid compensation status for another scope: the status is checked first", flags("Compensation", "CheckOrder"), reqs("JRN-022"), compJ(stPending),
		jFail(vectorfmt.OpObserveCompensation, rep(jC, "tenant-release", "tenant-other"), stFail(""), "InvalidOperationFailure"))
	add("compensation status for another tenant scope", flags("Compensation", "Scope"), reqs("JRN-022", "JRN-008"), compJ(stPending),
		jFail(vectorfmt.OpObserveCompensation, rep(jC, "tenant-release", "tenant-other"), stRunning, scopeMis))
	add("compensation status for an operation key that was never admitted", flags("Compensation"), reqs("JRN-022"), compJ(stPending),
		jFail(vectorfmt.OpObserveCompensation, rep(jC, "release-42-add", "release-43-add"), stRunning, unknownOp))
	add("compensation status through another tool", flags("Compensation"), reqs("JRN-022"), compJ(stPending),
		jFail(vectorfmt.OpObserveCompensation, ledgerComp, stRunning, cmpTool))
	add("compensation status for an operation without a compensation", flags("Compensation"), reqs("JRN-022"), relOnly(s42),
		jFail(vectorfmt.OpObserveCompensation, jC, stRunning, "UnknownCompensation"))
	add("compensation status under another compensation key", flags("Compensation", "CompensationIdentity"), reqs("JRN-022"), compJ(stPending),
		jFail(vectorfmt.OpObserveCompensation, rep(jC, "cmp-undo-1", "cmp-undo-2"), stRunning, cmpIdent))

	// ---- payload equality of binary64 zeros (ENC-033) ----
	{
		j00 := indJournalJSON("tenant-a", jRec{"math.add", "op-7", fpA, stOK(jsv(`{"v":0.0}`)), nil})
		lossyStep := observeS(d7, stOK(jsv(`{"v":-0.0}`)), "")
		lossyStep.state = stOK(jsv(`{"v":-0.0}`))
		both("succeeded 0.0 observed as -0.0: different text when preserved, equal binary64 values in lossy mode", flags("PayloadEquality", "NegativeZero", "ModeDependent"), reqs("JRN-019", "ENC-033"),
			j00, []jStep{jFail(vectorfmt.OpObserve, d7, stOK(jsv(`{"v":-0.0}`)), opTrans)}, []jStep{lossyStep})
	}
	return cs
}

// fillerJournalAfterAdmit returns a tenant-a filler journal with jOp(pending) appended.
func fillerJournalAfterAdmit(j string) string {
	return strings.TrimSuffix(j, "]}") + "," + indRecordJSON(jOp(stPending)) + "]}"
}

// ---- loading (JRN-001 to JRN-009, JRN-023) ----

// jLoadCase loads input (for scope when it is set). The row runs in preserve mode and, when
// lossyToo is set, also in lossy mode with the lossy expectation (zero: the same).
type jLoadCase struct {
	meta
	input    string
	scope    *string
	preserve expect
	lossy    expect
	lossyToo bool
}

func journalLoadCases() []jLoadCase {
	var cs []jLoadCase
	ok := func(comment, input, output string, f []string, r ...string) {
		cs = append(cs, jLoadCase{meta: meta{comment, f, r}, input: input, preserve: out(output)})
	}
	bad := func(comment, input, kind string, f []string, r ...string) {
		cs = append(cs, jLoadCase{meta: meta{comment, f, r}, input: input, preserve: fail(kind)})
	}
	const (
		ser      = "Serialization"
		badToken = "InvalidToken"
		badFP    = "InvalidOperationFingerprint"
		tooLarge = "OperationJournalTooLarge"
		version  = "UnsupportedOperationJournalVersion"
	)
	empty := `{"format_version":2,"scope":"tenant","records":[]}`
	one := opJ(stPending)
	rec := indRecordJSON(jOp(stPending))
	comp := `{"compensation_key":"cmp-undo-1","input_fingerprint":"` + fpJSON(undoRelease) + `","grant_fingerprint":"` + grantFP + `","state":{"state":"pending"}}`
	withRecord := func(r string) string { return `{"format_version":2,"scope":"tenant-a","records":[` + r + `]}` }

	cs = append(cs,
		jLoadCase{meta: meta{"the empty journal for scope tenant", flags("RoundTrip"), reqs("JRN-001", "JRN-023")}, input: empty, preserve: out(empty), lossyToo: true},
		jLoadCase{meta: meta{"reference anchor A8 loads and is written back unchanged", flags("ReferenceAnchor", "RoundTrip"), reqs("JRN-001", "JRN-002", "JRN-023")},
			input: recordedJournalA8, preserve: out(recordedJournalA8), lossyToo: true},
	)
	ok("a record without a compensation member is written with compensation null", withRecord(strings.Replace(rec, `,"compensation":null`, "", 1)), one,
		flags("JournalShape", "DefaultField"), "JRN-003", "JRN-002")
	ok("members in another order, with whitespace", "{ \"records\" : [ {\"compensation\":null,\"state\":{\"state\":\"pending\"},\"input_fingerprint\":\""+fpA+
		"\",\"operation_key\":\"op-7\",\"tool\":\"math.add\"} ] ,\n \"scope\" : \"tenant-a\" , \"format_version\" : 2 }", one,
		flags("JournalShape", "Whitespace"), "JRN-001", "JRN-023")
	ok("state members the state does not use are ignored", withRecord(strings.Replace(rec, stPending, `{"message":"x","state":"running","payload":5}`, 1)), opJ(stRunning),
		flags("JournalShape", "UnknownField"), "JRN-004")
	ok("the journal in positional-array form", `[2,"tenant",[]]`, empty, flags("JournalShape", "PositionalArray"), "JRN-004")
	ok("a record in positional-array form", withRecord(`["math.add","op-7","`+fpA+`",{"state":"pending"},null]`), one,
		flags("JournalShape", "PositionalArray"), "JRN-004")
	ok("an escaped member name", strings.Replace(empty, `"scope"`, `"sc\u006fpe"`, 1), empty, flags("JournalShape", "EscapedKey"), "JRN-004")
	cs = append(cs, jLoadCase{meta: meta{"a succeeded payload with 1.50: kept when preserved, 1.5 in lossy mode", flags("ModeDependent", "NonPortable", "RoundTrip"), reqs("JRN-023", "JRN-019")},
		input: opJ(stOK(jsv(`{"v":1.50}`))), preserve: out(opJ(stOK(jsv(`{"v":1.50}`)))), lossy: out(opJ(stOK(jsv(`{"v":1.5}`)))), lossyToo: true})
	ok("a compensation with every state", indJournalJSON("tenant-release", jRel(sA, jUndo(f0))), indJournalJSON("tenant-release", jRel(sA, jUndo(f0))),
		flags("RoundTrip", "Compensation"), "JRN-001", "JRN-023")
	{
		var recs []jRec
		for i := 0; i < 65; i++ {
			recs = append(recs, jRec{"math.add", fmt.Sprintf("op-%02d", i), fpA, stPending, nil})
		}
		j64 := indJournalJSON("tenant-a", recs[:64]...)
		ok("64 records", j64, j64, flags("JournalBound", "Boundary"), "JRN-006", "JRN-009")
		bad("65 records", indJournalJSON("tenant-a", recs...), "TooManyWorkerOperations", flags("JournalBound", "Boundary"), "JRN-006", "JRN-009")
		recs[0].tool = "Math.add"
		bad("65 records, the first invalid: the count comes first", indJournalJSON("tenant-a", recs...), "TooManyWorkerOperations", flags("JournalBound", "CheckOrder"), "JRN-006")
		bad("a scope that is not a token and 65 records: the scope comes first", indJournalJSON("Tenant-a", recs...), badToken, flags("Scope", "CheckOrder"), "JRN-006")
	}
	{
		exact := fillerJournal("tenant-a", maxJournalBytes)
		ok("a journal of exactly 262,144 bytes", exact, exact, flags("JournalBound", "Boundary", "LargeInput"), "JRN-005", "JRN-006")
		bad("262,145 bytes that are not JSON: the length is checked before parsing", strings.Repeat("x", maxJournalBytes+1), tooLarge,
			flags("JournalBound", "Boundary", "CheckOrder", "LargeInput"), "JRN-005")
		bad("a journal of 262,144 bytes followed by a space", exact+" ", tooLarge, flags("JournalBound", "Boundary", "LargeInput"), "JRN-005")
		// 40 records read without their compensation member: the text is within the bound, but
		// the written form, with compensation null in every record, is not.
		var head []jRec
		for i := 0; i < 40; i++ {
			head = append(head, jRec{"math.add", fmt.Sprintf("op-%02d", i), fpA, stPending, nil})
		}
		const null = `,"compensation":null`
		full := fillerJournal("tenant-a", maxJournalBytes-10+52*len(null), head...)
		short := strings.ReplaceAll(full, null, "")
		if len(short) != maxJournalBytes-10 || len(full) <= maxJournalBytes {
			tableErrors = append(tableErrors, fmt.Sprintf("journal bound row: read %d bytes, written %d", len(short), len(full)))
		}
		bad(fmt.Sprintf("%d bytes read, %d bytes written: the written form is bounded too", len(short), len(full)), short, tooLarge,
			flags("JournalBound", "CheckOrder", "LargeInput"), "JRN-006")
	}
	bad("not JSON", `{"format_version":2,`, ser, flags("Syntax"), "JRN-005")
	bad("characters after the journal", empty+"x", ser, flags("TrailingCharacters"), "JRN-005")
	bad("an unknown journal member", strings.Replace(empty, `"records"`, `"note":1,"records"`, 1), ser, flags("JournalShape", "DenyUnknownFields"), "JRN-003")
	bad("an unknown record member", withRecord(strings.Replace(rec, `"tool"`, `"note":1,"tool"`, 1)), ser, flags("JournalShape", "DenyUnknownFields"), "JRN-003")
	bad("an unknown compensation member", withRecord(strings.Replace(indRecordJSON(jOp(sA)), `"compensation":null`, `"compensation":`+strings.Replace(comp, `"state"`, `"note":1,"state"`, 1), 1)), ser,
		flags("JournalShape", "DenyUnknownFields", "Compensation"), "JRN-003")
	bad("a repeated journal member", strings.Replace(empty, `"records"`, `"scope":"tenant","records"`, 1), ser, flags("JournalShape", "DuplicateField"), "JRN-003")
	bad("a repeated record member", withRecord(strings.Replace(rec, `"tool"`, `"tool":"math.add","tool"`, 1)), ser, flags("JournalShape", "DuplicateField"), "JRN-003")
	bad("a journal without records", `{"format_version":2,"scope":"tenant"}`, ser, flags("JournalShape", "MissingField"), "JRN-003")
	bad("a record without a state", withRecord(strings.Replace(rec, `"state":{"state":"pending"},`, "", 1)), ser, flags("JournalShape", "MissingField"), "JRN-003")
	bad("an unknown state", withRecord(strings.Replace(rec, stPending, `{"state":"paused"}`, 1)), ser, flags("JournalShape", "UnknownVariant"), "JRN-004")
	bad("a state spelled with a capital letter", withRecord(strings.Replace(rec, stPending, `{"state":"Pending"}`, 1)), ser, flags("JournalShape", "UnknownVariant"), "JRN-004")
	bad("format_version as a string", strings.Replace(empty, `2`, `"2"`, 1), ser, flags("JournalShape", "IntegerField"), "JRN-005")
	bad("format_version 258 does not fit a byte", strings.Replace(empty, `2`, `258`, 1), ser, flags("JournalShape", "IntegerField"), "JRN-005")
	bad("format_version 1", strings.Replace(empty, `2`, `1`, 1), version, flags("Version"), "JRN-006")
	bad("format_version 3", strings.Replace(empty, `2`, `3`, 1), version, flags("Version"), "JRN-006")
	bad("format_version 1 and a scope that is not a token: the version comes first", `{"format_version":1,"scope":"Tenant","records":[]}`, version, flags("Version", "CheckOrder"), "JRN-006")
	bad("a scope that is not a token", strings.Replace(empty, `"tenant"`, `"Tenant"`, 1), badToken, flags("Scope", "Token"), "JRN-006")
	bad("a tool that is not a token", withRecord(strings.Replace(rec, `"math.add"`, `"math add"`, 1)), badToken, flags("Token"), "JRN-006")
	bad("an operation key that is not a token", withRecord(strings.Replace(rec, `"op-7"`, `""`, 1)), badToken, flags("Token"), "JRN-006")
	bad("an input fingerprint in uppercase", withRecord(strings.Replace(rec, fpA, strings.ToUpper(fpA), 1)), badFP, flags("InputFingerprint"), "JRN-006")
	bad("an input fingerprint of 63 digits", withRecord(strings.Replace(rec, fpA, fpA[:63], 1)), badFP, flags("InputFingerprint", "Boundary"), "JRN-006")
	bad("a failed state with an empty message", withRecord(strings.Replace(rec, stPending, stFail(""), 1)), "InvalidOperationFailure", flags("FailureMessage"), "JRN-006")
	bad("a failed state with a 4097-byte message", withRecord(strings.Replace(rec, stPending, stFail(strings.Repeat("m", 4097)), 1)), "OperationFailureTooLarge",
		flags("FailureMessage", "Boundary", "LargeInput"), "JRN-006")
	bad("a succeeded state with a scalar json payload", withRecord(strings.Replace(rec, stPending, stOK(jsv("3")), 1)), "InvalidJsonEnvelope", flags("PayloadEnvelope"), "JRN-006")
	bad("a succeeded state 33 levels deep", withRecord(strings.Replace(rec, stPending, stOK(jsv(arrays(32, "1"))), 1)), "JsonPayloadTooDeep", flags("PayloadDepth"), "JRN-006")
	withComp := func(state, c string) string {
		return withRecord(strings.Replace(indRecordJSON(jOp(state)), `"compensation":null`, `"compensation":`+c, 1))
	}
	bad("a compensation of a pending operation", withComp(stPending, comp), "CompensationRequiresSucceededOperation", flags("Compensation"), "JRN-006")
	bad("a compensation of a cancelled operation", withComp(stCancelled, comp), "CompensationRequiresSucceededOperation", flags("Compensation"), "JRN-006")
	bad("a compensation of a pending operation with a bad key: the operation state comes first", withComp(stPending, strings.Replace(comp, "cmp-undo-1", "undo-1", 1)),
		"CompensationRequiresSucceededOperation", flags("Compensation", "CheckOrder"), "JRN-006")
	bad("a compensation key without the cmp- prefix", withComp(sA, strings.Replace(comp, "cmp-undo-1", "undo-1", 1)), "InvalidCompensationKey", flags("Compensation", "CompensationKey"), "JRN-006")
	bad("a compensation key that is not a token", withComp(sA, strings.Replace(comp, "cmp-undo-1", "CMP-1", 1)), badToken, flags("Compensation", "CompensationKey"), "JRN-006")
	bad("a compensation input fingerprint that is not hex", withComp(sA, strings.Replace(comp, fpJSON(undoRelease), strings.Repeat("g", 64), 1)), badFP, flags("Compensation", "InputFingerprint"), "JRN-006")
	bad("a compensation grant fingerprint of 65 digits", withComp(sA, strings.Replace(comp, grantFP, grantFP+"0", 1)), "InvalidCompensationGrantFingerprint",
		flags("Compensation", "GrantFingerprint"), "JRN-006")
	bad("a compensation state with an empty failure message", withComp(sA, strings.Replace(comp, stPending, stFail(""), 1)), "InvalidOperationFailure", flags("Compensation", "FailureMessage"), "JRN-006")
	bad("an operation key used twice", withRecord(rec+","+rec), "DuplicateOperationKey", flags(), "JRN-006")
	bad("an operation key used twice, the second record with a bad fingerprint: the record comes first", withRecord(rec+","+strings.Replace(rec, fpA, "00", 1)), badFP,
		flags("CheckOrder"), "JRN-006")

	scoped := func(comment, input, scope string, exp expect, f []string, r ...string) {
		s := scope
		cs = append(cs, jLoadCase{meta: meta{comment, f, r}, input: input, scope: &s, preserve: exp})
	}
	scoped("loading for the journal's own scope", one, "tenant-a", out(one), flags("Scope"), "JRN-008")
	scoped("loading for another scope", one, "tenant-b", fail("OperationJournalScopeMismatch"), flags("Scope"), "JRN-008")
	scoped("loading for a scope that is not a token", one, "Tenant-a", fail(badToken), flags("Scope", "Token"), "JRN-008")
	scoped("loading an invalid journal for another scope: loading comes first", strings.Replace(one, `"format_version":2`, `"format_version":1`, 1), "tenant-b",
		fail(version), flags("Scope", "CheckOrder"), "JRN-008")
	return cs
}
