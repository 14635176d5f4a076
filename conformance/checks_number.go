package conformance

import (
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

// NumberChecks returns the checks of area NUMBER: number-model interoperability.
func NumberChecks() []*Check {
	return []*Check{
		&Check{
			ID: "CNF-NUMBER-01", Unreachable: unreachableNumberMode, Level: Should, Requirements: []string{"ENC-039", "ENC-036", "FRM-010", "ENC-034"},
			Needs: durable,
			Title: "a host frame whose payload holds the number 1e+2 (a text-keeping host's form of 1e2) is verified and answered",
			run:   func(t *T) { numberCheck(t, "1e2") },
		},
		&Check{
			ID: "CNF-NUMBER-02", Unreachable: unreachableNumberMode, Level: Should, Requirements: []string{"ENC-039", "ENC-036", "FRM-010", "ENC-034"},
			Needs: durable,
			Title: "a host frame whose payload holds the number 0.10 is verified and answered",
			run:   func(t *T) { numberCheck(t, "0.10") },
		},
		&Check{
			ID: "CNF-NUMBER-03", Unreachable: unreachableNumberMode, Level: Should, Requirements: []string{"ENC-039", "ENC-036", "FRM-010", "ENC-034"},
			Needs: durable,
			Title: "a host frame whose payload holds the 20-digit integer 99999999999999999999 is verified and answered",
			run:   func(t *T) { numberCheck(t, "99999999999999999999") },
		},
		&Check{
			ID: "CNF-NUMBER-04", Level: Should, Requirements: []string{"ENC-053", "ENC-036", "ENC-039"},
			Title: "the JSON echo answers numbers only a text-keeping host writes (0.10, 1e+2, 1e+400, 20-digit integers) as received",
			run: func(t *T) {
				w := t.session(jsonGrant(toolJSONEcho))
				t.expectPayload("the echo", jsonPayload(preserveOnlyCanonical), w.invoke(toolJSONEcho, jsonPayload(preserveOnlyInput)))
				w.endInput()
			},
		},
	}
}
