package jsonline

import (
	"github.com/splashv5/conform/impl/errkind"
	"github.com/splashv5/conform/impl/protocol"
)

// ErrorKind identifies one failure rule of the JSON-line transport (the reference's channel error).
type ErrorKind = errkind.Kind[kinds]

type kinds struct{}

// Table describes the JSON-line error kinds.
func (kinds) Table() *errkind.Table { return &kindTable }

// The failure kinds; each kind's meaning is its message in kindTable, with its entry's Doc.
const (
	ErrIO ErrorKind = iota + 1
	ErrProtocol
	ErrInvalidUTF8
	ErrUnexpectedEndOfStream
	ErrPoisoned
)

var kindTable = errkind.Table{Type: "ErrorKind", Prefix: "jsonline: ", Kinds: []errkind.Entry{
	ErrIO:                    {Name: "Io", Message: "worker frame I/O failed", Doc: "the reader or writer failed; Err holds its error"},
	ErrProtocol:              {Name: "Protocol", Message: "worker frame is invalid", Doc: "Err holds the *protocol.Error: WireFrameTooLarge for a line over MaxLineBytes, Serialization for a line that does not decode or a line to send with a newline, or another frame decoding error"},
	ErrInvalidUTF8:           {Name: "InvalidUtf8", Message: "worker frame is not valid UTF-8", Doc: "a complete line"},
	ErrUnexpectedEndOfStream: {Name: "UnexpectedEndOfStream", Message: "worker frame stream ended before a complete frame", Doc: "including before any byte of a line"},
	ErrPoisoned:              {Name: "Poisoned", Message: "worker frame channel is poisoned by an earlier error", Doc: "every call after a Reader, Writer or Channel failed; Err holds the first error"},
}}

// Error is a transport failure, its cause in Err (see the kind's Doc). Every Error poisons the
// Reader, Writer or Channel that returned it.
type Error = errkind.Error[kinds]

// tooLarge is the Protocol(WireFrameTooLarge) error for a line of actual bytes.
func tooLarge(actual int) *Error {
	return &Error{Kind: ErrProtocol, Err: &protocol.Error{Kind: protocol.ErrWireFrameTooLarge, Actual: uint64(actual), Maximum: MaxLineBytes}}
}
