package canonjson

import (
	"testing"

	"pgregory.net/rapid"
)

// The integer fast path of the portability check accepts exactly the canonical integers
// it is documented to accept.
//
// Spec: ENC-035
func TestPlainPortableInteger(t *testing.T) {
	for tok, want := range map[string]bool{"0": true, "01": false, "-0": false, "-123": true, "1.0": false, "-": false,
		"9999999999999999999": true, "10000000000000000000": false, "-999999999999999999": true} {
		if got := plainPortableInteger(tok); got != want {
			t.Errorf("plainPortableInteger(%s) = %v, want %v", tok, got, want)
		}
		if want && !PortableNumber(tok) {
			t.Errorf("%s is accepted by the fast path but is not portable", tok)
		}
	}
}

// The fixed-point fast path of the portability check never claims a token
// that PortableNumber (the full two-model comparison) rejects, and
// it covers the common shapes.
//
// Spec: ENC-035
func TestPlainPortableDecimalAgreesWithCanonjson(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		intPart := rapid.StringMatching(`0|[1-9][0-9]{0,17}`).Draw(t, "int")
		frac := rapid.StringMatching(`[0-9]{1,18}`).Draw(t, "frac")
		tok := intPart + "." + frac
		if rapid.Bool().Draw(t, "negative") {
			tok = "-" + tok
		}
		fast := plainPortableDecimal(tok)
		if full := PortableNumber(tok); fast && !full {
			t.Fatalf("fast path accepts %s, which is not portable", tok)
		}
	})
	for _, tok := range []string{"0.1", "12.375", "-0.0", "0.0", "100.0", "123456789012.125", "0.00001", "-3.5", "99999999999999.9"} {
		if !plainPortableDecimal(tok) || !PortableNumber(tok) {
			t.Fatalf("%s: fast %v", tok, plainPortableDecimal(tok))
		}
	}
	for _, tok := range []string{"1.50", "0.000001", "1e2", "1.5e-7", "01.5", "1.", ".5", "1234567890123456.5", "10000000000000000.0"} {
		if plainPortableDecimal(tok) {
			t.Fatalf("%s accepted by the fast path", tok)
		}
	}
}
