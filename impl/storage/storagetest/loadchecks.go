package storagetest

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/storage"
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
// VectorKey before each check, as if it had been written at that revision.
type planter struct {
	h Harness
	b storage.Backend
	s *storage.AuthenticatedStore
}

func newPlanter(t *testing.T, h Harness) *planter {
	b := h.Open(t)
	return &planter{h: h, b: b, s: storage.NewAuthenticatedStore(b, Keyring(t))}
}

func (p *planter) with(t *testing.T, revision uint64, data string) *storage.AuthenticatedStore {
	t.Helper()
	p.h.Plant(t, p.b, VectorKey, storage.StoredRecord{Revision: revision, Bytes: []byte(data)})
	return p.s
}

// Spec: STO-040, STO-041
func testLoadCheck1RevisionPair(t *testing.T, h Harness) {
	b := h.Open(t)
	s := storage.NewAuthenticatedStore(b, Keyring(t))

	// Absent with floor 0: no record.
	rec, err := s.Load(ctxb(), VectorKey)
	if err != nil || rec != nil {
		t.Fatalf("absent record: %v, %v", rec, err)
	}

	// Absent with floor 3: the record was removed.
	h.SetFloor(t, b, VectorKey, 3)
	_, err = s.Load(ctxb(), VectorKey)
	if e := WantKind(t, err, storage.ErrRollbackDetected); e.Actual != nil || e.Floor != 3 {
		t.Fatalf("%v", e)
	}

	// Revision 0 beats every comparison with the floor.
	h.SetRecord(t, b, VectorKey, &storage.StoredRecord{Revision: 0, Bytes: []byte(Vector10Envelope)})
	_, err = s.Load(ctxb(), VectorKey)
	WantKind(t, err, storage.ErrInvalidRevision)

	// Revision below the floor: an older copy was restored.
	h.SetRecord(t, b, VectorKey, &storage.StoredRecord{Revision: 1, Bytes: []byte(Vector10Envelope)})
	_, err = s.Load(ctxb(), VectorKey)
	if e := WantKind(t, err, storage.ErrRollbackDetected); *e.Actual != 1 || e.Floor != 3 {
		t.Fatalf("%v", e)
	}

	// Revision above the floor.
	h.SetFloor(t, b, VectorKey, 0)
	_, err = s.Load(ctxb(), VectorKey)
	if e := WantKind(t, err, storage.ErrRevisionFloorMismatch); *e.Actual != 1 || e.Floor != 0 {
		t.Fatalf("%v", e)
	}

	// Consistent again: the vector loads.
	h.SetFloor(t, b, VectorKey, 1)
	rec, err = s.Load(ctxb(), VectorKey)
	if err != nil || string(rec.Payload) != "hello" {
		t.Fatalf("%v %v", rec, err)
	}
}

// Spec: STO-042, STO-064
func testLoadCheck3RecordTooLarge(t *testing.T, h Harness) {
	p := newPlanter(t, h)
	// One byte over the limit, and otherwise garbage that would fail
	// parsing: the size check comes first.
	s := p.with(t, 1, strings.Repeat("x", storage.MaxRecordBytes+1))
	_, err := s.Load(ctxb(), VectorKey)
	var e *storage.Error
	if h.OversizeIsBackendError {
		e = WantKind(t, err, storage.ErrBackend, storage.ErrStoredRecordTooLarge)
	} else {
		e = WantKind(t, err, storage.ErrRecordTooLarge)
	}
	if e.Size != storage.MaxRecordBytes+1 || e.Limit != storage.MaxRecordBytes {
		t.Fatalf("%v", e)
	}
	// Exactly at the limit the bytes are parsed (and fail as JSON).
	s = p.with(t, 1, strings.Repeat("x", storage.MaxRecordBytes))
	_, err = s.Load(ctxb(), VectorKey)
	WantKind(t, err, storage.ErrInvalidEnvelope)
}

// Spec: STO-043, STO-014, STO-015
func testLoadCheck4InvalidEnvelope(t *testing.T, h Harness) {
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
		"trailing data":         Vector10Envelope + ` x`,
		"two values":            Vector10Envelope + Vector10Envelope,
		"byte order mark":       "\ufeff" + Vector10Envelope,
		"form feed whitespace":  "\f" + Vector10Envelope,
		"unterminated":          strings.TrimSuffix(Vector10Envelope, "}"),
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
		"nested object":         `{"envelope":` + Vector10Envelope + `}`,
		"single quotes":         strings.ReplaceAll(Vector10Envelope, `"`, `'`),
		"comment":               `/* c */` + Vector10Envelope,
		"missing colon":         `{"format_version" 1}`,
		"escaped key mismatch":  strings.Replace(Vector10Envelope, `"key_id"`, `"key\u005Fid "`, 1),
		"invalid utf-8 in key":  strings.Replace(Vector10Envelope, `"key_id"`, "\"key_id\xc3\"", 1),
		"NaN version":           envelopeJSON("NaN", good[0], good[1], good[2], good[3]),
		"whitespace in number":  envelopeJSON("1", good[0], "1 0", good[2], good[3]),
		"leading zero revision": envelopeJSON("1", good[0], "01", good[2], good[3]),
	}
	p := newPlanter(t, h)
	for name, data := range bad {
		t.Run(name, func(t *testing.T) {
			s := p.with(t, 1, data)
			_, err := s.Load(ctxb(), VectorKey)
			WantKind(t, err, storage.ErrInvalidEnvelope)
		})
	}
}

// Spec: STO-014, STO-048
func testLoadAcceptsEveryReferenceSpellingOfTheVector(t *testing.T, h Harness) {
	// serde accepts these spellings of the same envelope; the tag covers the
	// decoded values, so each must load as the vector's payload.
	good := map[string]string{
		"canonical":          Vector10Envelope,
		"whitespace":         " \t\r\n{ \"format_version\" : 1 ,\n\"key_id\":\"storage-v1\",\"revision\":1,\"payload\":\"aGVsbG8\",\"auth_tag\":\"" + v10Tag + "\" }\r\n",
		"reordered":          `{"auth_tag":"` + v10Tag + `","payload":"aGVsbG8","revision":1,"key_id":"storage-v1","format_version":1}`,
		"escaped key":        `{"format\u005fversion":1,"key_id":"storage-v1","revision":1,"payload":"aGVsbG8","auth_tag":"` + v10Tag + `"}`,
		"escaped values":     `{"format_version":1,"key_id":"storage\u002dv1","revision":1,"payload":"aGVs\u0062G8","auth_tag":"` + v10Tag[:62] + `\u0063\u0064"}`,
		"positional array":   `[1,"storage-v1",1,"aGVsbG8","` + v10Tag + `"]`,
		"array whitespace":   "[ 1 , \"storage-v1\" ,1,\"aGVsbG8\",\n\"" + v10Tag + "\" ]",
		"uppercase u-escape": `{"format_version":1,"key_id":"\u0073\u0074\u006F\u0072\u0061\u0067\u0065-v1","revision":1,"payload":"aGVsbG8","auth_tag":"` + v10Tag + `"}`,
	}
	p := newPlanter(t, h)
	for name, data := range good {
		t.Run(name, func(t *testing.T) {
			s := p.with(t, 1, data)
			rec, err := s.Load(ctxb(), VectorKey)
			if err != nil {
				t.Fatalf("%s: %v", data, err)
			}
			if rec.Revision != 1 || rec.KeyID != "storage-v1" || !bytes.Equal(rec.Payload, []byte("hello")) {
				t.Fatalf("loaded %v", rec)
			}
		})
	}
}

// Spec: STO-043
func testLoadCheck5FormatVersion(t *testing.T, h Harness) {
	p := newPlanter(t, h)
	for _, v := range []uint8{0, 2, 255} {
		// Also an invalid revision and key id: the version is checked first.
		s := p.with(t, 1, envelopeJSON(fmt.Sprint(v), q("BAD ID"), "0", q("!"), q("")))
		_, err := s.Load(ctxb(), VectorKey)
		if e := WantKind(t, err, storage.ErrUnsupportedFormat); e.Version != v {
			t.Fatalf("%v", e)
		}
	}
}

// Spec: STO-044
func testLoadCheck6And7EnvelopeRevision(t *testing.T, h Harness) {
	p := newPlanter(t, h)
	s := p.with(t, 1, envelopeJSON("1", q("BAD ID"), "0", q("!"), q("")))
	_, err := s.Load(ctxb(), VectorKey)
	WantKind(t, err, storage.ErrInvalidRevision)

	// The vector's envelope says revision 1; the backend holds it at 2.
	s = p.with(t, 2, Vector10Envelope)
	_, err = s.Load(ctxb(), VectorKey)
	if e := WantKind(t, err, storage.ErrRevisionMismatch); e.BackendRevision != 2 || e.EnvelopeRevision != 1 {
		t.Fatalf("%v", e)
	}
	s = p.with(t, 1, envelopeJSON("1", q("BAD ID"), "18446744073709551615", q("!"), q("")))
	_, err = s.Load(ctxb(), VectorKey)
	if e := WantKind(t, err, storage.ErrRevisionMismatch); e.BackendRevision != 1 || e.EnvelopeRevision != math.MaxUint64 {
		t.Fatalf("%v", e)
	}
}

// Spec: STO-045
func testLoadCheck8KeyID(t *testing.T, h Harness) {
	p := newPlanter(t, h)
	for _, id := range []string{"", "Storage-v1", "storage v1", strings.Repeat("k", 65), "storage\u00e9"} {
		// Bad base64 and tag too: the key id is checked first.
		s := p.with(t, 1, envelopeJSON("1", q(id), "1", q("!"), q("XYZ")))
		_, err := s.Load(ctxb(), VectorKey)
		WantKind(t, err, storage.ErrInvalidKeyID)
	}
	// 64 bytes is valid: the error moves on to the payload.
	s := p.with(t, 1, envelopeJSON("1", q(strings.Repeat("k", 64)), "1", q("!"), q("XYZ")))
	_, err := s.Load(ctxb(), VectorKey)
	WantKind(t, err, storage.ErrInvalidEnvelope)
}

// Spec: STO-046, STO-011
func testLoadCheck9Base64(t *testing.T, h Harness) {
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
		_, err := s.Load(ctxb(), VectorKey)
		WantKind(t, err, storage.ErrInvalidEnvelope)
	}
}

// Spec: STO-046, STO-016
func testLoadCheck10PayloadTooLarge(t *testing.T, h Harness) {
	p := newPlanter(t, h)
	// 262,147 zero bytes encode to 349,530 'A's.
	big := strings.Repeat("A", 349530)
	s := p.with(t, 1, envelopeJSON("1", q("storage-v9"), "1", q(big), q("XYZ")))
	_, err := s.Load(ctxb(), VectorKey)
	if e := WantKind(t, err, storage.ErrPayloadTooLarge); e.Size != 262147 || e.Limit != storage.MaxPayloadBytes {
		t.Fatalf("%v", e)
	}
	// Exactly the limit passes this check and fails later on the tag.
	exact := strings.Repeat("A", 349525) + "A"
	s = p.with(t, 1, envelopeJSON("1", q("storage-v9"), "1", q(exact), q("XYZ")))
	_, err = s.Load(ctxb(), VectorKey)
	WantKind(t, err, storage.ErrInvalidAuthenticationTag)
}

// Spec: STO-047, STO-012
func testLoadCheck12To14Tag(t *testing.T, h Harness) {
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
		_, err := s.Load(ctxb(), VectorKey)
		WantKind(t, err, storage.ErrInvalidAuthenticationTag)
	}

	// A well-formed tag under an unknown key id.
	s := p.with(t, 1, envelopeJSON("1", q("storage-v9"), "1", q(v10Payload), q(v10Tag)))
	_, err := s.Load(ctxb(), VectorKey)
	WantKind(t, err, storage.ErrUnknownKeyID)

	// One flipped digit, another payload, another revision: the tag fails.
	flipped := "4" + v10Tag[1:]
	s = p.with(t, 1, envelopeJSON("1", q("storage-v1"), "1", q(v10Payload), q(flipped)))
	_, err = s.Load(ctxb(), VectorKey)
	WantKind(t, err, storage.ErrInvalidAuthenticationTag)
	s = p.with(t, 1, envelopeJSON("1", q("storage-v1"), "1", q("aGVsbG9="[:6]+"A"), q(v10Tag)))
	_, err = s.Load(ctxb(), VectorKey)
	WantKind(t, err, storage.ErrInvalidAuthenticationTag)
	s = p.with(t, 2, envelopeJSON("1", q("storage-v1"), "2", q(v10Payload), q(v10Tag)))
	_, err = s.Load(ctxb(), VectorKey)
	WantKind(t, err, storage.ErrInvalidAuthenticationTag)
}

// Spec: STO-017
func testLoadRejectsATransplantedRecord(t *testing.T, h Harness) {
	b := h.Open(t)
	s := storage.NewAuthenticatedStore(b, Keyring(t))
	moved := []storage.RecordKey{
		{Namespace: "worker-journal", Name: "tenant-other"},
		{Namespace: "worker-journa", Name: "ltenant-release"},
	}
	for _, k := range moved {
		h.Plant(t, b, k, storage.StoredRecord{Revision: 1, Bytes: []byte(Vector10Envelope)})
		_, err := s.Load(ctxb(), k)
		WantKind(t, err, storage.ErrInvalidAuthenticationTag)
	}
	// A record written for one key and copied to another.
	if _, err := s.Create(ctxb(), TestKey, []byte("first payload")); err != nil {
		t.Fatal(err)
	}
	snap := mustLoad(t, b, TestKey)
	h.Plant(t, b, OtherKey, *snap.Record)
	_, err := s.Load(ctxb(), OtherKey)
	WantKind(t, err, storage.ErrInvalidAuthenticationTag)
}
