package canonjson

import (
	"math"
	"math/bits"
	"slices"
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
	return appendValue(dst, &v, nil)
}

// JSON returns the compact serde_json serialization of v.
func (v Value) JSON() []byte { return v.AppendJSON(nil) }

// appendValue writes v as AppendJSON does. When chk is not nil it also records in chk the
// first number token, in writing order, that is not a PortableNumber.
func appendValue(dst []byte, v *Value, chk *portabilityCheck) []byte {
	switch v.kind {
	case KindBool:
		if v.b {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case KindNumber:
		if chk == nil {
			return appendNumber(dst, *v)
		}
		start := len(dst)
		dst = appendNumber(dst, *v)
		chk.number(v, dst[start:])
		return dst
	case KindString:
		return AppendString(dst, v.str())
	case KindArray:
		if v.num == numDeferred {
			return appendDeferred(dst, v, chk)
		}
		elems := v.rawElems()
		if len(elems) == 0 {
			return append(dst, '[', ']')
		}
		dst = append(dst, '[')
		for i := range elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			e := &elems[i]
			if e.kind == KindString {
				dst = AppendString(dst, e.str())
			} else {
				dst = appendValue(dst, e, chk)
			}
		}
		return append(dst, ']')
	case KindObject:
		if v.num == numDeferred {
			return appendDeferred(dst, v, chk)
		}
		ents := v.rawEnts()
		if len(ents) == 0 {
			return append(dst, '{', '}')
		}
		if chk != nil && !chk.found && ents[0].Key == privateNumberKey {
			chk.found, chk.token = true, PrivateNumberObject
		}
		sep := byte('{')
		for i := range ents {
			e := &ents[i]
			dst = appendKey(dst, sep, e.Key)
			sep = ','
			switch {
			case e.Value.kind == KindString:
				dst = AppendString(dst, e.Value.str())
			case e.Value.kind == KindNumber && e.Value.num == numUint && e.Value.bits < 1e19:
				// Integers below 10^19 are portable; they need no check.
				dst = strconv.AppendUint(dst, e.Value.bits, 10)
			case e.Value.kind == KindNumber && e.Value.num == numFloat:
				start := len(dst)
				var exact bool
				dst, exact = appendFloatExact(dst, math.Float64frombits(e.Value.bits))
				if chk != nil && !exact {
					chk.number(&e.Value, dst[start:])
				}
			default:
				dst = appendValue(dst, &e.Value, chk)
			}
		}
		return append(dst, '}')
	default:
		return append(dst, "null"...)
	}
}

// appendDeferred writes a deferred container: its verified canonical text.
func appendDeferred(dst []byte, v *Value, chk *portabilityCheck) []byte {
	d := (*deferredDoc)(v.ptr)
	if chk != nil {
		chk.text(d.text)
	}
	return append(dst, d.text...)
}

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
	n := len(dst)
	if len(s) <= shortString {
		// Check and copy in one loop: for short strings that is cheaper than a scan
		// followed by a copy.
		dst = slices.Grow(dst, len(s)+2)[:n+len(s)+2]
		out := dst[n+1 : n+1+len(s)]
		for i := range len(out) {
			c := s[i]
			if out[i] = c; !plainByte[c] {
				return appendEscapedString(dst[:n], s)
			}
		}
	} else {
		if !plainASCII(s) {
			return appendEscapedString(dst, s)
		}
		dst = slices.Grow(dst, len(s)+2)[:n+len(s)+2]
		copy(dst[n+1:], s)
	}
	dst[n] = '"'
	dst[len(dst)-1] = '"'
	return dst
}

// shortString is the length up to which AppendString checks and copies a string byte by
// byte rather than scanning it a word at a time and then copying it.
const shortString = 16

// shortEscaped is the length up to which appendEscapedString escapes, copies and checks
// UTF-8 in one pass; longer strings are first checked for valid UTF-8 as a whole.
const shortEscaped = 64

// appendKey appends sep, then key as a string literal, then ':'.
func appendKey(dst []byte, sep byte, key string) []byte {
	return append(AppendString(append(dst, sep), key), ':')
}

// appendEscapedString is AppendString for a string that is not plainASCII.
func appendEscapedString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	if len(s) <= shortEscaped {
		// One pass: runs of printable ASCII are copied whole, escapes written, and
		// other bytes decoded as UTF-8 one character at a time.
		for i := 0; i < len(s); {
			j := skipVerbatim(s, i, true)
			dst = append(dst, s[i:j]...)
			if j == len(s) {
				break
			}
			if c := s[j]; c < utf8.RuneSelf {
				dst = appendEscape(dst, c, escapeByte[c])
				i = j + 1
				continue
			}
			if c := s[j]; 0xc2 <= c && c < 0xe0 && j+1 < len(s) && s[j+1]&0xc0 == 0x80 {
				// A two-byte character (Latin letters with accents, Greek, Cyrillic ...),
				// valid by construction, copied without the general decoder.
				dst = append(dst, c, s[j+1])
				i = j + 2
				continue
			}
			r, size := utf8.DecodeRuneInString(s[j:])
			if r == utf8.RuneError && size == 1 {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			} else {
				dst = append(dst, s[j:j+size]...)
			}
			i = j + size
		}
		return append(dst, '"')
	}
	// The string often starts with a run of printable ASCII, copied in one go.
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
	dst, _ = appendFloatExact(dst, f)
	return dst
}

// appendFloatExact is AppendFloat that also reports exact = true when the way it wrote f
// shows that exactFloatToken accepts the token (so the portability check has nothing to
// do): a fixed-notation short decimal whose digits, read as one integer, stay below 2^53
// with at most 14 fraction digits. false means only that it does not know.
func appendFloatExact(dst []byte, f float64) (out []byte, exact bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...), false
	}
	if f == 0 {
		if math.Signbit(f) {
			return append(dst, "-0.0"...), true
		}
		return append(dst, "0.0"...), true
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	var digits [24]byte
	if r, p, ok := shortDecimal(f); ok {
		// f is r / 10^p; r has at most 15 digits.
		for p > 0 && r%10 == 0 {
			r /= 10
			p--
		}
		// When f >= 1 (its decimal exponent is then 0..14) the layout is fixed: the
		// integer part, a point, and the p fraction digits (or 0).
		if p == 0 {
			// The token is r followed by ".0": its digits read as r·10.
			return append(strconv.AppendUint(dst, r, 10), '.', '0'), r < (1<<53)/10
		}
		if p < len(pow10u) && r >= pow10u[p] {
			q := r / pow10u[p]
			dst = strconv.AppendUint(dst, q, 10)
			dst = append(dst, '.')
			n := len(dst)
			dst = append(dst, zeroDigits[:p]...)
			for k, frac := n+p-1, r-q*pow10u[p]; frac != 0; k, frac = k-1, frac/10 {
				dst[k] = byte('0' + frac%10)
			}
			return dst, true // r < 10^15 < 2^53, and p <= 14
		}
		for r%10 == 0 {
			r /= 10
			p--
		}
		d := strconv.AppendUint(digits[:0], r, 10)
		return appendFloatLayout(dst, d, len(d)-1-p), false
	}
	// strconv gives d[.ddd]e±XX with the shortest round-trip digits.
	var sci [32]byte
	b := strconv.AppendFloat(sci[:0], f, 'e', -1, 64)
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
	return appendFloatLayout(dst, digits[:n], exp), false
}

// shortDecimal finds, for a finite f > 0, an integer r below 10^15 and a p in 0..22 such
// that r / 10^p rounds to f, which means the decimal r·10^-p is f's shortest round-trip
// digits: two different decimals of at most 15 significant digits never round to the same
// double, and the shortest digits have no more digits than r. ok is false when the search
// finds none (f may still have one), and the caller takes the general path.
func shortDecimal(f float64) (r uint64, p int, ok bool) {
	if f >= 1e15 || f < 1e-22 {
		return 0, 0, false
	}
	// A dyadic f = m / 2^j (integers and halves, quarters, eighths ...) is exactly the
	// decimal m·5^j / 10^j. f is normal here, so its significand has the implicit bit.
	b := math.Float64bits(f)
	m := b&(1<<52-1) | 1<<52
	tz := bits.TrailingZeros64(m)
	m >>= tz
	if j := 1075 - int(b>>52) - tz; j <= 0 {
		return m << -j, 0, true // f < 10^15, so the shift stays below 2^50
	} else if j < len(pow5) && m < 1e15/pow5[j] {
		return m * pow5[j], j, true
	}
	for p = 0; p <= 22; p++ {
		y := f * pow10[p]
		if y >= 1e15 {
			return 0, 0, false
		}
		ry := math.Floor(y + 0.5)
		// If r / 10^p rounds to f, y = f·10^p is within about 2.3e-16·r of r: skip the
		// division for every p where y is farther from an integer.
		if ry == 0 || math.Abs(y-ry) > y*4e-16 {
			continue
		}
		// ry and 10^p are exact, so the quotient is r / 10^p correctly rounded.
		if ry/pow10[p] == f {
			return uint64(ry), p, true
		}
	}
	return 0, 0, false
}

// pow10u holds 10^0 … 10^14, the powers of ten below 10^15, as integers.
var pow10u = func() (t [15]uint64) {
	t[0] = 1
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1] * 10
	}
	return t
}()

// zeroDigits is the longest run of fraction digits AppendFloat pads with zeros.
const zeroDigits = "00000000000000"

// pow5 holds 5^0 … 5^21, every power of five below 10^15.
var pow5 = func() (t [22]uint64) {
	t[0] = 1
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1] * 5
	}
	return t
}()

// appendFloatLayout appends the positive number 0.d × 10^(exp+1), given its significant
// digits d (no trailing zero unless d is a single digit) and decimal exponent exp, in the
// layout AppendFloat documents.
func appendFloatLayout(dst, d []byte, exp int) []byte {
	n := len(d)
	switch {
	case exp < -5 || exp > 15:
		dst = append(dst, d[0])
		if n > 1 {
			dst = append(dst, '.')
			dst = append(dst, d[1:]...)
		}
		dst = append(dst, 'e')
		if exp < 0 {
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
