package protocol

import (
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
)

const (
	invokeText  = `{"type":"invoke","invocation":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","payload":{"format":"text","value":"x"}}}`
	cancelText  = `{"type":"cancel","request":{"protocol_version":5,"session_id":"s","cancellation_id":"c","request_id":"r","tool":"t"}}`
	closeText   = `{"type":"close_session","protocol_version":5,"session_id":"s"}`
	grantText   = `{"tool":"t","format":"text","max_calls":1,"max_input_bytes":2,"max_output_bytes":3,"max_compensations":0,"resources":[]}`
	openText    = `{"type":"open_session","manifest":{"protocol_version":5,"session_id":"s","grants":[` + grantText + `]}}`
	opResult    = `{"type":"operation_result","result":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","operation_key":"k","status":{"state":"running"}}}`
	opSucceeded = `{"type":"operation_result","result":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","operation_key":"k","status":{"state":"succeeded","payload":{"format":"text","value":"x"}}}}`
)

func openWithGrant(grant string) string {
	return `{"type":"open_session","manifest":{"protocol_version":5,"session_id":"s","grants":[` + grant + `]}}`
}

func invokeWithPayload(payload string) string {
	return `{"type":"invoke","invocation":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","payload":` + payload + `}}`
}

type acceptCase struct {
	name     string
	in       string
	preserve string // canonical JSON after decoding, or "!" + error kind
	lossy    string // "" means the same as preserve
}

func runAcceptCases(t *testing.T, cases []acceptCase) {
	t.Helper()
	for _, tt := range cases {
		for _, mode := range bothModes {
			want := tt.preserve
			if mode == canonjson.Lossy && tt.lossy != "" {
				want = tt.lossy
			}
			got := outcome(DecodeMessage([]byte(tt.in), mode))
			if got != want {
				t.Errorf("%s (%v):\n  in   %s\n  got  %s\n  want %s", tt.name, mode, tt.in, got, want)
			}
		}
	}
}

const ser = "!Serialization"

// Spec: ENC-044, MSG-021, MSG-027
func TestDecodeUnknownFields(t *testing.T) {
	runAcceptCases(t, []acceptCase{
		{"unknown field in a non-deny struct is dropped",
			strings.Replace(invokeText, `"tool":"t"`, `"tool":"t","extra":{"a":[1]}`, 1), invokeText, ""},
		{"unknown field beside the tag and body is dropped",
			`{"x":1,` + invokeText[1:], invokeText, ""},
		{"unknown field in the payload object is dropped",
			invokeWithPayload(`{"format":"text","other":1,"value":"x"}`), invokeText, ""},
		{"unknown field in a deny struct (cancellation request) is an error",
			strings.Replace(cancelText, `"tool":"t"`, `"tool":"t","extra":1`, 1), ser, ""},
		{"the message body around a deny struct ignores unknown fields",
			strings.Replace(cancelText, `"request":`, `"extra":1,"request":`, 1), cancelText, ""},
		{"deny: dispatch request",
			`{"type":"dispatch_operation","request":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","operation_key":"k","payload":{"format":"json","value":{}},"x":1}}`, ser, ""},
		{"deny: compensation request",
			`{"type":"compensate_operation","request":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","operation_key":"k","compensation_key":"cmp-1","tenant_scope":"ten","grant_fingerprint":"` + strings.Repeat("a", 64) + `","payload":{"format":"json","value":{}},"x":1}}`, ser, ""},
		{"deny: compensation result",
			`{"type":"compensation_result","result":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","operation_key":"k","compensation_key":"cmp-1","tenant_scope":"ten","grant_fingerprint":"` + strings.Repeat("a", 64) + `","status":{"state":"running"},"x":1}}`, ser, ""},
		{"deny: cancellation result",
			`{"type":"cancellation_result","result":{"protocol_version":5,"session_id":"s","cancellation_id":"c","request_id":"r","tool":"t","outcome":"too_late","x":1}}`, ser, ""},
		{"no deny: reconcile request",
			`{"type":"reconcile_operation","request":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","operation_key":"k","x":1}}`,
			`{"type":"reconcile_operation","request":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","operation_key":"k"}}`, ""},
		{"no deny: operation result and a unit status with extra keys",
			strings.Replace(opResult, `{"state":"running"}`, `{"state":"running","payload":5}`, 1), opResult, ""},
		{"no deny: manifest and grant",
			openWithGrant(strings.Replace(grantText, `"tool":"t"`, `"tool":"t","x":[]`, 1)), openText, ""},
	})
}

// Spec: ENC-045, ENC-022
func TestDecodeDuplicates(t *testing.T) {
	runAcceptCases(t, []acceptCase{
		{"duplicate type tag", `{"type":"close_session",` + closeText[1:], ser, ""},
		{"duplicate body field", strings.Replace(closeText, `"session_id":"s"`, `"session_id":"s","session_id":"s"`, 1), ser, ""},
		{"duplicate field in a nested struct", strings.Replace(invokeText, `"tool":"t"`, `"tool":"t","tool":"t"`, 1), ser, ""},
		{"duplicate payload value", invokeWithPayload(`{"format":"text","value":"x","value":"x"}`), ser, ""},
		{"duplicate payload format", invokeWithPayload(`{"format":"text","value":"x","format":"text"}`), ser, ""},
		{"duplicate status tag", strings.Replace(opResult, `{"state":"running"}`, `{"state":"running","state":"running"}`, 1), ser, ""},
		{"duplicate keys inside a payload value: the last wins",
			invokeWithPayload(`{"format":"json","value":{"a":1,"b":2,"a":3}}`),
			invokeWithPayload(`{"format":"json","value":{"a":3,"b":2}}`), ""},
	})
}

// Spec: ENC-049, ENC-050
func TestDecodePositionalAndTagPlacement(t *testing.T) {
	runAcceptCases(t, []acceptCase{
		{"close_session as an array", `["close_session",5,"s"]`, closeText, ""},
		{"close_session array missing a field", `["close_session",5]`, ser, ""},
		{"close_session array with an extra element", `["close_session",5,"s",1]`, ser, ""},
		{"invoke with positional body, invocation and payload",
			`["invoke",[5,"s","r","t",["text","x"]]]`, invokeText, ""},
		{"payload as an array", invokeWithPayload(`["text","x"]`), invokeText, ""},
		{"payload array too long", invokeWithPayload(`["text","x","y"]`), ser, ""},
		{"grant leaves off its trailing default fields",
			openWithGrant(`["t","text",1,2,3]`), openText, ""},
		{"grant leaves off only resources",
			openWithGrant(`["t","text",1,2,3,0]`), openText, ""},
		{"grant array missing a required field", openWithGrant(`["t","text",1,2]`), ser, ""},
		{"grant array with an extra element", openWithGrant(`["t","text",1,2,3,0,[],1]`), ser, ""},
		{"type tag last", `{"protocol_version":5,"session_id":"s","type":"close_session"}`, closeText, ""},
		{"state tag last", strings.Replace(opSucceeded, `{"state":"succeeded","payload":{"format":"text","value":"x"}}`, `{"payload":{"format":"text","value":"x"},"state":"succeeded"}`, 1), opSucceeded, ""},
		{"value before format", invokeWithPayload(`{"value":"x","format":"text"}`), invokeText, ""},
		{"array message with the tag not first", `[5,"close_session","s"]`, ser, ""},
	})
}

// Spec: ENC-042, ENC-043
func TestDecodeIntegerFields(t *testing.T) {
	withMaxComp := func(v string) string {
		return openWithGrant(strings.Replace(grantText, `"max_compensations":0`, `"max_compensations":`+v, 1))
	}
	withCalls := func(v string) string {
		return openWithGrant(strings.Replace(grantText, `"max_calls":1`, `"max_calls":`+v, 1))
	}
	withVersion := func(v string) string {
		return strings.Replace(closeText, `"protocol_version":5`, `"protocol_version":`+v, 1)
	}
	runAcceptCases(t, []acceptCase{
		// -0 is an integer only in the buffered message body of an arbitrary_precision build.
		{"-0 in a message body", withMaxComp("-0"), openText, ser},
		{"-0 protocol version", withVersion("-0"), "!UnsupportedVersion", ser},
		{"5.0 is not an integer", withVersion("5.0"), ser, ""},
		{"5e0 is not an integer", withVersion("5e0"), ser, ""},
		{"a string is not an integer", withVersion(`"5"`), ser, ""},
		{"u16 maximum", withVersion("65535"), "!UnsupportedVersion", ""},
		{"u16 overflow", withVersion("65536"), ser, ""},
		{"u32 maximum", withCalls("4294967295"), strings.Replace(openText, `"max_calls":1`, `"max_calls":4294967295`, 1), ""},
		{"u32 overflow", withCalls("4294967296"), ser, ""},
		{"negative", withCalls("-1"), ser, ""},
		{"beyond u64", withCalls("18446744073709551616"), ser, ""},
		{"zero calls decodes and fails validation", withCalls("0"), "!InvalidGrant", ""},
	})
}

// Spec: ENC-023, ENC-051, MSG-006, MSG-027
func TestDecodeKeysAndSpellings(t *testing.T) {
	runAcceptCases(t, []acceptCase{
		{"tag key is case-sensitive", `{"Type":"close_session","protocol_version":5,"session_id":"s"}`, ser, ""},
		{"body key is case-sensitive", strings.Replace(invokeText, `"invocation"`, `"Invocation"`, 1), ser, ""},
		{"field key is case-sensitive", strings.Replace(invokeText, `"tool"`, `"Tool"`, 1), ser, ""},
		{"escaped key spellings match", `{"\u0074ype":"close_session","protocol_versio\u006e":5,"session_id":"s"}`, closeText, ""},
		{"escaped tag value matches", `{"type":"close\u005fsession","protocol_version":5,"session_id":"s"}`, closeText, ""},
		{"unknown type", `{"type":"close","protocol_version":5,"session_id":"s"}`, ser, ""},
		{"type spelled in camel case", `{"type":"closeSession","protocol_version":5,"session_id":"s"}`, ser, ""},
		{"non-string type", `{"type":11,"protocol_version":5,"session_id":"s"}`, ser, ""},
		{"null type", `{"type":null,"protocol_version":5,"session_id":"s"}`, ser, ""},
		{"missing type", `{"protocol_version":5,"session_id":"s"}`, ser, ""},
		{"message is not an object or array", `"close_session"`, ser, ""},
		{"format spelled in upper case", invokeWithPayload(`{"format":"Text","value":"x"}`), ser, ""},
		{"unknown resource kind", openWithGrant(strings.Replace(grantText, `"resources":[]`, `"resources":[{"kind":"FileRoot","id":"a"}]`, 1)), ser, ""},
		{"unknown outcome", `{"type":"cancellation_result","result":{"protocol_version":5,"session_id":"s","cancellation_id":"c","request_id":"r","tool":"t","outcome":"tooLate"}}`, ser, ""},
		{"pending is not a wire status", strings.Replace(opResult, `"running"`, `"pending"`, 1), ser, ""},
	})
}

// Spec: ENC-046, ENC-047, ENC-048, MSG-011
func TestDecodeDefaultsAndNulls(t *testing.T) {
	resources := func(v string) string {
		return openWithGrant(`{"tool":"t","format":"text","max_calls":1,"max_input_bytes":2,"max_output_bytes":3,"resources":` + v + `}`)
	}
	runAcceptCases(t, []acceptCase{
		{"missing max_compensations and resources take defaults",
			openWithGrant(`{"tool":"t","format":"text","max_calls":1,"max_input_bytes":2,"max_output_bytes":3}`), openText, ""},
		{"null resources", resources("null"), ser, ""},
		{"null max_compensations", openWithGrant(strings.Replace(grantText, `"max_compensations":0`, `"max_compensations":null`, 1)), ser, ""},
		{"missing required field", openWithGrant(`{"tool":"t","format":"text","max_calls":1,"max_input_bytes":2}`), ser, ""},
		{"null required string", strings.Replace(closeText, `"s"`, `null`, 1), ser, ""},
		{"repeated resources are deduplicated and sorted",
			resources(`[{"kind":"secret","id":"b"},{"kind":"file_root","id":"z"},{"kind":"secret","id":"b"},{"kind":"file_root","id":"a"}]`),
			openWithGrant(`{"tool":"t","format":"text","max_calls":1,"max_input_bytes":2,"max_output_bytes":3,"max_compensations":0,"resources":[{"kind":"file_root","id":"a"},{"kind":"file_root","id":"z"},{"kind":"secret","id":"b"}]}`), ""},
		{"a json payload may be null (invoke payloads are not checked)",
			invokeWithPayload(`{"format":"json","value":null}`), invokeWithPayload(`{"format":"json","value":null}`), ""},
		{"a text payload must be a string", invokeWithPayload(`{"format":"text","value":null}`), ser, ""},
		{"missing payload value", invokeWithPayload(`{"format":"json"}`), ser, ""},
		{"missing payload format", invokeWithPayload(`{"value":"x"}`), ser, ""},
	})
}

// Spec: ENC-024, ENC-028, ENC-031, ENC-036
func TestDecodePayloadNumbersFollowTheMode(t *testing.T) {
	runAcceptCases(t, []acceptCase{
		{"payload numbers", invokeWithPayload(`{"format":"json","value":[1.50,-0,1E2,1e16,18446744073709551616]}`),
			invokeWithPayload(`{"format":"json","value":[1.50,0,1e+2,1e+16,18446744073709551616]}`),
			invokeWithPayload(`{"format":"json","value":[1.5,-0.0,100.0,1e+16,1.8446744073709552e+19]}`)},
		{"out-of-range number in a payload", invokeWithPayload(`{"format":"json","value":[1e400]}`),
			invokeWithPayload(`{"format":"json","value":[1e+400]}`), ser},
		// serde buffers every member of a message body, so even an ignored member's numbers
		// go through the number model.
		{"out-of-range number in an ignored member", strings.Replace(closeText, `"session_id"`, `"x":1e400,"session_id"`, 1), closeText, ser},
	})
}

// serde decodes message bodies from a buffered copy (its Content type), which accepts a few
// more spellings than reading directly: a variant index for an internally tagged enum's tag, a
// single-key map for a unit enum ({"text":null}, and {"text":{}} when buffered). These cases
// were checked against serde 1.0.228 / serde_json 1.0.150 in both feature modes.
//
// Spec: ENC-050
func TestDecodeSerdeContentSpellings(t *testing.T) {
	runAcceptCases(t, []acceptCase{
		{"status tag as a variant index", strings.Replace(opSucceeded, `"state":"succeeded"`, `"state":1`, 1), opSucceeded, ""},
		{"status tag index out of range", strings.Replace(opSucceeded, `"state":"succeeded"`, `"state":4`, 1), ser, ""},
		{"format as a single-key map with null", invokeWithPayload(`{"format":{"text":null},"value":"x"}`), invokeText, ""},
		{"format as a single-key map with an empty map", invokeWithPayload(`{"format":{"text":{}},"value":"x"}`), invokeText, ""},
		{"positional payload with a variant index", invokeWithPayload(`[0,"x"]`), invokeText, ""},
		{"message type as a variant index is rejected (read directly)", `{"type":11,"protocol_version":5,"session_id":"s"}`, ser, ""},
	})
}

// Spec: MSG-033, ERR-005
func TestDecodeMessageSizeAndSyntax(t *testing.T) {
	big := make([]byte, MaxWireFrameBytes+1)
	for i := range big {
		big[i] = '!'
	}
	if _, err := DecodeMessage(big, canonjson.Preserve); !isKind(err, ErrWireFrameTooLarge) {
		t.Fatalf("oversized garbage: %v, want WireFrameTooLarge before parsing", err)
	}
	var pe *Error
	_, err := DecodeMessage(big, canonjson.Preserve)
	if !errorsAs(err, &pe) || pe.Actual != MaxWireFrameBytes+1 || pe.Maximum != MaxWireFrameBytes {
		t.Fatalf("WireFrameTooLarge fields: %+v", pe)
	}
	for _, in := range []string{``, `{`, `{"type":"close_session",}`, "\xef\xbb\xbf" + closeText, closeText + "x", "{\"type\":\"close_session\",\"protocol_version\":5,\"session_id\":\"s\x01\"}"} {
		if _, err := DecodeMessage([]byte(in), canonjson.Preserve); !isKind(err, ErrSerialization) {
			t.Errorf("DecodeMessage(%q): %v, want Serialization", in, err)
		}
	}
	// Whitespace around and between tokens, including a trailing CR, is fine.
	if _, err := DecodeMessage([]byte(" {\"type\" : \"close_session\",\n\"protocol_version\":5,\t\"session_id\":\"s\"}\r"), canonjson.Lossy); err != nil {
		t.Fatalf("whitespace: %v", err)
	}
}
