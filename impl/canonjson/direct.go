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
	strs    strings.Builder // decoded strings that held escapes
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

// canonicalBuilders keeps builders, so their element and member stacks are reused.
var canonicalBuilders = sync.Pool{New: func() any { return new(canonicalBuilder) }}

// release returns b to the pool holding nothing of the value it built.
func (b *canonicalBuilder) release() {
	clear(b.elems[:cap(b.elems)])
	clear(b.members[:cap(b.members)])
	*b = canonicalBuilder{elems: b.elems[:0], members: b.members[:0]}
	canonicalBuilders.Put(b)
}

func (b *canonicalBuilder) value(depth int) (Value, bool) {
	if b.pos >= len(b.text) {
		return Value{}, false
	}
	switch c := b.text[b.pos]; c {
	case '[':
		return b.array(depth)
	case '{':
		return b.object(depth)
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
	if b.strs.Cap() == 0 {
		b.strs.Grow(len(b.text)/8 + 64)
	}
	mark := b.strs.Len()
	b.strs.WriteString(b.text[start:i])
	for {
		// b.text[i] is a backslash here: the writer's escapes only.
		if i+1 >= len(b.text) {
			return "", false
		}
		switch e := b.text[i+1]; e {
		case '"', '\\':
			b.strs.WriteByte(e)
		case 'b':
			b.strs.WriteByte('\b')
		case 'f':
			b.strs.WriteByte('\f')
		case 'n':
			b.strs.WriteByte('\n')
		case 'r':
			b.strs.WriteByte('\r')
		case 't':
			b.strs.WriteByte('\t')
		case 'u': // \u00xx, a control byte
			if i+6 > len(b.text) || b.text[i+2] != '0' || b.text[i+3] != '0' ||
				(b.text[i+4] != '0' && b.text[i+4] != '1') || !isLowerHex(b.text[i+5]) {
				return "", false
			}
			b.strs.WriteByte(unhex(b.text[i+4])<<4 | unhex(b.text[i+5]))
			i += 4
		default:
			return "", false
		}
		i += 2
		j := skipVerbatim(b.text, i, false)
		if j >= len(b.text) {
			return "", false
		}
		b.strs.WriteString(b.text[i:j])
		if b.text[j] == '"' {
			b.pos = j + 1
			return b.strs.String()[mark:], true
		}
		if b.text[j] != '\\' {
			return "", false
		}
		i = j
	}
}

func (b *canonicalBuilder) array(depth int) (Value, bool) {
	if depth+1 >= recursionLimit {
		return Value{}, false
	}
	b.pos++ // '['
	if b.pos < len(b.text) && b.text[b.pos] == ']' {
		b.pos++
		return arrayValue([]Value{}), true
	}
	base := len(b.elems)
	for {
		v, ok := b.value(depth + 1)
		if !ok || b.pos >= len(b.text) {
			return Value{}, false
		}
		b.elems = append(b.elems, v)
		if last, ok := b.separator(']'); !ok {
			return Value{}, false
		} else if last {
			break
		}
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
	clear(stack[base:])
	return children, stack[:base]
}

func (b *canonicalBuilder) object(depth int) (Value, bool) {
	if depth+1 >= recursionLimit {
		return Value{}, false
	}
	b.pos++ // '{'
	if b.pos < len(b.text) && b.text[b.pos] == '}' {
		b.pos++
		return objectValue([]Entry{}), true
	}
	base := len(b.members)
	for {
		// A key: a string without escapes, then ':'.
		if b.pos >= len(b.text) || b.text[b.pos] != '"' {
			return Value{}, false
		}
		n := strings.IndexByte(b.text[b.pos+1:], '"')
		if n < 0 {
			return Value{}, false
		}
		key := b.text[b.pos+1 : b.pos+1+n]
		b.pos += n + 2
		if strings.IndexByte(key, '\\') >= 0 || b.pos >= len(b.text) || b.text[b.pos] != ':' ||
			len(b.members) > base && !keyAfter(key, b.members[len(b.members)-1].Key) ||
			key == privateNumberKey {
			return Value{}, false
		}
		b.pos++
		v, ok := b.value(depth + 1)
		if !ok || b.pos >= len(b.text) {
			return Value{}, false
		}
		b.members = append(b.members, Entry{Key: key, Value: v})
		if last, ok := b.separator('}'); !ok {
			return Value{}, false
		} else if last {
			break
		}
	}
	var ents []Entry
	ents, b.members = carve(&b.entries, b.members, base)
	return objectValue(ents), true
}
