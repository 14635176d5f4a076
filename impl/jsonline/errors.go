package jsonline

import (
	"github.com/splashv5/conform/impl/errkind"
	"github.com/splashv5/conform/impl/protocol"
)

// ErrorKind identifies one failure rule of the JSON-line transport. It is an error, so a
// kind is a valid errors.Is target. The kinds are exactly those of the reference's JSON-line
// channel error; String returns the variant name.
type ErrorKind = errkind.Kind[kinds]

// kinds is the space of the JSON-line error kinds.
type kinds struct{}

// Table describes the JSON-line error kinds.
func (kinds) Table() *errkind.Table { return &kindTable }

// The failure kinds.
const (
	// ErrIO is a failure of the underlying reader or writer; the cause is
	// available through errors.Unwrap.
	ErrIO ErrorKind = iota + 1
	// ErrProtocol wraps a protocol error: WireFrameTooLarge for a line over
	// MaxLineBytes, Serialization for a received line that does not decode
	// as a frame or a line to send that contains a newline, or any other
	// frame decoding error. errors.Is also matches the wrapped kind.
	ErrProtocol
	// ErrInvalidUTF8 is a complete line that is not valid UTF-8.
	ErrInvalidUTF8
	// ErrUnexpectedEndOfStream is end of input before a terminating newline,
	// including end of input before any byte of a line.
	ErrUnexpectedEndOfStream
	// ErrPoisoned is returned by every call after a Reader, Writer or
	// Channel failed; it wraps the first error, so errors.Is also matches
	// that error's kinds.
	ErrPoisoned
)

var kindTable = errkind.Table{Type: "ErrorKind", Prefix: "jsonline: ", Kinds: []errkind.Entry{
	ErrIO:                    {Name: "Io", Message: "worker frame I/O failed"},
	ErrProtocol:              {Name: "Protocol", Message: "worker frame is invalid"},
	ErrInvalidUTF8:           {Name: "InvalidUtf8", Message: "worker frame is not valid UTF-8"},
	ErrUnexpectedEndOfStream: {Name: "UnexpectedEndOfStream", Message: "worker frame stream ended before a complete frame"},
	ErrPoisoned:              {Name: "Poisoned", Message: "worker frame channel is poisoned"},
}}

// Error is a transport failure. Every Error poisons the Reader, Writer or
// Channel that returned it.
type Error struct {
	// Kind is the failed rule.
	errkind.Kind[kinds]
	// Err is the I/O error (ErrIO), the *protocol.Error (ErrProtocol), the
	// first error (ErrPoisoned), otherwise nil.
	Err error
}

// Error describes the failure.
func (e *Error) Error() string {
	if e.Err == nil {
		return e.Kind.Error()
	}
	if e.Kind == ErrPoisoned {
		return "jsonline: worker frame channel is poisoned by an earlier error: " + e.Err.Error()
	}
	return e.Kind.Error() + ": " + e.Err.Error()
}

// Unwrap returns the wrapped error.
func (e *Error) Unwrap() error { return e.Err }

// tooLarge is the Protocol(WireFrameTooLarge) error for a line of actual bytes.
func tooLarge(actual int) *Error {
	return &Error{Kind: ErrProtocol, Err: &protocol.Error{
		Kind: protocol.ErrWireFrameTooLarge, Actual: uint64(actual), Maximum: MaxLineBytes,
	}}
}

// protocolError wraps a protocol error.
func protocolError(err error) *Error { return &Error{Kind: ErrProtocol, Err: err} }
