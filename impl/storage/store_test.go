package storage

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"testing"
)

func newStore(t *testing.T, h harness) (*AuthenticatedStore, Backend) {
	t.Helper()
	b := h.open(t)
	return NewAuthenticatedStore(b, testKeyring(t)), b
}

func wantRecord(t testing.TB, rec Record, err error, revision uint64, keyID KeyID, payload string) {
	t.Helper()
	if err != nil {
		t.Fatalf("write: %v", err)
	}
	if rec.Revision != revision || rec.KeyID != keyID || string(rec.Payload) != payload {
		t.Fatalf("record %v (%q), want revision %d key %s %q", rec, rec.Payload, revision, keyID, payload)
	}
}

func wantLoaded(t testing.TB, s *AuthenticatedStore, key RecordKey, revision uint64, keyID KeyID, payload string) {
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
func TestStoreCreateReplaceLoad(t *testing.T) {
	forEachBackend(t, func(t *testing.T, h harness) {
		s, b := newStore(t, h)
		rec, err := s.Create(ctxb(), vectorKey, []byte("hello"))
		wantRecord(t, rec, err, 1, "storage-v1", "hello")
		// The backend holds exactly the reference's bytes.
		if snap := mustLoad(t, b, vectorKey); string(snap.Record.Bytes) != vector10Envelope {
			t.Fatalf("stored %s", snap.Record.Bytes)
		}
		wantLoaded(t, s, vectorKey, 1, "storage-v1", "hello")

		rec, err = s.Replace(ctxb(), vectorKey, 1, []byte("second payload"))
		wantRecord(t, rec, err, 2, "storage-v1", "second payload")
		wantLoaded(t, s, vectorKey, 2, "storage-v1", "second payload")

		// An empty payload is a valid record.
		rec, err = s.Replace(ctxb(), vectorKey, 2, nil)
		wantRecord(t, rec, err, 3, "storage-v1", "")
		wantLoaded(t, s, vectorKey, 3, "storage-v1", "")
	})
}

// Spec: STO-051
func TestStoreWriteConflicts(t *testing.T) {
	forEachBackend(t, func(t *testing.T, h harness) {
		s, _ := newStore(t, h)
		if _, err := s.Create(ctxb(), testKey, []byte("first")); err != nil {
			t.Fatal(err)
		}
		_, err := s.Create(ctxb(), testKey, []byte("again"))
		e := wantKind(t, err, ErrWriteConflict)
		if e.Expected != nil || *e.Actual != 1 || e.Floor != 1 {
			t.Fatalf("%v", e)
		}
		_, err = s.Replace(ctxb(), testKey, 0, []byte("stale"))
		e = wantKind(t, err, ErrWriteConflict)
		if *e.Expected != 0 || *e.Actual != 1 || e.Floor != 1 {
			t.Fatalf("%v", e)
		}
		_, err = s.Replace(ctxb(), otherKey, 5, []byte("absent"))
		e = wantKind(t, err, ErrWriteConflict)
		if *e.Expected != 5 || e.Actual != nil || e.Floor != 0 {
			t.Fatalf("%v", e)
		}
		wantLoaded(t, s, testKey, 1, "storage-v1", "first")
		if rec, err := s.Load(ctxb(), otherKey); rec != nil || err != nil {
			t.Fatalf("%v %v", rec, err)
		}
	})
}

// Spec: STO-051, STO-016
func TestStoreWriteCheckOrder(t *testing.T) {
	forEachBackend(t, func(t *testing.T, h harness) {
		s, b := newStore(t, h)
		h.plant(t, b, testKey, StoredRecord{Revision: 1, Bytes: []byte("not an envelope")})
		// The payload size is checked before the current record is opened.
		big := make([]byte, MaxPayloadBytes+1)
		_, err := s.Create(ctxb(), testKey, big)
		if e := wantKind(t, err, ErrPayloadTooLarge); e.Size != MaxPayloadBytes+1 || e.Limit != MaxPayloadBytes {
			t.Fatalf("%v", e)
		}
		// Then the current record must open, before the revision comparison.
		_, err = s.Create(ctxb(), testKey, []byte("x"))
		wantKind(t, err, ErrInvalidEnvelope)
		_, err = s.Replace(ctxb(), testKey, 1, []byte("x"))
		wantKind(t, err, ErrInvalidEnvelope)

		// The largest payload fits.
		exact := bytes.Repeat([]byte{0xa5}, MaxPayloadBytes)
		rec, err := s.Create(ctxb(), otherKey, exact)
		if err != nil || rec.Revision != 1 {
			t.Fatalf("%v %v", rec, err)
		}
		loaded, err := s.Load(ctxb(), otherKey)
		if err != nil || !bytes.Equal(loaded.Payload, exact) {
			t.Fatalf("round trip of the largest payload failed: %v", err)
		}
	})
}

// Spec: STO-051
func TestStoreRevisionExhausted(t *testing.T) {
	forEachBackend(t, func(t *testing.T, h harness) {
		s, b := newStore(t, h)
		env, err := SealEnvelope(vector10Key(), "storage-v1", testKey, math.MaxUint64, []byte("last"))
		if err != nil {
			t.Fatal(err)
		}
		h.plant(t, b, testKey, StoredRecord{Revision: math.MaxUint64, Bytes: env})
		wantLoaded(t, s, testKey, math.MaxUint64, "storage-v1", "last")
		_, err = s.Replace(ctxb(), testKey, math.MaxUint64, []byte("wrap"))
		wantKind(t, err, ErrRevisionExhausted)
	})
}

// Spec: STO-053, STO-024, STO-054
func TestStoreFencedSupersededWriter(t *testing.T) {
	forEachBackend(t, func(t *testing.T, h harness) {
		s, _ := newStore(t, h)
		rec, err := s.CompareAndSwapFenced(ctxb(), testKey, nil, []byte("first payload"), 5)
		wantRecord(t, rec, err, 1, "storage-v1", "first payload")

		// A newer writer with a stale snapshot conflicts, but its token stays.
		_, err = s.CompareAndSwapFenced(ctxb(), testKey, rev(0), []byte("stale snapshot"), 6)
		e := wantKind(t, err, ErrWriteConflict)
		if *e.Expected != 0 || *e.Actual != 1 || e.Floor != 1 {
			t.Fatalf("%v", e)
		}
		if f, err := s.CurrentFence(ctxb(), testKey); err != nil || f != 6 {
			t.Fatalf("fence %d, %v", f, err)
		}
		// Unfenced writes are refused, and the old writer is fenced out.
		_, err = s.CompareAndSwap(ctxb(), testKey, rev(1), []byte("unfenced writer"))
		if e := wantKind(t, err, ErrBackend, ErrFencingRequired); e.CurrentFence != 6 {
			t.Fatalf("%v", e)
		}
		_, err = s.CompareAndSwapFenced(ctxb(), testKey, rev(1), []byte("old writer"), 5)
		if e := wantKind(t, err, ErrBackend, ErrFencingTokenRejected); e.CurrentFence != 6 || e.SuppliedFence != 5 {
			t.Fatalf("%v", e)
		}
		if !errors.Is(err, ErrBackend) || !errors.Is(err, ErrFencingTokenRejected) || errors.Is(err, ErrWriteConflict) {
			t.Fatalf("errors.Is does not see the chain of %v", err)
		}
		rec, err = s.CompareAndSwapFenced(ctxb(), testKey, rev(1), []byte("current writer"), 6)
		wantRecord(t, rec, err, 2, "storage-v1", "current writer")
		wantLoaded(t, s, testKey, 2, "storage-v1", "current writer")
	})
}

// Spec: STO-053
func TestStoreFencedWriteEstablishesBeforeAnyOtherCheck(t *testing.T) {
	forEachBackend(t, func(t *testing.T, h harness) {
		s, b := newStore(t, h)
		// Too large: the fence still moves.
		_, err := s.CompareAndSwapFenced(ctxb(), testKey, nil, make([]byte, MaxPayloadBytes+1), 9)
		wantKind(t, err, ErrPayloadTooLarge)
		if f := mustFence(t, b, testKey); f != 9 {
			t.Fatalf("fence %d, want 9", f)
		}
		// A corrupt current record: the fence still moves.
		h.plant(t, b, testKey, StoredRecord{Revision: 1, Bytes: []byte("{}")})
		_, err = s.CompareAndSwapFenced(ctxb(), testKey, rev(1), []byte("x"), 12)
		wantKind(t, err, ErrInvalidEnvelope)
		if f := mustFence(t, b, testKey); f != 12 {
			t.Fatalf("fence %d, want 12", f)
		}
		// A lower token fails at establishment, before the size check.
		_, err = s.CompareAndSwapFenced(ctxb(), testKey, rev(1), make([]byte, MaxPayloadBytes+1), 11)
		wantKind(t, err, ErrBackend, ErrFencingTokenRejected)
		// Token 0 changes nothing.
		_, err = s.CompareAndSwapFenced(ctxb(), otherKey, nil, []byte("x"), 0)
		wantKind(t, err, ErrBackend, ErrInvalidFencingToken)
		if f := mustFence(t, b, otherKey); f != 0 {
			t.Fatalf("fence %d after token 0", f)
		}
		if rec, err := s.Load(ctxb(), otherKey); rec != nil || err != nil {
			t.Fatalf("%v %v", rec, err)
		}
	})
}

// Spec: STO-026, STO-025
func TestStoreFencePassThrough(t *testing.T) {
	forEachBackend(t, func(t *testing.T, h harness) {
		s, b := newStore(t, h)
		for want := uint64(1); want <= 3; want++ {
			if got, err := s.ReserveFence(ctxb(), testKey); err != nil || got != want {
				t.Fatalf("reserve %d, %v", got, err)
			}
		}
		if f, err := s.CurrentFence(ctxb(), testKey); err != nil || f != 3 {
			t.Fatalf("fence %d, %v", f, err)
		}
		h.setFence(t, b, testKey, math.MaxUint64)
		_, err := s.ReserveFence(ctxb(), testKey)
		wantKind(t, err, ErrBackend, ErrFencingTokenExhausted)
		_, err = s.ReserveFence(ctxb(), RecordKey{Namespace: "x"})
		wantKind(t, err, ErrInvalidName)
	})
}

// Spec: STO-055, STO-005, STO-006
func TestStoreKeyRotation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, h harness) {
		s, _ := newStore(t, h)
		if _, err := s.Create(ctxb(), testKey, []byte("payload")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Create(ctxb(), otherKey, []byte("untouched")); err != nil {
			t.Fatal(err)
		}
		var nine [KeyBytes]byte
		for i := range nine {
			nine[i] = 9
		}
		if err := s.Keyring().RotateTo("storage-v2", NewKey(nine)); err != nil {
			t.Fatal(err)
		}
		wantLoaded(t, s, testKey, 1, "storage-v1", "payload")
		rec, err := s.Replace(ctxb(), testKey, 1, []byte("payload"))
		wantRecord(t, rec, err, 2, "storage-v2", "payload")
		wantLoaded(t, s, testKey, 2, "storage-v2", "payload")

		if err := s.Keyring().Retire("storage-v1"); err != nil {
			t.Fatal(err)
		}
		wantLoaded(t, s, testKey, 2, "storage-v2", "payload")
		// The record never rewritten is no longer verifiable.
		_, err = s.Load(ctxb(), otherKey)
		wantKind(t, err, ErrUnknownKeyID)
	})
}

// scriptedBackend wraps a backend and replaces the outcome of its swaps.
type scriptedBackend struct {
	Backend
	outcome CASOutcome
	err     error
}

func (s scriptedBackend) CompareAndSwap(context.Context, RecordKey, *uint64, StoredRecord) (CASOutcome, error) {
	return s.outcome, s.err
}

func (s scriptedBackend) CompareAndSwapFenced(context.Context, RecordKey, *uint64, StoredRecord, uint64) (CASOutcome, error) {
	return s.outcome, s.err
}

// Spec: STO-052, STO-054
func TestStoreInterpretsBackendOutcomes(t *testing.T) {
	ring := testKeyring(t)
	cases := []struct {
		name    string
		outcome CASOutcome
		err     error
		check   func(t *testing.T, err error)
	}{
		{"stored at another floor", CASOutcome{Stored: true, RevisionFloor: 7}, nil, func(t *testing.T, err error) {
			if e := wantKind(t, err, ErrRevisionFloorMismatch); *e.Actual != 1 || e.Floor != 7 {
				t.Fatalf("%v", e)
			}
		}},
		{"conflict on a removed record", CASOutcome{RevisionFloor: 3}, nil, func(t *testing.T, err error) {
			if e := wantKind(t, err, ErrRollbackDetected); e.Actual != nil || e.Floor != 3 {
				t.Fatalf("%v", e)
			}
		}},
		{"conflict at revision 0", CASOutcome{ActualRevision: rev(0)}, nil, func(t *testing.T, err error) {
			wantKind(t, err, ErrInvalidRevision)
		}},
		{"conflict above the floor", CASOutcome{ActualRevision: rev(4), RevisionFloor: 2}, nil, func(t *testing.T, err error) {
			wantKind(t, err, ErrRevisionFloorMismatch)
		}},
		{"plain conflict", CASOutcome{ActualRevision: rev(4), RevisionFloor: 4}, nil, func(t *testing.T, err error) {
			if e := wantKind(t, err, ErrWriteConflict); e.Expected != nil || *e.Actual != 4 || e.Floor != 4 {
				t.Fatalf("%v", e)
			}
		}},
		{"backend failure", CASOutcome{}, &Error{Kind: ErrSQLite, Err: errors.New("disk on fire")}, func(t *testing.T, err error) {
			wantKind(t, err, ErrBackend, ErrSQLite)
			if !strings.Contains(err.Error(), "disk on fire") {
				t.Fatalf("cause lost: %v", err)
			}
		}},
		{"foreign backend failure", CASOutcome{}, context.DeadlineExceeded, func(t *testing.T, err error) {
			wantKind(t, err, ErrBackend)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("cause lost: %v", err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewAuthenticatedStore(scriptedBackend{Backend: NewMemoryBackend(), outcome: c.outcome, err: c.err}, ring)
			_, err := s.Create(ctxb(), testKey, []byte("x"))
			c.check(t, err)
			_, err = s.CompareAndSwapFenced(ctxb(), testKey, nil, []byte("x"), 1)
			c.check(t, err)
		})
	}
}

// Spec: STO-003
func TestStoreAcceptsTheAllZeroKey(t *testing.T) {
	ring, err := NewKeyring("zero", NewKey([KeyBytes]byte{}))
	if err != nil {
		t.Fatal(err)
	}
	s := NewAuthenticatedStore(NewMemoryBackend(), ring)
	if _, err := s.Create(ctxb(), testKey, []byte("p")); err != nil {
		t.Fatal(err)
	}
	wantLoaded(t, s, testKey, 1, "zero", "p")
	// A different key (that of reference anchor A10) does not verify it.
	other := NewAuthenticatedStore(s.Backend(), mustKeyring(t, "zero", vector10Key()))
	_, err = other.Load(ctxb(), testKey)
	wantKind(t, err, ErrInvalidAuthenticationTag)
}

func mustKeyring(t *testing.T, id KeyID, key Key) *Keyring {
	t.Helper()
	ring, err := NewKeyring(id, key)
	if err != nil {
		t.Fatal(err)
	}
	return ring
}

// Spec: STO-001
func TestStoreValidatesRecordKeys(t *testing.T) {
	s := NewAuthenticatedStore(NewMemoryBackend(), testKeyring(t))
	bad := RecordKey{Namespace: "ok", Name: "Not OK"}
	_, err := s.Load(ctxb(), bad)
	wantKind(t, err, ErrInvalidName)
	_, err = s.Create(ctxb(), bad, nil)
	wantKind(t, err, ErrInvalidName)
	_, err = s.CompareAndSwapFenced(ctxb(), bad, nil, nil, 1)
	wantKind(t, err, ErrInvalidName)
	_, err = s.CurrentFence(ctxb(), bad)
	wantKind(t, err, ErrInvalidName)
}
