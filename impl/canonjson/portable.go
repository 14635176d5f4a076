package canonjson

import (
	"fmt"
	"strconv"
	"strings"
)

// PortableNumber reports whether token is a JSON number token that both modes write back
// unchanged: its Preserve form equals token and its Lossy parse-and-rewrite equals token.
// Such a number gives the same canonical bytes (and so the same authentication tag) on
// both kinds of peer. Examples: 1, -42, 0.1, 1.0, 100.0, 1.5e-7, 1e+16, -0.0 are portable;
// 1e2, 1.50, -0, 18446744073709551616 and 1e400 are not.
func PortableNumber(token string) bool {
	if validToken(token) != nil {
		return false
	}
	var buf [40]byte
	if p := preserveNumber(token); string(appendNumber(buf[:0], numberValue(p))) != token {
		return false
	}
	l, ok := lossyNumber(token)
	return ok && string(appendNumber(buf[:0], numberValue(l))) == token
}

// CheckPortable returns nil when v is written identically by both modes' peers: every
// number in v, as the writer spells it, is a PortableNumber, and no object in v has
// "$serde_json::private::Number" as its first written key (a Preserve reader would take
// such an object for a number). Otherwise the error wraps ErrNonPortableNumber and names
// the first offender in writing order.
func CheckPortable(v Value) error {
	switch v.kind {
	case KindNumber:
		var buf [40]byte
		if tok := appendNumber(buf[:0], v); !PortableNumber(string(tok)) {
			return fmt.Errorf("%w: %s", ErrNonPortableNumber, strconv.Quote(string(tok)))
		}
	case KindArray:
		for _, e := range v.elems() {
			if err := CheckPortable(e); err != nil {
				return err
			}
		}
	case KindObject:
		ents := v.ents()
		if len(ents) > 0 && ents[0].Key == privateNumberKey {
			return fmt.Errorf("%w: object whose first key is %s", ErrNonPortableNumber, strconv.Quote(privateNumberKey))
		}
		for _, e := range ents {
			if err := CheckPortable(e.Value); err != nil {
				return err
			}
		}
	}
	return nil
}

// AppendJSONPortability appends v exactly as v.AppendJSON(dst) does and also reports, as
// CheckPortable judges, the first thing in writing order that is not portable: allPortable
// is then false and nonPortable is a number token as written, or PrivateNumberObject for
// an object whose first key is "$serde_json::private::Number". A caller that must both
// write v and vet it saves a second pass over v or over the written bytes.
func AppendJSONPortability(dst []byte, v Value) (out []byte, nonPortable string, allPortable bool) {
	var chk portabilityCheck
	if d := v.deferred(); d != nil {
		// The verifier judged every number of the text on its way through.
		return append(dst, d.text...), d.nums.nonPortable, d.nums.nonPortable == ""
	}
	out = appendValue(dst, &v, &chk)
	return out, chk.token, !chk.found
}

// PrivateNumberObject is what AppendJSONPortability and FirstNonPortableNumber report for
// an object whose first key is "$serde_json::private::Number": a Preserve reader takes such
// an object for a number, so it is not portable (ENC-034).
const PrivateNumberObject = `{"` + privateNumberKey + `":`

// portabilityCheck records the first non-portable number token a writer meets.
type portabilityCheck struct {
	found bool
	token string
}

// number checks tok, the token just written for the number v.
func (c *portabilityCheck) number(v *Value, tok []byte) {
	if c.found {
		return
	}
	switch v.num {
	case numUint:
		if v.bits < 1e19 {
			return // a plain decimal integer below 10^19
		}
	case numInt:
		if int64(v.bits) > -1e18 {
			return // a negative integer of at most 18 digits
		}
	case numFloat:
		if exactFloatToken(tok) {
			return
		}
	default:
		if plainPortableInteger(tok) || plainPortableDecimal(tok) {
			return
		}
	}
	if !PortableNumber(string(tok)) {
		c.found, c.token = true, string(tok)
	}
}

// text checks every number token of canonical compact JSON text.
func (c *portabilityCheck) text(s string) {
	if c.found {
		return
	}
	if tok, ok := firstNonPortableToken(s); ok {
		c.found, c.token = true, tok
	}
}

// exactFloatToken is the fast path of the check of a token AppendFloat wrote: when the
// token's digits, read as one integer the way the Lossy reader accumulates them, stay below
// 2^53 and its decimal exponent (net of the fraction digits) is within ±22, the Lossy
// reader computes one correctly rounded product or quotient of exact operands, which gives
// back the written float, so the token is rewritten unchanged; Preserve keeps every token
// with a point or an explicit exponent sign, which AppendFloat always writes. false means
// only that the full check is needed.
func exactFloatToken(tok []byte) bool {
	i := 0
	if len(tok) > 0 && tok[0] == '-' {
		i = 1
	}
	var sig uint64
	exp := 0
	frac := false
	for ; i < len(tok); i++ {
		c := tok[i]
		switch {
		case isDigit(c):
			sig = sig*10 + uint64(c-'0')
			if sig >= 1<<53 {
				return false
			}
			if frac {
				exp--
			}
		case c == '.':
			frac = true
		case c == 'e':
			e, err := strconv.Atoi(string(tok[i+1:]))
			if err != nil {
				return false
			}
			exp += e
			i = len(tok)
		default:
			return false
		}
	}
	return -22 <= exp && exp <= 22
}

// FirstNonPortableNumber returns the first number token of compact canonical JSON text (as
// AppendJSON writes it) that is not a [PortableNumber], or PrivateNumberObject at an object
// whose first key is "$serde_json::private::Number", and whether there is one. Strings are
// skipped; everything else that starts with '-' or a digit is a number token.
func FirstNonPortableNumber(s string) (string, bool) { return firstNonPortableToken(s) }

// firstNonPortableToken implements FirstNonPortableNumber.
func firstNonPortableToken(s string) (string, bool) {
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '"':
			i = skipStringLiteral(s, i)
		case c == '{' && strings.HasPrefix(s[i:], PrivateNumberObject):
			return PrivateNumberObject, true
		case c == '-' || isDigit(c):
			j := i + 1
			for j < len(s) && isNumberByte(s[j]) {
				j++
			}
			if tok := s[i:j]; !plainPortableInteger(tok) && !plainPortableDecimal(tok) && !PortableNumber(tok) {
				return tok, true
			}
			i = j
		default:
			i++
		}
	}
	return "", false
}

// skipStringLiteral returns the index just past the string literal starting at s[i] == '"'.
func skipStringLiteral(s string, i int) int {
	i++
	for {
		q := strings.IndexByte(s[i:], '"')
		if q < 0 {
			return len(s)
		}
		end := i + q
		backslashes := 0
		for k := end - 1; k >= i && s[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return end + 1
		}
		i = end + 1
	}
}

func isNumberByte(c byte) bool {
	return isDigit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

// plainPortableInteger is a fast path of the portability check: a canonical decimal
// integer that fits i64 (or u64 below 10^19) is portable in both modes.
func plainPortableInteger[T string | []byte](tok T) bool {
	digits := tok
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
		if len(digits) == 0 || digits[0] == '0' || len(digits) > 18 {
			return false // "-0" is not portable; long negatives take the slow path
		}
	}
	if len(digits) == 0 || len(digits) > 19 || len(digits) > 1 && digits[0] == '0' {
		return false
	}
	for i := 0; i < len(digits); i++ {
		if !isDigit(digits[i]) {
			return false
		}
	}
	return true
}

// plainPortableDecimal is a fast path of the portability check: a fixed-point token
// -?INT.FRAC without exponent whose digits (INT without leading zeros, then FRAC) number at
// most 15, whose FRAC has no trailing zero unless it is exactly "0", and whose first
// significant digit is at most 5 places after the point. Preserve keeps such a token
// verbatim; Lossy divides an exact integer below 10^15 by an exact power of ten, which is
// correctly rounded, and the shortest digits of the result are the token's own digits
// (distinct decimals of at most 15 significant digits are distinct doubles), which the
// writer lays out in fixed notation as the token spells them.
func plainPortableDecimal[T string | []byte](tok T) bool {
	if len(tok) > 0 && tok[0] == '-' {
		tok = tok[1:]
	}
	dot := -1
	for i := 0; i < len(tok); i++ {
		if tok[i] == '.' {
			dot = i
			break
		}
	}
	if dot <= 0 || dot == len(tok)-1 {
		return false
	}
	intPart, frac := tok[:dot], tok[dot+1:]
	if len(intPart) > 1 && intPart[0] == '0' {
		return false
	}
	for i := 0; i < len(intPart); i++ {
		if !isDigit(intPart[i]) {
			return false
		}
	}
	for i := 0; i < len(frac); i++ {
		if !isDigit(frac[i]) {
			return false
		}
	}
	digits := len(frac)
	if intPart[0] != '0' {
		digits += len(intPart)
	}
	if digits > 15 {
		return false
	}
	if len(frac) == 1 && frac[0] == '0' {
		return true // I.0, including 0.0 and -0.0
	}
	if frac[len(frac)-1] == '0' {
		return false // the writer drops trailing zeros
	}
	if intPart[0] == '0' {
		lead := 0
		for lead < len(frac) && frac[lead] == '0' {
			lead++
		}
		if lead > 4 {
			return false // 0.000001 and smaller are written in scientific notation
		}
	}
	return true
}

// PreserveOnlyNumber reports whether token, once a Preserve reader has normalized it, is a
// text that no Lossy writer ever writes: neither a decimal integer in the 64-bit ranges nor
// the layout AppendFloat gives a finite binary64 value. 0.10, 1e+2, 1e+400 and
// 18446744073709551616 are Preserve-only; 0.1, 100.0, 1e+16 and -0.0 are not. Every
// Preserve-only token is non-portable, but not conversely: the reference's Lossy parser is
// not correctly rounded, so some texts a Lossy writer does write are not read back as
// written, and they are non-portable without being Preserve-only (ENC-053).
func PreserveOnlyNumber(token string) bool {
	if plainPortableInteger(token) || plainPortableDecimal(token) || validToken(token) != nil {
		return false // the first two are common tokens a Lossy writer does write
	}
	n := preserveNumber(token)
	if n.repr != numText {
		return false // a 64-bit integer, which a Lossy writer writes the same way
	}
	f, err := strconv.ParseFloat(n.text, 64)
	if err != nil {
		return true // beyond the binary64 range: a Lossy writer has no such value
	}
	var buf [40]byte
	return string(AppendFloat(buf[:0], f)) != n.text
}

// HoldsPreserveOnlyNumber reports whether v holds a number whose written token is a
// [PreserveOnlyNumber]: a value only a peer that keeps number text can have written. A
// deferred value answers from what its verifier saw, without being built; in Lossy mode
// the answer is always false, since a Lossy value writes only Lossy layouts.
func HoldsPreserveOnlyNumber(v Value) bool {
	if d := v.deferred(); d != nil {
		return d.nums.textOnly
	}
	switch v.kind {
	case KindNumber:
		return v.num == numText && PreserveOnlyNumber(v.str())
	case KindArray:
		for _, e := range v.elems() {
			if HoldsPreserveOnlyNumber(e) {
				return true
			}
		}
	case KindObject:
		for _, e := range v.ents() {
			if HoldsPreserveOnlyNumber(e.Value) {
				return true
			}
		}
	}
	return false
}
