// Package mutate changes valid frame lines at the byte level and at the JSON level for
// in-context fuzzing (spec chapter 32), and keeps a corpus of the inputs that reached new
// behaviour.
//
// A mutation is a function of its kind, a seed and the line it changes (and, for a splice, a
// second line): the same three give the same bytes, so a kept input is stored as its recipe
// and rebuilt over a fresh session whose key is never written down.
package mutate

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/splashv5/conform/impl/protocol"
)

// Kind names a mutator.
type Kind string

// The byte-level mutators.
const (
	Flip      Kind = "flip"      // flip one bit
	Insert    Kind = "insert"    // insert one to eight random bytes
	Delete    Kind = "delete"    // delete a run of bytes
	Truncate  Kind = "truncate"  // cut the line short
	Duplicate Kind = "duplicate" // repeat a run of bytes in place
	Splice    Kind = "splice"    // a prefix of the line and a suffix of another
	Boundary  Kind = "boundary"  // overwrite a byte with a boundary byte
)

// The JSON-level mutators.
const (
	TypeSwap       Kind = "type_swap"       // replace a value with one of another type
	BoundaryNumber Kind = "boundary_number" // replace a value with a boundary number
	NumberSpelling Kind = "number_spelling" // spell a number differently
	HugeString     Kind = "huge_string"     // grow a string until the line is near 1 MiB
	DeepNesting    Kind = "deep_nesting"    // replace a value with nesting near the depth limit
	DuplicateKey   Kind = "duplicate_key"   // repeat a member of an object
	UnknownField   Kind = "unknown_field"   // add a member no message has
	Unicode        Kind = "unicode"         // replace a string with a Unicode edge case
	ReorderKeys    Kind = "reorder_keys"    // change the order of an object's members
)

// Kinds lists every mutator, byte level first, in a fixed order.
var Kinds = []Kind{Flip, Insert, Delete, Truncate, Duplicate, Splice, Boundary,
	TypeSwap, BoundaryNumber, NumberSpelling, HugeString, DeepNesting, DuplicateKey, UnknownField, Unicode, ReorderKeys}

// Limits the size and depth mutators aim at.
const (
	// FrameLimit is the longest frame line a peer reads (FRM-004, 1 MiB).
	FrameLimit = protocol.MaxWireFrameBytes
	// DepthLimit is the deepest JSON payload, the root at depth 1.
	DepthLimit = protocol.MaxJSONPayloadDepth
)

// boundaryBytes are bytes a frame reader must treat with care.
var boundaryBytes = []byte{0x00, '\n', '\r', 0x7f, 0x80, 0xc0, 0xff, '"', '\\', ' '}

// boundaryNumbers are the numbers at the edges of the number models (ENC chapter).
var boundaryNumbers = []string{
	"0", "-0", "1", "-1", "0.0", "-0.0", "0.5",
	"9007199254740991", "9007199254740992", "9007199254740993",
	"4294967295", "4294967296", "65535", "65536",
	"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
	"18446744073709551615", "18446744073709551616",
	"1e308", "1e309", "-1e309", "5e-324", "1e-400", "123456789012345678901234567890",
}

// typeValues are one value of each JSON type.
var typeValues = []struct {
	kind byte
	raw  string
}{{'l', "null"}, {'l', "true"}, {'n', "0"}, {'s', `""`}, {'a', "[]"}, {'o', "{}"}}

// unicodeStrings are string tokens (with quotes) at Unicode's edges: escapes the canonical
// writer never uses, surrogates, noncharacters, a byte-order mark, separators, invalid UTF-8.
var unicodeStrings = []string{
	`"\u0000"`, `"\ud800"`, `"\udc00x"`, `"\ud83d\ude00"`, `"\uffff"`, `"\ufeff"`, `"\u2028\u2029"`,
	`"\/"`, `"\u00E9"`, `"\u00e9"`, "\"\u00e9\"", "\"e\u0301\"", "\"\xc0\x80\"", "\"\xff\"", "\"\xed\xa0\x80\"",
	"\"\x7f\"", "\"\x01\"", `"\x"`, `"\u12"`,
}

// Mutate chooses a mutator with the seed and applies it; when the chosen JSON mutator does not
// apply to the line (no string to grow, no object to reorder, not JSON), a byte-level one is
// used instead. It returns the kind used and the new line.
func Mutate(seed uint64, line, other []byte) (Kind, []byte) {
	r := rand.New(rand.NewPCG(seed, 0x6d75746174650000))
	k := Kinds[r.IntN(len(Kinds))]
	out, err := Apply(k, seed, line, other)
	if err != nil {
		k = Kinds[r.IntN(7)]
		out, _ = Apply(k, seed, line, other) // byte mutators apply to every line
	}
	return k, out
}

// Apply applies the mutator k with the seed to a copy of line (other is the second line of a
// splice; the line itself when nil). Byte-level mutators never fail; a JSON-level one returns
// an error wrapping ErrNotJSON, or saying that it has nothing to change.
func Apply(k Kind, seed uint64, line, other []byte) ([]byte, error) {
	r := rand.New(rand.NewPCG(seed, uint64(len(line))))
	b := slices.Clone(line)
	pos := func(n int) int { // a position in 0..n-1, or 0
		if n <= 0 {
			return 0
		}
		return r.IntN(n)
	}
	switch k {
	case Flip:
		if len(b) == 0 {
			return []byte{byte(1 << r.IntN(8))}, nil
		}
		i := pos(len(b))
		b[i] ^= 1 << r.IntN(8)
		return b, nil
	case Insert:
		extra := make([]byte, 1+r.IntN(8))
		for i := range extra {
			extra[i] = byte(r.IntN(256))
		}
		return slices.Insert(b, pos(len(b)+1), extra...), nil
	case Delete:
		if len(b) == 0 {
			return b, nil
		}
		i := pos(len(b))
		return slices.Delete(b, i, min(len(b), i+1+r.IntN(16))), nil
	case Truncate:
		return b[:pos(len(b))], nil
	case Duplicate:
		if len(b) == 0 {
			return b, nil
		}
		i := pos(len(b))
		j := min(len(b), i+1+r.IntN(32))
		return slices.Insert(b, j, slices.Clone(b[i:j])...), nil
	case Splice:
		if other == nil {
			other = line
		}
		return append(b[:pos(len(b)+1)], other[pos(len(other)+1):]...), nil
	case Boundary:
		c := boundaryBytes[r.IntN(len(boundaryBytes))]
		if len(b) == 0 {
			return []byte{c}, nil
		}
		b[pos(len(b))] = c
		return b, nil
	}
	root, err := parse(line)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k, err)
	}
	nodes := root.walk()
	pick := func(want func(*node) bool) *node {
		var c []*node
		for _, n := range nodes {
			if want(n) {
				c = append(c, n)
			}
		}
		if len(c) == 0 {
			return nil
		}
		return c[r.IntN(len(c))]
	}
	anyNode := func(*node) bool { return true }
	of := func(kind byte) func(*node) bool { return func(n *node) bool { return n.kind == kind } }
	replace := func(n *node, raw string) {
		m, err := parse([]byte(raw))
		if err != nil { // raw text a JSON reader refuses (invalid escapes, bad UTF-8): a scalar
			m = &node{kind: 's', raw: raw}
		}
		*n = *m
	}
	switch k {
	case TypeSwap:
		n := pick(anyNode)
		var c []string
		for _, v := range typeValues {
			if v.kind != n.kind {
				c = append(c, v.raw)
			}
		}
		replace(n, c[r.IntN(len(c))])
	case BoundaryNumber:
		n := pick(of('n'))
		if n == nil {
			n = pick(anyNode)
		}
		replace(n, boundaryNumbers[r.IntN(len(boundaryNumbers))])
	case NumberSpelling:
		n := pick(of('n'))
		if n == nil {
			return nil, fmt.Errorf("%s: no number in the line", k)
		}
		n.raw = respell(n.raw, r)
	case HugeString:
		n := pick(of('s'))
		if n == nil {
			return nil, fmt.Errorf("%s: no string in the line", k)
		}
		// The line will be FrameLimit-1, FrameLimit or FrameLimit+1 bytes long.
		target := FrameLimit - 1 + r.IntN(3)
		rest := len(line) - len(n.raw)
		fill := max(target-rest-2, 0)
		n.raw = `"` + strings.Repeat("a", fill) + `"`
	case DeepNesting:
		n := pick(anyNode)
		depths := []int{DepthLimit - 1, DepthLimit, DepthLimit + 1, 4 * DepthLimit, 10000}
		d := depths[r.IntN(len(depths))]
		if r.IntN(2) == 0 {
			replace(n, strings.Repeat("[", d)+"0"+strings.Repeat("]", d))
		} else {
			replace(n, strings.Repeat(`{"a":`, d)+"0"+strings.Repeat("}", d))
		}
	case DuplicateKey:
		n := pick(func(n *node) bool { return n.kind == 'o' && len(n.keys) > 0 })
		if n == nil {
			return nil, fmt.Errorf("%s: no object member in the line", k)
		}
		i := r.IntN(len(n.keys))
		v := n.items[i]
		if r.IntN(2) == 0 {
			v = &node{kind: 'l', raw: "null"}
		}
		at := r.IntN(len(n.keys) + 1)
		n.keys = slices.Insert(n.keys, at, n.keys[i])
		n.items = slices.Insert(n.items, at, v)
	case UnknownField:
		n := pick(of('o'))
		if n == nil {
			return nil, fmt.Errorf("%s: no object in the line", k)
		}
		at := r.IntN(len(n.keys) + 1)
		n.keys = slices.Insert(n.keys, at, `"explore_unknown_`+strconv.Itoa(r.IntN(100))+`"`)
		n.items = slices.Insert(n.items, at, &node{kind: 'n', raw: "1"})
	case Unicode:
		n := pick(of('s'))
		if n == nil {
			return nil, fmt.Errorf("%s: no string in the line", k)
		}
		n.raw = unicodeStrings[r.IntN(len(unicodeStrings))]
	case ReorderKeys:
		n := pick(func(n *node) bool { return n.kind == 'o' && len(n.keys) > 1 })
		if n == nil {
			return nil, fmt.Errorf("%s: no object with two members in the line", k)
		}
		// Swap two distinct members.
		i := r.IntN(len(n.keys))
		j := (i + 1 + r.IntN(len(n.keys)-1)) % len(n.keys)
		n.keys[i], n.keys[j] = n.keys[j], n.keys[i]
		n.items[i], n.items[j] = n.items[j], n.items[i]
	default:
		return nil, fmt.Errorf("mutate: unknown mutator %q", k)
	}
	return root.write(nil), nil
}

// respell writes the number text s another way: the same value spelled as a writer would not
// (an exponent, a fraction, a plus sign, leading zeros, a capital E) or a spelling JSON refuses.
func respell(s string, r *rand.Rand) string {
	forms := []func(string) string{
		func(s string) string { return s + ".0" },
		func(s string) string { return s + "e0" },
		func(s string) string { return s + "E+0" },
		func(s string) string { return "0" + s },
		func(s string) string { return "+" + s },
		func(s string) string { return s + "." },
		func(s string) string { return "." + s },
		func(s string) string { return s + "0e-1" },
		func(s string) string { return "0x" + s },
		func(s string) string { return "-" + s },
	}
	return forms[r.IntN(len(forms))](s)
}
