package canonjson

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Kind is the kind of a Value.
type Kind uint8

// The Value kinds. The zero Kind is KindNull.
const (
	KindNull Kind = iota
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
)

// String returns the lower-case JSON name of the kind.
func (k Kind) String() string { return NodeKind(k).String() }

// elems returns the elements of a KindArray value, building a deferred one first.
func (v Value) elems() []Value {
	if v.num == numDeferred {
		v = v.materialized()
	}
	return v.rawElems()
}

// ents returns the entries of a KindObject value, building a deferred one first.
func (v Value) ents() []Entry {
	if v.num == numDeferred {
		v = v.materialized()
	}
	return v.rawEnts()
}

// Entry is one key/value pair of an object Value.
type Entry struct {
	// Key is the member name.
	Key string
	// Value is the member value.
	Value Value
}

// Null returns the JSON null.
func Null() Value { return Value{} }

// Bool returns a JSON boolean.
func Bool(b bool) Value { return Value{kind: KindBool, b: b} }

// String returns a JSON string. Invalid UTF-8 is written as U+FFFD by the writer, since a
// serde_json string cannot hold it.
func String(s string) Value { return textValue(KindString, 0, s) }

// Uint returns a JSON integer number.
func Uint(u uint64) Value { return Value{kind: KindNumber, num: numUint, bits: u} }

// Int returns a JSON integer number. As in serde_json, a non-negative value is held
// exactly like Uint, so Int(1) equals Uint(1).
func Int(i int64) Value {
	if i >= 0 {
		return Uint(uint64(i))
	}
	return Value{kind: KindNumber, num: numInt, bits: uint64(i)}
}

// Float returns a JSON float number, written in serde_json's float layout (1.0, 1e+16).
// NaN and infinities are rejected with ErrNonFiniteFloat.
func Float(f float64) (Value, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Value{}, fmt.Errorf("%w: %v", ErrNonFiniteFloat, f)
	}
	return Value{kind: KindNumber, num: numFloat, bits: math.Float64bits(f)}, nil
}

// NumberToken converts one JSON number token (nothing around it) under mode m, exactly as
// a number in a parsed document would be converted. Errors wrap ErrSyntax, and also
// ErrNumberOutOfRange for a Lossy token such as 1e400.
func NumberToken(token string, m Mode) (Value, error) {
	if !m.valid() {
		return Value{}, fmt.Errorf("%w: %v", ErrUnknownMode, m)
	}
	if err := validToken(token); err != nil {
		return Value{}, err
	}
	n, ok := convertToken(token, m)
	if !ok {
		return Value{}, outOfRange(0)
	}
	return numberValue(n), nil
}

func numberValue(n number) Value {
	if n.repr == numText {
		return textValue(KindNumber, numText, n.text)
	}
	return Value{kind: KindNumber, num: n.repr, bits: n.bits}
}

// Array returns a JSON array of elems. The slice is retained.
func Array(elems ...Value) Value { return arrayValue(elems) }

// Object returns a JSON object holding entries sorted bytewise by key; when a key repeats,
// the later entry wins, as when serde_json reads an object with duplicate keys. The
// argument slice is reordered in place and may be retained.
func Object(entries ...Entry) Value {
	return objectValue(sortEntries(entries))
}

// sortEntries sorts by key, keeping only the last of each run of equal keys.
func sortEntries(ents []Entry) []Entry {
	if keysStrictlyIncreasing(ents) {
		return ents
	}
	slices.SortStableFunc(ents, func(a, b Entry) int { return cmp.Compare(a.Key, b.Key) })
	out := ents[:0]
	for i := range ents {
		if i+1 < len(ents) && ents[i+1].Key == ents[i].Key {
			continue // a later duplicate follows
		}
		out = append(out, ents[i])
	}
	return out
}

func keysStrictlyIncreasing(ents []Entry) bool {
	for i := 1; i < len(ents); i++ {
		if ents[i-1].Key >= ents[i].Key {
			return false
		}
	}
	return true
}

// Kind returns the kind of v.
func (v Value) Kind() Kind { return v.kind }

// BoolValue returns the boolean of a KindBool value, and false for any other kind.
func (v Value) BoolValue() bool { return v.kind == KindBool && v.b }

// StringValue returns the string of a KindString value, and "" for any other kind.
func (v Value) StringValue() string {
	if v.kind != KindString {
		return ""
	}
	return v.str()
}

// Elems returns the elements of a KindArray value (nil for any other kind). The slice
// must not be modified.
func (v Value) Elems() []Value {
	if v.kind != KindArray {
		return nil
	}
	return v.elems()
}

// Entries returns the entries of a KindObject value, sorted bytewise by key with unique
// keys (nil for any other kind). The slice must not be modified.
func (v Value) Entries() []Entry {
	if v.kind != KindObject {
		return nil
	}
	return v.ents()
}

// Get returns the value of key in a KindObject value.
func (v Value) Get(key string) (Value, bool) {
	if v.kind != KindObject {
		return Value{}, false
	}
	ents := v.ents()
	i, ok := slices.BinarySearchFunc(ents, key, func(e Entry, k string) int { return cmp.Compare(e.Key, k) })
	if !ok {
		return Value{}, false
	}
	return ents[i].Value, true
}

// NumberText returns a KindNumber value as the writer spells it ("" for other kinds).
func (v Value) NumberText() string {
	if v.kind != KindNumber {
		return ""
	}
	if v.num == numText {
		return v.str()
	}
	var buf [32]byte
	return string(appendNumber(buf[:0], v))
}

// Uint64 returns the value of an integer number held as u64 (every non-negative integer
// from Uint, Int, or a token that fits u64).
func (v Value) Uint64() (uint64, bool) {
	if v.kind != KindNumber || v.num != numUint {
		return 0, false
	}
	return v.bits, true
}

// Int64 returns the value of an integer number that fits int64.
func (v Value) Int64() (int64, bool) {
	switch {
	case v.kind != KindNumber:
		return 0, false
	case v.num == numInt:
		return int64(v.bits), true
	case v.num == numUint && v.bits <= math.MaxInt64:
		return int64(v.bits), true
	}
	return 0, false
}

// Float64 returns the value of a number held as f64 (a Lossy non-integer or a Float).
func (v Value) Float64() (float64, bool) {
	if v.kind != KindNumber || v.num != numFloat {
		return 0, false
	}
	return math.Float64frombits(v.bits), true
}

// FromNode converts a syntax tree to a Value under mode m: objects are sorted with the
// last duplicate winning, and numbers follow the mode. In Preserve mode an object whose
// first key is "$serde_json::private::Number" must hold only a string with one number
// token and becomes that number, as in serde_json with arbitrary_precision.
func FromNode(n *Node, m Mode) (Value, error) {
	if !m.valid() {
		return Value{}, fmt.Errorf("%w: %v", ErrUnknownMode, m)
	}
	return fromNode(n, m, 0)
}

// converter turns syntax trees into Values. The elements and entries of all arrays and
// objects it builds are carved from shared chunks, so a converted document costs a few
// allocations rather than one per container.
type converter struct {
	mode    Mode
	values  slab[Value]
	entries slab[Entry]
}

func fromNode(n *Node, m Mode, depth int) (Value, error) {
	c := converter{mode: m}
	budget := countBudget
	var elems, ents int
	countChildren(n, depth, &elems, &ents, &budget)
	c.values.reserve(elems)
	c.entries.reserve(ents)
	return c.convert(n, depth)
}

// countBudget bounds the work of countChildren, which only sizes the converter's first
// chunks: past it (or for hand-built trees that share subtrees) the chunks just grow.
const countBudget = 1 << 20

// countChildren adds the element and member counts of the containers in n's subtree to
// elems and ents, as far as the recursion limit and the budget reach.
func countChildren(n *Node, depth int, elems, ents, budget *int) {
	if n == nil || depth+1 >= recursionLimit || *budget <= 0 {
		return
	}
	switch n.Kind {
	case NodeArray:
		*elems += len(n.Elems)
		*budget -= 1 + len(n.Elems)
		for _, e := range n.Elems {
			countChildren(e, depth+1, elems, ents, budget)
		}
	case NodeObject:
		*ents += len(n.Members)
		*budget -= 1 + len(n.Members)
		for _, m := range n.Members {
			countChildren(m.Value, depth+1, elems, ents, budget)
		}
	}
}

func (c *converter) convert(n *Node, depth int) (Value, error) {
	if n == nil {
		return Value{}, fmt.Errorf("%w: nil node", ErrInvalidNode)
	}
	switch n.Kind {
	case NodeNull:
		return Value{}, nil
	case NodeBool:
		return Bool(n.Bool), nil
	case NodeString:
		return String(n.Text), nil
	case NodeNumber:
		return treeNumber(n.Text, c.mode)
	case NodeRaw:
		return c.deferred(n, depth)
	case NodeArray, NodeObject:
		if depth+1 >= recursionLimit {
			return Value{}, &SyntaxError{Offset: -1, Reason: "recursion limit exceeded", cause: ErrRecursionLimit}
		}
	default:
		return Value{}, fmt.Errorf("%w: node kind %d", ErrInvalidNode, n.Kind)
	}
	if n.Kind == NodeArray {
		if len(n.Elems) == 0 {
			return arrayValue([]Value{}), nil
		}
		elems := c.values.take(len(n.Elems))
		for i, e := range n.Elems {
			v, err := c.convert(e, depth+1)
			if err != nil {
				return Value{}, err
			}
			elems[i] = v
		}
		return arrayValue(elems), nil
	}
	if c.mode == Preserve && len(n.Members) > 0 && n.Members[0].Key == privateNumberKey {
		return privateNumberValue(n)
	}
	if len(n.Members) == 0 {
		return objectValue([]Entry{}), nil
	}
	ents := c.entries.take(len(n.Members))
	for i, mem := range n.Members {
		v, err := c.convert(mem.Value, depth+1)
		if err != nil {
			return Value{}, err
		}
		ents[i] = Entry{Key: mem.Key, Value: v}
	}
	return objectValue(sortEntries(ents)), nil
}

func treeNumber(tok string, m Mode) (Value, error) {
	if err := validToken(tok); err != nil {
		return Value{}, &SyntaxError{Offset: -1, Reason: "invalid number token " + strconv.Quote(tok)}
	}
	n, ok := convertToken(tok, m)
	if !ok {
		return Value{}, outOfRange(-1)
	}
	return numberValue(n), nil
}

func privateNumberValue(n *Node) (Value, error) {
	v := n.Members[0].Value
	switch {
	case v == nil:
		return Value{}, fmt.Errorf("%w: nil member value", ErrInvalidNode)
	case v.Kind != NodeString:
		return Value{}, syntaxErr(-1, "invalid type: expected a string containing a number")
	case validToken(v.Text) != nil:
		return Value{}, syntaxErr(-1, "invalid number in "+privateNumberKey)
	case len(n.Members) > 1:
		return Value{}, syntaxErr(-1, "trailing comma")
	}
	return numberValue(preserveNumber(v.Text)), nil
}

// ParseValue parses data with Parse's strictness and converts it with FromNode under mode
// m. Errors carry the byte offset where serde_json would stop, including Lossy
// out-of-range numbers (ErrNumberOutOfRange) and the Preserve private-number rule.
func ParseValue(data []byte, m Mode) (Value, error) {
	if !m.valid() {
		return Value{}, fmt.Errorf("%w: %v", ErrUnknownMode, m)
	}
	p := parser{data: data, text: string(data), mode: m}
	n, err := p.document()
	if err != nil {
		return Value{}, err
	}
	return fromNode(n, m, 0)
}

// Equal reports serde_json Value equality. Objects and arrays compare element-wise.
// Numbers held in the Lossy model compare by variant and value: u64 1 differs from f64
// 1.0, and f64 values compare with == (so -0.0 equals 0.0). When either number is
// Preserve-mode text, both compare by their written text, as arbitrary_precision does.
func Equal(a, b Value) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case KindNull:
		return true
	case KindBool:
		return a.b == b.b
	case KindString:
		return a.str() == b.str()
	case KindNumber:
		return equalNumbers(a, b)
	case KindArray:
		ae, be := a.elems(), b.elems()
		if len(ae) != len(be) {
			return false
		}
		for i := range ae {
			if !Equal(ae[i], be[i]) {
				return false
			}
		}
		return true
	case KindObject:
		ae, be := a.ents(), b.ents()
		if len(ae) != len(be) {
			return false
		}
		for i := range ae {
			if ae[i].Key != be[i].Key || !Equal(ae[i].Value, be[i].Value) {
				return false
			}
		}
		return true
	}
	return false
}

func equalNumbers(a, b Value) bool {
	if a.num == numText || b.num == numText {
		var ab, bb [32]byte
		return string(appendNumber(ab[:0], a)) == string(appendNumber(bb[:0], b))
	}
	if a.num != b.num {
		return false
	}
	if a.num == numFloat {
		return math.Float64frombits(a.bits) == math.Float64frombits(b.bits)
	}
	return a.bits == b.bits
}
