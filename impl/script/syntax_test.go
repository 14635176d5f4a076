package script

import (
	"errors"
	"strings"
	"testing"
)

func checkDefault(src string) error { return Check(src, DefaultLimits()) }

// Spec: SCR-004, SCR-027, SCR-010, SCR-011, SCR-012, SCR-013, SCR-014, SCR-020, SCR-021, SCR-022, SCR-023, SCR-024, SCR-025, SCR-026, SCR-002, SCR-003
func TestSyntaxRejections(t *testing.T) {
	tests := []struct {
		name string
		src  string
		pos  Pos
		msg  string // exact message
	}{
		// Constructs outside the subset are named.
		{"while", "let x = 1\nwhile x {\n}", Pos{2, 1}, "`while` loops are not part of the supported subset"},
		{"for", "for x in [1] {\n}", Pos{1, 1}, "`for` loops are not part of the supported subset"},
		{"loop", "loop {\n}", Pos{1, 1}, "`loop` blocks are not part of the supported subset"},
		{"break", "fn f() {\nbreak\n}", Pos{2, 1}, "`break` is not part of the supported subset"},
		{"continue", "continue", Pos{1, 1}, "`continue` is not part of the supported subset"},
		{"loop as operand", "1 + while", Pos{1, 5}, "`while` loops are not part of the supported subset"},
		{"lambda", "let f = |x| x", Pos{1, 9}, "lambdas (`|x| …`) are not part of the supported subset; declare a `fn`"},
		{"empty lambda", "let f = || 1", Pos{1, 9}, "lambdas (`|x| …`) are not part of the supported subset; declare a `fn`"},
		{"bitwise not", "~1", Pos{1, 1}, "the bitwise `~` operator is not part of the supported subset"},
		{"var", "var x = 1", Pos{1, 1}, "`var` declarations are not part of the supported subset; use `let`"},
		{"match", "match x {\n}", Pos{1, 1}, "`match` expressions are not part of the supported subset"},
		{"ok", "ok", Pos{1, 1}, "the `ok` branch of the legacy `try` form is not part of the supported subset"},
		{"and", "true and false", Pos{1, 6}, "expected a newline or `;` after the statement, found `and`"},
		{"and alone", "and", Pos{1, 1}, "`and` is not part of the supported subset; use `&&`"},
		{"or alone", "let x = or", Pos{1, 9}, "`or` is not part of the supported subset; use `||`"},
		{"reserved me", "me", Pos{1, 1}, "`me` is a reserved word and is not part of the supported subset"},
		{"field assignment", "let r = {a: 1}\nr.a = 2", Pos{2, 5}, "assignment to a field or an index is not part of the supported subset"},
		{"index assignment", "let r = [1]\nr[0] += 2", Pos{2, 6}, "assignment to a field or an index is not part of the supported subset"},
		{"chained assignment", "let a = 1\nlet b = 2\na = b = 3", Pos{3, 7}, "chained assignment is not part of the supported subset"},
		{"literal assignment", "1 = 2", Pos{1, 3}, "the left side of `=` must be a name"},
		{"other module", "use mod.std.json", Pos{1, 1}, "module `mod.std.json` is not part of the supported subset (only `mod.tool` and `mod.std.assert` are)"},
		{"module prefix", "use mod.std", Pos{1, 1}, "module `mod.std` is not part of the supported subset (only `mod.tool` and `mod.std.assert` are)"},
		{"use without mod", "use tool", Pos{1, 5}, "expected `mod` after `use`, found `tool`"},
		{"top-level return", "return 1", Pos{1, 1}, "`return` outside a function is not part of the supported subset"},
		{"range operator", "let r = a..b", Pos{1, 10}, "operator `..` is not part of the supported subset"},
		{"operator run", "let x=-1", Pos{1, 6}, "operator `=-` is not part of the supported subset"},
		{"power", "2 ** 3", Pos{1, 3}, "operator `**` is not part of the supported subset"},
		{"ampersand", "1 & 2", Pos{1, 3}, "operator `&` is not part of the supported subset"},
		{"double not", "!!true", Pos{1, 1}, "operator `!!` is not part of the supported subset"},
		{"two prefix operators", "- -1", Pos{1, 3}, "expected an expression, found `-`"},
		{"hash", "# comment", Pos{1, 1}, "character '#' is not part of the supported subset"},
		{"non-ASCII identifier", "let é = 1", Pos{1, 5}, "character 'é' is not part of the supported subset"},

		// Lexical rules.
		{"single quotes", "'a'", Pos{1, 1}, "single-quoted strings are not part of the supported subset; use double quotes"},
		{"unterminated string", "\"abc", Pos{1, 1}, "unterminated string literal"},
		{"newline in string", "\"ab\ncd\"", Pos{1, 1}, "unterminated string literal"},
		{"unknown escape", `"a\qb"`, Pos{1, 3}, "string escape `\\q` is not part of the supported subset"},
		{"slash escape", `"a\/b"`, Pos{1, 3}, "string escape `\\/` is not part of the supported subset"},
		{"short unicode escape", `"\u12"`, Pos{1, 2}, "a unicode escape needs four hexadecimal digits or `\\u{…}` with one to six"},
		{"empty braced escape", `"\u{}"`, Pos{1, 2}, "a unicode escape needs four hexadecimal digits or `\\u{…}` with one to six"},
		{"seven digit escape", `"\u{1000000}"`, Pos{1, 2}, "a unicode escape needs four hexadecimal digits or `\\u{…}` with one to six"},
		{"surrogate escape", `"\uD800"`, Pos{1, 2}, "a unicode escape must name a Unicode scalar value (no surrogates, at most U+10FFFF)"},
		{"too large escape", `"\u{110000}"`, Pos{1, 2}, "a unicode escape must name a Unicode scalar value (no surrogates, at most U+10FFFF)"},
		{"trailing decimal point", "1.", Pos{1, 2}, "a decimal point in a number must be followed by a digit; write `(5).field` for field access on a number"},
		{"number field access", "5.to_json()", Pos{1, 2}, "a decimal point in a number must be followed by a digit; write `(5).field` for field access on a number"},
		{"empty exponent", "1e+", Pos{1, 2}, "a number's exponent needs at least one digit"},
		{"suffix", "10px", Pos{1, 3}, "numeric literal suffixes are not part of the supported subset"},
		{"hex", "0x10", Pos{1, 2}, "numeric literal suffixes are not part of the supported subset"},
		{"unterminated block comment", "1 /* open", Pos{1, 3}, "unterminated block comment"},
		{"overlapping comment end", "1 /* a **/ 2", Pos{1, 3}, "unterminated block comment"},
		{"bare carriage return", "1\r2", Pos{1, 2}, "a carriage return must be followed by a newline"},
		{"invalid UTF-8", "let a = 1\nlet b = \xff", Pos{2, 9}, "source is not valid UTF-8"},
		{"reserved name", "let if = 1", Pos{1, 5}, "expected a name after `let`, found the reserved word `if`"},
		{"reserved field", "let r = {a: 1}\nr.nil", Pos{2, 3}, "expected a name after `.`, found the reserved word `nil`"},

		// Statements and blocks.
		{"missing statement end", "1 2", Pos{1, 3}, "expected a newline or `;` after the statement, found a number"},
		{"block statement needs end", "fn f() {\nreturn 1 }", Pos{2, 10}, "expected a newline or `;` after the statement, found `}`"},
		{"one-line if block", "if true { 1 } else { 2 }", Pos{1, 13}, "expected a newline or `;` after the statement, found `}`"},
		{"top-level close brace", "1\n}", Pos{2, 1}, "unexpected `}` at the top level"},
		{"unclosed block", "fn f() {\n1\n", Pos{3, 1}, "expected `}` to close the block, found the end of the source"},
		{"let without value", "let x 1", Pos{1, 7}, "expected `=` or the end of the `let` statement, found a number"},
		{"fn without parens", "fn f {\n}", Pos{1, 6}, "expected `(` after the function name, found `{`"},
		{"duplicate parameter", "fn f(a, a) {\n}", Pos{1, 9}, "parameter `a` is declared twice"},
		{"trailing parameter comma", "fn f(a,) {\n}", Pos{1, 8}, "trailing commas are not part of the supported subset"},
		{"else on next line", "if true {\n1\n}\nelse {\n2\n}", Pos{4, 1}, "the reserved word `else` cannot be used as an expression here"},
		{"if with a record condition and no branch", "if {\n}", Pos{2, 2}, "expected an expression or a block, found the end of the source"},
		{"if without condition", "if\n1", Pos{1, 3}, "expected a condition after `if`, found a newline"},
		{"unparenthesized control condition", "if if true 1 else 2 {\n}", Pos{1, 4}, "a control expression used as an `if` condition must be parenthesized"},
		{"try condition", "if true 1 elif try 1 catch 2 {\n}", Pos{1, 16}, "a control expression used as an `elif` condition must be parenthesized"},
		{"if as operand", "1 + if true 1 else 2", Pos{1, 5}, "`if` cannot be an operand here; wrap it in parentheses"},

		// try/catch.
		{"try without branch", "try catch 1", Pos{1, 5}, "expected an expression or a block after `try`, found `catch`"},
		{"try without catch", "try 1", Pos{1, 6}, "expected `catch` after the protected branch of `try`, found the end of the source"},
		{"catch without branch", "try 1 catch", Pos{1, 12}, "expected an expression or a block after `catch`, found the end of the source"},
		{"empty try block", "try {\n} catch 1", Pos{1, 5}, "the protected block of `try` must end with an expression; write `nil` for no value"},
		{"try block ending with let", "try {\nlet x = 1\n} catch 1", Pos{1, 5}, "the protected block of `try` must end with an expression; write `nil` for no value"},
		{"catch block ending with fn", "try 1 catch {\nfn f() {\n}\n}", Pos{1, 13}, "the fallback block of `try` must end with an expression; write `nil` for no value"},

		// Literals and calls.
		{"trailing array comma", "[1, 2,]", Pos{1, 7}, "trailing commas are not part of the supported subset"},
		{"trailing call comma", "f(1,)", Pos{1, 5}, "trailing commas are not part of the supported subset"},
		{"trailing record comma", "{a: 1,\n}", Pos{2, 1}, "trailing commas are not part of the supported subset"},
		{"newline in array", "[1,\n2]", Pos{1, 4}, "expected an expression, found a newline"},
		{"newline in call", "f(1\n)", Pos{1, 4}, "expected `,` or `)` after an argument, found a newline"},
		{"duplicate record field", "{a: 1, a: 2}", Pos{1, 8}, "record field `a` is given twice"},
		{"record string key", `{"a": 1}`, Pos{1, 2}, "expected a record field name, found a string"},
		{"record space separator", "{a: 1 b: 2}", Pos{1, 7}, "expected `,`, a newline or `}` after a record field, found `b`"},
		{"empty index", "let a = [1]\na[]", Pos{2, 3}, "expected an index expression between `[` and `]`"},
		{"unclosed paren", "(1 + 2", Pos{1, 7}, "expected `)` after the parenthesized expression, found the end of the source"},
		{"missing operand", "1 +", Pos{1, 4}, "expected an expression, found the end of the source"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkDefault(tc.src)
			var se *SyntaxError
			if !errors.As(err, &se) || !errors.Is(err, ErrSyntax) {
				t.Fatalf("Check(%q) = %v, want a syntax error", tc.src, err)
			}
			if se.Pos != tc.pos || se.Message != tc.msg {
				t.Fatalf("Check(%q) = %v:%q\nwant %v:%q", tc.src, se.Pos, se.Message, tc.pos, tc.msg)
			}
		})
	}
}

// Spec: SCR-004, SCR-100
func TestSyntaxErrorRunsNothing(t *testing.T) {
	h := newFakeHost(t)
	h.addPump("echo", false, echo)
	m := h.newMachine(Limits{})
	_, err := m.Eval("use mod.tool\ntool.call(\"echo\", \"x\")\nwhile true {\n}")
	want := "syntax rejected: line 3, column 1: `while` loops are not part of the supported subset"
	if err == nil || err.Error() != want {
		t.Fatalf("Eval error %v, want %s", err, want)
	}
	if len(h.log) != 0 {
		t.Fatalf("host was called for rejected source: %v", h.ops())
	}
}

// Spec: SCR-020, SCR-021, SCR-022, SCR-024, SCR-025, SCR-026, SCR-010, SCR-012, SCR-013, SCR-002
func TestSyntaxAccepted(t *testing.T) {
	for _, src := range []string{
		"",
		"\n\n;;\n",
		"1; 2; 3",
		"1\r\n2\r\n",
		"use mod.tool\nuse mod.std.assert",
		"let x\nlet y = x",
		"fn f() {\n}\nfn g(a, b, c) {\nreturn\n}",
		"fn f(a) {\nreturn a; }",
		"if true 1 elif false 2 else 3",
		"if (if true 1 else 2) {\n}",
		"let x = if true {\n1\n} elif false {\n2\n} else {\n3\n}",
		"try 1 catch 2",
		"try {\n1\n} catch {\n2\n}",
		"try ({a: 1}) catch ({a: 2})",
		"let catch = 2\ntry (catch) catch catch + 1",
		"{\n}",
		"{a: 1, b: 2}",
		"{\n  a: 1\n  b: 2,\n  c: 3\n\n}",
		"[1, [2, [3]], {a: [4]}]",
		"let a = [1]\na[0]",
		"let x = 1\nx = 2\nx += 1\nx -= 1\nx *= 2\nx /= 2\nx %= 2",
		"-1 + +2 * !false",
		"1 < 2 && 2 <= 3 || 3 > 4 && 4 >= 5 == true != false",
		"\"\\\" \\\\ \\n \\r \\t \\u00e9 \\u{1F600} \\u{0}\"",
		"// comment\n1 // trailing\n/* block\ncomment */ 2",
		"1 /* a *\n/ still comment */",
		"1e10 + 1.5e-3 + 2E+2 + 007",
		"(5).to_json()",
		"5 .to_json()",
	} {
		if err := checkDefault(src); err != nil {
			t.Errorf("Check(%q) = %v, want accepted", src, err)
		}
	}
}

// A newline inside a block comment still ends a statement, and `**/` needs a later `*/`.
//
// Spec: SCR-013
func TestBlockCommentNewlinesEndStatements(t *testing.T) {
	h := newFakeHost(t)
	m := h.newMachine(Limits{})
	ev, err := m.Eval("1 /* one\n */ 2")
	if err != nil || ev.Value.NumberValue() != 2 {
		t.Fatalf("eval: %+v %v", ev, err)
	}
	ev, err = m.Eval("1 /* a **/ still */ + 4")
	if err != nil || ev.Value.NumberValue() != 5 {
		t.Fatalf("eval: %+v %v", ev, err)
	}
}

// Spec: SCR-003
func TestPositionsCountCharacters(t *testing.T) {
	// "é" is two bytes but one column; a tab is one column.
	err := checkDefault("let s = \"é\"\t~1")
	var se *SyntaxError
	if !errors.As(err, &se) || se.Pos != (Pos{1, 13}) {
		t.Fatalf("got %v, want position 1:13", err)
	}
	h := newFakeHost(t)
	m := h.newMachine(Limits{})
	ev, _ := m.Eval("use mod.std.assert\n\t\"ü\" == \"ü\" && assert(1)")
	if len(ev.Diagnostics) != 1 || ev.Diagnostics[0].Pos != (Pos{2, 16}) {
		t.Fatalf("diagnostics %v, want one at 2:16", ev.Diagnostics)
	}
}

// Spec: SCR-001, SCR-005
func TestSourceAdmissionBounds(t *testing.T) {
	h := newFakeHost(t)
	limits := DefaultLimits()
	limits.MaxSourceBytes = 10
	m := h.newMachine(limits)
	_, err := m.Eval("1 + 2 + 3 + 4")
	var tooLarge *SourceTooLargeError
	if !errors.As(err, &tooLarge) || !errors.Is(err, ErrSourceTooLarge) || tooLarge.Actual != 13 || tooLarge.Maximum != 10 {
		t.Fatalf("err %v", err)
	}
	if err.Error() != "source is 13 bytes; maximum is 10 bytes" {
		t.Fatalf("message %q", err.Error())
	}
	if ev, err := m.Eval("1 + 2 + 3"); err != nil || ev.Value.NumberValue() != 6 {
		t.Fatalf("source at the limit: %+v %v", ev, err)
	}
	if err := Check(strings.Repeat(" ", DefaultMaxSourceBytes+1), DefaultLimits()); !errors.Is(err, ErrSourceTooLarge) {
		t.Fatalf("default bound: %v", err)
	}

	// Tokens: five are fine, seven are not (the newline counts as one).
	limits = DefaultLimits()
	limits.MaxSyntaxTokens = 5
	if err := Check("1+2+3", limits); err != nil {
		t.Fatalf("five tokens: %v", err)
	}
	if err := Check("1+2\n3", limits); err != nil {
		t.Fatalf("five tokens with a newline: %v", err)
	}
	err = Check("1+2+3+4", limits)
	var se *SyntaxError
	if !errors.As(err, &se) || se.Message != "the source has more than 5 tokens" || se.Pos != (Pos{1, 6}) {
		t.Fatalf("seven tokens: %v", err)
	}

	// Nesting: the statement's expression is level 1, each parenthesis adds one.
	nested := func(n int) string { return strings.Repeat("(", n) + "1" + strings.Repeat(")", n) }
	if err := checkDefault(nested(DefaultMaxNesting - 1)); err != nil {
		t.Fatalf("127 parentheses: %v", err)
	}
	err = checkDefault(nested(DefaultMaxNesting))
	if !errors.As(err, &se) || se.Message != "expressions and blocks nest deeper than the maximum of 128" {
		t.Fatalf("128 parentheses: %v", err)
	}
	limits = DefaultLimits()
	limits.MaxNesting = 4 // function block, if expression, branch block, statement expression
	if err := Check("fn f() {\nif true {\n1\n}\n}", limits); err != nil {
		t.Fatalf("four levels: %v", err)
	}
	if err := Check("fn f() {\nif true {\n[1]\n}\n}", limits); !errors.Is(err, ErrSyntax) {
		t.Fatalf("five levels: %v", err)
	}
}
