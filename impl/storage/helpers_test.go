package storage

import (
	"context"
	"testing"
)

var (
	testKey   = RecordKey{Namespace: "workflow-ledger", Name: "release-42"}
	vectorKey = RecordKey{Namespace: "worker-journal", Name: "tenant-release"}
)

func rev(r uint64) *uint64 { return &r }

// wantKind fails unless err is a chain of storage errors whose kinds are
// exactly kinds (outermost first), and returns the innermost one.
func wantKind(t testing.TB, err error, kinds ...ErrorKind) *Error {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %v", kinds)
	}
	cur := err
	var se *Error
	for i, k := range kinds {
		var ok bool
		se, ok = cur.(*Error)
		if !ok || se.Kind != k {
			t.Fatalf("error %q: level %d is not %v", err, i, k)
		}
		cur = se.Err
	}
	if _, nested := cur.(*Error); nested {
		t.Fatalf("error %q: unexpected nested storage error below %v", err, kinds)
	}
	return se
}

func testKeyring(t testing.TB) *Keyring {
	t.Helper()
	ring, err := NewKeyring("storage-v1", vector10Key())
	if err != nil {
		t.Fatal(err)
	}
	return ring
}

func ctxb() context.Context { return context.Background() }
