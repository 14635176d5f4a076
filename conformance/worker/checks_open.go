package worker

import (
	"bytes"
	"fmt"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/impl/protocol"
)

// OpenChecks returns the checks of area OPEN: session opening and manifest limits.
func OpenChecks() []*Check {
	return []*Check{

		&Check{
			ID: "CNF-OPEN-01", Unreachable: unreachableAcceptance, Level: conformance.Must, Requirements: []string{"BOOT-018", "WRK-011", "WRK-092", "PRF-001"},
			Title: "a session granting every profile tool opens, and end of input then exits with status 0",
			Run: func(t *T) {
				grants := append(baselineGrants(), textGrant(toolCancellable), textGrant(toolUncooperative))
				w := t.session(grants...)
				t.expectPayload("the echo", text("open"), w.invoke(toolTextEcho, text("open")))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-OPEN-02", Level: conformance.Must, Requirements: []string{"WRK-012", "BOOT-018", "WRK-091"},
			Title: "an authenticated first frame that is not open_session is rejected (status 5)",
			Run: exits(exitRejected, "an invoke as the first frame", (*T).launch, func(w *Worker) {
				w.bootstrap()
				w.send(w.invocation("req-1", toolTextEcho, text("too early")))
			}),
		},
		&Check{
			ID: "CNF-OPEN-03", Level: conformance.Must, Requirements: []string{"WRK-011", "FRM-025", "FRM-014"},
			Title: "an open_session whose tag does not verify is rejected (status 4)",
			Run: exits(exitTransport, "an open_session with a wrong tag", (*T).launch, func(w *Worker) {
				w.bootstrap()
				line := w.seal(protocol.OpenSessionMessage{Manifest: w.manifest(baselineGrants()...)})
				w.writeLine(flipTagDigit(line))
			}),
		},
		&Check{
			ID: "CNF-OPEN-04", Level: conformance.Must, Requirements: []string{"WRK-011", "FRM-025", "FRM-026"},
			Title: "an open_session at sequence 2 is rejected (status 4)",
			Run: exits(exitTransport, "an open_session at sequence 2", (*T).launch, func(w *Worker) {
				w.bootstrap()
				w.writeLine(w.forge(2, protocol.OpenSessionMessage{Manifest: w.manifest(baselineGrants()...)}))
			}),
		},
		&Check{
			ID: "CNF-OPEN-05", Level: conformance.Must, Requirements: []string{"WRK-011", "FRM-027", "MSG-028"},
			Title: "an open_session whose manifest names another session is rejected (status 4)",
			Run: exits(exitTransport, "a manifest for another session, tagged under the worker's session", (*T).launch, func(w *Worker) {
				w.bootstrap()
				m := w.manifest(baselineGrants()...)
				m.SessionID = w.SessionID + "-other"
				w.writeLine(w.forge(1, protocol.OpenSessionMessage{Manifest: m}))
			}),
		},
		&Check{
			ID: "CNF-OPEN-06", Level: conformance.Must, Requirements: []string{"WRK-014", "WRK-017"},
			Title: "a manifest granting a tool without an adapter is refused (status 5)",
			Run:   exits(exitRejected, "a grant for conf.not.registered", func(t *T) *Worker { return t.session(textGrant(toolTextEcho), textGrant("conf.not.registered")) }, nil),
		},
		&Check{
			ID: "CNF-OPEN-07", Level: conformance.Must, Requirements: []string{"MAN-006", "MSG-031", "MSG-041", "WRK-013"},
			Title: "a manifest with 129 grants is refused (status 4: it does not decode)",
			Run: exits(exitTransport, "a manifest with 129 grants", (*T).launch, func(w *Worker) {
				w.bootstrap()
				var grants []protocol.CapabilityGrant
				for i := range 129 {
					grants = append(grants, textGrant(fmt.Sprintf("conf.tool.%03d", i)))
				}
				w.writeLine(w.forge(1, protocol.OpenSessionMessage{Manifest: w.manifest(grants...)}))
			}),
		},
		&Check{
			ID: "CNF-OPEN-08", Level: conformance.Must, Requirements: []string{"MAN-007", "MSG-031"},
			Title: "a manifest granting one tool twice is refused (status 4)",
			Run: exits(exitTransport, "two grants for conf.text.echo", (*T).launch, func(w *Worker) {
				w.bootstrap()
				w.writeLine(w.forge(1, protocol.OpenSessionMessage{Manifest: w.manifest(textGrant(toolTextEcho), textGrant(toolTextEcho))}))
			}),
		},
		&Check{
			ID: "CNF-OPEN-09", Unreachable: unreachableAcceptance, Level: conformance.Must, Requirements: []string{"MAN-008", "CAN-023", "WRK-092"},
			Title: "a manifest with no grant opens a valid session; end of input exits with status 0",
			Run: func(t *T) {
				w := t.session()
				w.expectRunning(50*time.Millisecond, "an open session waiting for input")
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-OPEN-10", Level: conformance.Must, Requirements: []string{"MAN-001", "MAN-002", "MSG-031"},
			Title: "a grant with max_calls 0 is refused (status 4)",
			Run: exits(exitTransport, "a grant with max_calls 0", (*T).launch, func(w *Worker) {
				w.bootstrap()
				g := textGrant(toolTextEcho)
				g.MaxCalls = 0
				w.writeLine(w.forge(1, protocol.OpenSessionMessage{Manifest: w.manifest(g)}))
			}),
		},
		&Check{
			ID: "CNF-OPEN-11", Level: conformance.Must, Requirements: []string{"MAN-003", "MSG-041"},
			Title: "a grant with 65 distinct resource selectors is refused (status 4)",
			Run: exits(exitTransport, "a grant with 65 selectors", (*T).launch, func(w *Worker) {
				w.bootstrap()
				w.writeLine(w.forge(1, protocol.OpenSessionMessage{Manifest: w.manifest(withSelectors(textGrant(toolTextEcho), 65))}))
			}),
		},
		&Check{
			ID: "CNF-OPEN-12", Unreachable: unreachableLibrary, Level: conformance.Must, Requirements: []string{"MAN-003", "MSG-041", "MAN-001"},
			Title: "a grant with 64 opaque resource selectors is accepted and usable",
			Run: func(t *T) {
				w := t.session(withSelectors(textGrant(toolTextEcho), 64))
				t.expectPayload("the echo", text("ok"), w.invoke(toolTextEcho, text("ok")))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-OPEN-13", Level: conformance.Must, Requirements: []string{"WRK-092", "FRM-034"},
			Title: "end of input after the bootstrap, before the opening frame, exits with status 4",
			Run: exits(exitTransport, "end of input before open_session", (*T).launch, func(w *Worker) {
				w.bootstrap()
				w.closeInput()
			}),
		},
		&Check{
			ID: "CNF-OPEN-14", Level: conformance.Must, Requirements: []string{"WRK-022", "WRK-091"},
			Title: "a second open_session in an open session is an unexpected message (status 5)",
			Run: exits(exitRejected, "a second open_session", (*T).baseline, func(w *Worker) {
				w.send(protocol.OpenSessionMessage{Manifest: w.manifest(baselineGrants()...)})
			}),
		},
		&Check{
			ID: "CNF-OPEN-15", Level: conformance.Must, Requirements: []string{"MAN-006", "MSG-001"},
			Title: "a manifest with protocol_version 4 is refused (status 4)",
			Run: exits(exitTransport, "a version-4 manifest", (*T).launch, func(w *Worker) {
				w.bootstrap()
				m := w.manifest(baselineGrants()...)
				m.ProtocolVersion = 4
				w.writeLine(w.forge(1, protocol.OpenSessionMessage{Manifest: m}))
			}),
		},
		&Check{
			ID: "CNF-OPEN-16", Level: conformance.Must, Requirements: []string{"MSG-006", "ENC-051", "WRK-011"},
			Title: "a grant whose format is neither text nor json is refused (status 4: it does not decode)",
			Run: exits(exitTransport, `a grant with format "xml"`, (*T).launch, func(w *Worker) {
				w.bootstrap()
				w.writeLine(w.forgeReplaced(protocol.OpenSessionMessage{Manifest: w.manifest(textGrant(toolTextEcho))}, `"format":"text"`, `"format":"xml"`))
			}),
		},
		&Check{
			ID: "CNF-OPEN-17", Level: conformance.Must, Requirements: []string{"MSG-006", "MSG-007", "ENC-051"},
			Title: "a resource selector of a kind outside the four is refused (status 4: it does not decode)",
			Run: exits(exitTransport, `a selector of kind "database"`, (*T).launch, func(w *Worker) {
				w.bootstrap()
				g := withSelectors(textGrant(toolTextEcho), 1)
				w.writeLine(w.forgeReplaced(protocol.OpenSessionMessage{Manifest: w.manifest(g)}, `"kind":"secret"`, `"kind":"database"`))
			}),
		},
		&Check{
			ID: "CNF-OPEN-18", Level: conformance.Must, Requirements: []string{"CAN-023", "CAN-025", "CAN-022"},
			Needs: cancelNeeds,
			Title: "a manifest mixing cancellable and ordinary tools opens a baseline session: slow tools answer, cancel is unexpected (status 5)",
			Run: func(t *T) {
				w := t.session(textGrant(toolTextEcho), textGrant(toolCancellable))
				t.expectPayload("the echo", text("mixed"), w.invoke(toolTextEcho, text("mixed")))
				t.expectPayload("the slow tool's answer", text("done 0"), w.invoke(toolCancellable, text("0")))
				target := w.sendInvoke(toolTextEcho, text("then"))
				w.expectResult(target)
				w.send(protocol.CancelMessage{Request: w.cancelRequest(target, toolTextEcho)})
				w.expectExit(exitRejected, "a cancel in the baseline session of a mixed manifest")
			},
		},
	}
}

// withSelectors returns g with n distinct opaque secret selectors.
func withSelectors(g protocol.CapabilityGrant, n int) protocol.CapabilityGrant {
	for i := range n {
		g.Resources = append(g.Resources, protocol.ResourceSelector{Kind: protocol.ResourceSecret, ID: fmt.Sprintf("secret-%02d", i)})
	}
	return g
}

// flipTagDigit changes the last hex digit of the auth_tag of a frame line.
func flipTagDigit(line []byte) []byte {
	out := bytes.Clone(line)
	i := bytes.LastIndex(out, []byte(`"auth_tag":"`))
	if i < 0 {
		return out
	}
	j := i + len(`"auth_tag":"`) + 63
	if j < len(out) {
		if out[j] == '0' {
			out[j] = '1'
		} else {
			out[j] = '0'
		}
	}
	return out
}
