package worker

import (
	"bytes"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/impl/protocol"
)

// rawBootstrap assembles bootstrap bytes field by field, so that each field can be wrong.
func rawBootstrap(magic string, version byte, length int, id string, key []byte) []byte {
	b := []byte(magic)
	b = append(b, version, byte(length))
	b = append(b, id...)
	return append(b, key...)
}

// testKey is a fixed non-zero key for bootstraps that must fail before the key matters.
var testKey = bytes.Repeat([]byte{0xab}, 32)

// badBootstrap is the body of a check that launches a worker, writes data (keeping its input
// open unless closeAfter), and expects exit status 3 without any output.
func badBootstrap(data []byte, closeAfter bool, why string) func(*T) {
	return exits(exitBootstrap, why, (*T).launch, func(w *Worker) {
		w.writeRaw(data)
		if closeAfter {
			w.closeInput()
		}
	})
}

// BootChecks returns the checks of area BOOT: the private-pipe bootstrap.
func BootChecks() []*Check {
	return []*Check{
		&Check{
			ID: "CNF-BOOT-01", Level: conformance.Must, Requirements: []string{"BOOT-006", "BOOT-019", "BOOT-020", "WRK-092", "ERR-013"},
			Title: "a bootstrap with a wrong magic ends the worker with status 3 before any frame is read",
			Run: exits(exitBootstrap, "the magic SPLPBOOX", (*T).launch, func(w *Worker) {
				w.writeRaw([]byte("SPLPBOOX"))
				// A frame after the bad preamble must not be acted on.
				w.writeLine([]byte(`{"sequence":1,"message":{"type":"close_session","protocol_version":5,"session_id":"x"},"auth_tag":"` + repeat("0", 64) + `"}`))
			}),
		},
		&Check{
			ID: "CNF-BOOT-02", Level: conformance.Must, Requirements: []string{"BOOT-007", "WRK-092"},
			Title: "a bootstrap version other than 1 is refused as soon as the version byte is read",
			Run:   badBootstrap([]byte("SPLPBOOT\x02"), false, "version byte 2 (input left open)"),
		},
		&Check{
			ID: "CNF-BOOT-03", Level: conformance.Must, Requirements: []string{"BOOT-008", "WRK-092"},
			Title: "a session-id length of 0 is refused before anything else is read",
			Run:   badBootstrap([]byte("SPLPBOOT\x01\x00"), false, "session-id length 0 (input left open)"),
		},
		&Check{
			ID: "CNF-BOOT-04", Level: conformance.Must, Requirements: []string{"BOOT-008", "BOOT-014", "WRK-092"},
			Title: "a session-id length of 129 is refused before any session-id byte is read",
			Run:   badBootstrap([]byte("SPLPBOOT\x01\x81"), false, "session-id length 129 (input left open)"),
		},
		&Check{
			ID: "CNF-BOOT-05", Level: conformance.Must, Requirements: []string{"BOOT-009", "WRK-092"},
			Title: "a session id that is not UTF-8 is refused",
			Run:   badBootstrap(rawBootstrap("SPLPBOOT", 1, 6, "conf-\xff", testKey), false, "a session id that is not UTF-8"),
		},
		&Check{
			ID: "CNF-BOOT-06", Level: conformance.Must, Requirements: []string{"BOOT-010", "MSG-002", "WRK-092"},
			Title: "a session id that is not a token is refused before the key is read",
			Run:   badBootstrap(rawBootstrap("SPLPBOOT", 1, 7, "Conf Id", nil), false, `session id "Conf Id" and no key (input left open)`),
		},
		&Check{
			ID: "CNF-BOOT-07", Level: conformance.Must, Requirements: []string{"BOOT-011", "FRM-039", "WRK-092"},
			Title: "an all-zero session key is refused",
			Run:   badBootstrap(rawBootstrap("SPLPBOOT", 1, 9, "session-1", make([]byte, 32)), false, "an all-zero key"),
		},
		&Check{
			ID: "CNF-BOOT-08", Level: conformance.Must, Requirements: []string{"BOOT-005", "WRK-092"},
			Title: "a bootstrap cut off inside the key is refused at end of input",
			Run:   badBootstrap(rawBootstrap("SPLPBOOT", 1, 9, "session-1", testKey[:16]), true, "a key of 16 bytes followed by end of input"),
		},
		&Check{
			ID: "CNF-BOOT-09", Level: conformance.Must, Requirements: []string{"BOOT-005", "WRK-092"},
			Title: "an empty standard input is a bootstrap failure",
			Run:   badBootstrap(nil, true, "an empty input"),
		},
		&Check{
			ID: "CNF-BOOT-10", Level: conformance.Must, Requirements: []string{"BOOT-016", "BOOT-017", "BOOT-019", "WRK-092"},
			Title: "a JSON frame in place of the bootstrap is refused as a bootstrap failure",
			Run: exits(exitBootstrap, "an open_session frame without a bootstrap", (*T).launch, func(w *Worker) {
				w.writeLine(w.forge(1, protocol.OpenSessionMessage{Manifest: w.manifest(baselineGrants()...)}))
			}),
		},
		&Check{
			ID: "CNF-BOOT-11", Unreachable: unreachableLibrary, Level: conformance.Must, Requirements: []string{"BOOT-012", "BOOT-013", "WRK-090"},
			Title: "bytes that follow the bootstrap in the same write are read as the first frame",
			Run: func(t *T) {
				w := t.launch()
				data := w.bootstrapBytes()
				data = append(data, w.seal(protocol.OpenSessionMessage{Manifest: w.manifest(baselineGrants()...)})...)
				data = append(data, '\n')
				id := w.nextRequestID()
				data = append(data, w.seal(w.invocation(id, toolTextEcho, text("same write")))...)
				data = append(data, '\n')
				t.Logf("→ worker 1: the bootstrap, open_session and an invoke in one write of %d bytes", len(data))
				w.write(data)
				t.expectPayload("the echo", text("same write"), w.expectResult(id))
				w.endInput()
			},
		},
	}
}
