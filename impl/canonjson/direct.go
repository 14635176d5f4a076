package canonjson

import (
	"strings"
	"sync"
)

// Building a deferred value straight from its verified text. The text of a deferred value
// is canonical (ENC-052: no whitespace, keys sorted, unique and without escapes, only the
// writer's escapes, numbers that write back to themselves, depth within the limit), so it
// can be turned into a Value in one pass without the syntax tree and the checks the general
// parser needs: unescaped strings and keys are substrings of the text, the elements and
// entries of all containers are carved from two shared chunks, and the strings that hold
// escapes are decoded into one shared buffer instead of one allocation each.
//
// The builder trusts nothing it does not check cheaply: at anything it does not expect it
// gives up, and the caller builds the value the general way, so the result never differs
// from what parsing and converting the text gives.

// canonicalBuilder builds the Value of one verified canonical text.
type canonicalBuilder struct {
	text    string
	pos     int
	mode    Mode
	elems   []Value // elements of the arrays being built, innermost last
	members []Entry // members of the objects being built, innermost last
	values  slab[Value]
	entries slab[Entry]
	scratch []byte          // the string with escapes being decoded
	strs    strings.Builder // decoded strings that held escapes, in the current arena chunk
	kept    int             // bytes of all decoded strings kept so far
}

// buildCanonical builds the Value of text, which verifyCanonical accepted under m. It
// returns ok == false when the text is not what it expects.
func buildCanonical(text string, m Mode) (v Value, ok bool) {
	b := canonicalBuilders.Get().(*canonicalBuilder)
	defer b.release()
	b.text, b.pos, b.mode = text, 0, m
	// Every element but the first of a container follows a ',' and every member's value a
	// ':'; counting those bytes (strings may hold some) sizes the chunks, which grow if the
	// estimate is short.
	commas, colons := strings.Count(text, ","), strings.Count(text, ":")
	b.values.reserve(commas - colons + strings.Count(text, "[") + strings.Count(text, "{"))
	b.entries.reserve(colons)
	v, ok = b.value(0)
	return v, ok && b.pos == len(text)
}

// maxPooledScratch bounds the string scratch buffer a pooled builder keeps.
const maxPooledScratch = 4 << 10

// canonicalBuilders keeps builders, so their element and member stacks are reused.
var canonicalBuilders = sync.Pool{New: func() any { return new(canonicalBuilder) }}

// release returns b to the pool holding nothing of the value it built.
func (b *canonicalBuilder) release() {
	clear(b.elems[:cap(b.elems)])
	clear(b.members[:cap(b.members)])
	scratch := b.scratch[:0]
	if cap(scratch) > maxPooledScratch {
		scratch = nil
	}
	clear(scratch[:cap(scratch)])
	*b = canonicalBuilder{elems: b.elems[:0], members: b.members[:0], scratch: scratch}
	canonicalBuilders.Put(b)
}

func (b *canonicalBuilder) value(depth int) (Value, bool) {
	if b.pos >= len(b.text) {
		return Value{}, false
	}
	switch c := b.text[b.pos]; c {
	case '[', '{':
		return b.container(depth, c == '{')
	case '"':
		s, ok := b.str()
		return String(s), ok
	case 't':
		return Bool(true), b.word("true")
	case 'f':
		return Bool(false), b.word("false")
	case 'n':
		return Value{}, b.word("null")
	}
	return b.number()
}

func (b *canonicalBuilder) word(w string) bool {
	if !hasPrefixAt(b.text, b.pos, w) {
		return false
	}
	b.pos += len(w)
	return true
}

func (b *canonicalBuilder) number() (Value, bool) {
	// Plain non-negative integers of at most 18 digits (most numbers) are u64 in both
	// modes and are converted while they are scanned.
	var u uint64
	i := b.pos
	for ; i < len(b.text) && i-b.pos <= 18; i++ {
		c := b.text[i]
		if !isDigit(c) {
			break
		}
		u = u*10 + uint64(c-'0')
	}
	if n := i - b.pos; n > 0 && n <= 18 && (n == 1 || b.text[b.pos] != '0') &&
		(i == len(b.text) || !isNumberByte(b.text[i])) {
		b.pos = i
		return Uint(u), true
	}
	// In Preserve mode a fixed-point token (a valid integer part, '.', digits, and no
	// exponent) keeps its text, as preserveNumber would keep it.
	if n := i - b.pos; b.mode == Preserve && n > 0 && (n == 1 || b.text[b.pos] != '0') &&
		i < len(b.text) && b.text[i] == '.' {
		k := i + 1
		for k < len(b.text) && isDigit(b.text[k]) {
			k++
		}
		if k > i+1 && (k == len(b.text) || !isNumberByte(b.text[k])) {
			tok := b.text[b.pos:k]
			b.pos = k
			return textValue(KindNumber, numText, tok), true
		}
	}
	end := b.pos
	for end < len(b.text) && isNumberByte(b.text[end]) {
		end++
	}
	if end == b.pos {
		return Value{}, false
	}
	tok := b.text[b.pos:end]
	if validToken(tok) != nil {
		return Value{}, false
	}
	n, ok := convertToken(tok, b.mode)
	b.pos = end
	return numberValue(n), ok
}

// str reads the string literal at b.pos.
func (b *canonicalBuilder) str() (string, bool) {
	start := b.pos + 1
	i := skipVerbatim(b.text, start, false)
	if i >= len(b.text) {
		return "", false
	}
	if b.text[i] == '"' {
		b.pos = i + 1
		return b.text[start:i], true
	}
	out := append(b.scratch[:0], b.text[start:i]...)
	for {
		// b.text[i] is a backslash here: the writer's escapes only.
		if i+1 >= len(b.text) {
			return "", false
		}
		switch e := b.text[i+1]; e {
		case '"', '\\', 'b', 'f', 'n', 'r', 't':
			out = append(out, shortEscape(e))
		case 'u': // \u00xx, a control byte
			if i+6 > len(b.text) || b.text[i+2] != '0' || b.text[i+3] != '0' ||
				(b.text[i+4] != '0' && b.text[i+4] != '1') || !isLowerHex(b.text[i+5]) {
				return "", false
			}
			out = append(out, unhex(b.text[i+4])<<4|unhex(b.text[i+5]))
			i += 4
		default:
			return "", false
		}
		i += 2
		j := skipVerbatim(b.text, i, false)
		if j >= len(b.text) {
			return "", false
		}
		out = append(out, b.text[i:j]...)
		if b.text[j] == '"' {
			b.pos = j + 1
			b.scratch = out
			return b.keep(out), true
		}
		if b.text[j] != '\\' {
			return "", false
		}
		i = j
	}
}

// keep returns a string holding the bytes of s. The strings of one document are packed
// into shared chunks; a chunk that is full is left to the strings already in it and a new
// one is started, so a chunk is never copied into a larger one. The first chunk holds an
// eighth of the text; a later one what the strings decoded so far suggest the rest of the
// text needs (they are decoded at the rate seen so far), but never more than the rest of
// the text, which no string decoded from it can outgrow.
func (b *canonicalBuilder) keep(s []byte) string {
	if b.strs.Cap()-b.strs.Len() < len(s) {
		size := len(b.text)/8 + 64
		if b.kept > 0 {
			rest := len(b.text) - b.pos
			size = min(b.kept*rest/b.pos+64, rest)
		}
		size = max(size, len(s))
		b.strs = strings.Builder{}
		b.strs.Grow(size)
	}
	b.kept += len(s)
	mark := b.strs.Len()
	b.strs.Write(s)
	return b.strs.String()[mark:]
}

// container reads the array (object false) or object at b.pos.
func (b *canonicalBuilder) container(depth int, object bool) (Value, bool) {
	if depth+1 >= recursionLimit {
		return Value{}, false
	}
	closing := byte(']')
	if object {
		closing = '}'
	}
	b.pos++ // '[' or '{'
	if b.pos < len(b.text) && b.text[b.pos] == closing {
		b.pos++
		if object {
			return objectValue([]Entry{}), true
		}
		return arrayValue([]Value{}), true
	}
	base := len(b.elems)
	if object {
		base = len(b.members)
	}
	for {
		var key string
		if object {
			// A key: a string without escapes, then ':'.
			if b.pos >= len(b.text) || b.text[b.pos] != '"' {
				return Value{}, false
			}
			end := b.pos + 1
			for end < len(b.text) && b.text[end] != '"' && b.text[end] != '\\' {
				end++
			}
			if end >= len(b.text) || b.text[end] != '"' {
				return Value{}, false
			}
			key = b.text[b.pos+1 : end]
			b.pos = end + 1
			if b.pos >= len(b.text) || b.text[b.pos] != ':' ||
				len(b.members) > base && !keyAfter(key, b.members[len(b.members)-1].Key) ||
				key == privateNumberKey {
				return Value{}, false
			}
			b.pos++
		}
		// Strings and non-negative numbers, most children, are read here rather than
		// through value's dispatch (one call fewer; value is recursive, so never inlined).
		var v Value
		var ok bool
		if b.pos < len(b.text) && b.text[b.pos] == '"' {
			var s string
			s, ok = b.str()
			v = String(s)
		} else if b.pos < len(b.text) && isDigit(b.text[b.pos]) {
			v, ok = b.number()
		} else {
			v, ok = b.value(depth + 1)
		}
		if !ok || b.pos >= len(b.text) {
			return Value{}, false
		}
		if object {
			b.members = append(b.members, Entry{Key: key, Value: v})
		} else {
			b.elems = append(b.elems, v)
		}
		if last, ok := b.separator(closing); !ok {
			return Value{}, false
		} else if last {
			break
		}
	}
	if object {
		var ents []Entry
		ents, b.members = carve(&b.entries, b.members, base)
		return objectValue(ents), true
	}
	var elems []Value
	elems, b.elems = carve(&b.values, b.elems, base)
	return arrayValue(elems), true
}

// separator reads the byte after a container's element or member: ',' before another one
// (last false), or the closing byte (last true).
func (b *canonicalBuilder) separator(closing byte) (last, ok bool) {
	c := b.text[b.pos]
	b.pos++
	return c == closing, c == closing || c == ','
}

// carve moves stack[base:], the children of the container just read, into a slice taken
// from s, and returns that slice and the stack without them.
func carve[T any](s *slab[T], stack []T, base int) (children, rest []T) {
	children = s.take(len(stack) - base)
	copy(children, stack[base:])
	// stack[base:] is left as it is: it is overwritten by the next children, and release
	// clears the whole stack.
	return children, stack[:base]
}
