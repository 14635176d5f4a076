// Package derive applies the decoding rules of serde's derived Deserialize implementations
// (serde 1.0.228 with serde_json 1.0.150) to a canonjson syntax tree.
//
// The Rust reference decodes every protocol type with #[derive(Deserialize)]. Those rules
// decide which inputs are accepted, so a byte-compatible port must follow them exactly:
//
//   - A struct is either a JSON object or a positional JSON array of its fields in
//     declaration order ([Struct]).
//   - Object keys match field names exactly (case-sensitive, after unescaping). A repeated
//     field is an error; an unknown field is skipped, or rejected for deny_unknown_fields
//     types; a missing required field is an error, a missing default or Option field takes
//     its default.
//   - Integer fields take plain integer tokens only, range-checked per width ([Uint]).
//   - Enums come in three shapes: unit enums written as a string ([UnitEnum]), internally
//     tagged enums ([Tagged]) and adjacently tagged enums ([Adjacent]).
//
// serde decodes the body of an internally tagged enum (and the content of an adjacently
// tagged enum that precedes its tag) from a buffered copy of the input, its private
// "Content" tree. A few rules differ there, and [Context.Buffered] selects them: a tag may be
// a variant index, a unit enum may be {"variant":{}}, and with arbitrary_precision
// ([canonjson.Preserve]) the integer token -0 is accepted as 0. Buffering also converts every
// number in the buffered subtree, so in [canonjson.Lossy] mode an out-of-range number there
// is an error even inside an ignored field.
//
// Every failure is an *Error wrapping [ErrDecode]; the protocol layer maps it to the
// reference's Serialization error kind.
package derive

import (
	"errors"
	"strconv"
	"strings"

	"github.com/splashv5/conform/impl/canonjson"
)

// ErrDecode is wrapped by every error of this package: the input is well-formed JSON but does
// not have the shape the Rust type accepts.
var ErrDecode = errors.New("derive: input does not match the type")

// Error reports where and why a syntax tree does not decode.
type Error struct {
	// Path locates the offending value, for example "message.invocation.payload"; it is
	// empty at the root. Array elements appear as "[2]".
	Path string
	// Reason says what serde would have complained about, for example
	// "duplicate field `type`".
	Reason string
	cause  error
}

// Error returns the path and the reason.
func (e *Error) Error() string {
	if e.Path == "" {
		return "derive: " + e.Reason
	}
	return "derive: " + e.Path + ": " + e.Reason
}

// Unwrap returns ErrDecode and, when the failure came from canonjson, its error.
func (e *Error) Unwrap() []error {
	if e.cause == nil {
		return []error{ErrDecode}
	}
	return []error{ErrDecode, e.cause}
}

// Errorf returns an *Error at the root with the given reason. Decoders built on this package
// use it for their own shape rules.
func Errorf(reason string) error { return &Error{Reason: reason} }

func wrapCause(reason string, cause error) error {
	return &Error{Reason: reason + ": " + cause.Error(), cause: cause}
}

// AtField prefixes the path of a derive error with a field name. Other errors are returned
// unchanged.
func AtField(err error, name string) error {
	var de *Error
	if err == nil || !errors.As(err, &de) {
		return err
	}
	name = clip(name)
	if de.Path == "" {
		de.Path = name
	} else if strings.HasPrefix(de.Path, "[") {
		de.Path = name + de.Path
	} else {
		de.Path = name + "." + de.Path
	}
	return err
}

// AtIndex prefixes the path of a derive error with an array index.
func AtIndex(err error, i int) error {
	var de *Error
	if err == nil || !errors.As(err, &de) {
		return err
	}
	seg := "[" + strconv.Itoa(i) + "]"
	if de.Path == "" || strings.HasPrefix(de.Path, "[") {
		de.Path = seg + de.Path
	} else {
		de.Path = seg + "." + de.Path
	}
	return err
}

// Context carries what decoding depends on besides the tree itself.
type Context struct {
	// Mode is the serde_json number model (arbitrary_precision on or off).
	Mode canonjson.Mode
	// Buffered is true inside a subtree that serde decodes from its buffered Content copy:
	// the body of an internally tagged enum, or adjacently tagged content that comes before
	// its tag.
	Buffered bool
}

// NegativeZeroAllowed reports whether the integer token -0 decodes as 0 here. With
// arbitrary_precision, serde_json hands buffered integers to serde as i64 when they fit, so
// -0 arrives as the integer 0; everywhere else -0 is a float and integer fields reject it.
func (c Context) NegativeZeroAllowed() bool {
	return c.Buffered && c.Mode == canonjson.Preserve
}

// enterBuffer returns the context for a subtree that serde is about to buffer, after checking
// that buffering it succeeds. Buffering converts every number token with the mode's number
// model; only Lossy can fail (an out-of-range float such as 1e400).
func (c Context) enterBuffer(n *canonjson.Node) (Context, error) {
	if c.Buffered {
		return c, nil
	}
	if c.Mode == canonjson.Lossy {
		if err := checkLossyNumbers(n); err != nil {
			return c, err
		}
	}
	c.Buffered = true
	return c, nil
}

// EnterBuffer is the exported form of the buffering step for decoders that buffer a subtree
// themselves. It checks the subtree's numbers under Lossy and marks the context buffered.
func (c Context) EnterBuffer(n *canonjson.Node) (Context, error) { return c.enterBuffer(n) }

func checkLossyNumbers(n *canonjson.Node) error {
	if n == nil {
		return nil
	}
	if n.Kind == canonjson.NodeRaw {
		if _, err := canonjson.FromNode(n, canonjson.Lossy); err == nil {
			return nil // verified canonical in Lossy, so every number converts
		}
		n = canonjson.Expand(n)
	}
	switch n.Kind {
	case canonjson.NodeNumber:
		if _, err := canonjson.NumberToken(n.Text, canonjson.Lossy); err != nil {
			return wrapCause("number "+n.Text+" cannot be buffered", err)
		}
	case canonjson.NodeArray:
		for i, e := range n.Elems {
			if err := checkLossyNumbers(e); err != nil {
				return AtIndex(err, i)
			}
		}
	case canonjson.NodeObject:
		for _, m := range n.Members {
			if err := checkLossyNumbers(m.Value); err != nil {
				return AtField(err, m.Key)
			}
		}
	}
	return nil
}

// describe names the JSON kind of a node the way serde's "invalid type" messages do.
func describe(n *canonjson.Node) string {
	if n == nil {
		return "nothing"
	}
	switch n.RawContainerKind() {
	case canonjson.NodeNull:
		return "null"
	case canonjson.NodeBool:
		if n.Bool {
			return "boolean `true`"
		}
		return "boolean `false`"
	case canonjson.NodeNumber:
		return "number " + clip(n.Text)
	case canonjson.NodeString:
		return "string " + strconv.Quote(clip(n.Text))
	case canonjson.NodeArray:
		return "sequence"
	case canonjson.NodeObject:
		return "map"
	}
	return "invalid node"
}

// maxEcho bounds how much of an input string an error message repeats.
const maxEcho = 64

// clip shortens s for an error message so a hostile input cannot flood logs.
func clip(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	return s[:maxEcho] + "...(" + strconv.Itoa(len(s)) + " bytes)"
}

func invalidType(n *canonjson.Node, expected string) error {
	return &Error{Reason: "invalid type: " + describe(n) + ", expected " + expected}
}

// IsNull reports whether n is JSON null. serde decodes null as None for an Option field.
func IsNull(n *canonjson.Node) bool { return n != nil && n.Kind == canonjson.NodeNull }

// String decodes a string field: only a JSON string is accepted.
func String(n *canonjson.Node) (string, error) {
	if n == nil || n.Kind != canonjson.NodeString {
		return "", invalidType(n, "a string")
	}
	return n.Text, nil
}

// Value decodes a serde_json::Value field with the context's number model.
func Value(n *canonjson.Node, c Context) (canonjson.Value, error) {
	v, err := canonjson.FromNode(n, c.Mode)
	if err != nil {
		return canonjson.Value{}, wrapCause("invalid JSON value", err)
	}
	return v, nil
}

// Seq calls each for every element of a JSON array, in order, and prefixes errors with the
// element index. Anything but an array is an error.
func Seq(n *canonjson.Node, each func(i int, e *canonjson.Node) error) error {
	n = canonjson.Expand(n)
	if n == nil || n.Kind != canonjson.NodeArray {
		return invalidType(n, "a sequence")
	}
	for i, e := range n.Elems {
		if err := each(i, e); err != nil {
			return AtIndex(err, i)
		}
	}
	return nil
}

// Map calls each for every member of a JSON object in document order (duplicates included)
// and prefixes errors with the key. Anything but an object is an error. A BTreeMap keeps
// the last of repeated keys, which callers get by overwriting.
func Map(n *canonjson.Node, each func(key string, v *canonjson.Node) error) error {
	n = canonjson.Expand(n)
	if n == nil || n.Kind != canonjson.NodeObject {
		return invalidType(n, "a map")
	}
	for _, m := range n.Members {
		if err := each(m.Key, m.Value); err != nil {
			return AtField(err, m.Key)
		}
	}
	return nil
}
