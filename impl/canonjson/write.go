package canonjson

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends the compact serde_json serialization of v to dst: no whitespace,
// object keys in byte order, serde_json string escaping, integers in decimal, floats in
// serde_json's layout, and Preserve-mode number text verbatim. It allocates only to grow
// dst.
func (v Value) AppendJSON(dst []byte) []byte {
	if d := v.deferred(); d != nil {
		return append(dst, d.text...) // verified canonical when it was read
	}
	switch v.kind {
	case KindBool:
		if v.b {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case KindNumber:
		return appendNumber(dst, v)
	case KindString:
		return AppendString(dst, v.str())
	case KindArray:
		dst = append(dst, '[')
		elems := v.elems()
		for i := range elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = elems[i].AppendJSON(dst)
		}
		return append(dst, ']')
	case KindObject:
		dst = append(dst, '{')
		ents := v.ents()
		for i := range ents {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, ents[i].Key)
			dst = append(dst, ':')
			dst = ents[i].Value.AppendJSON(dst)
		}
		return append(dst, '}')
	default:
		return append(dst, "null"...)
	}
}

// JSON returns the compact serde_json serialization of v.
func (v Value) JSON() []byte { return v.AppendJSON(nil) }

func appendNumber(dst []byte, v Value) []byte {
	switch v.num {
	case numUint:
		return strconv.AppendUint(dst, v.bits, 10)
	case numInt:
		return strconv.AppendInt(dst, int64(v.bits), 10)
	case numFloat:
		return AppendFloat(dst, math.Float64frombits(v.bits))
	default:
		return append(dst, v.str()...)
	}
}

// escapeByte maps the bytes serde_json escapes to the letter of their short escape, or to
// 'u' for the \u00xx form; every other byte maps to 0 and is written raw.
var escapeByte = func() (t [256]byte) {
	for c := 0; c < 0x20; c++ {
		t[c] = 'u'
	}
	t['\b'], t['\t'], t['\n'], t['\f'], t['\r'] = 'b', 't', 'n', 'f', 'r'
	t['"'], t['\\'] = '"', '\\'
	return t
}()

const hexDigits = "0123456789abcdef"

// AppendString appends s as a serde_json string literal, quotes included. Only '"', '\\'
// and the control bytes 0x00-0x1F are escaped (\b \t \n \f \r, otherwise \u00xx in
// lower-case hex); '/', DEL, '<', '>', '&', U+2028, U+2029 and all other text are written
// raw. Invalid UTF-8 bytes, which a serde_json string cannot hold, are written as U+FFFD.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	// The common case: printable ASCII without quotes or backslashes, copied in one go.
	i := skipVerbatim(s, 0, true)
	if i == len(s) {
		dst = append(dst, s...)
		return append(dst, '"')
	}
	// s[:i] is plain ASCII, so the check of the rest covers the whole string.
	if !utf8.ValidString(s[i:]) {
		return append(appendInvalidUTF8(dst, s), '"')
	}
	start := 0
	for {
		i = skipVerbatim(s, i, false)
		if i == len(s) {
			break
		}
		dst = append(dst, s[start:i]...)
		dst = appendEscape(dst, s[i], escapeByte[s[i]])
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func appendEscape(dst []byte, c, e byte) []byte {
	if e == 'u' {
		return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
	}
	return append(dst, '\\', e)
}

func appendInvalidUTF8(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = utf8.AppendRune(dst, utf8.RuneError)
		case size == 1 && escapeByte[s[i]] != 0:
			dst = appendEscape(dst, s[i], escapeByte[s[i]])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst
}

// AppendFloat appends f in serde_json 1.0.150's float layout (the zmij writer): the
// shortest digits that round-trip, in fixed notation when the decimal exponent E is in
// -5..15 (always with a fraction: 1.0, 100.0, 0.00001) and in scientific notation
// otherwise, with an explicit exponent sign (1e+16, 1e-7, 1.5e-7). Zero is 0.0 or -0.0.
// NaN and infinities, which a Value never holds, are written as null as serde_json does.
func AppendFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	if f == 0 {
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// strconv gives d[.ddd]e±XX with the shortest round-trip digits.
	var sci [32]byte
	b := strconv.AppendFloat(sci[:0], f, 'e', -1, 64)
	var digits [20]byte
	n := 0
	i := 0
	for ; b[i] != 'e'; i++ {
		if b[i] != '.' {
			digits[n] = b[i]
			n++
		}
	}
	i++ // 'e'
	negExp := b[i] == '-'
	exp := 0
	for i++; i < len(b); i++ {
		exp = exp*10 + int(b[i]-'0')
	}
	if negExp {
		exp = -exp
	}
	d := digits[:n]
	switch {
	case exp < -5 || exp > 15:
		dst = append(dst, d[0])
		if n > 1 {
			dst = append(dst, '.')
			dst = append(dst, d[1:]...)
		}
		dst = append(dst, 'e')
		if negExp {
			dst = append(dst, '-')
			exp = -exp
		} else {
			dst = append(dst, '+')
		}
		return strconv.AppendInt(dst, int64(exp), 10)
	case exp >= n-1:
		dst = append(dst, d...)
		for z := exp - n + 1; z > 0; z-- {
			dst = append(dst, '0')
		}
		return append(dst, '.', '0')
	case exp >= 0:
		dst = append(dst, d[:exp+1]...)
		dst = append(dst, '.')
		return append(dst, d[exp+1:]...)
	default:
		dst = append(dst, '0', '.')
		for z := -exp - 1; z > 0; z-- {
			dst = append(dst, '0')
		}
		return append(dst, d...)
	}
}
