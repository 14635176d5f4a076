package host

import (
	"errors"
	"testing"
)

// Spec: RUN-120, RUN-121
// Registration keeps its own copy of the stream policy: a caller that changes its policy value
// afterwards changes neither the enforced limits nor the catalog.
func TestRegistrationCopiesTheStreamPolicy(t *testing.T) {
	r, _ := newTestRuntime(t, Config{})
	stream := &StreamPolicy{MaxChunks: 1, MaxChunkBytes: 4, MaxTotalBytes: 8, MaxEmittedBytes: 8}
	p := NewPolicy("remote")
	p.Stream = stream
	mustRegister(t, r.RegisterExternalTool(p, Metadata{}))
	before := string(r.CatalogJSON())
	stream.MaxChunks, stream.MaxChunkBytes = 100, 8
	if after := string(r.CatalogJSON()); after != before {
		t.Fatalf("the catalog followed the caller's policy:\n%s\n%s", before, after)
	}
	id, err := r.Start("remote", "x")
	wantNoError(t, err)
	if _, err := r.ClaimExternal(id); err != nil {
		t.Fatal(err)
	}
	if _, err := r.PushExternalChunk(id, "abcdefg"); !errors.Is(err, ErrStreamLimitExceeded) {
		t.Fatalf("a 7-byte chunk against the registered 4-byte limit: %v", err)
	}
	if _, err := r.PushExternalChunk(id, "ab"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.PushExternalChunk(id, "cd"); !errors.Is(err, ErrStreamLimitExceeded) {
		t.Fatalf("a second chunk against the registered limit of one: %v", err)
	}
}
