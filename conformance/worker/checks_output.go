package worker

import (
	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/impl/protocol"
)

// OutputChecks returns the checks of area OUTPUT: the validation of adapter output.
func OutputChecks() []*Check {
	return []*Check{
		&Check{
			ID: "CNF-OUTPUT-01", Level: conformance.Must, Requirements: []string{"WRK-030", "AUZ-021", "WRK-091"},
			Title: "an output one byte over max_output_bytes is never sent (status 6)",
			Run: exits(exitAdapter, "an echo of 5 bytes under max_output_bytes 4", func(t *T) *Worker { return t.session(limitedGrant(toolTextEcho, protocol.FormatText, 10, 64, 4)) }, func(w *Worker) {
				w.sendInvoke(toolTextEcho, text("12345"))
			}),
		},
		&Check{
			ID: "CNF-OUTPUT-02", Level: conformance.Must, Requirements: []string{"AUZ-010", "AUZ-021"},
			Title: "an output of exactly max_output_bytes is sent",
			Run: func(t *T) {
				w := t.session(limitedGrant(toolTextEcho, protocol.FormatText, 10, 64, 4))
				t.expectPayload("the echo", text("1234"), w.invoke(toolTextEcho, text("1234")))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-OUTPUT-03", Level: conformance.Must, Requirements: []string{"WRK-030", "AUZ-021", "MSG-038"},
			Title: "a JSON output over max_output_bytes (canonical size) is never sent (status 6)",
			Run: exits(exitAdapter, "a 17-byte JSON echo under max_output_bytes 16", func(t *T) *Worker { return t.session(limitedGrant(toolJSONEcho, protocol.FormatJSON, 10, 64, 16)) }, func(w *Worker) {
				// {"a":"123456789"} is 17 bytes canonically.
				w.sendInvoke(toolJSONEcho, jsonPayload(`{"a":"123456789"}`))
			}),
		},
		&Check{
			ID: "CNF-OUTPUT-04", Level: conformance.Must, Requirements: []string{"PRF-005", "WRK-030", "WRK-091", "WRK-092"},
			Title: "an adapter failure is never answered; the worker exits with status 6",
			Run: exits(exitAdapter, "an invoke of conf.text.fail", (*T).baseline, func(w *Worker) {
				w.sendInvoke(toolTextFail, text("fail"))
			}),
		},
		&Check{
			ID: "CNF-OUTPUT-05", Level: conformance.Must, Requirements: []string{"AUZ-021", "MSG-038", "AUZ-010"},
			Title: "a JSON output of exactly max_output_bytes (canonical size) is sent",
			Run: func(t *T) {
				w := t.session(limitedGrant(toolJSONEcho, protocol.FormatJSON, 10, 64, 17))
				t.expectPayload("the echo", jsonPayload(`{"a":"123456789"}`), w.invoke(toolJSONEcho, jsonPayload(`{"a":"123456789"}`)))
				w.endInput()
			},
		},
	}
}
