package worker

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// rejectedFrame is the body of a check that opens a baseline session, writes the line build
// makes as the next frame and expects the worker to end the session without an answer and with
// status 4.
func rejectedFrame(why string, build func(w *Worker) []byte) func(*T) {
	return exits(exitTransport, why, (*T).baseline, func(w *Worker) { w.writeLine(build(w)) })
}

// frameRequirements are cited by every check of a frame the worker must reject.
var frameRequirements = []string{"WRK-021", "WRK-023", "WRK-091", "WRK-092", "ERR-012", "ERR-013"}

func withFrameReqs(ids ...string) []string { return append(ids, frameRequirements...) }

// FrameChecks returns the checks of area FRAME: framing, authentication and the JSON-line transport.
func FrameChecks() []*Check {
	return []*Check{
		&Check{
			ID: "CNF-FRAME-01", Level: conformance.Must, Requirements: withFrameReqs("FRM-025", "FRM-014", "FRM-029"),
			Title: "a frame whose payload was altered after sealing is rejected without an answer",
			Run: rejectedFrame("an invoke whose text was changed after sealing", func(w *Worker) []byte {
				line := w.seal(w.invocation("req-1", toolTextEcho, text("hello")))
				return bytes.Replace(line, []byte(`"hello"`), []byte(`"hellp"`), 1)
			}),
		},
		&Check{
			ID: "CNF-FRAME-02", Level: conformance.Must, Requirements: withFrameReqs("FRM-025", "FRM-017"),
			Title: "a frame with one wrong tag digit is rejected without an answer",
			Run: rejectedFrame("an invoke with one tag digit changed", func(w *Worker) []byte {
				return flipTagDigit(w.seal(w.invocation("req-1", toolTextEcho, text("hello"))))
			}),
		},
		&Check{
			ID: "CNF-FRAME-03", Level: conformance.Must, Requirements: withFrameReqs("FRM-027", "FRM-014"),
			Title: "a frame sealed under another key is rejected without an answer",
			Run: rejectedFrame("an invoke sealed under another key", func(w *Worker) []byte {
				other := otherAuthenticator(w.t, w.SessionID, protocol.RoleHost, 2)
				defer other.Close()
				_, line, err := other.Seal(w.invocation("req-1", toolTextEcho, text("hello")))
				if err != nil {
					w.t.Internal(err)
				}
				return line
			}),
		},
		&Check{
			ID: "CNF-FRAME-04", Level: conformance.Must, Requirements: withFrameReqs("FRM-028", "FRM-008"),
			Title: "a host frame sealed with the worker role as sender is rejected without an answer",
			Run: rejectedFrame("an invoke sealed as sender \"worker\"", func(w *Worker) []byte {
				m := w.invocation("req-1", toolTextEcho, text("hello"))
				tag, err := protocol.ComputeTag(w.key, w.SessionID, protocol.RoleWorker, 2, m)
				if err != nil {
					w.t.Internal(err)
				}
				return protocol.Frame{Sequence: 2, Message: m, Tag: tag}.AppendJSON(nil)
			}),
		},
		&Check{
			ID: "CNF-FRAME-05", Level: conformance.Must, Requirements: withFrameReqs("FRM-028"),
			Title: "the worker's own answer reflected back to it is rejected",
			Run: func(t *T) {
				w := t.baseline()
				id := w.sendInvoke(toolTextEcho, text("mirror"))
				ev := w.next("a result for " + id)
				if ev.err != nil {
					t.Failf("a result for "+id, w.describeEnd(ev.err))
				}
				line := ev.line
				if _, err := w.host.Open(line); err != nil {
					t.Failf("a result the host can open", errorKind(err))
				}
				w.writeLine(line)
				w.expectExit(exitTransport, "its own result frame sent back")
			},
		},
		&Check{
			ID: "CNF-FRAME-06", Level: conformance.Must, Requirements: withFrameReqs("FRM-026"),
			Title: "a replayed frame is rejected: the first copy is answered, the second is not",
			Run: func(t *T) {
				w := t.baseline()
				id := w.nextRequestID()
				line := w.seal(w.invocation(id, toolTextEcho, text("once")))
				w.writeLine(line)
				t.expectPayload("the echo", text("once"), w.expectResult(id))
				w.writeLine(line)
				w.expectExit(exitTransport, "the same invoke frame a second time")
			},
		},
		&Check{
			ID: "CNF-FRAME-07", Level: conformance.Must, Requirements: withFrameReqs("FRM-026", "FRM-025"),
			Title: "a frame that skips a sequence number is rejected",
			Run: rejectedFrame("an invoke at sequence 3 where 2 is expected", func(w *Worker) []byte {
				return w.forge(3, w.invocation("req-1", toolTextEcho, text("gap")))
			}),
		},
		&Check{
			ID: "CNF-FRAME-08", Level: conformance.Must, Requirements: withFrameReqs("FRM-002"),
			Title: "a frame with sequence 0 is rejected",
			Run: rejectedFrame("an invoke at sequence 0", func(w *Worker) []byte {
				return w.forge(0, w.invocation("req-1", toolTextEcho, text("zero")))
			}),
		},
		&Check{
			ID: "CNF-FRAME-09", Level: conformance.Must, Requirements: withFrameReqs("FRM-027", "FRM-009"),
			Title: "a frame sealed for another session under the same key is rejected",
			Run: rejectedFrame("an invoke sealed by another session's authenticator", func(w *Worker) []byte {
				other := w.SessionID + "-other"
				raw, err := w.key.ExposeSecret()
				if err != nil {
					w.t.Internal(err)
				}
				key, err := protocol.NewSessionKey(raw[:])
				clear(raw[:])
				if err != nil {
					w.t.Internal(err)
				}
				defer key.Close()
				a, err := protocol.NewAuthenticator(other, key, protocol.RoleHost, canonjson.Preserve, protocol.WithSequences(2, 1))
				if err != nil {
					w.t.Internal(err)
				}
				defer a.Close()
				m := w.invocation("req-1", toolTextEcho, text("hello"))
				m.Invocation.SessionID = other
				_, line, err := a.Seal(m)
				if err != nil {
					w.t.Internal(err)
				}
				return line
			}),
		},
		&Check{
			ID: "CNF-FRAME-10", Level: conformance.Must, Requirements: withFrameReqs("FRM-027", "FRM-025", "MSG-028"),
			Title: "a correctly tagged frame whose message names another session is rejected",
			Run: rejectedFrame("an invoke for another session tagged under the worker's session", func(w *Worker) []byte {
				m := w.invocation("req-1", toolTextEcho, text("hello"))
				m.Invocation.SessionID = w.SessionID + "-other"
				return w.forge(2, m)
			}),
		},
		&Check{
			ID: "CNF-FRAME-11", Level: conformance.Must, Requirements: withFrameReqs("FRM-032", "FRM-003", "MSG-041"),
			Title: "a frame line longer than 1 MiB is rejected",
			Run: rejectedFrame("a 1 MiB + 200 byte invoke line", func(w *Worker) []byte {
				m := w.invocation("req-1", toolTextEcho, text(repeat("x", protocol.MaxWireFrameBytes+1)))
				tag := [protocol.AuthTagBytes]byte{}
				return protocol.Frame{Sequence: 2, Message: m, Tag: tag}.AppendJSON(nil)
			}),
		},
		&Check{
			ID: "CNF-FRAME-12", Level: conformance.Must, Requirements: withFrameReqs("FRM-032"),
			Title: "an over-long line is detected while reading, without waiting for its line feed",
			Run: func(t *T) {
				w := t.baseline()
				t.Logf("→ worker 1: 1,048,577 bytes of x without a line feed")
				w.write(bytes.Repeat([]byte("x"), protocol.MaxWireFrameBytes+1))
				// The input stays open: a reader that waits for the line feed never finishes.
				w.expectExit(exitTransport, "1 MiB + 1 bytes without a line feed (input left open)")
			},
		},
		&Check{
			ID: "CNF-FRAME-13", Level: conformance.Must, Requirements: withFrameReqs("FRM-034"),
			Title: "a complete frame without its line feed, then end of input, is not acted on",
			Run: exits(exitTransport, "a valid invoke without a line feed followed by end of input", (*T).baseline, func(w *Worker) {
				w.writeRaw(w.seal(w.invocation("req-1", toolTextEcho, text("no newline"))))
				w.closeInput()
			}),
		},
		&Check{
			ID: "CNF-FRAME-14", Level: conformance.Must, Requirements: withFrameReqs("FRM-003"),
			Title: "a line that is not JSON is rejected",
			Run:   rejectedFrame("a line of text", func(*Worker) []byte { return []byte("this is not a frame") }),
		},
		&Check{
			ID: "CNF-FRAME-15", Level: conformance.Must, Requirements: withFrameReqs("FRM-033"),
			Title: "a line that is not UTF-8 is rejected",
			Run:   rejectedFrame("a line of bytes that are not UTF-8", func(*Worker) []byte { return []byte("{\"sequence\":2,\xff\xfe}") }),
		},
		&Check{
			ID: "CNF-FRAME-16", Level: conformance.Must, Requirements: withFrameReqs("FRM-037"),
			Title: "an empty line is a frame that does not decode, not a line to skip",
			Run:   rejectedFrame("an empty line", func(*Worker) []byte { return nil }),
		},
		&Check{
			ID: "CNF-FRAME-17", Level: conformance.Must, Requirements: withFrameReqs("MSG-001"),
			Title: "a correctly tagged message with protocol_version 4 is rejected",
			Run: rejectedFrame("a version-4 invoke", func(w *Worker) []byte {
				m := w.invocation("req-1", toolTextEcho, text("v4"))
				m.Invocation.ProtocolVersion = 4
				return w.forge(2, m)
			}),
		},
		&Check{
			ID: "CNF-FRAME-18", Level: conformance.Must, Requirements: withFrameReqs("MSG-027", "MSG-025"),
			Title: "a message of an unknown type is rejected",
			Run: rejectedFrame(`a message of type "ping"`, func(w *Worker) []byte {
				return fmt.Appendf(nil, `{"sequence":2,"message":{"type":"ping","protocol_version":5,"session_id":%q},"auth_tag":"%s"}`, w.SessionID, repeat("0", 64))
			}),
		},
		&Check{
			ID: "CNF-FRAME-19", Level: conformance.Must, Requirements: withFrameReqs("FRM-016"),
			Title: "a tag written in uppercase hexadecimal is rejected",
			Run: rejectedFrame("an invoke whose correct tag is written in uppercase", func(w *Worker) []byte {
				line := w.seal(w.invocation("req-1", toolTextEcho, text("hello")))
				i := bytes.LastIndex(line, []byte(`"auth_tag":"`)) + len(`"auth_tag":"`)
				upper := strings.ToUpper(string(line[i : i+64]))
				if upper == string(line[i:i+64]) { // all digits: make one letter uppercase impossible; flip instead
					return flipTagDigit(line)
				}
				return append(append(bytes.Clone(line[:i]), upper...), line[i+64:]...)
			}),
		},
		&Check{
			ID: "CNF-FRAME-20", Unreachable: unreachableLibrary, Level: conformance.Must, Requirements: []string{"FRM-035", "FRM-031"},
			Title: "a frame line ending in CR LF is accepted",
			Run: func(t *T) {
				w := t.baseline()
				id := w.nextRequestID()
				w.writeRaw(append(w.seal(w.invocation(id, toolTextEcho, text("crlf"))), '\r', '\n'))
				t.expectPayload("the echo", text("crlf"), w.expectResult(id))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-FRAME-21", Unreachable: unreachableLibrary, Level: conformance.Must, Requirements: []string{"FRM-011", "FRM-010", "FRM-001", "ENC-044", "ENC-050"},
			Title: "a frame spelled non-canonically (spaces, member order, unknown members) is accepted",
			Run: func(t *T) {
				w := t.baseline()
				id := w.nextRequestID()
				// The tag covers the canonical form (FRM-010), whatever the spelling on the wire.
				tag, err := protocol.ComputeTag(w.key, w.SessionID, protocol.RoleHost, 2, w.invocation(id, toolTextEcho, text("spelling")))
				if err != nil {
					t.Internal(err)
				}
				line := fmt.Sprintf(`{ "auth_tag" : "%x", "note" : [1, {"x": null}],
					"message" : { "invocation" : { "payload" : { "value" : "spelling", "format" : "text", "extra": 1 },
					"tool" : %q, "request_id" : %q, "session_id" : %q, "protocol_version" : 5, "unknown" : true },
					"type" : "invoke" }, "sequence" : 2 }`, tag[:], toolTextEcho, id, w.SessionID)
				line = strings.NewReplacer("\n", " ", "\t", " ").Replace(line)
				w.writeLine([]byte(line))
				t.expectPayload("the echo", text("spelling"), w.expectResult(id))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-FRAME-22", Level: conformance.Must, Requirements: []string{"FRM-007", "FRM-008", "FRM-015", "FRM-019", "FRM-031", "WRK-023", "FRM-005"},
			Title: "answers are canonical frames tagged by the worker at outgoing sequences 1, 2, 3",
			Run: func(t *T) {
				w := t.baseline()
				for i := 1; i <= 3; i++ {
					id := w.sendInvoke(toolTextEcho, text(fmt.Sprintf("answer %d", i)))
					ev := w.next("a result for " + id)
					if ev.err != nil {
						t.Failf("a result for "+id, w.describeEnd(ev.err))
					}
					f, err := w.host.Open(ev.line)
					if err != nil {
						t.Failf(fmt.Sprintf("answer %d opens as worker frame %d", i, i), errorKind(err))
					}
					if f.Sequence != uint64(i) {
						t.Failf(fmt.Sprintf("answer at sequence %d", i), fmt.Sprintf("sequence %d", f.Sequence))
					}
					canonical, err := protocol.EncodeFrame(f)
					if err != nil {
						t.Failf("an answer that re-encodes", err.Error())
					}
					if !bytes.Equal(canonical, ev.line) {
						t.Failf("the canonical frame "+conformance.Clip(string(canonical), 200), conformance.Clip(string(ev.line), 200))
					}
				}
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-FRAME-23", Level: conformance.Must, Requirements: withFrameReqs("FRM-003", "FRM-031"),
			Title: "a line holding a frame followed by other text is rejected",
			Run: rejectedFrame("a valid invoke followed by ` x` on the same line", func(w *Worker) []byte {
				return append(w.seal(w.invocation("req-1", toolTextEcho, text("hello"))), " x"...)
			}),
		},
		&Check{
			ID: "CNF-FRAME-24", Level: conformance.Must, Requirements: withFrameReqs("FRM-031", "FRM-003"),
			Title: "two frames on one line are rejected",
			Run: rejectedFrame("two invoke frames on one line", func(w *Worker) []byte {
				a := w.seal(w.invocation("req-1", toolTextEcho, text("one")))
				b := w.seal(w.invocation("req-2", toolTextEcho, text("two")))
				return append(a, b...)
			}),
		},
		&Check{
			ID: "CNF-FRAME-25", Level: conformance.Must, Requirements: withFrameReqs("MSG-031", "MSG-040", "MSG-035", "MSG-036", "MSG-033"),
			Needs: durableEffects,
			Title: "a dispatch_operation whose JSON payload is a scalar or 33 levels deep does not decode (status 4)",
			Run: func(t *T) {
				for _, c := range []struct{ why, payload string }{
					{"a dispatch whose JSON payload is 5", `5`},
					{"a dispatch whose JSON payload is 33 nested arrays", nestedArrays(33, "")},
				} {
					w := t.durableSession(0)
					// A conforming sealer refuses these messages, so the frame is forged.
					req := w.dispatchRequest(w.nextRequestID(), toolDurable, "op-1", jsonPayload(c.payload))
					w.writeLine(w.forge(w.host.NextOutgoing(), protocol.DispatchOperationMessage{Request: req}))
					w.expectExit(exitTransport, c.why)
				}
				t.expectEffects("two dispatches that do not decode")
			},
		},
		&Check{
			ID: "CNF-FRAME-26", Unreachable: unreachableLibrary, Level: conformance.Must, Requirements: []string{"FRM-011", "FRM-010", "ENC-052", "ENC-023", "ENC-005"},
			Title: "a JSON payload spelled non-canonically (key order, spaces, escapes, a repeated key) is accepted and echoed canonically",
			Run: func(t *T) {
				w := t.baseline()
				id := w.nextRequestID()
				// The host tags the canonical form; the wire carries another spelling of the same
				// value. A worker that hashes the received payload text fails this frame.
				const canonical = `{"a":[1,"/"],"b":{"c":"A\n"},"z":0.5}`
				const spelled = `{ "z" : 0.5, "b" : { "c" : "\u0041\u000a" }, "a" : [ 0 ], "a" : [ 1, "\/" ] }`
				line := w.seal(w.invocation(id, toolJSONEcho, jsonPayload(canonical)))
				if !bytes.Contains(line, []byte(canonical)) {
					t.Internal(fmt.Errorf("the sealed line does not hold the canonical payload %s", canonical))
				}
				w.writeLine(bytes.Replace(line, []byte(canonical), []byte(spelled), 1))
				t.expectPayload("the canonical echo", jsonPayload(canonical), w.expectResult(id))
				w.endInput()
			},
		},
	}
}

// otherAuthenticator returns an authenticator under a fresh random key.
func otherAuthenticator(t *T, sessionID string, role protocol.Role, nextOut uint64) *protocol.Authenticator {
	key, err := protocol.GenerateSessionKey()
	if err != nil {
		t.Internal(err)
	}
	defer key.Close()
	a, err := protocol.NewAuthenticator(sessionID, key, role, canonjson.Preserve, protocol.WithSequences(nextOut, 1))
	if err != nil {
		t.Internal(err)
	}
	return a
}
