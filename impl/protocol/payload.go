package protocol

import (
	"encoding/binary"
	"encoding/hex"
	"sync"

	"github.com/splashv5/conform/impl/canonjson"
	"lukechampine.com/blake3"
)

// ToolPayload is the payload of an invocation, result, dispatch, compensation or succeeded
// status: text or an arbitrary JSON value. Format says which of Text and JSON is meaningful.
type ToolPayload struct {
	Format EnvelopeFormat
	Text   string
	JSON   canonjson.Value
}

// TextPayload returns a text payload.
func TextPayload(s string) ToolPayload { return ToolPayload{Format: FormatText, Text: s} }

// JSONPayload returns a JSON payload.
func JSONPayload(v canonjson.Value) ToolPayload { return ToolPayload{Format: FormatJSON, JSON: v} }

// AppendJSON appends {"format":...,"value":...}: the adjacently tagged form, tag first.
func (p ToolPayload) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"format":"`...)
	dst = append(dst, p.Format.String()...)
	dst = append(dst, `","value":`...)
	if p.Format == FormatJSON {
		dst = p.JSON.AppendJSON(dst)
	} else {
		dst = canonjson.AppendString(dst, p.Text)
	}
	return append(dst, '}')
}

// Equal reports whether two payloads are the same value: same format and equal text, or
// serde_json-equal JSON values.
func (p ToolPayload) Equal(o ToolPayload) bool {
	if p.Format != o.Format {
		return false
	}
	if p.Format == FormatJSON {
		return canonjson.Equal(p.JSON, o.JSON)
	}
	return p.Text == o.Text
}

var scratchPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// ValidateFor checks the payload against a grant's format and returns its byte count, as the
// reference does: the format must equal expected (PayloadFormatMismatch); text counts its
// UTF-8 bytes; JSON must be an object or array (InvalidJsonEnvelope), must respect the depth
// rule (JsonPayloadTooDeep), and counts the bytes of its compact re-serialization (sorted
// keys, normalized numbers), not of the received text.
func (p ToolPayload) ValidateFor(expected EnvelopeFormat) (int, error) {
	if p.Format != expected {
		return 0, &Error{Kind: ErrPayloadFormatMismatch, ExpectedFormat: expected, ActualFormat: p.Format}
	}
	if p.Format == FormatText {
		return len(p.Text), nil
	}
	if p.Format != FormatJSON {
		return 0, unencodable("envelope format " + p.Format.String())
	}
	switch p.JSON.Kind() {
	case canonjson.KindObject, canonjson.KindArray:
	default:
		return 0, &Error{Kind: ErrInvalidJsonEnvelope}
	}
	if !p.JSON.WithinDepth(MaxJSONPayloadDepth) {
		return 0, &Error{Kind: ErrJsonPayloadTooDeep, Maximum: MaxJSONPayloadDepth}
	}
	bp := scratchPool.Get().(*[]byte)
	b := p.JSON.AppendJSON((*bp)[:0])
	n := len(b)
	if cap(b) <= 1<<20 {
		*bp = b[:0]
		scratchPool.Put(bp)
	}
	return n, nil
}

// CanonicalOperationInputBytes returns the bytes that identify an operation input: after
// validating the payload for its own format, "text" or "json" followed by the 8-byte
// big-endian length and the UTF-8 text or the compact canonical JSON.
func CanonicalOperationInputBytes(p ToolPayload) ([]byte, error) {
	return AppendCanonicalOperationInput(nil, p)
}

// AppendCanonicalOperationInput appends the canonical operation input bytes of p to dst; see
// [CanonicalOperationInputBytes].
func AppendCanonicalOperationInput(dst []byte, p ToolPayload) ([]byte, error) {
	if _, err := p.ValidateFor(p.Format); err != nil {
		return dst, err
	}
	dst = append(dst, p.Format.String()...)
	lenAt := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
	if p.Format == FormatJSON {
		dst = p.JSON.AppendJSON(dst)
	} else {
		dst = append(dst, p.Text...)
	}
	binary.BigEndian.PutUint64(dst[lenAt:], uint64(len(dst)-lenAt-8))
	return dst, nil
}

// OperationInputFingerprint returns the journal input fingerprint of a payload: the lowercase
// hex of plain BLAKE3 over "splash-worker-operation-input-v1" followed by the canonical
// operation input bytes.
func OperationInputFingerprint(p ToolPayload) (string, error) {
	b := append(make([]byte, 0, 256), OperationInputDomain...)
	b, err := AppendCanonicalOperationInput(b, p)
	if err != nil {
		return "", err
	}
	sum := blake3.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// CompensationFingerprint returns the fingerprint that binds a compensation to the grant it
// was approved under: after validating the grant, the lowercase hex of plain BLAKE3 over
// "splash-compensation-grant-v1", the 8-byte big-endian length of the grant's JSON, and that
// JSON. The session id is not part of it; every grant field is.
func (g CapabilityGrant) CompensationFingerprint() (string, error) {
	if err := g.Validate(); err != nil {
		return "", err
	}
	b := append(make([]byte, 0, 512), CompensationGrantDomain...)
	lenAt := len(b)
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0)
	b = g.AppendJSON(b)
	binary.BigEndian.PutUint64(b[lenAt:], uint64(len(b)-lenAt-8))
	sum := blake3.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}
