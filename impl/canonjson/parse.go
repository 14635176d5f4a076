package canonjson

import (
	"unicode/utf8"
)

// NodeKind is the kind of a syntax-tree node.
type NodeKind uint8

// The syntax-tree node kinds. The zero NodeKind is NodeNull.
const (
	NodeNull NodeKind = iota
	NodeBool
	NodeNumber
	NodeString
	NodeArray
	NodeObject
)

// String returns the lower-case JSON name of the kind.
func (k NodeKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "invalid"
}

var kindNames = [...]string{"null", "bool", "number", "string", "array", "object", "raw"}

// Node is one JSON value of a syntax tree as it appears in the document: members in
// document order with duplicates kept, strings decoded, number tokens kept raw.
type Node struct {
	// Kind says which of the other fields is meaningful.
	Kind NodeKind
	// Bool is the value of a NodeBool.
	Bool bool
	// Text is the decoded string of a NodeString, or the raw token of a NodeNumber.
	Text string
	// Elems are the elements of a NodeArray.
	Elems []*Node
	// Members are the members of a NodeObject in document order, duplicates kept.
	Members []Member
	// rawDepth, rawMode and rawNumbers describe a NodeRaw: the depth its verifier
	// measured, the number mode its text is canonical in, and what the verifier saw of
	// its numbers.
	rawDepth   int32
	rawMode    Mode
	rawNumbers numberFacts
}

// Member is one key/value pair of an object node.
type Member struct {
	// Key is the decoded key.
	Key string
	// Value is the member's value.
	Value *Node
}

// recursionLimit mirrors serde_json's remaining_depth counter: it starts at 128 and each
// array or object decrements it before its contents are read; reaching zero is the error.
// So at most 127 arrays/objects may be open at once: 127 nested "[" parse, 128 fail at the
// offset of the 128th "[". The check applies to every container of the document.
const recursionLimit = 128

// privateNumberKey is the object key serde_json's arbitrary_precision feature uses to
// smuggle a number through a map; the first key of a Value object is compared to it after
// unescaping.
const privateNumberKey = "$serde_json::private::Number"

// Parse parses one JSON document with serde_json::from_slice strictness: valid UTF-8
// everywhere, no raw control characters in strings, complete surrogate pairs in \u
// escapes, RFC 8259 numbers, at most 127 nested arrays/objects, and nothing but
// whitespace (space, tab, LF, CR) around the value. Errors are *SyntaxError values that
// wrap ErrSyntax (and ErrRecursionLimit for the nesting limit).
func Parse(data []byte) (*Node, error) {
	p := parser{data: data, text: string(data)}
	return p.document()
}

// Parser parses documents exactly like [Parse] but reuses its memory from one document to
// the next, which saves most of the allocation of parsing when many documents are decoded
// one after another. The zero Parser is ready to use. A Parser must not be used by two
// goroutines at once.
//
// The nodes and child slices of a tree returned by [Parser.Parse] belong to the Parser: they
// stay valid only until its next Parse, so the tree must not be kept (or handed to code
// that keeps it) beyond that. The strings in the tree (Text and Key) are ordinary strings
// and stay valid forever, as do Values converted from the tree with [FromNode].
type Parser struct {
	p parser
}

// Retained bounds what a Parser keeps between documents: the nodes and child slots of a
// document of up to about 128 KiB. Larger documents are parsed into fresh memory beyond
// these bounds.
const (
	keepNodes    = 16 << 10
	keepChildren = 16 << 10
	keepStack    = 1 << 10
	keepScratch  = 64 << 10
)

// Parse parses data with the strictness of [Parse]. The returned tree is valid until the
// next call of Parse on p.
func (ps *Parser) Parse(data []byte) (*Node, error) {
	return ps.parseText(data, string(data))
}

// parseText parses data, whose string copy text is, so tokens and strings of the tree can
// be substrings of text.
func (ps *Parser) parseText(data []byte, text string) (*Node, error) {
	p := &ps.p
	p.nodes.reset(keepNodes)
	p.elems.reset(keepChildren)
	p.members.reset(keepChildren)
	p.elemStack = resetStack(p.elemStack)
	p.memberStack = resetStack(p.memberStack)
	if cap(p.scratch) > keepScratch {
		p.scratch = nil
	}
	p.data, p.text, p.pos, p.depth, p.mode = data, text, 0, 0, 0
	n, err := p.document()
	p.data, p.text = nil, ""
	return n, err
}

// resetStack empties a child stack for the next document, dropping what a failed parse
// left on it and its backing array when it grew large.
func resetStack[T any](s []T) []T {
	if cap(s) > keepStack {
		return nil
	}
	clear(s)
	return s[:0]
}

type parser struct {
	data    []byte
	text    string // a copy of data: tokens and unescaped strings are substrings of it
	pos     int
	depth   int
	mode    Mode // 0: syntax only; otherwise also apply the mode's number rules while reading
	scratch []byte
	// nodes, elems and members hold the tree: every node, and the children of every
	// container, are carved from a few large chunks.
	nodes   slab[Node]
	elems   slab[*Node]
	members slab[Member]
	// elemStack and memberStack collect the children of the open containers, so each
	// container's slice is taken once, at its exact size, when it closes.
	elemStack   []*Node
	memberStack []Member
	// deferKey, deferMode and deferBudget drive ParseDeferring: the member name whose
	// canonical container values become NodeRaw nodes, the mode they must be canonical in,
	// and how many more bytes failed verifications may read.
	deferKey    string
	deferMode   Mode
	deferBudget int
}

func (p *parser) document() (*Node, error) {
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.data) {
		return nil, syntaxErr(p.pos, "trailing characters")
	}
	return n, nil
}

// newNode returns a node of kind k whose other fields are zero.
func (p *parser) newNode(k NodeKind) *Node {
	n := p.nodes.one()
	*n = Node{Kind: k}
	return n
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value() (*Node, error) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return nil, syntaxErr(p.pos, "EOF while parsing a value")
	}
	switch c := p.data[p.pos]; c {
	case 'n':
		return p.literal("null", NodeNull, false)
	case 't':
		return p.literal("true", NodeBool, true)
	case 'f':
		return p.literal("false", NodeBool, false)
	case '"':
		p.pos++
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		n := p.newNode(NodeString)
		n.Text = s
		return n, nil
	case '[':
		return p.array()
	case '{':
		return p.object()
	default:
		if c == '-' || isDigit(c) {
			return p.number()
		}
		return nil, syntaxErr(p.pos, "expected value")
	}
}

func (p *parser) literal(word string, k NodeKind, b bool) (*Node, error) {
	for i := 0; i < len(word); i++ {
		if p.pos >= len(p.data) {
			return nil, syntaxErr(p.pos, "EOF while parsing a value")
		}
		if p.data[p.pos] != word[i] {
			return nil, syntaxErr(p.pos, "expected ident")
		}
		p.pos++
	}
	n := p.newNode(k)
	n.Bool = b
	return n, nil
}

func (p *parser) number() (*Node, error) {
	start := p.pos
	end, err := scanNumber(p.data, start)
	if err != nil {
		return nil, err
	}
	p.pos = end
	tok := p.text[start:end]
	if p.mode == Lossy {
		if _, ok := lossyNumber(tok); !ok {
			return nil, outOfRange(start)
		}
	}
	n := p.newNode(NodeNumber)
	n.Text = tok
	return n, nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth >= recursionLimit {
		return &SyntaxError{Offset: p.pos, Reason: "recursion limit exceeded", cause: ErrRecursionLimit}
	}
	return nil
}

func (p *parser) array() (*Node, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++ // '['
	n := p.newNode(NodeArray)
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		p.depth--
		return n, nil
	}
	base := len(p.elemStack)
	for {
		elem, err := p.value()
		if err != nil {
			return nil, err
		}
		p.elemStack = append(p.elemStack, elem)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, syntaxErr(p.pos, "EOF while parsing a list")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
			p.skipSpace()
			if p.pos < len(p.data) && p.data[p.pos] == ']' {
				return nil, syntaxErr(p.pos, "trailing comma")
			}
		case ']':
			p.pos++
			p.depth--
			n.Elems = p.elems.take(len(p.elemStack) - base)
			copy(n.Elems, p.elemStack[base:])
			clear(p.elemStack[base:])
			p.elemStack = p.elemStack[:base]
			return n, nil
		default:
			return nil, syntaxErr(p.pos, "expected ',' or ']'")
		}
	}
}

func (p *parser) object() (*Node, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++ // '{'
	n := p.newNode(NodeObject)
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		p.depth--
		return n, nil
	}
	base := len(p.memberStack)
	for {
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, syntaxErr(p.pos, "EOF while parsing an object")
		}
		if p.data[p.pos] != '"' {
			if p.data[p.pos] == '}' && len(p.memberStack) > base {
				return nil, syntaxErr(p.pos, "trailing comma")
			}
			return nil, syntaxErr(p.pos, "key must be a string")
		}
		p.pos++
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, syntaxErr(p.pos, "EOF while parsing an object")
		}
		if p.data[p.pos] != ':' {
			return nil, syntaxErr(p.pos, "expected ':'")
		}
		p.pos++
		if p.mode == Preserve && len(p.memberStack) == base && key == privateNumberKey {
			return p.privateNumber(n)
		}
		var val *Node
		if p.deferKey != "" && key == p.deferKey {
			val = p.tryDefer()
		}
		if val == nil {
			if val, err = p.value(); err != nil {
				return nil, err
			}
		}
		p.memberStack = append(p.memberStack, Member{Key: key, Value: val})
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, syntaxErr(p.pos, "EOF while parsing an object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			p.depth--
			n.Members = p.members.take(len(p.memberStack) - base)
			copy(n.Members, p.memberStack[base:])
			clear(p.memberStack[base:])
			p.memberStack = p.memberStack[:base]
			return n, nil
		default:
			return nil, syntaxErr(p.pos, "expected ',' or '}'")
		}
	}
}

// privateNumber reads the rest of an object whose first key is privateNumberKey, in
// Preserve mode: serde_json then requires a string holding exactly one number token,
// followed by the end of the object.
func (p *parser) privateNumber(n *Node) (*Node, error) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return nil, syntaxErr(p.pos, "EOF while parsing a value")
	}
	if p.data[p.pos] != '"' {
		return nil, syntaxErr(p.pos, "invalid type: expected a string containing a number")
	}
	start := p.pos
	p.pos++
	s, err := p.str()
	if err != nil {
		return nil, err
	}
	if err := validToken(s); err != nil {
		return nil, syntaxErr(start, "invalid number in "+privateNumberKey)
	}
	val := p.newNode(NodeString)
	val.Text = s
	n.Members = append(n.Members, Member{Key: privateNumberKey, Value: val})
	p.skipSpace()
	if p.pos >= len(p.data) {
		return nil, syntaxErr(p.pos, "EOF while parsing an object")
	}
	switch p.data[p.pos] {
	case '}':
		p.pos++
		p.depth--
		return n, nil
	case ',':
		return nil, syntaxErr(p.pos, "trailing comma")
	default:
		return nil, syntaxErr(p.pos, "trailing characters")
	}
}

// str reads a string whose opening quote has been consumed and returns it decoded.
func (p *parser) str() (string, error) {
	start := p.pos
	i := skipVerbatim(p.text, start, true)
	ascii := true
	for i < len(p.data) {
		switch c := p.data[i]; {
		case c == '"':
			p.pos = i + 1
			if !ascii {
				if err := checkUTF8(p.data[start:i], start); err != nil {
					return "", err
				}
			}
			return p.text[start:i], nil
		case c == '\\':
			return p.escapedStr(start, i, ascii)
		case c < 0x20:
			return "", syntaxErr(i, "control character while parsing a string")
		}
		// A byte of 0x80 or above: check the whole string's UTF-8 at its end.
		ascii = false
		i = skipVerbatim(p.text, i+1, false)
	}
	return "", syntaxErr(len(p.data), "EOF while parsing a string")
}

// escapedStr continues str at the first backslash, at offset i.
func (p *parser) escapedStr(start, i int, ascii bool) (string, error) {
	if !ascii {
		if err := checkUTF8(p.data[start:i], start); err != nil {
			return "", err
		}
	}
	buf := append(p.scratch[:0], p.data[start:i]...)
	for {
		// p.data[i] is a backslash here.
		i++
		if i >= len(p.data) {
			return "", syntaxErr(i, "EOF while parsing a string")
		}
		switch e := p.data[i]; e {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			buf = append(buf, shortEscape(e))
		case 'u':
			r, next, err := p.unicodeEscape(i + 1)
			if err != nil {
				return "", err
			}
			buf = utf8.AppendRune(buf, r)
			i = next - 1
		default:
			return "", syntaxErr(i, "invalid escape")
		}
		i++
		// Copy the raw run up to the next quote or backslash.
		runStart := i
		i = skipVerbatim(p.text, i, true)
		ascii = true
		if i < len(p.data) && p.data[i] >= 0x80 {
			ascii = false
			i = skipVerbatim(p.text, i, false)
		}
		if i >= len(p.data) {
			return "", syntaxErr(i, "EOF while parsing a string")
		}
		if c := p.data[i]; c < 0x20 {
			return "", syntaxErr(i, "control character while parsing a string")
		}
		if !ascii {
			if err := checkUTF8(p.data[runStart:i], runStart); err != nil {
				return "", err
			}
		}
		buf = append(buf, p.data[runStart:i]...)
		if p.data[i] == '"' {
			p.pos = i + 1
			p.scratch = buf[:0]
			return string(buf), nil
		}
	}
}

// unicodeEscape decodes the four hex digits at offset i (just after "\u"), and a
// following low-surrogate escape when the first is a high surrogate. It returns the rune
// and the offset just past the escape(s).
func (p *parser) unicodeEscape(i int) (rune, int, error) {
	hi, err := p.hex4(i)
	if err != nil {
		return 0, 0, err
	}
	i += 4
	switch {
	case hi >= 0xDC00 && hi <= 0xDFFF:
		return 0, 0, syntaxErr(i, "lone leading surrogate in hex escape")
	case hi < 0xD800 || hi > 0xDBFF:
		return rune(hi), i, nil
	}
	if i+1 >= len(p.data) || p.data[i] != '\\' || p.data[i+1] != 'u' {
		if i >= len(p.data) || (p.data[i] == '\\' && i+1 >= len(p.data)) {
			return 0, 0, syntaxErr(len(p.data), "EOF while parsing a string")
		}
		return 0, 0, syntaxErr(i, "unexpected end of hex escape")
	}
	lo, err := p.hex4(i + 2)
	if err != nil {
		return 0, 0, err
	}
	i += 6
	if lo < 0xDC00 || lo > 0xDFFF {
		return 0, 0, syntaxErr(i, "lone leading surrogate in hex escape")
	}
	return 0x10000 + (rune(hi)-0xD800)<<10 + (rune(lo) - 0xDC00), i, nil
}

func (p *parser) hex4(i int) (uint16, error) {
	if i+4 > len(p.data) {
		return 0, syntaxErr(len(p.data), "EOF while parsing a string")
	}
	var v uint16
	for _, c := range p.data[i : i+4] {
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, syntaxErr(i, "invalid escape")
		}
		v = v<<4 | uint16(d)
	}
	return v, nil
}

// checkUTF8 reports the first invalid UTF-8 sequence in seg, which starts at offset base.
func checkUTF8(seg []byte, base int) error {
	if utf8.Valid(seg) {
		return nil
	}
	for i := 0; i < len(seg); {
		r, size := utf8.DecodeRune(seg[i:])
		if r == utf8.RuneError && size <= 1 {
			return syntaxErr(base+i, "invalid unicode code point")
		}
		i += size
	}
	return nil
}

// shortEscape returns the byte a one-letter escape stands for: b, f, n, r and t their control
// bytes; any other letter (the quote, the backslash, the slash) itself.
func shortEscape(e byte) byte {
	switch e {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return e
}
