package conformance

// preserveOnlyInput holds numbers only a host that keeps number text writes, as such a host
// (the Rust host build) spells them; preserveOnlyCanonical is how it re-serializes them.
const (
	preserveOnlyInput = `{"a":0.10,"b":1e2,"c":2.5e-3,"d":99999999999999999999,"e":-9223372036854775809,` +
		`"f":1e400,"g":3.14159265358979323846264338327950288,"h":0.000001}`
	preserveOnlyCanonical = `{"a":0.10,"b":1e+2,"c":2.5e-3,"d":99999999999999999999,"e":-9223372036854775809,` +
		`"f":1e+400,"g":3.14159265358979323846264338327950288,"h":0.000001}`
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
			t.failf("an answer for the effect the dispatch performed",
				"the output ended after the effect, which can never be reported now ("+w1.describeEnd(ev.err)+"):\n  "+orNone(effects))
		}
		t.logf("the worker refused the dispatch before its effect (%s)", w1.describeEnd(ev.err))
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

func init() {
	register(
		&Check{
			ID: "CNF-NUMBER-04", Unreachable: unreachableNumberMode, Level: Should, Requirements: []string{"ENC-053", "ENC-036", "ENC-039"},
			Title: "the JSON echo answers numbers only a text-keeping host writes (0.10, 1e+2, 1e+400, 20-digit integers) as received",
			run: func(t *T) {
				w := t.session(jsonGrant(toolJSONEcho))
				t.expectPayload("the echo", jsonPayload(preserveOnlyCanonical), w.invoke(toolJSONEcho, jsonPayload(preserveOnlyInput)))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-DURABLE-26", Level: Must, Requirements: []string{"WRK-048", "ENC-054", "WRK-041", "WRK-060"},
			Needs: durableBoth,
			Title: "an admitted dispatch holding non-portable numbers is answered, reconciled in a fresh session and answered again as a duplicate",
			run:   durableNumbers,
		},
	)
}
