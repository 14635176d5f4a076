package worker

import (
	"strings"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/impl/protocol"
)

// limitedGrant returns a grant of tool with the given call and byte limits.
func limitedGrant(tool string, format protocol.EnvelopeFormat, calls, in, out uint32) protocol.CapabilityGrant {
	return protocol.CapabilityGrant{Tool: tool, Format: format, MaxCalls: calls, MaxInputBytes: in, MaxOutputBytes: out}
}

// nestedArrays returns n nested arrays around inner.
func nestedArrays(n int, inner string) string {
	return strings.Repeat("[", n) + inner + strings.Repeat("]", n)
}

// AuthzChecks returns the checks of area AUTHZ: the authorization of invocations.
func AuthzChecks() []*Check {
	return []*Check{
		&Check{
			ID: "CNF-AUTHZ-01", Level: conformance.Must, Requirements: []string{"AUZ-008", "WRK-030", "WRK-091", "WRK-096", "WRK-097"},
			Title: "an invocation of a tool the manifest does not grant is refused (status 5)",
			Run: exits(exitRejected, "an invoke of conf.json.echo, which is not granted", func(t *T) *Worker { return t.session(textGrant(toolTextEcho)) }, func(w *Worker) {
				w.sendInvoke(toolJSONEcho, jsonPayload(`{}`))
			}),
		},
		&Check{
			ID: "CNF-AUTHZ-02", Level: conformance.Must, Requirements: []string{"AUZ-008", "MSG-012"},
			Title: "a JSON payload for a text grant is refused (status 5)",
			Run: exits(exitRejected, "a json payload for the text tool conf.text.echo", (*T).baseline, func(w *Worker) {
				w.sendInvoke(toolTextEcho, jsonPayload(`{"text":"hello"}`))
			}),
		},
		&Check{
			ID: "CNF-AUTHZ-03", Level: conformance.Must, Requirements: []string{"AUZ-008", "AUZ-010", "MSG-039"},
			Title: "an input one byte over max_input_bytes is refused (status 5)",
			Run: exits(exitRejected, "17 bytes of input under max_input_bytes 16", func(t *T) *Worker { return t.session(limitedGrant(toolTextEcho, protocol.FormatText, 10, 16, 64)) }, func(w *Worker) {
				w.sendInvoke(toolTextEcho, text(repeat("a", 17)))
			}),
		},
		&Check{
			ID: "CNF-AUTHZ-04", Level: conformance.Must, Requirements: []string{"AUZ-010", "MSG-039"},
			Title: "an input of exactly max_input_bytes is accepted",
			Run: func(t *T) {
				w := t.session(limitedGrant(toolTextEcho, protocol.FormatText, 10, 16, 64))
				t.expectPayload("the echo", text(repeat("a", 16)), w.invoke(toolTextEcho, text(repeat("a", 16))))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-AUTHZ-05", Level: conformance.Must, Requirements: []string{"MSG-013", "AUZ-008", "AUZ-010"},
			Title: "text input size counts UTF-8 bytes: 6 bytes pass a limit of 6, 7 bytes do not",
			Run: func(t *T) {
				w := t.session(limitedGrant(toolTextEcho, protocol.FormatText, 10, 6, 64))
				t.expectPayload("the echo", text("é😀"), w.invoke(toolTextEcho, text("é😀")))
				w.sendInvoke(toolTextEcho, text("é😀a"))
				w.expectExit(exitRejected, `"é😀a" (7 UTF-8 bytes) under max_input_bytes 6`)
			},
		},
		&Check{
			ID: "CNF-AUTHZ-06", Level: conformance.Must, Requirements: []string{"AUZ-008", "AUZ-011"},
			Title: "a call beyond max_calls is refused (status 5)",
			Run: exits(exitRejected, "a third call under max_calls 2", func(t *T) *Worker { return t.session(limitedGrant(toolTextEcho, protocol.FormatText, 2, 64, 64)) }, func(w *Worker) {
				w.invoke(toolTextEcho, text("1"))
				w.invoke(toolTextEcho, text("2"))
				w.sendInvoke(toolTextEcho, text("3"))
			}),
		},
		&Check{
			ID: "CNF-AUTHZ-07", Level: conformance.Must, Requirements: []string{"AUZ-005", "AUZ-003"},
			Title: "a request id used twice in one session is refused (status 5)",
			Run: func(t *T) {
				w := t.baseline()
				w.send(w.invocation("req-dup", toolTextEcho, text("first")))
				t.expectPayload("the echo", text("first"), w.expectResult("req-dup"))
				w.send(w.invocation("req-dup", toolTextEcho, text("second")))
				w.expectExit(exitRejected, "a second invoke with request id req-dup")
			},
		},
		&Check{
			ID: "CNF-AUTHZ-08", Level: conformance.Must, Requirements: []string{"AUZ-005", "AUZ-009"},
			Needs: []Need{NeedDurable},
			Title: "invocations and durable dispatches share one request-id namespace",
			Run: exits(exitRejected, "a dispatch that reuses the invocation's request id", (*T).baseline, func(w *Worker) {
				w.send(w.invocation("req-shared", toolTextEcho, text("first")))
				w.expectResult("req-shared")
				req := w.dispatchRequest("req-shared", toolDurable, "op-1", jsonPayload(`{"value":1}`))
				w.send(protocol.DispatchOperationMessage{Request: req})
			}),
		},
		&Check{
			ID: "CNF-AUTHZ-09", Level: conformance.Must, Requirements: []string{"AUZ-006", "AUZ-007"},
			// 1,025 round trips: under a loaded machine they need more than the default limit.
			Timeout: 10 * time.Second,
			Title:   "a session retains at most 1,024 request ids: request 1,025 is refused (status 5)",
			Run: exits(exitRejected, "request 1,025 of the session", func(t *T) *Worker { return t.session(limitedGrant(toolTextEcho, protocol.FormatText, 2000, 64, 64)) }, func(w *Worker) {
				for i := 1; i <= 1024; i++ {
					id := w.sendInvoke(toolTextEcho, text("n"))
					w.expectResult(id)
				}
				w.sendInvoke(toolTextEcho, text("one too many"))
			}),
		},
		&Check{
			ID: "CNF-AUTHZ-10", Level: conformance.Must, Requirements: []string{"MSG-035", "MSG-032", "AUZ-008"},
			Title: "a scalar JSON payload reaches the authorizer and is refused there (status 5)",
			Run: exits(exitRejected, "the JSON payload 5", (*T).baseline, func(w *Worker) {
				w.sendInvoke(toolJSONEcho, jsonPayload(`5`))
			}),
		},
		&Check{
			ID: "CNF-AUTHZ-11", Level: conformance.Must, Requirements: []string{"MSG-036", "MSG-032", "AUZ-008"},
			Title: "a JSON payload nested 33 levels deep is refused (status 5)",
			Run: exits(exitRejected, "33 nested arrays", (*T).baseline, func(w *Worker) {
				w.sendInvoke(toolJSONEcho, jsonPayload(nestedArrays(33, "")))
			}),
		},
		&Check{
			ID: "CNF-AUTHZ-12", Level: conformance.Must, Requirements: []string{"WRK-030", "WRK-003", "PRF-006"},
			Title: "an adapter that declares no invocation safety is never invoked (status 5)",
			Run: exits(exitRejected, "an invoke of conf.text.undeclared", (*T).baseline, func(w *Worker) {
				w.sendInvoke(toolUndeclared, text("hello"))
			}),
		},
		&Check{
			ID: "CNF-AUTHZ-13", Level: conformance.Must, Requirements: []string{"AUZ-009", "AUZ-011"},
			Needs: []Need{NeedDurable},
			Title: "durable dispatches spend the tool's max_calls like invocations",
			Run: func(t *T) {
				g := durableGrant(0)
				g.MaxCalls = 1
				w := t.session(g)
				t.expectStatus("the first dispatch", succeededRecord("op-1", "1"), w.dispatch("op-1", `{"value":1}`))
				w.sendDispatch(toolDurable, "op-2", jsonPayload(`{"value":2}`))
				w.expectExit(exitRejected, "a second dispatch under max_calls 1")
			},
		},
		&Check{
			ID: "CNF-AUTHZ-14", Unreachable: unreachableAcceptance, Level: conformance.Must, Requirements: []string{"AUZ-012", "WRK-060"},
			Needs: []Need{NeedDurable},
			Title: "reconciliation spends no call budget",
			Run: func(t *T) {
				g := durableGrant(0)
				g.MaxCalls = 1
				w := t.session(g)
				w.dispatch("op-1", `{"value":1}`)
				for range 3 {
					t.expectStatus("the reconciled status", succeededRecord("op-1", "1"), w.reconcile("op-1"))
				}
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-AUTHZ-15", Level: conformance.Must, Requirements: []string{"WRK-040", "WRK-003"},
			Needs: []Need{NeedDurable},
			Title: "a durable dispatch to a tool without a durable contract is refused (status 5)",
			Run: exits(exitRejected, "a dispatch_operation for conf.text.echo", (*T).baseline, func(w *Worker) {
				w.sendDispatch(toolTextEcho, "op-1", text("hello"))
			}),
		},

		&Check{
			ID: "CNF-AUTHZ-16", Level: conformance.Must, Requirements: []string{"AUZ-009", "AUZ-010", "WRK-040", "WRK-091", "MSG-038"},
			Needs: durableEffects,
			Title: "a dispatch input one byte over max_input_bytes is refused (status 5) before any effect",
			Run: func(t *T) {
				g := durableGrant(0)
				g.MaxInputBytes = 12 // {"value":"x"} has 13 bytes canonically
				w := t.session(g)
				w.sendDispatch(toolDurable, "op-1", jsonPayload(`{ "value" : "x" }`))
				w.expectExit(exitRejected, "a 13-byte dispatch input under max_input_bytes 12")
				t.expectEffects("a dispatch refused by the input limit")
			},
		},
		&Check{
			ID: "CNF-AUTHZ-17", Level: conformance.Must, Requirements: []string{"AUZ-005", "AUZ-012", "WRK-060"},
			Needs: durable,
			Title: "a reconcile_operation that reuses a dispatch's request id is refused (status 5)",
			Run: func(t *T) {
				w := t.durableSession(0)
				dispatched := w.sendDispatch(toolDurable, "op-1", jsonPayload(`{"value":1}`))
				t.expectStatus("the status", succeededRecord("op-1", "1"), w.expectOperationResult(dispatched))
				w.send(protocol.ReconcileOperationMessage{Request: protocol.OperationReconcileRequest{
					ProtocolVersion: protocol.ProtocolVersion, SessionID: w.SessionID,
					RequestID: dispatched.RequestID, Tool: toolDurable, OperationKey: "op-1"}})
				w.expectExit(exitRejected, "a reconcile_operation under the dispatch's request id "+dispatched.RequestID)
			},
		},
	}
}
