package worker

import (
	"strings"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/impl/protocol"
)

// numberCheck dispatches, in mode fail (so the answer carries no number), an input whose
// value holds a number spelled as token, sealed as a host that keeps number text (the Rust
// host build) would seal it, and expects the answer.
func numberCheck(t *T, token string) {
	w := t.durableSession(0)
	input := `{"mode":"fail","value":{"n":` + token + `}}`
	st := w.dispatch("op-num", input)
	t.expectStatus("the status", protocol.Failed(absenceMessage), st)
	w.endInput()
}

// preserveOnlyInput holds numbers only a host that keeps number text writes, as such a host
// (the Rust host build) spells them; preserveOnlyCanonical is how it re-serializes them.
const (
	preserveOnlyInput = `{"a":0.10,"b":1e2,"c":2.5e-3,"d":99999999999999999999,"e":-9223372036854775809,` +
		`"f":1e400,"g":3.14159265358979323846264338327950288,"h":0.000001}`
	preserveOnlyCanonical = `{"a":0.10,"b":1e+2,"c":2.5e-3,"d":99999999999999999999,"e":-9223372036854775809,` +
		`"f":1e+400,"g":3.14159265358979323846264338327950288,"h":0.000001}`
)

// lossyWrittenNonPortable holds a number that is not portable (the lossy reader's conversion
// misreads it by one unit in the last place) but is the shortest layout of a binary64 value, so
// a lossy writer writes it too: it is no proof that the peer keeps number text (ENC-053).
const lossyWrittenNonPortable = `[1.4651248189898814e+246]`

// NumberChecks returns the checks of area NUMBER: number-model interoperability.
func NumberChecks() []*Check {
	return []*Check{
		&Check{
			ID: "CNF-NUMBER-01", Unreachable: unreachableNumberMode, Level: conformance.Should, Requirements: []string{"ENC-039", "ENC-036", "FRM-010", "ENC-034"},
			Needs: durable,
			Title: "a host frame whose payload holds the number 1e+2 (a text-keeping host's form of 1e2) is verified and answered",
			Run:   func(t *T) { numberCheck(t, "1e2") },
		},
		&Check{
			ID: "CNF-NUMBER-02", Unreachable: unreachableNumberMode, Level: conformance.Should, Requirements: []string{"ENC-039", "ENC-036", "FRM-010", "ENC-034"},
			Needs: durable,
			Title: "a host frame whose payload holds the number 0.10 is verified and answered",
			Run:   func(t *T) { numberCheck(t, "0.10") },
		},
		&Check{
			ID: "CNF-NUMBER-03", Unreachable: unreachableNumberMode, Level: conformance.Should, Requirements: []string{"ENC-039", "ENC-036", "FRM-010", "ENC-034"},
			Needs: durable,
			Title: "a host frame whose payload holds the 20-digit integer 99999999999999999999 is verified and answered",
			Run:   func(t *T) { numberCheck(t, "99999999999999999999") },
		},
		&Check{
			ID: "CNF-NUMBER-04", Level: conformance.Should, Requirements: []string{"ENC-053", "ENC-036", "ENC-039"},
			Title: "the JSON echo answers numbers only a text-keeping host writes (0.10, 1e+2, 1e+400, 20-digit integers) as received",
			Run: func(t *T) {
				w := t.session(jsonGrant(toolJSONEcho))
				t.expectPayload("the echo", jsonPayload(preserveOnlyCanonical), w.invoke(toolJSONEcho, jsonPayload(preserveOnlyInput)))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-NUMBER-05", Level: conformance.Should, Requirements: []string{"ENC-053", "ENC-037", "ENC-039", "WRK-048", "ERR-004"},
			Title: "a number a lossy writer also writes (1.4651248189898814e+246) proves nothing: its echo is withheld (status 6); after 0.10 it is answered",
			Run: func(t *T) {
				w := t.session(jsonGrant(toolJSONEcho))
				w.sendInvoke(toolJSONEcho, jsonPayload(lossyWrittenNonPortable))
				w.expectExit(exitAdapter, "an echo of "+lossyWrittenNonPortable+", whose number a lossy writer also writes, so it proves nothing")
				if diag := w.stderr.Excerpt(); !strings.Contains(diag, "NonPortableNumber") {
					t.shouldf("a diagnostic naming NonPortableNumber (WRK-048)", "standard error: "+orNone([]string{strings.TrimSpace(diag)}))
				}
				w2 := t.session(jsonGrant(toolJSONEcho))
				t.expectPayload("the echo of a number only a text-keeping host writes", jsonPayload(`[0.10]`), w2.invoke(toolJSONEcho, jsonPayload(`[0.10]`)))
				t.expectPayload("the echo once the host proved that it keeps number text", jsonPayload(lossyWrittenNonPortable),
					w2.invoke(toolJSONEcho, jsonPayload(lossyWrittenNonPortable)))
				w2.endInput()
			},
		},
	}
}
