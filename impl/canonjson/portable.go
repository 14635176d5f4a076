package canonjson

import (
	"fmt"
	"strconv"
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
