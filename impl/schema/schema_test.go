package schema

import (
	"errors"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
)

func jv(t testing.TB, s string) canonjson.Value {
	t.Helper()
	v, err := canonjson.ParseValue([]byte(s), canonjson.Preserve)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

// Spec: RUN-021
func TestPathsQuoteLikeRustDebug(t *testing.T) {
	cases := map[string]string{
		"plain":     `"plain"`,
		"q\"b\\":    `"q\"b\\"`,
		"t\tn\nr\r": `"t\tn\nr\r"`,
		"\x00":      `"\0"`,
		"\x01\x7f":  `"\u{1}\u{7f}"`,
		"é✓":        `"é✓"`,
		"a\u0301":   `"a\u{301}"`,
		"'":         `"'"`,
		// Separators other than the ASCII space, format and private-use characters are not
		// printable; grapheme extenders of every category are escaped, emoji modifiers are not.
		"a\u00a0b":   `"a\u{a0}b"`,
		"\u3000":     `"\u{3000}"`,
		"\u2028":     `"\u{2028}"`,
		"\u00ad":     `"\u{ad}"`,
		"\u200c":     `"\u{200c}"`,
		"\ue000":     `"\u{e000}"`,
		"\u09be":     `"\u{9be}"`,
		"\uff9e":     `"\u{ff9e}"`,
		"\U0001f3fb": "\"\U0001f3fb\"",
	}
	for in, want := range cases {
		if got := rustDebugString(in); got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
	e := &Error{Kind: ErrUnsupportedKeyword, Path: "$", Keyword: "oneOf"}
	if got, want := e.Error(), "$: unsupported schema keyword oneOf"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

func compile(t testing.TB, s string) *Schema {
	t.Helper()
	sc, err := Compile(jv(t, s))
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return sc
}

const releaseSchema = `{"type":"object","properties":{"title":{"type":"string","minLength":1,"maxLength":80},` +
	`"priority":{"type":"integer","minimum":1,"maximum":5},"labels":{"type":"array","items":{"type":"string","enum":["bug","feature"]},"maxItems":3}},` +
	`"required":["title","priority"],"additionalProperties":false}`

// Spec: RUN-021
func TestSchemaValidation(t *testing.T) {
	s := compile(t, releaseSchema)
	cases := []struct {
		value, violation string // "" = valid
	}{
		{`{"title":"Ship Splash","priority":1,"labels":["feature"]}`, ""},
		{`{"title":"Ship Splash"}`, `$: missing required property "priority"`},
		{`{}`, `$: missing required property "priority"`}, // required keys are checked in byte order
		{`{"title":"Ship","priority":1,"extra":true}`, `$: additional property "extra" is not allowed`},
		{`{"title":"Ship","priority":1,"labels":["docs"]}`, `$["labels"][0]: value is not in enum`},
		{`{"title":"","priority":1}`, `$["title"]: string is shorter than minLength`},
		{`{"title":"` + strings.Repeat("é", 80) + `","priority":1}`, ""}, // 80 characters, 160 bytes
		{`{"title":"` + strings.Repeat("é", 81) + `","priority":1}`, `$["title"]: string is longer than maxLength`},
		{`{"title":"t","priority":0}`, `$["priority"]: number is below minimum`},
		{`{"title":"t","priority":6}`, `$["priority"]: number is above maximum`},
		{`{"title":"t","priority":2.5}`, `$["priority"]: expected integer`},
		{`{"title":"t","priority":"2"}`, `$["priority"]: expected integer`},
		{`{"title":"t","priority":2.0}`, ""},
		{`{"title":"t","priority":2e0}`, ""},
		{`{"title":"t","priority":1,"labels":["bug","bug","bug","bug"]}`, `$["labels"]: array has more than maxItems values`},
		{`[]`, `$: expected object`},
		// Members are checked in byte order: "extra" < "priority".
		{`{"title":"t","priority":9,"extra":1}`, `$: additional property "extra" is not allowed`},
	}
	for _, c := range cases {
		err := s.Validate(jv(t, c.value))
		if c.violation == "" {
			if err != nil {
				t.Fatalf("%s: %v", c.value, err)
			}
			continue
		}
		var v *Violation
		if !errors.As(err, &v) || err.Error() != c.violation {
			t.Fatalf("%s: violation = %v, want %s", c.value, err, c.violation)
		}
	}
	types := map[string][2]string{
		`{"type":"null"}`:               {`null`, `$: expected null`},
		`{"type":"boolean"}`:            {`true`, `$: expected boolean`},
		`{"type":"number"}`:             {`-1.5e3`, `$: expected number`},
		`{"type":"string"}`:             {`"s"`, `$: expected string`},
		`{"type":"array","minItems":1}`: {`[0]`, `$: expected array`},
		`{}`:                            {`{"anything":[1]}`, ""},
		`{"enum":[1,"a",{"k":[true]}]}`: {`{"k":[true]}`, ""},
	}
	for schema, c := range types {
		s := compile(t, schema)
		if err := s.Validate(jv(t, c[0])); err != nil {
			t.Fatalf("%s accepts %s: %v", schema, c[0], err)
		}
		if c[1] != "" {
			if err := s.Validate(jv(t, `{"other":0}`)); err == nil || err.Error() != c[1] {
				t.Fatalf("%s: %v, want %s", schema, err, c[1])
			}
		}
	}
	if err := compile(t, `{"enum":[1,"a"]}`).Validate(jv(t, `1.0`)); err == nil || err.Error() != "$: value is not in enum" {
		t.Fatalf("1.0 in [1]: %v (serde_json value equality keeps 1 and 1.0 apart)", err)
	}
	if err := compile(t, `{"properties":{"a\"b":{"type":"null"}}}`).Validate(jv(t, `{"a\"b":1}`)); err == nil || err.Error() != `$["a\"b"]: expected null` {
		t.Fatalf("escaped path: %v", err)
	}
}

// Spec: RUN-022
func TestSchemaExactNumbers(t *testing.T) {
	s := compile(t, `{"type":"integer","maximum":9007199254740992}`)
	if err := s.Validate(jv(t, "9007199254740992")); err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(jv(t, "9007199254740993")); err == nil || err.Error() != "$: number is above maximum" {
		t.Fatalf("2^53+1: %v", err)
	}
	d := compile(t, `{"type":"number","maximum":0.1000000000000000000000000000000000000001}`)
	if err := d.Validate(jv(t, "0.1000000000000000000000000000000000000001")); err != nil {
		t.Fatal(err)
	}
	if err := d.Validate(jv(t, "0.1000000000000000000000000000000000000002")); err == nil {
		t.Fatal("a larger decimal passed")
	}
	n := compile(t, `{"type":"number","minimum":-2.5,"maximum":1e2}`)
	for _, ok := range []string{"-2.5", "-25e-1", "100", "1E2", "0", "-0", "99.999"} {
		if err := n.Validate(jv(t, ok)); err != nil {
			t.Fatalf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"-2.51", "100.0001", "1e3"} {
		if err := n.Validate(jv(t, bad)); err == nil {
			t.Fatalf("%s passed", bad)
		}
	}
	// The reference's zero quirk (see the decision note): 0 has the decimal order of 1.
	zeroMin := compile(t, `{"type":"number","minimum":0}`)
	if err := zeroMin.Validate(jv(t, "0.5")); err == nil || err.Error() != "$: number is below minimum" {
		t.Fatalf("minimum 0, value 0.5: %v", err)
	}
	if err := zeroMin.Validate(jv(t, "1.5")); err != nil {
		t.Fatalf("minimum 0, value 1.5: %v", err)
	}
	if err := compile(t, `{"type":"number","maximum":0}`).Validate(jv(t, "0.5")); err != nil {
		t.Fatalf("maximum 0, value 0.5: %v", err)
	}
}

// Spec: RUN-020
func TestSchemaCompileErrors(t *testing.T) {
	deep := strings.Repeat(`{"items":`, 33) + `{}` + strings.Repeat(`}`, 33)
	ok32 := strings.Repeat(`{"items":`, 32) + `{}` + strings.Repeat(`}`, 32)
	manyProps := `{"properties":{` + func() string {
		var b []string
		for i := 0; i < 129; i++ {
			b = append(b, `"p`+strings.Repeat("x", i)+`":{}`)
		}
		return strings.Join(b, ",")
	}() + `}}`
	manyEnum := `{"enum":[` + strings.Repeat(`1,`, 128) + `1]}`
	cases := []struct {
		schema string
		kind   error
		msg    string
	}{
		{`[]`, ErrExpectedObject, "$: schema must be an object"},
		{`{"type":"object","oneOf":[]}`, ErrUnsupportedKeyword, "$: unsupported schema keyword oneOf"},
		{`{"zz":1,"aa":2}`, ErrUnsupportedKeyword, "$: unsupported schema keyword aa"},
		{`{"type":5}`, ErrInvalidKeyword, "$: invalid type: must be a string"},
		{`{"type":"float"}`, ErrInvalidKeyword, `$: invalid type: unsupported type "float"`},
		{`{"properties":{},"items":{}}`, ErrInvalidKeyword, "$: invalid type: is required when object and array keywords are mixed"},
		{`{"type":"string","properties":{}}`, ErrInvalidKeyword, "$: invalid properties: does not apply to string"},
		{`{"minLength":1}`, ErrInvalidKeyword, "$: invalid minLength: does not apply to any"},
		{`{"type":"array","minItems":2,"maxItems":1}`, ErrInvalidKeyword, "$: invalid minItems: cannot exceed maxItems"},
		{`{"type":"string","minLength":-1}`, ErrInvalidKeyword, "$: invalid minLength: must be a non-negative integer"},
		{`{"type":"string","minLength":1.0}`, ErrInvalidKeyword, "$: invalid minLength: must be a non-negative integer"},
		{`{"type":"string","minLength":3,"maxLength":2}`, ErrInvalidKeyword, "$: invalid minLength: cannot exceed maxLength"},
		{`{"type":"number","minimum":"1"}`, ErrInvalidKeyword, "$: invalid minimum: must be a supported JSON number"},
		{`{"type":"number","minimum":2,"maximum":1.5}`, ErrInvalidKeyword, "$: invalid minimum: cannot exceed maximum"},
		{`{"type":"object","properties":[]}`, ErrInvalidKeyword, "$: invalid properties: must be an object"},
		{`{"type":"object","required":"a"}`, ErrInvalidKeyword, "$: invalid required: must be an array"},
		{`{"type":"object","required":[1]}`, ErrInvalidKeyword, "$: invalid required: must contain strings"},
		{`{"type":"object","required":["a","a"]}`, ErrInvalidKeyword, "$: invalid required: cannot contain duplicates"},
		{`{"type":"object","additionalProperties":{}}`, ErrInvalidKeyword, "$: invalid additionalProperties: must be a boolean in the Splash subset"},
		{`{"enum":{}}`, ErrInvalidKeyword, "$: invalid enum: must be an array"},
		{`{"properties":{"k":{"type":"bogus"}}}`, ErrInvalidKeyword, `$["k"]: invalid type: unsupported type "bogus"`},
		{`{"items":{"items":[]}}`, ErrExpectedObject, "$.items.items: schema must be an object"},
		{deep, ErrTooDeep, "schema exceeds depth limit of 32"},
		{manyProps, ErrTooManyProperties, "schema exceeds property limit of 128"},
		{manyEnum, ErrTooManyEnumValues, "schema exceeds enum limit of 128"},
		{`{"description":"` + strings.Repeat("x", 32*1024) + `"}`, ErrTooLarge, "schema exceeds byte limit of 32768"},
	}
	for _, c := range cases {
		_, err := Compile(jv(t, c.schema))
		name := c.schema
		if len(name) > 60 {
			name = name[:60]
		}
		if err == nil {
			t.Fatalf("%s compiled", name)
		}
		wantKind(t, err, c.kind)
		if err.Error() != c.msg {
			t.Fatalf("%s: message %q, want %q", name, err, c.msg)
		}
	}
	for _, good := range []string{ok32, `{"$schema":"x","$id":"y","title":"t","description":"d","default":1,"examples":[],"type":"object"}`,
		`{"type":"integer","minimum":1,"maximum":1}`, `{"type":"null","enum":[null]}`} {
		compile(t, good)
	}
}

func wantKind(t testing.TB, err error, kind error) {
	t.Helper()
	if err == nil {
		t.Fatalf("error = nil, want %v", kind)
	}
	if !errors.Is(err, kind) {
		t.Fatalf("error = %v, want kind %v", err, kind)
	}
}
