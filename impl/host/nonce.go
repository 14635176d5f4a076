package host

import (
	"encoding/binary"
	"encoding/hex"
	"io"
	"strconv"
	"sync/atomic"

	"lukechampine.com/blake3"
)

// Session nonce bounds for a host-supplied nonce; an entropy nonce is OSNonceBytes long.
const (
	MinSessionNonceBytes = 16
	MaxSessionNonceBytes = 64
	OSNonceBytes         = 32
)

// Derivation domains (spec chapter 21, section 21.2).
const (
	sessionNonceDomain   = "splash-capability-session-nonce-v1"
	auditLabelDomain     = "splash-capability-audit-label-v1"
	unrecognizedToolTag  = "unrecognized:"
	idempotencyKeyPrefix = "splash-"
)

// nextRuntimeSession is the process-wide runtime session counter S; the first runtime gets 1.
var nextRuntimeSession atomic.Uint64

// SessionNonce is a host-supplied source for external idempotency keys: 16 to 64 bytes that the
// host guarantees unique across every runtime session sharing a downstream deduplication scope.
// Its bytes are never printed.
type SessionNonce struct {
	b []byte
}

// NewSessionNonce copies b into a nonce after checking its length.
func NewSessionNonce(b []byte) (SessionNonce, error) {
	if len(b) < MinSessionNonceBytes {
		return SessionNonce{}, &NonceError{Kind: ErrNonceTooShort, Actual: len(b), Limit: MinSessionNonceBytes}
	}
	if len(b) > MaxSessionNonceBytes {
		return SessionNonce{}, &NonceError{Kind: ErrNonceTooLong, Actual: len(b), Limit: MaxSessionNonceBytes}
	}
	return SessionNonce{b: append([]byte(nil), b...)}, nil
}

// String redacts the nonce.
func (SessionNonce) String() string { return "SessionNonce([REDACTED])" }

// GoString redacts the nonce.
func (n SessionNonce) GoString() string { return n.String() }

// nonceFromEntropy reads OSNonceBytes from r; ok is false when the source fails.
func nonceFromEntropy(r io.Reader) (SessionNonce, bool) {
	if r == nil {
		return SessionNonce{}, false
	}
	b := make([]byte, OSNonceBytes)
	if _, err := io.ReadFull(r, b); err != nil {
		return SessionNonce{}, false
	}
	return SessionNonce{b: b}, true
}

// sessionNonceHex derives hex(BLAKE3(domain || u64be(S) || u64be(len(N)) || N)).
func sessionNonceHex(session uint64, n SessionNonce) string {
	buf := make([]byte, 0, len(sessionNonceDomain)+16+len(n.b))
	buf = append(buf, sessionNonceDomain...)
	buf = binary.BigEndian.AppendUint64(buf, session)
	buf = binary.BigEndian.AppendUint64(buf, uint64(len(n.b)))
	buf = append(buf, n.b...)
	sum := blake3.Sum256(buf)
	return hex.EncodeToString(sum[:])
}

// idempotencyKey returns "splash-<nonce hex>-<q>", or the never-exposed local fallback.
func (r *Runtime) idempotencyKey(sequence uint64) string {
	if r.nonceHex == "" {
		return "local-" + strconv.FormatUint(r.session, 10) + "-" + strconv.FormatUint(sequence, 10)
	}
	b := make([]byte, 0, len(idempotencyKeyPrefix)+len(r.nonceHex)+21)
	b = append(b, idempotencyKeyPrefix...)
	b = append(b, r.nonceHex...)
	b = append(b, '-')
	b = strconv.AppendUint(b, sequence, 10)
	return string(b)
}

// auditLabel returns name when it passes the token rule, otherwise a digest label that does not
// reveal the name.
func (r *Runtime) auditLabel(name string) string {
	if isToolName(name) {
		return name
	}
	buf := make([]byte, 0, len(auditLabelDomain)+8+1+8+len(r.nonceHex)+8+len(name))
	buf = append(buf, auditLabelDomain...)
	buf = binary.BigEndian.AppendUint64(buf, r.session)
	if r.nonceHex != "" {
		buf = append(buf, 1)
		buf = binary.BigEndian.AppendUint64(buf, uint64(len(r.nonceHex)))
		buf = append(buf, r.nonceHex...)
	} else {
		buf = append(buf, 0)
	}
	buf = binary.BigEndian.AppendUint64(buf, uint64(len(name)))
	buf = append(buf, name...)
	sum := blake3.Sum256(buf)
	return unrecognizedToolTag + hex.EncodeToString(sum[:])
}
