package canonjson_test

import (
	"errors"
	"math"
	"strconv"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
)

// numberRow is one row of the reference's verified example table: a token and how each
// build writes it back ("" in lossy means the Lossy build rejects the token).
type numberRow struct {
	in, lossy, preserve string
}

// exampleTable is the input → output number table recorded from the Rust reference
// (reference anchor A-NUM, docs/reference-anchors.md), one row per spelling.
var exampleTable = []numberRow{
	{"1", "1", "1"},
	{"-0", "-0.0", "0"},
	{"-0.0", "-0.0", "-0.0"},
	{"1.0", "1.0", "1.0"},
	{"1.50", "1.5", "1.50"},
	{"1e2", "100.0", "1e+2"},
	{"1E2", "100.0", "1e+2"},
	{"1e+2", "100.0", "1e+2"},
	{"1e-2", "0.01", "1e-2"},
	{"1.5e-7", "1.5e-7", "1.5e-7"},
	{"1e15", "1000000000000000.0", "1e+15"},
	{"1e16", "1e+16", "1e+16"},
	{"0.000001", "1e-6", "0.000001"},
	{"0.00001", "0.00001", "0.00001"},
	{"18446744073709551615", "18446744073709551615", "18446744073709551615"},
	{"18446744073709551616", "1.8446744073709552e+19", "18446744073709551616"},
	{"-9223372036854775808", "-9223372036854775808", "-9223372036854775808"},
	{"-9223372036854775809", "-9.223372036854776e+18", "-9223372036854775809"},
	{"100000000000000000000", "1e+20", "100000000000000000000"},
	{"1e400", "", "1e+400"},
}

// Spec: ENC-024, ENC-025, ENC-028, ENC-031, ENC-032, ENC-041
func TestExampleTableBothModes(t *testing.T) {
	for _, row := range exampleTable {
		for _, doc := range []string{row.in, "[" + row.in + "]", " {\"k\": " + row.in + " } "} {
			wrap := func(s string) string {
				switch doc[0] {
				case '[':
					return "[" + s + "]"
				case ' ':
					return `{"k":` + s + "}"
				}
				return s
			}
			got, err := canonjson.ParseValue([]byte(doc), canonjson.Preserve)
			if err != nil {
				t.Errorf("preserve %q: %v", doc, err)
			} else if string(got.JSON()) != wrap(row.preserve) {
				t.Errorf("preserve %q: got %s, want %s", doc, got.JSON(), wrap(row.preserve))
			}
			got, err = canonjson.ParseValue([]byte(doc), canonjson.Lossy)
			if row.lossy == "" {
				if !errors.Is(err, canonjson.ErrNumberOutOfRange) || !errors.Is(err, canonjson.ErrSyntax) {
					t.Errorf("lossy %q: got %v, want a number-out-of-range syntax error", doc, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("lossy %q: %v", doc, err)
			} else if string(got.JSON()) != wrap(row.lossy) {
				t.Errorf("lossy %q: got %s, want %s", doc, got.JSON(), wrap(row.lossy))
			}
		}
		// NumberToken and FromNode give the same results as ParseValue.
		for _, m := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
			want := row.preserve
			if m == canonjson.Lossy {
				want = row.lossy
			}
			v, err := canonjson.NumberToken(row.in, m)
			if want == "" {
				if !errors.Is(err, canonjson.ErrNumberOutOfRange) {
					t.Errorf("NumberToken(%q, %v): got %v, want out of range", row.in, m, err)
				}
			} else if err != nil || v.NumberText() != want {
				t.Errorf("NumberToken(%q, %v) = %q, %v; want %q", row.in, m, v.NumberText(), err, want)
			}
			v, err = canonjson.FromNode(&canonjson.Node{Kind: canonjson.NodeNumber, Text: row.in}, m)
			if want == "" {
				if !errors.Is(err, canonjson.ErrNumberOutOfRange) {
					t.Errorf("FromNode(%q, %v): got %v, want out of range", row.in, m, err)
				}
			} else if err != nil || string(v.JSON()) != want {
				t.Errorf("FromNode(%q, %v) = %s, %v; want %q", row.in, m, v.JSON(), err, want)
			}
		}
	}
}

// Further Preserve spellings (the first four rows are reference anchor A-PRESERVE,
// docs/reference-anchors.md): exponent and mantissa text is kept, only E is lowered and a
// missing exponent sign becomes "+".
//
// Spec: ENC-024, ENC-025
func TestPreserveSpellings(t *testing.T) {
	for in, want := range map[string]string{
		"1E-02":                 "1e-02",
		"1e007":                 "1e+007",
		"0.1e1":                 "0.1e+1",
		"1e-400":                "1e-400",
		"1E+5":                  "1e+5",
		"-0.0e0":                "-0.0e+0",
		"00":                    "", // invalid tokens
		"-00":                   "",
		"1.":                    "",
		"1e":                    "",
		"0":                     "0",
		"-1":                    "-1",
		"123456789012345678901": "123456789012345678901",
		"-18446744073709551615": "-18446744073709551615", // beyond i64: kept
		"9223372036854775807":   "9223372036854775807",
		"-9223372036854775807":  "-9223372036854775807",
	} {
		v, err := canonjson.NumberToken(in, canonjson.Preserve)
		if want == "" {
			if !errors.Is(err, canonjson.ErrSyntax) {
				t.Errorf("%q: got %v, want a syntax error", in, err)
			}
			continue
		}
		if err != nil || v.NumberText() != want {
			t.Errorf("%q: got %q, %v; want %q", in, v.NumberText(), err, want)
		}
	}
}

// Lossy results recorded from the Rust reference (reference anchor A-LOSSY,
// docs/reference-anchors.md), further sign and range cases, and exponent-overflow cases derived
// from serde_json's exponent accumulator (an i32 that overflows past 2147483647).
//
// Spec: ENC-028, ENC-029, ENC-031, ENC-032
func TestLossyConversion(t *testing.T) {
	for in, want := range map[string]string{
		"1e-400":                  "0.0",
		"-1e-400":                 "-0.0",
		"2.5e-324":                "5e-324",
		"9007199254740993.0":      "9007199254740994.0",  // not correctly rounded (…992 would be)
		"0.10625857731859811":     "0.10625857731859813", // the 1-ulp drift of anchor A-LOSSY
		"-0":                      "-0.0",
		"0":                       "0",
		"-1":                      "-1",
		"0.0":                     "0.0",
		"1.7976931348623157e308":  "1.7976931348623157e+308",
		"-18446744073709551615":   "-1.8446744073709552e+19", // magnitude beyond 2^63: float
		"-9223372036854775807":    "-9223372036854775807",
		"1e2147483647":            "", // exponent fits i32 but no power of ten does
		"1e2147483648":            "", // exponent overflows i32, significand non-zero
		"-1e2147483648":           "",
		"0e2147483648":            "0.0", // zero significand: ±0
		"-0e99999999999":          "-0.0",
		"1e-2147483648":           "0.0", // negative overflowing exponent: ±0
		"-1e-99999999999":         "-0.0",
		"0e2147483647":            "0.0",
		"1.5e-2147483647":         "0.0", // exponent saturates at i32::MIN, divides down to 0
		"1e308":                   "1e+308",
		"10e308":                  "", // 10 × 1e308 is infinite
		"1e-5":                    "0.00001",
		"12345678901234567890123": "1.2345678901234568e+22",
	} {
		v, err := canonjson.NumberToken(in, canonjson.Lossy)
		if want == "" {
			if !errors.Is(err, canonjson.ErrNumberOutOfRange) {
				t.Errorf("%q: got %s, %v; want number out of range", in, v.JSON(), err)
			}
			continue
		}
		if err != nil || v.NumberText() != want {
			t.Errorf("%q: got %q, %v; want %q", in, v.NumberText(), err, want)
		}
	}
	// 0.1e310 has significand 1 and exponent 309, which has no table entry and is positive.
	if _, err := canonjson.NumberToken("0.1e310", canonjson.Lossy); !errors.Is(err, canonjson.ErrNumberOutOfRange) {
		t.Errorf("0.1e310: got %v, want number out of range", err)
	}
}

// The Lossy conversion must scale by correctly rounded powers of ten (strconv's), not by
// math.Pow10, which differs from the correctly rounded double for 10^33.
//
// Spec: ENC-030, ENC-040
func TestLossyPowersOfTenAreCorrectlyRounded(t *testing.T) {
	if math.Pow10(33) == 1e33 {
		t.Fatal("premise: math.Pow10(33) was expected to differ from the literal 1e33")
	}
	v, err := canonjson.NumberToken("1e33", canonjson.Lossy)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.NumberText(); got != "1e+33" {
		t.Errorf("1e33 → %q, want 1e+33 (1.0000000000000001e+33 means math.Pow10 was used)", got)
	}
	// Every exponent: 1eN is a single multiply of 1 by the table entry, which must be exact.
	for i := 0; i <= 308; i++ {
		tok := "1e" + strconv.Itoa(i)
		v, err := canonjson.NumberToken(tok, canonjson.Lossy)
		if err != nil {
			t.Fatalf("%s: %v", tok, err)
		}
		want, _ := strconv.ParseFloat(tok, 64)
		if f, ok := v.Float64(); !ok || f != want {
			t.Errorf("%s → %v, want %v", tok, f, want)
		}
	}
}

// Spec: ENC-028
func TestLossyIntegerClassification(t *testing.T) {
	for _, tc := range []struct {
		tok  string
		kind string // "u", "i" or "f"
	}{
		{"0", "u"}, {"18446744073709551615", "u"}, {"18446744073709551616", "f"},
		{"-1", "i"}, {"-9223372036854775808", "i"}, {"-9223372036854775809", "f"},
		{"-0", "f"}, {"1.0", "f"}, {"1e0", "f"},
	} {
		v, err := canonjson.NumberToken(tc.tok, canonjson.Lossy)
		if err != nil {
			t.Fatalf("%s: %v", tc.tok, err)
		}
		_, isU := v.Uint64()
		_, isF := v.Float64()
		i, isI := v.Int64()
		got := "?"
		switch {
		case isU:
			got = "u"
		case isF:
			got = "f"
		case isI && i < 0:
			got = "i"
		}
		if got != tc.kind {
			t.Errorf("%s held as %s, want %s", tc.tok, got, tc.kind)
		}
	}
}

// Portability is being a fixed point of both modes; the examples come from the reference
// anchors (docs/reference-anchors.md) and from the table above.
//
// Spec: ENC-034, ENC-035
func TestPortableNumber(t *testing.T) {
	for tok, want := range map[string]bool{
		"1": true, "-42": true, "0": true, "0.1": true, "1.5e-7": true, "1e+16": true,
		"1.0": true, "100.0": true, "-0.0": true, "0.0": true, "123.456": true,
		"18446744073709551615": true, "-9223372036854775808": true,
		"1000000000000000.0": true, "5e-324": true, "1.7976931348623157e+308": true,
		"1e2": false, "1e+2": false, "1.50": false, "-0": false, "1E2": false,
		"18446744073709551616": false, "-9223372036854775809": false, "1e400": false,
		"1e+400": false, "0.10625857731859811": false, "9007199254740993.0": false,
		"1e16": false, "0.000001": false, "1e-6": true, "01": false, "": false, "1 ": false,
		"+1": false, "NaN": false,
		// Shortest digits of 2^53-1 plus the ".0" digit exceed 2^53: the Lossy reader
		// rounds 90071992547409910 before dividing and lands on …990.0.
		"9007199254740991.0": false,
		"9007199254740992.0": true,
	} {
		if got := canonjson.PortableNumber(tok); got != want {
			t.Errorf("PortableNumber(%q) = %v, want %v", tok, got, want)
		}
	}
}

// Spec: ENC-034, ENC-037
func TestCheckPortable(t *testing.T) {
	ok := []string{
		`{"":true,"B":null,"a":[1e+16,100,-0.0,1.5e-7,18446744073709551615,-42],"z":0.1}`,
		`[1,2.5,{"x":[0.1]}]`, `"1e2"`, `{"a":{"$serde_json::private::Number!":1}}`,
		`-0`, // Lossy -0.0 is a fixed point of both modes
	}
	for _, doc := range ok {
		v, err := canonjson.ParseValue([]byte(doc), canonjson.Lossy)
		if err != nil {
			t.Fatal(err)
		}
		if err := canonjson.CheckPortable(v); err != nil {
			t.Errorf("%s: %v", doc, err)
		}
	}
	bad := []string{`[1,{"a":1.50}]`, `{"x":1e2}`, `1.0e0`, `[18446744073709551616]`}
	for _, doc := range bad {
		v, err := canonjson.ParseValue([]byte(doc), canonjson.Preserve)
		if err != nil {
			t.Fatal(err)
		}
		if err := canonjson.CheckPortable(v); !errors.Is(err, canonjson.ErrNonPortableNumber) {
			t.Errorf("%s: got %v, want ErrNonPortableNumber", doc, err)
		}
	}
	// A float value whose shortest text drifts under the Lossy reader.
	f, _ := canonjson.Float(0.10625857731859811)
	if err := canonjson.CheckPortable(canonjson.Array(f)); !errors.Is(err, canonjson.ErrNonPortableNumber) {
		t.Errorf("0.10625857731859811: got %v, want ErrNonPortableNumber", err)
	}
	// An object whose first written key is the private number key is re-read as a number (or
	// rejected) by a Preserve peer, so it is not portable even though it holds no number.
	v := canonjson.Object(canonjson.Entry{Key: "$serde_json::private::Number", Value: canonjson.String("1")})
	if err := canonjson.CheckPortable(v); !errors.Is(err, canonjson.ErrNonPortableNumber) {
		t.Errorf("private number key first: got %v, want ErrNonPortableNumber", err)
	}
	v, err := canonjson.ParseValue([]byte(`{"a":{"$serde_json::private::Number":1}}`), canonjson.Lossy)
	if err != nil {
		t.Fatal(err)
	}
	if err := canonjson.CheckPortable(v); !errors.Is(err, canonjson.ErrNonPortableNumber) {
		t.Errorf("nested private number key: got %v, want ErrNonPortableNumber", err)
	}
	// Sorting decides "first": a key that sorts before '$' hides it.
	v = canonjson.Object(
		canonjson.Entry{Key: "$serde_json::private::Number", Value: canonjson.String("1")},
		canonjson.Entry{Key: "!", Value: canonjson.Null()},
	)
	if err := canonjson.CheckPortable(v); err != nil {
		t.Errorf("private number key not first: %v", err)
	}
}

// Spec: ENC-012
func TestFloatRejectsNonFinite(t *testing.T) {
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := canonjson.Float(f); !errors.Is(err, canonjson.ErrNonFiniteFloat) {
			t.Errorf("Float(%v): got %v, want ErrNonFiniteFloat", f, err)
		}
	}
}

// The number model is always an explicit argument; there is no default mode.
//
// Spec: ENC-038
func TestModeNames(t *testing.T) {
	for _, m := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
		got, err := canonjson.ParseMode(m.String())
		if err != nil || got != m {
			t.Errorf("ParseMode(%q) = %v, %v", m.String(), got, err)
		}
	}
	if canonjson.Preserve.String() != "preserve" || canonjson.Lossy.String() != "lossy" {
		t.Error("mode names changed")
	}
	if _, err := canonjson.ParseMode("Preserve"); !errors.Is(err, canonjson.ErrUnknownMode) {
		t.Errorf("ParseMode is case-sensitive; got %v", err)
	}
	if _, err := canonjson.ParseValue([]byte("1"), 0); !errors.Is(err, canonjson.ErrUnknownMode) {
		t.Errorf("ParseValue with mode 0: got %v", err)
	}
}
