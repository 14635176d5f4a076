package canonjson

import (
	"fmt"
	"math/bits"
	"unicode/utf8"
)

// Deferred reading of canonical containers.
//
// A peer that writes canonical JSON sends text that this package would write back byte for
// byte. For such text a receiver needs neither a tree nor a re-encoding to know the canonical
// bytes: they are the text. verifyCanonical recognizes that case in one pass without
// allocating, so [Parser.ParseDeferring] can keep a large value as a NodeRaw node and
// [FromNode] can turn it into a deferred Value.
//
// The verifier is sound but deliberately incomplete: it accepts only text it can prove
// canonical (no whitespace, keys strictly increasing and without escapes, only the escapes
// the writer emits, numbers that convert and write back to the same token) and gives up on
// anything else, including every syntax error. Giving up costs nothing but speed, because the
// caller then parses the same bytes normally, which yields the exact error or tree.

// verifyCanonical reports whether the array or object starting at text[start] is, under mode
// m, syntactically valid JSON in canonical form: parsing it and writing the Value back
// yields exactly text[start:end]. open is the number of arrays and objects already open
// around it, for the nesting limit. It also returns the value's depth under the payload
// depth rule (the container itself is at depth 1, its elements at 2, and so on, scalars
// included), and what it saw of the value's numbers. When it gives up, end is where it
// stopped.
func verifyCanonical(text string, start, open int, m Mode) (end, depth int, nums numberFacts, ok bool) {
	// closer[k] is the byte that closes the k-th open container (']' or '}'), and
	// lastKey[k] the previous key of an open object; top is the number of open containers.
	var closer [recursionLimit]byte
	var lastKey [recursionLimit]string
	top := 0
	limit := recursionLimit - open // containers may open while top+1 < limit
	i := start
	n := len(text)
	for {
		// A value starts at i, at depth top+1.
		if i >= n {
			return i, 0, nums, false
		}
		depth = max(depth, top+1)
		switch c := text[i]; c {
		case '[', '{':
			if top+1 >= limit {
				return i, 0, nums, false
			}
			i++
			if i >= n {
				return i, 0, nums, false
			}
			if c == '[' {
				if text[i] == ']' {
					i++
					break // an empty array is a complete value
				}
				closer[top] = ']'
				top++
				continue // the first element
			}
			if text[i] == '}' {
				i++
				break
			}
			closer[top] = '}'
			j, key, ok := canonicalKey(text, i)
			if !ok {
				return j, 0, nums, false
			}
			lastKey[top] = key
			top++
			i = j
			continue // the first member's value
		case '"':
			j, _, ok := canonicalString(text, i)
			if !ok {
				return j, 0, nums, false
			}
			i = j
		case 't':
			if !hasPrefixAt(text, i, "true") {
				return i, 0, nums, false
			}
			i += 4
		case 'f':
			if !hasPrefixAt(text, i, "false") {
				return i, 0, nums, false
			}
			i += 5
		case 'n':
			if !hasPrefixAt(text, i, "null") {
				return i, 0, nums, false
			}
			i += 4
		default:
			j, textOnly, portable, ok := canonicalNumber(text, i, m)
			if !ok {
				return j, 0, nums, false
			}
			nums.textOnly = nums.textOnly || textOnly
			if !portable && nums.nonPortable == "" {
				nums.nonPortable = text[i:j]
			}
			i = j
		}
		// A value ended at i: close containers until the next value starts, or the end.
		for {
			if top == 0 {
				return i, depth, nums, true
			}
			if i >= n {
				return i, 0, nums, false
			}
			c := text[i]
			if c == closer[top-1] {
				top--
				i++
				continue
			}
			if c != ',' {
				return i, 0, nums, false
			}
			i++
			if closer[top-1] == '}' {
				j, key, ok := canonicalKey(text, i)
				if !ok || !keyAfter(key, lastKey[top-1]) {
					return j, 0, nums, false
				}
				lastKey[top-1] = key
				i = j
			}
			break
		}
	}
}

// numberFacts is what the verifier learned of the number tokens of a container it accepted.
// Its keys are never the private-number key (canonicalKey gives up on it), so the numbers
// alone decide whether the container is portable.
type numberFacts struct {
	textOnly    bool   // it holds a PreserveOnlyNumber (never in Lossy mode)
	nonPortable string // its first number token that is not a PortableNumber, or ""
}

// keyAfter reports whether key sorts strictly after prev in byte order. Keys of one object
// usually differ in their first byte, which settles most comparisons without a call.
func keyAfter(key, prev string) bool {
	if key != "" && prev != "" && key[0] != prev[0] {
		return key[0] > prev[0]
	}
	return key > prev
}

// canonicalKey checks the key starting at text[i]: a string without escapes, other than
// the Preserve private-number key, followed by ':'. It returns the key and the offset of
// the member's value, or, when it gives up, how far it read. The caller checks the order
// of keys.
func canonicalKey(text string, i int) (next int, key string, ok bool) {
	if i >= len(text) || text[i] != '"' {
		return i, "", false
	}
	end, escaped, ok := canonicalString(text, i)
	if !ok || escaped || end >= len(text) || text[end] != ':' {
		return end, "", false
	}
	key = text[i+1 : end-1]
	if key == privateNumberKey {
		return end, "", false
	}
	return end + 1, key, true
}

// canonicalString checks the string starting at text[i] == '"' and returns the offset just
// past its closing quote (or, when it gives up, how far it read), and whether it holds
// escapes. It accepts valid UTF-8 and only
// the escapes the writer produces: \" \\ \b \f \n \r \t, and \u00xx in lower-case hex
// for the other control bytes.
func canonicalString(text string, i int) (end int, escaped, ok bool) {
	i++
	for {
		// Eight bytes at a time up to the first byte that needs a look.
		for ; i+8 <= len(text); i += 8 {
			x := load64(text, i)
			if mask := escapeMask(x) | x&highBits; mask != 0 {
				i += bits.TrailingZeros64(mask) >> 3
				break
			}
		}
		if i >= len(text) {
			return i, false, false
		}
		switch c := text[i]; {
		case c == '"':
			return i + 1, escaped, true
		case c == '\\':
			escaped = true
			if i+1 >= len(text) {
				return i, false, false
			}
			switch text[i+1] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(text) || text[i+2] != '0' || text[i+3] != '0' {
					return i, false, false
				}
				hi, lo := text[i+4], text[i+5]
				if hi != '0' && hi != '1' || !isLowerHex(lo) {
					return i, false, false
				}
				if escapeByte[unhex(hi)<<4|unhex(lo)] != 'u' {
					return i, false, false // the writer uses the short form for this byte
				}
				i += 6
			default:
				return i, false, false
			}
		case c < 0x20:
			return i, false, false
		case c < 0x80: // printable ASCII in the last few bytes of the text
			i++
		default:
			r, size := utf8.DecodeRuneInString(text[i:])
			if r == utf8.RuneError && size <= 1 {
				return i, false, false
			}
			i += size
		}
	}
}

func isLowerHex(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

func hasPrefixAt(text string, i int, word string) bool {
	return len(text)-i >= len(word) && text[i:i+len(word)] == word
}

// canonicalNumber checks the number token starting at text[i] and returns the offset just
// past it when converting it under m and writing it back gives the same token (or, when
// it gives up, how far it read). textOnly reports a Preserve token that is a
// [PreserveOnlyNumber], and portable a token that is a [PortableNumber].
func canonicalNumber(text string, i int, m Mode) (next int, textOnly, portable, ok bool) {
	// Fast paths: -?[1-9][0-9]{0,17} or 0 is an exact integer in both modes; in Preserve a
	// fixed-point token with a fraction keeps its text.
	j := i
	if text[j] == '-' {
		j++
	}
	digits := j
	for j < len(text) && isDigit(text[j]) {
		j++
	}
	if n := j - digits; n > 0 && n <= 18 && (text[digits] != '0' || n == 1) {
		if j == len(text) || text[j] != '.' && text[j] != 'e' && text[j] != 'E' {
			if text[i] == '-' && n == 1 && text[digits] == '0' {
				return j, false, false, false // -0
			}
			return j, false, true, true // plainPortableInteger
		}
		if m == Preserve && text[j] == '.' {
			k := j + 1
			for k < len(text) && isDigit(text[k]) {
				k++
			}
			if k > j+1 && (k == len(text) || text[k] != 'e' && text[k] != 'E') {
				tok := text[i:k]
				if plainPortableDecimal(tok) {
					return k, false, true, true // PreserveOnlyNumber's own fast path
				}
				return k, PreserveOnlyNumber(tok), PortableNumber(tok), true
			}
		}
	}
	end, err := scanNumber(text, i)
	if err != nil {
		return j, false, false, false
	}
	tok := text[i:end]
	num, ok := convertToken(tok, m)
	if !ok {
		return end, false, false, false
	}
	var buf [40]byte
	if string(appendNumber(buf[:0], numberValue(num))) != tok {
		return end, false, false, false
	}
	portable = plainPortableInteger(tok) || plainPortableDecimal(tok) || PortableNumber(tok)
	return end, m == Preserve && num.repr == numText && PreserveOnlyNumber(tok), portable, true
}

// NodeRaw is the kind of a node that stands for an array or object kept as its text
// because it was verified to be canonical: [Parser.ParseDeferring] makes them, [FromNode]
// turns them into deferred Values, and [Expand] turns them back into ordinary nodes.
const NodeRaw NodeKind = 6

// rawNode returns a NodeRaw for text verified under m.
func (p *parser) rawNode(text string, depth int, nums numberFacts) *Node {
	n := p.newNode(NodeRaw)
	n.Text = text
	n.rawDepth = int32(depth)
	n.rawMode = p.deferMode
	n.rawNumbers = nums
	return n
}

// Expand returns n itself unless it is a NodeRaw, whose text it parses into an ordinary
// tree (with Parse's rules, in fresh memory). Code that inspects the children of nodes from
// [Parser.ParseDeferring] calls it first.
func Expand(n *Node) *Node {
	if n == nil || n.Kind != NodeRaw {
		return n
	}
	p := parser{data: stringBytes(n.Text), text: n.Text}
	e, err := p.document()
	if err != nil { // unreachable for verified text; the caller reports a type error
		return n
	}
	return e
}

// RawContainerKind returns NodeArray or NodeObject for a NodeRaw, and n.Kind otherwise.
func (n *Node) RawContainerKind() NodeKind {
	if n.Kind != NodeRaw {
		return n.Kind
	}
	if n.Text != "" && n.Text[0] == '[' {
		return NodeArray
	}
	return NodeObject
}

// ParseDeferring parses data exactly like [Parser.Parse] (same strictness, same errors),
// except that the value of an object member named key, when it is an array or object whose
// text is canonical under mode, is kept as a NodeRaw instead of being parsed into nodes.
// The work spent on values that turn out not to be canonical is bounded by the document's
// length, so the parse stays linear.
func (ps *Parser) ParseDeferring(data []byte, key string, mode Mode) (*Node, error) {
	if !mode.valid() {
		return nil, fmt.Errorf("%w: %v", ErrUnknownMode, mode)
	}
	ps.p.deferKey, ps.p.deferMode, ps.p.deferBudget = key, mode, len(data)
	n, err := ps.Parse(data)
	ps.p.deferKey, ps.p.deferMode, ps.p.deferBudget = "", 0, 0
	return n, err
}

// tryDefer is called with p.pos at the value of a member named p.deferKey. When that value
// is a canonical container it returns a NodeRaw for it and moves past it.
func (p *parser) tryDefer() *Node {
	if p.pos >= len(p.data) || p.deferBudget <= 0 {
		return nil
	}
	if c := p.data[p.pos]; c != '[' && c != '{' {
		return nil
	}
	end, depth, nums, ok := verifyCanonical(p.text, p.pos, p.depth, p.deferMode)
	if !ok {
		// The verifier stops at its first doubt; what it read is charged to the budget,
		// since the normal parse reads it again.
		p.deferBudget -= end - p.pos + 1
		return nil
	}
	n := p.rawNode(p.text[p.pos:end], depth, nums)
	p.pos = end
	return n
}
