package protocol

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
)

// The expectations in this file are outputs recorded by running the Rust reference
// (reference anchors A1 to A7 and A-CANON in docs/reference-anchors.md); none is computed by
// the code under test. A name with "vector" and a number N refers to anchor AN.

var bothModes = []canonjson.Mode{canonjson.Preserve, canonjson.Lossy}

const (
	vector1Message = `{"type":"open_session","manifest":{"protocol_version":5,"session_id":"session-1","grants":[{"tool":"text.echo","format":"text","max_calls":1,"max_input_bytes":16384,"max_output_bytes":65536,"max_compensations":0,"resources":[]}]}}`
	vector1Tag     = "c245f7bb012c51fb328dd620b870798900db933a7a747c22ef4bf04e2cc32bc2"
	vector2Message = "{\"type\":\"invoke\",\"invocation\":{\"protocol_version\":5,\"session_id\":\"session-1\",\"request_id\":\"request-1\",\"tool\":\"text.echo\",\"payload\":{\"format\":\"text\",\"value\":\"hi \\\"there\\\"\\n\xc3\xa9\"}}}"
	vector3Message = `{"type":"result","result":{"protocol_version":5,"session_id":"session-1","request_id":"request-1","payload":{"format":"text","value":"ok"}}}`
	vector4Message = "{\"type\":\"dispatch_operation\",\"request\":{\"protocol_version\":5,\"session_id\":\"session-1\",\"request_id\":\"dispatch-1\",\"tool\":\"math.add\",\"operation_key\":\"op-7\",\"payload\":{\"format\":\"json\",\"value\":{\"\":true,\"B\":null,\"a\":[1e+16,100,-0.0,1.5e-7,18446744073709551615,-42],\"z\":0.1,\"\xc3\xa9\":\"\\u0001\x7f/<>\"}}}}"
	vector4Tag     = "148b5385a523fa46ecb687094ddc6aa2a52ee9965479863441d21496b5c2dc28"
)

// Spec: MSG-025, ENC-001, ENC-002, ENC-005, ENC-006, ENC-007, MSG-010, MSG-014
func TestVectorMessagesReserializeByteExact(t *testing.T) {
	for _, msg := range []string{vector1Message, vector2Message, vector3Message, vector4Message} {
		for _, mode := range bothModes {
			m, err := DecodeMessage([]byte(msg), mode)
			if err != nil {
				t.Fatalf("%v: DecodeMessage(%s): %v", mode, msg, err)
			}
			if got := string(m.AppendJSON(nil)); got != msg {
				t.Errorf("%v: re-serialization\n got %s\nwant %s", mode, got, msg)
			}
			enc, err := EncodeMessage(m)
			if err != nil || string(enc) != msg {
				t.Errorf("%v: EncodeMessage = %s, %v", mode, enc, err)
			}
		}
	}
}

// Spec: FRM-001, FRM-006, FRM-015
func TestVectorFrameLinesReserializeByteExact(t *testing.T) {
	for _, tt := range []struct {
		seq string
		msg string
		tag string
	}{
		{"1", vector1Message, vector1Tag},
		{"2", vector4Message, vector4Tag},
	} {
		line := `{"sequence":` + tt.seq + `,"message":` + tt.msg + `,"auth_tag":"` + tt.tag + `"}`
		for _, mode := range bothModes {
			f, err := DecodeFrame([]byte(line), mode)
			if err != nil {
				t.Fatalf("%v: DecodeFrame: %v", mode, err)
			}
			if hex.EncodeToString(f.Tag[:]) != tt.tag {
				t.Errorf("%v: tag %x, want %s", mode, f.Tag, tt.tag)
			}
			enc, err := EncodeFrame(f)
			if err != nil || string(enc) != line {
				t.Errorf("%v: EncodeFrame\n got %s (%v)\nwant %s", mode, enc, err, line)
			}
			// A frame line is 102 + (sequence digits) bytes longer than its message.
			if len(enc)-len(tt.msg) != 102+len(tt.seq) {
				t.Errorf("frame overhead %d, want %d", len(enc)-len(tt.msg), 102+len(tt.seq))
			}
		}
	}
}

// Spec: MSG-038, FP-003, FP-007, FP-008, FP-012
func TestVector4PayloadSizeAndFingerprint(t *testing.T) {
	for _, mode := range bothModes {
		m, err := DecodeMessage([]byte(vector4Message), mode)
		if err != nil {
			t.Fatal(err)
		}
		p := m.(DispatchOperationMessage).Request.Payload
		n, err := p.ValidateFor(FormatJSON)
		if err != nil || n != 97 {
			t.Errorf("%v: ValidateFor = %d, %v; want 97", mode, n, err)
		}
		b, err := CanonicalOperationInputBytes(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(b[:12]); got != "6a736f6e"+"0000000000000061" {
			t.Errorf("%v: canonical prefix %s", mode, got)
		}
		if len(b) != 12+97 {
			t.Errorf("%v: canonical length %d, want %d", mode, len(b), 12+97)
		}
		fp, err := OperationInputFingerprint(p)
		if err != nil || fp != "0863df8e1f3ba253e930752934309d977cdd44d9641dbfdfbed5f1267ea0995b" {
			t.Errorf("%v: fingerprint %s, %v", mode, fp, err)
		}
	}
}

const vector5Grant = `{"tool":"release.publish","format":"json","max_calls":1,"max_input_bytes":16384,"max_output_bytes":65536,"max_compensations":1,"resources":[{"kind":"file_root","id":"aa"},{"kind":"file_root","id":"zz"},{"kind":"network_origin","id":"release-api"},{"kind":"secret","id":"release-token"}]}`

const vector5Fingerprint = "b4586b43cee35f3490e1be033cf424c5d927417c4e5af7cd685123764a8c8be9"

// Spec: FP-015, FP-016, FP-017, ENC-004, MSG-007
func TestVector5CompensationFingerprint(t *testing.T) {
	// The same grant with its resources out of order and repeated: a set is written sorted
	// and deduplicated, so the fingerprint is unchanged.
	scrambled := `{"resources":[{"kind":"secret","id":"release-token"},{"kind":"file_root","id":"zz"},{"kind":"network_origin","id":"release-api"},{"kind":"file_root","id":"aa"},{"kind":"secret","id":"release-token"}],"tool":"release.publish","format":"json","max_calls":1,"max_input_bytes":16384,"max_output_bytes":65536,"max_compensations":1}`
	g, err := DecodeCapabilityGrant([]byte(scrambled))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(g.AppendJSON(nil)); got != vector5Grant {
		t.Fatalf("grant JSON\n got %s\nwant %s", got, vector5Grant)
	}
	fp, err := g.CompensationFingerprint()
	if err != nil || fp != vector5Fingerprint {
		t.Fatalf("CompensationFingerprint = %s, %v", fp, err)
	}
	// Built directly, in a different slice order.
	built := JSONGrant("release.publish")
	built.MaxCompensations = 1
	built.Resources = []ResourceSelector{
		{ResourceSecret, "release-token"}, {ResourceNetworkOrigin, "release-api"},
		{ResourceFileRoot, "zz"}, {ResourceFileRoot, "aa"},
	}
	if fp, err := built.CompensationFingerprint(); err != nil || fp != vector5Fingerprint {
		t.Fatalf("built grant fingerprint = %s, %v", fp, err)
	}
}

// Spec: FP-018
func TestCompensationFingerprintCoversEveryField(t *testing.T) {
	base, err := DecodeCapabilityGrant([]byte(vector5Grant))
	if err != nil {
		t.Fatal(err)
	}
	changes := map[string]func(*CapabilityGrant){
		"tool":              func(g *CapabilityGrant) { g.Tool = "release.publish2" },
		"format":            func(g *CapabilityGrant) { g.Format = FormatText },
		"max_calls":         func(g *CapabilityGrant) { g.MaxCalls = 2 },
		"max_input_bytes":   func(g *CapabilityGrant) { g.MaxInputBytes = 1 },
		"max_output_bytes":  func(g *CapabilityGrant) { g.MaxOutputBytes = 1 },
		"max_compensations": func(g *CapabilityGrant) { g.MaxCompensations = 0 },
		"resources":         func(g *CapabilityGrant) { g.Resources = g.Resources[1:] },
	}
	for name, change := range changes {
		g := base
		g.Resources = append([]ResourceSelector(nil), base.Resources...)
		change(&g)
		fp, err := g.CompensationFingerprint()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if fp == vector5Fingerprint {
			t.Errorf("changing %s did not change the fingerprint", name)
		}
	}
	// An invalid grant has no fingerprint: validation runs first.
	bad := base
	bad.MaxCalls = 0
	if _, err := bad.CompensationFingerprint(); !isKind(err, ErrInvalidGrant) {
		t.Errorf("invalid grant: %v, want InvalidGrant", err)
	}
}

// Spec: FP-002, FP-006
func TestVector6TextCanonicalBytes(t *testing.T) {
	b, err := CanonicalOperationInputBytes(TextPayload("h\u00e9llo"))
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(b); got != "74657874"+"0000000000000006"+"68c3a96c6c6f" {
		t.Fatalf("canonical bytes %s", got)
	}
}

// Spec: FP-003, FP-004, FP-007, FP-008
func TestVector7InputFingerprints(t *testing.T) {
	for _, tt := range []struct{ payload, canonical, fingerprint string }{
		{`{"b":[1,{"z":1,"a":"x"}],"a":null,"B":true}`, `{"B":true,"a":null,"b":[1,{"a":"x","z":1}]}`,
			"47a67a884b85e9385cedfd6cb717c9ff4f361ac2fee1f2085096df0902e4936d"},
		{`{"undo":"release"}`, `{"undo":"release"}`,
			"5cc121e4a0ce2f79ae6b83397eb4f81a66bf12a9b1fe5836835a8118de24d578"},
	} {
		for _, mode := range bothModes {
			v, err := canonjson.ParseValue([]byte(tt.payload), mode)
			if err != nil {
				t.Fatal(err)
			}
			p := JSONPayload(v)
			b, err := CanonicalOperationInputBytes(p)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(b, []byte("json")) || string(b[12:]) != tt.canonical {
				t.Errorf("%v: canonical bytes %q", mode, b)
			}
			if got := hex.EncodeToString(b[4:12]); got != "00000000000000"+hex.EncodeToString([]byte{byte(len(tt.canonical))}) {
				t.Errorf("%v: length prefix %s", mode, got)
			}
			fp, err := OperationInputFingerprint(p)
			if err != nil || fp != tt.fingerprint {
				t.Errorf("%v: fingerprint %s, %v; want %s", mode, fp, err, tt.fingerprint)
			}
		}
	}
}

// Spec: FP-001, FP-009
func TestFingerprintValidatesPayloadFirst(t *testing.T) {
	for _, tt := range []struct {
		payload ToolPayload
		kind    ErrorKind
	}{
		{JSONPayload(canonjson.Uint(1)), ErrInvalidJsonEnvelope},
		{JSONPayload(canonjson.Null()), ErrInvalidJsonEnvelope},
		{JSONPayload(nestedArrays(33, false)), ErrJsonPayloadTooDeep},
	} {
		if _, err := CanonicalOperationInputBytes(tt.payload); !isKind(err, tt.kind) {
			t.Errorf("CanonicalOperationInputBytes: %v, want %v", err, tt.kind)
		}
		if _, err := OperationInputFingerprint(tt.payload); !isKind(err, tt.kind) {
			t.Errorf("OperationInputFingerprint: %v, want %v", err, tt.kind)
		}
	}
}

// Spec: MSG-026
func TestCloseSessionExample(t *testing.T) {
	const want = `{"type":"close_session","protocol_version":5,"session_id":"session-1"}`
	m := CloseSessionMessage{ProtocolVersion: ProtocolVersion, Session: "session-1"}
	if got := string(m.AppendJSON(nil)); got != want {
		t.Fatalf("AppendJSON = %s", got)
	}
	if m.SessionID() != "session-1" || m.Type() != TypeCloseSession {
		t.Fatalf("SessionID/Type = %q/%q", m.SessionID(), m.Type())
	}
	for _, in := range []string{want, `["close_session",5,"session-1"]`, `{"session_id":"session-1","protocol_version":5,"type":"close_session"}`} {
		got, err := DecodeMessage([]byte(in), canonjson.Preserve)
		if err != nil || got != Message(m) {
			t.Errorf("DecodeMessage(%s) = %#v, %v", in, got, err)
		}
	}
	if _, err := DecodeMessage([]byte(strings.Replace(want, ":5", ":4", 1)), canonjson.Preserve); !isKind(err, ErrUnsupportedVersion) {
		t.Errorf("version 4: %v", err)
	}
	if _, err := DecodeMessage([]byte(`{"type":"close_session","protocol_version":4,"session_id":"Bad"}`), canonjson.Preserve); !isKind(err, ErrUnsupportedVersion) {
		t.Errorf("version is checked before the session: %v", err)
	}
	if _, err := DecodeMessage([]byte(`{"type":"close_session","protocol_version":5,"session_id":"Bad"}`), canonjson.Preserve); !isTokenError(err, FieldSessionID, "Bad") {
		t.Errorf("bad session: %v", err)
	}
}
