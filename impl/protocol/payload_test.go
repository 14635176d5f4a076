package protocol

import (
	"encoding/hex"
	"errors"
	"testing"

	"lukechampine.com/blake3"

	"github.com/splashv5/conform/impl/canonjson"
)

// Spec: MSG-036, MSG-037, MSG-040
func TestDepthRuleCountsScalars(t *testing.T) {
	for _, tt := range []struct {
		depth int
		empty bool
		ok    bool
	}{
		{31, false, true},  // 31 arrays around a number: the number is at depth 32
		{32, false, false}, // 32 arrays around a number: the number is at depth 33
		{32, true, true},   // 32 nested arrays, innermost empty
		{33, true, false},  // 33 nested empty arrays
		{1, true, true},
	} {
		p := JSONPayload(nestedArrays(tt.depth, tt.empty))
		n, err := p.ValidateFor(FormatJSON)
		if tt.ok {
			want := len(nestedArrayText(tt.depth, tt.empty))
			if err != nil || n != want {
				t.Errorf("depth %d empty=%v: %d, %v; want %d", tt.depth, tt.empty, n, err, want)
			}
			continue
		}
		var pe *Error
		if !isKind(err, ErrJsonPayloadTooDeep) || !errors.As(err, &pe) || pe.Maximum != 32 {
			t.Errorf("depth %d empty=%v: %v, want JsonPayloadTooDeep{32}", tt.depth, tt.empty, err)
		}
	}
	// Object member values count like array elements; keys do not.
	obj := canonjson.String("leaf")
	for i := 0; i < 31; i++ {
		obj = canonjson.Object(canonjson.Entry{Key: "k", Value: obj})
	}
	if _, err := JSONPayload(obj).ValidateFor(FormatJSON); err != nil {
		t.Errorf("31 objects around a string: %v", err)
	}
	obj = canonjson.Object(canonjson.Entry{Key: "k", Value: obj})
	if _, err := JSONPayload(obj).ValidateFor(FormatJSON); !isKind(err, ErrJsonPayloadTooDeep) {
		t.Errorf("32 objects around a string: %v", err)
	}
	// The envelope rule comes before the depth rule; a scalar root is never "too deep".
	if _, err := JSONPayload(canonjson.Uint(1)).ValidateFor(FormatJSON); !isKind(err, ErrInvalidJsonEnvelope) {
		t.Errorf("scalar root: %v", err)
	}
}

// Spec: MSG-012, MSG-013, MSG-035, MSG-038, MSG-039
func TestValidateForCountsReserializedBytes(t *testing.T) {
	var pe *Error
	_, err := TextPayload("x").ValidateFor(FormatJSON)
	if !isKind(err, ErrPayloadFormatMismatch) || !errors.As(err, &pe) || pe.ExpectedFormat != FormatJSON || pe.ActualFormat != FormatText {
		t.Errorf("format mismatch: %v", err)
	}
	// Format is compared before the envelope: a text grant given a scalar json payload.
	if _, err := JSONPayload(canonjson.Null()).ValidateFor(FormatText); !isKind(err, ErrPayloadFormatMismatch) {
		t.Errorf("format before envelope: %v", err)
	}
	if n, err := TextPayload("é😀").ValidateFor(FormatText); err != nil || n != 6 {
		t.Errorf("text bytes: %d, %v; want 6", n, err)
	}
	for _, mode := range bothModes {
		v := mustValue(t, "{ \"b\" : 1 ,\n \"a\" : \"é\" }", mode)
		if n, err := JSONPayload(v).ValidateFor(FormatJSON); err != nil || n != 16 {
			t.Errorf("%v: json bytes %d, %v; want 16", mode, n, err)
		}
	}
	// Mode-dependent size: 1E2 is "1e+2" (4) in Preserve and "100.0" (5) in Lossy.
	for mode, want := range map[canonjson.Mode]int{canonjson.Preserve: len("[1e+2]"), canonjson.Lossy: len("[100.0]")} {
		if n, err := JSONPayload(mustValue(t, "[1E2]", mode)).ValidateFor(FormatJSON); err != nil || n != want {
			t.Errorf("%v: [1E2] counts %d, %v; want %d", mode, n, err, want)
		}
	}
	// Duplicate keys: the re-serialization keeps the last value only.
	if n, err := JSONPayload(mustValue(t, `{"a":"long value","a":1}`, canonjson.Preserve)).ValidateFor(FormatJSON); err != nil || n != len(`{"a":1}`) {
		t.Errorf("duplicate keys count %d, %v", n, err)
	}
}

// Spec: FP-005, FP-010, FP-011, ENC-003
func TestCanonicalBytesExample(t *testing.T) {
	// Reference anchor A-CANON (docs/reference-anchors.md).
	for _, mode := range bothModes {
		p := JSONPayload(mustValue(t, `{"b":[1,{"z":1,"a":"x"}],"a":null,"B":true}`, mode))
		b, err := CanonicalOperationInputBytes(p)
		if err != nil {
			t.Fatal(err)
		}
		want := "json\x00\x00\x00\x00\x00\x00\x00\x2b" + `{"B":true,"a":null,"b":[1,{"a":"x","z":1}]}`
		if string(b) != want {
			t.Errorf("%v: %q", mode, b)
		}
		// Whitespace and key order of the input do not matter.
		q := JSONPayload(mustValue(t, "{\"B\" : true, \"b\":[1,{\"a\":\"x\",\"z\":1}],\n\"a\":null}", mode))
		fp1, _ := OperationInputFingerprint(p)
		fp2, _ := OperationInputFingerprint(q)
		if fp1 != fp2 {
			t.Errorf("%v: equal payloads differ: %s %s", mode, fp1, fp2)
		}
	}
	// Text and JSON with the same content differ.
	a, _ := OperationInputFingerprint(TextPayload(`{"a":1}`))
	b, _ := OperationInputFingerprint(JSONPayload(mustValue(t, `{"a":1}`, canonjson.Preserve)))
	if a == b {
		t.Error("text and json payloads share a fingerprint")
	}
	// In Lossy mode 1.50 and 1.5 are one identity; in Preserve mode they are two.
	fp := func(s string, m canonjson.Mode) string {
		f, err := OperationInputFingerprint(JSONPayload(mustValue(t, s, m)))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	if fp("[1.50]", canonjson.Lossy) != fp("[1.5]", canonjson.Lossy) {
		t.Error("lossy: 1.50 and 1.5 differ")
	}
	if fp("[1.50]", canonjson.Preserve) == fp("[1.5]", canonjson.Preserve) {
		t.Error("preserve: 1.50 and 1.5 agree")
	}
	if fp("[1]", canonjson.Lossy) == fp("[1.0]", canonjson.Lossy) || fp("[1]", canonjson.Preserve) == fp("[1.0]", canonjson.Preserve) {
		t.Error("1 and 1.0 share a fingerprint")
	}
}

// Spec: MSG-010, MSG-013
func TestPayloadJSONAndEquality(t *testing.T) {
	if got := string(TextPayload("a\"\\\x01\u2028</").AppendJSON(nil)); got != "{\"format\":\"text\",\"value\":\"a\\\"\\\\\\u0001\u2028</\"}" {
		t.Errorf("text payload JSON %s", got)
	}
	v := mustValue(t, `{"z":[],"a":{}}`, canonjson.Preserve)
	if got := string(JSONPayload(v).AppendJSON(nil)); got != `{"format":"json","value":{"a":{},"z":[]}}` {
		t.Errorf("json payload JSON %s", got)
	}
	if !JSONPayload(v).Equal(JSONPayload(mustValue(t, `{"a":{},"z":[]}`, canonjson.Preserve))) {
		t.Error("equal json payloads differ")
	}
	if TextPayload("x").Equal(JSONPayload(canonjson.String("x"))) {
		t.Error("text equals json")
	}
	p, err := DecodeToolPayload([]byte(`{"value":{"b":1,"a":2},"format":"json"}`), canonjson.Lossy)
	if err != nil || string(p.AppendJSON(nil)) != `{"format":"json","value":{"a":2,"b":1}}` {
		t.Errorf("DecodeToolPayload: %s, %v", p.AppendJSON(nil), err)
	}
	if _, err := DecodeToolPayload([]byte(`{"format":"text","value":1}`), canonjson.Lossy); !isKind(err, ErrSerialization) {
		t.Errorf("text with a number: %v", err)
	}
	if _, err := DecodeToolPayload([]byte(`{"format":"json","value":[1]}`), 0); err == nil {
		t.Error("invalid mode accepted")
	}
}

// The fingerprints are plain (unkeyed) BLAKE3 digests that anyone holding the input can
// recompute; here they are rebuilt from hand-assembled bytes with the hash library alone.
//
// Spec: FP-021, FP-007, FP-016
func TestFingerprintsAreUnkeyedDigests(t *testing.T) {
	text := "input"
	in := append([]byte("splash-worker-operation-input-v1text"), 0, 0, 0, 0, 0, 0, 0, byte(len(text)))
	sum := blake3.Sum256(append(in, text...))
	if fp, err := OperationInputFingerprint(TextPayload(text)); err != nil || fp != hex.EncodeToString(sum[:]) {
		t.Errorf("input fingerprint %s, %v", fp, err)
	}
	g := TextGrant("t")
	js := `{"tool":"t","format":"text","max_calls":1,"max_input_bytes":16384,"max_output_bytes":65536,"max_compensations":0,"resources":[]}`
	gin := append([]byte("splash-compensation-grant-v1"), 0, 0, 0, 0, 0, 0, 0, byte(len(js)))
	gsum := blake3.Sum256(append(gin, js...))
	if fp, err := g.CompensationFingerprint(); err != nil || fp != hex.EncodeToString(gsum[:]) {
		t.Errorf("grant fingerprint %s, %v", fp, err)
	}
}
