package storage

import (
	"bytes"
	"context"
	"testing"
)

// The storage record of reference anchor A10 (docs/reference-anchors.md): produced by the
// Rust reference implementation, never by this package.
const vector10Envelope = `{"format_version":1,"key_id":"storage-v1","revision":1,"payload":"aGVsbG8","auth_tag":"364a8f1bc9e6cdeca3b4612a14dc81029d96c050c62886c46140a43b7776eecd"}`

func vector10Key() Key {
	var b [KeyBytes]byte
	for i := range b {
		b[i] = 0x07
	}
	return NewKey(b)
}

// Spec: STO-010, STO-011, STO-012
func TestVector10Seal(t *testing.T) {
	rk := RecordKey{Namespace: "worker-journal", Name: "tenant-release"}
	got, err := SealEnvelope(vector10Key(), "storage-v1", rk, 1, []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != vector10Envelope {
		t.Fatalf("sealed envelope\n got %s\nwant %s", got, vector10Envelope)
	}
}

// Spec: STO-010, STO-048
func TestVector10OpenThroughStore(t *testing.T) {
	rk := RecordKey{Namespace: "worker-journal", Name: "tenant-release"}
	mem := NewMemoryBackend()
	if _, err := mem.CompareAndSwap(context.Background(), rk, nil, StoredRecord{Revision: 1, Bytes: []byte(vector10Envelope)}); err != nil {
		t.Fatal(err)
	}
	ring, err := NewKeyring("storage-v1", vector10Key())
	if err != nil {
		t.Fatal(err)
	}
	rec, err := NewAuthenticatedStore(mem, ring).Load(context.Background(), rk)
	if err != nil {
		t.Fatal(err)
	}
	if rec == nil || rec.Revision != 1 || rec.KeyID != "storage-v1" || !bytes.Equal(rec.Payload, []byte("hello")) {
		t.Fatalf("loaded %v", rec)
	}
}
