package storage

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
)

// The vector-10 envelope's fields, to rebuild variants of it by hand.
const (
	v10Tag     = "364a8f1bc9e6cdeca3b4612a14dc81029d96c050c62886c46140a43b7776eecd"
	v10Payload = "aGVsbG8"
)

// envelopeJSON writes an envelope with the given raw JSON values.
func envelopeJSON(format, keyID, revision, payload, tag string) string {
	return fmt.Sprintf(`{"format_version":%s,"key_id":%s,"revision":%s,"payload":%s,"auth_tag":%s}`, format, keyID, revision, payload, tag)
}

func q(s string) string { return `"` + s + `"` }

// planter reuses one backend and store and replaces the record at
// vectorKey before each check, as if it had been written at that revision.
type planter struct {
	h harness
	b Backend
	s *AuthenticatedStore
}

func newPlanter(t *testing.T, h harness) *planter {
	b := h.open(t)
	return &planter{h: h, b: b, s: NewAuthenticatedStore(b, testKeyring(t))}
}

func (p *planter) with(t *testing.T, revision uint64, data string) *AuthenticatedStore {
	t.Helper()
	p.h.plant(t, p.b, vectorKey, StoredRecord{Revision: revision, Bytes: []byte(data)})
	return p.s
}

// Spec: STO-040, STO-041
func TestLoadCheck1RevisionPair(t *testing.T) {
	forEachBackendLight(t, func(t *testing.T, h harness) {
		b := h.open(t)
		s := NewAuthenticatedStore(b, testKeyring(t))

		// Absent with floor 0: no record.
		rec, err := s.Load(ctxb(), vectorKey)
		if err != nil || rec != nil {
			t.Fatalf("absent record: %v, %v", rec, err)
		}

		// Absent with floor 3: the record was removed.
		h.setFloor(t, b, vectorKey, 3)
		_, err = s.Load(ctxb(), vectorKey)
		if e := wantKind(t, err, ErrRollbackDetected); e.Actual != nil || e.Floor != 3 {
			t.Fatalf("%v", e)
		}

		// Revision 0 beats every comparison with the floor.
		h.setRecord(t, b, vectorKey, &StoredRecord{Revision: 0, Bytes: []byte(vector10Envelope)})
		_, err = s.Load(ctxb(), vectorKey)
		wantKind(t, err, ErrInvalidRevision)

		// Revision below the floor: an older copy was restored.
		h.setRecord(t, b, vectorKey, &StoredRecord{Revision: 1, Bytes: []byte(vector10Envelope)})
		_, err = s.Load(ctxb(), vectorKey)
		if e := wantKind(t, err, ErrRollbackDetected); *e.Actual != 1 || e.Floor != 3 {
			t.Fatalf("%v", e)
		}

		// Revision above the floor.
		h.setFloor(t, b, vectorKey, 0)
		_, err = s.Load(ctxb(), vectorKey)
		if e := wantKind(t, err, ErrRevisionFloorMismatch); *e.Actual != 1 || e.Floor != 0 {
			t.Fatalf("%v", e)
		}

		// Consistent again: the vector loads.
		h.setFloor(t, b, vectorKey, 1)
		rec, err = s.Load(ctxb(), vectorKey)
		if err != nil || string(rec.Payload) != "hello" {
			t.Fatalf("%v %v", rec, err)
		}
	})
}

// Spec: STO-042, STO-064
func TestLoadCheck3RecordTooLarge(t *testing.T) {
	forEachBackendLight(t, func(t *testing.T, h harness) {
		p := newPlanter(t, h)
		// One byte over the limit, and otherwise garbage that would fail
		// parsing: the size check comes first.
		s := p.with(t, 1, strings.Repeat("x", MaxRecordBytes+1))
		_, err := s.Load(ctxb(), vectorKey)
		var e *Error
		if h.oversizeIsBackendError {
			e = wantKind(t, err, ErrBackend, ErrStoredRecordTooLarge)
		} else {
			e = wantKind(t, err, ErrRecordTooLarge)
		}
		if e.Size != MaxRecordBytes+1 || e.Limit != MaxRecordBytes {
			t.Fatalf("%v", e)
		}
		// Exactly at the limit the bytes are parsed (and fail as JSON).
		s = p.with(t, 1, strings.Repeat("x", MaxRecordBytes))
		_, err = s.Load(ctxb(), vectorKey)
		wantKind(t, err, ErrInvalidEnvelope)
	})
}

// Spec: STO-043, STO-014, STO-015
func TestLoadCheck4InvalidEnvelope(t *testing.T) {
	good := []string{q("storage-v1"), "1", q(v10Payload), q(v10Tag)}
	bad := map[string]string{
		"empty":                 ``,
		"whitespace only":       " \n",
		"null":                  `null`,
		"string":                `"x"`,
		"empty object":          `{}`,
		"missing auth_tag":      `{"format_version":1,"key_id":"storage-v1","revision":1,"payload":"aGVsbG8"}`,
		"unknown field":         `{"format_version":1,"key_id":"storage-v1","revision":1,"payload":"aGVsbG8","auth_tag":"` + v10Tag + `","extra":0}`,
		"duplicate field":       `{"format_version":1,"key_id":"storage-v1","revision":1,"revision":1,"payload":"aGVsbG8","auth_tag":"` + v10Tag + `"}`,
		"duplicate via escape":  `{"format_version":1,"key_id":"storage-v1","revision":1,"payload":"aGVsbG8","auth_tag":"` + v10Tag + `","auth\u005ftag":"` + v10Tag + `"}`,
		"key in other case":     `{"Format_version":1,"key_id":"storage-v1","revision":1,"payload":"aGVsbG8","auth_tag":"` + v10Tag + `"}`,
		"trailing comma":        `{"format_version":1,"key_id":"storage-v1","revision":1,"payload":"aGVsbG8","auth_tag":"` + v10Tag + `",}`,
		"trailing data":         vector10Envelope + ` x`,
		"two values":            vector10Envelope + vector10Envelope,
		"byte order mark":       "\ufeff" + vector10Envelope,
		"form feed whitespace":  "\f" + vector10Envelope,
		"unterminated":          strings.TrimSuffix(vector10Envelope, "}"),
		"version 1.0":           envelopeJSON("1.0", good[0], good[1], good[2], good[3]),
		"version 1e0":           envelopeJSON("1e0", good[0], good[1], good[2], good[3]),
		"version -0":            envelopeJSON("-0", good[0], good[1], good[2], good[3]),
		"version -1":            envelopeJSON("-1", good[0], good[1], good[2], good[3]),
		"version 01":            envelopeJSON("01", good[0], good[1], good[2], good[3]),
		"version 256":           envelopeJSON("256", good[0], good[1], good[2], good[3]),
		"version string":        envelopeJSON(`"1"`, good[0], good[1], good[2], good[3]),
		"version null":          envelopeJSON("null", good[0], good[1], good[2], good[3]),
		"version +1":            envelopeJSON("+1", good[0], good[1], good[2], good[3]),
		"revision 2^64":         envelopeJSON("1", good[0], "18446744073709551616", good[2], good[3]),
		"revision 1.5":          envelopeJSON("1", good[0], "1.5", good[2], good[3]),
		"revision true":         envelopeJSON("1", good[0], "true", good[2], good[3]),
		"key_id number":         envelopeJSON("1", "7", good[1], good[2], good[3]),
		"key_id null":           envelopeJSON("1", "null", good[1], good[2], good[3]),
		"payload array":         envelopeJSON("1", good[0], good[1], `["aGVsbG8"]`, good[3]),
		"raw control char":      envelopeJSON("1", good[0], good[1], "\"aGVs\tbG8\"", good[3]),
		"bad escape":            envelopeJSON("1", good[0], good[1], `"aGVs\xbG8"`, good[3]),
		"lone high surrogate":   envelopeJSON("1", `"storage\ud800"`, good[1], good[2], good[3]),
		"lone low surrogate":    envelopeJSON("1", `"storage\udc00"`, good[1], good[2], good[3]),
		"reversed surrogates":   envelopeJSON("1", `"\udc00\ud800"`, good[1], good[2], good[3]),
		"invalid utf-8":         envelopeJSON("1", "\"storage\xff\"", good[1], good[2], good[3]),
		"array of four":         `[1,"storage-v1",1,"aGVsbG8"]`,
		"array of six":          `[1,"storage-v1",1,"aGVsbG8","` + v10Tag + `",0]`,
		"array in wrong order":  `["storage-v1",1,1,"aGVsbG8","` + v10Tag + `"]`,
		"array trailing comma":  `[1,"storage-v1",1,"aGVsbG8","` + v10Tag + `",]`,
		"nested object":         `{"envelope":` + vector10Envelope + `}`,
		"single quotes":         strings.ReplaceAll(vector10Envelope, `"`, `'`),
		"comment":               `/* c */` + vector10Envelope,
		"missing colon":         `{"format_version" 1}`,
		"escaped key mismatch":  strings.Replace(vector10Envelope, `"key_id"`, `"key\u005Fid "`, 1),
		"invalid utf-8 in key":  strings.Replace(vector10Envelope, `"key_id"`, "\"key_id\xc3\"", 1),
		"NaN version":           envelopeJSON("NaN", good[0], good[1], good[2], good[3]),
		"whitespace in number":  envelopeJSON("1", good[0], "1 0", good[2], good[3]),
		"leading zero revision": envelopeJSON("1", good[0], "01", good[2], good[3]),
	}
	forEachBackendLight(t, func(t *testing.T, h harness) {
		p := newPlanter(t, h)
		for name, data := range bad {
			t.Run(name, func(t *testing.T) {
				s := p.with(t, 1, data)
				_, err := s.Load(ctxb(), vectorKey)
				wantKind(t, err, ErrInvalidEnvelope)
			})
		}
	})
}

// Spec: STO-014, STO-048
func TestLoadAcceptsEveryReferenceSpellingOfTheVector(t *testing.T) {
	// serde accepts these spellings of the same envelope; the tag covers the
	// decoded values, so each must load as the vector's payload.
	good := map[string]string{
		"canonical":          vector10Envelope,
		"whitespace":         " \t\r\n{ \"format_version\" : 1 ,\n\"key_id\":\"storage-v1\",\"revision\":1,\"payload\":\"aGVsbG8\",\"auth_tag\":\"" + v10Tag + "\" }\r\n",
		"reordered":          `{"auth_tag":"` + v10Tag + `","payload":"aGVsbG8","revision":1,"key_id":"storage-v1","format_version":1}`,
		"escaped key":        `{"format\u005fversion":1,"key_id":"storage-v1","revision":1,"payload":"aGVsbG8","auth_tag":"` + v10Tag + `"}`,
		"escaped values":     `{"format_version":1,"key_id":"storage\u002dv1","revision":1,"payload":"aGVs\u0062G8","auth_tag":"` + v10Tag[:62] + `\u0063\u0064"}`,
		"positional array":   `[1,"storage-v1",1,"aGVsbG8","` + v10Tag + `"]`,
		"array whitespace":   "[ 1 , \"storage-v1\" ,1,\"aGVsbG8\",\n\"" + v10Tag + "\" ]",
		"uppercase u-escape": `{"format_version":1,"key_id":"\u0073\u0074\u006F\u0072\u0061\u0067\u0065-v1","revision":1,"payload":"aGVsbG8","auth_tag":"` + v10Tag + `"}`,
	}
	forEachBackendLight(t, func(t *testing.T, h harness) {
		p := newPlanter(t, h)
		for name, data := range good {
			t.Run(name, func(t *testing.T) {
				s := p.with(t, 1, data)
				rec, err := s.Load(ctxb(), vectorKey)
				if err != nil {
					t.Fatalf("%s: %v", data, err)
				}
				if rec.Revision != 1 || rec.KeyID != "storage-v1" || !bytes.Equal(rec.Payload, []byte("hello")) {
					t.Fatalf("loaded %v", rec)
				}
			})
		}
	})
}

// Spec: STO-043
func TestLoadCheck5FormatVersion(t *testing.T) {
	forEachBackendLight(t, func(t *testing.T, h harness) {
		p := newPlanter(t, h)
		for _, v := range []uint8{0, 2, 255} {
			// Also an invalid revision and key id: the version is checked first.
			s := p.with(t, 1, envelopeJSON(fmt.Sprint(v), q("BAD ID"), "0", q("!"), q("")))
			_, err := s.Load(ctxb(), vectorKey)
			if e := wantKind(t, err, ErrUnsupportedFormat); e.Version != v {
				t.Fatalf("%v", e)
			}
		}
	})
}

// Spec: STO-044
func TestLoadCheck6And7EnvelopeRevision(t *testing.T) {
	forEachBackendLight(t, func(t *testing.T, h harness) {
		p := newPlanter(t, h)
		s := p.with(t, 1, envelopeJSON("1", q("BAD ID"), "0", q("!"), q("")))
		_, err := s.Load(ctxb(), vectorKey)
		wantKind(t, err, ErrInvalidRevision)

		// The vector's envelope says revision 1; the backend holds it at 2.
		s = p.with(t, 2, vector10Envelope)
		_, err = s.Load(ctxb(), vectorKey)
		if e := wantKind(t, err, ErrRevisionMismatch); e.BackendRevision != 2 || e.EnvelopeRevision != 1 {
			t.Fatalf("%v", e)
		}
		s = p.with(t, 1, envelopeJSON("1", q("BAD ID"), "18446744073709551615", q("!"), q("")))
		_, err = s.Load(ctxb(), vectorKey)
		if e := wantKind(t, err, ErrRevisionMismatch); e.BackendRevision != 1 || e.EnvelopeRevision != math.MaxUint64 {
			t.Fatalf("%v", e)
		}
	})
}

// Spec: STO-045
func TestLoadCheck8KeyID(t *testing.T) {
	forEachBackendLight(t, func(t *testing.T, h harness) {
		p := newPlanter(t, h)
		for _, id := range []string{"", "Storage-v1", "storage v1", strings.Repeat("k", 65), "storage\u00e9"} {
			// Bad base64 and tag too: the key id is checked first.
			s := p.with(t, 1, envelopeJSON("1", q(id), "1", q("!"), q("XYZ")))
			_, err := s.Load(ctxb(), vectorKey)
			wantKind(t, err, ErrInvalidKeyID)
		}
		// 64 bytes is valid: the error moves on to the payload.
		s := p.with(t, 1, envelopeJSON("1", q(strings.Repeat("k", 64)), "1", q("!"), q("XYZ")))
		_, err := s.Load(ctxb(), vectorKey)
		wantKind(t, err, ErrInvalidEnvelope)
	})
}

// Spec: STO-046, STO-011
func TestLoadCheck9Base64(t *testing.T) {
	forEachBackendLight(t, func(t *testing.T, h harness) {
		p := newPlanter(t, h)
		for _, payload := range []string{
			"aGVsbG8=",   // padding
			"aGVsbG9",    // nonzero trailing bits
			`aGVs\nbG8`,  // line feed inside (Go's decoder would skip it)
			`aGVs\rbG8`,  // carriage return inside
			"aGVs bG8",   // space
			"a",          // impossible length
			"aGVsbG8-",   // URL-safe alphabet
			"aGVsbG_8",   // URL-safe alphabet
			"aGVsbG8===", // padding run
			"====",
		} {
			// Unknown key id and malformed tag too: base64 is checked first.
			s := p.with(t, 1, envelopeJSON("1", q("storage-v9"), "1", q(payload), q("XYZ")))
			_, err := s.Load(ctxb(), vectorKey)
			wantKind(t, err, ErrInvalidEnvelope)
		}
	})
}

// Spec: STO-046, STO-016
func TestLoadCheck10PayloadTooLarge(t *testing.T) {
	forEachBackendLight(t, func(t *testing.T, h harness) {
		p := newPlanter(t, h)
		// 262,147 zero bytes encode to 349,530 'A's.
		big := strings.Repeat("A", 349530)
		s := p.with(t, 1, envelopeJSON("1", q("storage-v9"), "1", q(big), q("XYZ")))
		_, err := s.Load(ctxb(), vectorKey)
		if e := wantKind(t, err, ErrPayloadTooLarge); e.Size != 262147 || e.Limit != MaxPayloadBytes {
			t.Fatalf("%v", e)
		}
		// Exactly the limit passes this check and fails later on the tag.
		exact := strings.Repeat("A", 349525) + "A"
		s = p.with(t, 1, envelopeJSON("1", q("storage-v9"), "1", q(exact), q("XYZ")))
		_, err = s.Load(ctxb(), vectorKey)
		wantKind(t, err, ErrInvalidAuthenticationTag)
	})
}

// Check 11 (re-encoding reproduces the text) cannot fail after check 9: a
// strict decoder that rejects padding, foreign bytes and nonzero trailing
// bits only accepts canonical text. This test pins that property, so the
// re-encoding check stays a redundant guard rather than a dead difference.
//
// Spec: STO-046
func TestLoadCheck11CanonicalBase64(t *testing.T) {
	alphabet := "AB+/=\n Qw9"
	var walk func(prefix string, depth int)
	count := 0
	walk = func(prefix string, depth int) {
		if decoded, ok := decodePayload(prefix); ok {
			count++
			if payloadEncoding.EncodeToString(decoded) != prefix {
				t.Fatalf("%q decodes to %x, which re-encodes differently", prefix, decoded)
			}
		}
		if depth == 0 {
			return
		}
		for i := range len(alphabet) {
			walk(prefix+alphabet[i:i+1], depth-1)
		}
	}
	walk("", 5)
	if count < 1000 {
		t.Fatalf("only %d strings decoded; the walk is not exercising the decoder", count)
	}
}

// Spec: STO-047, STO-012
func TestLoadCheck12To14Tag(t *testing.T) {
	forEachBackendLight(t, func(t *testing.T, h harness) {
		p := newPlanter(t, h)
		for _, tag := range []string{
			strings.ToUpper(v10Tag),
			v10Tag[:63],
			v10Tag + "0",
			v10Tag[:62] + "zz",
			"",
		} {
			// Unknown key id too: the tag syntax is checked first.
			s := p.with(t, 1, envelopeJSON("1", q("storage-v9"), "1", q(v10Payload), q(tag)))
			_, err := s.Load(ctxb(), vectorKey)
			wantKind(t, err, ErrInvalidAuthenticationTag)
		}

		// A well-formed tag under an unknown key id.
		s := p.with(t, 1, envelopeJSON("1", q("storage-v9"), "1", q(v10Payload), q(v10Tag)))
		_, err := s.Load(ctxb(), vectorKey)
		wantKind(t, err, ErrUnknownKeyID)

		// One flipped digit, another payload, another revision: the tag fails.
		flipped := "4" + v10Tag[1:]
		s = p.with(t, 1, envelopeJSON("1", q("storage-v1"), "1", q(v10Payload), q(flipped)))
		_, err = s.Load(ctxb(), vectorKey)
		wantKind(t, err, ErrInvalidAuthenticationTag)
		s = p.with(t, 1, envelopeJSON("1", q("storage-v1"), "1", q("aGVsbG9="[:6]+"A"), q(v10Tag)))
		_, err = s.Load(ctxb(), vectorKey)
		wantKind(t, err, ErrInvalidAuthenticationTag)
		s = p.with(t, 2, envelopeJSON("1", q("storage-v1"), "2", q(v10Payload), q(v10Tag)))
		_, err = s.Load(ctxb(), vectorKey)
		wantKind(t, err, ErrInvalidAuthenticationTag)
	})
}

// Spec: STO-017
func TestLoadRejectsATransplantedRecord(t *testing.T) {
	forEachBackendLight(t, func(t *testing.T, h harness) {
		b := h.open(t)
		s := NewAuthenticatedStore(b, testKeyring(t))
		moved := []RecordKey{
			{Namespace: "worker-journal", Name: "tenant-other"},
			{Namespace: "worker-journa", Name: "ltenant-release"},
		}
		for _, k := range moved {
			h.plant(t, b, k, StoredRecord{Revision: 1, Bytes: []byte(vector10Envelope)})
			_, err := s.Load(ctxb(), k)
			wantKind(t, err, ErrInvalidAuthenticationTag)
		}
		// A record written for one key and copied to another.
		if _, err := s.Create(ctxb(), testKey, []byte("first payload")); err != nil {
			t.Fatal(err)
		}
		snap := mustLoad(t, b, testKey)
		h.plant(t, b, otherKey, *snap.Record)
		_, err := s.Load(ctxb(), otherKey)
		wantKind(t, err, ErrInvalidAuthenticationTag)
	})
}
