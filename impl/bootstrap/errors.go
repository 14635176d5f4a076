package bootstrap

import (
	"fmt"

	"github.com/splashv5/conform/impl/errkind"
)

// ErrorKind identifies one bootstrap failure rule. It is an error, so a kind is a valid
// errors.Is target; String returns the reference variant name.
type ErrorKind = errkind.Kind[kinds]

// kinds is the space of the bootstrap error kinds.
type kinds struct{}

// Table describes the bootstrap error kinds.
func (kinds) Table() *errkind.Table { return &kindTable }

// The failure kinds, one per variant of the reference bootstrap error.
const (
	// ErrIO is a failure of the pipe, including an early end of stream
	// (which wraps io.ErrUnexpectedEOF).
	ErrIO ErrorKind = iota + 1
	// ErrInvalidMagic is a preamble that does not start with "SPLPBOOT".
	ErrInvalidMagic
	// ErrUnsupportedVersion is a version byte other than 1.
	ErrUnsupportedVersion
	// ErrInvalidSessionIDLength is a session-id length of 0 or above 128.
	ErrInvalidSessionIDLength
	// ErrInvalidSessionIDEncoding is a session id that is not UTF-8.
	ErrInvalidSessionIDEncoding
	// ErrProtocol wraps a protocol error: InvalidToken for the session id,
	// WeakSessionKey for an all-zero key. errors.Is matches the wrapped
	// protocol kind too.
	ErrProtocol
)

var kindTable = errkind.Table{Type: "ErrorKind", Prefix: "bootstrap: ", Kinds: []errkind.Entry{
	ErrIO:                       {Name: "Io", Message: "private worker bootstrap I/O failed"},
	ErrInvalidMagic:             {Name: "InvalidMagic", Message: "private worker bootstrap header is invalid"},
	ErrUnsupportedVersion:       {Name: "UnsupportedVersion", Message: "unsupported private worker bootstrap version"},
	ErrInvalidSessionIDLength:   {Name: "InvalidSessionIdLength", Message: "private worker bootstrap session id length is invalid"},
	ErrInvalidSessionIDEncoding: {Name: "InvalidSessionIdEncoding", Message: "private worker bootstrap session id is not valid UTF-8"},
	ErrProtocol:                 {Name: "Protocol", Message: "private worker bootstrap is invalid"},
}}

// Error is a bootstrap failure. It never contains key bytes.
type Error struct {
	// Kind is the failed rule.
	errkind.Kind[kinds]
	// Version is the received version byte (ErrUnsupportedVersion).
	Version byte
	// Actual is the received session-id length (ErrInvalidSessionIDLength).
	Actual int
	// Maximum is 128 (ErrInvalidSessionIDLength).
	Maximum int
	// Err is the I/O error (ErrIO) or the protocol error (ErrProtocol).
	Err error
}

// Error describes the failure.
func (e *Error) Error() string {
	switch e.Kind {
	case ErrUnsupportedVersion:
		return fmt.Sprintf("bootstrap: unsupported private worker bootstrap version: %d", e.Version)
	case ErrInvalidSessionIDLength:
		return fmt.Sprintf("bootstrap: private worker bootstrap session id is %d bytes; maximum is %d", e.Actual, e.Maximum)
	case ErrIO, ErrProtocol:
		if e.Err != nil {
			return e.Kind.Error() + ": " + e.Err.Error()
		}
	}
	return e.Kind.Error()
}

// Unwrap returns the wrapped I/O or protocol error.
func (e *Error) Unwrap() error { return e.Err }
