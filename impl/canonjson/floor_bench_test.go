package canonjson

import (
	"strconv"
	"testing"
)

// BenchmarkBuildFloor measures what any builder of a Value tree pays at least, next to the
// builder itself (BenchmarkBuildCanonical, same texts): it allocates the elements and
// entries of the items payload in two exactly sized slices, fills them by copying a tree
// built beforehand (no text is read at all), and walks the result as the builder's
// benchmark does. "reused" fills the same two slices every time, so it shows what the
// allocation and the fresh memory it hands out cost on top.
func BenchmarkBuildFloor(b *testing.B) {
	for _, size := range []int{256, 4 << 10, 64 << 10} {
		text := benchItems(size)
		model, ok := buildCanonical(text, Preserve)
		if !ok {
			b.Fatal("not canonical")
		}
		nv, ne := countTree(model)
		b.Run("items-"+strconv.Itoa(size), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				f := treeFill{vals: make([]Value, nv), ents: make([]Entry, ne)}
				if walkCount(f.copy(model)) == 0 {
					b.Fatal("empty")
				}
			}
		})
		b.Run("items-"+strconv.Itoa(size)+"-reused", func(b *testing.B) {
			vals, ents := make([]Value, nv), make([]Entry, ne)
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				f := treeFill{vals: vals, ents: ents}
				if walkCount(f.copy(model)) == 0 {
					b.Fatal("empty")
				}
			}
		})
	}
}

// countTree returns how many array elements and object entries v holds, at every depth.
func countTree(v Value) (elems, ents int) {
	for _, e := range v.Elems() {
		a, b := countTree(e)
		elems, ents = elems+1+a, ents+b
	}
	for _, e := range v.Entries() {
		a, b := countTree(e.Value)
		elems, ents = elems+a, ents+1+b
	}
	return elems, ents
}

// treeFill copies trees into preallocated elements and entries.
type treeFill struct {
	vals []Value
	ents []Entry
}

// copy returns a copy of v whose containers live in f's slices.
func (f *treeFill) copy(v Value) Value {
	switch v.Kind() {
	case KindArray:
		src := v.Elems()
		out := f.vals[:len(src):len(src)]
		f.vals = f.vals[len(src):]
		for i, e := range src {
			out[i] = f.copy(e)
		}
		return arrayValue(out)
	case KindObject:
		src := v.Entries()
		out := f.ents[:len(src):len(src)]
		f.ents = f.ents[len(src):]
		for i, e := range src {
			out[i] = Entry{Key: e.Key, Value: f.copy(e.Value)}
		}
		return objectValue(out)
	}
	return v
}
