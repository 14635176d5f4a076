package canonjson

import (
	"fmt"
	"strings"
	"sync"
)

// A deferred Value is an array or object whose canonical text was verified when it was
// read but whose elements or entries are not built until something asks for them. A
// receiver can then authenticate, size and forward a large payload without building it:
// its canonical encoding is its text, and its depth was measured during the check.
//
// The Value holds kind KindArray or KindObject, num numDeferred and ptr pointing at a
// deferredDoc; elems and ents build the tree on first use (safely from several goroutines).

// numDeferred marks a container Value whose ptr is a *deferredDoc.
const numDeferred numRepr = 0xff

// deferredDoc is the shared state of a deferred Value.
type deferredDoc struct {
	text  string // the canonical encoding, as verified under mode
	mode  Mode
	depth int         // depth of the value under the depth rule of WithinDepth
	nums  numberFacts // what the verifier saw of text's numbers
	once  sync.Once
	built Value
}

// deferredValue returns a deferred Value of kind k over the canonical text.
func deferredValue(k Kind, text string, mode Mode, depth int, nums numberFacts) Value {
	return deferredRef(k, &deferredDoc{text: text, mode: mode, depth: depth, nums: nums})
}

// deferred returns v's deferredDoc, or nil when v is not deferred.
func (v Value) deferred() *deferredDoc {
	if v.num != numDeferred || (v.kind != KindArray && v.kind != KindObject) {
		return nil
	}
	return v.rawDeferred()
}

// materialized returns v with a deferred container built; other values are returned as
// they are.
func (v Value) materialized() Value {
	d := v.deferred()
	if d == nil {
		return v
	}
	d.once.Do(d.build)
	return d.built
}

// buildParsers lends parsers to build, so building a deferred value reuses syntax-tree
// memory instead of allocating it each time; the Values built hold no nodes.
var buildParsers = sync.Pool{New: func() any { return new(Parser) }}

// build builds the value of the verified text, directly when buildCanonical can and
// otherwise by parsing and converting it. It cannot fail on text the verifier accepted; if it did
// (a bug), the failure is reported loudly rather than turned into a different value.
func (d *deferredDoc) build() {
	if v, ok := buildCanonical(d.text, d.mode); ok {
		d.built = v
		return
	}
	ps := buildParsers.Get().(*Parser)
	defer buildParsers.Put(ps)
	n, err := ps.parseText(stringBytes(d.text), d.text)
	if err == nil {
		d.built, err = fromNode(n, d.mode, 0)
	}
	if err != nil {
		panic("canonjson: verified canonical text failed to parse: " + err.Error())
	}
}

// deferred converts a NodeRaw: into a deferred Value when its text was verified in the
// converter's mode, and otherwise by expanding and converting it like any other subtree.
func (c *converter) deferred(n *Node, depth int) (Value, error) {
	k := KindObject
	if n.RawContainerKind() == NodeArray {
		k = KindArray
	}
	if n.rawMode == c.mode {
		return deferredValue(k, n.Text, c.mode, int(n.rawDepth), n.rawNumbers), nil
	}
	e := Expand(n)
	if e.Kind == NodeRaw {
		return Value{}, fmt.Errorf("%w: raw node does not parse", ErrInvalidNode)
	}
	return c.convert(e, depth)
}

// WithinDepth reports whether v respects the depth rule with limit max: v itself is at
// depth 1, each array element and object member value one deeper, scalars included, and
// nothing may be deeper than max. A deferred value answers from the depth measured when
// its text was verified, without being built.
func (v Value) WithinDepth(max int) bool { return v.withinDepth(1, max) }

func (v Value) withinDepth(depth, max int) bool {
	if depth > max {
		return false
	}
	if d := v.deferred(); d != nil {
		return depth-1+d.depth <= max
	}
	switch v.kind {
	case KindArray:
		for _, e := range v.elems() {
			if !e.withinDepth(depth+1, max) {
				return false
			}
		}
	case KindObject:
		for _, e := range v.ents() {
			if !e.Value.withinDepth(depth+1, max) {
				return false
			}
		}
	}
	return true
}

// IsDeferred reports whether v is a container read as verified canonical text (see
// [Parser.ParseDeferring]), whose elements or entries are built on first use. It exists
// for tests and benchmarks: a deferred Value behaves exactly like a built one.
func (v Value) IsDeferred() bool { return v.deferred() != nil }

// DeferCanonical reads the array or object that starts at text[start] as a deferred Value
// when its text is canonical under m: exactly the case in which [Parser.ParseDeferring]
// keeps a member as a NodeRaw and [FromNode] makes it a deferred Value, so the two agree.
// open is the number of arrays and objects already open around the value, for the nesting
// limit; end is the offset just past the value. ok is false when text[start] does not open
// a container or the container is not provably canonical; the caller then parses the text
// the general way, which finds its value or its error.
func DeferCanonical(text string, start, open int, m Mode) (v Value, end int, ok bool) {
	return deferCanonical(text, start, open, m, false)
}

// DeferCanonicalBytes is DeferCanonical for text the caller will reuse: it reads text in place
// and, when it defers the container, the Value holds a copy of the container's text only.
func DeferCanonicalBytes(text []byte, start, open int, m Mode) (v Value, end int, ok bool) {
	return deferCanonical(bytesString(text), start, open, m, true)
}

// deferCanonical is DeferCanonical; with detach, text is a view of bytes the caller will reuse,
// and what the Value keeps of it (the container's text, and the first non-portable number
// token) is copied.
func deferCanonical(text string, start, open int, m Mode, detach bool) (v Value, end int, ok bool) {
	if !m.valid() || start < 0 || start >= len(text) || open < 0 {
		return Value{}, 0, false
	}
	k := KindObject
	switch text[start] {
	case '[':
		k = KindArray
	case '{':
	default:
		return Value{}, 0, false
	}
	end, depth, nums, ok := verifyCanonical(text, start, open, m)
	if !ok {
		return Value{}, 0, false
	}
	doc := text[start:end]
	if detach {
		doc, nums.nonPortable = strings.Clone(doc), strings.Clone(nums.nonPortable)
	}
	return deferredValue(k, doc, m, depth, nums), end, true
}
