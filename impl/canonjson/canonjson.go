// Package canonjson reads and writes JSON exactly as serde_json 1.0.150 does for
// serde_json::Value, so that Go code produces and accepts the same bytes as the Rust
// reference of the Splash worker protocol.
//
// The package has two layers. [Parse] turns input bytes into a syntax tree ([Node]) that keeps
// document order, duplicate keys and raw number tokens; serde-derive style decoding works on
// that tree. [FromNode] and [ParseValue] turn input into a [Value], the Go counterpart of
// serde_json::Value: objects sorted bytewise by key with unique keys (the last duplicate
// wins) and numbers held according to a [Mode]. [Value.AppendJSON] is the compact serde_json
// writer whose output the protocol authenticates.
//
// A receiver can skip most of that work for text that is already canonical:
// [Parser.ParseDeferring] verifies such an array or object in one pass and keeps it as its
// text, and the resulting deferred Value writes that text and builds its tree only when read;
// a [Reader] reads any Value, deferred ones in place, as tokens without building a tree.
//
// Numbers are the one place where the two serde_json build modes disagree: with the
// arbitrary_precision feature ([Preserve]) number text is kept, without it ([Lossy]) numbers
// become u64, i64 or f64 and floats are re-written by the zmij shortest-digits writer.
// [PortableNumber] and [CheckPortable] tell whether a number survives both modes unchanged.
package canonjson

import (
	"errors"
	"fmt"
)

// Mode selects the serde_json number model used when a number token becomes a Value.
type Mode uint8

const (
	// Preserve is serde_json built with arbitrary_precision: number text is kept
	// (integers that fit u64 or i64 are normalized; exponents are spelled "e+"/"e-").
	Preserve Mode = 1
	// Lossy is default serde_json: numbers become u64, i64 or f64, and floats are
	// re-written in shortest round-trip form.
	Lossy Mode = 2
)

// String returns "preserve" or "lossy", or a diagnostic form for an invalid mode.
func (m Mode) String() string {
	switch m {
	case Preserve:
		return "preserve"
	case Lossy:
		return "lossy"
	default:
		return fmt.Sprintf("Mode(%d)", uint8(m))
	}
}

func (m Mode) valid() bool { return m == Preserve || m == Lossy }

// ParseMode returns the Mode named by s ("preserve" or "lossy").
func ParseMode(s string) (Mode, error) {
	switch s {
	case "preserve":
		return Preserve, nil
	case "lossy":
		return Lossy, nil
	}
	return 0, fmt.Errorf("%w: %q (want \"preserve\" or \"lossy\")", ErrUnknownMode, s)
}

var (
	// ErrSyntax is wrapped by every error that rejects input bytes or a number token,
	// including the nesting limit and out-of-range numbers (serde_json classifies all of
	// them as syntax errors).
	ErrSyntax = errors.New("canonjson: syntax error")
	// ErrRecursionLimit is wrapped (together with ErrSyntax) when the input nests arrays and
	// objects deeper than serde_json's recursion limit allows.
	ErrRecursionLimit = errors.New("canonjson: recursion limit exceeded")
	// ErrNumberOutOfRange is wrapped (together with ErrSyntax) when a number does not fit the
	// Lossy model, such as 1e400.
	ErrNumberOutOfRange = errors.New("canonjson: number out of range")
	// ErrNonPortableNumber is wrapped by CheckPortable when a number is written differently
	// by the two modes.
	ErrNonPortableNumber = errors.New("canonjson: number is not portable between modes")
	// ErrNonFiniteFloat is returned by Float for NaN and infinities, which JSON cannot hold.
	ErrNonFiniteFloat = errors.New("canonjson: float is not finite")
	// ErrUnknownMode is wrapped by ParseMode, and returned when a Mode argument is neither
	// Preserve nor Lossy.
	ErrUnknownMode = errors.New("canonjson: unknown mode")
	// ErrInvalidNode is wrapped by FromNode when a hand-built syntax tree is malformed
	// (nil node, unknown kind, nil member value).
	ErrInvalidNode = errors.New("canonjson: invalid syntax tree")
)

// SyntaxError reports input that serde_json rejects.
type SyntaxError struct {
	// Offset is the byte offset in the input (or in the number token) where the problem was
	// found, or -1 when the error comes from a hand-built syntax tree.
	Offset int
	// Reason says what was wrong.
	Reason string

	cause error // nil, ErrRecursionLimit or ErrNumberOutOfRange
}

// Error formats the reason and the offset.
func (e *SyntaxError) Error() string {
	if e.Offset < 0 {
		return "canonjson: " + e.Reason
	}
	return fmt.Sprintf("canonjson: %s at byte offset %d", e.Reason, e.Offset)
}

// Unwrap returns ErrSyntax and, when set, the more specific cause.
func (e *SyntaxError) Unwrap() []error {
	if e.cause == nil {
		return []error{ErrSyntax}
	}
	return []error{ErrSyntax, e.cause}
}

func syntaxErr(offset int, reason string) *SyntaxError {
	return &SyntaxError{Offset: offset, Reason: reason}
}
