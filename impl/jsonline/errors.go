package jsonline

import (
	"fmt"
)

// ErrorKind identifies one failure rule of the JSON-line transport. It
// implements error, so a kind is a valid errors.Is target.
type ErrorKind uint8

// The failure kinds, named after the reference transport's error variants.
const (
	// ErrIO is a failure of the underlying reader or writer; the cause is
	// available through errors.Unwrap.
	ErrIO ErrorKind = iota + 1
	// ErrWireFrameTooLarge is a line (without its newline) longer than
	// MaxLineBytes; the reference reports it as the protocol error
	// WireFrameTooLarge.
	ErrWireFrameTooLarge
	// ErrInvalidUTF8 is a complete line that is not valid UTF-8.
	ErrInvalidUTF8
	// ErrUnexpectedEndOfStream is end of input before a terminating newline,
	// including end of input before any byte of a line.
	ErrUnexpectedEndOfStream
	// ErrNewlineInLine is a Go-only writer check: the line handed to
	// WriteLine contains a newline byte and would split into two frames.
	// The reference writer never receives such a line because its JSON
	// serializer cannot produce one.
	ErrNewlineInLine
	// ErrPoisoned is returned by every call after a Reader or Writer failed;
	// it wraps the first error, so errors.Is also matches that error's kind.
	ErrPoisoned
)

// String returns the kind's name ("Io", "WireFrameTooLarge", "InvalidUtf8",
// "UnexpectedEndOfStream", "NewlineInLine").
func (k ErrorKind) String() string {
	switch k {
	case ErrIO:
		return "Io"
	case ErrWireFrameTooLarge:
		return "WireFrameTooLarge"
	case ErrInvalidUTF8:
		return "InvalidUtf8"
	case ErrUnexpectedEndOfStream:
		return "UnexpectedEndOfStream"
	case ErrNewlineInLine:
		return "NewlineInLine"
	case ErrPoisoned:
		return "Poisoned"
	default:
		return fmt.Sprintf("ErrorKind(%d)", uint8(k))
	}
}

// Error returns a short description of the kind.
func (k ErrorKind) Error() string {
	switch k {
	case ErrIO:
		return "jsonline: worker frame I/O failed"
	case ErrWireFrameTooLarge:
		return "jsonline: worker frame line is too large"
	case ErrInvalidUTF8:
		return "jsonline: worker frame is not valid UTF-8"
	case ErrUnexpectedEndOfStream:
		return "jsonline: worker frame stream ended before a complete frame"
	case ErrNewlineInLine:
		return "jsonline: worker frame line contains a newline"
	case ErrPoisoned:
		return "jsonline: worker frame channel is poisoned"
	default:
		return "jsonline: " + k.String()
	}
}

// Error is a transport failure. Every Error poisons the Reader or Writer that
// returned it.
type Error struct {
	// Kind is the failed rule.
	Kind ErrorKind
	// Actual is the observed line length for ErrWireFrameTooLarge (the
	// number of bytes seen when the limit was crossed), otherwise 0.
	Actual int
	// Maximum is MaxLineBytes for ErrWireFrameTooLarge, otherwise 0.
	Maximum int
	// Err is the underlying I/O error for ErrIO, the first error for
	// ErrPoisoned, otherwise nil.
	Err error
}

// Error describes the failure.
func (e *Error) Error() string {
	switch e.Kind {
	case ErrWireFrameTooLarge:
		return fmt.Sprintf("jsonline: worker frame line is %d bytes; maximum is %d", e.Actual, e.Maximum)
	case ErrIO:
		if e.Err != nil {
			return "jsonline: worker frame I/O failed: " + e.Err.Error()
		}
	case ErrPoisoned:
		if e.Err != nil {
			return "jsonline: worker frame channel is poisoned by an earlier error: " + e.Err.Error()
		}
	}
	return e.Kind.Error()
}

// Is reports whether target is this error's kind.
func (e *Error) Is(target error) bool {
	k, ok := target.(ErrorKind)
	return ok && k == e.Kind
}

// Unwrap returns the underlying I/O error or, for ErrPoisoned, the first
// error.
func (e *Error) Unwrap() error { return e.Err }
