package worker

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"lukechampine.com/blake3"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// forgeRaw returns a frame line at sequence seq carrying message, a JSON text the protocol
// types cannot represent (an unknown format, an illegal key), with the tag a worker computes
// when it reads message as it stands: the tag input of FRM-007 over exactly these bytes.
func (w *Worker) forgeRaw(seq uint64, message string) []byte {
	input := `{"domain":"` + protocol.AuthDomain + `","protocol_version":5,"sender":"host","sequence":` +
		strconv.FormatUint(seq, 10) + `,"session_id":` + string(canonjson.AppendString(nil, w.SessionID)) +
		`,"message":` + message + `}`
	raw, err := w.key.ExposeSecret()
	if err != nil {
		w.t.Internal(err)
	}
	h := blake3.New(protocol.AuthTagBytes, raw[:])
	clear(raw[:])
	h.Write([]byte(input))
	return fmt.Appendf(nil, `{"sequence":%d,"message":%s,"auth_tag":"%x"}`, seq, message, h.Sum(nil))
}

// forgeReplaced forges, at the host's next sequence, the canonical form of m with its first
// old replaced by new, tagged over the result (see forgeRaw).
func (w *Worker) forgeReplaced(m protocol.Message, old, new string) []byte {
	msg := string(m.AppendJSON(nil))
	if !strings.Contains(msg, old) {
		w.t.Internal(fmt.Errorf("the %s message does not hold %s", m.Type(), old))
	}
	return w.forgeRaw(w.host.NextOutgoing(), strings.Replace(msg, old, new, 1))
}

// respell seals m and returns its line with the first canonical replaced by wire: the tag
// covers the canonical form, the wire carries another spelling.
func (w *Worker) respell(m protocol.Message, canonical, wire string) []byte {
	line := w.seal(m)
	if !bytes.Contains(line, []byte(canonical)) {
		w.t.Internal(fmt.Errorf("the sealed %s line does not hold %s", m.Type(), canonical))
	}
	return bytes.Replace(line, []byte(canonical), []byte(wire), 1)
}

// echoSpelled is the body of a check that sends a conf.json.echo invocation whose payload is
// canonical in the tag and spelled on the wire, and expects the canonical echo.
func echoSpelled(canonical, spelled string) func(*T) {
	return func(t *T) {
		w := t.session(jsonGrant(toolJSONEcho))
		id := w.nextRequestID()
		w.writeLine(w.respell(w.invocation(id, toolJSONEcho, jsonPayload(canonical)), canonical, spelled))
		t.expectPayload("the canonical echo", jsonPayload(canonical), w.expectResult(id))
		w.endInput()
	}
}

// refusedSpelling is the body of a check that sends an invoke of conf.text.echo whose
// invocation is respelled from canonical to wire, expects the rejection with status 4, and checks
// that a worker which accepted it would have been seen: it would answer the frame.
func refusedSpelling(why, canonical, wire string) func(*T) {
	open := func(t *T) *Worker { return t.session(textGrant(toolTextEcho)) }
	return exits(exitTransport, why, open, func(w *Worker) {
		w.writeLine(w.respell(w.invocation(w.nextRequestID(), toolTextEcho, text("spelled")), canonical, wire))
	})
}

// Spellings of the decoding checks.
const (
	// utf16Canonical holds a key that sorts before every other in UTF-8 byte order (U+E000,
	// bytes EE 80 80) but after U+1F600 in UTF-16 code units (DBxx... sorts before E000).
	utf16Canonical = "{\"\ue000\":1,\"\U0001F600\":2}"
	// numberCanonical and numberWire: the tag covers the Preserve normal forms of the tokens
	// the wire carries (ENC-024, ENC-025).
	numberCanonical = `{"a":1e+2,"b":1e+02,"c":0,"d":-5}`
	numberWire      = `{"a":1E2,"b":1e02,"c":-0,"d":-5}`
	// deepLevels is nested far beyond the 128 levels of ENC-021.
	deepLevels = 130
)

// DecodeChecks returns the checks of area DECODE: decoding bugs a port can plant, each shown by
// one frame whose tag covers the canonical form while the wire carries a legal other spelling,
// or an illegal spelling a lenient decoder would accept.
func DecodeChecks() []*Check {
	return []*Check{
		&Check{
			ID: "CNF-DECODE-01", Level: conformance.Must, Requirements: []string{"ENC-003", "FRM-010", "PRF-004"},
			Title: "object keys are ordered by UTF-8 bytes, not UTF-16 code units: U+E000 sorts before U+1F600",
			Run:   echoSpelled(utf16Canonical, "{\"\U0001F600\":2,\"\ue000\":1}"),
		},
		&Check{
			ID: "CNF-DECODE-02", Level: conformance.Should, Requirements: []string{"ENC-024", "ENC-025", "ENC-052", "FRM-010", "ENC-039"},
			Title: "numbers are normalized before the tag: the wire carries 1E2, 1e02 and -0, the tag covers 1e+2, 1e+02 and 0",
			Run:   echoSpelled(numberCanonical, numberWire),
		},
		&Check{
			ID: "CNF-DECODE-03", Level: conformance.Should, Requirements: []string{"ENC-026", "ENC-039", "FRM-010"},
			Title: `{"$serde_json::private::Number":"1E5"} is read as the number 1e+5 (Preserve mode)`,
			Run:   echoSpelled(`{"n":1e+5}`, `{"n":{"$serde_json::private::Number":"1E5"}}`),
		},
		&Check{
			ID: "CNF-DECODE-04", Level: conformance.Must, Requirements: []string{"ENC-044", "MSG-016", "MSG-021"},
			Needs: durable,
			Title: "a dispatch_operation with an unknown member is rejected (status 4: the structure denies unknown fields)",
			Run: exits(exitTransport, "a dispatch_operation with the unknown member x_extra", func(t *T) *Worker { return t.durableSession(0) }, func(w *Worker) {
				req := w.dispatchRequest(w.nextRequestID(), toolDurable, "op-1", jsonPayload(`{"mode":"fail"}`))
				w.writeLine(w.respell(protocol.DispatchOperationMessage{Request: req}, `"operation_key":`, `"x_extra":true,"operation_key":`))
			}),
		},
		&Check{
			ID: "CNF-DECODE-05", Level: conformance.Must, Requirements: []string{"ENC-045"},
			Title: "a structure with a repeated field is rejected (status 4)",
			Run: refusedSpelling("an invocation naming its tool twice",
				`"tool":"conf.text.echo"`, `"tool":"conf.text.echo","tool":"conf.text.echo"`),
		},
		&Check{
			ID: "CNF-DECODE-06", Level: conformance.Must, Requirements: []string{"ENC-042"},
			Title: "5.0 is not an integer: an invocation with protocol_version 5.0 is rejected (status 4)",
			Run:   refusedSpelling("an invocation with protocol_version 5.0", `"protocol_version":5,`, `"protocol_version":5.0,`),
		},
		&Check{
			ID: "CNF-DECODE-07", Level: conformance.Should, Requirements: []string{"ENC-043", "ENC-039"},
			Title: "the integer -0 inside a message body reads as 0: a manifest with max_compensations -0 opens (Preserve mode)",
			Run: func(t *T) {
				w := t.launch()
				w.bootstrap()
				w.writeLine(w.respell(protocol.OpenSessionMessage{Manifest: w.manifest(textGrant(toolTextEcho))}, `"max_compensations":0`, `"max_compensations":-0`))
				t.expectPayload("the echo", text("minus zero"), w.invoke(toolTextEcho, text("minus zero")))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-DECODE-08", Level: conformance.Must, Requirements: []string{"ENC-049", "FRM-010", "FRM-011"},
			Title: "a structure in positional (array) form is accepted: an invocation written as an array is answered",
			Run: func(t *T) {
				w := t.session(textGrant(toolTextEcho))
				id := w.nextRequestID()
				m := w.invocation(id, toolTextEcho, text("positional"))
				object := string(m.Invocation.AppendJSON(nil))
				positional := fmt.Sprintf(`[5,%q,%q,%q,{"format":"text","value":"positional"}]`, w.SessionID, id, toolTextEcho)
				w.writeLine(w.respell(m, object, positional))
				t.expectPayload("the echo", text("positional"), w.expectResult(id))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-DECODE-09", Level: conformance.Must, Requirements: []string{"ENC-021", "ENC-044"},
			Title: "nesting is limited to 128 levels inside a message body, also in an ignored unknown member (status 4)",
			Run: refusedSpelling(fmt.Sprintf("an invocation with an unknown member nested %d levels deep", deepLevels),
				`"tool":`, `"x_deep":`+nestedArrays(deepLevels, "")+`,"tool":`),
		},
		&Check{
			ID: "CNF-DECODE-10", Level: conformance.Must, Requirements: []string{"ENC-004", "ENC-048", "FRM-010", "FRM-011"},
			Title: "an open_session whose resource selectors arrive unsorted opens: the tag covers the sorted set",
			Run: func(t *T) {
				w := t.launch()
				w.bootstrap()
				g := withSelectors(textGrant(toolTextEcho), 2)
				sorted := `[{"kind":"secret","id":"secret-00"},{"kind":"secret","id":"secret-01"}]`
				unsorted := `[{"kind":"secret","id":"secret-01"},{"kind":"secret","id":"secret-00"}]`
				w.writeLine(w.respell(protocol.OpenSessionMessage{Manifest: w.manifest(g)}, sorted, unsorted))
				t.expectPayload("the echo", text("unsorted"), w.invoke(toolTextEcho, text("unsorted")))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-DECODE-11", Level: conformance.Must, Requirements: []string{"FRM-012", "FRM-013"},
			Needs: durable,
			Title: "a frame line within 1 MiB whose tag input exceeds 1 MiB is rejected (status 4)",
			Run: func(t *T) {
				w := t.session(protocol.CapabilityGrant{Tool: toolDurable, Format: protocol.FormatJSON, MaxCalls: 10, MaxInputBytes: 2 << 20, MaxOutputBytes: 64 << 10})
				seq := w.host.NextOutgoing()
				head := w.dispatchRequest(w.nextRequestID(), toolDurable, "op-big", jsonPayload(`{"mode":"fail","value":"x"}`))
				probe := string(protocol.DispatchOperationMessage{Request: head}.AppendJSON(nil))
				// Fill the value so that the line is a few bytes under the cap.
				lineOverhead := len(w.forgeRaw(seq, probe)) - len(probe)
				fill := protocol.MaxWireFrameBytes - 8 - lineOverhead - len(probe) + 1
				message := strings.Replace(probe, `"value":"x"`, `"value":"`+strings.Repeat("x", fill)+`"`, 1)
				line := w.forgeRaw(seq, message)
				if len(line) > protocol.MaxWireFrameBytes {
					t.Internal(fmt.Errorf("the forged line has %d bytes", len(line)))
				}
				w.writeLine(line)
				w.expectExit(exitTransport, fmt.Sprintf("a %d-byte frame line whose tag input is over 1 MiB", len(line)))
			},
		},
		&Check{
			ID: "CNF-DECODE-12", Level: conformance.Must, Requirements: []string{"ENC-049", "ENC-050", "FRM-010", "FRM-011"},
			Needs: durable,
			Title: "a tool payload in positional form [format, value] is accepted: text and json invocations and a dispatch are answered",
			Run: func(t *T) {
				w := t.session(textGrant(toolTextEcho), jsonGrant(toolJSONEcho), durableGrant(0))
				for _, c := range []struct {
					tool string
					p    protocol.ToolPayload
					wire string
				}{
					{toolTextEcho, text("positional"), `["text","positional"]`},
					{toolJSONEcho, jsonPayload(`{"a":[1,"b"]}`), `["json",{"a":[1,"b"]}]`},
				} {
					id := w.nextRequestID()
					w.writeLine(w.respell(w.invocation(id, c.tool, c.p), payloadText(c.p), c.wire))
					t.expectPayload("the echo of a positional payload", c.p, w.expectResult(id))
				}
				p := jsonPayload(`{"value":7}`)
				req := w.dispatchRequest(w.nextRequestID(), toolDurable, "op-pos", p)
				w.writeLine(w.respell(protocol.DispatchOperationMessage{Request: req}, payloadText(p), `["json",{"value":7}]`))
				t.expectStatus("the status of a dispatch with a positional payload", succeededRecord("op-pos", "7"), w.expectOperationResult(req))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-DECODE-13", Level: conformance.Must, Requirements: []string{"ENC-049", "MAN-001", "FRM-010", "FRM-011"},
			Title: "a manifest, its grants and their selectors in positional form, trailing defaults left out, open a session",
			Run: func(t *T) {
				w := t.launch()
				w.bootstrap()
				echo := textGrant(toolTextEcho)
				echo.Resources = []protocol.ResourceSelector{{Kind: protocol.ResourceFileRoot, ID: "conf.root"}}
				m := w.manifest(echo, jsonGrant(toolJSONEcho))
				canonical := string(m.AppendJSON(nil))
				positional := fmt.Sprintf(`[5,%q,[["conf.text.echo","text",100,65536,65536,0,[["file_root","conf.root"]]],["conf.json.echo","json",100,65536,65536]]]`, w.SessionID)
				w.writeLine(w.respell(protocol.OpenSessionMessage{Manifest: m}, canonical, positional))
				t.expectPayload("the echo in a session opened by a positional manifest", text("opened"), w.invoke(toolTextEcho, text("opened")))
				w.endInput()
			},
		},
	}
}
