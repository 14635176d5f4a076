package fuzz

import (
	"bytes"
	"errors"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
)

// canonjsonHandSeeds are documents from the outputs recorded from the Rust reference (reference
// anchors A-NUM, A4 and A7 in docs/reference-anchors.md), reader strictness cases and edge
// cases of the reader.
var canonjsonHandSeeds = []string{
	"1", "-0", "-0.0", "1.0", "1.50", "1e2", "1E2", "1e+2", "1e-2", "1.5e-7", "1e15", "1e16",
	"0.000001", "0.00001", "18446744073709551615", "18446744073709551616",
	"-9223372036854775808", "-9223372036854775809", "100000000000000000000", "1e400",
	"1e-400", "2.5e-324", "9007199254740993.0", "0.10625857731859811", "1e2147483648",
	"0e2147483648", "1.5e-2147483647", "18446744073709551619.3",
	"{\"\":true,\"B\":null,\"a\":[1e+16,100,-0.0,1.5e-7,18446744073709551615,-42],\"z\":0.1,\"é\":\"\\u0001\x7f/<>\"}",
	`{"b":[1,{"z":1,"a":"x"}],"a":null,"B":true}`,
	`{"$serde_json::private::Number":"1E5"}`,
	`{"a":1,"$serde_json::private::Number":"1"}`,
	`{"$serde_json::private::Number":"1","a":2}`,
	`{"a":1,"a":2,"\u0061":3}`,
	`"\ud83d\ude00\u00e9\/\b\f\n\r\t\u0000"`,
	`"\ud800"`, `"\udc00"`, "\"\xff\"", "\xef\xbb\xbf{}", "{} x", "[1,]", "01", ".5", "1.", "+1",
	"NaN", " \t\r\n[ ] \r", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
}

// FuzzCanonicalJSON checks the canonical JSON reader and writer on arbitrary bytes: the
// reader never panics and reports typed errors; in each mode a successfully read document
// is re-read from its own serialization consistently (always a fixed point in Preserve
// mode, and in Lossy mode whenever the value is portable); and portability agrees with
// the Lossy rewrite of the Preserve output. The seeds are the hand seeds above and every
// input and output of the canonical JSON and fingerprint vectors (canonicalJSONSeeds).
//
// Spec: ERR-005, ERR-017, ERR-020, ENC-034
func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range canonjsonHandSeeds {
		f.Add([]byte(s))
	}
	addSeeds(f, canonicalJSONSeeds(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		node, perr := canonjson.Parse(data)
		if perr != nil {
			var se *canonjson.SyntaxError
			if !errors.As(perr, &se) || !errors.Is(perr, canonjson.ErrSyntax) {
				t.Fatalf("Parse error is not a *SyntaxError wrapping ErrSyntax: %v", perr)
			}
			if se.Offset < 0 || se.Offset > len(data) {
				t.Fatalf("error offset %d outside the %d-byte input", se.Offset, len(data))
			}
		}
		for _, m := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
			v, err := canonjson.ParseValue(data, m)
			if perr != nil {
				if err == nil {
					t.Fatalf("%v: ParseValue accepted what Parse rejected (%v)", m, perr)
				}
				continue
			}
			// ParseValue is Parse followed by FromNode.
			fv, ferr := canonjson.FromNode(node, m)
			if (err == nil) != (ferr == nil) {
				t.Fatalf("%v: ParseValue error %v, FromNode error %v", m, err, ferr)
			}
			if err != nil {
				if !errors.Is(err, canonjson.ErrSyntax) {
					t.Fatalf("%v: untyped error %v", m, err)
				}
				continue
			}
			out := v.JSON()
			if !bytes.Equal(fv.JSON(), out) || !canonjson.Equal(fv, v) {
				t.Fatalf("%v: FromNode and ParseValue disagree: %q vs %q", m, fv.JSON(), out)
			}
			v2, err := canonjson.ParseValue(out, m)
			portable := canonjson.CheckPortable(v) == nil
			switch {
			case err != nil && m == canonjson.Preserve && !portable &&
				bytes.Contains(out, []byte(`{"$serde_json::private::Number":`)):
				// A sorted object now starts with the private number key: a Preserve
				// reader takes it for a number, as serde_json does.
				continue
			case err != nil:
				t.Fatalf("%v: own output %q does not read back: %v", m, out, err)
			}
			out2 := v2.JSON()
			if m == canonjson.Preserve || portable {
				if !bytes.Equal(out, out2) {
					t.Fatalf("%v: not a fixed point:\n%q\n%q", m, out, out2)
				}
				if !canonjson.Equal(v, v2) {
					t.Fatalf("%v: re-read value differs for %q", m, out)
				}
			}
			if m == canonjson.Preserve {
				// Portable exactly when the Lossy rewrite of the Preserve output is the
				// identity (bar the private number key, which Lossy does not interpret).
				lv, lerr := canonjson.ParseValue(out, canonjson.Lossy)
				lossyFixed := lerr == nil && bytes.Equal(lv.JSON(), out)
				if portable && !lossyFixed {
					t.Fatalf("portable %q is rewritten by Lossy (%v)", out, lerr)
				}
				if !portable && lossyFixed && !bytes.Contains(out, []byte(`{"$serde_json::private::Number":`)) {
					t.Fatalf("%q is a Lossy fixed point but CheckPortable rejects it: %v", out, canonjson.CheckPortable(v))
				}
			}
		}
		// A number token alone: PortableNumber agrees with the two conversions.
		if node != nil && node.Kind == canonjson.NodeNumber {
			tok := node.Text
			p, _ := canonjson.NumberToken(tok, canonjson.Preserve)
			l, lerr := canonjson.NumberToken(tok, canonjson.Lossy)
			want := p.NumberText() == tok && lerr == nil && l.NumberText() == tok
			if canonjson.PortableNumber(tok) != want {
				t.Fatalf("PortableNumber(%q) = %v, want %v", tok, !want, want)
			}
		}
	})
}
