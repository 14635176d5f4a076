// Package schema compiles and applies the bounded JSON-schema subset of a JSON tool's
// contract (spec RUN-020 to RUN-022): type, properties, required, additionalProperties
// (boolean), items, minItems, maxItems, minLength, maxLength, minimum, maximum and enum, plus
// annotations. A schema compiles once and validates values exactly, numbers included; the
// host runtime applies a tool's input and output schemas. It uses canonical JSON only.
package schema

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/errkind"
)

// Bounds of the executable schema subset.
const (
	MaxDepth      = 32
	MaxProperties = 128
	MaxEnumValues = 128
	MaxBytes      = 32 * 1024
)

// ErrorKind classifies a schema that does not compile.
type ErrorKind = errkind.Kind[kinds]

type kinds struct{}

// Table describes the schema compile error kinds.
func (kinds) Table() *errkind.Table { return &kindTable }

// The schema compile errors.
const (
	ErrExpectedObject ErrorKind = iota + 1
	ErrInvalidKeyword
	ErrUnsupportedKeyword
	ErrTooDeep
	ErrTooManyProperties
	ErrTooManyEnumValues
	ErrTooLarge
)

var kindTable = errkind.Table{Type: "ErrorKind", Kinds: []errkind.Entry{
	ErrExpectedObject:     {Name: "ExpectedObject", Message: "schema must be an object", Detail: "{path}: schema must be an object"},
	ErrInvalidKeyword:     {Name: "InvalidKeyword", Message: "invalid schema keyword", Detail: "{path}: invalid {keyword}: {message}"},
	ErrUnsupportedKeyword: {Name: "UnsupportedKeyword", Message: "unsupported schema keyword", Detail: "{path}: unsupported schema keyword {keyword}"},
	ErrTooDeep:            {Name: "TooDeep", Message: "schema exceeds its depth limit", Detail: "schema exceeds depth limit of {maximum}"},
	ErrTooManyProperties:  {Name: "TooManyProperties", Message: "schema exceeds its property limit", Detail: "schema exceeds property limit of {maximum}"},
	ErrTooManyEnumValues:  {Name: "TooManyEnumValues", Message: "schema exceeds its enum limit", Detail: "schema exceeds enum limit of {maximum}"},
	ErrTooLarge:           {Name: "TooLarge", Message: "schema exceeds its byte limit", Detail: "schema exceeds byte limit of {maximum}"},
}}

// Error rejects a schema at compile time.
type Error struct {
	errkind.Kind[kinds]
	Path    string // "$", "$[\"key\"]", "$.items", …
	Keyword string
	Message string
	Maximum int
}

// Error describes the rejection.
func (e *Error) Error() string {
	return e.Kind.Expand("path", e.Path, "keyword", e.Keyword, "message", e.Message, "maximum", e.Maximum)
}

// Violation is a value that does not match its schema.
type Violation struct {
	Path    string
	Message string
}

// Error returns "<path>: <message>".
func (v *Violation) Error() string { return v.Path + ": " + v.Message }

// Schema is a compiled schema of the bounded subset: type, properties, required,
// additionalProperties (boolean), items, minItems, maxItems, minLength, maxLength, minimum,
// maximum and enum, plus the annotations title, description, default, examples, $schema and $id.
type Schema struct {
	source canonjson.Value
	root   *schemaNode
}

type schemaKind uint8

const (
	kindAny schemaKind = iota
	kindNull
	kindBoolean
	kindNumber
	kindInteger
	kindString
	kindArray
	kindObject
)

type schemaNode struct {
	kind      schemaKind
	min, max  *exactNumber
	minLen    *uint64
	maxLen    *uint64
	items     *schemaNode
	minItems  *uint64
	maxItems  *uint64
	props     map[string]*schemaNode
	required  []string // sorted, unique
	additonal bool
	enum      []canonjson.Value
	hasEnum   bool
}

// Compile compiles source. It is rejected when its compact JSON exceeds MaxBytes,
// nests deeper than MaxDepth, or uses a keyword outside the subset or outside its type.
func Compile(source canonjson.Value) (*Schema, error) {
	if len(source.JSON()) > MaxBytes {
		return nil, &Error{Kind: ErrTooLarge, Maximum: MaxBytes}
	}
	root, err := compileNode(source, "$", 0)
	if err != nil {
		return nil, err
	}
	return &Schema{source: source, root: root}, nil
}

// Source returns the schema as it was compiled.
func (s *Schema) Source() canonjson.Value { return s.source }

// Validate checks v against the schema and returns the first *Violation.
func (s *Schema) Validate(v canonjson.Value) error {
	if err := s.root.validate(v, "$"); err != nil {
		return err
	}
	return nil
}

var supportedKeywords = []string{
	"type", "properties", "required", "additionalProperties", "items", "minItems", "maxItems",
	"minLength", "maxLength", "minimum", "maximum", "enum",
	"title", "description", "default", "examples", "$schema", "$id",
}

var annotationKeywords = []string{"title", "description", "default", "examples", "$schema", "$id"}

func compileNode(src canonjson.Value, path string, depth int) (*schemaNode, error) {
	if depth > MaxDepth {
		return nil, &Error{Kind: ErrTooDeep, Maximum: MaxDepth}
	}
	if src.Kind() != canonjson.KindObject {
		return nil, &Error{Kind: ErrExpectedObject, Path: path}
	}
	entries := src.Entries()
	for _, e := range entries {
		if !slices.Contains(supportedKeywords, e.Key) {
			return nil, &Error{Kind: ErrUnsupportedKeyword, Path: path, Keyword: e.Key}
		}
	}
	_, hasProps := src.Get("properties")
	_, hasReq := src.Get("required")
	_, hasAdd := src.Get("additionalProperties")
	_, hasItems := src.Get("items")
	_, hasMinItems := src.Get("minItems")
	_, hasMaxItems := src.Get("maxItems")
	objectKeywords := hasProps || hasReq || hasAdd
	arrayKeywords := hasItems || hasMinItems || hasMaxItems

	node := &schemaNode{}
	var err error
	typ, hasType := src.Get("type")
	switch {
	case hasType && typ.Kind() == canonjson.KindString:
		err = node.parseKind(typ.StringValue(), src, path, depth)
	case hasType:
		return nil, &Error{Kind: ErrInvalidKeyword, Path: path, Keyword: "type", Message: "must be a string"}
	case objectKeywords && arrayKeywords:
		return nil, &Error{Kind: ErrInvalidKeyword, Path: path, Keyword: "type", Message: "is required when object and array keywords are mixed"}
	case objectKeywords:
		if err = checkTypeKeywords(src, path, "object"); err == nil {
			node.kind = kindObject
			err = node.parseObject(src, path, depth)
		}
	case arrayKeywords:
		if err = checkTypeKeywords(src, path, "array"); err == nil {
			node.kind = kindArray
			err = node.parseArray(src, path, depth)
		}
	default:
		err = checkTypeKeywords(src, path, "any")
		node.kind = kindAny
	}
	if err != nil {
		return nil, err
	}
	if ev, ok := src.Get("enum"); ok {
		if ev.Kind() != canonjson.KindArray {
			return nil, &Error{Kind: ErrInvalidKeyword, Path: path, Keyword: "enum", Message: "must be an array"}
		}
		if len(ev.Elems()) > MaxEnumValues {
			return nil, &Error{Kind: ErrTooManyEnumValues, Maximum: MaxEnumValues}
		}
		node.enum, node.hasEnum = ev.Elems(), true
	}
	return node, nil
}

func checkTypeKeywords(src canonjson.Value, path, kind string) error {
	var typeKeywords []string
	switch kind {
	case "number", "integer":
		typeKeywords = []string{"minimum", "maximum"}
	case "string":
		typeKeywords = []string{"minLength", "maxLength"}
	case "array":
		typeKeywords = []string{"items", "minItems", "maxItems"}
	case "object":
		typeKeywords = []string{"properties", "required", "additionalProperties"}
	case "null", "boolean", "any":
	default:
		return &Error{Kind: ErrInvalidKeyword, Path: path, Keyword: "type", Message: "unsupported type " + rustDebugString(kind)}
	}
	for _, e := range src.Entries() {
		k := e.Key
		if slices.Contains(annotationKeywords, k) || k == "type" || k == "enum" || slices.Contains(typeKeywords, k) {
			continue
		}
		return &Error{Kind: ErrInvalidKeyword, Path: path, Keyword: k, Message: "does not apply to " + kind}
	}
	return nil
}

func (n *schemaNode) parseKind(kind string, src canonjson.Value, path string, depth int) error {
	if err := checkTypeKeywords(src, path, kind); err != nil {
		return err
	}
	switch kind {
	case "null":
		n.kind = kindNull
	case "boolean":
		n.kind = kindBoolean
	case "number", "integer":
		n.kind = kindNumber
		if kind == "integer" {
			n.kind = kindInteger
		}
		return n.parseNumeric(src, path)
	case "string":
		n.kind = kindString
		var err error
		if n.minLen, err = schemaUsize(src, "minLength", path); err != nil {
			return err
		}
		if n.maxLen, err = schemaUsize(src, "maxLength", path); err != nil {
			return err
		}
		if n.minLen != nil && n.maxLen != nil && *n.minLen > *n.maxLen {
			return &Error{Kind: ErrInvalidKeyword, Path: path, Keyword: "minLength", Message: "cannot exceed maxLength"}
		}
	case "array":
		n.kind = kindArray
		return n.parseArray(src, path, depth)
	case "object":
		n.kind = kindObject
		return n.parseObject(src, path, depth)
	}
	return nil
}

func (n *schemaNode) parseNumeric(src canonjson.Value, path string) error {
	var err error
	if n.min, err = schemaNumber(src, "minimum", path); err != nil {
		return err
	}
	if n.max, err = schemaNumber(src, "maximum", path); err != nil {
		return err
	}
	if n.min != nil && n.max != nil && n.min.compare(n.max) > 0 {
		return &Error{Kind: ErrInvalidKeyword, Path: path, Keyword: "minimum", Message: "cannot exceed maximum"}
	}
	return nil
}

func (n *schemaNode) parseArray(src canonjson.Value, path string, depth int) error {
	var err error
	if n.minItems, err = schemaUsize(src, "minItems", path); err != nil {
		return err
	}
	if n.maxItems, err = schemaUsize(src, "maxItems", path); err != nil {
		return err
	}
	if n.minItems != nil && n.maxItems != nil && *n.minItems > *n.maxItems {
		return &Error{Kind: ErrInvalidKeyword, Path: path, Keyword: "minItems", Message: "cannot exceed maxItems"}
	}
	if items, ok := src.Get("items"); ok {
		if n.items, err = compileNode(items, path+".items", depth+1); err != nil {
			return err
		}
	}
	return nil
}

func (n *schemaNode) parseObject(src canonjson.Value, path string, depth int) error {
	n.props = map[string]*schemaNode{}
	if props, ok := src.Get("properties"); ok {
		if props.Kind() != canonjson.KindObject {
			return &Error{Kind: ErrInvalidKeyword, Path: path, Keyword: "properties", Message: "must be an object"}
		}
		entries := props.Entries()
		if len(entries) > MaxProperties {
			return &Error{Kind: ErrTooManyProperties, Maximum: MaxProperties}
		}
		for _, e := range entries {
			child, err := compileNode(e.Value, propertyPath(path, e.Key), depth+1)
			if err != nil {
				return err
			}
			n.props[e.Key] = child
		}
	}
	if req, ok := src.Get("required"); ok {
		if req.Kind() != canonjson.KindArray {
			return &Error{Kind: ErrInvalidKeyword, Path: path, Keyword: "required", Message: "must be an array"}
		}
		seen := map[string]bool{}
		for _, e := range req.Elems() {
			if e.Kind() != canonjson.KindString {
				return &Error{Kind: ErrInvalidKeyword, Path: path, Keyword: "required", Message: "must contain strings"}
			}
			if seen[e.StringValue()] {
				return &Error{Kind: ErrInvalidKeyword, Path: path, Keyword: "required", Message: "cannot contain duplicates"}
			}
			seen[e.StringValue()] = true
			n.required = append(n.required, e.StringValue())
		}
		slices.Sort(n.required)
	}
	n.additonal = true
	if add, ok := src.Get("additionalProperties"); ok {
		if add.Kind() != canonjson.KindBool {
			return &Error{Kind: ErrInvalidKeyword, Path: path, Keyword: "additionalProperties", Message: "must be a boolean in the Splash subset"}
		}
		n.additonal = add.BoolValue()
	}
	return nil
}

// schemaUsize reads a keyword that must be a non-negative integer (serde's as_u64).
func schemaUsize(src canonjson.Value, keyword, path string) (*uint64, error) {
	v, ok := src.Get(keyword)
	if !ok {
		return nil, nil
	}
	u, ok := jsonU64(v)
	if !ok {
		return nil, &Error{Kind: ErrInvalidKeyword, Path: path, Keyword: keyword, Message: "must be a non-negative integer"}
	}
	return &u, nil
}

// jsonU64 is serde_json's Value::as_u64: an unsigned integer number, parsed from its text in
// the text-preserving number model.
func jsonU64(v canonjson.Value) (uint64, bool) {
	if v.Kind() != canonjson.KindNumber {
		return 0, false
	}
	if u, ok := v.Uint64(); ok {
		return u, true
	}
	u, err := strconv.ParseUint(v.NumberText(), 10, 64)
	return u, err == nil
}

func schemaNumber(src canonjson.Value, keyword, path string) (*exactNumber, error) {
	v, ok := src.Get(keyword)
	if !ok {
		return nil, nil
	}
	n, ok := exactNumberOf(v)
	if !ok {
		return nil, &Error{Kind: ErrInvalidKeyword, Path: path, Keyword: keyword, Message: "must be a supported JSON number"}
	}
	return &n, nil
}

func (n *schemaNode) validate(v canonjson.Value, path string) *Violation {
	if err := n.validateKind(v, path); err != nil {
		return err
	}
	if n.hasEnum && !slices.ContainsFunc(n.enum, func(a canonjson.Value) bool { return canonjson.Equal(a, v) }) {
		return &Violation{Path: path, Message: "value is not in enum"}
	}
	return nil
}

func (n *schemaNode) validateKind(v canonjson.Value, path string) *Violation {
	violation := func(msg string) *Violation { return &Violation{Path: path, Message: msg} }
	switch n.kind {
	case kindNull:
		if v.Kind() != canonjson.KindNull {
			return violation("expected null")
		}
	case kindBoolean:
		if v.Kind() != canonjson.KindBool {
			return violation("expected boolean")
		}
	case kindNumber, kindInteger:
		num, ok := exactNumberOf(v)
		if n.kind == kindInteger && (!ok || !num.isInteger()) {
			return violation("expected integer")
		}
		if !ok {
			return violation("expected number")
		}
		if n.min != nil && num.compare(n.min) < 0 {
			return violation("number is below minimum")
		}
		if n.max != nil && num.compare(n.max) > 0 {
			return violation("number is above maximum")
		}
	case kindString:
		if v.Kind() != canonjson.KindString {
			return violation("expected string")
		}
		length := uint64(utf8.RuneCountInString(v.StringValue()))
		if n.minLen != nil && length < *n.minLen {
			return violation("string is shorter than minLength")
		}
		if n.maxLen != nil && length > *n.maxLen {
			return violation("string is longer than maxLength")
		}
	case kindArray:
		if v.Kind() != canonjson.KindArray {
			return violation("expected array")
		}
		elems := v.Elems()
		if n.minItems != nil && uint64(len(elems)) < *n.minItems {
			return violation("array has fewer than minItems values")
		}
		if n.maxItems != nil && uint64(len(elems)) > *n.maxItems {
			return violation("array has more than maxItems values")
		}
		if n.items != nil {
			for i, e := range elems {
				if err := n.items.validate(e, path+"["+strconv.Itoa(i)+"]"); err != nil {
					return err
				}
			}
		}
	case kindObject:
		if v.Kind() != canonjson.KindObject {
			return violation("expected object")
		}
		for _, key := range n.required {
			if _, ok := v.Get(key); !ok {
				return violation("missing required property " + rustDebugString(key))
			}
		}
		for _, e := range v.Entries() {
			child, ok := n.props[e.Key]
			switch {
			case ok:
				if err := child.validate(e.Value, propertyPath(path, e.Key)); err != nil {
					return err
				}
			case !n.additonal:
				return violation("additional property " + rustDebugString(e.Key) + " is not allowed")
			}
		}
	}
	return nil
}

func propertyPath(path, key string) string { return path + "[" + rustDebugString(key) + "]" }

// rustDebugString quotes s the way Rust's str Debug formatting does: \t \r \n \\ \" and \0
// escaped; other control characters, characters that are not printable (separators other than
// the ASCII space, format, private-use and unassigned characters) and grapheme extenders as
// \u{hex}. (The tests follow Go's Unicode tables, which may lag Rust's on newly assigned
// characters.)
func rustDebugString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, r := range s {
		switch {
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '"':
			b.WriteString(`\"`)
		case r == 0:
			b.WriteString(`\0`)
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			b.WriteString(`\u{fffd}`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && (!unicode.IsPrint(r) || unicode.In(r, unicode.Mn, unicode.Me, unicode.Other_Grapheme_Extend))):
			b.WriteString(`\u{` + strconv.FormatInt(int64(r), 16) + `}`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// exactNumber is a finite JSON number as digits × 10^scale, compared without rounding. Zero is
// digits "0" with scale 0 (see compareMagnitude).
type exactNumber struct {
	negative bool
	digits   []byte
	scale    int64
}

func exactNumberOf(v canonjson.Value) (exactNumber, bool) {
	if v.Kind() != canonjson.KindNumber {
		return exactNumber{}, false
	}
	return parseExactNumber(v.NumberText())
}

func parseExactNumber(s string) (exactNumber, bool) {
	i := 0
	negative := false
	if i < len(s) && s[i] == '-' {
		negative = true
		i++
	}
	digits := make([]byte, 0, len(s))
	start := i
	for i < len(s) && isDigit(s[i]) {
		digits = append(digits, s[i])
		i++
	}
	if i == start {
		return exactNumber{}, false
	}
	var fraction int64
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && isDigit(s[i]) {
			digits = append(digits, s[i])
			i++
		}
		fraction = int64(i - fs)
		if fraction == 0 {
			return exactNumber{}, false
		}
	}
	var exponent int64
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		expNegative := false
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			expNegative = s[i] == '-'
			i++
		}
		es := i
		for i < len(s) && isDigit(s[i]) {
			d := int64(s[i] - '0')
			if exponent > (math.MaxInt64-d)/10 {
				return exactNumber{}, false
			}
			exponent = exponent*10 + d
			i++
		}
		if i == es {
			return exactNumber{}, false
		}
		if expNegative {
			exponent = -exponent
		}
	}
	if i != len(s) {
		return exactNumber{}, false
	}
	first := slices.IndexFunc(digits, func(c byte) bool { return c != '0' })
	if first < 0 {
		return exactNumber{digits: []byte{'0'}}, true
	}
	digits = digits[first:]
	if exponent < math.MinInt64+fraction {
		return exactNumber{}, false
	}
	scale := exponent - fraction
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		if scale == math.MaxInt64 {
			return exactNumber{}, false
		}
		scale++
	}
	if scale > math.MaxInt64-int64(len(digits)) {
		return exactNumber{}, false
	}
	return exactNumber{negative: negative, digits: digits, scale: scale}, true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func (n exactNumber) isInteger() bool { return n.scale >= 0 }

// compare orders two numbers: sign first, then magnitude.
func (n exactNumber) compare(o *exactNumber) int {
	switch {
	case n.negative && !o.negative:
		return -1
	case !n.negative && o.negative:
		return 1
	case n.negative:
		return o.compareMagnitude(&n)
	}
	return n.compareMagnitude(o)
}

// compareMagnitude compares the decimal orders (scale + digit count), then the digits. Zero's
// order is 1, as in the reference, so zero compares above every magnitude below one.
func (n exactNumber) compareMagnitude(o *exactNumber) int {
	order := func(e *exactNumber) int64 {
		l := int64(len(e.digits))
		if e.scale > math.MaxInt64-l {
			return math.MaxInt64
		}
		return e.scale + l
	}
	if a, b := order(&n), order(o); a != b {
		if a < b {
			return -1
		}
		return 1
	}
	for i := 0; i < max(len(n.digits), len(o.digits)); i++ {
		a, b := byte('0'), byte('0')
		if i < len(n.digits) {
			a = n.digits[i]
		}
		if i < len(o.digits) {
			b = o.digits[i]
		}
		if a != b {
			if a < b {
				return -1
			}
			return 1
		}
	}
	return 0
}

// Contract is a pair of executable schemas for a JSON tool's input and output. A tool
// registered with a contract reports contract_enforced in the catalog.
type Contract struct {
	input, output *Schema
}

// NewContract compiles both schemas.
func NewContract(input, output canonjson.Value) (Contract, error) {
	in, err := Compile(input)
	if err != nil {
		return Contract{}, err
	}
	out, err := Compile(output)
	if err != nil {
		return Contract{}, err
	}
	return Contract{input: in, output: out}, nil
}

// Input returns the compiled input schema (nil for the zero Contract).
func (c Contract) Input() *Schema { return c.input }

// Output returns the compiled output schema (nil for the zero Contract).
func (c Contract) Output() *Schema { return c.output }

// InputSchema returns the input schema's source.
func (c Contract) InputSchema() canonjson.Value { return c.input.source }

// OutputSchema returns the output schema's source.
func (c Contract) OutputSchema() canonjson.Value { return c.output.source }
