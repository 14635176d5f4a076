package canonjson

import (
	"math"
	"strconv"
	"strings"
)

// numRepr says how a number Value holds its number.
type numRepr uint8

const (
	numUint  numRepr = iota // bits is a uint64 (also every non-negative integer)
	numInt                  // bits is a negative int64
	numFloat                // bits is a float64 (math.Float64bits)
	numText                 // str is Preserve-mode number text, written verbatim
)

// number is a converted number token.
type number struct {
	repr numRepr
	bits uint64
	text string
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// scanNumber checks the JSON number grammar (serde_json's, which is RFC 8259's) for the
// token starting at s[i] and returns the offset just past it. On failure the error carries
// the offset of the offending byte.
func scanNumber[T string | []byte](s T, i int) (int, *SyntaxError) {
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i >= len(s) {
		return 0, syntaxErr(i, "EOF while parsing a number")
	}
	switch c := s[i]; {
	case c == '0':
		i++
		if i < len(s) && isDigit(s[i]) {
			return 0, syntaxErr(i, "invalid number: leading zero")
		}
	case '1' <= c && c <= '9':
		for i++; i < len(s) && isDigit(s[i]); i++ {
		}
	default:
		return 0, syntaxErr(i, "invalid number")
	}
	if i < len(s) && s[i] == '.' {
		i++
		first := i
		for ; i < len(s) && isDigit(s[i]); i++ {
		}
		if i == first {
			return 0, syntaxErr(i, "invalid number: expected a digit after the decimal point")
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		first := i
		for ; i < len(s) && isDigit(s[i]); i++ {
		}
		if i == first {
			return 0, syntaxErr(i, "invalid number: expected a digit in the exponent")
		}
	}
	return i, nil
}

// validToken reports whether tok is exactly one JSON number token.
func validToken(tok string) *SyntaxError {
	end, err := scanNumber(tok, 0)
	if err != nil {
		return err
	}
	if end != len(tok) {
		return syntaxErr(end, "invalid number: unexpected character after the number")
	}
	return nil
}

// preserveNumber converts a valid token the way serde_json with arbitrary_precision does:
// an integer token that fits u64 (non-negative) or i64 (negative) is normalized, so "-0"
// becomes 0; anything else keeps its text, with "E" lowered to "e" and "+" inserted after
// an unsigned exponent marker.
func preserveNumber(tok string) number {
	if n, ok := shortInteger(tok); ok {
		return n
	}
	dot, e := false, -1
	for i := 0; i < len(tok); i++ {
		switch tok[i] {
		case '.':
			dot = true
		case 'e', 'E':
			e = i
		}
	}
	if !dot && e < 0 {
		if tok[0] != '-' {
			if u, err := strconv.ParseUint(tok, 10, 64); err == nil {
				return number{repr: numUint, bits: u}
			}
		} else if i, err := strconv.ParseInt(tok, 10, 64); err == nil {
			if i >= 0 {
				return number{repr: numUint, bits: uint64(i)}
			}
			return number{repr: numInt, bits: uint64(i)}
		}
		return number{repr: numText, text: tok}
	}
	if e < 0 || (tok[e] == 'e' && (tok[e+1] == '+' || tok[e+1] == '-')) {
		return number{repr: numText, text: tok}
	}
	var b strings.Builder
	b.Grow(len(tok) + 1)
	b.WriteString(tok[:e])
	b.WriteByte('e')
	if tok[e+1] != '+' && tok[e+1] != '-' {
		b.WriteByte('+')
	}
	b.WriteString(tok[e+1:])
	return number{repr: numText, text: b.String()}
}

// shortInteger converts a valid token of at most 18 digits without fraction or exponent,
// which fits i64 whatever its sign, the way preserveNumber does: -0 becomes 0. It is the
// fast path for the common small integers; ok is false for every other token.
func shortInteger(tok string) (n number, ok bool) {
	digits := tok
	neg := tok[0] == '-'
	if neg {
		digits = tok[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		return number{}, false
	}
	var v uint64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if !isDigit(c) {
			return number{}, false
		}
		v = v*10 + uint64(c-'0')
	}
	if neg && v != 0 {
		return number{repr: numInt, bits: uint64(-int64(v))}, true
	}
	return number{repr: numUint, bits: v}, true
}

// pow10 holds the correctly rounded doubles of 10^0 … 10^308, as serde_json's table does.
// math.Pow10 is not correctly rounded for every exponent and must not be used here.
var pow10 = func() (t [309]float64) {
	for i := range t {
		f, err := strconv.ParseFloat("1e"+strconv.Itoa(i), 64)
		if err != nil {
			panic(err) // unreachable: every literal 1e0 … 1e308 is a finite double
		}
		t[i] = f
	}
	return t
}()

// mulWouldOverflow64 is serde_json's overflow test for acc*10+d against u64::MAX.
func mulWouldOverflow64(acc, d uint64) bool {
	const limit, rem = math.MaxUint64 / 10, math.MaxUint64 % 10
	return acc >= limit && (acc > limit || d > rem)
}

// lossyNumber converts a valid token the way default serde_json (no arbitrary_precision,
// no float_roundtrip) does. ok is false when serde_json reports "number out of range".
//
// Integer tokens become u64 (non-negative) or i64 (negative, magnitude at most 2^63); "-0"
// and everything else become f64 through serde_json's own conversion, which is not
// correctly rounded: at most 19-20 significant digits are accumulated into a u64 (later
// integer digits only bump the exponent, later fraction digits are dropped), then the
// u64 is scaled by a table power of ten in one multiply or divide.
func lossyNumber(tok string) (n number, ok bool) {
	neg := tok[0] == '-'
	i := 0
	if neg {
		i = 1
	}
	var sig uint64
	var exp int32
	integer := true
	for ; i < len(tok) && isDigit(tok[i]); i++ {
		d := uint64(tok[i] - '0')
		if mulWouldOverflow64(sig, d) {
			integer = false
			for ; i < len(tok) && isDigit(tok[i]); i++ {
				exp++
			}
			break
		}
		sig = sig*10 + d
	}
	if i < len(tok) && tok[i] == '.' {
		integer = false
		for i++; i < len(tok) && isDigit(tok[i]); i++ {
			d := uint64(tok[i] - '0')
			if mulWouldOverflow64(sig, d) {
				for ; i < len(tok) && isDigit(tok[i]); i++ {
				}
				break
			}
			sig = sig*10 + d
			exp--
		}
	}
	if i < len(tok) && (tok[i] == 'e' || tok[i] == 'E') {
		integer = false
		i++
		positiveExp := true
		if tok[i] == '+' || tok[i] == '-' {
			positiveExp = tok[i] == '+'
			i++
		}
		var e int32
		for ; i < len(tok); i++ {
			d := int32(tok[i] - '0')
			if e >= math.MaxInt32/10 && (e > math.MaxInt32/10 || d > math.MaxInt32%10) {
				if sig != 0 && positiveExp {
					return number{}, false
				}
				return floatNumber(neg, 0), true
			}
			e = e*10 + d
		}
		if positiveExp {
			exp = saturatingAdd32(exp, e)
		} else {
			exp = saturatingAdd32(exp, -e)
		}
	}
	if integer {
		if !neg {
			return number{repr: numUint, bits: sig}, true
		}
		if v := -int64(sig); v < 0 { // wraps like Rust's wrapping_neg; 0 and > 2^63 fall through
			return number{repr: numInt, bits: uint64(v)}, true
		}
		return floatNumber(true, float64(sig)), true
	}
	f := float64(sig)
	for {
		a := exp
		if a < 0 {
			a = -a // math.MinInt32 stays negative and takes the slow branch, as in Rust
		}
		if 0 <= a && a <= 308 {
			if exp >= 0 {
				f *= pow10[a]
				if math.IsInf(f, 0) {
					return number{}, false
				}
			} else {
				f /= pow10[a]
			}
			break
		}
		if f == 0 {
			break
		}
		if exp >= 0 {
			return number{}, false
		}
		f /= pow10[308]
		exp += 308
	}
	return floatNumber(neg, f), true
}

func floatNumber(neg bool, f float64) number {
	if neg {
		f = -f
	}
	return number{repr: numFloat, bits: math.Float64bits(f)}
}

func saturatingAdd32(a, b int32) int32 {
	s := int64(a) + int64(b)
	switch {
	case s > math.MaxInt32:
		return math.MaxInt32
	case s < math.MinInt32:
		return math.MinInt32
	}
	return int32(s)
}

// convertToken converts a valid token under m. It fails only for Lossy out-of-range numbers.
func convertToken(tok string, m Mode) (number, bool) {
	if m == Preserve {
		return preserveNumber(tok), true
	}
	return lossyNumber(tok)
}

func outOfRange(offset int) *SyntaxError {
	return &SyntaxError{Offset: offset, Reason: "number out of range", cause: ErrNumberOutOfRange}
}
