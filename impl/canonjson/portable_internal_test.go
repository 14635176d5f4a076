package canonjson

import (
	"math"
	"math/rand/v2"
	"testing"
)

// oracleFirstNonPortable walks v in writing order and returns the first number whose
// written token is not a PortableNumber, with no fast path.
func oracleFirstNonPortable(v Value) (string, bool) {
	switch v.Kind() {
	case KindNumber:
		if tok := string(appendNumber(nil, v)); !PortableNumber(tok) {
			return tok, true
		}
	case KindArray:
		for _, e := range v.Elems() {
			if tok, ok := oracleFirstNonPortable(e); ok {
				return tok, true
			}
		}
	case KindObject:
		for _, e := range v.Entries() {
			if tok, ok := oracleFirstNonPortable(e.Value); ok {
				return tok, true
			}
		}
	}
	return "", false
}

// portabilityGen builds random values whose numbers are mostly portable, with now and then
// one of the classic offenders.
type portabilityGen struct {
	r    *rand.Rand
	rare int // one number in rare is drawn from the offenders
}

var (
	offenderTokens = []string{"1e2", "1.50", "-0", "12345678901234567890", "-98765432109876543210",
		"1E+5", "0.30000000000000004", "1.0e0", "100", "2.5", "1e400", "0.1e1"}
	offenderFloats = []float64{0.1 + 0.2, 1.2345678901234567e-30, 9007199254740993, 1e23, 5e-324,
		1.7976931348623157e308, 123456789.12345679, math.Copysign(0, -1)}
	stringPool = []string{"", "a", "id", "name", "12", "-3", "1e2", `"1.50"`, `x\"1e2`, "\\", "é1", "\n-0"}
)

func (g *portabilityGen) number() Value {
	if g.r.IntN(g.rare) == 0 {
		if g.r.IntN(2) == 0 {
			v, err := NumberToken(offenderTokens[g.r.IntN(len(offenderTokens))], Preserve)
			if err != nil {
				panic(err)
			}
			return v
		}
		v, _ := Float(offenderFloats[g.r.IntN(len(offenderFloats))])
		return v
	}
	switch g.r.IntN(6) {
	case 0:
		return Uint(g.r.Uint64() >> g.r.IntN(64))
	case 1:
		return Int(-int64(g.r.Uint64() >> (1 + g.r.IntN(63))))
	case 2:
		v, _ := Float(float64(g.r.IntN(1000)) / 8)
		return v
	case 3:
		v, _ := Float(math.Float64frombits(g.r.Uint64() & 0x7fefffffffffffff))
		return v
	case 4:
		v, _ := NumberToken([]string{"0.1", "1.0", "-42.5", "1.5e-7", "1e+16", "100.0", "-0.0"}[g.r.IntN(7)], Preserve)
		return v
	default:
		return Uint(uint64(g.r.IntN(100)))
	}
}

func (g *portabilityGen) value(depth int) Value {
	switch k := g.r.IntN(10); {
	case depth > 3 || k < 4:
		return g.number()
	case k < 6:
		return String(stringPool[g.r.IntN(len(stringPool))])
	case k == 6:
		return Bool(g.r.IntN(2) == 0)
	case k == 7:
		elems := make([]Value, g.r.IntN(5))
		for i := range elems {
			elems[i] = g.value(depth + 1)
		}
		return g.maybeDeferred(Array(elems...))
	default:
		ents := make([]Entry, g.r.IntN(5))
		for i := range ents {
			ents[i] = Entry{Key: stringPool[g.r.IntN(len(stringPool))], Value: g.value(depth + 1)}
		}
		return g.maybeDeferred(Object(ents...))
	}
}

// maybeDeferred sometimes turns a container into a deferred one over its own text, as a
// received payload is.
func (g *portabilityGen) maybeDeferred(v Value) Value {
	if g.r.IntN(4) != 0 {
		return v
	}
	text := string(v.JSON())
	end, depth, nums, ok := verifyCanonical(text, 0, 0, Preserve)
	if !ok || end != len(text) {
		return v // the verifier gives up on it, so no receiver holds it deferred
	}
	return deferredValue(v.Kind(), text, Preserve, depth, nums)
}

// The folded check reports the same verdict and token as a walk without fast paths and as
// the scan of the written bytes, and writes exactly what AppendJSON writes.
//
// Spec: ENC-004, ENC-005
func TestAppendJSONPortabilityMatchesOracles(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	found := 0
	for i := range 30000 {
		g := &portabilityGen{r: r, rare: 2 + i%10}
		v := g.value(0)
		want := string(v.JSON())
		out, tok, ok := AppendJSONPortability([]byte("prefix"), v)
		if string(out) != "prefix"+want {
			t.Fatalf("AppendJSONPortability wrote %s, want %s", out[6:], want)
		}
		oracleTok, oracleBad := oracleFirstNonPortable(v)
		scanTok, scanBad := firstNonPortableToken(want)
		if ok == oracleBad || tok != oracleTok {
			t.Fatalf("%s: AppendJSONPortability = %q, %v; the walk says %q, %v", want, tok, ok, oracleTok, !oracleBad)
		}
		if scanBad != oracleBad || scanTok != oracleTok {
			t.Fatalf("%s: the byte scan says %q, %v; the walk says %q, %v", want, scanTok, !scanBad, oracleTok, !oracleBad)
		}
		if !ok {
			found++
		}
	}
	if found < 3000 || found > 27000 {
		t.Fatalf("%d of 30000 values hold an offender; the generator no longer mixes both", found)
	}
}
