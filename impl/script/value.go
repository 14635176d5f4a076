package script

import (
	"math"
	"strconv"
	"strings"
)

// Kind is the type of a script value.
type Kind uint8

// The kinds of script values.
const (
	KindNil      Kind = iota // nil
	KindBool                 // true, false
	KindNumber               // an IEEE 754 binary64 number
	KindString               // UTF-8 text
	KindArray                // an immutable ordered list
	KindRecord               // an immutable list of named fields in insertion order
	KindFunction             // a script fn, assert, or a bound module or value method
	KindModule               // the mod.tool module
	KindPromise              // a tool promise from tool.start or tool.start_json
	KindError                // the value of an expression whose error nothing caught
)

// String returns the kind's script name ("nil", "bool", "number", …).
func (k Kind) String() string {
	switch k {
	case KindNil:
		return "nil"
	case KindBool:
		return "bool"
	case KindNumber:
		return "number"
	case KindString:
		return "string"
	case KindArray:
		return "array"
	case KindRecord:
		return "record"
	case KindFunction:
		return "function"
	case KindModule:
		return "module"
	case KindPromise:
		return "promise"
	case KindError:
		return "error"
	}
	return "unknown"
}

// withArticle returns the kind's name after "a" or "an".
func (k Kind) withArticle() string {
	switch k {
	case KindArray, KindError:
		return "an " + k.String()
	}
	return "a " + k.String()
}

// Value is a script value. The zero Value is nil. Values are immutable and safe to copy.
type Value struct {
	kind Kind
	bits uint64 // number bits, bool (0/1), promise id, or module id
	str  string // string text, or the message of an error value
	ref  any    // []Value, *record, *closure or *builtin
}

// Field is one named field of a record.
type Field struct {
	Name  string
	Value Value
}

type record struct {
	fields []Field
}

func (r *record) get(name string) (Value, bool) {
	for i := range r.fields {
		if r.fields[i].Name == name {
			return r.fields[i].Value, true
		}
	}
	return Value{}, false
}

// Nil returns nil.
func Nil() Value { return Value{} }

// Bool returns a boolean value.
func Bool(b bool) Value {
	if b {
		return Value{kind: KindBool, bits: 1}
	}
	return Value{kind: KindBool}
}

// Number returns a number value.
func Number(f float64) Value { return Value{kind: KindNumber, bits: math.Float64bits(f)} }

// String returns a string value.
func String(s string) Value { return Value{kind: KindString, str: s} }

// Array returns an array holding elems (the slice is not copied and must not be changed).
func Array(elems ...Value) Value {
	if elems == nil {
		elems = []Value{}
	}
	return Value{kind: KindArray, ref: elems}
}

// Record returns a record with fields in the given order; a later field replaces an earlier
// one of the same name in place.
func Record(fields ...Field) Value {
	r := &record{fields: make([]Field, 0, len(fields))}
	for _, f := range fields {
		replaced := false
		for i := range r.fields {
			if r.fields[i].Name == f.Name {
				r.fields[i].Value = f.Value
				replaced = true
				break
			}
		}
		if !replaced {
			r.fields = append(r.fields, f)
		}
	}
	return Value{kind: KindRecord, ref: r}
}

func errorValue(msg string) Value { return Value{kind: KindError, str: msg} }

func promiseValue(id PromiseID) Value { return Value{kind: KindPromise, bits: uint64(id)} }

// Kind returns the value's kind.
func (v Value) Kind() Kind { return v.kind }

// BoolValue returns a boolean's value (false for other kinds).
func (v Value) BoolValue() bool { return v.kind == KindBool && v.bits == 1 }

// NumberValue returns a number's value (0 for other kinds).
func (v Value) NumberValue() float64 {
	if v.kind != KindNumber {
		return 0
	}
	return math.Float64frombits(v.bits)
}

// Text returns a string's text, or an error value's message ("" for other kinds).
func (v Value) Text() string {
	if v.kind == KindString || v.kind == KindError {
		return v.str
	}
	return ""
}

// Elems returns an array's elements (nil for other kinds). The slice must not be changed.
func (v Value) Elems() []Value {
	if v.kind != KindArray {
		return nil
	}
	return v.ref.([]Value)
}

// Fields returns a record's fields in order (nil for other kinds). The slice must not be
// changed.
func (v Value) Fields() []Field {
	if v.kind != KindRecord {
		return nil
	}
	return v.ref.(*record).fields
}

// Get returns a record's field.
func (v Value) Get(name string) (Value, bool) {
	if v.kind != KindRecord {
		return Value{}, false
	}
	return v.ref.(*record).get(name)
}

// Promise returns a promise's ID.
func (v Value) Promise() (PromiseID, bool) {
	if v.kind != KindPromise {
		return 0, false
	}
	return PromiseID(v.bits), true
}

// truthy is the condition test of if, && and ||: false, nil, the number 0 and the empty string
// are false; every other value is true.
func truthy(v Value) bool {
	switch v.kind {
	case KindNil:
		return false
	case KindBool:
		return v.bits == 1
	case KindNumber:
		return v.NumberValue() != 0
	case KindString:
		return v.str != ""
	}
	return true
}

// Equal reports whether a and b are equal under the script's == operator: numbers by numeric
// value (NaN equals nothing), strings by text, arrays element by element, records by their
// field sets regardless of order, promises by ID, functions and modules by identity; an error
// value equals nothing.
func Equal(a, b Value) bool {
	budget := math.MaxInt
	eq, _ := deepEqual(a, b, &budget)
	return eq
}

// deepEqual compares a and b, spending one unit of *budget per compared value; it reports
// exhausted=true when the budget runs out before the comparison ends.
func deepEqual(a, b Value, budget *int) (equal, exhausted bool) {
	if *budget <= 0 {
		return false, true
	}
	*budget--
	if a.kind != b.kind {
		return false, false
	}
	switch a.kind {
	case KindNil:
		return true, false
	case KindBool, KindModule, KindPromise:
		return a.bits == b.bits, false
	case KindNumber:
		return a.NumberValue() == b.NumberValue(), false
	case KindString:
		return a.str == b.str, false
	case KindArray:
		x, y := a.ref.([]Value), b.ref.([]Value)
		if len(x) != len(y) {
			return false, false
		}
		for i := range x {
			if eq, out := deepEqual(x[i], y[i], budget); !eq || out {
				return false, out
			}
		}
		return true, false
	case KindRecord:
		x, y := a.ref.(*record), b.ref.(*record)
		if len(x.fields) != len(y.fields) {
			return false, false
		}
		for _, f := range x.fields {
			other, ok := y.get(f.Name)
			if !ok {
				return false, false
			}
			if eq, out := deepEqual(f.Value, other, budget); !eq || out {
				return false, out
			}
		}
		return true, false
	case KindFunction:
		return a.ref == b.ref && a.str == b.str && a.bits == b.bits, false
	}
	return false, false
}

// String renders the value for humans (tests and debugging); it is not part of the language.
func (v Value) String() string {
	var b strings.Builder
	writeValue(&b, v, 0)
	return b.String()
}

func writeValue(b *strings.Builder, v Value, depth int) {
	if depth > 32 {
		b.WriteString("…")
		return
	}
	switch v.kind {
	case KindNil:
		b.WriteString("nil")
	case KindBool:
		b.WriteString(strconv.FormatBool(v.BoolValue()))
	case KindNumber:
		b.WriteString(strconv.FormatFloat(v.NumberValue(), 'g', -1, 64))
	case KindString:
		b.WriteString(strconv.Quote(v.str))
	case KindArray:
		b.WriteByte('[')
		for i, e := range v.Elems() {
			if i > 0 {
				b.WriteString(", ")
			}
			writeValue(b, e, depth+1)
		}
		b.WriteByte(']')
	case KindRecord:
		b.WriteByte('{')
		for i, f := range v.Fields() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(f.Name)
			b.WriteString(": ")
			writeValue(b, f.Value, depth+1)
		}
		b.WriteByte('}')
	case KindFunction:
		b.WriteString("<function>")
	case KindModule:
		b.WriteString("<mod.tool>")
	case KindPromise:
		b.WriteString("<promise " + strconv.FormatUint(v.bits, 10) + ">")
	case KindError:
		b.WriteString("<error: " + v.str + ">")
	}
}
