package derive

import (
	"strconv"

	"github.com/splashv5/conform/impl/canonjson"
)

// Uint decodes an unsigned integer field of the given width (8, 16, 32 or 64 bits).
//
// serde_json hands a field a u64 only for a number token without '.', 'e' or 'E' that
// fits u64; tokens with a fraction or exponent (5.0, 5e0) are floats and strings ("5") are
// strings, so both are type errors, and values above the width's maximum are range errors.
// A negative token is an error too, except -0 where [Context.NegativeZeroAllowed] holds.
func Uint(n *canonjson.Node, c Context, bits int) (uint64, error) {
	expected := "u" + strconv.Itoa(bits)
	if n == nil || n.Kind != canonjson.NodeNumber {
		return 0, invalidType(n, expected)
	}
	tok := n.Text
	for i := 0; i < len(tok); i++ {
		switch tok[i] {
		case '.', 'e', 'E':
			return 0, invalidType(n, expected)
		}
	}
	if len(tok) > 0 && tok[0] == '-' {
		if tok == "-0" && c.NegativeZeroAllowed() {
			return 0, nil
		}
		return 0, &Error{Reason: "invalid value: integer `" + clip(tok) + "`, expected " + expected}
	}
	v, err := strconv.ParseUint(tok, 10, 64)
	if err != nil {
		// Beyond u64 serde_json produces a float.
		return 0, invalidType(n, expected)
	}
	if bits < 64 && v>>uint(bits) != 0 {
		return 0, &Error{Reason: "invalid value: integer `" + clip(tok) + "`, expected " + expected}
	}
	return v, nil
}

// U8 decodes a u8 field; see [Uint].
func U8(n *canonjson.Node, c Context) (uint8, error) {
	v, err := Uint(n, c, 8)
	return uint8(v), err
}

// U16 decodes a u16 field; see [Uint].
func U16(n *canonjson.Node, c Context) (uint16, error) {
	v, err := Uint(n, c, 16)
	return uint16(v), err
}

// U32 decodes a u32 field; see [Uint].
func U32(n *canonjson.Node, c Context) (uint32, error) {
	v, err := Uint(n, c, 32)
	return uint32(v), err
}

// U64 decodes a u64 field; see [Uint].
func U64(n *canonjson.Node, c Context) (uint64, error) {
	return Uint(n, c, 64)
}
