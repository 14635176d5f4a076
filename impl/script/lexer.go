package script

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

type tokKind uint8

const (
	tEOF tokKind = iota
	tNewline
	tSemicolon
	tComma
	tLParen
	tRParen
	tLBracket
	tRBracket
	tLBrace
	tRBrace
	tIdent
	tNumber
	tString
	tOp
)

type token struct {
	kind tokKind
	text string  // identifier, operator, or decoded string literal
	num  float64 // number literal value
	pos  Pos
}

// describe names the token for syntax messages.
func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "the end of the source"
	case tNewline:
		return "a newline"
	case tSemicolon:
		return "`;`"
	case tComma:
		return "`,`"
	case tLParen:
		return "`(`"
	case tRParen:
		return "`)`"
	case tLBracket:
		return "`[`"
	case tRBracket:
		return "`]`"
	case tLBrace:
		return "`{`"
	case tRBrace:
		return "`}`"
	case tIdent, tOp:
		return "`" + t.text + "`"
	case tNumber:
		return "a number"
	case tString:
		return "a string"
	}
	return "a token"
}

// canonicalOperators are the operator spellings of the reference grammar. The lexer reads a
// maximal run of operator characters, so `=-` or `..` is one (rejected) operator.
var canonicalOperators = map[string]bool{
	"!": true, "-": true, "+": true, "~": true, "=": true, "+=": true, "-=": true, "*=": true,
	"/=": true, "%=": true, "||": true, "&&": true, "==": true, "!=": true, "<": true, "<=": true,
	">": true, ">=": true, "*": true, "/": true, "%": true, ".": true, ":": true, "|": true,
}

func isOperatorChar(c byte) bool {
	return strings.IndexByte("!^&*+-|?:=@><./~%", c) >= 0
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

type lexer struct {
	src       string
	i         int
	line, col int32
	maxTokens int
	toks      []token
}

// lex splits src into tokens, ending with tEOF. It stops at the first problem.
func lex(src string, maxTokens int) ([]token, *SyntaxError) {
	if !utf8.ValidString(src) {
		bad := 0
		for bad < len(src) {
			r, n := utf8.DecodeRuneInString(src[bad:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			bad += n
		}
		lx := &lexer{src: src[:bad], line: 1, col: 1}
		for lx.i < len(lx.src) {
			lx.advance()
		}
		return nil, &SyntaxError{Kind: ErrSyntax, Pos: lx.pos(), Message: "source is not valid UTF-8"}
	}
	lx := &lexer{src: src, line: 1, col: 1, maxTokens: maxTokens}
	for lx.i < len(src) {
		if err := lx.next(); err != nil {
			return nil, err
		}
	}
	lx.toks = append(lx.toks, token{kind: tEOF, pos: lx.pos()})
	return lx.toks, nil
}

func (lx *lexer) pos() Pos { return Pos{Line: lx.line, Column: lx.col} }

func (lx *lexer) peekAt(k int) byte {
	if lx.i+k < len(lx.src) {
		return lx.src[lx.i+k]
	}
	return 0
}

// advance consumes one character (a whole UTF-8 sequence) and tracks the position.
func (lx *lexer) advance() {
	c := lx.src[lx.i]
	if c < utf8.RuneSelf {
		lx.i++
	} else {
		_, n := utf8.DecodeRuneInString(lx.src[lx.i:])
		lx.i += n
	}
	if c == '\n' {
		lx.line++
		lx.col = 1
	} else {
		lx.col++
	}
}

func (lx *lexer) emit(t token) *SyntaxError {
	if len(lx.toks) >= lx.maxTokens {
		return &SyntaxError{Kind: ErrSyntax, Pos: t.pos, Message: "the source has more than " + strconv.Itoa(lx.maxTokens) + " tokens"}
	}
	lx.toks = append(lx.toks, t)
	return nil
}

func (lx *lexer) single(k tokKind) *SyntaxError {
	p := lx.pos()
	lx.advance()
	return lx.emit(token{kind: k, pos: p})
}

func (lx *lexer) next() *SyntaxError {
	c := lx.src[lx.i]
	switch {
	case c == ' ' || c == '\t' || c == '\f':
		lx.advance()
		return nil
	case c == '\n':
		return lx.single(tNewline)
	case c == '\r':
		return lx.carriageReturn()
	case c == '/' && lx.peekAt(1) == '/':
		for lx.i < len(lx.src) && lx.src[lx.i] != '\n' && lx.src[lx.i] != '\r' {
			lx.advance()
		}
		return nil
	case c == '/' && lx.peekAt(1) == '*':
		return lx.blockComment()
	case isIdentStart(c):
		p := lx.pos()
		start := lx.i
		for lx.i < len(lx.src) && (isIdentStart(lx.src[lx.i]) || isDigit(lx.src[lx.i])) {
			lx.advance()
		}
		return lx.emit(token{kind: tIdent, text: lx.src[start:lx.i], pos: p})
	case isDigit(c):
		return lx.number()
	case c == '"':
		return lx.str()
	case c == '\'':
		return &SyntaxError{Kind: ErrSyntax, Pos: lx.pos(), Message: "single-quoted strings are not part of the supported subset; use double quotes"}
	case c == '{':
		return lx.single(tLBrace)
	case c == '}':
		return lx.single(tRBrace)
	case c == '(':
		return lx.single(tLParen)
	case c == ')':
		return lx.single(tRParen)
	case c == '[':
		return lx.single(tLBracket)
	case c == ']':
		return lx.single(tRBracket)
	case c == ',':
		return lx.single(tComma)
	case c == ';':
		return lx.single(tSemicolon)
	case isOperatorChar(c):
		p := lx.pos()
		start := lx.i
		for lx.i < len(lx.src) && isOperatorChar(lx.src[lx.i]) {
			lx.advance()
		}
		op := lx.src[start:lx.i]
		if !canonicalOperators[op] {
			return &SyntaxError{Kind: ErrSyntax, Pos: p, Message: "operator `" + op + "` is not part of the supported subset"}
		}
		return lx.emit(token{kind: tOp, text: op, pos: p})
	}
	r, _ := utf8.DecodeRuneInString(lx.src[lx.i:])
	return &SyntaxError{Kind: ErrSyntax, Pos: lx.pos(), Message: "character " + strconv.QuoteRune(r) + " is not part of the supported subset"}
}

func (lx *lexer) carriageReturn() *SyntaxError {
	p := lx.pos()
	if lx.peekAt(1) != '\n' {
		return &SyntaxError{Kind: ErrSyntax, Pos: p, Message: "a carriage return must be followed by a newline"}
	}
	lx.advance()
	lx.advance()
	return lx.emit(token{kind: tNewline, pos: p})
}

// blockComment skips a /* … */ comment. Newlines inside it still end statements, and a `*` that
// is not directly followed by `/` swallows the next character, so `**/` does not close the
// comment (the reference tokenizer's behaviour).
func (lx *lexer) blockComment() *SyntaxError {
	p := lx.pos()
	lx.advance()
	lx.advance()
	afterStar := false
	for lx.i < len(lx.src) {
		c := lx.src[lx.i]
		if afterStar {
			afterStar = false
			lx.advance()
			continue
		}
		switch {
		case c == '*' && lx.peekAt(1) == '/':
			lx.advance()
			lx.advance()
			return nil
		case c == '*':
			afterStar = true
			lx.advance()
		case c == '\n':
			if err := lx.single(tNewline); err != nil {
				return err
			}
		case c == '\r':
			if err := lx.carriageReturn(); err != nil {
				return err
			}
		default:
			lx.advance()
		}
	}
	return &SyntaxError{Kind: ErrSyntax, Pos: p, Message: "unterminated block comment"}
}

func (lx *lexer) digits() {
	for lx.i < len(lx.src) && isDigit(lx.src[lx.i]) {
		lx.advance()
	}
}

func (lx *lexer) number() *SyntaxError {
	p := lx.pos()
	start := lx.i
	lx.digits()
	if lx.peekAt(0) == '.' {
		if !isDigit(lx.peekAt(1)) {
			return &SyntaxError{Kind: ErrSyntax, Pos: lx.pos(), Message: "a decimal point in a number must be followed by a digit; write `(5).field` for field access on a number"}
		}
		lx.advance()
		lx.digits()
	}
	if c := lx.peekAt(0); c == 'e' || c == 'E' {
		ep := lx.pos()
		lx.advance()
		if c := lx.peekAt(0); c == '+' || c == '-' {
			lx.advance()
		}
		if !isDigit(lx.peekAt(0)) {
			return &SyntaxError{Kind: ErrSyntax, Pos: ep, Message: "a number's exponent needs at least one digit"}
		}
		lx.digits()
	}
	if c := lx.peekAt(0); isIdentStart(c) {
		return &SyntaxError{Kind: ErrSyntax, Pos: lx.pos(), Message: "numeric literal suffixes are not part of the supported subset"}
	}
	// Out-of-range literals round to an infinity or zero, as the reference's f64 parse does.
	f, _ := strconv.ParseFloat(lx.src[start:lx.i], 64)
	return lx.emit(token{kind: tNumber, num: f, pos: p})
}

func (lx *lexer) str() *SyntaxError {
	p := lx.pos()
	lx.advance()
	var b strings.Builder
	for {
		if lx.i >= len(lx.src) {
			return &SyntaxError{Kind: ErrSyntax, Pos: p, Message: "unterminated string literal"}
		}
		c := lx.src[lx.i]
		switch c {
		case '"':
			lx.advance()
			return lx.emit(token{kind: tString, text: b.String(), pos: p})
		case '\n', '\r':
			return &SyntaxError{Kind: ErrSyntax, Pos: p, Message: "unterminated string literal"}
		case '\\':
			ep := lx.pos()
			lx.advance()
			if lx.i >= len(lx.src) {
				return &SyntaxError{Kind: ErrSyntax, Pos: p, Message: "unterminated string literal"}
			}
			switch e := lx.src[lx.i]; e {
			case '"', '\\':
				b.WriteByte(e)
				lx.advance()
			case 'n':
				b.WriteByte('\n')
				lx.advance()
			case 'r':
				b.WriteByte('\r')
				lx.advance()
			case 't':
				b.WriteByte('\t')
				lx.advance()
			case 'u':
				lx.advance()
				r, err := lx.unicodeEscape(ep)
				if err != nil {
					return err
				}
				b.WriteRune(r)
			default:
				return &SyntaxError{Kind: ErrSyntax, Pos: ep, Message: "string escape `\\" + lx.escapeText() + "` is not part of the supported subset"}
			}
		default:
			start := lx.i
			lx.advance()
			b.WriteString(lx.src[start:lx.i])
		}
	}
}

func (lx *lexer) escapeText() string {
	r, _ := utf8.DecodeRuneInString(lx.src[lx.i:])
	return string(r)
}

// unicodeEscape reads the part after `\u`: four hex digits, or one to six in braces.
func (lx *lexer) unicodeEscape(ep Pos) (rune, *SyntaxError) {
	bad := &SyntaxError{Kind: ErrSyntax, Pos: ep, Message: "a unicode escape needs four hexadecimal digits or `\\u{…}` with one to six"}
	var v int64
	if lx.peekAt(0) == '{' {
		lx.advance()
		n := 0
		for isHex(lx.peekAt(0)) {
			if n < 7 {
				d, _ := strconv.ParseInt(lx.src[lx.i:lx.i+1], 16, 64)
				v = v*16 + d
			}
			n++
			lx.advance()
		}
		if n < 1 || n > 6 || lx.peekAt(0) != '}' {
			return 0, bad
		}
		lx.advance()
	} else {
		for range 4 {
			if !isHex(lx.peekAt(0)) {
				return 0, bad
			}
			d, _ := strconv.ParseInt(lx.src[lx.i:lx.i+1], 16, 64)
			v = v*16 + d
			lx.advance()
		}
	}
	if v > utf8.MaxRune || v >= 0xD800 && v <= 0xDFFF {
		return 0, &SyntaxError{Kind: ErrSyntax, Pos: ep, Message: "a unicode escape must name a Unicode scalar value (no surrogates, at most U+10FFFF)"}
	}
	return rune(v), nil
}
