package canonjson

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// oracleAppendFloat is AppendFloat without its fast path: strconv's shortest digits,
// laid out by hand. The fast path must agree with it on every input.
func oracleAppendFloat(dst []byte, f float64) []byte {
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
	b := strconv.AppendFloat(nil, f, 'e', -1, 64)
	mant, expText, _ := strings.Cut(string(b), "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, err := strconv.Atoi(expText)
	if err != nil {
		panic(err)
	}
	n := len(digits)
	switch {
	case exp < -5 || exp > 15:
		dst = append(dst, digits[0])
		if n > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		return append(dst, fmt.Sprintf("e%+d", exp)...)
	case exp >= n-1:
		return append(append(dst, digits...), strings.Repeat("0", exp-n+1)+".0"...)
	case exp >= 0:
		return append(dst, digits[:exp+1]+"."+digits[exp+1:]...)
	default:
		return append(dst, "0."+strings.Repeat("0", -exp-1)+digits...)
	}
}

// randomFloats returns float64 values of several families: random bit patterns, short
// decimals (which the fast path takes), their neighbours (which it must not take), dyadic
// fractions and integers.
func randomFloats(r *rand.Rand, n int) []float64 {
	out := []float64{
		0.1, 0.2, 0.3, 0.1 + 0.2, 1, 1e15 - 1, 1e15, 999999999999999.9, 1e-22, 1.5e-22, 9.999999999999999e-23,
		1e-5, 1e-6, 123.456, 5e-324, math.MaxFloat64, math.SmallestNonzeroFloat64, 1 << 53, 1<<53 + 2,
		0.000012345, 0.0000012345, 12.375, 2.5e-8, 4.35, 1.005, 8.41e21, 1e22, 1e23,
	}
	for range n {
		var f float64
		switch r.IntN(6) {
		case 0:
			f = math.Float64frombits(r.Uint64())
		case 1: // up to 15 significant digits, decimal point anywhere
			f = float64(r.Int64N(1_000_000_000_000_000)) / math.Pow10(r.IntN(23))
		case 2: // few digits
			f = float64(r.Int64N(100_000)) / math.Pow10(r.IntN(12))
		case 3: // a neighbour of a short decimal
			f = float64(r.Int64N(100_000)) / math.Pow10(r.IntN(12))
			if r.IntN(2) == 0 {
				f = math.Nextafter(f, math.Inf(1))
			} else {
				f = math.Nextafter(f, 0)
			}
		case 4: // dyadic fractions, as k/8 in the benchmarks
			f = float64(r.Int64N(1<<20)) / float64(uint64(1)<<r.IntN(40))
		default: // 16 and 17 significant digits
			f, _ = strconv.ParseFloat(strconv.FormatUint(r.Uint64N(1e17), 10)+"e"+strconv.Itoa(r.IntN(60)-40), 64)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		if r.IntN(3) == 0 {
			f = -f
		}
		out = append(out, f)
	}
	return out
}

// Spec: ENC-009, ENC-010, ENC-011
func TestAppendFloatFastPathMatchesOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	fast, exactClaims := 0, 0
	for _, f := range randomFloats(r, 400000) {
		got, want := string(AppendFloat(nil, f)), string(oracleAppendFloat(nil, f))
		if got != want {
			t.Fatalf("AppendFloat(%b) = %q, want %q", f, got, want)
		}
		if _, _, ok := shortDecimal(math.Abs(f)); ok {
			fast++
		}
		if tok, exact := appendFloatExact(nil, f); exact {
			exactClaims++
			if !exactFloatToken(tok) {
				t.Fatalf("appendFloatExact(%b) claims %q exact, exactFloatToken does not", f, tok)
			}
		}
	}
	if exactClaims < 50000 {
		t.Fatalf("appendFloatExact claimed only %d tokens exact; the test no longer exercises it", exactClaims)
	}
	if fast < 100000 {
		t.Fatalf("only %d inputs took the fast path; the test no longer exercises it", fast)
	}
}

// shortDecimal never claims a decimal that does not round to f, nor one with 16 digits.
func TestShortDecimalIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, f := range randomFloats(r, 100000) {
		f = math.Abs(f)
		if f == 0 {
			continue
		}
		rr, p, ok := shortDecimal(f)
		if !ok {
			continue
		}
		if rr >= 1e15 {
			t.Fatalf("shortDecimal(%v) = %d, %d: more than 15 digits", f, rr, p)
		}
		back, err := strconv.ParseFloat(strconv.FormatUint(rr, 10)+"e-"+strconv.Itoa(p), 64)
		if err != nil || back != f {
			t.Fatalf("shortDecimal(%v) = %de-%d, which reads back as %v", f, rr, p, back)
		}
	}
}

// oracleAppendString is serde_json's string escaping written rune by rune.
func oracleAppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		c := s[i]
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, "\uFFFD"...)
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\b':
			dst = append(dst, `\b`...)
		case c == '\t':
			dst = append(dst, `\t`...)
		case c == '\n':
			dst = append(dst, `\n`...)
		case c == '\f':
			dst = append(dst, `\f`...)
		case c == '\r':
			dst = append(dst, `\r`...)
		case c < 0x20:
			dst = append(dst, `\u00`...)
			dst = append(dst, hexDigits[c>>4], hexDigits[c&0xf])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

// Spec: ENC-005, ENC-007, ENC-017
func TestAppendStringAndKeyMatchOracle(t *testing.T) {
	alphabet := []byte{0x00, 0x01, 0x08, 0x1f, 0x20, 0x21, '"', '\\', 'a', '~', 0x7f, 0x80, 0xbf, 0xc3, 0xa9, 0xe2, 0x80, 0xa8, 0xff}
	r := rand.New(rand.NewPCG(7, 8))
	// Lengths up to 100 cover the byte-by-byte paths (shortString, shortEscaped) and the
	// word-at-a-time ones.
	buf := make([]byte, 100)
	for range 200000 {
		n := r.IntN(len(buf) + 1)
		rare := r.IntN(4) == 0
		for k := range n {
			if rare && r.IntN(n+1) == 0 {
				buf[k] = alphabet[r.IntN(len(alphabet))]
			} else {
				buf[k] = byte(0x20 + r.IntN(0x60))
			}
		}
		s := string(buf[:n])
		want := string(oracleAppendString([]byte("x"), s))
		if got := string(AppendString([]byte("x"), s)); got != want {
			t.Fatalf("AppendString(%q) = %q, want %q", s, got, want)
		}
		if got := string(appendKey([]byte("x"), ',', s)); got != "x,"+want[1:]+":" {
			t.Fatalf("appendKey(%q) = %q, want %q", s, got, "x,"+want[1:]+":")
		}
		plain := true
		for k := range n {
			if c := s[k]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
				plain = false
			}
		}
		if plainASCII(s) != plain {
			t.Fatalf("plainASCII(%q) = %v, want %v", s, !plain, plain)
		}
	}
}

// exactFloatToken claims only portable tokens.
func TestExactFloatTokenImpliesPortable(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	claimed := 0
	for _, f := range randomFloats(r, 200000) {
		tok := AppendFloat(nil, f)
		if exactFloatToken(tok) {
			claimed++
			if !PortableNumber(string(tok)) {
				t.Fatalf("exactFloatToken(%s) claims a non-portable token", tok)
			}
		}
	}
	if claimed < 50000 {
		t.Fatalf("only %d tokens took the fast path", claimed)
	}
	for tok, want := range map[string]bool{
		"1.5e+23": true, "1e+16": true, "-0.0": true, "0.00001": true, "123.456": true,
		"9007199254740993.0": false, "0.30000000000000004": false, "1.2345e-30": false, "1e+23": false,
	} {
		if exactFloatToken([]byte(tok)) != want {
			t.Errorf("exactFloatToken(%s) = %v", tok, !want)
		}
	}
}
