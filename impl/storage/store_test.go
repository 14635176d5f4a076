package storage

import (
	"context"
	"errors"
	"strings"
	"testing"
)

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
