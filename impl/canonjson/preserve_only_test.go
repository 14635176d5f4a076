package canonjson_test

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
)

// A Preserve-only token is one no Lossy writer ever writes: spellings the Lossy layout
// never uses (trailing zeros, an exponent where the layout has none, a bare integer
// outside the 64-bit ranges) and magnitudes beyond binary64. Everything the Lossy writer
// writes, and every invalid token, is not.
//
// Spec: ENC-053
func TestPreserveOnlyNumber(t *testing.T) {
	for _, tc := range []struct {
		tok  string
		want bool
	}{
		{"0.10", true}, {"1.50", true}, {"1e+2", true}, {"1e2", true}, {"1E2", true},
		{"2.5e-3", true}, {"1e+400", true}, {"-1e+400", true}, {"1e-400", true},
		{"18446744073709551616", true}, {"-9223372036854775809", true},
		{"123456789012345678901234567890", true}, {"0.000001", true},
		{"3.141592653589793238462643383279", true},
		{"0.1", false}, {"100.0", false}, {"1e+16", false}, {"-0.0", false}, {"1.5e-7", false},
		{"18446744073709551615", false}, {"-9223372036854775808", false}, {"0", false}, {"-0", false},
		{"-42", false}, {"1e-7", false},
		// Written by a Lossy writer, yet not read back as written by the reference's
		// Lossy parser: non-portable, but no proof of a Preserve peer.
		{"1.4651248189898814e+246", false},
		{"", false}, {"01", false}, {"1.", false}, {"abc", false},
	} {
		if got := canonjson.PreserveOnlyNumber(tc.tok); got != tc.want {
			t.Errorf("PreserveOnlyNumber(%q) = %v, want %v", tc.tok, got, tc.want)
		}
	}
	if canonjson.PortableNumber("1.4651248189898814e+246") {
		t.Fatal("the example of a non-portable Lossy output is portable; pick another")
	}
}

// No text a Lossy writer writes is Preserve-only (the proof of ENC-053 is sound), and every
// Preserve-only token is non-portable.
//
// Spec: ENC-053, ENC-034
func TestPreserveOnlyIsSound(t *testing.T) {
	r := rand.New(rand.NewPCG(53, 54))
	for range 200000 {
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		if tok := string(canonjson.AppendFloat(nil, f)); canonjson.PreserveOnlyNumber(tok) {
			t.Fatalf("the Lossy layout of %v, %s, is reported Preserve-only", f, tok)
		}
		if tok := strconv.FormatInt(int64(r.Uint64()), 10); canonjson.PreserveOnlyNumber(tok) {
			t.Fatalf("the 64-bit integer %s is reported Preserve-only", tok)
		}
		if tok := strconv.FormatUint(r.Uint64(), 10); canonjson.PreserveOnlyNumber(tok) {
			t.Fatalf("the 64-bit integer %s is reported Preserve-only", tok)
		}
		tok := strconv.FormatFloat(f, 'e', r.IntN(20), 64)
		if canonjson.PreserveOnlyNumber(tok) && canonjson.PortableNumber(tok) {
			t.Fatalf("%s is Preserve-only and portable", tok)
		}
	}
}

// HoldsPreserveOnlyNumber finds a Preserve-only number anywhere in a value, built as a
// tree or kept deferred from a received payload, and not inside strings or among ordinary
// numbers. Lossy values never hold one.
//
// Spec: ENC-053
func TestHoldsPreserveOnlyNumber(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{`{"a":[1,2.5,-3,1e+16,"0.10"],"b":{"0.10":null}}`, false},
		{`{"n":100.0,"s":"x\"0.10"}`, false},
		{`[1.4651248189898814e+246]`, false},
		{`{"a":[1,{"n":0.10}]}`, true},
		{`[1e+2]`, true},
		{`{"n":18446744073709551616,"s":"\\"}`, true},
		{`[[[0.000001]]]`, true},
	} {
		tree, err := canonjson.ParseValue([]byte(tc.text), canonjson.Preserve)
		if err != nil {
			t.Fatal(err)
		}
		var ps canonjson.Parser
		n, err := ps.ParseDeferring([]byte(`{"value":`+tc.text+`}`), "value", canonjson.Preserve)
		if err != nil {
			t.Fatal(err)
		}
		outer, err := canonjson.FromNode(n, canonjson.Preserve)
		if err != nil {
			t.Fatal(err)
		}
		deferred, _ := outer.Get("value")
		if !deferred.IsDeferred() {
			t.Fatalf("%s was not kept deferred", tc.text)
		}
		if got := canonjson.HoldsPreserveOnlyNumber(tree); got != tc.want {
			t.Errorf("tree %s: %v, want %v", tc.text, got, tc.want)
		}
		if got := canonjson.HoldsPreserveOnlyNumber(deferred); got != tc.want {
			t.Errorf("deferred %s: %v, want %v", tc.text, got, tc.want)
		}
		if lossy, err := canonjson.ParseValue([]byte(tc.text), canonjson.Lossy); err == nil && canonjson.HoldsPreserveOnlyNumber(lossy) {
			t.Errorf("lossy %s holds a Preserve-only number", tc.text)
		}
	}
}
