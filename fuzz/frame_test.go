package fuzz

import (
	"bytes"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// frameSeeds are frame lines of reference anchors A1-A4 (docs/reference-anchors.md;
// key 32 x 0x07, session "session-1") and near misses of them.
var frameSeeds = []string{
	`{"sequence":1,"message":{"type":"open_session","manifest":{"protocol_version":5,"session_id":"session-1","grants":[{"tool":"text.echo","format":"text","max_calls":1,"max_input_bytes":16384,"max_output_bytes":65536,"max_compensations":0,"resources":[]}]}},"auth_tag":"c245f7bb012c51fb328dd620b870798900db933a7a747c22ef4bf04e2cc32bc2"}`,
	"{\"sequence\":2,\"message\":{\"type\":\"invoke\",\"invocation\":{\"protocol_version\":5,\"session_id\":\"session-1\",\"request_id\":\"request-1\",\"tool\":\"text.echo\",\"payload\":{\"format\":\"text\",\"value\":\"hi \\\"there\\\"\\n\xc3\xa9\"}}},\"auth_tag\":\"70209704d1ff86ee58dfad32edcb35e016cdcd8f164ee4ccaede013517f8d464\"}",
	`{"sequence":1,"message":{"type":"result","result":{"protocol_version":5,"session_id":"session-1","request_id":"request-1","payload":{"format":"text","value":"ok"}}},"auth_tag":"c17e3e50b056e4000bf1dcc6f32ceec63297441803f6547538a6ee7c28477273"}`,
	"{\"sequence\":2,\"message\":{\"type\":\"dispatch_operation\",\"request\":{\"protocol_version\":5,\"session_id\":\"session-1\",\"request_id\":\"dispatch-1\",\"tool\":\"math.add\",\"operation_key\":\"op-7\",\"payload\":{\"format\":\"json\",\"value\":{\"\":true,\"B\":null,\"a\":[1e+16,100,-0.0,1.5e-7,18446744073709551615,-42],\"z\":0.1,\"\xc3\xa9\":\"\\u0001\x7f/<>\"}}}},\"auth_tag\":\"148b5385a523fa46ecb687094ddc6aa2a52ee9965479863441d21496b5c2dc28\"}",
	`{"sequence":1,"message":{"type":"close_session","protocol_version":5,"session_id":"session-1"},"auth_tag":"0000000000000000000000000000000000000000000000000000000000000000"}`,
	`[3,["close_session",5,"s"],"0000000000000000000000000000000000000000000000000000000000000000"]`,
	`{"sequence":0,"message":{"type":"close_session","protocol_version":5,"session_id":"s"},"auth_tag":"00"}`,
	`{"sequence":1,"message":{"type":"close_session","protocol_version":5,"session_id":"s"},"auth_tag":"ABCDEF0000000000000000000000000000000000000000000000000000000000"}`,
	`{"sequence":1,"message":{"type":"invoke","invocation":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","payload":{"value":{"n":1.50,"m":[1e2,-0,1e400]},"format":"json"}}},"auth_tag":"0000000000000000000000000000000000000000000000000000000000000000","extra":null}`,
	`{"sequence":1,"message":{"type":"operation_result","result":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","operation_key":"k","status":{"state":"failed","message":"boom"}}},"auth_tag":"0000000000000000000000000000000000000000000000000000000000000000"}`,
	`{"sequence":18446744073709551615,"message":{"type":"cancel","request":{"protocol_version":5,"session_id":"s","cancellation_id":"c","request_id":"r","tool":"t"}},"auth_tag":"0000000000000000000000000000000000000000000000000000000000000000"}`,
	"", "{", "null", "\n", "{\"sequence\":1}\r",
}

// FuzzDecodeFrame checks the frame decoder on arbitrary lines in both number
// modes: it never panics, every error is a protocol error kind, and a
// decoded frame re-encodes canonically to a fixed point (decode, encode,
// decode, encode gives the same bytes). In Lossy mode the fixed point is
// required when every number of the encoding is portable; otherwise the
// encoding must still decode (Lossy float reading is not exact).
//
// Spec: FRM-001, FRM-002, FRM-003, FRM-005, ERR-017
func FuzzDecodeFrame(f *testing.F) {
	for _, s := range frameSeeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	addModalSeeds(f, frameLineSeeds(f))
	f.Fuzz(func(t *testing.T, line []byte, lossy bool) {
		mode := canonjson.Preserve
		if lossy {
			mode = canonjson.Lossy
		}
		frame, err := protocol.DecodeFrame(line, mode)
		if err != nil {
			if _, ok := protocol.KindOf(err); !ok {
				t.Fatalf("error outside the protocol kinds: %v", err)
			}
			return
		}
		first, err := protocol.EncodeFrame(frame)
		if err != nil {
			// Only growth past the limit can make a decoded frame unencodable.
			if k, _ := protocol.KindOf(err); k != protocol.ErrWireFrameTooLarge {
				t.Fatalf("decoded frame does not encode: %v", err)
			}
			return
		}
		again, err := protocol.DecodeFrame(first, mode)
		if err != nil {
			t.Fatalf("canonical encoding %q does not decode: %v", first, err)
		}
		second, err := protocol.EncodeFrame(again)
		if err != nil {
			t.Fatalf("second encoding: %v", err)
		}
		if bytes.Equal(first, second) {
			return
		}
		if mode == canonjson.Lossy {
			v, err := canonjson.ParseValue(first, canonjson.Preserve)
			if err != nil || canonjson.CheckPortable(v) != nil {
				return // a non-portable float may move by one ulp per Lossy round
			}
		}
		t.Fatalf("%v: not a fixed point:\n%q\n%q", mode, first, second)
	})
}
