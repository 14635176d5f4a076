package worker

import (
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/impl/protocol"
)

// durableSession opens a session that grants the durable tool (baseline session).
func (t *T) durableSession(compensations uint32) *Worker {
	return t.session(durableGrant(compensations), textGrant(toolTextEcho))
}

var (
	storeFault     = []Need{NeedDurable, NeedJournal, NeedEffects, NeedStoreFault}
	durable        = []Need{NeedDurable}
	durableEffects = []Need{NeedDurable, NeedEffects}
	durableJournal = []Need{NeedDurable, NeedJournal}
	durableBoth    = []Need{NeedDurable, NeedJournal, NeedEffects}
)

// durableNumbers is CNF-DURABLE-26: a durable dispatch in mode succeed whose input holds
// Preserve-only numbers, after an ordinary one that shows the worker performs dispatches. A
// worker may refuse it before the effect (no effect line, no answer); once the effect is
// logged, the dispatch, a reconciliation in a fresh session and an exact duplicate in another
// one must all be answered with the same status.
func durableNumbers(t *T) {
	input := `{"mode":"succeed","value":` + preserveOnlyInput + `}`
	want := succeededRecord("op-num", preserveOnlyCanonical)
	w1 := t.durableSession(0)
	t.expectStatus("the ordinary dispatch's status", succeededRecord("op-0", "0.5"), w1.dispatch("op-0", `{"value":0.5}`))
	ordinary := effectLine("op-0", "0.5")
	req := w1.sendDispatch(toolDurable, "op-num", jsonPayload(input))
	ev := w1.next(operationResultFor(req) + ", or a refusal before the effect")
	if ev.err != nil {
		if effects := t.effectLines(); len(effects) != 1 || effects[0] != ordinary {
			t.Failf("an answer for the effect the dispatch performed",
				"the output ended after the effect, which can never be reported now ("+w1.describeEnd(ev.err)+"):\n  "+orNone(effects))
		}
		t.Logf("the worker refused the dispatch before its effect (%s)", w1.describeEnd(ev.err))
		return
	}
	t.expectStatus("the status", want, w1.operationStatus(req, w1.openAnswer(operationResultFor(req), ev.line)))
	w1.endInput()
	w2 := t.durableSession(0)
	t.expectStatus("the reconciled status in a fresh session", want, w2.reconcile("op-num"))
	w2.endInput()
	w3 := t.durableSession(0)
	t.expectStatus("the exact duplicate's status in another session", want, w3.dispatch("op-num", input))
	w3.endInput()
	t.expectEffects("two dispatches, a reconciliation and a duplicate", ordinary, effectLine("op-num", preserveOnlyCanonical))
}

// DurableChecks returns the checks of area DURABLE: durable dispatch, the journal and reconciliation.
func DurableChecks() []*Check {
	return []*Check{
		&Check{
			ID: "CNF-DURABLE-01", Unreachable: unreachableAdapter, Level: conformance.Must, Requirements: []string{"WRK-040", "WRK-047", "PRF-008", "JRN-013"},
			Needs: durable,
			Title: "a first dispatch runs the adapter and answers operation_result succeeded",
			Run: func(t *T) {
				w := t.durableSession(0)
				t.expectStatus("the status", succeededRecord("op-1", `{"n":1}`), w.dispatch("op-1", `{"value":{"n":1}}`))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-DURABLE-02", Unreachable: unreachableAdapter, Level: conformance.Must, Requirements: []string{"PRF-014", "PRF-018", "PRF-019", "PRF-002"},
			Needs: durableEffects,
			Title: "a dispatch performs exactly one effect, logged as one canonical effect line",
			Run: func(t *T) {
				w := t.durableSession(0)
				w.dispatch("op-1", `{"value":{"b":[1,2],"a":"x"},"mode":"succeed","ignored":true}`)
				t.expectEffects("one dispatch", effectLine("op-1", `{"a":"x","b":[1,2]}`))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-DURABLE-03", Unreachable: unreachableAcceptance, Level: conformance.Must, Requirements: []string{"WRK-041", "JRN-013", "AUZ-005"},
			Needs: durable,
			Title: "an exact duplicate dispatch is answered from the journal under its new request id",
			Run: func(t *T) {
				w := t.durableSession(0)
				first := w.dispatch("op-1", `{"value":7}`)
				t.expectStatus("the status", succeededRecord("op-1", "7"), first)
				t.expectStatus("the duplicate's status", first, w.dispatch("op-1", `{"value":7}`))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-DURABLE-04", Level: conformance.Must, Requirements: []string{"WRK-041", "PRF-014", "JRN-013"},
			Needs: durableEffects,
			Title: "an exact duplicate dispatch never runs the adapter again (one effect line)",
			Run: func(t *T) {
				w := t.durableSession(0)
				w.dispatch("op-1", `{"value":7}`)
				w.dispatch("op-1", `{"value":7}`)
				w.dispatch("op-1", `{"value":7}`)
				t.expectEffects("three identical dispatches", effectLine("op-1", "7"))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-DURABLE-05", Level: conformance.Must, Requirements: []string{"JRN-013", "WRK-040"},
			Needs: durable,
			Title: "a dispatch that reuses an operation key with different input is refused (status 5)",
			Run: exits(exitRejected, "operation key op-1 again with a different input", func(t *T) *Worker { return t.durableSession(0) }, func(w *Worker) {
				w.dispatch("op-1", `{"value":1}`)
				w.sendDispatch(toolDurable, "op-1", jsonPayload(`{"value":2}`))
			}),
		},
		&Check{
			ID: "CNF-DURABLE-06", Unreachable: unreachableAdapter, Level: conformance.Must, Requirements: []string{"PRF-009", "PRF-013", "JRN-018", "WRK-060", "WRK-041"},
			Needs: durable,
			Title: "mode running answers running; reconciliation then reports succeeded, and so does a duplicate",
			Run: func(t *T) {
				w := t.durableSession(0)
				t.expectStatus("the status", protocol.Running(), w.dispatch("op-1", `{"value":"r","mode":"running"}`))
				t.expectStatus("the reconciled status", succeededRecord("op-1", `"r"`), w.reconcile("op-1"))
				t.expectStatus("the duplicate's status", succeededRecord("op-1", `"r"`), w.dispatch("op-1", `{"value":"r","mode":"running"}`))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-DURABLE-07", Unreachable: unreachableAdapter, Level: conformance.Must, Requirements: []string{"PRF-010", "WRK-047"},
			Needs: durable,
			Title: "mode fail answers failed with the absence message",
			Run: func(t *T) {
				w := t.durableSession(0)
				t.expectStatus("the status", protocol.Failed(absenceMessage), w.dispatch("op-1", `{"mode":"fail"}`))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-DURABLE-08", Level: conformance.Must, Requirements: []string{"PRF-012", "WRK-044", "WRK-091"},
			Needs: durable,
			Title: "an adapter error in a dispatch is never answered (status 6)",
			Run: exits(exitAdapter, "a dispatch in mode error", func(t *T) *Worker { return t.durableSession(0) }, func(w *Worker) {
				w.sendDispatch(toolDurable, "op-1", jsonPayload(`{"mode":"error"}`))
			}),
		},
		&Check{
			ID: "CNF-DURABLE-09", Level: conformance.Must, Requirements: []string{"PRF-011", "WRK-043", "WRK-046"},
			Needs: durable,
			Title: "an indeterminate dispatch is never reported as a status (status 6)",
			Run: exits(exitAdapter, "a dispatch in mode indeterminate", func(t *T) *Worker { return t.durableSession(0) }, func(w *Worker) {
				w.sendDispatch(toolDurable, "op-1", jsonPayload(`{"value":1,"mode":"indeterminate"}`))
			}),
		},
		&Check{
			ID: "CNF-DURABLE-10", Level: conformance.Must, Requirements: []string{"PRF-007", "WRK-044"},
			Needs: durable,
			Title: "a dispatch with an unknown mode fails with InvalidJsonInput (status 6)",
			Run: exits(exitAdapter, `a dispatch in mode "maybe"`, func(t *T) *Worker { return t.durableSession(0) }, func(w *Worker) {
				w.sendDispatch(toolDurable, "op-1", jsonPayload(`{"mode":"maybe"}`))
			}),
		},
		&Check{
			ID: "CNF-DURABLE-11", Level: conformance.Must, Requirements: []string{"PRF-007", "WRK-044"},
			Needs: durableEffects,
			Title: "a dispatch whose input is not an object fails and performs no effect",
			Run: func(t *T) {
				w := t.durableSession(0)
				w.sendDispatch(toolDurable, "op-1", jsonPayload(`[1,2]`))
				w.expectExit(exitAdapter, "a dispatch whose input is an array")
				t.expectEffects("a refused input")
			},
		},
		&Check{
			ID: "CNF-DURABLE-12", Level: conformance.Must, Requirements: []string{"WRK-060", "JRN-017"},
			Needs: durable,
			Title: "reconciling an operation key the journal does not hold is refused (status 5)",
			Run: exits(exitRejected, "a reconcile_operation for an unknown key", func(t *T) *Worker { return t.durableSession(0) }, func(w *Worker) {
				w.sendReconcile(toolDurable, "op-never")
			}),
		},
		&Check{
			ID: "CNF-DURABLE-13", Level: conformance.Must, Requirements: []string{"WRK-061"},
			Needs: durable,
			Title: "a tool is reconciled at most 16 times per session: the 17th is refused (status 5)",
			Run: exits(exitRejected, "a 17th reconciliation of conf.durable.record", func(t *T) *Worker { return t.durableSession(0) }, func(w *Worker) {
				w.dispatch("op-1", `{"value":1}`)
				for range 16 {
					w.reconcile("op-1")
				}
				w.sendReconcile(toolDurable, "op-1")
			}),
		},
		&Check{
			ID: "CNF-DURABLE-14", Unreachable: unreachableAcceptance, Level: conformance.Must, Requirements: []string{"WRK-073", "WRK-094", "JRN-013", "WRK-081"},
			Needs: durableJournal,
			Title: "after a restart, a fresh session answers an exact duplicate from the stored journal",
			Run: func(t *T) {
				w1 := t.durableSession(0)
				want := succeededRecord("op-1", `{"k":"v"}`)
				t.expectStatus("the status", want, w1.dispatch("op-1", `{"value":{"k":"v"}}`))
				w1.endInput()
				w2 := t.durableSession(0)
				t.expectStatus("the restarted worker's answer", want, w2.dispatch("op-1", `{"value":{"k":"v"}}`))
				w2.endInput()
			},
		},
		&Check{
			ID: "CNF-DURABLE-15", Level: conformance.Must, Requirements: []string{"WRK-041", "PRF-014", "PRF-020", "WRK-073"},
			Needs: durableBoth,
			Title: "after a restart, an exact duplicate performs no second effect",
			Run: func(t *T) {
				w1 := t.durableSession(0)
				w1.dispatch("op-1", `{"value":1}`)
				w1.endInput()
				w2 := t.durableSession(0)
				w2.dispatch("op-1", `{"value":1}`)
				w2.endInput()
				t.expectEffects("a dispatch and its duplicate in a restarted worker", effectLine("op-1", "1"))
			},
		},
		&Check{
			ID: "CNF-DURABLE-16", Level: conformance.Must, Requirements: []string{"WRK-041", "WRK-043", "WRK-042", "PRF-011", "PRF-013", "WRK-073"},
			Needs: durableBoth,
			Title: "pending is never reported: indeterminate, restart, duplicate refused, reconcile succeeded",
			Run: func(t *T) {
				w1 := t.durableSession(0)
				w1.sendDispatch(toolDurable, "op-1", jsonPayload(`{"value":5,"mode":"indeterminate"}`))
				w1.expectExit(exitAdapter, "a dispatch in mode indeterminate")
				t.expectEffects("an indeterminate dispatch (the effect happened)", effectLine("op-1", "5"))
				w2 := t.durableSession(0)
				w2.sendDispatch(toolDurable, "op-1", jsonPayload(`{"value":5,"mode":"indeterminate"}`))
				w2.expectExit(exitAdapter, "an exact duplicate of a dispatch whose record is still pending")
				w3 := t.durableSession(0)
				t.expectStatus("the reconciled status", succeededRecord("op-1", "5"), w3.reconcile("op-1"))
				t.expectStatus("the duplicate after reconciliation", succeededRecord("op-1", "5"), w3.dispatch("op-1", `{"value":5,"mode":"indeterminate"}`))
				w3.endInput()
				t.expectEffects("recovery by reconciliation", effectLine("op-1", "5"))
			},
		},
		&Check{
			ID: "CNF-DURABLE-17", Level: conformance.Must, Requirements: []string{"WRK-044", "WRK-041", "PRF-012", "PRF-013"},
			Needs: durableJournal,
			Title: "an adapter error leaves the record pending; reconciliation after a restart reports failed",
			Run: func(t *T) {
				w1 := t.durableSession(0)
				w1.sendDispatch(toolDurable, "op-1", jsonPayload(`{"mode":"error"}`))
				w1.expectExit(exitAdapter, "a dispatch in mode error")
				w2 := t.durableSession(0)
				w2.sendDispatch(toolDurable, "op-1", jsonPayload(`{"mode":"error"}`))
				w2.expectExit(exitAdapter, "an exact duplicate of a dispatch whose record is still pending")
				w3 := t.durableSession(0)
				t.expectStatus("the reconciled status", protocol.Failed(absenceMessage), w3.reconcile("op-1"))
				w3.endInput()
			},
		},
		&Check{
			ID: "CNF-DURABLE-18", Level: conformance.Must, Requirements: []string{"WRK-015", "WRK-094"},
			Needs: durableJournal,
			Title: "a session id already admitted for the journal is refused after a restart (status 5)",
			Run: func(t *T) {
				w1 := t.durableSession(0)
				w1.endInput()
				w2 := t.launchAs(w1.SessionID)
				w2.bootstrap()
				w2.open(durableGrant(0), textGrant(toolTextEcho))
				w2.expectExit(exitRejected, "a fresh key but the session id of the previous worker")
			},
		},
		&Check{
			ID: "CNF-DURABLE-19", Level: conformance.Must, Requirements: []string{"WRK-083", "WRK-042", "WRK-015", "STO-028", "WRK-092"},
			Needs: durableBoth,
			Title: "a superseded worker cannot persist: its dispatch fails (status 7) before any effect",
			Run: func(t *T) {
				older := t.durableSession(0)
				// The older worker is admitted once it has answered.
				t.expectStatus("the older worker's status", succeededRecord("op-a", "1"), older.dispatch("op-a", `{"value":1}`))
				newer := t.durableSession(0)
				t.expectStatus("the newer worker's status", succeededRecord("op-b", "2"), newer.dispatch("op-b", `{"value":2}`))
				older.sendDispatch(toolDurable, "op-c", jsonPayload(`{"value":3}`))
				older.expectExit(exitPersistence, "a dispatch by a worker whose fence was superseded")
				newer.endInput()
				t.expectEffects("two admitted dispatches and one refused by the fence", effectLine("op-a", "1"), effectLine("op-b", "2"))
			},
		},
		&Check{
			ID: "CNF-DURABLE-20", Level: conformance.Must, Requirements: []string{"JRN-013", "WRK-073"},
			Needs: durableJournal,
			Title: "after a restart, reusing an operation key with different input is refused (status 5)",
			Run: func(t *T) {
				w1 := t.durableSession(0)
				w1.dispatch("op-1", `{"value":1}`)
				w1.endInput()
				w2 := t.durableSession(0)
				w2.sendDispatch(toolDurable, "op-1", jsonPayload(`{"value":2}`))
				w2.expectExit(exitRejected, "operation key op-1 with a different input in a restarted worker")
			},
		},
		&Check{
			ID: "CNF-DURABLE-21", Unreachable: unreachableAcceptance, Level: conformance.Must, Requirements: []string{"WRK-018", "WRK-061", "WRK-073"},
			Needs: durableJournal,
			Title: "the reconciliation budget belongs to the session: a fresh session starts at zero",
			Run: func(t *T) {
				w1 := t.durableSession(0)
				w1.dispatch("op-1", `{"value":1}`)
				for range 16 {
					w1.reconcile("op-1")
				}
				w1.endInput()
				w2 := t.durableSession(0)
				t.expectStatus("the reconciled status", succeededRecord("op-1", "1"), w2.reconcile("op-1"))
				w2.endInput()
			},
		},
		&Check{
			ID: "CNF-DURABLE-22", Level: conformance.Must, Requirements: []string{"PRF-010", "PRF-014"},
			Needs: durableEffects,
			Title: "modes fail and error perform no effect; succeed and running perform one each",
			Run: func(t *T) {
				w := t.durableSession(0)
				w.dispatch("op-1", `{"value":1,"mode":"fail"}`)
				w.dispatch("op-2", `{"value":2,"mode":"running"}`)
				w.dispatch("op-3", `{"value":3}`)
				w.sendDispatch(toolDurable, "op-4", jsonPayload(`{"value":4,"mode":"error"}`))
				w.expectExit(exitAdapter, "a dispatch in mode error")
				t.expectEffects("dispatches in modes fail, running, succeed and error", effectLine("op-2", "2"), effectLine("op-3", "3"))
			},
		},
		&Check{
			ID: "CNF-DURABLE-23", Level: conformance.Must, Requirements: []string{"WRK-045", "JRN-016", "WRK-072", "AUZ-022"},
			Needs: durableEffects,
			Title: "a dispatch status the grant rejects is never answered (status 6), though the effect happened",
			Run: func(t *T) {
				g := durableGrant(0)
				g.MaxOutputBytes = 20 // the success payload {"operation_key":"op-1","value":"x"} has 34 bytes
				w := t.session(g)
				w.sendDispatch(toolDurable, "op-1", jsonPayload(`{"value":"x"}`))
				w.expectExit(exitAdapter, "a succeeded status whose payload exceeds max_output_bytes 20")
				t.expectEffects("a dispatch whose status the grant rejects", effectLine("op-1", `"x"`))
			},
		},
		&Check{
			ID: "CNF-DURABLE-24", Level: conformance.Must, Requirements: []string{"WRK-062", "WRK-060", "JRN-017"},
			Needs: durable,
			Title: "a reconciled status the grant rejects is never answered (status 6)",
			Run: func(t *T) {
				g := durableGrant(0)
				g.MaxOutputBytes = 20
				w := t.session(g)
				t.expectStatus("the status", protocol.Running(), w.dispatch("op-1", `{"value":"x","mode":"running"}`))
				w.sendReconcile(toolDurable, "op-1")
				w.expectExit(exitAdapter, "a reconciled succeeded status whose payload exceeds max_output_bytes 20")
			},
		},
		&Check{
			ID: "CNF-DURABLE-25", Unreachable: unreachableAdapter, Level: conformance.Must, Requirements: []string{"PRF-020", "PRF-018", "PRF-002"},
			Needs: durableEffects,
			Title: "at start a torn final effect-log line is cut off, and a malformed line makes the worker refuse to start (status 7)",
			Run: func(t *T) {
				w1 := t.durableSession(0)
				w1.dispatch("op-1", `{"value":1}`)
				w1.endInput()
				// A write that was cut short by a crash: the final line has no line feed.
				t.appendEffectLog(`{"kind":"effect","tool":"conf.durable.rec`)
				w2 := t.durableSession(0)
				w2.dispatch("op-2", `{"value":2}`)
				w2.endInput()
				t.expectEffects("a dispatch by a worker started on a log with a torn final line",
					effectLine("op-1", "1"), effectLine("op-2", "2"))
				// A complete line that is not an effect line.
				t.appendEffectLog(`{"kind":"other","tool":"conf.durable.record","operation_key":"op-3","value":3}` + "\n")
				w3 := t.launch()
				w3.bootstrap()
				w3.closeInput()
				w3.expectExit(exitPersistence, "a start on an effect log holding a malformed line")
			},
		},
		&Check{
			ID: "CNF-DURABLE-26", Level: conformance.Must, Requirements: []string{"WRK-048", "ENC-054", "WRK-041", "WRK-060"},
			Needs: durableBoth,
			Title: "an admitted dispatch holding non-portable numbers is answered, reconciled in a fresh session and answered again as a duplicate",
			Run:   durableNumbers,
		},
		&Check{
			ID: "CNF-DURABLE-27", Level: conformance.Must, Requirements: []string{"WRK-049", "WRK-041", "JRN-013", "WRK-096"},
			Needs: durableJournal,
			Title: "an exact duplicate is checked against the live grant: a smaller max_output_bytes or another format refuses it",
			Run: func(t *T) {
				w1 := t.durableSession(0)
				want := succeededRecord("op-1", `"a value of some length"`)
				t.expectStatus("the status", want, w1.dispatch("op-1", `{"value":"a value of some length"}`))
				w1.endInput()
				small := durableGrant(0)
				small.MaxOutputBytes = 16
				w2 := t.session(small)
				w2.sendDispatch(toolDurable, "op-1", jsonPayload(`{"value":"a value of some length"}`))
				w2.expectExit(exitRejected, "an exact duplicate whose stored output exceeds max_output_bytes 16")
				w3 := t.session(textGrant(toolDurable))
				w3.sendDispatch(toolDurable, "op-1", text(`{"value":"a value of some length"}`))
				w3.expectRefused("a dispatch of op-1 under a text grant, after it was recorded under a json grant")
			},
		},
		&Check{
			ID: "CNF-DURABLE-28", Level: conformance.Must, Requirements: []string{"WRK-042", "WRK-071", "PRF-021", "WRK-096"},
			Needs: storeFault,
			Title: "a dispatch whose admission cannot be persisted performs no effect and is never answered (status 7)",
			Run: func(t *T) {
				t.armStoreFault(-1)
				w1 := t.durableSession(0)
				w1.sendDispatch(toolDurable, "op-1", jsonPayload(`{"value":1}`))
				w1.expectExit(exitPersistence, "a dispatch while every journal write fails")
				t.expectEffects("a dispatch whose admission was never persisted")
				t.disarmStoreFault()
				w2 := t.durableSession(0)
				t.expectStatus("the status of the same dispatch once writes succeed", succeededRecord("op-1", "1"), w2.dispatch("op-1", `{"value":1}`))
				w2.endInput()
				t.expectEffects("the dispatch performed once writes succeed", effectLine("op-1", "1"))
			},
		},
		&Check{
			ID: "CNF-DURABLE-29", Level: conformance.Must, Requirements: []string{"WRK-046", "WRK-071", "WRK-041", "PRF-021"},
			Needs: storeFault,
			Title: "a dispatch whose observation cannot be persisted is never answered; a fresh session reconciles it",
			Run: func(t *T) {
				t.armStoreFault(1)
				w1 := t.durableSession(0)
				w1.sendDispatch(toolDurable, "op-1", jsonPayload(`{"value":1}`))
				w1.expectExit(exitPersistence, "a dispatch whose observation write fails after its admission was persisted")
				t.expectEffects("the effect of the admitted dispatch", effectLine("op-1", "1"))
				t.disarmStoreFault()
				w2 := t.durableSession(0)
				t.expectStatus("the reconciled status", succeededRecord("op-1", "1"), w2.reconcile("op-1"))
				w2.endInput()
			},
		},
		&Check{
			ID: "CNF-DURABLE-30", Level: conformance.Must, Requirements: []string{"WRK-062", "WRK-071", "PRF-021"},
			Needs: storeFault,
			Title: "a reconciliation whose observation cannot be persisted is never answered; a later one is",
			Run: func(t *T) {
				w1 := t.durableSession(0)
				t.expectStatus("the status", protocol.Running(), w1.dispatch("op-1", `{"mode":"running","value":1}`))
				t.armStoreFault(-1)
				w1.sendReconcile(toolDurable, "op-1")
				w1.expectExit(exitPersistence, "a reconciliation while every journal write fails")
				t.disarmStoreFault()
				w2 := t.durableSession(0)
				t.expectStatus("the reconciled status once writes succeed", succeededRecord("op-1", "1"), w2.reconcile("op-1"))
				w2.endInput()
			},
		},
		&Check{
			ID: "CNF-DURABLE-31", Unreachable: unreachableAdapter, Level: conformance.Must, Requirements: []string{"PRF-022", "WRK-040"},
			Needs: durableEffects,
			Title: "the durable tool receives the exact operation key: the effect line carries it unchanged",
			Run: func(t *T) {
				const key = "op.-_exact.key-0042_z"
				w := t.durableSession(0)
				t.expectStatus("the status", succeededRecord(key, "1"), w.dispatch(key, `{"value":1}`))
				w.endInput()
				t.expectEffects("a dispatch under operation key "+key, effectLine(key, "1"))
			},
		},
		&Check{
			ID: "CNF-DURABLE-32", Level: conformance.Must, Requirements: []string{"STO-072", "STO-073", "PRF-034", "PRF-035", "WRK-082"},
			Needs:   []Need{NeedDurable, NeedJournal, NeedEffects, NeedEffectFence},
			Timeout: 20 * time.Second,
			Title:   "a superseded worker's effect is refused once a newer worker reconciled the operation as failed: the session's fencing token reaches the effect log",
			Run: func(t *T) {
				older := t.durableSession(0)
				older.sendDispatch(toolDurable, "op-held", jsonPayload(fmt.Sprintf(`{"value":1,"wait_ms":%d}`, heldMillis)))
				// The adapter runs once the admission is persisted, and a held call shows its token
				// first (PRF-034): its fence line says that it waits. A worker that shows no token
				// gets a fixed time instead, well within the wait.
				if t.waitForEffectLog(`"operation_key":"op-held","token":`, heldAdmission) {
					t.Logf("runner: the older worker's adapter showed its token and waits %d ms", heldMillis)
				} else {
					t.Logf("runner: no fence line for op-held after %v; going on while the adapter waits", heldAdmission)
				}
				newer := t.durableSession(0)
				t.expectStatus("the newer worker's reconciliation of the held operation (no effect yet)",
					protocol.Failed(absenceMessage), newer.reconcile("op-held"))
				newer.endInput()
				older.expectRefused("the held dispatch, whose operation a newer worker reconciled as failed while its adapter waited")
				t.expectEffects("a newer worker reconciled op-held as failed before the older worker's adapter acted (STO-073: its token is lower)")
			},
		},
		&Check{
			ID: "CNF-DURABLE-33", Level: conformance.Must, Requirements: []string{"STO-071", "STO-026", "STO-028", "WRK-083", "WRK-094"},
			Needs: durableBoth,
			Title: "three workers opened at once on one journal each dispatch: exactly one persists and answers, the others stop with status 7 before any effect",
			Run: func(t *T) {
				ws := []*Worker{t.durableSession(0), t.durableSession(0), t.durableSession(0)}
				// A session has reserved its fence once it answered an echo.
				for _, w := range ws {
					t.expectPayload("the echo", text("ready"), w.invoke(toolTextEcho, text("ready")))
				}
				reqs := make([]protocol.OperationDispatchRequest, len(ws))
				for i, w := range ws {
					reqs[i] = w.sendDispatch(toolDurable, fmt.Sprintf("op-%d", i+1), jsonPayload(fmt.Sprintf(`{"value":%d}`, i+1)))
				}
				var effects []string
				for i, w := range ws {
					const want = "an operation_result, or the end of a session whose fence another worker superseded"
					ev := w.next(want)
					if ev.err != nil {
						w.expectExit(exitPersistence, "a dispatch by a worker whose fence another worker, opened at the same time, superseded")
						continue
					}
					key, value := fmt.Sprintf("op-%d", i+1), fmt.Sprint(i+1)
					t.expectStatus(fmt.Sprintf("worker %d's status", w.index), succeededRecord(key, value), w.operationStatus(reqs[i], w.openAnswer(want, ev.line)))
					effects = append(effects, effectLine(key, value))
					w.endInput()
				}
				if len(effects) != 1 {
					t.Failf("exactly one of three workers opened at once persisting its dispatch (STO-071: each session's token comes from an atomic reservation, so only the highest fence may write)",
						fmt.Sprintf("%d workers answered their dispatch", len(effects)))
				}
				t.expectEffects("three dispatches of which only the highest fence's persisted", effects...)
			},
		},
		&Check{
			ID: "CNF-DURABLE-34", Level: conformance.Must, Requirements: []string{"WRK-031"},
			Needs: durableJournal,
			Title: "ordinary invokes leave the journal file byte for byte as the last durable request left it",
			Run: func(t *T) {
				w := t.durableSession(0)
				t.expectStatus("the status", succeededRecord("op-1", "1"), w.dispatch("op-1", `{"value":1}`))
				t.expectPayload("the echo", text("settled"), w.invoke(toolTextEcho, text("settled")))
				before, ok := fileDigest(t.journalPath())
				if !ok {
					t.Failf("a journal file at {journal} once a dispatch was answered", "no readable file")
				}
				for _, s := range []string{"a", "b", "c", "d"} {
					t.expectPayload("the echo", text(s), w.invoke(toolTextEcho, text(s)))
				}
				if after, _ := fileDigest(t.journalPath()); after != before {
					t.Failf("the journal file unchanged by four answered invokes ("+before+"): an invoke neither reads nor writes the journal"+t.Cite("WRK-031"),
						after+"; make flow A leave the journal alone: only dispatch, compensation and reconciliation write it")
				}
				w.endInput()
			},
		},
	}
}

// fileDigest describes the contents at path by their size and SHA-256: a file's bytes, or, for
// a worker that keeps its journal as a directory, the name, size and bytes of every regular file
// under it in lexical order. It reads at most maxJournalBytes; ok is false when path cannot be
// read.
func fileDigest(path string) (digest string, ok bool) {
	h := sha256.New()
	var total int64
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		rel, _ := filepath.Rel(path, p)
		fmt.Fprintf(h, "%s\x00", rel)
		n, err := io.Copy(h, io.LimitReader(f, maxJournalBytes-total))
		total += n
		fmt.Fprintf(h, "\x00%d\x00", n)
		return err
	})
	if err != nil {
		return "", false
	}
	return fmt.Sprintf("%d bytes, SHA-256 %x", total, h.Sum(nil)), true
}

// maxJournalBytes bounds how much of a journal file fileDigest reads.
const maxJournalBytes = 256 << 20

// How long CNF-DURABLE-32 holds the older worker's adapter, and how long it waits at most for
// the adapter's fence line.
const (
	heldMillis    = 4000
	heldAdmission = 2 * time.Second
)

// waitForEffectLog polls the check's effect log until it holds text, for at most limit, and
// reports whether it did.
func (t *T) waitForEffectLog(text string, limit time.Duration) bool {
	for end := time.Now().Add(limit); ; {
		if strings.Contains(string(readBounded(t.effectsPath())), text) {
			return true
		}
		if time.Now().After(end) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fenceLinePrefix starts every fence line of the effect log (PRF-035).
const fenceLinePrefix = `{"kind":"fence",`

// withoutFenceLines returns the effect lines without the fence lines, which record the tokens
// shown to the effect log rather than effects (PRF-035).
func withoutFenceLines(lines []string) []string {
	out := lines[:0:0]
	for _, l := range lines {
		if !strings.HasPrefix(l, fenceLinePrefix) {
			out = append(out, l)
		}
	}
	return out
}
