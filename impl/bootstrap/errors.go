package bootstrap

import "github.com/splashv5/conform/impl/errkind"

// ErrorKind identifies one bootstrap failure rule, a variant of the reference's bootstrap error.
type ErrorKind = errkind.Kind[kinds]

type kinds struct{}

// Table describes the bootstrap error kinds.
func (kinds) Table() *errkind.Table { return &kindTable }

// The failure kinds, one per variant of the reference bootstrap error; each kind's meaning is
// its message in kindTable, with its entry's Doc.
const (
	ErrIO ErrorKind = iota + 1
	ErrInvalidMagic
	ErrUnsupportedVersion
	ErrInvalidSessionIDLength
	ErrInvalidSessionIDEncoding
	ErrProtocol
)

var kindTable = errkind.Table{Type: "ErrorKind", Prefix: "bootstrap: ", Kinds: []errkind.Entry{
	ErrIO:                       {Name: "Io", Message: "private worker bootstrap I/O failed", Doc: "the pipe failed, or ended early (wrapping io.ErrUnexpectedEOF)"},
	ErrInvalidMagic:             {Name: "InvalidMagic", Message: "private worker bootstrap header is invalid", Doc: "it does not start with \"SPLPBOOT\""},
	ErrUnsupportedVersion:       {Name: "UnsupportedVersion", Message: "unsupported private worker bootstrap version", Detail: "{}: {version}", Doc: "a version byte other than 1"},
	ErrInvalidSessionIDLength:   {Name: "InvalidSessionIdLength", Message: "private worker bootstrap session id length is invalid", Detail: "bootstrap: private worker bootstrap session id is {actual} bytes; maximum is {maximum}", Doc: "0 or above 128"},
	ErrInvalidSessionIDEncoding: {Name: "InvalidSessionIdEncoding", Message: "private worker bootstrap session id is not valid UTF-8"},
	ErrProtocol:                 {Name: "Protocol", Message: "private worker bootstrap is invalid", Doc: "Err holds the protocol error: InvalidToken for the session id, WeakSessionKey for an all-zero key"},
}}

// Error is a bootstrap failure. It never contains key bytes.
type Error struct {
	errkind.Kind[kinds]
	Version byte  // the received version byte (UnsupportedVersion)
	Actual  int   // the received session-id length (InvalidSessionIdLength)
	Maximum int   // 128 (InvalidSessionIdLength)
	Err     error // the I/O error (Io) or the protocol error (Protocol)
}

// Error describes the failure.
func (e *Error) Error() string {
	msg := e.Kind.Expand("version", e.Version, "actual", e.Actual, "maximum", e.Maximum)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the wrapped I/O or protocol error.
func (e *Error) Unwrap() error { return e.Err }
