package script

import (
	"strconv"
	"strings"

	"github.com/splashv5/conform/impl/canonjson"
)

// The reference VM does not build parse_json results from the parsed document. It writes the
// document back as compact serde_json text (the text-preserving number mode) and reads that
// text again with its own script tokenizer and a small JSON state machine. Both steps have
// quirks that a script can observe:
//
//   - the tokenizer reads a leading minus sign as an operator token, separate from the number;
//   - a number, true, false or null that ends the text is never emitted as a token, so a
//     document whose root is one of them reads as nil;
//   - the state machine skips the stray operator inside an array (so [-1] reads as [1]), but
//     inside an object it loses the member, and when the magnitude is read as a float the
//     object's closing brace is consumed too, so later tokens land in that object.
//
// This file reproduces the token stream the tokenizer yields for serde_json's compact text and
// runs the same state machine over it.

// readerTokenKind names the tokens the reference tokenizer emits for compact JSON text.
type readerTokenKind uint8

const (
	tokOpenCurly readerTokenKind = iota
	tokCloseCurly
	tokOpenSquare
	tokCloseSquare
	tokSeparator // ","
	tokColon     // the ":" operator
	tokMinus     // the "-" operator in front of a negative number
	tokNull
	tokTrue
	tokFalse
	tokString
	tokSmallInt // an integer token without sign, fraction or exponent, at most 2^40-1
	tokFloat    // any other unsigned number token
)

type readerToken struct {
	kind readerTokenKind
	str  string  // tokString
	num  float64 // tokSmallInt, tokFloat
}

// maxSmallInt is the largest integer the reference tokenizer keeps as an integer token.
const maxSmallInt = 1<<40 - 1

// readerTokens appends the tokens of doc's compact serde_json text. The tokenizer only emits a
// number or a word when a later character ends it, so one that ends the text is left off.
func readerTokens(doc canonjson.Value) []readerToken {
	toks := appendReaderTokens(nil, doc)
	if n := len(toks); n > 0 {
		switch toks[n-1].kind {
		case tokNull, tokTrue, tokFalse, tokSmallInt, tokFloat:
			toks = toks[:n-1]
		}
	}
	return toks
}

func appendReaderTokens(toks []readerToken, v canonjson.Value) []readerToken {
	switch v.Kind() {
	case canonjson.KindNull:
		return append(toks, readerToken{kind: tokNull})
	case canonjson.KindBool:
		if v.BoolValue() {
			return append(toks, readerToken{kind: tokTrue})
		}
		return append(toks, readerToken{kind: tokFalse})
	case canonjson.KindString:
		return append(toks, readerToken{kind: tokString, str: v.StringValue()})
	case canonjson.KindNumber:
		text := v.NumberText()
		if strings.HasPrefix(text, "-") {
			toks = append(toks, readerToken{kind: tokMinus})
			text = text[1:]
		}
		// The magnitude is read as the nearest binary64; an out-of-range exponent gives an
		// infinity or zero (the range error is the expected outcome, not a failure).
		f, _ := strconv.ParseFloat(text, 64)
		kind := tokFloat
		if !strings.ContainsAny(text, ".eE") && f <= maxSmallInt {
			kind = tokSmallInt
		}
		return append(toks, readerToken{kind: kind, num: f})
	case canonjson.KindArray:
		toks = append(toks, readerToken{kind: tokOpenSquare})
		for i, e := range v.Elems() {
			if i > 0 {
				toks = append(toks, readerToken{kind: tokSeparator})
			}
			toks = appendReaderTokens(toks, e)
		}
		return append(toks, readerToken{kind: tokCloseSquare})
	case canonjson.KindObject:
		toks = append(toks, readerToken{kind: tokOpenCurly})
		for i, e := range v.Entries() {
			if i > 0 {
				toks = append(toks, readerToken{kind: tokSeparator})
			}
			toks = append(toks, readerToken{kind: tokString, str: e.Key}, readerToken{kind: tokColon})
			toks = appendReaderTokens(toks, e.Value)
		}
		return append(toks, readerToken{kind: tokCloseCurly})
	}
	return toks
}

// readerNode is a value under construction by the state machine; containers are filled after
// they have been attached to their parent.
type readerNode struct {
	kind   Kind
	b      bool
	num    float64
	str    string
	elems  []*readerNode
	fields []readerField
}

type readerField struct {
	name  string
	value *readerNode
}

// readerKey is an object key: a string, or (in the reader's non-standard forms) a number or a
// container, under which no value is ever stored.
type readerKey struct {
	name  string
	valid bool
}

func (n *readerNode) set(key readerKey, v *readerNode) {
	if !key.valid {
		return
	}
	for i := range n.fields {
		if n.fields[i].name == key.name {
			n.fields[i].value = v
			return
		}
	}
	n.fields = append(n.fields, readerField{key.name, v})
}

type readerStateKind uint8

const (
	stateRoot readerStateKind = iota
	stateRootMaybeObject
	stateObjectKey
	stateObjectColon
	stateObjectValue
	stateArray
)

type readerState struct {
	kind      readerStateKind
	container *readerNode
	key       readerKey
}

// scalarNode is the value of a scalar token, or nil for a structural one.
func scalarNode(t readerToken) *readerNode {
	switch t.kind {
	case tokNull:
		return &readerNode{kind: KindNil}
	case tokTrue:
		return &readerNode{kind: KindBool, b: true}
	case tokFalse:
		return &readerNode{kind: KindBool}
	case tokString:
		return &readerNode{kind: KindString, str: t.str}
	case tokSmallInt, tokFloat:
		return &readerNode{kind: KindNumber, num: t.num}
	}
	return nil
}

// readTokens runs the reference's JSON state machine. It never fails: a token the current state
// does not expect is skipped (the reference records a message nobody reads), and reading stops
// when the tokens or the states run out. The result is the root, nil when nothing was read.
func readTokens(toks []readerToken) *readerNode {
	var root *readerNode
	stack := []readerState{{kind: stateRoot}}
	push := func(s readerState) { stack = append(stack, s) }
	for i := 0; i < len(toks) && len(stack) > 0; i++ {
		t := toks[i]
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch top.kind {
		case stateRoot:
			switch t.kind {
			case tokNull, tokTrue, tokFalse:
				root = scalarNode(t)
			case tokString, tokSmallInt, tokFloat:
				root = scalarNode(t)
				push(readerState{kind: stateRootMaybeObject})
			case tokOpenCurly:
				root = &readerNode{kind: KindRecord}
				push(readerState{kind: stateObjectKey, container: root})
			case tokOpenSquare:
				root = &readerNode{kind: KindArray}
				push(readerState{kind: stateArray, container: root})
			}
		case stateRootMaybeObject:
			// A scalar root followed by ":" would become the key of a new root object.
			key := readerKey{}
			if root != nil && root.kind == KindString {
				key = readerKey{name: root.str, valid: true}
			}
			root = &readerNode{kind: KindRecord}
			if t.kind == tokColon {
				push(readerState{kind: stateObjectValue, container: root, key: key})
			}
		case stateObjectKey:
			obj := top.container
			switch t.kind {
			case tokString:
				push(readerState{kind: stateObjectColon, container: obj, key: readerKey{name: t.str, valid: true}})
			case tokNull, tokTrue, tokFalse:
				// A word is an identifier key; the object stores it under its name.
				push(readerState{kind: stateObjectColon, container: obj, key: readerKey{name: wordName(t.kind), valid: true}})
			case tokFloat:
				push(readerState{kind: stateObjectColon, container: obj})
			case tokOpenCurly:
				inner := &readerNode{kind: KindRecord}
				push(readerState{kind: stateObjectColon, container: obj})
				push(readerState{kind: stateObjectKey, container: inner})
			case tokOpenSquare:
				inner := &readerNode{kind: KindArray}
				push(readerState{kind: stateObjectColon, container: obj})
				push(readerState{kind: stateArray, container: inner})
			case tokCloseCurly, tokCloseSquare:
				// "}" ends the object; a stray "]" ends it too.
			default:
				push(readerState{kind: stateObjectKey, container: obj})
			}
		case stateObjectColon:
			if t.kind == tokColon {
				push(readerState{kind: stateObjectValue, container: top.container, key: top.key})
			} else {
				push(readerState{kind: stateObjectKey, container: top.container})
			}
		case stateObjectValue:
			obj := top.container
			push(readerState{kind: stateObjectKey, container: obj})
			switch t.kind {
			case tokNull, tokTrue, tokFalse, tokString, tokSmallInt, tokFloat:
				obj.set(top.key, scalarNode(t))
			case tokOpenCurly:
				inner := &readerNode{kind: KindRecord}
				obj.set(top.key, inner)
				push(readerState{kind: stateObjectKey, container: inner})
			case tokOpenSquare:
				inner := &readerNode{kind: KindArray}
				obj.set(top.key, inner)
				push(readerState{kind: stateArray, container: inner})
			case tokCloseCurly:
				stack = stack[:len(stack)-1]
			}
		case stateArray:
			arr := top.container
			push(top)
			switch t.kind {
			case tokNull, tokTrue, tokFalse, tokString, tokSmallInt, tokFloat:
				arr.elems = append(arr.elems, scalarNode(t))
			case tokOpenCurly:
				inner := &readerNode{kind: KindRecord}
				arr.elems = append(arr.elems, inner)
				push(readerState{kind: stateObjectKey, container: inner})
			case tokOpenSquare:
				inner := &readerNode{kind: KindArray}
				arr.elems = append(arr.elems, inner)
				push(readerState{kind: stateArray, container: inner})
			case tokCloseSquare:
				stack = stack[:len(stack)-1]
			}
		}
	}
	return root
}

func wordName(k readerTokenKind) string {
	switch k {
	case tokTrue:
		return "true"
	case tokFalse:
		return "false"
	}
	return "null"
}

// materialize turns the reader's result into script values, charging strings and containers to
// the evaluation's data bound.
func (m *Machine) materialize(n *readerNode) (Value, error) {
	if n == nil {
		return Nil(), nil
	}
	switch n.kind {
	case KindBool:
		return Bool(n.b), nil
	case KindNumber:
		return Number(n.num), nil
	case KindString:
		if err := m.alloc(len(n.str)); err != nil {
			return Value{}, err
		}
		return String(n.str), nil
	case KindArray:
		if err := m.alloc(objectBytes + len(n.elems)*valueBytes); err != nil {
			return Value{}, err
		}
		elems := make([]Value, len(n.elems))
		for i, e := range n.elems {
			v, err := m.materialize(e)
			if err != nil {
				return Value{}, err
			}
			elems[i] = v
		}
		return Array(elems...), nil
	case KindRecord:
		if err := m.alloc(objectBytes + len(n.fields)*fieldBytes); err != nil {
			return Value{}, err
		}
		fields := make([]Field, len(n.fields))
		for i, f := range n.fields {
			v, err := m.materialize(f.value)
			if err != nil {
				return Value{}, err
			}
			fields[i] = Field{Name: f.name, Value: v}
		}
		return Value{kind: KindRecord, ref: &record{fields: fields}}, nil
	}
	return Nil(), nil
}
