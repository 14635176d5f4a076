package canonjson

import (
	"runtime"
	"strings"
	"testing"
)

// TestUnsafeViewsRoundTrip checks the conversions of unsafe.go: what goes into a Value comes
// back out with the same contents and length, empty and nil inputs included, also after a
// collection has run while the Value held the only reference to its data.
func TestUnsafeViewsRoundTrip(t *testing.T) {
	for _, s := range []string{"", "a", "héllo", strings.Repeat("xyz", 1000)} {
		v := textValue(KindString, 0, strings.Clone(s)) // fresh memory that only v refers to
		runtime.GC()
		if got := v.str(); got != s || v.bits != uint64(len(s)) {
			t.Fatalf("string %.20q came back as %.20q", s, got)
		}
		if b := stringBytes(s); string(b) != s || len(b) != len(s) || cap(b) != len(s) {
			t.Fatalf("stringBytes(%.20q) = %.20q (len %d, cap %d)", s, b, len(b), cap(b))
		}
	}

	for _, elems := range [][]Value{nil, {}, {String("a"), Uint(1), {}}} {
		v := arrayValue(elems)
		got := v.rawElems()
		if len(got) != len(elems) {
			t.Fatalf("array of %d came back with %d elements", len(elems), len(got))
		}
		for i := range got {
			if &got[i] != &elems[i] {
				t.Fatalf("element %d was copied, not referenced", i)
			}
		}
	}

	ents := []Entry{{Key: "a", Value: Uint(1)}, {Key: "b", Value: String("x")}}
	for _, es := range [][]Entry{nil, ents} {
		got := objectValue(es).rawEnts()
		if len(got) != len(es) {
			t.Fatalf("object of %d came back with %d entries", len(es), len(got))
		}
		for i := range got {
			if &got[i] != &es[i] {
				t.Fatalf("entry %d was copied, not referenced", i)
			}
		}
	}

	d := &deferredDoc{text: "[1]"}
	if v := deferredRef(KindArray, d); v.rawDeferred() != d || v.deferred() != d {
		t.Fatal("a deferred value lost its document")
	}
}
