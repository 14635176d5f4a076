package fuzz

import (
	"bytes"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// messageHandSeeds are the messages recorded from the Rust reference (reference anchors A1 to A4,
// docs/reference-anchors.md) and the close_session example of MSG-026, one message of every
// kind, and the alternative spellings serde accepts (positional arrays, tags anywhere, escaped
// keys, variant indexes, unknown members).
var messageHandSeeds = []string{
	`{"type":"open_session","manifest":{"protocol_version":5,"session_id":"session-1","grants":[{"tool":"text.echo","format":"text","max_calls":1,"max_input_bytes":16384,"max_output_bytes":65536,"max_compensations":0,"resources":[]}]}}`,
	"{\"type\":\"invoke\",\"invocation\":{\"protocol_version\":5,\"session_id\":\"session-1\",\"request_id\":\"request-1\",\"tool\":\"text.echo\",\"payload\":{\"format\":\"text\",\"value\":\"hi \\\"there\\\"\\n\xc3\xa9\"}}}",
	`{"type":"result","result":{"protocol_version":5,"session_id":"session-1","request_id":"request-1","payload":{"format":"text","value":"ok"}}}`,
	"{\"type\":\"dispatch_operation\",\"request\":{\"protocol_version\":5,\"session_id\":\"session-1\",\"request_id\":\"dispatch-1\",\"tool\":\"math.add\",\"operation_key\":\"op-7\",\"payload\":{\"format\":\"json\",\"value\":{\"\":true,\"B\":null,\"a\":[1e+16,100,-0.0,1.5e-7,18446744073709551615,-42],\"z\":0.1,\"\xc3\xa9\":\"\\u0001\x7f/<>\"}}}}",
	`{"type":"close_session","protocol_version":5,"session_id":"session-1"}`,
	`{"type":"operation_result","result":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","operation_key":"k","status":{"state":"succeeded","payload":{"format":"json","value":[1.50,1E2,-0]}}}}`,
	`{"type":"compensate_operation","request":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","operation_key":"k","compensation_key":"cmp-","tenant_scope":"ten","grant_fingerprint":"b4586b43cee35f3490e1be033cf424c5d927417c4e5af7cd685123764a8c8be9","payload":{"format":"json","value":{"undo":"release"}}}}`,
	`{"type":"compensation_result","result":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","operation_key":"k","compensation_key":"cmp-1","tenant_scope":"ten","grant_fingerprint":"b4586b43cee35f3490e1be033cf424c5d927417c4e5af7cd685123764a8c8be9","status":{"state":"failed","message":"boom"}}}`,
	`{"type":"reconcile_operation","request":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","operation_key":"k"}}`,
	`{"type":"reconciled_operation","result":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","operation_key":"k","status":{"state":"cancelled","payload":5}}}`,
	`{"type":"cancel","request":{"protocol_version":5,"session_id":"s","cancellation_id":"c","request_id":"r","tool":"t"}}`,
	`{"type":"cancellation_result","result":{"protocol_version":5,"session_id":"s","cancellation_id":"c","request_id":"r","tool":"t","outcome":"too_late"}}`,
	`["close_session",5,"s"]`,
	`["invoke",[5,"s","r","t",["json",{"b":1,"a":[2,{"$serde_json::private::Number":"1E5"}]}]]]`,
	`{"protocol_version":-0,"session_id":"s","type":"close_session","x":[1e400]}`,
	`{"\u0074ype":"open_session","manifest":[5,"s",[["t","json",1,2,3,-0,[{"kind":{"secret":{}},"id":"k"},{"kind":"secret","id":"k"}]]]]}`,
	`{"type":"operation_result","result":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","operation_key":"k","status":{"payload":[1,{"a":1}],"state":1}}}`,
	`{"type":"invoke","invocation":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","payload":{"value":{"a":1,"a":2},"format":"json","value":3}}}`,
	`{"type":"cancel","request":{"protocol_version":5,"session_id":"s","cancellation_id":"r","request_id":"r","tool":"t"}}`,
	"", "{}", "[]", "null", `{"type":"nope"}`,
}

// FuzzDecodeMessage checks the message decoder on arbitrary input in both number modes: it
// never panics, every error is a protocol error kind, an accepted message encodes, and the
// encoding is a fixed point: decoding it again in the same mode gives the same bytes. In Lossy
// mode a non-portable float may move by one ulp per round, so there the fixed point is
// required only when every number of the encoding is portable. (A Lossy encoding is not
// always a Preserve fixed point: an object whose first key is
// "$serde_json::private::Number" is a number to a Preserve reader.) The seeds are the hand
// seeds above in both modes and every message of the vectors in its group's mode
// (messageJSONSeeds).
//
// Spec: MSG-033, MSG-034, ENC-044, ENC-049, ERR-017
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range messageHandSeeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	addModalSeeds(f, messageJSONSeeds(f))
	f.Fuzz(func(t *testing.T, data []byte, lossy bool) {
		mode := canonjson.Preserve
		if lossy {
			mode = canonjson.Lossy
		}
		m, err := protocol.DecodeMessage(data, mode)
		if err != nil {
			if _, ok := protocol.KindOf(err); !ok {
				t.Fatalf("error outside the protocol kinds: %v", err)
			}
			return
		}
		first, err := protocol.EncodeMessage(m)
		if err != nil {
			// Only Lossy growth past the limit (1e2 becomes 100.0) can make an accepted
			// message unencodable.
			if k, _ := protocol.KindOf(err); k != protocol.ErrWireFrameTooLarge {
				t.Fatalf("decoded message does not encode: %v", err)
			}
			return
		}
		q, err := protocol.DecodeMessage(first, mode)
		if err != nil {
			t.Fatalf("canonical encoding %q does not decode in %v mode: %v", first, mode, err)
		}
		if q.Type() != m.Type() || q.SessionID() != m.SessionID() {
			t.Fatalf("type or session changed: %s/%s vs %s/%s", m.Type(), m.SessionID(), q.Type(), q.SessionID())
		}
		second := q.AppendJSON(nil)
		if bytes.Equal(first, second) {
			return
		}
		if mode == canonjson.Lossy {
			v, err := canonjson.ParseValue(first, canonjson.Preserve)
			if err != nil || canonjson.CheckPortable(v) != nil {
				return
			}
		}
		t.Fatalf("%v: not a fixed point:\n%q\n%q", mode, first, second)
	})
}
