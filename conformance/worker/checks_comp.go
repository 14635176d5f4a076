package worker

import (
	"strings"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/impl/protocol"
)

var (
	comp           = []Need{NeedDurable, NeedCompensation}
	compEffects    = []Need{NeedDurable, NeedCompensation, NeedEffects}
	compStoreFault = append([]Need{NeedCompensation}, storeFault...)
)

// compensationLosingObservation performs op-1 in a first worker, then arms the store fault so
// that a process's first journal write succeeds and every later one fails (opening a session
// writes no journal, PRF-021), and sends the compensation of op-1 under cmp-1 to a second
// worker: its admission is persisted, its handler runs and its observation write fails. It
// returns the second worker.
func compensationLosingObservation(t *T) *Worker {
	g := durableGrant(1)
	w1 := t.session(g)
	t.expectStatus("the status", succeededRecord("op-1", "1"), w1.dispatch("op-1", `{"value":1}`))
	w1.endInput()
	t.armStoreFault(1)
	w2 := t.session(g)
	w2.send(protocol.CompensateOperationMessage{Request: w2.compensationRequest(g, "op-1", "cmp-1", t.scope(), `{"value":"u"}`)})
	return w2
}

// compensationSucceeded is the success payload of a compensation (PRF-015).
func compensationSucceeded(key, compensationKey, value string) protocol.OperationStatus {
	return protocol.Succeeded(jsonPayload(`{"compensation_key":"` + compensationKey + `","operation_key":"` + key + `","value":` + value + `}`))
}

// compRejected opens a session with the durable grant g, lets prepare run dispatches, sends
// the compensation request built by build and expects status 5 without an answer.
func compRejected(t *T, g protocol.CapabilityGrant, why string, prepare func(w *Worker), build func(w *Worker) protocol.OperationCompensationRequest) {
	w := t.session(g, textGrant(toolTextEcho))
	prepare(w)
	w.send(protocol.CompensateOperationMessage{Request: build(w)})
	w.expectExit(exitRejected, why)
}

// CompChecks returns the checks of area COMP: compensation.
func CompChecks() []*Check {
	return []*Check{
		&Check{
			ID: "CNF-COMP-01", Unreachable: unreachableAdapter, Level: conformance.Must, Requirements: []string{"WRK-050", "WRK-052", "PRF-015", "JRN-020", "AUZ-013"},
			Needs: comp,
			Title: "a granted compensation of a succeeded operation answers compensation_result succeeded",
			Run: func(t *T) {
				g := durableGrant(1)
				w := t.session(g)
				w.dispatch("op-1", `{"value":1}`)
				st := w.compensate(w.compensationRequest(g, "op-1", "cmp-1", t.scope(), `{"value":{"undo":true}}`))
				t.expectStatus("the compensation status", compensationSucceeded("op-1", "cmp-1", `{"undo":true}`), st)
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-COMP-02", Unreachable: unreachableAdapter, Level: conformance.Must, Requirements: []string{"PRF-015", "PRF-018", "PRF-014"},
			Needs: compEffects,
			Title: "a compensation appends one canonical compensation line to the effect log",
			Run: func(t *T) {
				g := durableGrant(1)
				w := t.session(g)
				w.dispatch("op-1", `{"value":1}`)
				w.compensate(w.compensationRequest(g, "op-1", "cmp-1", t.scope(), `{"value":{"z":1,"a":2}}`))
				t.expectEffects("a dispatch and its compensation", effectLine("op-1", "1"), compensationLine("op-1", "cmp-1", `{"a":2,"z":1}`))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-COMP-03", Level: conformance.Must, Requirements: []string{"AUZ-013", "MAN-004"},
			Needs: comp,
			Title: "a compensation under a grant with max_compensations 0 is refused (status 5)",
			Run: func(t *T) {
				g := durableGrant(0)
				compRejected(t, g, "a compensation that the grant does not allow",
					func(w *Worker) { w.dispatch("op-1", `{"value":1}`) },
					func(w *Worker) protocol.OperationCompensationRequest {
						return w.compensationRequest(g, "op-1", "cmp-1", t.scope(), `{}`)
					})
			},
		},
		&Check{
			ID: "CNF-COMP-04", Level: conformance.Must, Requirements: []string{"AUZ-013", "AUZ-014"},
			Needs: comp,
			Title: "a compensation beyond max_compensations is refused (status 5)",
			Run: func(t *T) {
				g := durableGrant(1)
				compRejected(t, g, "a second compensation under max_compensations 1",
					func(w *Worker) {
						w.dispatch("op-1", `{"value":1}`)
						w.dispatch("op-2", `{"value":2}`)
						w.compensate(w.compensationRequest(g, "op-1", "cmp-1", t.scope(), `{}`))
					},
					func(w *Worker) protocol.OperationCompensationRequest {
						return w.compensationRequest(g, "op-2", "cmp-2", t.scope(), `{}`)
					})
			},
		},
		&Check{
			ID: "CNF-COMP-05", Level: conformance.Must, Requirements: []string{"AUZ-013", "FP-001"},
			Needs: comp,
			Title: "a compensation whose grant fingerprint does not match the live grant is refused (status 5)",
			Run: func(t *T) {
				g := durableGrant(1)
				other := g
				other.MaxCalls++
				compRejected(t, g, "a compensation fingerprinted for a grant with one more call",
					func(w *Worker) { w.dispatch("op-1", `{"value":1}`) },
					func(w *Worker) protocol.OperationCompensationRequest {
						return w.compensationRequest(other, "op-1", "cmp-1", t.scope(), `{}`)
					})
			},
		},
		&Check{
			ID: "CNF-COMP-06", Level: conformance.Must, Requirements: []string{"JRN-020", "WRK-050"},
			Needs: comp,
			Title: "a compensation of a failed operation is refused (status 5)",
			Run: func(t *T) {
				g := durableGrant(1)
				compRejected(t, g, "a compensation of an operation that failed",
					func(w *Worker) { w.dispatch("op-1", `{"mode":"fail"}`) },
					func(w *Worker) protocol.OperationCompensationRequest {
						return w.compensationRequest(g, "op-1", "cmp-1", t.scope(), `{}`)
					})
			},
		},
		&Check{
			ID: "CNF-COMP-07", Level: conformance.Must, Requirements: []string{"JRN-020", "WRK-050"},
			Needs: comp,
			Title: "a compensation of an operation the journal does not hold is refused (status 5)",
			Run: func(t *T) {
				g := durableGrant(1)
				compRejected(t, g, "a compensation of an unknown operation",
					func(*Worker) {},
					func(w *Worker) protocol.OperationCompensationRequest {
						return w.compensationRequest(g, "op-never", "cmp-1", t.scope(), `{}`)
					})
			},
		},
		&Check{
			ID: "CNF-COMP-08", Level: conformance.Must, Requirements: []string{"JRN-021", "JRN-020"},
			Needs: comp,
			Title: "a second compensation key for one operation is refused (status 5)",
			Run: func(t *T) {
				g := durableGrant(2)
				compRejected(t, g, "compensation key cmp-2 for an operation already compensated by cmp-1",
					func(w *Worker) {
						w.dispatch("op-1", `{"value":1}`)
						w.compensate(w.compensationRequest(g, "op-1", "cmp-1", t.scope(), `{}`))
					},
					func(w *Worker) protocol.OperationCompensationRequest {
						return w.compensationRequest(g, "op-1", "cmp-2", t.scope(), `{}`)
					})
			},
		},
		&Check{
			ID: "CNF-COMP-09", Unreachable: unreachableAcceptance, Level: conformance.Must, Requirements: []string{"WRK-051", "AUZ-014", "JRN-020"},
			Needs: comp,
			Title: "an exact duplicate compensation is answered from the journal and spends no budget",
			Run: func(t *T) {
				g := durableGrant(1)
				w := t.session(g)
				w.dispatch("op-1", `{"value":1}`)
				want := compensationSucceeded("op-1", "cmp-1", `"u"`)
				t.expectStatus("the compensation status", want, w.compensate(w.compensationRequest(g, "op-1", "cmp-1", t.scope(), `{"value":"u"}`)))
				t.expectStatus("the duplicate's status", want, w.compensate(w.compensationRequest(g, "op-1", "cmp-1", t.scope(), `{"value":"u"}`)))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-COMP-10", Level: conformance.Must, Requirements: []string{"WRK-051", "PRF-014", "PRF-015"},
			Needs: compEffects,
			Title: "an exact duplicate compensation never runs the compensation handler again",
			Run: func(t *T) {
				g := durableGrant(1)
				w := t.session(g)
				w.dispatch("op-1", `{"value":1}`)
				w.compensate(w.compensationRequest(g, "op-1", "cmp-1", t.scope(), `{"value":"u"}`))
				w.compensate(w.compensationRequest(g, "op-1", "cmp-1", t.scope(), `{"value":"u"}`))
				t.expectEffects("a compensation and its duplicate", effectLine("op-1", "1"), compensationLine("op-1", "cmp-1", `"u"`))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-COMP-11", Level: conformance.Must, Requirements: []string{"JRN-020", "WRK-050", "JRN-008"},
			Needs: comp,
			Title: "a compensation for another tenant scope than the journal's is refused (status 5)",
			Run: func(t *T) {
				g := durableGrant(1)
				compRejected(t, g, "a compensation for tenant scope other-tenant",
					func(w *Worker) { w.dispatch("op-1", `{"value":1}`) },
					func(w *Worker) protocol.OperationCompensationRequest {
						return w.compensationRequest(g, "op-1", "cmp-1", "other-tenant", `{}`)
					})
			},
		},
		&Check{
			ID: "CNF-COMP-12", Unreachable: unreachableAdapter, Level: conformance.Must, Requirements: []string{"PRF-015", "WRK-052"},
			Needs: comp,
			Title: "a compensation in mode fail answers failed with the absence message",
			Run: func(t *T) {
				g := durableGrant(1)
				w := t.session(g)
				w.dispatch("op-1", `{"value":1}`)
				t.expectStatus("the compensation status", protocol.Failed(absenceMessage),
					w.compensate(w.compensationRequest(g, "op-1", "cmp-1", t.scope(), `{"mode":"fail"}`)))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-COMP-13", Level: conformance.Must, Requirements: []string{"PRF-015", "WRK-052", "WRK-044"},
			Needs: comp,
			Title: "a compensation handler error is never answered (status 6)",
			Run: func(t *T) {
				g := durableGrant(1)
				w := t.session(g)
				w.dispatch("op-1", `{"value":1}`)
				w.send(protocol.CompensateOperationMessage{Request: w.compensationRequest(g, "op-1", "cmp-1", t.scope(), `{"mode":"error"}`)})
				w.expectExit(exitAdapter, "a compensation in mode error")
			},
		},
		&Check{
			ID: "CNF-COMP-14", Level: conformance.Must, Requirements: []string{"JRN-020", "FP-001"},
			Needs: comp,
			Title: "reusing a compensation key with different input is refused (status 5)",
			Run: func(t *T) {
				g := durableGrant(2)
				compRejected(t, g, "compensation key cmp-1 again with a different input",
					func(w *Worker) {
						w.dispatch("op-1", `{"value":1}`)
						w.compensate(w.compensationRequest(g, "op-1", "cmp-1", t.scope(), `{"value":1}`))
					},
					func(w *Worker) protocol.OperationCompensationRequest {
						return w.compensationRequest(g, "op-1", "cmp-1", t.scope(), `{"value":2}`)
					})
			},
		},
		&Check{
			ID: "CNF-COMP-15", Unreachable: unreachableAcceptance, Level: conformance.Must, Requirements: []string{"WRK-052", "WRK-051", "WRK-073"},
			Needs: []Need{NeedDurable, NeedCompensation, NeedJournal},
			Title: "after a restart, an exact duplicate compensation is answered from the journal",
			Run: func(t *T) {
				g := durableGrant(1)
				w1 := t.session(g)
				w1.dispatch("op-1", `{"value":1}`)
				want := compensationSucceeded("op-1", "cmp-1", `"u"`)
				t.expectStatus("the compensation status", want, w1.compensate(w1.compensationRequest(g, "op-1", "cmp-1", t.scope(), `{"value":"u"}`)))
				w1.endInput()
				w2 := t.session(g)
				t.expectStatus("the restarted worker's answer", want, w2.compensate(w2.compensationRequest(g, "op-1", "cmp-1", t.scope(), `{"value":"u"}`)))
				w2.endInput()
			},
		},
		&Check{
			ID: "CNF-COMP-16", Level: conformance.Must, Requirements: []string{"AUZ-013", "AUZ-010", "WRK-050", "WRK-091"},
			Needs: compEffects,
			Title: "a compensation input one byte over max_input_bytes is refused (status 5) before any effect",
			Run: func(t *T) {
				g := durableGrant(1)
				g.MaxInputBytes = 12 // {"value":1} has 11 bytes, {"value":"x"} has 13
				w := t.session(g)
				w.dispatch("op-1", `{"value":1}`)
				w.send(protocol.CompensateOperationMessage{Request: w.compensationRequest(g, "op-1", "cmp-1", t.scope(), `{"value":"x"}`)})
				w.expectExit(exitRejected, "a 13-byte compensation input under max_input_bytes 12")
				t.expectEffects("a dispatch and a compensation refused by the input limit", effectLine("op-1", "1"))
			},
		},
		&Check{
			ID: "CNF-COMP-17", Level: conformance.Must, Requirements: []string{"MSG-004", "MSG-018"},
			Needs: comp,
			Title: "a compensation key without the cmp- prefix is refused (status 4: it does not decode)",
			Run: func(t *T) {
				g := durableGrant(1)
				w := t.session(g)
				w.dispatch("op-1", `{"value":1}`)
				req := w.compensationRequest(g, "op-1", "cmp-undo-1", t.scope(), `{"value":1}`)
				w.writeLine(w.forgeReplaced(protocol.CompensateOperationMessage{Request: req}, `"cmp-undo-1"`, `"undo-1"`))
				w.expectExit(exitTransport, "a compensation key undo-1")
			},
		},
		&Check{
			ID: "CNF-COMP-18", Level: conformance.Must, Requirements: []string{"WRK-052", "WRK-071", "PRF-021"},
			Needs: compStoreFault,
			Title: "a compensation whose admission cannot be persisted runs no handler and is never answered (status 7)",
			Run: func(t *T) {
				g := durableGrant(1)
				w1 := t.session(g)
				w1.dispatch("op-1", `{"value":1}`)
				t.armStoreFault(-1)
				w1.send(protocol.CompensateOperationMessage{Request: w1.compensationRequest(g, "op-1", "cmp-1", t.scope(), `{"value":"u"}`)})
				w1.expectExit(exitPersistence, "a compensation while every journal write fails")
				t.expectEffects("a compensation whose admission was never persisted", effectLine("op-1", "1"))
				t.disarmStoreFault()
				w2 := t.session(g)
				want := compensationSucceeded("op-1", "cmp-1", `"u"`)
				t.expectStatus("the compensation status once writes succeed", want, w2.compensate(w2.compensationRequest(g, "op-1", "cmp-1", t.scope(), `{"value":"u"}`)))
				w2.endInput()
				t.expectEffects("the compensation performed once writes succeed", effectLine("op-1", "1"), compensationLine("op-1", "cmp-1", `"u"`))
			},
		},
		&Check{
			ID: "CNF-COMP-19", Level: conformance.Must, Requirements: []string{"WRK-052", "WRK-046", "WRK-071", "PRF-021", "WRK-096"},
			Needs: compStoreFault,
			Title: "a compensation whose observation cannot be persisted is never answered (status 7); its inverse effect happened once",
			Run: func(t *T) {
				w2 := compensationLosingObservation(t)
				w2.expectExit(exitPersistence, "a compensation whose observation write fails after its admission was persisted")
				t.expectEffects("a compensation admitted and performed whose observation was never persisted",
					effectLine("op-1", "1"), compensationLine("op-1", "cmp-1", `"u"`))
				if diag := w2.stderr.Excerpt(); !strings.Contains(diag, "IndeterminateCompensation") {
					t.shouldf("a diagnostic naming IndeterminateCompensation (WRK-052)", "standard error: "+orNone([]string{strings.TrimSpace(diag)}))
				}
			},
		},
		&Check{
			ID: "CNF-COMP-20", Level: conformance.Must, Requirements: []string{"WRK-071", "WRK-020", "WRK-091", "PRF-021"},
			Needs: compStoreFault,
			Title: "a failed observation write poisons the session: a frame sent after the compensation is not answered either",
			Run: func(t *T) {
				w2 := compensationLosingObservation(t)
				w2.sendInvoke(toolTextEcho, text("after the failed write"))
				w2.expectExit(exitPersistence, "a compensation whose observation write failed, then an echo")
			},
		},
		&Check{
			ID: "CNF-COMP-21", Level: conformance.Must, Requirements: []string{"WRK-051", "WRK-052", "JRN-021", "WRK-073", "PRF-021"},
			Needs: compStoreFault,
			Title: "after a compensation whose observation was lost, a restarted worker neither runs it again nor accepts it under a new key",
			Run: func(t *T) {
				g := durableGrant(1)
				w2 := compensationLosingObservation(t)
				w2.expectExit(exitPersistence, "a compensation whose observation write fails after its admission was persisted")
				t.disarmStoreFault()
				w3 := t.session(g)
				w3.send(protocol.CompensateOperationMessage{Request: w3.compensationRequest(g, "op-1", "cmp-1", t.scope(), `{"value":"u"}`)})
				w3.expectExit(exitAdapter, "the same compensation again, whose record is still pending")
				w4 := t.session(g)
				w4.send(protocol.CompensateOperationMessage{Request: w4.compensationRequest(g, "op-1", "cmp-2", t.scope(), `{"value":"u"}`)})
				w4.expectExit(exitRejected, "a compensation of op-1 under a new key while cmp-1 is pending")
				t.expectEffects("a compensation performed once, then a duplicate and a new key refused",
					effectLine("op-1", "1"), compensationLine("op-1", "cmp-1", `"u"`))
			},
		},
	}
}
