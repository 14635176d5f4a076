package main

import "strings"

// canonOp selects which canonical_json group a row belongs to.
type canonOp uint8

const (
	canonValue   canonOp = iota + 1 // any JSON value, read and written back
	canonPayload                    // a json tool payload: also object/array root and depth
)

// expect is a case table's independent expectation for one mode: an exact output or an
// error kind.
type expect struct {
	out string
	err string
}

func out(s string) expect        { return expect{out: s} }
func fail(kind string) expect    { return expect{err: kind} }
func (e expect) isZero() bool    { return e == expect{} }
func flags(f ...string) []string { return f }
func reqs(r ...string) []string  { return r }

// canonCase is one row of the canonical_json table. A zero lossy expectation means "same as
// preserve".
type canonCase struct {
	meta
	op       canonOp
	input    string
	preserve expect
	lossy    expect
}

// nest wraps inner in n levels of open/close.
func nest(n int, open, close, inner string) string {
	return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
}

const ser = "Serialization"

// v builds a value row; p builds a payload row.
func v(comment string, input string, preserve, lossy expect, f []string, r []string) canonCase {
	return canonCase{meta: meta{comment, f, r}, op: canonValue, input: input, preserve: preserve, lossy: lossy}
}

func p(comment string, input string, preserve, lossy expect, f []string, r []string) canonCase {
	return canonCase{meta: meta{comment, f, r}, op: canonPayload, input: input, preserve: preserve, lossy: lossy}
}

// same marks a lossy expectation equal to the preserve one.
var same = expect{}

// num builds a value row for a number token inside a one-element array.
func num(comment, token, preserve, lossy string, f []string, r []string) canonCase {
	pe, le := out("["+preserve+"]"), out("["+lossy+"]")
	if preserve == "!" {
		pe = fail(ser)
	}
	if lossy == "!" {
		le = fail(ser)
	}
	return v(comment, "["+token+"]", pe, le, f, append([]string{"ENC-041"}, r...))
}

// canonicalCases is the canonical_json table. tcIds follow this order (one test per row and
// mode, preserve first), so rows are only ever appended.
var canonicalCases = []canonCase{
	// Structure, whitespace and key order.
	v("empty object", `{}`, out(`{}`), same, flags("CanonicalForm"), reqs("ENC-001")),
	v("empty array", `[]`, out(`[]`), same, flags("CanonicalForm"), reqs("ENC-001")),
	v("whitespace of all four kinds around and between tokens is dropped",
		" \t\n\r{ \"a\" : 1 ,\n \"b\" : [ 1 , 2 ] } \r\n\t ", out(`{"a":1,"b":[1,2]}`), same,
		flags("Whitespace"), reqs("ENC-001", "ENC-014")),
	v("members are sorted by key", `{"b":1,"a":2}`, out(`{"a":2,"b":1}`), same,
		flags("KeyOrder"), reqs("ENC-003")),
	v("keys sort by raw UTF-8 bytes: empty < B < a < é", `{"é":1,"a":2,"B":3,"":4}`,
		out(`{"":4,"B":3,"a":2,"é":1}`), same, flags("KeyOrder", "Unicode"), reqs("ENC-003")),
	v("keys sort by UTF-8 bytes, not UTF-16 units: U+FF61 before U+1F600", `{"😀":1,"｡":2}`,
		out(`{"｡":2,"😀":1}`), same, flags("KeyOrder", "Unicode"), reqs("ENC-003")),
	v("a key sorts before its extensions", `{"ab":3,"b":4,"aa":1,"a":2}`,
		out(`{"a":2,"aa":1,"ab":3,"b":4}`), same, flags("KeyOrder"), reqs("ENC-003")),
	v("control-character keys sort by byte value", `{" ":2,"\n":1}`, out(`{"\n":1," ":2}`), same,
		flags("KeyOrder", "StringEscape"), reqs("ENC-003", "ENC-005")),
	v("duplicate key: last wins", `{"a":1,"a":2}`, out(`{"a":2}`), same,
		flags("DuplicateKey"), reqs("ENC-022")),
	v("duplicate key separated by another key: last wins, position of the first is irrelevant",
		`{"a":1,"b":2,"a":3}`, out(`{"a":3,"b":2}`), same, flags("DuplicateKey"), reqs("ENC-022")),
	v("duplicate key with values of different kinds", `{"a":{"x":1},"a":[2]}`, out(`{"a":[2]}`), same,
		flags("DuplicateKey"), reqs("ENC-022")),
	v("escaped key spelling is the same key", `{"\u0061":1,"a":2}`, out(`{"a":2}`), same,
		flags("DuplicateKey", "EscapedKey"), reqs("ENC-022", "ENC-023")),
	v("nested objects are sorted recursively (reference anchor A-CANON)", `{"b":[1,{"z":1,"a":"x"}],"a":null,"B":true}`,
		out(`{"B":true,"a":null,"b":[1,{"a":"x","z":1}]}`), same, flags("ReferenceAnchor", "KeyOrder"), reqs("ENC-003")),
	v("mixed array keeps element order", `[1,"a",null,true,false,{},[]]`, out(`[1,"a",null,true,false,{},[]]`), same,
		flags("CanonicalForm"), reqs("ENC-001")),
	v("nested empty containers", `[[[]],{"a":{"b":{}}}]`, out(`[[[]],{"a":{"b":{}}}]`), same,
		flags("CanonicalForm"), reqs("ENC-001")),
	v("top-level null", `null`, out(`null`), same, flags("Scalar"), reqs("ENC-001")),
	v("top-level true", `true`, out(`true`), same, flags("Scalar"), reqs("ENC-001")),
	v("top-level false with surrounding whitespace", " false\n", out(`false`), same, flags("Scalar", "Whitespace"), reqs("ENC-014")),
	v("top-level string", `"x"`, out(`"x"`), same, flags("Scalar"), reqs("ENC-001")),
	v("top-level zero", `0`, out(`0`), same, flags("Scalar", "Integer"), reqs("ENC-008")),

	// Syntax errors.
	v("empty input", ``, fail(ser), same, flags("Syntax"), reqs("ENC-020", "ERR-005", "ERR-010")),
	v("whitespace only", " \t\r\n", fail(ser), same, flags("Syntax", "Whitespace"), reqs("ENC-014", "ERR-005", "ERR-010")),
	v("trailing letter after the value", `{}x`, fail(ser), same, flags("TrailingCharacters"), reqs("ENC-015", "ERR-005", "ERR-010")),
	v("two top-level values", `{} {}`, fail(ser), same, flags("TrailingCharacters"), reqs("ENC-015")),
	v("two top-level numbers", `1 2`, fail(ser), same, flags("TrailingCharacters"), reqs("ENC-015")),
	v("extra closing brace", `{"a":1}}`, fail(ser), same, flags("TrailingCharacters"), reqs("ENC-015")),
	v("leading byte order mark", "\xef\xbb\xbf{}", fail(ser), same, flags("ByteOrderMark"), reqs("ENC-016")),
	v("form feed is not whitespace", "[1]\f", fail(ser), same, flags("Whitespace"), reqs("ENC-014")),
	v("no-break space is not whitespace", "[\u00a01]", fail(ser), same, flags("Whitespace"), reqs("ENC-014")),
	v("trailing comma in object", `{"a":1,}`, fail(ser), same, flags("Syntax"), reqs("ENC-015")),
	v("trailing comma in array", `[1,]`, fail(ser), same, flags("Syntax"), reqs("ENC-015")),
	v("missing colon", `{"a" 1}`, fail(ser), same, flags("Syntax"), reqs("ENC-015")),
	v("single-quoted key", `{'a':1}`, fail(ser), same, flags("Syntax"), reqs("ENC-015")),
	v("unquoted key", `{a:1}`, fail(ser), same, flags("Syntax"), reqs("ENC-015")),
	v("missing comma in array", `[1 2]`, fail(ser), same, flags("Syntax"), reqs("ENC-015")),
	v("comment", `{"a":1 /* c */}`, fail(ser), same, flags("Syntax"), reqs("ENC-015")),
	v("unclosed array", `[`, fail(ser), same, flags("Syntax"), reqs("ENC-015")),
	v("object ends after colon", `{"a":`, fail(ser), same, flags("Syntax"), reqs("ENC-015")),
	v("truncated literal", `tru`, fail(ser), same, flags("Syntax"), reqs("ENC-015")),
	v("capitalized literal", `True`, fail(ser), same, flags("Syntax"), reqs("ENC-015")),
	v("truncated null", `[nul]`, fail(ser), same, flags("Syntax"), reqs("ENC-015")),

	// Number grammar.
	v("NaN is not a number", `[NaN]`, fail(ser), same, flags("NumberGrammar"), reqs("ENC-020")),
	v("Infinity is not a number", `[Infinity]`, fail(ser), same, flags("NumberGrammar"), reqs("ENC-020")),
	v("-Infinity is not a number", `[-Infinity]`, fail(ser), same, flags("NumberGrammar"), reqs("ENC-020")),
	v("leading zero", `[01]`, fail(ser), same, flags("NumberGrammar"), reqs("ENC-020")),
	v("negative leading zero", `[-01]`, fail(ser), same, flags("NumberGrammar"), reqs("ENC-020")),
	v("double zero", `[00]`, fail(ser), same, flags("NumberGrammar"), reqs("ENC-020")),
	v("leading plus", `[+1]`, fail(ser), same, flags("NumberGrammar"), reqs("ENC-020")),
	v("missing integer part", `[.5]`, fail(ser), same, flags("NumberGrammar"), reqs("ENC-020")),
	v("negative missing integer part", `[-.5]`, fail(ser), same, flags("NumberGrammar"), reqs("ENC-020")),
	v("missing fraction digits", `[1.]`, fail(ser), same, flags("NumberGrammar"), reqs("ENC-020")),
	v("missing fraction digits before exponent", `[1.e5]`, fail(ser), same, flags("NumberGrammar"), reqs("ENC-020")),
	v("missing exponent digits", `[1e]`, fail(ser), same, flags("NumberGrammar"), reqs("ENC-020")),
	v("missing exponent digits after sign", `[1e+]`, fail(ser), same, flags("NumberGrammar"), reqs("ENC-020")),
	v("two exponent signs", `[1E+-2]`, fail(ser), same, flags("NumberGrammar"), reqs("ENC-020")),
	v("fractional exponent", `[1e5.5]`, fail(ser), same, flags("NumberGrammar"), reqs("ENC-020")),
	v("lone minus", `[-]`, fail(ser), same, flags("NumberGrammar"), reqs("ENC-020")),
	v("double minus", `[--1]`, fail(ser), same, flags("NumberGrammar"), reqs("ENC-020")),
	v("hexadecimal", `[0x10]`, fail(ser), same, flags("NumberGrammar"), reqs("ENC-020")),

	// Strings and escapes.
	v("quote and backslash are escaped", `["a\"b\\c"]`, out(`["a\"b\\c"]`), same, flags("StringEscape"), reqs("ENC-005")),
	v("escaped solidus is written raw", `["\/"]`, out(`["/"]`), same, flags("StringEscape"), reqs("ENC-007", "ENC-018")),
	v("short escapes are kept", `["\b\f\n\r\t"]`, out(`["\b\f\n\r\t"]`), same, flags("StringEscape"), reqs("ENC-005")),
	v("\\u escapes of the short-escape bytes become short escapes", `["\u0008\u0009\u000a\u000c\u000d"]`,
		out(`["\b\t\n\f\r"]`), same, flags("StringEscape"), reqs("ENC-005", "ENC-018")),
	v("other control bytes use lowercase \\u00XX", `["\u0000\u0001\u001F\u000B"]`,
		out(`["\u0000\u0001\u001f\u000b"]`), same, flags("StringEscape"), reqs("ENC-006", "ENC-018")),
	v("DEL is written raw", `["\u007f"]`, out("[\"\x7f\"]"), same, flags("StringEscape"), reqs("ENC-007")),
	v("raw DEL in input", "[\"\x7f\"]", out("[\"\x7f\"]"), same, flags("StringEscape"), reqs("ENC-007")),
	v("no HTML escaping", `["<>&'"]`, out(`["<>&'"]`), same, flags("StringEscape"), reqs("ENC-007")),
	v("\\u escapes of HTML characters are written raw", `["\u003c\u003e\u0026"]`, out(`["<>&"]`), same,
		flags("StringEscape"), reqs("ENC-007", "ENC-018")),
	v("U+2028 and U+2029 are written raw", `["\u2028\u2029"]`, out("[\"\u2028\u2029\"]"), same,
		flags("StringEscape", "Unicode"), reqs("ENC-007")),
	v("raw non-ASCII text", `["é"]`, out(`["é"]`), same, flags("Unicode"), reqs("ENC-007")),
	v("lowercase \\u escape of é", `["\u00e9"]`, out(`["é"]`), same, flags("Unicode"), reqs("ENC-007", "ENC-018")),
	v("uppercase \\u escape of é", `["\u00E9"]`, out(`["é"]`), same, flags("Unicode"), reqs("ENC-018")),
	v("surrogate pair escape", `["\ud83d\ude00"]`, out(`["😀"]`), same, flags("Surrogate", "Unicode"), reqs("ENC-019")),
	v("uppercase surrogate pair escape", `["\uD83D\uDE00"]`, out(`["😀"]`), same, flags("Surrogate", "Unicode"), reqs("ENC-019")),
	v("raw supplementary character", `["😀"]`, out(`["😀"]`), same, flags("Unicode"), reqs("ENC-007")),
	v("lone high surrogate", `["\ud83d"]`, fail(ser), same, flags("Surrogate"), reqs("ENC-019")),
	v("lone low surrogate", `["\ude00"]`, fail(ser), same, flags("Surrogate"), reqs("ENC-019")),
	v("high surrogate followed by a non-surrogate escape", `["\ud83d\u0041"]`, fail(ser), same, flags("Surrogate"), reqs("ENC-019")),
	v("high surrogate followed by a raw character", `["\ud83dx"]`, fail(ser), same, flags("Surrogate"), reqs("ENC-019")),
	v("surrogates in reverse order", `["\ude00\ud83d"]`, fail(ser), same, flags("Surrogate"), reqs("ENC-019")),
	v("raw control byte 0x01 in a string", "[\"a\x01b\"]", fail(ser), same, flags("ControlCharacter"), reqs("ENC-017")),
	v("raw tab in a string", "[\"a\tb\"]", fail(ser), same, flags("ControlCharacter"), reqs("ENC-017")),
	v("raw line feed in a string", "[\"a\nb\"]", fail(ser), same, flags("ControlCharacter"), reqs("ENC-017")),
	v("raw NUL in a string", "[\"\x00\"]", fail(ser), same, flags("ControlCharacter"), reqs("ENC-017")),
	v("unknown escape \\x", `["\x41"]`, fail(ser), same, flags("StringEscape"), reqs("ENC-018")),
	v("unknown escape \\a", `["\a"]`, fail(ser), same, flags("StringEscape"), reqs("ENC-018")),
	v("escaped single quote", `["\'"]`, fail(ser), same, flags("StringEscape"), reqs("ENC-018")),
	v("uppercase \\U escape", `["\U0041"]`, fail(ser), same, flags("StringEscape"), reqs("ENC-018")),
	v("short \\u escape", `["\u12"]`, fail(ser), same, flags("StringEscape"), reqs("ENC-018")),
	v("non-hex digit in \\u escape", `["\u00g0"]`, fail(ser), same, flags("StringEscape"), reqs("ENC-018")),
	v("unterminated string", `["abc`, fail(ser), same, flags("Syntax"), reqs("ENC-015")),
	v("invalid UTF-8 byte 0xff in a string", "[\"\xff\"]", fail(ser), same, flags("InvalidUtf8"), reqs("ENC-013")),
	v("overlong encoding of '/'", "[\"\xc0\xaf\"]", fail(ser), same, flags("InvalidUtf8"), reqs("ENC-013")),
	v("UTF-8 encoded surrogate", "[\"\xed\xa0\x80\"]", fail(ser), same, flags("InvalidUtf8"), reqs("ENC-013")),
	v("truncated UTF-8 sequence", "[\"\xe9\"]", fail(ser), same, flags("InvalidUtf8"), reqs("ENC-013")),
	v("code point above U+10FFFF", "[\"\xf4\x90\x80\x80\"]", fail(ser), same, flags("InvalidUtf8"), reqs("ENC-013")),
	v("invalid UTF-8 in a key", "{\"\xff\":1}", fail(ser), same, flags("InvalidUtf8"), reqs("ENC-013")),
	v("invalid UTF-8 after the value", "[1]\xff", fail(ser), same, flags("InvalidUtf8", "TrailingCharacters"), reqs("ENC-013", "ENC-015")),

	// Numbers (reference anchors A-NUM, A-PRESERVE, A-LOSSY and A-LAYOUT in
	// docs/reference-anchors.md, and derived cases).
	num("integer 1", `1`, `1`, `1`, flags("ReferenceAnchor", "Integer"), reqs("ENC-008", "ENC-024", "ENC-028")),
	num("-0 is 0 in preserve mode and -0.0 in lossy mode", `-0`, `0`, `-0.0`, flags("ReferenceAnchor", "NegativeZero", "ModeDependent"), reqs("ENC-024", "ENC-028", "ENC-040")),
	num("-0.0 stays -0.0", `-0.0`, `-0.0`, `-0.0`, flags("ReferenceAnchor", "NegativeZero"), reqs("ENC-025", "ENC-009")),
	num("0.0", `0.0`, `0.0`, `0.0`, flags("Float"), reqs("ENC-009", "ENC-025")),
	num("1.0 keeps its fraction", `1.0`, `1.0`, `1.0`, flags("ReferenceAnchor", "Float"), reqs("ENC-010", "ENC-025", "ENC-040")),
	num("trailing zero", `1.50`, `1.50`, `1.5`, flags("ReferenceAnchor", "TrailingZeros", "ModeDependent"), reqs("ENC-025", "ENC-032")),
	num("exponent without sign", `1e2`, `1e+2`, `100.0`, flags("ReferenceAnchor", "Exponent", "ModeDependent"), reqs("ENC-025", "ENC-032")),
	num("uppercase exponent", `1E2`, `1e+2`, `100.0`, flags("ReferenceAnchor", "Exponent", "ModeDependent"), reqs("ENC-025", "ENC-032")),
	num("exponent with plus", `1e+2`, `1e+2`, `100.0`, flags("ReferenceAnchor", "Exponent", "ModeDependent"), reqs("ENC-025", "ENC-032")),
	num("uppercase exponent with plus", `1E+2`, `1e+2`, `100.0`, flags("Exponent", "ModeDependent"), reqs("ENC-025", "ENC-032")),
	num("negative exponent", `1e-2`, `1e-2`, `0.01`, flags("ReferenceAnchor", "Exponent", "ModeDependent"), reqs("ENC-025", "ENC-010")),
	num("exponent leading zero kept in preserve mode", `1E-02`, `1e-02`, `0.01`, flags("Exponent", "ModeDependent"), reqs("ENC-025", "ENC-010")),
	num("exponent leading zeros", `1e007`, `1e+007`, `10000000.0`, flags("Exponent", "ModeDependent"), reqs("ENC-025", "ENC-010")),
	num("fraction with exponent", `0.1e1`, `0.1e+1`, `1.0`, flags("Exponent", "ModeDependent"), reqs("ENC-025", "ENC-010")),
	num("zero exponent", `1e0`, `1e+0`, `1.0`, flags("Exponent", "ModeDependent"), reqs("ENC-025", "ENC-010")),
	num("negative zero exponent", `1e-0`, `1e-0`, `1.0`, flags("Exponent", "ModeDependent"), reqs("ENC-025", "ENC-010")),
	num("zero with exponent", `0e0`, `0e+0`, `0.0`, flags("Exponent", "ModeDependent"), reqs("ENC-025", "ENC-009")),
	num("negative zero with exponent", `-0e0`, `-0e+0`, `-0.0`, flags("Exponent", "NegativeZero", "ModeDependent"), reqs("ENC-025", "ENC-009")),
	num("small float in exponent form", `1.5e-7`, `1.5e-7`, `1.5e-7`, flags("ReferenceAnchor", "FloatLayout"), reqs("ENC-011", "ENC-025")),
	num("1e-7 uses exponent form", `1e-7`, `1e-7`, `1e-7`, flags("FloatLayout"), reqs("ENC-011", "ENC-025")),
	num("negative float in exponent form", `-1E-7`, `-1e-7`, `-1e-7`, flags("FloatLayout", "Exponent"), reqs("ENC-011", "ENC-025")),
	num("1e15 is the largest positional exponent", `1e15`, `1e+15`, `1000000000000000.0`, flags("ReferenceAnchor", "FloatLayout", "ModeDependent", "Boundary"), reqs("ENC-010", "ENC-025", "ENC-040")),
	num("1e16 switches to exponent form with '+'", `1e16`, `1e+16`, `1e+16`, flags("ReferenceAnchor", "FloatLayout", "Boundary"), reqs("ENC-011", "ENC-025", "ENC-040")),
	num("0.000001 is exponent form in lossy mode", `0.000001`, `0.000001`, `1e-6`, flags("ReferenceAnchor", "FloatLayout", "ModeDependent", "Boundary"), reqs("ENC-011", "ENC-025", "ENC-040")),
	num("0.00001 is the smallest positional exponent", `0.00001`, `0.00001`, `0.00001`, flags("ReferenceAnchor", "FloatLayout", "Boundary"), reqs("ENC-010")),
	num("0.0001", `0.0001`, `0.0001`, `0.0001`, flags("FloatLayout"), reqs("ENC-010")),
	num("positional with fraction", `123.456`, `123.456`, `123.456`, flags("FloatLayout"), reqs("ENC-010")),
	num("0.1", `0.1`, `0.1`, `0.1`, flags("FloatLayout"), reqs("ENC-010")),
	num("negative positional", `-1.5`, `-1.5`, `-1.5`, flags("FloatLayout"), reqs("ENC-009", "ENC-010")),
	num("fraction and negative exponent", `12.5e-1`, `12.5e-1`, `1.25`, flags("Exponent", "ModeDependent"), reqs("ENC-025", "ENC-029")),
	num("uppercase exponent with fraction", `1.5E+3`, `1.5e+3`, `1500.0`, flags("Exponent", "ModeDependent"), reqs("ENC-025", "ENC-010")),
	num("integer 100", `100`, `100`, `100`, flags("Integer"), reqs("ENC-008")),
	num("negative integer", `-42`, `-42`, `-42`, flags("Integer"), reqs("ENC-008")),
	num("u64 maximum", `18446744073709551615`, `18446744073709551615`, `18446744073709551615`, flags("ReferenceAnchor", "Integer", "Boundary"), reqs("ENC-024", "ENC-028")),
	num("u64 maximum + 1", `18446744073709551616`, `18446744073709551616`, `1.8446744073709552e+19`, flags("ReferenceAnchor", "BigInteger", "ModeDependent", "Boundary"), reqs("ENC-024", "ENC-028", "ENC-032")),
	num("i64 minimum", `-9223372036854775808`, `-9223372036854775808`, `-9223372036854775808`, flags("ReferenceAnchor", "Integer", "Boundary"), reqs("ENC-024", "ENC-028")),
	num("i64 minimum - 1", `-9223372036854775809`, `-9223372036854775809`, `-9.223372036854776e+18`, flags("ReferenceAnchor", "BigInteger", "ModeDependent", "Boundary"), reqs("ENC-024", "ENC-028")),
	num("i64 maximum", `9223372036854775807`, `9223372036854775807`, `9223372036854775807`, flags("Integer", "Boundary"), reqs("ENC-024", "ENC-028")),
	num("i64 maximum + 1 is still a u64", `9223372036854775808`, `9223372036854775808`, `9223372036854775808`, flags("Integer", "Boundary"), reqs("ENC-024", "ENC-028")),
	num("2^53 + 1 as an integer is exact", `9007199254740993`, `9007199254740993`, `9007199254740993`, flags("Integer"), reqs("ENC-024", "ENC-028")),
	num("10^20", `100000000000000000000`, `100000000000000000000`, `1e+20`, flags("ReferenceAnchor", "BigInteger", "ModeDependent"), reqs("ENC-024", "ENC-028")),
	num("30-digit integer", `123456789012345678901234567890`, `123456789012345678901234567890`, `1.2345678901234568e+29`, flags("BigInteger", "ModeDependent"), reqs("ENC-024", "ENC-029", "ENC-011")),
	num("1e400 overflows binary64", `1e400`, `1e+400`, `!`, flags("ReferenceAnchor", "OutOfRange", "ModeDependent"), reqs("ENC-025", "ENC-031")),
	num("-1e400 overflows binary64", `-1e400`, `-1e+400`, `!`, flags("OutOfRange", "ModeDependent"), reqs("ENC-025", "ENC-031")),
	num("exponent overflowing 32 bits with a non-zero significand", `1e99999999999`, `1e+99999999999`, `!`, flags("OutOfRange", "ModeDependent"), reqs("ENC-025", "ENC-031")),
	num("exponent overflowing 32 bits with a zero significand", `0e99999999999`, `0e+99999999999`, `0.0`, flags("OutOfRange", "ModeDependent"), reqs("ENC-025", "ENC-031")),
	num("negative exponent overflowing 32 bits", `1e-99999999999`, `1e-99999999999`, `0.0`, flags("OutOfRange", "ModeDependent"), reqs("ENC-025", "ENC-031")),
	num("1e-400 underflows to 0.0", `1e-400`, `1e-400`, `0.0`, flags("ReferenceAnchor", "OutOfRange", "ModeDependent"), reqs("ENC-025", "ENC-031")),
	num("-1e-400 underflows to -0.0", `-1e-400`, `-1e-400`, `-0.0`, flags("OutOfRange", "NegativeZero", "ModeDependent"), reqs("ENC-025", "ENC-031")),
	num("2.5e-324 rounds to the smallest subnormal", `2.5e-324`, `2.5e-324`, `5e-324`, flags("ReferenceAnchor", "LossyRounding", "ModeDependent"), reqs("ENC-029", "ENC-011")),
	num("smallest subnormal", `5e-324`, `5e-324`, `5e-324`, flags("FloatLayout", "Boundary"), reqs("ENC-011", "ENC-029")),
	num("9007199254740993.0 is not correctly rounded in lossy mode", `9007199254740993.0`, `9007199254740993.0`, `9007199254740994.0`, flags("ReferenceAnchor", "LossyRounding", "ModeDependent"), reqs("ENC-029", "ENC-032")),
	num("17-digit float drifts by one ulp in lossy mode", `0.10625857731859811`, `0.10625857731859811`, `0.10625857731859813`, flags("ReferenceAnchor", "LossyRounding", "ModeDependent"), reqs("ENC-029")),
	num("17-digit float 0.1+0.2 is exact", `0.30000000000000004`, `0.30000000000000004`, `0.30000000000000004`, flags("Float"), reqs("ENC-029", "ENC-010")),
	num("1 + 2^-52", `1.0000000000000002`, `1.0000000000000002`, `1.0000000000000002`, flags("Float"), reqs("ENC-029", "ENC-010")),
	num("largest finite binary64", `1.7976931348623157e308`, `1.7976931348623157e+308`, `1.7976931348623157e+308`, flags("Float", "Boundary"), reqs("ENC-025", "ENC-029")),

	// The preserve-mode private number key.
	v("private number object reads as a number in preserve mode only", `[{"$serde_json::private::Number":"1E5"}]`,
		out(`[1e+5]`), out(`[{"$serde_json::private::Number":"1E5"}]`), flags("ReferenceAnchor", "PrivateNumberKey", "ModeDependent"), reqs("ENC-026", "ENC-027", "ENC-041")),
	v("private number object at the top level", `{"$serde_json::private::Number":"1.50"}`,
		out(`1.50`), out(`{"$serde_json::private::Number":"1.50"}`), flags("PrivateNumberKey", "ModeDependent"), reqs("ENC-026", "ENC-027", "ENC-041")),
	v("private number object holding a big integer", `[{"$serde_json::private::Number":"18446744073709551616"}]`,
		out(`[18446744073709551616]`), out(`[{"$serde_json::private::Number":"18446744073709551616"}]`), flags("PrivateNumberKey", "ModeDependent"), reqs("ENC-026", "ENC-041")),
	v("private number object holding -0", `[{"$serde_json::private::Number":"-0"}]`,
		out(`[0]`), out(`[{"$serde_json::private::Number":"-0"}]`), flags("PrivateNumberKey", "NegativeZero", "ModeDependent"), reqs("ENC-026", "ENC-024")),
	v("private number key spelled with an escape", `[{"\u0024serde_json::private::Number":"2"}]`,
		out(`[2]`), out(`[{"$serde_json::private::Number":"2"}]`), flags("PrivateNumberKey", "EscapedKey", "ModeDependent"), reqs("ENC-026", "ENC-023")),
	v("private number object with a second member", `[{"$serde_json::private::Number":"1E5","a":1}]`,
		fail(ser), out(`[{"$serde_json::private::Number":"1E5","a":1}]`), flags("PrivateNumberKey", "ModeDependent"), reqs("ENC-026", "ENC-027")),
	v("private number object whose string is not a number", `[{"$serde_json::private::Number":"x"}]`,
		fail(ser), out(`[{"$serde_json::private::Number":"x"}]`), flags("PrivateNumberKey", "ModeDependent"), reqs("ENC-026", "ENC-027")),
	v("private number object whose string has whitespace", `[{"$serde_json::private::Number":" 1"}]`,
		fail(ser), out(`[{"$serde_json::private::Number":" 1"}]`), flags("PrivateNumberKey", "ModeDependent"), reqs("ENC-026", "ENC-027")),
	v("private number object whose value is not a string", `[{"$serde_json::private::Number":1}]`,
		fail(ser), out(`[{"$serde_json::private::Number":1}]`), flags("PrivateNumberKey", "ModeDependent"), reqs("ENC-026", "ENC-027")),
	v("private number key not in first position is an ordinary key", `[{"a":1,"$serde_json::private::Number":"1"}]`,
		out(`[{"$serde_json::private::Number":"1","a":1}]`), same, flags("PrivateNumberKey", "KeyOrder"), reqs("ENC-026")),

	// Whole-document nesting limit.
	v("127 nested arrays are accepted", nest(127, "[", "]", ""), out(nest(127, "[", "]", "")), same,
		flags("RecursionLimit", "Boundary"), reqs("ENC-021")),
	v("128 nested arrays are rejected", nest(128, "[", "]", ""), fail(ser), same,
		flags("RecursionLimit", "Boundary"), reqs("ENC-021")),
	v("127 nested objects are accepted", nest(126, `{"a":`, "}", "{}"), out(nest(126, `{"a":`, "}", "{}")), same,
		flags("RecursionLimit", "Boundary"), reqs("ENC-021")),
	v("128 nested objects are rejected", nest(127, `{"a":`, "}", "{}"), fail(ser), same,
		flags("RecursionLimit", "Boundary"), reqs("ENC-021")),
	v("128 levels mixing arrays and objects are rejected", nest(63, `[{"a":`, "}]", `[{}]`), fail(ser), same,
		flags("RecursionLimit", "Boundary"), reqs("ENC-021")),

	// Payload validation (object or array root, depth <= 32, scalars count).
	p("empty object payload", `{}`, out(`{}`), same, flags("PayloadEnvelope"), reqs("MSG-035")),
	p("empty array payload", `[]`, out(`[]`), same, flags("PayloadEnvelope"), reqs("MSG-035")),
	p("payload members are sorted", `{ "b" : 1 ,
 "a" : "é" }`, out(`{"a":"é","b":1}`), same, flags("KeyOrder", "Whitespace"), reqs("MSG-038", "ENC-003")),
	p("number payload is not an envelope", `5`, fail("InvalidJsonEnvelope"), same, flags("PayloadEnvelope", "Scalar"), reqs("MSG-035")),
	p("null payload is not an envelope", `null`, fail("InvalidJsonEnvelope"), same, flags("PayloadEnvelope", "Scalar"), reqs("MSG-035")),
	p("string payload is not an envelope", `"x"`, fail("InvalidJsonEnvelope"), same, flags("PayloadEnvelope", "Scalar"), reqs("MSG-035")),
	p("boolean payload is not an envelope", `true`, fail("InvalidJsonEnvelope"), same, flags("PayloadEnvelope", "Scalar"), reqs("MSG-035")),
	p("1e400 payload: not an envelope in preserve mode, unreadable in lossy mode", `1e400`,
		fail("InvalidJsonEnvelope"), fail(ser), flags("PayloadEnvelope", "OutOfRange", "ModeDependent"), reqs("MSG-035", "ENC-031")),
	p("private number object is a scalar payload in preserve mode only", `{"$serde_json::private::Number":"1"}`,
		fail("InvalidJsonEnvelope"), out(`{"$serde_json::private::Number":"1"}`), flags("PayloadEnvelope", "PrivateNumberKey", "ModeDependent"), reqs("MSG-035", "ENC-026", "ENC-027")),
	p("31 nested arrays around a number are accepted", nest(31, "[", "]", "1"), out(nest(31, "[", "]", "1")), same,
		flags("PayloadDepth", "Boundary", "ReferenceAnchor"), reqs("MSG-036")),
	p("32 nested arrays around a number are rejected", nest(32, "[", "]", "1"), fail("JsonPayloadTooDeep"), same,
		flags("PayloadDepth", "Boundary", "ReferenceAnchor"), reqs("MSG-036")),
	p("32 nested empty arrays are accepted", nest(32, "[", "]", ""), out(nest(32, "[", "]", "")), same,
		flags("PayloadDepth", "Boundary", "ReferenceAnchor"), reqs("MSG-036")),
	p("33 nested empty arrays are rejected", nest(33, "[", "]", ""), fail("JsonPayloadTooDeep"), same,
		flags("PayloadDepth", "Boundary", "ReferenceAnchor"), reqs("MSG-036")),
	p("31 nested objects around a string are accepted", nest(31, `{"k":`, "}", `"v"`), out(nest(31, `{"k":`, "}", `"v"`)), same,
		flags("PayloadDepth", "Boundary"), reqs("MSG-036")),
	p("32 nested objects around null are rejected", nest(32, `{"k":`, "}", `null`), fail("JsonPayloadTooDeep"), same,
		flags("PayloadDepth", "Boundary"), reqs("MSG-036")),
	p("32 nested objects, the innermost empty, are accepted", nest(31, `{"k":`, "}", `{}`), out(nest(31, `{"k":`, "}", `{}`)), same,
		flags("PayloadDepth", "Boundary"), reqs("MSG-036")),
	p("33 nested objects, the innermost empty, are rejected", nest(32, `{"k":`, "}", `{}`), fail("JsonPayloadTooDeep"), same,
		flags("PayloadDepth", "Boundary"), reqs("MSG-036")),
	p("a deep scalar in one branch decides, keys do not count", `{"shallow":1,"deep":`+nest(30, "[", "]", "true")+`}`,
		out(`{"deep":`+nest(30, "[", "]", "true")+`,"shallow":1}`), same, flags("PayloadDepth", "Boundary"), reqs("MSG-036")),
	p("one level deeper in the same shape is rejected", `{"shallow":1,"deep":`+nest(31, "[", "]", "true")+`}`,
		fail("JsonPayloadTooDeep"), same, flags("PayloadDepth", "Boundary"), reqs("MSG-036")),
	p("127 nested arrays parse but are too deep", nest(127, "[", "]", ""), fail("JsonPayloadTooDeep"), same,
		flags("PayloadDepth", "RecursionLimit"), reqs("MSG-036", "ENC-021")),
	p("128 nested arrays fail the reader before the depth rule", nest(128, "[", "]", ""), fail(ser), same,
		flags("PayloadDepth", "RecursionLimit"), reqs("ENC-021")),
	p("mode-dependent payload numbers", `{"n":[1.50,1e2,-0,18446744073709551616]}`,
		out(`{"n":[1.50,1e+2,0,18446744073709551616]}`), out(`{"n":[1.5,100.0,-0.0,1.8446744073709552e+19]}`),
		flags("ModeDependent", "NonPortable"), reqs("MSG-038", "ENC-041")),
	// The powers of ten of the lossy conversion are the correctly rounded ones: a power built by
	// repeated multiplication gives 1.0000000000000002e+300, 9.999999999999999e-301 and
	// 1.2345678900000002e+298 for these three.
	num("1e300 needs the correctly rounded 10^300", `1e300`, `1e+300`, `1e+300`, flags("Exponent"), reqs("ENC-029", "ENC-030")),
	num("1e-300 divides by the correctly rounded 10^300", `1e-300`, `1e-300`, `1e-300`, flags("Exponent"), reqs("ENC-029", "ENC-030")),
	num("123456789e290 multiplies by the correctly rounded 10^290", `123456789e290`, `123456789e+290`, `1.23456789e+298`, flags("Exponent", "ModeDependent"), reqs("ENC-029", "ENC-030", "ENC-032")),
}
