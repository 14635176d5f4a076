package canonjson

import "fmt"

// Reading a Value token by token, straight from its canonical text.
//
// A deferred Value's text was verified canonical when it was received (verifyCanonical);
// any other Value's canonical text is what AppendJSON writes. Both are trusted: compact,
// only the writer's escapes in strings, and keys without escapes in verified text (the
// writer escapes a built Value's keys like any string). A Reader therefore walks the text
// without building anything: keys, numbers and strings without escapes are substrings of
// the text, and nothing is allocated. It still checks every byte it relies on, so text that
// is not what it expects (a bug, never input) ends the token stream with an error instead
// of a panic or a wrong token; it does not check what it does not rely on, such as the
// order of keys, the spelling of numbers or UTF-8.

// TokenKind is the kind of a Reader's current token.
type TokenKind uint8

// The token kinds. The zero TokenKind is TokenNone.
const (
	// TokenNone means there is no current token: before the first Next, and after the last.
	TokenNone TokenKind = iota
	// TokenNull is null.
	TokenNull
	// TokenBool is true or false.
	TokenBool
	// TokenNumber is a number.
	TokenNumber
	// TokenString is a string.
	TokenString
	// TokenBeginArray is the '[' that opens an array.
	TokenBeginArray
	// TokenEndArray is the ']' that closes an array.
	TokenEndArray
	// TokenBeginObject is the '{' that opens an object.
	TokenBeginObject
	// TokenEndObject is the '}' that closes an object.
	TokenEndObject
)

var tokenNames = [...]string{"none", "null", "bool", "number", "string", "begin-array", "end-array", "begin-object", "end-object"}

// String returns the name of the token kind, such as "number" or "begin-array".
func (k TokenKind) String() string {
	if int(k) < len(tokenNames) {
		return tokenNames[k]
	}
	return fmt.Sprintf("TokenKind(%d)", uint8(k))
}

// readState says what the text after a Reader's current token holds.
type readState uint8

const (
	readStart readState = iota // the top-level value
	readFirst                  // the current token opened a container: its closer or its first child
	readAfter                  // the current token ended a value: ',', a closer, or the end
	readDone                   // nothing: the stream has ended
)

// A Reader reads a Value as a stream of tokens, in the order of its canonical encoding
// (object members sorted by key), without building it: for a deferred Value (a container
// received as verified canonical text) it reads that text in place, and for any other Value
// it reads what [Value.AppendJSON] writes, into a buffer it keeps. Reading a deferred Value
// that holds no escaped strings with a Reader that is Reset allocates nothing.
//
// The text is trusted, not validated: it was either verified when it was received or
// written by this package. A Reader nevertheless never panics: at text it does not expect
// (which only a bug can produce) Next returns false and Err reports it.
//
// Strings a Reader returns stay valid after it moves on or is Reset. A Reader must not be
// used by several goroutines at once. The zero Reader reads nothing; [NewReader] or
// [Reader.Reset] gives it a Value.
type Reader struct {
	text  string
	pos   int // where the text after the current token starts
	state readState
	open  int // containers open after the current token

	// The current token. start:end is a string's contents (without the quotes), a
	// number's token, a literal or a bracket.
	kind       TokenKind
	start, end int
	escaped    bool // the string holds escapes
	depth      int

	// The member name as written (keyStart:keyEnd, between the quotes) when the token is a
	// member's value or begin token, and 0:0 otherwise; it holds escapes only in a built
	// Value's encoding, never in verified text.
	keyStart, keyEnd int
	keyEscaped       bool

	// objects has bit k%64 of word k/64 set when the k-th open container (from 0, the
	// outermost) is an object; inObject caches the bit of the innermost one.
	objects  []uint64
	inObject bool

	err   error
	buf   []byte // the encoding of a Value that is not deferred
	owned bool   // text is a view of buf
	lent  bool   // a substring of text was returned since the last Reset
}

// NewReader returns a Reader positioned before the first token of v.
func NewReader(v Value) *Reader {
	r := &Reader{objects: make([]uint64, recursionLimit/64)}
	r.Reset(v)
	return r
}

// Reset positions r before the first token of v, reusing r's memory. The encoding of a
// Value that is not deferred is written into r's buffer, which is reused unless r returned
// a string pointing into it (Key, NumberText, or Str of a string without escapes); then a
// new buffer is started, so that string stays valid.
func (r *Reader) Reset(v Value) {
	if r.owned && r.lent {
		r.buf = nil // strings handed out point into it
	}
	buf := r.buf
	*r = Reader{buf: buf, objects: r.objects}
	if d := v.deferred(); d != nil {
		r.text = d.text
		return
	}
	r.buf = v.AppendJSON(buf[:0])
	r.text = bytesString(r.buf)
	r.owned = true
}

// Next moves to the next token and reports whether there is one. It returns false after
// the last token, and at text it cannot read (see [Reader.Err]).
func (r *Reader) Next() bool {
	i, text := r.pos, r.text
	r.keyStart, r.keyEnd, r.keyEscaped = 0, 0, false
	switch r.state {
	case readStart:
		if len(text) == 0 {
			return r.finish()
		}
		return r.value(i)
	case readFirst:
		if i < len(text) && (text[i] == ']' || text[i] == '}') {
			return r.endToken(i)
		}
		return r.child(i)
	case readAfter:
		if r.open == 0 {
			if i != len(text) {
				return r.fail(i)
			}
			return r.finish()
		}
		if i < len(text) {
			switch text[i] {
			case ',':
				return r.child(i + 1)
			case ']', '}':
				return r.endToken(i)
			}
		}
		return r.fail(i)
	}
	return false
}

// child reads the element or member of the innermost open container that starts at i.
func (r *Reader) child(i int) bool {
	if !r.inObject {
		return r.value(i)
	}
	// A key, then ':'.
	text := r.text
	if i >= len(text) || text[i] != '"' {
		return r.fail(i)
	}
	end, escaped, ok := stringEnd(text, i)
	if !ok || end >= len(text) || text[end] != ':' {
		return r.fail(i)
	}
	r.keyStart, r.keyEnd, r.keyEscaped = i+1, end-1, escaped
	return r.value(end + 1)
}

// push records a container opened at nesting r.open (one deeper than those open).
func (r *Reader) push(object bool) {
	k := r.open
	for k/64 >= len(r.objects) {
		r.objects = append(r.objects, 0)
	}
	bit := uint64(1) << (k % 64)
	if object {
		r.objects[k/64] |= bit
	} else {
		r.objects[k/64] &^= bit
	}
	r.open++
	r.inObject = object
}

// pop records that the innermost open container closed.
func (r *Reader) pop() {
	r.open--
	k := r.open - 1
	r.inObject = k >= 0 && k/64 < len(r.objects) && r.objects[k/64]>>(k%64)&1 != 0
}

// value reads the value that starts at i.
func (r *Reader) value(i int) bool {
	text := r.text
	if i >= len(text) {
		return r.fail(i)
	}
	r.depth = r.open + 1
	r.state = readAfter
	end := i + 1
	switch c := text[i]; c {
	case '[', '{':
		r.kind = TokenBeginArray
		if c == '{' {
			r.kind = TokenBeginObject
		}
		r.push(c == '{')
		r.state = readFirst
	case '"':
		end, escaped, ok := stringEnd(text, i)
		if !ok {
			return r.fail(end)
		}
		r.kind, r.escaped = TokenString, escaped
		r.start, r.end, r.pos = i+1, end-1, end
		return true
	case 't', 'f', 'n':
		word, kind := "null", TokenNull
		if c == 't' {
			word, kind = "true", TokenBool
		} else if c == 'f' {
			word, kind = "false", TokenBool
		}
		if !hasPrefixAt(text, i, word) {
			return r.fail(i)
		}
		r.kind, end = kind, i+len(word)
	default:
		if c != '-' && !isDigit(c) {
			return r.fail(i)
		}
		for end < len(text) && isNumberByte(text[end]) {
			end++
		}
		r.kind = TokenNumber
	}
	r.start, r.end, r.pos = i, end, end
	return true
}

// endToken makes the closer at i the current token.
func (r *Reader) endToken(i int) bool {
	object := r.text[i] == '}'
	if r.open == 0 || object != r.inObject {
		return r.fail(i)
	}
	r.kind = TokenEndArray
	if object {
		r.kind = TokenEndObject
	}
	r.depth = r.open
	r.pop()
	r.state = readAfter
	r.start, r.end, r.pos = i, i+1, i+1
	return true
}

// fail ends the stream at text it cannot read.
func (r *Reader) fail(i int) bool {
	r.err = syntaxErr(i, "unexpected text in canonical encoding")
	return r.finish()
}

// finish ends the stream.
func (r *Reader) finish() bool {
	r.kind, r.depth, r.state = TokenNone, 0, readDone
	r.keyStart, r.keyEnd, r.keyEscaped = 0, 0, false
	return false
}

// Err returns nil, or the *SyntaxError (wrapping ErrSyntax) at which the token stream
// stopped early because the text was not canonical. Only a bug can cause that.
func (r *Reader) Err() error { return r.err }

// Kind returns the kind of the current token.
func (r *Reader) Kind() TokenKind { return r.kind }

// Depth returns the depth of the current token under the depth rule of
// [Value.WithinDepth]: the top-level value's tokens are at depth 1, the tokens of its
// elements or member values at 2, and so on; a container's end token is at the depth of
// its begin token. It is 0 when there is no current token.
func (r *Reader) Depth() int { return r.depth }

// Key returns the member name when the current token is an object member's value (a
// scalar or a begin token), and "" otherwise (also for a member named ""). It allocates
// only for a key that holds escapes, which verified text never has (a built Value's
// may).
func (r *Reader) Key() string {
	key := r.text[r.keyStart:r.keyEnd]
	if r.keyEscaped {
		return string(appendUnescaped(nil, key))
	}
	return r.lend(key)
}

// Bool returns the value of a TokenBool, and false for any other token.
func (r *Reader) Bool() bool { return r.kind == TokenBool && r.text[r.start] == 't' }

// NumberText returns a TokenNumber as it is written in the canonical encoding, and "" for
// any other token. [NumberToken] converts it.
func (r *Reader) NumberText() string {
	if r.kind != TokenNumber {
		return ""
	}
	return r.lend(r.text[r.start:r.end])
}

// Str returns the decoded contents of a TokenString, and "" for any other token. It
// allocates only for a string that holds escapes.
func (r *Reader) Str() string {
	if r.kind != TokenString {
		return ""
	}
	if !r.escaped {
		return r.lend(r.text[r.start:r.end])
	}
	return string(r.AppendStr(nil))
}

// AppendStr appends the decoded contents of a TokenString to dst (nothing for any other
// token). It allocates only to grow dst.
func (r *Reader) AppendStr(dst []byte) []byte {
	if r.kind != TokenString {
		return dst
	}
	if r.escaped {
		return appendUnescaped(dst, r.text[r.start:r.end])
	}
	return append(dst, r.text[r.start:r.end]...)
}

// appendUnescaped appends to dst the contents of a string whose text s (between the
// quotes) stringEnd accepted, its escapes decoded.
func appendUnescaped(dst []byte, s string) []byte {
	for i := 0; ; {
		j := skipVerbatim(s, i, false)
		dst = append(dst, s[i:j]...)
		if j >= len(s) {
			return dst
		}
		b, n := writerEscape(s, j)
		if n == 0 { // unreachable for text stringEnd accepted
			b, n = s[j], 1
		}
		dst = append(dst, b)
		i = j + n
	}
}

// Skip moves from a begin token to its matching end token, which becomes the current
// token, so that Next continues after the container. On any other token it does nothing.
func (r *Reader) Skip() {
	if r.kind != TokenBeginArray && r.kind != TokenBeginObject {
		return
	}
	text, nest := r.text, 1
	for i := r.pos; i < len(text); i++ {
		switch text[i] {
		case '"':
			end, _, ok := stringEnd(text, i)
			if !ok {
				r.fail(end)
				return
			}
			i = end - 1
		case '[', '{':
			nest++
		case ']', '}':
			if nest--; nest == 0 {
				r.keyStart, r.keyEnd, r.keyEscaped = 0, 0, false
				r.endToken(i)
				return
			}
		}
	}
	r.fail(len(text))
}

// lend returns s, a substring of r's text, noting that r's buffer may no longer be reused
// when s is not empty.
func (r *Reader) lend(s string) string {
	if s != "" {
		r.lent = true
	}
	return s
}

// stringEnd returns the offset just past the closing quote of the string literal at
// text[i] == '"', and whether it holds escapes. It gives up (ok false, end where it
// stopped) at a raw control byte, at an escape the writer does not produce, and at the end
// of the text. Other bytes, UTF-8 or not, it does not inspect.
func stringEnd(text string, i int) (end int, escaped, ok bool) {
	for i++; ; {
		i = skipVerbatim(text, i, false)
		if i >= len(text) {
			return i, false, false
		}
		switch text[i] {
		case '"':
			return i + 1, escaped, true
		case '\\':
			_, n := writerEscape(text, i)
			if n == 0 {
				return i, false, false
			}
			escaped = true
			i += n
		default:
			return i, false, false
		}
	}
}

// writerEscape decodes the escape at text[i] == '\\' when it is one the writer produces
// (\" \\ \b \f \n \r \t, or \u00xx in lower-case hex for a control byte): it returns the
// byte it stands for and its length, or n == 0.
func writerEscape(text string, i int) (b byte, n int) {
	if i+1 >= len(text) {
		return 0, 0
	}
	switch e := text[i+1]; e {
	case '"', '\\', 'b', 'f', 'n', 'r', 't':
		return shortEscape(e), 2
	case 'u':
		if i+6 <= len(text) && text[i+2] == '0' && text[i+3] == '0' &&
			(text[i+4] == '0' || text[i+4] == '1') && isLowerHex(text[i+5]) {
			return unhex(text[i+4])<<4 | unhex(text[i+5]), 6
		}
	}
	return 0, 0
}
