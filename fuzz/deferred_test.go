package fuzz

import (
	"bytes"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
)

// FuzzDeferredParse checks the received-text shortcut on arbitrary bytes, each tried both as
// a document of its own and as the value of a "value" member: ParseDeferring fails exactly
// when Parse fails, with the same error, and the values it yields (deferred or not) equal
// the eagerly parsed ones and write the same canonical bytes. A deferred value's bytes are
// the received text, so this is what makes hashing them safe.
//
// Spec: ENC-052, ENC-053
func FuzzDeferredParse(f *testing.F) {
	for _, s := range canonjsonHandSeeds {
		f.Add([]byte(s))
	}
	addSeeds(f, canonicalJSONSeeds(f))
	var ps canonjson.Parser
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, doc := range [][]byte{data, append(append([]byte(`{"format":"json","value":`), data...), '}')} {
			eager, perr := canonjson.Parse(doc)
			for _, m := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
				lazy, derr := ps.ParseDeferring(doc, "value", m)
				if (perr == nil) != (derr == nil) || perr != nil && perr.Error() != derr.Error() {
					t.Fatalf("%v: Parse error %v, ParseDeferring error %v", m, perr, derr)
				}
				if perr != nil {
					continue
				}
				want, werr := canonjson.FromNode(eager, m)
				got, gerr := canonjson.FromNode(lazy, m)
				if (werr == nil) != (gerr == nil) {
					t.Fatalf("%v: FromNode error %v on the eager tree, %v on the deferring one", m, werr, gerr)
				}
				if werr != nil {
					continue
				}
				if !bytes.Equal(got.JSON(), want.JSON()) || !canonjson.Equal(got, want) {
					t.Fatalf("%v: deferring parse gives %q, eager parse %q", m, got.JSON(), want.JSON())
				}
				if canonjson.HoldsPreserveOnlyNumber(got) != canonjson.HoldsPreserveOnlyNumber(want) {
					t.Fatalf("%v: %q: the deferred value and the tree disagree on Preserve-only numbers", m, got.JSON())
				}
				for d := 1; d <= 130; d++ {
					if got.WithinDepth(d) != want.WithinDepth(d) {
						t.Fatalf("%v: WithinDepth(%d) differs", m, d)
					}
				}
			}
		}
	})
}
