package main

import (
	"fmt"
	"strings"
)

// contractCompileRow is one contract schema compiled on its own: an empty err means it
// compiles; otherwise err is the reference's SchemaError variant and msg its exact text. bytes
// is the length of the schema's compact JSON as the reference writes it, when that differs
// from the text's (0: the text is compact).
type contractCompileRow struct {
	meta
	schema   string
	err, msg string
	bytes    int
}

// compactAs sets the length of r's compact JSON.
func compactAs(r contractCompileRow, n int) contractCompileRow {
	r.bytes = n
	return r
}

// contractValidateRow is one value validated against contractValidationSchema: an empty path
// means it passes; otherwise path and msg are the first violation's.
type contractValidateRow struct {
	meta
	value     string
	path, msg string
}

// contractMaxBytes, contractMaxDepth and contractMaxMembers are the bounds of RUN-020.
const (
	contractMaxBytes   = 32768
	contractMaxDepth   = 32
	contractMaxMembers = 128
)

var (
	contractCompileReqs  = []string{"RUN-020"}
	contractValidateReqs = []string{"RUN-021"}
)

// contractSizedSchema returns an object schema of exactly n bytes of compact JSON whose
// description starts with head and is padded with "x".
func contractSizedSchema(n int, head string) string {
	return contractSized(n, `{"description":"`, head, `","type":"object"}`)
}

// contractSized returns prefix, head, a run of "x" and suffix, n bytes in all.
func contractSized(n int, prefix, head, suffix string) string {
	return prefix + head + strings.Repeat("x", n-len(prefix)-len(head)-len(suffix)) + suffix
}

// contractNestItems wraps inner in n schemas of the form {"items":…}, so inner sits n levels
// below the root.
func contractNestItems(n int, inner string) string {
	return strings.Repeat(`{"items":`, n) + inner + strings.Repeat(`}`, n)
}

// contractNestProperties wraps inner in n schemas of the form {"properties":{"a":…}}.
func contractNestProperties(n int, inner string) string {
	return strings.Repeat(`{"properties":{"a":`, n) + inner + strings.Repeat(`}}`, n)
}

// contractManyProperties returns an object schema with n properties "p000", "p001", ….
func contractManyProperties(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"p%03d":{}`, i)
	}
	return `{"type":"object","properties":{` + strings.Join(parts, ",") + `}}`
}

// contractManyEnum returns a schema whose enum holds the integers 0 to n-1.
func contractManyEnum(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprint(i)
	}
	return `{"enum":[` + strings.Join(parts, ",") + `]}`
}

func contractCompileCases() []contractCompileRow {
	row := func(comment string, flags []string, schema, err, msg string) contractCompileRow {
		return contractCompileRow{meta: meta{comment, append([]string{"ContractCompile"}, flags...), contractCompileReqs}, schema: schema, err: err, msg: msg}
	}
	ok := func(comment string, flags []string, schema string) contractCompileRow {
		return row(comment, flags, schema, "", "")
	}
	bound := []string{"Boundary"}
	large := []string{"Boundary", "LargeInput"}
	order := []string{"SchemaKeyOrder"}
	checks := []string{"CheckOrder"}
	const tooLarge = "schema exceeds byte limit of 32768"
	const tooDeep = "schema exceeds depth limit of 32"
	return []contractCompileRow{
		// Size (compact JSON bytes, not characters).
		ok("a schema of exactly 32,768 bytes of compact JSON", large, contractSizedSchema(contractMaxBytes, "")),
		row("a schema of 32,769 bytes", large, contractSizedSchema(contractMaxBytes+1, ""), "TooLarge", tooLarge),
		ok("32,768 bytes with 100 two-byte characters: the bound counts bytes", append([]string{"Unicode"}, large...),
			contractSizedSchema(contractMaxBytes, strings.Repeat("é", 100))),
		row("32,769 bytes but only 32,669 characters: refused", append([]string{"Unicode"}, large...),
			contractSizedSchema(contractMaxBytes+1, strings.Repeat("é", 100)), "TooLarge", tooLarge),
		row("32,769 bytes with an unknown keyword too: the size is checked first", append([]string{"CheckOrder"}, large...),
			`{"oneOf":[],`+contractSizedSchema(contractMaxBytes+1-len(`"oneOf":[],`), "")[1:], "TooLarge", tooLarge),
		compactAs(ok("32,776 bytes of text with spaces, 32,768 bytes once compact: the bound counts compact JSON", large,
			contractSized(contractMaxBytes+8, `{ "description" : "`, "", `" , "type" : "object" }`)), contractMaxBytes),
		compactAs(row("32,768 bytes of text whose 1e3 the reference writes back as 1e+3: 32,769 bytes compact", append([]string{"Exponent"}, large...),
			contractSized(contractMaxBytes, `{"description":"`, "", `","maximum":1e3,"type":"number"}`), "TooLarge", tooLarge), contractMaxBytes+1),
		// Depth (schema objects below the root).
		ok("items nested 32 levels below the root", bound, contractNestItems(contractMaxDepth, `{}`)),
		row("items nested 33 levels below the root", bound, contractNestItems(contractMaxDepth+1, `{}`), "TooDeep", tooDeep),
		ok("properties nested 32 levels below the root", bound, contractNestProperties(contractMaxDepth, `{"type":"null"}`)),
		row("properties nested 33 levels below the root", bound, contractNestProperties(contractMaxDepth+1, `{"type":"null"}`), "TooDeep", tooDeep),
		ok("16 levels of properties then 16 of items", bound, contractNestProperties(16, contractNestItems(16, `{}`))),
		row("16 levels of items then 17 of properties", bound, contractNestItems(16, contractNestProperties(17, `{}`)), "TooDeep", tooDeep),
		row("a number 32 levels below the root is not an object: the path names every level", bound,
			contractNestItems(contractMaxDepth, `5`), "ExpectedObject", "$"+strings.Repeat(".items", contractMaxDepth)+": schema must be an object"),
		row("a number 33 levels below the root: the depth is checked before the object", append([]string{"CheckOrder"}, bound...),
			contractNestItems(contractMaxDepth+1, `5`), "TooDeep", tooDeep),
		ok("enum values and annotations are no schemas: 40 levels of arrays inside them do not count", nil,
			`{"default":`+strings.Repeat("[", 40)+strings.Repeat("]", 40)+`,"enum":[`+strings.Repeat("[", 40)+strings.Repeat("]", 40)+`]}`),
		row("the root is an array", nil, `[]`, "ExpectedObject", "$: schema must be an object"),
		row("a property schema that is a boolean", nil, `{"properties":{"k":true}}`, "ExpectedObject", `$["k"]: schema must be an object`),
		// Unknown keys, checked in byte order before anything else.
		row("oneOf is not in the subset", nil, `{"type":"object","oneOf":[]}`, "UnsupportedKeyword", "$: unsupported schema keyword oneOf"),
		row("$ref is not in the subset", nil, `{"$ref":"#"}`, "UnsupportedKeyword", "$: unsupported schema keyword $ref"),
		row("keywords are case-sensitive", nil, `{"Type":"string"}`, "UnsupportedKeyword", "$: unsupported schema keyword Type"),
		row("two unknown keys: the first in byte order is named, not the first in the text", order,
			`{"zz":1,"aa":2}`, "UnsupportedKeyword", "$: unsupported schema keyword aa"),
		row("upper case sorts before lower case", order, `{"zeta":1,"Zeta":1}`, "UnsupportedKeyword", "$: unsupported schema keyword Zeta"),
		row("an unknown key is checked before a bad type", checks, `{"type":"float","pattern":"x"}`, "UnsupportedKeyword", "$: unsupported schema keyword pattern"),
		row("an unknown key is checked before a keyword of another type, even after it in byte order", checks,
			`{"type":"string","items":{},"zzz":1}`, "UnsupportedKeyword", "$: unsupported schema keyword zzz"),
		row("the keyword is named as it is, without quotes", nil, `{"a\"b":1}`, "UnsupportedKeyword", `$: unsupported schema keyword a"b`),
		row("inside a property: the path quotes the property name", nil,
			`{"type":"object","properties":{"a b":{"format":"date"}}}`, "UnsupportedKeyword", `$["a b"]: unsupported schema keyword format`),
		row("inside items", nil, `{"type":"array","items":{"const":1}}`, "UnsupportedKeyword", "$.items: unsupported schema keyword const"),
		row("a property name with quotes is escaped in the path", []string{"StringEscape"},
			`{"properties":{"say \"hi\"":{"x":1}}}`, "UnsupportedKeyword", `$["say \"hi\""]: unsupported schema keyword x`),
		row("properties are compiled in byte order of their names", order,
			`{"properties":{"b":{"type":"x"},"a":{"type":"y"}}}`, "InvalidKeyword", `$["a"]: invalid type: unsupported type "y"`),
		// The type keyword.
		ok("type null", nil, `{"type":"null"}`),
		ok("type boolean with an enum", nil, `{"type":"boolean","enum":[true]}`),
		compactAs(ok("type number with fractional and exponent bounds (the reference writes 1e3 as 1e+3)", []string{"Exponent"},
			`{"type":"number","minimum":-1.5,"maximum":1e3}`), 47),
		ok("type integer whose minimum equals its maximum", bound, `{"type":"integer","minimum":1,"maximum":1}`),
		ok("type string with zero lengths", nil, `{"type":"string","minLength":0,"maxLength":0}`),
		ok("type array with every array keyword", nil, `{"type":"array","items":{},"minItems":1,"maxItems":2}`),
		ok("type object with every object keyword", nil, `{"type":"object","properties":{},"required":[],"additionalProperties":false}`),
		ok("every annotation and enum beside a type", nil,
			`{"$id":"x","$schema":"y","default":1,"description":"d","enum":[1],"examples":[],"title":"t","type":"number"}`),
		ok("the empty schema", nil, `{}`),
		ok("annotations only", nil, `{"title":"anything"}`),
		ok("additionalProperties alone makes an object schema", nil, `{"additionalProperties":true}`),
		row("type is a number", nil, `{"type":5}`, "InvalidKeyword", "$: invalid type: must be a string"),
		row("type is an array of names", nil, `{"type":["string","null"]}`, "InvalidKeyword", "$: invalid type: must be a string"),
		row("type is null", nil, `{"type":null}`, "InvalidKeyword", "$: invalid type: must be a string"),
		row("type float", nil, `{"type":"float"}`, "InvalidKeyword", `$: invalid type: unsupported type "float"`),
		row("type names are case-sensitive", nil, `{"type":"String"}`, "InvalidKeyword", `$: invalid type: unsupported type "String"`),
		row("an empty type name", nil, `{"type":""}`, "InvalidKeyword", `$: invalid type: unsupported type ""`),
		row("a type name with a tab is quoted with escapes", []string{"StringEscape"}, `{"type":"tab\there"}`,
			"InvalidKeyword", `$: invalid type: unsupported type "tab\there"`),
		row("a type name with a non-ASCII letter is quoted as it is", []string{"Unicode"},
			`{"properties":{"é":{"type":"nümber"}}}`, "InvalidKeyword", `$["é"]: invalid type: unsupported type "nümber"`),
		row("an unsupported type beside a numeric bound: the type is named", checks, `{"type":"float","minimum":1}`,
			"InvalidKeyword", `$: invalid type: unsupported type "float"`),
		// Keywords of another type.
		row("properties on a string", nil, `{"type":"string","properties":{}}`, "InvalidKeyword", "$: invalid properties: does not apply to string"),
		row("minLength on an integer", nil, `{"type":"integer","minLength":1}`, "InvalidKeyword", "$: invalid minLength: does not apply to integer"),
		row("maximum on a boolean", nil, `{"type":"boolean","maximum":1}`, "InvalidKeyword", "$: invalid maximum: does not apply to boolean"),
		row("required on an array", nil, `{"type":"array","required":[]}`, "InvalidKeyword", "$: invalid required: does not apply to array"),
		row("minItems on an object", nil, `{"type":"object","minItems":1}`, "InvalidKeyword", "$: invalid minItems: does not apply to object"),
		row("enum is allowed on null, items is not", nil, `{"type":"null","enum":[null],"items":{}}`, "InvalidKeyword", "$: invalid items: does not apply to null"),
		row("minLength without a type", nil, `{"minLength":1}`, "InvalidKeyword", "$: invalid minLength: does not apply to any"),
		row("two keywords of other types: items comes before properties in byte order", order,
			`{"type":"string","properties":{},"items":{}}`, "InvalidKeyword", "$: invalid items: does not apply to string"),
		row("maxLength comes before minimum in byte order", order,
			`{"type":"null","minimum":0,"maxLength":1}`, "InvalidKeyword", "$: invalid maxLength: does not apply to null"),
		row("items without a type makes an array schema, so maxLength does not apply", nil,
			`{"maxLength":1,"items":{}}`, "InvalidKeyword", "$: invalid maxLength: does not apply to array"),
		row("required without a type makes an object schema, so minimum does not apply", nil,
			`{"required":[],"minimum":1}`, "InvalidKeyword", "$: invalid minimum: does not apply to object"),
		row("object and array keywords mixed without a type", nil, `{"properties":{},"items":{}}`,
			"InvalidKeyword", "$: invalid type: is required when object and array keywords are mixed"),
		row("required and maxItems mixed without a type", nil, `{"required":["a"],"maxItems":1}`,
			"InvalidKeyword", "$: invalid type: is required when object and array keywords are mixed"),
		row("with type array, properties is a keyword of another type, not a mix", nil, `{"type":"array","properties":{},"items":{}}`,
			"InvalidKeyword", "$: invalid properties: does not apply to array"),
		// Keyword values.
		ok("128 properties", bound, contractManyProperties(contractMaxMembers)),
		row("129 properties", bound, contractManyProperties(contractMaxMembers+1), "TooManyProperties", "schema exceeds property limit of 128"),
		ok("an enum of 128 values", bound, contractManyEnum(contractMaxMembers)),
		row("an enum of 129 values", bound, contractManyEnum(contractMaxMembers+1), "TooManyEnumValues", "schema exceeds enum limit of 128"),
		row("properties is an array", nil, `{"type":"object","properties":[]}`, "InvalidKeyword", "$: invalid properties: must be an object"),
		row("required is a string", nil, `{"type":"object","required":"a"}`, "InvalidKeyword", "$: invalid required: must be an array"),
		row("required holds a number", nil, `{"type":"object","required":[1]}`, "InvalidKeyword", "$: invalid required: must contain strings"),
		row("required repeats a name", nil, `{"type":"object","required":["a","b","a"]}`, "InvalidKeyword", "$: invalid required: cannot contain duplicates"),
		row("additionalProperties is a schema", nil, `{"type":"object","additionalProperties":{}}`,
			"InvalidKeyword", "$: invalid additionalProperties: must be a boolean in the Splash subset"),
		row("enum is an object", nil, `{"enum":{}}`, "InvalidKeyword", "$: invalid enum: must be an array"),
		row("a negative minLength", nil, `{"type":"string","minLength":-1}`, "InvalidKeyword", "$: invalid minLength: must be a non-negative integer"),
		row("a minLength written 1.0", nil, `{"type":"string","minLength":1.0}`, "InvalidKeyword", "$: invalid minLength: must be a non-negative integer"),
		row("a maxItems of 2^64", nil, `{"type":"array","maxItems":18446744073709551616}`, "InvalidKeyword", "$: invalid maxItems: must be a non-negative integer"),
		row("minLength above maxLength", nil, `{"type":"string","minLength":3,"maxLength":2}`, "InvalidKeyword", "$: invalid minLength: cannot exceed maxLength"),
		row("minItems above maxItems", nil, `{"type":"array","minItems":2,"maxItems":1}`, "InvalidKeyword", "$: invalid minItems: cannot exceed maxItems"),
		row("a minimum that is a string", nil, `{"type":"number","minimum":"1"}`, "InvalidKeyword", "$: invalid minimum: must be a supported JSON number"),
		row("minimum above maximum", nil, `{"type":"number","minimum":2,"maximum":1.5}`, "InvalidKeyword", "$: invalid minimum: cannot exceed maximum"),
		row("two bad values: properties is checked before required", checks,
			`{"type":"object","required":1,"properties":[]}`, "InvalidKeyword", "$: invalid properties: must be an object"),
		row("a bad property schema is found before a bad required", checks,
			`{"type":"object","properties":{"a":{"type":"x"}},"required":5}`, "InvalidKeyword", `$["a"]: invalid type: unsupported type "x"`),
		row("a bad length is found before a bad enum", checks,
			`{"type":"string","minLength":-1,"enum":5}`, "InvalidKeyword", "$: invalid minLength: must be a non-negative integer"),
		row("a property name with a no-break space: not printable, so escaped in the path", []string{"StringEscape", "Unicode"},
			"{\"properties\":{\"a\u00a0b\":{\"x\":1}}}", "UnsupportedKeyword", `$["a\u{a0}b"]: unsupported schema keyword x`),
		row("a property name with a grapheme extender of category Mc is escaped in the path", []string{"StringEscape", "Unicode"},
			"{\"properties\":{\"\u0995\u09be\":{\"type\":\"x\"}}}", "InvalidKeyword", "$[\"\u0995\\u{9be}\"]: invalid type: unsupported type \"x\""),
	}
}

// contractValidationSchema is the schema of every validation row.
const contractValidationSchema = `{"type":"object","properties":{` +
	`"level":{"enum":[1,"high",null,{"k":[true],"m":0}]},` +
	`"owner":{"type":"object","properties":{"id":{"type":"integer","minimum":1},"name":{"type":"string"}},"required":["name","id"],"additionalProperties":false},` +
	`"steps":{"type":"array","items":{"type":"object","properties":{"run":{"type":"string"},"say \"hi\"\t":{"type":"null"}},"required":["run"]}},` +
	`"tags":{"type":"array","items":{"type":"string","enum":["bug","docs","ops"]},"minItems":1,"maxItems":4},` +
	`"title":{"type":"string","minLength":2,"maxLength":5}` +
	`},"required":["title","tags"],"additionalProperties":false}`

func contractValidateCases() []contractValidateRow {
	row := func(comment string, flags []string, value, path, msg string) contractValidateRow {
		return contractValidateRow{meta{comment, append([]string{"ContractValidation"}, flags...), contractValidateReqs}, value, path, msg}
	}
	pass := func(comment string, flags []string, value string) contractValidateRow {
		return row(comment, flags, value, "", "")
	}
	uni := []string{"Unicode"}
	order := []string{"CheckOrder"}
	return []contractValidateRow{
		pass("the two required members", nil, `{"title":"ab","tags":["bug"]}`),
		pass("every member", nil, `{"title":"abcde","tags":["bug","docs","ops","bug"],"owner":{"id":7,"name":"Ada"},"level":"high",`+
			`"steps":[{"run":"make"},{"run":"test","say \"hi\"\t":null}]}`),
		pass("a title of 5 characters in 9 bytes", uni, `{"title":"éééé✓","tags":["ops"]}`),
		pass("a title of 2 characters outside the BMP: 8 bytes, 4 UTF-16 units", uni, `{"title":"😀😀","tags":["ops"]}`),
		pass("a title of a letter and a combining accent: 2 scalar values", uni, `{"title":"e\u0301","tags":["ops"]}`),
		pass("an integer written 1.0", nil, `{"title":"ab","tags":["bug"],"owner":{"id":1.0,"name":"x"}}`),
		pass("enum: null", nil, `{"title":"ab","tags":["bug"],"level":null}`),
		pass("enum: an object equal as a JSON value, its members in another order", nil, `{"title":"ab","tags":["bug"],"level":{"m":0,"k":[true]}}`),
		row("the root is an array", nil, `[]`, "$", "expected object"),
		row("title is a number", nil, `{"title":5,"tags":["bug"]}`, `$["title"]`, "expected string"),
		row("title of 1 character outside the BMP (2 UTF-16 units)", uni, `{"title":"😀","tags":["ops"]}`, `$["title"]`, "string is shorter than minLength"),
		row("title of 6 two-byte characters", uni, `{"title":"éééééé","tags":["ops"]}`, `$["title"]`, "string is longer than maxLength"),
		row("tags empty", nil, `{"title":"ab","tags":[]}`, `$["tags"]`, "array has fewer than minItems values"),
		row("five tags", nil, `{"title":"ab","tags":["bug","bug","bug","bug","bug"]}`, `$["tags"]`, "array has more than maxItems values"),
		row("a tag outside the enum", nil, `{"title":"ab","tags":["bug","feature"]}`, `$["tags"][1]`, "value is not in enum"),
		row("a tag that is a number: the type is checked before the enum", order, `{"title":"ab","tags":["bug",3]}`, `$["tags"][1]`, "expected string"),
		row("two bad tags: the first index is reported", order, `{"title":"ab","tags":["x",3]}`, `$["tags"][0]`, "value is not in enum"),
		row("five tags of the wrong type: the length is checked before the items", order, `{"title":"ab","tags":[1,2,3,4,5]}`, `$["tags"]`, "array has more than maxItems values"),
		row("title missing", nil, `{"tags":["bug"]}`, "$", `missing required property "title"`),
		row("both required members missing: tags comes first in byte order", order, `{}`, "$", `missing required property "tags"`),
		row("a required member missing and another one broken: required keys are checked first", order, `{"title":5}`, "$", `missing required property "tags"`),
		row("two broken members: tags comes before title in byte order", order, `{"title":5,"tags":[1]}`, `$["tags"][0]`, "expected string"),
		row("the fourth step lacks run", nil, `{"title":"ab","tags":["bug"],"steps":[{"run":"a"},{"run":"b"},{"run":"c"},{}]}`,
			`$["steps"][3]`, `missing required property "run"`),
		row("the fourth step's run is a number", nil, `{"title":"ab","tags":["bug"],"steps":[{"run":"a"},{"run":"b"},{"run":"c"},{"run":5}]}`,
			`$["steps"][3]["run"]`, "expected string"),
		row("a member name with a quote and a tab is escaped in the path", []string{"StringEscape"},
			`{"title":"ab","tags":["bug"],"steps":[{"run":"a","say \"hi\"\t":0}]}`, `$["steps"][0]["say \"hi\"\t"]`, "expected null"),
		row("owner id below its minimum", nil, `{"title":"ab","tags":["bug"],"owner":{"id":0,"name":"x"}}`, `$["owner"]["id"]`, "number is below minimum"),
		row("owner id with a fraction", nil, `{"title":"ab","tags":["bug"],"owner":{"id":1.5,"name":"x"}}`, `$["owner"]["id"]`, "expected integer"),
		row("owner id as a string", nil, `{"title":"ab","tags":["bug"],"owner":{"id":"1","name":"x"}}`, `$["owner"]["id"]`, "expected integer"),
		row("owner with neither member: id comes first in byte order", order, `{"title":"ab","tags":["bug"],"owner":{}}`,
			`$["owner"]`, `missing required property "id"`),
		row("an extra member in owner", nil, `{"title":"ab","tags":["bug"],"owner":{"id":1,"name":"x","x":1}}`,
			`$["owner"]`, `additional property "x" is not allowed`),
		row("an extra member at the root", nil, `{"title":"ab","tags":["bug"],"extra":true}`, "$", `additional property "extra" is not allowed`),
		row("an extra member before a broken one in byte order", order, `{"title":"a","tags":["bug"],"aaa":1}`, "$", `additional property "aaa" is not allowed`),
		row("a broken member before an extra one in byte order", order, `{"title":"a","tags":["bug"],"zzz":1}`, `$["title"]`, "string is shorter than minLength"),
		row("an extra member whose name needs escapes", []string{"StringEscape"}, `{"title":"ab","tags":["bug"],"a\"b\n":1}`,
			"$", `additional property "a\"b\n" is not allowed`),
		row("an extra member with a non-ASCII name", uni, `{"title":"ab","tags":["bug"],"ünknown":1}`, "$", `additional property "ünknown" is not allowed`),
		row("level outside the enum", nil, `{"title":"ab","tags":["bug"],"level":2}`, `$["level"]`, "value is not in enum"),
		row("level 1.0 is not the enum's 1: numbers compare by their JSON text", nil, `{"title":"ab","tags":["bug"],"level":1.0}`, `$["level"]`, "value is not in enum"),
		row("level is an object with one member more than the enum's", nil, `{"title":"ab","tags":["bug"],"level":{"k":[true],"m":0,"j":1}}`, `$["level"]`, "value is not in enum"),
		row("level is the string HIGH", nil, `{"title":"ab","tags":["bug"],"level":"HIGH"}`, `$["level"]`, "value is not in enum"),
		row("an extra member named with an ideographic space: escaped in the message", []string{"StringEscape", "Unicode"},
			"{\"title\":\"ab\",\"tags\":[\"bug\"],\"\u3000\":1}", "$", `additional property "\u{3000}" is not allowed`),
	}
}
