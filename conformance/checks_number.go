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

// NumberChecks returns the checks of area NUMBER: number-model interoperability.
func NumberChecks() []*Check {
	return []*Check{
		&Check{
			ID: "CNF-NUMBER-01", Unreachable: unreachableNumberMode, Level: Should, Requirements: []string{"ENC-039", "ENC-036", "FRM-010", "ENC-034"},
			Needs: durable,
			Title: "a host frame whose payload holds the number 1e2 is verified and answered",
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
	}
}
