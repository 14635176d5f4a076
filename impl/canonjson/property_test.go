package canonjson_test

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"pgregory.net/rapid"

	"github.com/splashv5/conform/impl/canonjson"
)

// finiteFloat draws finite doubles: rapid's float generator (biased to small and special
// values) or an arbitrary bit pattern.
func finiteFloat() *rapid.Generator[float64] {
	bits := rapid.Custom(func(t *rapid.T) float64 {
		for {
			f := math.Float64frombits(rapid.Uint64().Draw(t, "bits"))
			if !math.IsNaN(f) && !math.IsInf(f, 0) {
				return f
			}
		}
	})
	return rapid.OneOf(rapid.Float64(), bits)
}

// expectedLayout spells f by the layout rules of ENC-009 to ENC-011 using strconv's independent
// positional ('f') and exponent ('e') shortest forms: positional with a mandatory fraction
// for decimal exponents -5..15, otherwise exponent form with no exponent padding.
func expectedLayout(f float64) string {
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	exp, err := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if err != nil {
		panic(err)
	}
	if exp >= -5 && exp <= 15 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	mant, expText, _ := strings.Cut(e, "e")
	sign, digits := expText[:1], strings.TrimLeft(expText[1:], "0")
	return mant + "e" + sign + digits
}

// Spec: ENC-009, ENC-010, ENC-011
func TestPropertyAppendFloat(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := finiteFloat().Draw(t, "f")
		out := string(canonjson.AppendFloat(nil, f))
		back, err := strconv.ParseFloat(out, 64)
		if err != nil || back != f || math.Signbit(back) != math.Signbit(f) {
			t.Fatalf("%v written as %q reads back as %v (%v)", f, out, back, err)
		}
		if want := expectedLayout(f); out != want {
			t.Fatalf("%v written as %q, layout rules give %q", f, out, want)
		}
		// Structural rules: always a fraction or an exponent, exponent always signed.
		if i := strings.IndexByte(out, 'e'); i >= 0 {
			if out[i+1] != '+' && out[i+1] != '-' || out[i+2] == '0' {
				t.Fatalf("%q: exponent must be signed and unpadded", out)
			}
		} else if !strings.Contains(out, ".") {
			t.Fatalf("%q: positional form without a fraction", out)
		}
		// Preserve keeps the writer's text verbatim.
		v, err := canonjson.NumberToken(out, canonjson.Preserve)
		if err != nil || v.NumberText() != out {
			t.Fatalf("Preserve rewrote %q as %q (%v)", out, v.NumberText(), err)
		}
	})
}

// writtenDigits returns the written digits of a float text as an integer D and the power k
// with value = D × 10^k, as the Lossy reader sees them (decimal point removed).
func writtenDigits(s string) (d uint64, k int, ok bool) {
	s = strings.TrimPrefix(s, "-")
	mant, exp, hasExp := strings.Cut(s, "e")
	if hasExp {
		var err error
		if k, err = strconv.Atoi(exp); err != nil {
			return 0, 0, false
		}
	}
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		k -= len(mant) - i - 1
		mant = mant[:i] + mant[i+1:]
	}
	d, err := strconv.ParseUint(mant, 10, 64)
	return d, k, err == nil
}

// A float whose written digits form D ≤ 2^53 with |k| ≤ 22 is read back exactly by the
// Lossy reader (one exact multiply or divide), so it is portable.
//
// Spec: ENC-029, ENC-030, ENC-035
func TestPropertyLossySafeSetIsExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := rapid.Uint64Range(0, 1<<53).Draw(t, "D")
		k := rapid.IntRange(-22, 22).Draw(t, "k")
		neg := rapid.Bool().Draw(t, "neg")
		tok := strconv.FormatUint(d, 10) + "e" + strconv.Itoa(k)
		if neg {
			tok = "-" + tok
		}
		// The token itself: one correctly rounded operation, so strconv agrees.
		want, err := strconv.ParseFloat(tok, 64)
		if err != nil {
			t.Fatal(err)
		}
		v, err := canonjson.NumberToken(tok, canonjson.Lossy)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := v.Float64(); got != want || math.Signbit(got) != math.Signbit(want) {
			t.Fatalf("%s: Lossy %v, want %v", tok, got, want)
		}
		// Its written form: when the written digits are still in the safe set, the Lossy
		// reader returns the same double and the text is portable.
		out := string(canonjson.AppendFloat(nil, want))
		wd, wk, ok := writtenDigits(out)
		if !ok || wd > 1<<53 || wk < -22 || wk > 22 {
			return
		}
		back, err := canonjson.NumberToken(out, canonjson.Lossy)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := back.Float64(); got != want {
			t.Fatalf("%s written %q: Lossy reads %v, want %v", tok, out, got, want)
		}
		if !canonjson.PortableNumber(out) {
			t.Fatalf("%q is in the safe set but not portable", out)
		}
	})
}

// Portability agrees with its definition in the spec: the Lossy rewrite is the identity,
// and then the Preserve rewrite is too.
//
// Spec: ENC-034
func TestPropertyPortableMeansLossyFixedPoint(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var tok string
		if rapid.Bool().Draw(t, "fromFloat") {
			tok = string(canonjson.AppendFloat(nil, finiteFloat().Draw(t, "f")))
		} else {
			tok = rapid.StringMatching(`-?(0|[1-9][0-9]{0,21})(\.[0-9]{1,20})?([eE][+-]?[0-9]{1,3})?`).Draw(t, "tok")
		}
		l, lerr := canonjson.NumberToken(tok, canonjson.Lossy)
		p, perr := canonjson.NumberToken(tok, canonjson.Preserve)
		if perr != nil {
			t.Fatalf("%q: %v", tok, perr)
		}
		lossyFixed := lerr == nil && l.NumberText() == tok
		if got := canonjson.PortableNumber(tok); got != lossyFixed {
			t.Fatalf("PortableNumber(%q) = %v, Lossy fixed point = %v", tok, got, lossyFixed)
		}
		if lossyFixed && p.NumberText() != tok {
			t.Fatalf("%q is a Lossy fixed point but Preserve writes %q", tok, p.NumberText())
		}
		// Every Lossy output is a Preserve fixed point.
		if lerr == nil {
			lt := l.NumberText()
			if p2, _ := canonjson.NumberToken(lt, canonjson.Preserve); p2.NumberText() != lt {
				t.Fatalf("Lossy output %q is rewritten by Preserve as %q", lt, p2.NumberText())
			}
		}
	})
}

func valueGen(depth int) *rapid.Generator[canonjson.Value] {
	return rapid.Custom(func(t *rapid.T) canonjson.Value {
		choices := 7
		if depth <= 0 {
			choices = 5
		}
		switch rapid.IntRange(0, choices-1).Draw(t, "kind") {
		case 0:
			return canonjson.Null()
		case 1:
			return canonjson.Bool(rapid.Bool().Draw(t, "b"))
		case 2:
			return canonjson.String(rapid.String().Draw(t, "s"))
		case 3:
			if rapid.Bool().Draw(t, "signed") {
				return canonjson.Int(rapid.Int64().Draw(t, "i"))
			}
			return canonjson.Uint(rapid.Uint64().Draw(t, "u"))
		case 4:
			v, err := canonjson.Float(finiteFloat().Draw(t, "f"))
			if err != nil {
				t.Fatal(err)
			}
			return v
		case 5:
			return canonjson.Array(rapid.SliceOfN(valueGen(depth-1), 0, 4).Draw(t, "elems")...)
		default:
			keys := rapid.SliceOfN(rapid.String(), 0, 4).Draw(t, "keys")
			ents := make([]canonjson.Entry, len(keys))
			for i, k := range keys {
				ents[i] = canonjson.Entry{Key: k, Value: valueGen(depth-1).Draw(t, "v")}
			}
			return canonjson.Object(ents...)
		}
	})
}

// Preserve reading is the identity on everything the writer produces, and builds an equal
// Value; Lossy reading is too when the floats are portable.
//
// Spec: ENC-003, ENC-022, ENC-033, ENC-034
func TestPropertyWriterOutputRoundTrips(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := valueGen(3).Draw(t, "v")
		out := v.JSON()
		if !utf8.Valid(out) {
			t.Fatalf("writer produced invalid UTF-8: %q", out)
		}
		p, err := canonjson.ParseValue(out, canonjson.Preserve)
		if err != nil {
			t.Fatalf("%q: %v", out, err)
		}
		if string(p.JSON()) != string(out) {
			t.Fatalf("Preserve rewrote %q as %q", out, p.JSON())
		}
		if !canonjson.Equal(p, v) {
			t.Fatalf("Preserve read of %q is not Equal to the original", out)
		}
		l, err := canonjson.ParseValue(out, canonjson.Lossy)
		if err != nil {
			t.Fatalf("%q: %v", out, err)
		}
		if canonjson.CheckPortable(v) == nil {
			if string(l.JSON()) != string(out) || !canonjson.Equal(l, v) {
				t.Fatalf("portable %q rewritten by Lossy as %q", out, l.JSON())
			}
		}
	})
}

// Spec: ENC-005, ENC-006, ENC-007, ENC-013
func TestPropertyStringsRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.String().Draw(t, "s")
		out := canonjson.AppendString(nil, s)
		n, err := canonjson.Parse(out)
		if err != nil || n.Kind != canonjson.NodeString || n.Text != s {
			t.Fatalf("%q written as %q does not read back (%v)", s, out, err)
		}
		for _, c := range out[1 : len(out)-1] {
			if c < 0x20 {
				t.Fatalf("%q: raw control byte in output", out)
			}
		}
	})
}
