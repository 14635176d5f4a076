package bootstrap

import "fmt"

// ErrorKind identifies one bootstrap failure rule. It implements error, so a
// kind is a valid errors.Is target.
type ErrorKind uint8

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

// String returns the reference variant name ("Io", "InvalidMagic",
// "UnsupportedVersion", "InvalidSessionIdLength", "InvalidSessionIdEncoding",
// "Protocol").
func (k ErrorKind) String() string {
	switch k {
	case ErrIO:
		return "Io"
	case ErrInvalidMagic:
		return "InvalidMagic"
	case ErrUnsupportedVersion:
		return "UnsupportedVersion"
	case ErrInvalidSessionIDLength:
		return "InvalidSessionIdLength"
	case ErrInvalidSessionIDEncoding:
		return "InvalidSessionIdEncoding"
	case ErrProtocol:
		return "Protocol"
	default:
		return fmt.Sprintf("ErrorKind(%d)", uint8(k))
	}
}

// Error returns a short description of the kind.
func (k ErrorKind) Error() string {
	switch k {
	case ErrIO:
		return "bootstrap: private worker bootstrap I/O failed"
	case ErrInvalidMagic:
		return "bootstrap: private worker bootstrap header is invalid"
	case ErrUnsupportedVersion:
		return "bootstrap: unsupported private worker bootstrap version"
	case ErrInvalidSessionIDLength:
		return "bootstrap: private worker bootstrap session id length is invalid"
	case ErrInvalidSessionIDEncoding:
		return "bootstrap: private worker bootstrap session id is not valid UTF-8"
	case ErrProtocol:
		return "bootstrap: private worker bootstrap is invalid"
	default:
		return "bootstrap: " + k.String()
	}
}

// Error is a bootstrap failure. It never contains key bytes.
type Error struct {
	// Kind is the failed rule.
	Kind ErrorKind
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

// Is reports whether target is this error's kind.
func (e *Error) Is(target error) bool {
	k, ok := target.(ErrorKind)
	return ok && k == e.Kind
}

// Unwrap returns the wrapped I/O or protocol error.
func (e *Error) Unwrap() error { return e.Err }
