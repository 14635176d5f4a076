package protocol

import (
	"crypto/rand"
	"fmt"
	"io"
)

// redactedSessionKey is the only text any formatting of a SessionKey produces.
const redactedSessionKey = "SessionKey([redacted])"

// SessionKey is the 32-byte BLAKE3 key shared by the host and the worker of one
// session. It is deliberately not serializable: every fmt verb (%v, %+v, %#v,
// %s, %x, %q, ...) prints "SessionKey([redacted])", and no method returns the
// bytes except the explicitly named ExposeSecret. Use a *SessionKey; Close it
// when the session ends.
type SessionKey struct {
	b      [SessionKeyBytes]byte
	closed bool
}

// NewSessionKey copies key material into a SessionKey. The length must be
// exactly 32 (else InvalidSessionKeyLength{actual, expected: 32}, checked
// first) and the bytes must not all be zero (else WeakSessionKey). The caller
// may wipe b afterwards.
func NewSessionKey(b []byte) (*SessionKey, error) {
	if len(b) != SessionKeyBytes {
		return nil, &Error{Kind: ErrInvalidSessionKeyLength, Actual: uint64(len(b)), Expected: SessionKeyBytes}
	}
	k := &SessionKey{}
	copy(k.b[:], b)
	if k.isZero() {
		return nil, &Error{Kind: ErrWeakSessionKey}
	}
	return k, nil
}

// GenerateSessionKey returns a fresh key from crypto/rand, as a host must for
// every session.
func GenerateSessionKey() (*SessionKey, error) {
	return generateSessionKey(rand.Reader)
}

func generateSessionKey(src io.Reader) (*SessionKey, error) {
	k := &SessionKey{}
	// An all-zero draw has probability 2^-256; drawing again keeps the
	// result usable without special cases for callers.
	for range 4 {
		if _, err := io.ReadFull(src, k.b[:]); err != nil {
			return nil, fmt.Errorf("protocol: generating a session key: %w", err)
		}
		if !k.isZero() {
			return k, nil
		}
	}
	return nil, &Error{Kind: ErrWeakSessionKey}
}

func (k *SessionKey) isZero() bool {
	var acc byte
	for _, c := range k.b {
		acc |= c
	}
	return acc == 0
}

// usable reports whether k can key an authenticator: non-nil, not closed and
// not all zero.
func (k *SessionKey) usable() bool { return k != nil && !k.closed && !k.isZero() }

// ExposeSecret returns a copy of the raw key bytes. It is SENSITIVE: it exists
// only so that the private-pipe bootstrap writer can deliver the key; never
// log, print, persist or send the result anywhere else, and clear it after
// use. A nil or closed key yields WeakSessionKey.
func (k *SessionKey) ExposeSecret() ([SessionKeyBytes]byte, error) {
	if !k.usable() {
		return [SessionKeyBytes]byte{}, &Error{Kind: ErrWeakSessionKey}
	}
	return k.b, nil
}

// Equal reports, in constant time, whether k and o hold the same key. Nil or
// closed keys are equal to nothing.
func (k *SessionKey) Equal(o *SessionKey) bool {
	if !k.usable() || !o.usable() {
		return false
	}
	var acc byte
	for i := range k.b {
		acc |= k.b[i] ^ o.b[i]
	}
	return acc == 0
}

// Close overwrites the key bytes with zeros. It is best effort: copies made
// by the Go runtime (stack moves, earlier ExposeSecret results) are not
// reached. Authenticators built from the key keep their own copy; close
// them separately. Close is idempotent.
func (k *SessionKey) Close() error {
	if k == nil {
		return nil
	}
	clear(k.b[:])
	k.closed = true
	return nil
}

// String returns "SessionKey([redacted])".
func (SessionKey) String() string { return redactedSessionKey }

// GoString returns "SessionKey([redacted])", so %#v redacts too.
func (SessionKey) GoString() string { return redactedSessionKey }

// Format prints "SessionKey([redacted])" for every verb and flag.
func (SessionKey) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redactedSessionKey) }

// Role is the side of a session an authenticator speaks for. The sender role
// is bound into every tag, so a frame reflected back to its sender fails.
type Role uint8

// The two roles.
const (
	// RoleHost is the trusted host that seals open_session and invocations.
	RoleHost Role = iota + 1
	// RoleWorker is the contained worker that seals results.
	RoleWorker
)

// String returns the tag-input spelling: "host" or "worker".
func (r Role) String() string {
	switch r {
	case RoleHost:
		return "host"
	case RoleWorker:
		return "worker"
	default:
		return fmt.Sprintf("Role(%d)", uint8(r))
	}
}

// Valid reports whether r is RoleHost or RoleWorker.
func (r Role) Valid() bool { return r == RoleHost || r == RoleWorker }

// Peer returns the other role; an invalid role has no peer and is returned
// unchanged.
func (r Role) Peer() Role {
	switch r {
	case RoleHost:
		return RoleWorker
	case RoleWorker:
		return RoleHost
	default:
		return r
	}
}

// ParseRole returns the role spelled s ("host" or "worker").
func ParseRole(s string) (Role, bool) {
	switch s {
	case "host":
		return RoleHost, true
	case "worker":
		return RoleWorker, true
	}
	return 0, false
}
