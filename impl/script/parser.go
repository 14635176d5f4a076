package script

import (
	"strconv"
	"strings"
)

// reservedWords cannot be identifiers. The list is the reference grammar's keywords plus the
// compatibility words it rejects.
var reservedWords = map[string]bool{
	"if": true, "elif": true, "else": true, "for": true, "in": true, "loop": true, "while": true,
	"fn": true, "let": true, "return": true, "break": true, "continue": true, "use": true,
	"true": true, "false": true, "nil": true, "var": true, "match": true, "try": true, "ok": true,
	"do": true, "and": true, "or": true, "is": true, "mut": true, "me": true, "scope": true,
}

// unsupportedWords name the constructs outside the supported subset that a reserved word
// starts.
var unsupportedWords = map[string]string{
	"while":    "`while` loops are not part of the supported subset",
	"for":      "`for` loops are not part of the supported subset",
	"loop":     "`loop` blocks are not part of the supported subset",
	"break":    "`break` is not part of the supported subset",
	"continue": "`continue` is not part of the supported subset",
	"var":      "`var` declarations are not part of the supported subset; use `let`",
	"match":    "`match` expressions are not part of the supported subset",
	"ok":       "the `ok` branch of the legacy `try` form is not part of the supported subset",
	"and":      "`and` is not part of the supported subset; use `&&`",
	"or":       "`or` is not part of the supported subset; use `||`",
}

// modules maps the supported `use` paths to what they bind.
var modules = map[string]builtinKind{
	"mod.tool":       builtinToolModule,
	"mod.std.assert": builtinAssert,
}

type parser struct {
	toks       []token
	i          int
	depth      int
	maxNesting int
	fnDepth    int
}

// parse turns source into a program, rejecting anything outside the supported subset.
func parse(src string, limits Limits) ([]stmt, *SyntaxError) {
	toks, err := lex(src, limits.MaxSyntaxTokens)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, maxNesting: limits.MaxNesting}
	return p.program()
}

func (p *parser) cur() token { return p.toks[p.i] }

func (p *parser) advance() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) at(k tokKind) bool { return p.cur().kind == k }

func (p *parser) atOp(op string) bool {
	t := p.cur()
	return t.kind == tOp && t.text == op
}

func (p *parser) atWord(w string) bool {
	t := p.cur()
	return t.kind == tIdent && t.text == w
}

func (p *parser) errAt(t token, msg string) *SyntaxError {
	return &SyntaxError{Kind: ErrSyntax, Pos: t.pos, Message: msg}
}

func (p *parser) expected(what string) *SyntaxError {
	t := p.cur()
	return p.errAt(t, "expected "+what+", found "+t.describe())
}

func (p *parser) enter() *SyntaxError {
	p.depth++
	if p.depth > p.maxNesting {
		return p.errAt(p.cur(), "expressions and blocks nest deeper than the maximum of "+strconv.Itoa(p.maxNesting))
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

func (p *parser) atStatementEnd() bool {
	switch p.cur().kind {
	case tNewline, tSemicolon, tEOF:
		return true
	}
	return false
}

func (p *parser) skipStatementEnds() {
	for p.at(tNewline) || p.at(tSemicolon) {
		p.advance()
	}
}

func (p *parser) skipNewlines() {
	for p.at(tNewline) {
		p.advance()
	}
}

// requireStatementEnd accepts a newline or `;` (several are fine) after a statement; at the top
// level the end of the source also ends a statement.
func (p *parser) requireStatementEnd(topLevel bool) *SyntaxError {
	if p.at(tNewline) || p.at(tSemicolon) {
		p.skipStatementEnds()
		return nil
	}
	if topLevel && p.at(tEOF) {
		return nil
	}
	return p.expected("a newline or `;` after the statement")
}

func (p *parser) program() ([]stmt, *SyntaxError) {
	var out []stmt
	p.skipStatementEnds()
	for !p.at(tEOF) {
		if p.at(tRBrace) {
			return nil, p.errAt(p.cur(), "unexpected `}` at the top level")
		}
		s, err := p.statement()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
		if err := p.requireStatementEnd(true); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// block parses `{ statement END … }`.
func (p *parser) block() (*blockBody, *SyntaxError) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	if !p.at(tLBrace) {
		return nil, p.expected("`{` to start a block")
	}
	p.advance()
	p.skipStatementEnds()
	b := &blockBody{}
	for !p.at(tRBrace) {
		if p.at(tEOF) {
			return nil, p.expected("`}` to close the block")
		}
		s, err := p.statement()
		if err != nil {
			return nil, err
		}
		b.stmts = append(b.stmts, s)
		if err := p.requireStatementEnd(false); err != nil {
			return nil, err
		}
	}
	p.advance()
	return b, nil
}

func (p *parser) statement() (stmt, *SyntaxError) {
	t := p.cur()
	if t.kind == tIdent {
		switch t.text {
		case "use":
			return p.useStatement()
		case "let":
			return p.letStatement()
		case "fn":
			return p.fnStatement()
		case "return":
			p.advance()
			if p.fnDepth == 0 {
				return nil, p.errAt(t, "`return` outside a function is not part of the supported subset")
			}
			s := &returnStmt{pos: t.pos}
			if !p.atStatementEnd() && !p.at(tRBrace) {
				x, err := p.expression()
				if err != nil {
					return nil, err
				}
				s.value = x
			}
			return s, nil
		case "break", "continue":
			return nil, p.errAt(t, unsupportedWords[t.text])
		}
	}
	x, err := p.expression()
	if err != nil {
		return nil, err
	}
	return &exprStmt{x: x}, nil
}

func (p *parser) plainIdent(what string) (token, *SyntaxError) {
	t := p.cur()
	if t.kind != tIdent {
		return t, p.expected(what)
	}
	if reservedWords[t.text] {
		return t, p.errAt(t, "expected "+what+", found the reserved word `"+t.text+"`")
	}
	p.advance()
	return t, nil
}

func (p *parser) useStatement() (stmt, *SyntaxError) {
	start := p.advance()
	if !p.atWord("mod") {
		return nil, p.expected("`mod` after `use`")
	}
	p.advance()
	path := []string{"mod"}
	if !p.atOp(".") {
		return nil, p.expected("`.` after `use mod`")
	}
	for p.atOp(".") {
		p.advance()
		seg, err := p.plainIdent("a module name after `.`")
		if err != nil {
			return nil, err
		}
		path = append(path, seg.text)
	}
	full := strings.Join(path, ".")
	kind, ok := modules[full]
	if !ok {
		return nil, p.errAt(start, "module `"+full+"` is not part of the supported subset (only `mod.tool` and `mod.std.assert` are)")
	}
	return &useStmt{pos: start.pos, name: path[len(path)-1], module: kind}, nil
}

func (p *parser) letStatement() (stmt, *SyntaxError) {
	start := p.advance()
	name, err := p.plainIdent("a name after `let`")
	if err != nil {
		return nil, err
	}
	s := &letStmt{pos: start.pos, name: name.text}
	if p.atOp("=") {
		p.advance()
		x, err := p.expression()
		if err != nil {
			return nil, err
		}
		s.value = x
		return s, nil
	}
	if !p.atStatementEnd() && !p.at(tRBrace) {
		return nil, p.expected("`=` or the end of the `let` statement")
	}
	return s, nil
}

func (p *parser) fnStatement() (stmt, *SyntaxError) {
	start := p.advance()
	name, err := p.plainIdent("a function name after `fn`")
	if err != nil {
		return nil, err
	}
	if !p.at(tLParen) {
		return nil, p.expected("`(` after the function name")
	}
	p.advance()
	var params []string
	if p.at(tRParen) {
		p.advance()
	} else {
		for {
			param, err := p.plainIdent("a parameter name")
			if err != nil {
				return nil, err
			}
			for _, prev := range params {
				if prev == param.text {
					return nil, p.errAt(param, "parameter `"+param.text+"` is declared twice")
				}
			}
			params = append(params, param.text)
			if p.at(tComma) {
				p.advance()
				if p.at(tRParen) {
					return nil, p.errAt(p.cur(), "trailing commas are not part of the supported subset")
				}
				continue
			}
			if !p.at(tRParen) {
				return nil, p.expected("`,` or `)` after a parameter")
			}
			p.advance()
			break
		}
	}
	p.fnDepth++
	body, err := p.block()
	p.fnDepth--
	if err != nil {
		return nil, err
	}
	return &fnStmt{pos: start.pos, name: name.text, params: params, body: body}, nil
}

// expression parses a control expression (if, try) or an assignment-level expression.
func (p *parser) expression() (expr, *SyntaxError) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	t := p.cur()
	if t.kind == tIdent {
		switch t.text {
		case "if":
			return p.ifExpression()
		case "try":
			return p.tryExpression()
		case "for", "loop", "while":
			return nil, p.errAt(t, unsupportedWords[t.text])
		}
	}
	return p.assignment()
}

// condition parses an if/elif condition: an assignment-level expression that does not start
// with a control keyword or a lambda.
func (p *parser) condition(context string) (expr, *SyntaxError) {
	t := p.cur()
	if p.atStatementEnd() || p.at(tRBrace) {
		return nil, p.expected("a condition after `" + context + "`")
	}
	if t.kind == tIdent {
		switch t.text {
		case "if", "try":
			return nil, p.errAt(t, "a control expression used as an `"+context+"` condition must be parenthesized")
		case "for", "loop", "while":
			return nil, p.errAt(t, unsupportedWords[t.text])
		}
	}
	return p.assignment()
}

// branch parses an if branch: a block or an expression.
func (p *parser) branch() (branch, *SyntaxError) {
	if p.at(tLBrace) {
		b, err := p.block()
		return branch{block: b}, err
	}
	if p.atStatementEnd() || p.at(tRBrace) {
		return branch{}, p.expected("an expression or a block")
	}
	x, err := p.expression()
	return branch{x: x}, err
}

func (p *parser) ifExpression() (expr, *SyntaxError) {
	start := p.advance()
	n := &ifExpr{pos: start.pos}
	cond, err := p.condition("if")
	if err != nil {
		return nil, err
	}
	body, err := p.branch()
	if err != nil {
		return nil, err
	}
	n.conds = append(n.conds, cond)
	n.bodies = append(n.bodies, body)
	for p.atWord("elif") {
		p.advance()
		cond, err := p.condition("elif")
		if err != nil {
			return nil, err
		}
		body, err := p.branch()
		if err != nil {
			return nil, err
		}
		n.conds = append(n.conds, cond)
		n.bodies = append(n.bodies, body)
	}
	if p.atWord("else") {
		p.advance()
		b, err := p.branch()
		if err != nil {
			return nil, err
		}
		n.orElse = &b
	}
	return n, nil
}

func (p *parser) tryExpression() (expr, *SyntaxError) {
	start := p.advance()
	n := &tryExpr{pos: start.pos}
	if p.atWord("catch") || p.atStatementEnd() || p.at(tRBrace) || p.at(tComma) || p.at(tRParen) || p.at(tRBracket) {
		return nil, p.expected("an expression or a block after `try`")
	}
	protected, err := p.tryBranch("protected")
	if err != nil {
		return nil, err
	}
	n.protected = protected
	if !p.atWord("catch") {
		return nil, p.expected("`catch` after the protected branch of `try`")
	}
	p.advance()
	if p.atStatementEnd() || p.at(tRBrace) || p.at(tComma) || p.at(tRParen) || p.at(tRBracket) {
		return nil, p.expected("an expression or a block after `catch`")
	}
	fallback, err := p.tryBranch("fallback")
	if err != nil {
		return nil, err
	}
	n.fallback = fallback
	return n, nil
}

// tryBranch parses a try or catch branch: a `{` always starts a value block, which must end
// with an expression statement.
func (p *parser) tryBranch(which string) (branch, *SyntaxError) {
	if !p.at(tLBrace) {
		x, err := p.expression()
		return branch{x: x}, err
	}
	open := p.cur()
	b, err := p.block()
	if err != nil {
		return branch{}, err
	}
	if len(b.stmts) == 0 {
		return branch{}, p.errAt(open, "the "+which+" block of `try` must end with an expression; write `nil` for no value")
	}
	if _, ok := b.stmts[len(b.stmts)-1].(*exprStmt); !ok {
		return branch{}, p.errAt(open, "the "+which+" block of `try` must end with an expression; write `nil` for no value")
	}
	return branch{block: b}, nil
}

var assignOps = map[string]bool{"=": true, "+=": true, "-=": true, "*=": true, "/=": true, "%=": true}

func (p *parser) assignment() (expr, *SyntaxError) {
	x, err := p.binary(0)
	if err != nil {
		return nil, err
	}
	t := p.cur()
	if t.kind != tOp || !assignOps[t.text] {
		return x, nil
	}
	target, ok := x.(*ident)
	if !ok {
		switch x.(type) {
		case *fieldExpr, *indexExpr:
			return nil, p.errAt(t, "assignment to a field or an index is not part of the supported subset")
		}
		return nil, p.errAt(t, "the left side of `"+t.text+"` must be a name")
	}
	p.advance()
	value, err := p.binary(0)
	if err != nil {
		return nil, err
	}
	if next := p.cur(); next.kind == tOp && assignOps[next.text] {
		return nil, p.errAt(next, "chained assignment is not part of the supported subset")
	}
	return &assignExpr{pos: t.pos, name: target.name, op: t.text, value: value}, nil
}

// binaryLevels lists the binary operators from the loosest to the tightest binding.
var binaryLevels = [][]string{
	{"||"},
	{"&&"},
	{"==", "!="},
	{"<", "<=", ">", ">="},
	{"+", "-"},
	{"*", "/", "%"},
}

func (p *parser) binaryOpAt(level int) (token, bool) {
	t := p.cur()
	if t.kind != tOp {
		return t, false
	}
	for _, op := range binaryLevels[level] {
		if t.text == op {
			return t, true
		}
	}
	return t, false
}

// binary parses the left-associative operators from level on.
func (p *parser) binary(level int) (expr, *SyntaxError) {
	if level == len(binaryLevels) {
		return p.unary()
	}
	x, err := p.binary(level + 1)
	if err != nil {
		return nil, err
	}
	for {
		op, ok := p.binaryOpAt(level)
		if !ok {
			return x, nil
		}
		p.advance()
		y, err := p.binary(level + 1)
		if err != nil {
			return nil, err
		}
		switch op.text {
		case "&&":
			x = &logicalExpr{pos: op.pos, and: true, x: x, y: y}
		case "||":
			x = &logicalExpr{pos: op.pos, x: x, y: y}
		default:
			x = &binaryExpr{pos: op.pos, op: op.text, x: x, y: y}
		}
	}
}

func (p *parser) unary() (expr, *SyntaxError) {
	t := p.cur()
	if t.kind == tOp {
		switch t.text {
		case "!", "-", "+":
			p.advance()
			x, err := p.postfix()
			if err != nil {
				return nil, err
			}
			return &unaryExpr{pos: t.pos, op: t.text, x: x}, nil
		case "~":
			return nil, p.errAt(t, "the bitwise `~` operator is not part of the supported subset")
		}
	}
	return p.postfix()
}

func (p *parser) postfix() (expr, *SyntaxError) {
	x, err := p.primary()
	if err != nil {
		return nil, err
	}
	for {
		switch {
		case p.at(tLParen):
			args, err := p.arguments()
			if err != nil {
				return nil, err
			}
			x = &callExpr{pos: x.exprPos(), callee: x, args: args}
		case p.atOp("."):
			p.advance()
			name, err := p.plainIdent("a name after `.`")
			if err != nil {
				return nil, err
			}
			if p.at(tLParen) {
				args, err := p.arguments()
				if err != nil {
					return nil, err
				}
				x = &methodExpr{pos: name.pos, recv: x, name: name.text, args: args}
			} else {
				x = &fieldExpr{pos: name.pos, recv: x, name: name.text}
			}
		case p.at(tLBracket):
			open := p.advance()
			if p.at(tRBracket) {
				return nil, p.errAt(p.cur(), "expected an index expression between `[` and `]`")
			}
			idx, err := p.expression()
			if err != nil {
				return nil, err
			}
			if !p.at(tRBracket) {
				return nil, p.expected("`]` after the index expression")
			}
			p.advance()
			x = &indexExpr{pos: open.pos, recv: x, idx: idx}
		default:
			return x, nil
		}
	}
}

// arguments parses `( [expr {, expr}] )`.
func (p *parser) arguments() ([]expr, *SyntaxError) {
	p.advance()
	var args []expr
	if p.at(tRParen) {
		p.advance()
		return args, nil
	}
	for {
		a, err := p.expression()
		if err != nil {
			return nil, err
		}
		args = append(args, a)
		if p.at(tComma) {
			p.advance()
			if p.at(tRParen) {
				return nil, p.errAt(p.cur(), "trailing commas are not part of the supported subset")
			}
			continue
		}
		if !p.at(tRParen) {
			return nil, p.expected("`,` or `)` after an argument")
		}
		p.advance()
		return args, nil
	}
}

func (p *parser) primary() (expr, *SyntaxError) {
	t := p.cur()
	switch t.kind {
	case tNumber:
		p.advance()
		return &numberLit{pos: t.pos, val: t.num}, nil
	case tString:
		p.advance()
		return &stringLit{pos: t.pos, val: t.text}, nil
	case tIdent:
		switch t.text {
		case "true", "false":
			p.advance()
			return &boolLit{pos: t.pos, val: t.text == "true"}, nil
		case "nil":
			p.advance()
			return &nilLit{pos: t.pos}, nil
		}
		if reservedWords[t.text] {
			if msg, ok := unsupportedWords[t.text]; ok {
				return nil, p.errAt(t, msg)
			}
			switch t.text {
			case "if", "try":
				return nil, p.errAt(t, "`"+t.text+"` cannot be an operand here; wrap it in parentheses")
			case "do", "is", "mut", "me", "scope":
				return nil, p.errAt(t, "`"+t.text+"` is a reserved word and is not part of the supported subset")
			}
			return nil, p.errAt(t, "the reserved word `"+t.text+"` cannot be used as an expression here")
		}
		p.advance()
		return &ident{pos: t.pos, name: t.text}, nil
	case tLBracket:
		return p.arrayLiteral()
	case tLBrace:
		return p.recordLiteral()
	case tLParen:
		p.advance()
		x, err := p.expression()
		if err != nil {
			return nil, err
		}
		if !p.at(tRParen) {
			return nil, p.expected("`)` after the parenthesized expression")
		}
		p.advance()
		return x, nil
	case tOp:
		if t.text == "|" || t.text == "||" {
			return nil, p.errAt(t, "lambdas (`|x| …`) are not part of the supported subset; declare a `fn`")
		}
	}
	return nil, p.expected("an expression")
}

func (p *parser) arrayLiteral() (expr, *SyntaxError) {
	open := p.advance()
	n := &arrayLit{pos: open.pos}
	if p.at(tRBracket) {
		p.advance()
		return n, nil
	}
	for {
		x, err := p.expression()
		if err != nil {
			return nil, err
		}
		n.elems = append(n.elems, x)
		if p.at(tComma) {
			p.advance()
			if p.at(tRBracket) {
				return nil, p.errAt(p.cur(), "trailing commas are not part of the supported subset")
			}
			continue
		}
		if !p.at(tRBracket) {
			return nil, p.expected("`,` or `]` after an array element")
		}
		p.advance()
		return n, nil
	}
}

// recordLiteral parses `{ name: expr, … }`; members are separated by commas or newlines, and
// newlines may also follow `{` and precede `}`.
func (p *parser) recordLiteral() (expr, *SyntaxError) {
	open := p.advance()
	n := &recordLit{pos: open.pos}
	p.skipNewlines()
	if p.at(tRBrace) {
		p.advance()
		return n, nil
	}
	for {
		name, err := p.plainIdent("a record field name")
		if err != nil {
			return nil, err
		}
		for _, prev := range n.names {
			if prev == name.text {
				return nil, p.errAt(name, "record field `"+name.text+"` is given twice")
			}
		}
		if !p.atOp(":") {
			return nil, p.expected("`:` after the record field name")
		}
		p.advance()
		x, err := p.expression()
		if err != nil {
			return nil, err
		}
		n.names = append(n.names, name.text)
		n.values = append(n.values, x)
		switch {
		case p.at(tComma):
			p.advance()
			p.skipNewlines()
			if p.at(tRBrace) {
				return nil, p.errAt(p.cur(), "trailing commas are not part of the supported subset")
			}
		case p.at(tNewline):
			p.skipNewlines()
			if p.at(tRBrace) {
				p.advance()
				return n, nil
			}
		case p.at(tRBrace):
			p.advance()
			return n, nil
		default:
			return nil, p.expected("`,`, a newline or `}` after a record field")
		}
	}
}
