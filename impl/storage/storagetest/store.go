package storagetest

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/splashv5/conform/impl/storage"
)

func newStore(t *testing.T, h Harness) (*storage.AuthenticatedStore, storage.Backend) {
	t.Helper()
	b := h.Open(t)
	return storage.NewAuthenticatedStore(b, Keyring(t)), b
}

func wantRecord(t testing.TB, rec storage.Record, err error, revision uint64, keyID storage.KeyID, payload string) {
	t.Helper()
	if err != nil {
		t.Fatalf("write: %v", err)
	}
	if rec.Revision != revision || rec.KeyID != keyID || string(rec.Payload) != payload {
		t.Fatalf("record %v (%q), want revision %d key %s %q", rec, rec.Payload, revision, keyID, payload)
	}
}

// WantLoaded fails unless key loads from s as the given revision, key id and payload.
func WantLoaded(t testing.TB, s *storage.AuthenticatedStore, key storage.RecordKey, revision uint64, keyID storage.KeyID, payload string) {
	t.Helper()
	rec, err := s.Load(ctxb(), key)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if rec == nil {
		t.Fatalf("load: absent, want revision %d", revision)
	}
	wantRecord(t, *rec, nil, revision, keyID, payload)
}

// Spec: STO-050, STO-048, STO-010
func testStoreCreateReplaceLoad(t *testing.T, h Harness) {
	s, b := newStore(t, h)
	rec, err := s.Create(ctxb(), VectorKey, []byte("hello"))
	wantRecord(t, rec, err, 1, "storage-v1", "hello")
	// The backend holds exactly the reference's bytes.
	if snap := mustLoad(t, b, VectorKey); string(snap.Record.Bytes) != Vector10Envelope {
		t.Fatalf("stored %s", snap.Record.Bytes)
	}
	WantLoaded(t, s, VectorKey, 1, "storage-v1", "hello")

	rec, err = s.Replace(ctxb(), VectorKey, 1, []byte("second payload"))
	wantRecord(t, rec, err, 2, "storage-v1", "second payload")
	WantLoaded(t, s, VectorKey, 2, "storage-v1", "second payload")

	// An empty payload is a valid record.
	rec, err = s.Replace(ctxb(), VectorKey, 2, nil)
	wantRecord(t, rec, err, 3, "storage-v1", "")
	WantLoaded(t, s, VectorKey, 3, "storage-v1", "")
}

// Spec: STO-051
func testStoreWriteConflicts(t *testing.T, h Harness) {
	s, _ := newStore(t, h)
	if _, err := s.Create(ctxb(), TestKey, []byte("first")); err != nil {
		t.Fatal(err)
	}
	_, err := s.Create(ctxb(), TestKey, []byte("again"))
	e := WantKind(t, err, storage.ErrWriteConflict)
	if e.Expected != nil || *e.Actual != 1 || e.Floor != 1 {
		t.Fatalf("%v", e)
	}
	_, err = s.Replace(ctxb(), TestKey, 0, []byte("stale"))
	e = WantKind(t, err, storage.ErrWriteConflict)
	if *e.Expected != 0 || *e.Actual != 1 || e.Floor != 1 {
		t.Fatalf("%v", e)
	}
	_, err = s.Replace(ctxb(), OtherKey, 5, []byte("absent"))
	e = WantKind(t, err, storage.ErrWriteConflict)
	if *e.Expected != 5 || e.Actual != nil || e.Floor != 0 {
		t.Fatalf("%v", e)
	}
	WantLoaded(t, s, TestKey, 1, "storage-v1", "first")
	if rec, err := s.Load(ctxb(), OtherKey); rec != nil || err != nil {
		t.Fatalf("%v %v", rec, err)
	}
}

// Spec: STO-051, STO-016
func testStoreWriteCheckOrder(t *testing.T, h Harness) {
	s, b := newStore(t, h)
	h.Plant(t, b, TestKey, storage.StoredRecord{Revision: 1, Bytes: []byte("not an envelope")})
	// The payload size is checked before the current record is opened.
	big := make([]byte, storage.MaxPayloadBytes+1)
	_, err := s.Create(ctxb(), TestKey, big)
	if e := WantKind(t, err, storage.ErrPayloadTooLarge); e.Size != storage.MaxPayloadBytes+1 || e.Limit != storage.MaxPayloadBytes {
		t.Fatalf("%v", e)
	}
	// Then the current record must open, before the revision comparison.
	_, err = s.Create(ctxb(), TestKey, []byte("x"))
	WantKind(t, err, storage.ErrInvalidEnvelope)
	_, err = s.Replace(ctxb(), TestKey, 1, []byte("x"))
	WantKind(t, err, storage.ErrInvalidEnvelope)

	// The largest payload fits.
	exact := bytes.Repeat([]byte{0xa5}, storage.MaxPayloadBytes)
	rec, err := s.Create(ctxb(), OtherKey, exact)
	if err != nil || rec.Revision != 1 {
		t.Fatalf("%v %v", rec, err)
	}
	loaded, err := s.Load(ctxb(), OtherKey)
	if err != nil || !bytes.Equal(loaded.Payload, exact) {
		t.Fatalf("round trip of the largest payload failed: %v", err)
	}
}

// Spec: STO-051
func testStoreRevisionExhausted(t *testing.T, h Harness) {
	s, b := newStore(t, h)
	env, err := storage.SealEnvelope(vector10Key(), "storage-v1", TestKey, math.MaxUint64, []byte("last"))
	if err != nil {
		t.Fatal(err)
	}
	h.Plant(t, b, TestKey, storage.StoredRecord{Revision: math.MaxUint64, Bytes: env})
	WantLoaded(t, s, TestKey, math.MaxUint64, "storage-v1", "last")
	_, err = s.Replace(ctxb(), TestKey, math.MaxUint64, []byte("wrap"))
	WantKind(t, err, storage.ErrRevisionExhausted)
}

// Spec: STO-053, STO-024, STO-054
func testStoreFencedSupersededWriter(t *testing.T, h Harness) {
	s, _ := newStore(t, h)
	rec, err := s.CompareAndSwapFenced(ctxb(), TestKey, nil, []byte("first payload"), 5)
	wantRecord(t, rec, err, 1, "storage-v1", "first payload")

	// A newer writer with a stale snapshot conflicts, but its token stays.
	_, err = s.CompareAndSwapFenced(ctxb(), TestKey, rev(0), []byte("stale snapshot"), 6)
	e := WantKind(t, err, storage.ErrWriteConflict)
	if *e.Expected != 0 || *e.Actual != 1 || e.Floor != 1 {
		t.Fatalf("%v", e)
	}
	if f, err := s.CurrentFence(ctxb(), TestKey); err != nil || f != 6 {
		t.Fatalf("fence %d, %v", f, err)
	}
	// Unfenced writes are refused, and the old writer is fenced out.
	_, err = s.CompareAndSwap(ctxb(), TestKey, rev(1), []byte("unfenced writer"))
	if e := WantKind(t, err, storage.ErrBackend, storage.ErrFencingRequired); e.CurrentFence != 6 {
		t.Fatalf("%v", e)
	}
	_, err = s.CompareAndSwapFenced(ctxb(), TestKey, rev(1), []byte("old writer"), 5)
	if e := WantKind(t, err, storage.ErrBackend, storage.ErrFencingTokenRejected); e.CurrentFence != 6 || e.SuppliedFence != 5 {
		t.Fatalf("%v", e)
	}
	if !errors.Is(err, storage.ErrBackend) || !errors.Is(err, storage.ErrFencingTokenRejected) || errors.Is(err, storage.ErrWriteConflict) {
		t.Fatalf("errors.Is does not see the chain of %v", err)
	}
	rec, err = s.CompareAndSwapFenced(ctxb(), TestKey, rev(1), []byte("current writer"), 6)
	wantRecord(t, rec, err, 2, "storage-v1", "current writer")
	WantLoaded(t, s, TestKey, 2, "storage-v1", "current writer")
}

// Spec: STO-053
func testStoreFencedWriteEstablishesBeforeAnyOtherCheck(t *testing.T, h Harness) {
	s, b := newStore(t, h)
	// Too large: the fence still moves.
	_, err := s.CompareAndSwapFenced(ctxb(), TestKey, nil, make([]byte, storage.MaxPayloadBytes+1), 9)
	WantKind(t, err, storage.ErrPayloadTooLarge)
	if f := mustFence(t, b, TestKey); f != 9 {
		t.Fatalf("fence %d, want 9", f)
	}
	// A corrupt current record: the fence still moves.
	h.Plant(t, b, TestKey, storage.StoredRecord{Revision: 1, Bytes: []byte("{}")})
	_, err = s.CompareAndSwapFenced(ctxb(), TestKey, rev(1), []byte("x"), 12)
	WantKind(t, err, storage.ErrInvalidEnvelope)
	if f := mustFence(t, b, TestKey); f != 12 {
		t.Fatalf("fence %d, want 12", f)
	}
	// A lower token fails at establishment, before the size check.
	_, err = s.CompareAndSwapFenced(ctxb(), TestKey, rev(1), make([]byte, storage.MaxPayloadBytes+1), 11)
	WantKind(t, err, storage.ErrBackend, storage.ErrFencingTokenRejected)
	// Token 0 changes nothing.
	_, err = s.CompareAndSwapFenced(ctxb(), OtherKey, nil, []byte("x"), 0)
	WantKind(t, err, storage.ErrBackend, storage.ErrInvalidFencingToken)
	if f := mustFence(t, b, OtherKey); f != 0 {
		t.Fatalf("fence %d after token 0", f)
	}
	if rec, err := s.Load(ctxb(), OtherKey); rec != nil || err != nil {
		t.Fatalf("%v %v", rec, err)
	}
}

// Spec: STO-026, STO-025
func testStoreFencePassThrough(t *testing.T, h Harness) {
	s, b := newStore(t, h)
	for want := uint64(1); want <= 3; want++ {
		if got, err := s.ReserveFence(ctxb(), TestKey); err != nil || got != want {
			t.Fatalf("reserve %d, %v", got, err)
		}
	}
	if f, err := s.CurrentFence(ctxb(), TestKey); err != nil || f != 3 {
		t.Fatalf("fence %d, %v", f, err)
	}
	h.SetFence(t, b, TestKey, math.MaxUint64)
	_, err := s.ReserveFence(ctxb(), TestKey)
	WantKind(t, err, storage.ErrBackend, storage.ErrFencingTokenExhausted)
	_, err = s.ReserveFence(ctxb(), storage.RecordKey{Namespace: "x"})
	WantKind(t, err, storage.ErrInvalidName)
}

// Spec: STO-055, STO-005, STO-006
func testStoreKeyRotation(t *testing.T, h Harness) {
	s, _ := newStore(t, h)
	if _, err := s.Create(ctxb(), TestKey, []byte("payload")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctxb(), OtherKey, []byte("untouched")); err != nil {
		t.Fatal(err)
	}
	var nine [storage.KeyBytes]byte
	for i := range nine {
		nine[i] = 9
	}
	if err := s.Keyring().RotateTo("storage-v2", storage.NewKey(nine)); err != nil {
		t.Fatal(err)
	}
	WantLoaded(t, s, TestKey, 1, "storage-v1", "payload")
	rec, err := s.Replace(ctxb(), TestKey, 1, []byte("payload"))
	wantRecord(t, rec, err, 2, "storage-v2", "payload")
	WantLoaded(t, s, TestKey, 2, "storage-v2", "payload")

	if err := s.Keyring().Retire("storage-v1"); err != nil {
		t.Fatal(err)
	}
	WantLoaded(t, s, TestKey, 2, "storage-v2", "payload")
	// The record never rewritten is no longer verifiable.
	_, err = s.Load(ctxb(), OtherKey)
	WantKind(t, err, storage.ErrUnknownKeyID)
}
