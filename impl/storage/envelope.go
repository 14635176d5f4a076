package storage

import (
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"slices"
	"strconv"
)

const (
	recordTagDomain        = "splash-storage-record-v1"
	recordCommitmentDomain = "splash-storage/anchored-sqlite-record/v1"
)

// payloadEncoding is base64 with the standard alphabet, no padding, and
// nonzero trailing bits rejected.
var payloadEncoding = base64.RawStdEncoding.Strict()

// base64Pairs maps twelve bits to the two characters of the standard alphabet that encode
// them, the first in the low byte.
var base64Pairs = func() (t [1 << 12]uint16) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := range t {
		t[i] = uint16(alphabet[i>>6]) | uint16(alphabet[i&63])<<8
	}
	return t
}()

// appendBase64 appends payloadEncoding's encoding of src to dst: the same bytes as
// payloadEncoding.AppendEncode, six input bytes to eight characters at a time, by pairs.
func appendBase64(dst, src []byte) []byte {
	n := len(dst)
	dst = slices.Grow(dst, payloadEncoding.EncodedLen(len(src)))[:n+payloadEncoding.EncodedLen(len(src))]
	out := dst[n:]
	si, di := 0, 0
	for ; si+8 <= len(src); si, di = si+6, di+8 {
		v := binary.BigEndian.Uint64(src[si:])
		binary.LittleEndian.PutUint64(out[di:], uint64(base64Pairs[v>>52&0xfff])|
			uint64(base64Pairs[v>>40&0xfff])<<16|
			uint64(base64Pairs[v>>28&0xfff])<<32|
			uint64(base64Pairs[v>>16&0xfff])<<48)
	}
	payloadEncoding.Encode(out[di:], src[si:])
	return dst
}

// appendLengthPrefixed appends u64be(len(b)) || b.
func appendLengthPrefixed(dst, b []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(len(b)))
	return append(dst, b...)
}

// RecordTag computes the authentication tag of one record: BLAKE3 keyed with
// key over the domain "splash-storage-record-v1", the format version byte,
// the length-prefixed namespace, name and key id, the big-endian revision and
// the length-prefixed payload bytes.
func RecordTag(key Key, record RecordKey, formatVersion uint8, keyID KeyID, revision uint64, payload []byte) [TagBytes]byte {
	h := getTreeHasher(&key.bytes)
	defer h.release()
	in := append(h.input, recordTagDomain...)
	in = append(in, formatVersion)
	in = appendLengthPrefixed(in, []byte(record.Namespace))
	in = appendLengthPrefixed(in, []byte(record.Name))
	in = appendLengthPrefixed(in, []byte(keyID))
	in = binary.BigEndian.AppendUint64(in, revision)
	h.input = appendLengthPrefixed(in, payload)
	return h.sum()
}

// RecordCommitment computes the unkeyed BLAKE3 commitment that a rollback
// anchor stores for one persisted envelope: the domain
// "splash-storage/anchored-sqlite-record/v1", the length-prefixed namespace
// and name, the big-endian revision and the length-prefixed envelope bytes.
func RecordCommitment(record RecordKey, revision uint64, envelope []byte) [32]byte {
	h := getTreeHasher(nil)
	defer h.release()
	in := append(h.input, recordCommitmentDomain...)
	in = appendLengthPrefixed(in, []byte(record.Namespace))
	in = appendLengthPrefixed(in, []byte(record.Name))
	in = binary.BigEndian.AppendUint64(in, revision)
	h.input = appendLengthPrefixed(in, envelope)
	return h.sum()
}

const hexDigits = "0123456789abcdef"

// SealEnvelope returns the stored envelope for payload at revision, tagged
// with key under keyID and bound to record. The bytes are exactly those the
// reference writes: {"format_version":1,"key_id":…,"revision":…,"payload":…,"auth_tag":…}.
// It fails with ErrPayloadTooLarge or ErrRecordTooLarge when a limit is
// exceeded and with the identifier errors when record or keyID is invalid.
func SealEnvelope(key Key, keyID KeyID, record RecordKey, revision uint64, payload []byte) ([]byte, error) {
	if err := record.Validate(); err != nil {
		return nil, err
	}
	if err := keyID.Validate(); err != nil {
		return nil, err
	}
	if len(payload) > MaxPayloadBytes {
		return nil, &Error{Kind: ErrPayloadTooLarge, Size: len(payload), Limit: MaxPayloadBytes}
	}
	return sealEnvelope(key, keyID, record, revision, payload)
}

func sealEnvelope(key Key, keyID KeyID, record RecordKey, revision uint64, payload []byte) ([]byte, error) {
	tag := RecordTag(key, record, FormatVersion, keyID, revision, payload)
	size := 96 + len(keyID) + payloadEncoding.EncodedLen(len(payload)) + 2*TagBytes
	out := make([]byte, 0, size)
	out = append(out, `{"format_version":`...)
	out = strconv.AppendUint(out, uint64(FormatVersion), 10)
	out = append(out, `,"key_id":"`...)
	out = append(out, keyID...)
	out = append(out, `","revision":`...)
	out = strconv.AppendUint(out, revision, 10)
	out = append(out, `,"payload":"`...)
	out = appendBase64(out, payload)
	out = append(out, `","auth_tag":"`...)
	for _, b := range tag {
		out = append(out, hexDigits[b>>4], hexDigits[b&0x0f])
	}
	out = append(out, `"}`...)
	if len(out) > MaxRecordBytes {
		return nil, &Error{Kind: ErrRecordTooLarge, Size: len(out), Limit: MaxRecordBytes}
	}
	return out, nil
}

// openedRecord is the content of one verified envelope.
type openedRecord struct {
	keyID   KeyID
	payload []byte
}

// openEnvelope applies the envelope checks of a stored record whose backend
// revision is revision, in the reference order: size, strict JSON decode,
// format version, nonzero revision, revision equality, key id syntax, base64
// decode, payload size, canonical base64, tag syntax, key lookup, tag
// equality.
func openEnvelope(keyring *Keyring, record RecordKey, revision uint64, data []byte) (openedRecord, error) {
	if len(data) > MaxRecordBytes {
		return openedRecord{}, &Error{Kind: ErrRecordTooLarge, Size: len(data), Limit: MaxRecordBytes}
	}
	env, ok := decodeEnvelope(data)
	if !ok {
		return openedRecord{}, &Error{Kind: ErrInvalidEnvelope}
	}
	if env.formatVersion != FormatVersion {
		return openedRecord{}, &Error{Kind: ErrUnsupportedFormat, Version: env.formatVersion}
	}
	if env.revision == 0 {
		return openedRecord{}, &Error{Kind: ErrInvalidRevision}
	}
	if env.revision != revision {
		return openedRecord{}, &Error{Kind: ErrRevisionMismatch, BackendRevision: revision, EnvelopeRevision: env.revision}
	}
	keyID := KeyID(env.keyID)
	if keyID.Validate() != nil {
		return openedRecord{}, &Error{Kind: ErrInvalidKeyID}
	}
	payload, ok := decodePayload(env.payload)
	if !ok {
		return openedRecord{}, &Error{Kind: ErrInvalidEnvelope}
	}
	if len(payload) > MaxPayloadBytes {
		return openedRecord{}, &Error{Kind: ErrPayloadTooLarge, Size: len(payload), Limit: MaxPayloadBytes}
	}
	if payloadEncoding.EncodeToString(payload) != env.payload {
		return openedRecord{}, &Error{Kind: ErrInvalidEnvelope}
	}
	tag, ok := decodeTag(env.authTag)
	if !ok {
		return openedRecord{}, &Error{Kind: ErrInvalidAuthenticationTag}
	}
	key, ok := keyring.verificationKey(keyID)
	if !ok {
		return openedRecord{}, &Error{Kind: ErrUnknownKeyID}
	}
	want := RecordTag(key, record, env.formatVersion, keyID, env.revision, payload)
	if subtle.ConstantTimeCompare(want[:], tag[:]) != 1 {
		return openedRecord{}, &Error{Kind: ErrInvalidAuthenticationTag}
	}
	return openedRecord{keyID: keyID, payload: payload}, nil
}

// decodePayload decodes base64 with the standard alphabet and no padding,
// rejecting nonzero trailing bits. Every byte must belong to the alphabet:
// unlike Go's decoder, the reference does not skip CR or LF.
func decodePayload(s string) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '+', c == '/':
		default:
			return nil, false
		}
	}
	out, err := payloadEncoding.DecodeString(s)
	if err != nil {
		return nil, false
	}
	return out, true
}

// decodeTag accepts exactly 64 lowercase hexadecimal digits.
func decodeTag(s string) ([TagBytes]byte, bool) {
	var tag [TagBytes]byte
	if len(s) != 2*TagBytes {
		return tag, false
	}
	for i := range TagBytes {
		hi, ok1 := lowerHexValue(s[2*i])
		lo, ok2 := lowerHexValue(s[2*i+1])
		if !ok1 || !ok2 {
			return tag, false
		}
		tag[i] = hi<<4 | lo
	}
	return tag, true
}

func lowerHexValue(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
