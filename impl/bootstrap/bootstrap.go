// Package bootstrap reads and writes the private-pipe worker bootstrap: the
// one-shot binary preamble in which a host hands a contained worker its
// session id and session key before the first JSON frame.
//
// Layout (42 + L bytes): the ASCII magic "SPLPBOOT", the version byte 0x01,
// the session-id length L (1..128), the session id (an identifier token),
// then the 32 raw key bytes.
package bootstrap

import (
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// Magic is the 8-byte preamble that starts every bootstrap.
const Magic = "SPLPBOOT"

// Version is the only supported bootstrap format version.
const Version byte = 1

// MaxSessionIDBytes is the longest session id a bootstrap may carry.
const MaxSessionIDBytes = 128

// KeyBytes is the length of the raw session key in a bootstrap.
const KeyBytes = 32

// headerBytes is the size of the magic, the version and the length byte.
const headerBytes = len(Magic) + 2

// Size returns the encoded length of a bootstrap for a session id of
// sessionIDLen bytes: 42 + sessionIDLen.
func Size(sessionIDLen int) int { return headerBytes + sessionIDLen + KeyBytes }

// Bootstrap is a decoded preamble: the session id and the session key the
// worker must authenticate with. Its formatted forms never show the key.
type Bootstrap struct {
	// SessionID is the validated session id (an identifier token).
	SessionID string
	// Key is the session key. The caller owns it and should Close it when
	// the session ends.
	Key *protocol.SessionKey
}

// WorkerAuthenticator returns a worker-role authenticator for the delivered
// session. It receives in the given number mode (the Go reference uses
// canonjson.Preserve). The authenticator keeps its own copy of the key.
func (b Bootstrap) WorkerAuthenticator(mode canonjson.Mode, opts ...protocol.AuthenticatorOption) (*protocol.Authenticator, error) {
	return protocol.NewAuthenticator(b.SessionID, b.Key, protocol.RoleWorker, mode, opts...)
}

// String returns the session id and a redacted key.
func (b Bootstrap) String() string {
	return fmt.Sprintf("Bootstrap{SessionID: %q, Key: %v}", b.SessionID, b.Key)
}

// GoString is String, so %#v redacts the key as well.
func (b Bootstrap) GoString() string { return b.String() }

// Format writes String for every verb, so no verb can print the key.
func (b Bootstrap) Format(f fmt.State, verb rune) { _, _ = io.WriteString(f, b.String()) }

// Write writes the bootstrap for sessionID and key to w in a single Write
// call and then flushes w if it has a Flush() error method. The session id
// must be an identifier token (else the protocol error InvalidToken, not wrapped) and key a
// usable session key (else ErrProtocol wrapping WeakSessionKey); otherwise nothing is
// written. Failures of w are reported as ErrIO.
func Write(w io.Writer, sessionID string, key *protocol.SessionKey) error {
	// The reference checks the session id when it builds the bootstrap value, before any
	// bootstrap error exists, so this failure is the bare InvalidToken (BOOT-003).
	if err := protocol.ValidateToken("session id", sessionID); err != nil {
		return err
	}
	if len(sessionID) > MaxSessionIDBytes { // unreachable after the token check
		return &Error{Kind: ErrInvalidSessionIDLength, Actual: len(sessionID), Maximum: MaxSessionIDBytes}
	}
	secret, err := key.ExposeSecret()
	if err != nil {
		return &Error{Kind: ErrProtocol, Err: err}
	}
	var buf [headerBytes + MaxSessionIDBytes + KeyBytes]byte
	msg := append(buf[:0], Magic...)
	msg = append(msg, Version, byte(len(sessionID)))
	msg = append(msg, sessionID...)
	msg = append(msg, secret[:]...)
	clear(secret[:])
	n, err := w.Write(msg)
	clear(buf[:])
	if err == nil && n != len(msg) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return &Error{Kind: ErrIO, Err: err}
	}
	if f, ok := w.(interface{ Flush() error }); ok {
		if err := f.Flush(); err != nil {
			return &Error{Kind: ErrIO, Err: err}
		}
	}
	return nil
}

// Read reads one bootstrap from r, checking each piece as soon as it has been
// read: the magic (ErrInvalidMagic), the version (ErrUnsupportedVersion), the
// length byte (ErrInvalidSessionIDLength, before any session-id byte is
// read), the session id (ErrInvalidSessionIDEncoding, then ErrProtocol
// wrapping InvalidToken, before the key is read) and the key (ErrProtocol
// wrapping WeakSessionKey). A stream that ends inside any piece gives ErrIO
// wrapping io.ErrUnexpectedEOF; other read failures give ErrIO wrapping them.
//
// Read consumes exactly 42 + L bytes from r and never reads further, so a
// *bufio.Reader passed in can then be handed to the JSON-line reader with
// the first frame intact. A failed Read leaves the stream at an unknown
// position: the session must be abandoned.
func Read(r io.Reader) (Bootstrap, error) {
	var buf [headerBytes + MaxSessionIDBytes + KeyBytes]byte
	defer clear(buf[:])

	magic := buf[:len(Magic)]
	if err := readFull(r, magic); err != nil {
		return Bootstrap{}, err
	}
	if string(magic) != Magic {
		return Bootstrap{}, &Error{Kind: ErrInvalidMagic}
	}
	if err := readFull(r, buf[len(Magic):len(Magic)+1]); err != nil {
		return Bootstrap{}, err
	}
	if v := buf[len(Magic)]; v != Version {
		return Bootstrap{}, &Error{Kind: ErrUnsupportedVersion, Version: v}
	}
	// The length byte is read only after the version has been checked, so a
	// stream that ends right after a wrong version reports the version.
	if err := readFull(r, buf[len(Magic)+1:headerBytes]); err != nil {
		return Bootstrap{}, err
	}
	n := int(buf[headerBytes-1])
	if n == 0 || n > MaxSessionIDBytes {
		return Bootstrap{}, &Error{Kind: ErrInvalidSessionIDLength, Actual: n, Maximum: MaxSessionIDBytes}
	}
	id := buf[headerBytes : headerBytes+n]
	if err := readFull(r, id); err != nil {
		return Bootstrap{}, err
	}
	if !utf8.Valid(id) {
		return Bootstrap{}, &Error{Kind: ErrInvalidSessionIDEncoding}
	}
	sessionID := string(id)
	if err := protocol.ValidateToken("session id", sessionID); err != nil {
		return Bootstrap{}, &Error{Kind: ErrProtocol, Err: err}
	}
	secret := buf[headerBytes+n : headerBytes+n+KeyBytes]
	if err := readFull(r, secret); err != nil {
		return Bootstrap{}, err
	}
	key, err := protocol.NewSessionKey(secret)
	if err != nil {
		return Bootstrap{}, &Error{Kind: ErrProtocol, Err: err}
	}
	return Bootstrap{SessionID: sessionID, Key: key}, nil
}

// readFull fills p from r, mapping an early end of stream (with or without
// partial data) to ErrIO wrapping io.ErrUnexpectedEOF.
func readFull(r io.Reader, p []byte) error {
	if _, err := io.ReadFull(r, p); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return &Error{Kind: ErrIO, Err: err}
	}
	return nil
}
