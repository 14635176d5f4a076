package main

import (
	"strings"

	"github.com/splashv5/conform/vectors/vectorfmt"
)

// scriptRow is one script evaluation. Its expectations are written from the rules of chapter
// 20 by hand: a rejected source names the position of its first problem; a source that runs
// names its status, the kind and text of its final value, its diagnostics and its host calls.
type scriptRow struct {
	meta
	source   string
	tools    []vectorfmt.ScriptTool
	rejectAt *vectorfmt.ScriptPosition
	naming   string
	tooLarge bool
	// clockStep advances the host's clock by this many milliseconds after every reading.
	clockStep int
	status    string
	kind      string
	value     string
	diags     []string
	calls     []vectorfmt.ScriptCall
	runs      []vectorfmt.ScriptRun
}

// scriptRejected is a source rejected at line:column before it runs; column 0 leaves the
// column open where the rules do not fix it.
func scriptRejected(comment string, f, r []string, source string, line, column int) scriptRow {
	return scriptRow{meta: meta{comment, f, r}, source: source, rejectAt: &vectorfmt.ScriptPosition{Line: line, Column: column}}
}

// naming sets the text a rejection's message must contain.
func naming(r scriptRow, what string) scriptRow {
	r.naming = what
	return r
}

// scriptValue is a source that completes with a value, without diagnostics or host calls.
func scriptValue(comment string, f, r []string, source, kind, value string) scriptRow {
	return scriptRow{meta: meta{comment, f, r}, source: source, status: vectorfmt.ScriptCompleted, kind: kind, value: value}
}

// diag renders a diagnostic of the default source name.
func diag(line, column int, message, origin string) string {
	return "inline.splash:" + itoa(line) + ":" + itoa(column) + ": " + message + " (" + origin + ")"
}

// stopDiag renders the diagnostic of a stop, whose position the rules leave open.
func stopDiag(message string) string { return "inline.splash:?: " + message + " (limit)" }

// methodDiag renders the diagnostic of an error raised by a method call, whose position (the
// receiver or the method's name) the rules leave open.
func methodDiag(message, origin string) string {
	return "inline.splash:?: " + message + " (" + origin + ")"
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func callText(tool, input string) vectorfmt.ScriptCall {
	return vectorfmt.ScriptCall{Op: "call", Tool: tool, Format: "text", Input: input}
}

func callJSON(tool, input string) vectorfmt.ScriptCall {
	return vectorfmt.ScriptCall{Op: "call", Tool: tool, Format: "json", Input: input}
}

func startText(tool, input string) vectorfmt.ScriptCall {
	return vectorfmt.ScriptCall{Op: "start", Tool: tool, Format: "text", Input: input}
}

func await(id uint64) vectorfmt.ScriptCall { return vectorfmt.ScriptCall{Op: "await", Promise: id} }

// scriptTools is the host of every tool case: echo answers "ok", bad fails with a tool
// failure's text, later is a deferred tool whose promise is settled, and slow one whose promise
// stays pending.
var scriptTools = []vectorfmt.ScriptTool{
	{Name: "echo", Output: "ok"},
	{Name: "bad", Failure: "tool call failed: boom"},
	{Name: "later", Output: "done", Deferred: "settled"},
	{Name: "slow", Output: "never", Deferred: "pending"},
}

func withTools(r scriptRow) scriptRow {
	r.tools = scriptTools
	return r
}

const notFound = "variable `zz` not found in scope"

// scriptMaxSourceBytes is the default source bound of SCR-001.
const scriptMaxSourceBytes = 262144

// heapSource makes a string of 131,072 bytes (262,142 bytes of strings in all), then 40 strings
// of 131,073 bytes (5,242,920 bytes), awaits, and then makes 40 more: the second half passes the
// 8 MiB heap bound only when the count runs on across the runs of one evaluation.
const heapSource = "use mod.tool\nfn d(s, n) { if n == 0 { return s; }\nreturn d(s + s, n - 1); }\nlet b = d(\"x\", 17)\n" +
	"fn g(n) { if n > 0 { let t = b + \"y\"; g(n - 1); }; }\ng(40)\nlet p = tool.start(\"slow\", \"in\")\np.await()\ng(40)\n\"done\""

func scriptCases() []scriptRow {
	src, gram, val, rec, tool, js, lim := "ScriptSource", "ScriptGrammar", "ScriptValue", "ScriptRecovery", "ScriptTool", "ScriptJSON", "ScriptLimit"
	failed := func(r scriptRow) scriptRow { r.status, r.kind, r.value = vectorfmt.ScriptFailed, "error", ""; return r }
	return []scriptRow{
		// 20.1 and 20.2: admission and lexical rules.
		{meta: meta{"a source of 262,145 bytes is refused before it is parsed, with both counts", flags(src, "Boundary", "LargeInput"), reqs("SCR-001")},
			source: "zz\n" + strings.Repeat(" ", scriptMaxSourceBytes-3) + "1", tooLarge: true},
		scriptValue("a source of exactly 262,144 bytes is admitted", flags(src, "Boundary", "LargeInput"), reqs("SCR-001"), strings.Repeat(" ", scriptMaxSourceBytes-1)+"7", "number", "7"),
		scriptValue("a carriage return and line feed end a line", flags(src), reqs("SCR-002"), "let a = 1\r\nlet b = 2\r\na + b", "number", "3"),
		scriptRejected("a carriage return on its own is rejected", flags(src), reqs("SCR-002", "SCR-004"), "let a = 1\rlet b = 2", 1, 10),
		failed(scriptRow{meta: meta{"a tab counts as one column", flags(src, rec), reqs("SCR-003", "SCR-101")}, source: "let s = 1\n\tzz",
			diags: []string{diag(2, 2, notFound, "script")}}),
		failed(scriptRow{meta: meta{"a multi-byte character counts as one column", flags(src, rec), reqs("SCR-003", "SCR-043")}, source: `"日本" + zz`,
			diags: []string{diag(1, 8, notFound, "script")}}),
		scriptRejected("a name that is missing is a syntax error at its position", flags(src), reqs("SCR-004"), "let = 5", 1, 5),
		scriptRejected("nesting deeper than 128 is rejected", flags(src, "Boundary"), reqs("SCR-005"), strings.Repeat("(", 129)+"1"+strings.Repeat(")", 129), 1, 129),
		scriptValue("nesting of 128 is accepted", flags(src, "Boundary"), reqs("SCR-005"), strings.Repeat("(", 127)+"1"+strings.Repeat(")", 127), "number", "1"),
		scriptRejected("a reserved word is not a name", flags(src), reqs("SCR-010"), "let while = 1", 1, 5),
		scriptValue("catch is an ordinary name outside try", flags(src), reqs("SCR-010"), "let catch = 2\ncatch", "number", "2"),
		scriptRejected("a number with a letter suffix is rejected", flags(src), reqs("SCR-011"), "0x10", 1, 2),
		scriptRejected("a number ending in a dot is rejected", flags(src), reqs("SCR-011"), "1.", 1, 2),
		scriptValue("a literal beyond the binary64 range is an infinity", flags(src), reqs("SCR-011"), "1e400", "number", "inf"),
		scriptValue("an exponent literal", flags(src), reqs("SCR-011"), "1.5e3", "number", "1500"),
		scriptValue("the escapes of a string literal", flags(src), reqs("SCR-012"), `"a\tb\n\"\\\u0041\u{1F600}"`, "string", `"a\tb\n\"\\A😀"`),
		scriptRejected("an escape naming a surrogate is rejected", flags(src), reqs("SCR-012"), `"\u{D800}"`, 1, 2),
		scriptRejected("an unknown escape is rejected", flags(src), reqs("SCR-012"), `"\q"`, 1, 2),
		scriptRejected("a single-quoted string is rejected", flags(src), reqs("SCR-012"), `'x'`, 1, 1),
		scriptValue("both comment forms", flags(src), reqs("SCR-013"), "/* a * b */ 1 // c", "number", "1"),
		scriptRejected("**/ does not end a block comment, which stays unterminated", flags(src), reqs("SCR-013"), "/* a **/ 1", 1, 1),
		naming(scriptRejected("x=-1 is one operator =-, which is rejected", flags(src), reqs("SCR-014"), "let x = 0\nx=-1", 2, 2), "=-"),
		naming(scriptRejected("** is rejected", flags(src), reqs("SCR-014"), "2 ** 3", 1, 3), "**"),
		scriptRejected("a character outside every rule is rejected", flags(src), reqs("SCR-014"), "1 # 2", 1, 3),

		// 20.3: statements and expressions.
		scriptRejected("the last statement of a block needs a newline or ; before }", flags(gram), reqs("SCR-020"), "if true { 1 }", 1, 13),
		scriptValue("a block whose statements all end", flags(gram), reqs("SCR-020", "SCR-035"), "if true { 1; }", "number", "1"),
		naming(scriptRejected("use of another module path is rejected", flags(gram), reqs("SCR-021"), "use mod.fs", 1, 0), "mod.fs"),
		scriptRejected("a repeated parameter name is rejected", flags(gram), reqs("SCR-021"), "fn f(a, a) { a; }", 1, 9),
		scriptRejected("return outside a function body is rejected", flags(gram), reqs("SCR-021"), "return 1", 1, 1),
		scriptValue("* binds tighter than +", flags(gram), reqs("SCR-022"), "1 + 2 * 3", "number", "7"),
		scriptValue("- is left-associative", flags(gram), reqs("SCR-022"), "10 - 4 - 3", "number", "3"),
		scriptValue("&& binds tighter than ||", flags(gram), reqs("SCR-022", "SCR-033"), "true || false && false", "bool", "true"),
		scriptValue("< binds tighter than ==", flags(gram), reqs("SCR-022"), "-1 < 0 == true", "bool", "true"),
		scriptRejected("a second prefix operator is rejected", flags(gram), reqs("SCR-022"), "!!true", 1, 0),
		scriptRejected("assigning to a field is rejected", flags(gram), reqs("SCR-023"), "let r = {a: 1}\nr.a = 2", 2, 5),
		scriptRejected("chained assignment is rejected", flags(gram), reqs("SCR-023"), "let a = 1\nlet b = 2\na = b = 3", 3, 7),
		scriptValue("a compound assignment updates the name", flags(gram), reqs("SCR-023", "SCR-034"), "let a = 1\na += 2\na", "number", "3"),
		scriptRejected("a condition that starts with if is rejected", flags(gram), reqs("SCR-024"), "if if true { 1; } { 2; }", 1, 4),
		scriptValue("try with a value block", flags(gram, rec), reqs("SCR-025", "SCR-040"), "try { 1; } catch 2", "number", "1"),
		scriptRejected("try without catch is rejected", flags(gram), reqs("SCR-025"), "try 1", 1, 6),
		scriptRejected("a trailing comma in an array is rejected", flags(gram), reqs("SCR-026"), "[1, 2,]", 1, 7),
		scriptRejected("a record naming a field twice is rejected", flags(gram), reqs("SCR-026"), "{a: 1, a: 2}", 1, 8),
		scriptValue("record fields separated by a newline", flags(gram), reqs("SCR-026", "SCR-037"), "{a: 1\nb: 2}.b", "number", "2"),
		naming(scriptRejected("a while loop is outside the subset", flags(gram), reqs("SCR-027"), "while true { 1; }", 1, 1), "while"),
		naming(scriptRejected("and is outside the subset", flags(gram), reqs("SCR-027"), "let a = true\na and a", 2, 3), "and"),

		scriptRejected("assigning to an index is rejected: arrays are immutable", flags(gram), reqs("SCR-023", "SCR-030"), "let a = [1]\na[0] = 2", 2, 0),
		naming(scriptRejected("a lambda is outside the subset", flags(gram), reqs("SCR-027"), "let f = |x| x", 1, 0), "lambda"),

		// 20.4 and 20.5: values and evaluation.
		scriptValue("+ concatenates two strings", flags(val), reqs("SCR-031"), `"a" + "b"`, "string", `"ab"`),
		scriptValue("% truncates toward zero", flags(val), reqs("SCR-031"), "-7 % 3", "number", "-1"),
		scriptValue("division by zero gives an infinity", flags(val), reqs("SCR-031"), "1 / 0", "number", "inf"),
		scriptValue("+ of a number and a string raises a catchable error", flags(val, rec), reqs("SCR-031", "SCR-040"), `try (1 + "a") catch "caught"`, "string", `"caught"`),
		scriptValue("arrays compare element-wise", flags(val), reqs("SCR-032"), "[1, [2]] == [1, [2]]", "bool", "true"),
		scriptValue("records compare independent of field order", flags(val), reqs("SCR-032"), "{a: 1, b: 2} == {b: 2, a: 1}", "bool", "true"),
		scriptValue("NaN equals nothing", flags(val), reqs("SCR-032"), "0 / 0 == 0 / 0", "bool", "false"),
		scriptValue("values of different kinds differ", flags(val), reqs("SCR-032"), `1 != "1"`, "bool", "true"),
		scriptValue("|| yields the deciding operand", flags(val), reqs("SCR-033"), `0 || "x"`, "string", `"x"`),
		scriptValue("&& does not evaluate its right side when the left decides", flags(val), reqs("SCR-033"), `"" && zz`, "string", `""`),
		scriptValue("! of a number raises a catchable error", flags(val, rec), reqs("SCR-033"), `try !1 catch "caught"`, "string", `"caught"`),
		scriptValue("! of nil is true", flags(val), reqs("SCR-033"), "!nil", "bool", "true"),
		scriptValue("a let inside a block does not change the outer name", flags(val), reqs("SCR-034"), "let a = 1\nif true { let a = 2; }\na", "number", "1"),
		scriptValue("an assignment inside a block updates the nearest binding", flags(val), reqs("SCR-034"), "let a = 1\nif true { a = 2; }\na", "number", "2"),
		scriptValue("an assignment yields nil", flags(val), reqs("SCR-034", "SCR-038"), "let a = 1\na = 5", "nil", "null"),
		scriptValue("an if with no chosen branch yields nil", flags(val), reqs("SCR-035"), "if false { 1; }", "nil", "null"),
		scriptValue("else is chosen when the condition fails", flags(val), reqs("SCR-035"), "if 0 { 1; } else { 2; }", "number", "2"),
		scriptValue("a function captures its scope", flags(val), reqs("SCR-036"), "let n = 10\nfn f(x) { x + n; }\nf(1)", "number", "11"),
		scriptValue("a missing argument is nil", flags(val), reqs("SCR-036"), "fn f(a, b) { b; }\nf(1)", "nil", "null"),
		scriptValue("too many arguments raise a catchable error", flags(val, rec), reqs("SCR-036"), "fn f(a) { a; }\ntry f(1, 2) catch \"caught\"", "string", `"caught"`),
		scriptValue("return yields its value", flags(val), reqs("SCR-036"), "fn f() { return 5\n6; }\nf()", "number", "5"),
		scriptValue("an array index", flags(val), reqs("SCR-037"), "[1, 2][1]", "number", "2"),
		scriptValue("a record indexed by a string", flags(val), reqs("SCR-037"), `{a: 1}["a"]`, "number", "1"),
		scriptValue("an index out of bounds raises a catchable error", flags(val, rec), reqs("SCR-037"), `try [1][5] catch "caught"`, "string", `"caught"`),
		scriptValue("a fractional index raises a catchable error", flags(val, rec), reqs("SCR-037"), `try [1, 2][0.5] catch "caught"`, "string", `"caught"`),
		scriptValue("a missing field raises a catchable error", flags(val, rec), reqs("SCR-037"), "let r = {a: 1}\ntry r.b catch \"caught\"", "string", `"caught"`),
		scriptValue("let and fn as the last statement yield nil", flags(val), reqs("SCR-038"), "fn f() { 1; }", "nil", "null"),

		// 20.6: recovery.
		scriptValue("an error raised in a function that try calls is caught", flags(rec), reqs("SCR-040"), "fn f() { zz; }\ntry f() catch 7", "number", "7"),
		failed(scriptRow{meta: meta{"an error raised in catch is not caught by the same try", flags(rec), reqs("SCR-041", "SCR-042", "SCR-044")}, source: "try zz catch yy",
			diags: []string{diag(1, 14, "variable `yy` not found in scope", "script")}}),
		{meta: meta{"an uncaught error does not end the evaluation", flags(rec), reqs("SCR-042", "SCR-044")}, source: "zz\n5",
			status: vectorfmt.ScriptCompleted, kind: "number", value: "5", diags: []string{diag(1, 1, notFound, "script")}},
		withTools(scriptRow{meta: meta{"an error-value operand calls no tool and adds no diagnostic", flags(rec, tool), reqs("SCR-043")},
			source: "use mod.tool\nlet e = zz\ntool.call(\"echo\", e)\n3", status: vectorfmt.ScriptCompleted, kind: "number", value: "3",
			diags: []string{diag(2, 9, notFound, "script")}}),
		withTools(scriptRow{meta: meta{"recovery undoes no tool call, and catch calls the host again", flags(rec, tool), reqs("SCR-045", "SCR-100")},
			source: "use mod.tool\ntry (tool.call(\"echo\", \"x\") + zz) catch tool.call(\"echo\", \"y\")", status: vectorfmt.ScriptCompleted, kind: "string", value: `"ok"`,
			calls: []vectorfmt.ScriptCall{callText("echo", "x"), callText("echo", "y")}}),
		scriptValue("assert(true) yields nil", flags(rec), reqs("SCR-050"), "use mod.std.assert\nassert(true)", "nil", "null"),
		failed(scriptRow{meta: meta{"assert of a truthy value other than true fails", flags(rec), reqs("SCR-050", "SCR-101")}, source: "use mod.std.assert\nassert(1)",
			diags: []string{diag(2, 1, "assertion failed", "mod.std.assert")}}),
		scriptValue("assert with two arguments raises a catchable error", flags(rec), reqs("SCR-050"), "use mod.std.assert\ntry assert(true, 1) catch \"caught\"", "string", `"caught"`),

		// 20.7: the tool binding.
		withTools(scriptRow{meta: meta{"tool.call is a synchronous text call", flags(tool), reqs("SCR-060", "SCR-100")}, source: "use mod.tool\ntool.call(\"echo\", \"hi\")",
			status: vectorfmt.ScriptCompleted, kind: "string", value: `"ok"`, calls: []vectorfmt.ScriptCall{callText("echo", "hi")}}),
		withTools(scriptRow{meta: meta{"tool.call_json writes the value with the raw serializer, fields in insertion order", flags(tool), reqs("SCR-061", "SCR-063")},
			source: "use mod.tool\ntool.call_json(\"echo\", {b: 1, a: [true, nil, \"x\"]})",
			status: vectorfmt.ScriptCompleted, kind: "string", value: `"ok"`, calls: []vectorfmt.ScriptCall{callJSON("echo", `{"b":1,"a":[true,null,"x"]}`)}}),
		withTools(scriptRow{meta: meta{"the raw serializer's numbers and string escapes", flags(tool), reqs("SCR-063")},
			source: "use mod.tool\ntool.call_json(\"echo\", [\"a\\\"b\\\\c\\td\", 0.0000001, 0 / 0, -0, 1 / 0])",
			status: vectorfmt.ScriptCompleted, kind: "string", value: `"ok"`, calls: []vectorfmt.ScriptCall{callJSON("echo", "[\"a\\\"b\\c\td\",0.0000001,NaN,-0,inf]")}}),
		withTools(scriptRow{meta: meta{"tool.start yields a promise carrying the host's id", flags(tool), reqs("SCR-062")}, source: "use mod.tool\ntool.start(\"later\", \"in\")",
			status: vectorfmt.ScriptCompleted, kind: "promise", calls: []vectorfmt.ScriptCall{startText("later", "in")}}),
		withTools(failed(scriptRow{meta: meta{"a non-string name is denied before the host is called", flags(tool), reqs("SCR-064")}, source: "use mod.tool\ntool.call(1, \"x\")",
			diags: []string{methodDiag("tool call denied: tool API expects a string value", "mod.tool")}})),
		withTools(failed(scriptRow{meta: meta{"a function inside a call_json value is denied", flags(tool), reqs("SCR-064")}, source: "use mod.tool\nfn f() { 1; }\ntool.call_json(\"echo\", [f])",
			diags: []string{methodDiag("tool call denied: tool API expects a JSON-serializable value", "mod.tool")}})),
		withTools(scriptRow{meta: meta{"three arguments raise a catchable error without calling the host", flags(tool, rec), reqs("SCR-064")}, source: "use mod.tool\ntry tool.call(\"echo\", \"a\", \"b\") catch \"caught\"",
			status: vectorfmt.ScriptCompleted, kind: "string", value: `"caught"`}),
		withTools(failed(scriptRow{meta: meta{"a tool failure is raised with its exact text", flags(tool), reqs("SCR-065")}, source: "use mod.tool\ntool.call(\"bad\", \"x\")",
			diags: []string{methodDiag("tool call failed: boom", "mod.tool")}, calls: []vectorfmt.ScriptCall{callText("bad", "x")}})),
		withTools(failed(scriptRow{meta: meta{"await on a value that is not a promise", flags(tool), reqs("SCR-066")}, source: "use mod.tool\nlet x = 5\nx.await()",
			diags: []string{methodDiag("tool promise expected", "mod.tool")}})),
		withTools(scriptRow{meta: meta{"awaiting a settled promise twice asks the host twice", flags(tool), reqs("SCR-066", "SCR-070", "SCR-100")},
			source: "use mod.tool\nlet p = tool.start(\"later\", \"in\")\np.await() + p.await()", status: vectorfmt.ScriptCompleted, kind: "string", value: `"donedone"`,
			calls: []vectorfmt.ScriptCall{startText("later", "in"), await(1), await(1)}}),
		withTools(scriptRow{meta: meta{"awaiting a pending promise suspends with a nil value", flags(tool), reqs("SCR-067")},
			source: "use mod.tool\nlet p = tool.start(\"slow\", \"in\")\nlet r = p.await()\n\"after\"", status: vectorfmt.ScriptSuspended, kind: "nil", value: "null",
			calls: []vectorfmt.ScriptCall{startText("slow", "in"), await(1)}}),
		withTools(scriptRow{meta: meta{"a promise never awaited does not affect the evaluation", flags(tool), reqs("SCR-070")}, source: "use mod.tool\ntool.start(\"slow\", \"x\")\n1",
			status: vectorfmt.ScriptCompleted, kind: "number", value: "1", calls: []vectorfmt.ScriptCall{startText("slow", "x")}}),

		// 20.7: the JSON boundary.
		scriptValue("to_json keeps insertion order and escapes control characters in lowercase", flags(js), reqs("SCR-080"), `{b: 1, a: "x\u{1}"}.to_json()`, "string", `"{\"b\":1,\"a\":\"x\\u0001\"}"`),
		scriptValue("to_json writes whole numbers in plain digits", flags(js), reqs("SCR-080"), "[0.5, 1e-7, 1e21, -0].to_json()", "string", `"[0.5,1e-7,1000000000000000000000,-0]"`),
		failed(scriptRow{meta: meta{"to_json refuses a non-finite number", flags(js), reqs("SCR-081")}, source: "[0 / 0].to_json()",
			diags: []string{methodDiag("value cannot cross Splash's bounded JSON boundary", "json")}}),
		scriptValue("parse_json writes members back sorted by their keys", flags(js), reqs("SCR-082", "SCR-083"), `"{\"b\":1,\"a\":[1,2]}".parse_json().to_json()`, "string", `"{\"a\":[1,2],\"b\":1}"`),
		scriptValue("parse_json drops the sign inside an array", flags(js), reqs("SCR-084"), `"[-1, 2]".parse_json().to_json()`, "string", `"[1,2]"`),
		scriptValue("parse_json of a root that is not a string, array or object is nil", flags(js), reqs("SCR-084"), `"5".parse_json()`, "nil", "null"),

		failed(scriptRow{meta: meta{"to_json refuses containers nested deeper than 64", flags(js, "Boundary"), reqs("SCR-081")}, source: strings.Repeat("[", 65) + strings.Repeat("]", 65) + ".to_json()",
			diags: []string{methodDiag("JSON operation exceeded Splash runtime limits", "json")}}),
		scriptValue("to_json writes containers nested 64 deep", flags(js, "Boundary"), reqs("SCR-081"), strings.Repeat("[", 64)+strings.Repeat("]", 64)+".to_json()",
			"string", `"`+strings.Repeat("[", 64)+strings.Repeat("]", 64)+`"`),
		failed(scriptRow{meta: meta{"parse_json refuses a document nested deeper than 64", flags(js, "Boundary"), reqs("SCR-082")}, source: `"` + strings.Repeat("[", 65) + strings.Repeat("]", 65) + `".parse_json()`,
			diags: []string{methodDiag("JSON operation exceeded Splash runtime limits", "json")}}),
		failed(scriptRow{meta: meta{"parse_json refuses text that is not JSON", flags(js), reqs("SCR-082")}, source: `"{a:1}".parse_json()`,
			diags: []string{methodDiag("value cannot cross Splash's bounded JSON boundary", "json")}}),
		withTools(failed(scriptRow{meta: meta{"a missing input counts as nil and is denied without a host call", flags(tool), reqs("SCR-064")}, source: "use mod.tool\ntool.call(\"echo\")",
			diags: []string{methodDiag("tool call denied: tool API expects a string value", "mod.tool")}})),

		// 20.7: suspension and further runs.
		withTools(scriptRow{meta: meta{"Resume is refused for another promise and when idle, and continues the await with the outcome", flags(tool), reqs("SCR-067", "SCR-068")},
			source: "use mod.tool\nlet p = tool.start(\"slow\", \"in\")\nlet r = p.await()\nr + \"!\"", status: vectorfmt.ScriptSuspended, kind: "nil", value: "null",
			calls: []vectorfmt.ScriptCall{startText("slow", "in"), await(1)},
			runs: []vectorfmt.ScriptRun{
				{Op: vectorfmt.ScriptOpResume, Promise: 2, Output: "late", Refused: true},
				{Op: vectorfmt.ScriptOpResume, Promise: 1, Output: "late", Status: vectorfmt.ScriptCompleted, ValueKind: "string", Value: `"late!"`},
				{Op: vectorfmt.ScriptOpResume, Promise: 1, Output: "again", Refused: true},
			}}),
		withTools(scriptRow{meta: meta{"a failure passed to Resume is raised at the await as a catchable error", flags(tool, rec), reqs("SCR-068")},
			source: "use mod.tool\nlet p = tool.start(\"slow\", \"in\")\ntry p.await() catch \"recovered\"", status: vectorfmt.ScriptSuspended, kind: "nil", value: "null",
			calls: []vectorfmt.ScriptCall{startText("slow", "in"), await(1)},
			runs: []vectorfmt.ScriptRun{
				{Op: vectorfmt.ScriptOpResume, Promise: 1, Failure: "tool call failed: gone", Status: vectorfmt.ScriptCompleted, ValueKind: "string", Value: `"recovered"`},
			}}),
		withTools(scriptRow{meta: meta{"Eval while suspended is refused and runs nothing; after a discard the machine is idle", flags(tool), reqs("SCR-069")},
			source: "use mod.tool\ntool.start(\"slow\", \"in\").await()", status: vectorfmt.ScriptSuspended, kind: "nil", value: "null",
			calls: []vectorfmt.ScriptCall{startText("slow", "in"), await(1)},
			runs: []vectorfmt.ScriptRun{
				{Op: vectorfmt.ScriptOpEval, Source: "use mod.tool\ntool.call(\"echo\", \"x\")", Refused: true, RefusedMessage: "a suspended Splash evaluation must be resumed first"},
				{Op: vectorfmt.ScriptOpDiscard},
				{Op: vectorfmt.ScriptOpResume, Promise: 1, Output: "late", Refused: true},
				{Op: vectorfmt.ScriptOpEval, Source: "1 + 1", Status: vectorfmt.ScriptCompleted, ValueKind: "number", Value: "2"},
			}}),
		withTools(scriptRow{meta: meta{"the heap count runs on over the runs of one evaluation and starts afresh with the next Eval", flags(tool, lim), reqs("SCR-093", "SCR-095")},
			source: heapSource, status: vectorfmt.ScriptSuspended, kind: "nil", value: "null",
			calls: []vectorfmt.ScriptCall{startText("slow", "in"), await(1), startText("slow", "in"), await(2)},
			runs: []vectorfmt.ScriptRun{
				{Op: vectorfmt.ScriptOpResume, Promise: 1, Output: "late", Status: vectorfmt.ScriptFailed, ValueKind: "error", Diagnostics: []string{stopDiag("script heap allocation limit exceeded")}},
				{Op: vectorfmt.ScriptOpEval, Source: heapSource, Status: vectorfmt.ScriptSuspended, ValueKind: "nil", Value: "null"},
			}}),

		// 20.8: bounds.
		failed(scriptRow{meta: meta{"2^20 calls exceed the instruction bound", flags(lim), reqs("SCR-090", "SCR-095")}, source: "fn f(n) { if n > 0 { f(n - 1); f(n - 1); }; }\nf(20)",
			diags: []string{stopDiag("script instruction limit exceeded")}}),
		failed(scriptRow{meta: meta{"a clock that moves 16 ms per reading reaches the 64 ms deadline at a check", flags(lim), reqs("SCR-091", "SCR-095")},
			source: "fn f(n) { if n > 0 { f(n - 1); f(n - 1); }; }\nf(10)\n1", clockStep: 16,
			diags: []string{stopDiag("script time budget exceeded")}}),
		{meta: meta{"a clock that moves 1 ms per reading lets a short run complete", flags(lim), reqs("SCR-091")}, clockStep: 1,
			source: "fn f(n) { if n > 0 { f(n - 1); f(n - 1); }; }\nf(8)\n1", status: vectorfmt.ScriptCompleted, kind: "number", value: "1"},
		failed(scriptRow{meta: meta{"unbounded recursion exceeds the call-frame bound, and try does not catch a stop", flags(lim, rec), reqs("SCR-094", "SCR-095")}, source: "fn f() { f(); }\ntry f() catch 1",
			diags: []string{stopDiag("script call frame limit exceeded")}}),
		failed(scriptRow{meta: meta{"a string doubled past 262,144 bytes exceeds the string bound", flags(lim), reqs("SCR-092", "SCR-095")}, source: "fn d(s, n) { if n == 0 { return s; }\nreturn d(s + s, n - 1); }\nd(\"x\", 20)",
			diags: []string{stopDiag("script string allocation limit exceeded")}}),
		failed(scriptRow{meta: meta{"strings of 131,073 bytes made 100 times exceed the 8 MiB heap bound", flags(lim), reqs("SCR-093", "SCR-095")},
			source: "fn d(s, n) { if n == 0 { return s; }\nreturn d(s + s, n - 1); }\nlet b = d(\"x\", 17)\nfn g(n) { if n > 0 { let t = b + \"y\"; g(n - 1); }; }\ng(100)",
			diags:  []string{stopDiag("script heap allocation limit exceeded")}}),
	}
}
