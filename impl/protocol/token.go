package protocol

// Field labels carried by InvalidToken errors; they name the token-typed field that failed.
const (
	FieldSessionID        = "session id"
	FieldRequestID        = "request id"
	FieldTool             = "tool"
	FieldResourceSelector = "resource selector"
	FieldCancellationID   = "cancellation id"
	FieldOperationKey     = "operation key"
	FieldTenantScope      = "tenant scope"
	FieldCompensationKey  = "compensation key"
	FieldJournalScope     = "operation journal scope"
)

// CompensationKeyPrefix is the namespace every compensation key starts with.
const CompensationKeyPrefix = "cmp-"

// IsToken reports whether value is a token: 1 to 128 bytes, each in a-z, 0-9, '.', '_' or
// '-'. There is no rule about the first byte or about repeats, so "." and "cmp-" are tokens.
func IsToken(value string) bool {
	if len(value) == 0 || len(value) > MaxTokenBytes {
		return false
	}
	for i := 0; i < len(value); i++ {
		c := value[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// ValidateToken returns an InvalidToken error naming field when value is not a token.
func ValidateToken(field, value string) error {
	if !IsToken(value) {
		return &Error{Kind: ErrInvalidToken, Field: field, Value: value}
	}
	return nil
}

// ValidateCompensationKey checks a compensation key: a token (InvalidToken with field
// "compensation key"), then the "cmp-" prefix (InvalidCompensationKey).
func ValidateCompensationKey(value string) error {
	if err := ValidateToken(FieldCompensationKey, value); err != nil {
		return err
	}
	if len(value) < len(CompensationKeyPrefix) || value[:len(CompensationKeyPrefix)] != CompensationKeyPrefix {
		return &Error{Kind: ErrInvalidCompensationKey}
	}
	return nil
}

// IsFingerprint reports whether value is a BLAKE3 fingerprint as the protocol writes it:
// exactly 64 bytes, each 0-9 or a-f (uppercase is rejected).
func IsFingerprint(value string) bool {
	if len(value) != 2*AuthTagBytes {
		return false
	}
	for i := 0; i < len(value); i++ {
		c := value[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func validateVersion(v uint16) error {
	if v != ProtocolVersion {
		return &Error{Kind: ErrUnsupportedVersion, Actual: uint64(v)}
	}
	return nil
}

const hexDigits = "0123456789abcdef"

// AppendHex appends the lowercase hex form of b, high nibble first.
func AppendHex(dst []byte, b []byte) []byte {
	for _, c := range b {
		dst = append(dst, hexDigits[c>>4], hexDigits[c&0x0f])
	}
	return dst
}

// ParseAuthTag decodes a wire authentication tag: exactly 64 bytes of lowercase hex. Anything
// else (uppercase, odd length, whitespace) is InvalidAuthenticationTag.
func ParseAuthTag(s string) ([AuthTagBytes]byte, error) { return parseAuthTag(s) }

// parseAuthTag is ParseAuthTag for a string or for bytes in place.
func parseAuthTag[T string | []byte](s T) ([AuthTagBytes]byte, error) {
	var tag [AuthTagBytes]byte
	if len(s) != 2*AuthTagBytes {
		return tag, &Error{Kind: ErrInvalidAuthenticationTag}
	}
	var bad byte // the OR of every digit's value: bit 4 set if any byte is not a lowercase digit
	for i := range tag {
		hi, lo := lowerHex[s[2*i]], lowerHex[s[2*i+1]]
		bad |= hi | lo
		tag[i] = hi<<4 | lo&0xf
	}
	if bad > 0xf {
		return [AuthTagBytes]byte{}, &Error{Kind: ErrInvalidAuthenticationTag}
	}
	return tag, nil
}

// lowerHex maps '0'-'9' and 'a'-'f' to their values and every other byte to 0x10.
var lowerHex = func() (t [256]byte) {
	for c := range t {
		t[c] = 0x10
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c-'a') + 10
	}
	return t
}()
