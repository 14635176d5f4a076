package canonjson

import (
	"fmt"
	"unicode/utf8"
	"unsafe"
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
// yields exactly text[start:end]. When it gives up, end is where it stopped. open is the number of arrays and objects already open
// around it, for the nesting limit. It returns the end offset and the value's depth under the
// payload depth rule (the container itself is at depth 1, its elements at 2, and so on,
// scalars included).
func verifyCanonical(text string, start, open int, m Mode) (end, depth int, ok bool) {
	// stack[k] is the kind of the k-th open container: '[' or '{'. lastKey[k] is the
	// previous key of an open object.
	var stackBuf [recursionLimit]byte
	var keyBuf [recursionLimit]string
	stack, lastKey := stackBuf[:0], keyBuf[:0]
	i := start
	n := len(text)
	for {
		// A value starts at i, at nesting level len(stack).
		if i >= n {
			return i, 0, false
		}
		level := len(stack) + 1 // the depth of this value
		depth = max(depth, level)
		switch c := text[i]; {
		case c == '[' || c == '{':
			if open+len(stack)+1 >= recursionLimit {
				return i, 0, false
			}
			stack = append(stack, c)
			lastKey = append(lastKey, "")
			i++
			if i >= n {
				return i, 0, false
			}
			if c == '[' {
				if text[i] == ']' {
					i++
					stack, lastKey = stack[:len(stack)-1], lastKey[:len(lastKey)-1]
					break
				}
				continue // the first element
			}
			if text[i] == '}' {
				i++
				stack, lastKey = stack[:len(stack)-1], lastKey[:len(lastKey)-1]
				break
			}
			j, ok := canonicalKey(text, i, lastKey, true)
			if !ok {
				return i, 0, false
			}
			i = j
			continue // the first member's value
		case c == '"':
			j, ok := canonicalString(text, i)
			if !ok {
				return i, 0, false
			}
			i = j
		case c == 't':
			if !hasPrefixAt(text, i, "true") {
				return i, 0, false
			}
			i += 4
		case c == 'f':
			if !hasPrefixAt(text, i, "false") {
				return i, 0, false
			}
			i += 5
		case c == 'n':
			if !hasPrefixAt(text, i, "null") {
				return i, 0, false
			}
			i += 4
		case c == '-' || isDigit(c):
			j, ok := canonicalNumber(text, i, m)
			if !ok {
				return i, 0, false
			}
			i = j
		default:
			return i, 0, false
		}
		// A value ended at i; close containers and find where the next value starts.
		for {
			if len(stack) == 0 {
				return i, depth, true
			}
			if i >= n {
				return i, 0, false
			}
			top := stack[len(stack)-1]
			c := text[i]
			if c == ',' {
				i++
				if top == '{' {
					j, ok := canonicalKey(text, i, lastKey, false)
					if !ok {
						return i, 0, false
					}
					i = j
				}
				break
			}
			if top == '[' && c == ']' || top == '{' && c == '}' {
				i++
				stack, lastKey = stack[:len(stack)-1], lastKey[:len(lastKey)-1]
				continue
			}
			return i, 0, false
		}
	}
}

// canonicalKey checks the key starting at text[i] of the innermost open object: a string
// without escapes, greater than the previous key (bytewise, so sorted without duplicates),
// not the Preserve private-number key, followed by ':'. It records the key and returns the
// offset of the member's value.
func canonicalKey(text string, i int, lastKey []string, first bool) (int, bool) {
	if i >= len(text) || text[i] != '"' {
		return 0, false
	}
	end, ok := canonicalString(text, i)
	if !ok {
		return 0, false
	}
	key := text[i+1 : end-1]
	prev := &lastKey[len(lastKey)-1]
	if key == privateNumberKey || end >= len(text) || text[end] != ':' {
		return 0, false
	}
	for j := 0; j < len(key); j++ {
		if key[j] == '\\' {
			return 0, false
		}
	}
	if !first && key <= *prev {
		return 0, false
	}
	*prev = key
	return end + 1, true
}

// plainStringByte[c] is true for the bytes a canonical string holds verbatim without a
// closer look: printable ASCII other than '"' and '\\'.
var plainStringByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// canonicalString checks the string starting at text[i] == '"' and returns the offset just
// past its closing quote. It accepts valid UTF-8 and only the escapes the writer produces:
// \" \\ \b \f \n \r \t, and \u00xx in lower-case hex for the other control bytes.
func canonicalString(text string, i int) (int, bool) {
	i++
	// Short strings (most keys and many values) end within a few bytes: a table lookup per
	// byte beats setting up the word scan.
	for stop := min(i+16, len(text)); i < stop && plainStringByte[text[i]]; i++ {
	}
	for {
		if i >= len(text) {
			return 0, false
		}
		c := text[i]
		switch {
		case plainStringByte[c]:
			i = skipVerbatim(text, i, true)
			continue
		case c == '"':
			return i + 1, true
		case c == '\\':
			if i+1 >= len(text) {
				return 0, false
			}
			switch text[i+1] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(text) || text[i+2] != '0' || text[i+3] != '0' {
					return 0, false
				}
				hi, lo := text[i+4], text[i+5]
				if hi != '0' && hi != '1' || !isLowerHex(lo) {
					return 0, false
				}
				if escapeByte[unhex(hi)<<4|unhex(lo)] != 'u' {
					return 0, false // the writer uses the short form for this byte
				}
				i += 6
			default:
				return 0, false
			}
		case c < 0x20:
			return 0, false
		default: // 0x80 and above
			r, size := utf8.DecodeRuneInString(text[i:])
			if r == utf8.RuneError && size <= 1 {
				return 0, false
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
// past it when converting it under m and writing it back gives the same token.
func canonicalNumber(text string, i int, m Mode) (int, bool) {
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
				return 0, false // -0
			}
			return j, true
		}
		if m == Preserve && text[j] == '.' {
			k := j + 1
			for k < len(text) && isDigit(text[k]) {
				k++
			}
			if k > j+1 && (k == len(text) || text[k] != 'e' && text[k] != 'E') {
				return k, true
			}
		}
	}
	end, err := scanNumber(text, i)
	if err != nil {
		return 0, false
	}
	tok := text[i:end]
	num, ok := convertToken(tok, m)
	if !ok {
		return 0, false
	}
	var buf [40]byte
	if string(appendNumber(buf[:0], numberValue(num))) != tok {
		return 0, false
	}
	return end, true
}

// NodeRaw is the kind of a node that stands for an array or object kept as its text
// because it was verified to be canonical: [Parser.ParseDeferring] makes them, [FromNode]
// turns them into deferred Values, and [Expand] turns them back into ordinary nodes.
const NodeRaw NodeKind = 6

// rawNode returns a NodeRaw for text verified under m.
func (p *parser) rawNode(text string, depth int) *Node {
	n := p.newNode(NodeRaw)
	n.Text = text
	n.rawDepth = int32(depth)
	n.rawMode = p.deferMode
	return n
}

// Expand returns n itself unless it is a NodeRaw, whose text it parses into an ordinary
// tree (with Parse's rules, in fresh memory). Code that inspects the children of nodes from
// [Parser.ParseDeferring] calls it first.
func Expand(n *Node) *Node {
	if n == nil || n.Kind != NodeRaw {
		return n
	}
	p := parser{data: unsafe.Slice(unsafe.StringData(n.Text), len(n.Text)), text: n.Text}
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
	end, depth, ok := verifyCanonical(p.text, p.pos, p.depth, p.deferMode)
	if !ok {
		// The verifier stops at its first doubt; what it read is charged to the budget,
		// since the normal parse reads it again.
		p.deferBudget -= end - p.pos + 1
		return nil
	}
	n := p.rawNode(p.text[p.pos:end], depth)
	p.pos = end
	return n
}
