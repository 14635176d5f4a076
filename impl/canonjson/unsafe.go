package canonjson

import "unsafe"

// This file holds every use of package unsafe in canonjson, for two reasons.
//
// Size: a Value keeps one pointer and one length where the plain Go form would keep a string
// and two slices (24 bytes instead of 80), which matters for large documents. Speed: the
// parser reads a string's bytes without copying them.
//
// Why it is safe:
//   - A Value's ptr is only ever set here, from unsafe.StringData of a string, from
//     unsafe.SliceData of a []Value or []Entry (with bits set to that string's or slice's
//     length), or from a *deferredDoc, and it is only read back here, as the same type (its
//     kind and num say which) and with the same length. The pointer keeps what it points at
//     alive for the collector, as a string, slice or pointer would.
//   - Nothing is ever written through a Value's pointer, except a deferredDoc's own fields
//     under its sync.Once: Values are immutable once built, and the strings they point into
//     are immutable Go strings.
//   - stringBytes hands the parser a []byte view of a string; the parser only reads its
//     input (it writes into its own scratch buffers), so the string is never modified.
//   - bytesString gives DeferCanonicalBytes a string view of its caller's bytes for the
//     verifier, which only reads it; what the deferred Value keeps of it is copied first.
//   - bytesString gives a Reader a string view of the buffer it wrote a Value's encoding
//     into. The Reader writes that buffer again only if it has handed out no string that
//     points into it; otherwise it starts a new buffer (see Reader.Reset).
// TestUnsafeViewsRoundTrip checks these round trips, including empty and nil inputs.

// Value is the Go counterpart of serde_json::Value. Objects hold unique keys sorted by
// raw byte order (serde_json's BTreeMap); numbers are held as u64, negative i64, f64 or,
// for Preserve-mode non-integers, as number text. The zero Value is null. Values are
// immutable once built; the slices returned by Elems and Entries must not be modified.
type Value struct {
	// ptr points at the bytes of a string or of Preserve number text, at the first element
	// of an array, or at the first entry of an object; it is nil for other kinds (and for
	// nil slices). Keeping one pointer and one length instead of a string and two slices
	// makes a Value 24 bytes rather than 80, which matters for large documents.
	ptr unsafe.Pointer
	// bits is the number of a numUint, numInt or numFloat number, and otherwise the length
	// of what ptr points at.
	bits uint64
	kind Kind
	num  numRepr
	b    bool
}

// textValue returns a Value of kind k (and number representation num) holding s.
func textValue(k Kind, num numRepr, s string) Value {
	return Value{kind: k, num: num, ptr: unsafe.Pointer(unsafe.StringData(s)), bits: uint64(len(s))}
}

// arrayValue returns an array Value holding elems (retained).
func arrayValue(elems []Value) Value {
	return Value{kind: KindArray, ptr: unsafe.Pointer(unsafe.SliceData(elems)), bits: uint64(len(elems))}
}

// objectValue returns an object Value holding ents (retained), which must be sorted with
// unique keys.
func objectValue(ents []Entry) Value {
	return Value{kind: KindObject, ptr: unsafe.Pointer(unsafe.SliceData(ents)), bits: uint64(len(ents))}
}

// str returns the string of a KindString value or the text of a numText number.
func (v Value) str() string { return unsafe.String((*byte)(v.ptr), int(v.bits)) }

// rawElems returns the elements a KindArray value points at.
func (v Value) rawElems() []Value { return unsafe.Slice((*Value)(v.ptr), int(v.bits)) }

// rawEnts returns the entries a KindObject value points at.
func (v Value) rawEnts() []Entry { return unsafe.Slice((*Entry)(v.ptr), int(v.bits)) }

// deferredRef returns a deferred container Value of kind k over d.
func deferredRef(k Kind, d *deferredDoc) Value {
	return Value{kind: k, num: numDeferred, ptr: unsafe.Pointer(d)}
}

// rawDeferred returns the deferredDoc a deferred Value points at.
func (v Value) rawDeferred() *deferredDoc { return (*deferredDoc)(v.ptr) }

// stringBytes returns the bytes of s without copying them. The caller must not modify them.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// bytesString returns the bytes of b as a string without copying them. The caller must not
// modify b while the string, or any substring of it, is in use.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
