package storage

import (
	"bytes"
	"context"
	"fmt"
	"sync"
)

// Record is a verified record: its revision, the key id that authenticated
// it and its payload.
type Record struct {
	Revision uint64
	KeyID    KeyID
	Payload  []byte
}

// String describes the record without its payload bytes.
func (r Record) String() string {
	return fmt.Sprintf("Record{revision: %d, key_id: %q, payload: %d bytes}", r.Revision, string(r.KeyID), len(r.Payload))
}

// AuthenticatedStore authenticates the records held by a Backend with the
// keys of a Keyring. Every read is verified against the key, the record
// location and the backend's revision floor before it is returned; every
// write is sealed with the keyring's active key. Its safety for concurrent use
// is that of its backend (both backends of this package are safe).
type AuthenticatedStore struct {
	backend Backend
	keyring *Keyring

	// verified remembers, per record key, the last envelope this store sealed and wrote or
	// opened successfully. The envelope checks are a function of the envelope's bytes, the
	// backend's revision, the record key and the keyring's keys, so an envelope read back
	// with the same bytes at the same revision, under the same generation of keys, passes
	// them again: its payload is taken from here instead of decoding and hashing it again.
	mu       sync.Mutex
	verified map[RecordKey]verifiedEnvelope
}

// verifiedEnvelope is an envelope known to pass the envelope checks.
type verifiedEnvelope struct {
	revision   uint64
	generation uint64
	envelope   []byte
	keyID      KeyID
}

// NewAuthenticatedStore returns a store over backend using keyring.
func NewAuthenticatedStore(backend Backend, keyring *Keyring) *AuthenticatedStore {
	return &AuthenticatedStore{backend: backend, keyring: keyring, verified: make(map[RecordKey]verifiedEnvelope)}
}

// recall returns the record of envelope, without its payload, when it is the one remembered
// for key at revision. A read that returns the payload (copy) decodes the envelope instead.
func (s *AuthenticatedStore) recall(key RecordKey, revision uint64, envelope []byte, copy bool) (*Record, bool) {
	if copy {
		return nil, false
	}
	generation := s.keyring.currentGeneration()
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.verified[key]
	if !ok || v.revision != revision || v.generation != generation || !bytes.Equal(v.envelope, envelope) {
		return nil, false
	}
	return &Record{Revision: revision, KeyID: v.keyID}, true
}

// remember records envelope as verified for key, under the keys' generation read before it
// was verified or sealed. The envelope is handed over to the store: its bytes must never
// change (a backend's snapshot and a sealed envelope are the store's own).
func (s *AuthenticatedStore) remember(key RecordKey, generation, revision uint64, envelope []byte, keyID KeyID) {
	if s.verified == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.verified[key] = verifiedEnvelope{revision: revision, generation: generation, envelope: envelope, keyID: keyID}
}

// Backend returns the underlying backend.
func (s *AuthenticatedStore) Backend() Backend { return s.backend }

// Keyring returns the keyring.
func (s *AuthenticatedStore) Keyring() *Keyring { return s.keyring }

// Load reads and verifies the record at key. It returns (nil, nil) when the
// record is absent and its floor is zero.
func (s *AuthenticatedStore) Load(ctx context.Context, key RecordKey) (*Record, error) {
	if err := key.Validate(); err != nil {
		return nil, err
	}
	snap, err := s.backend.Load(ctx, key)
	if err != nil {
		return nil, &Error{Kind: ErrBackend, Err: err}
	}
	return s.open(key, snap)
}

// loadForWrite is Load for a write, which needs the record's revision only: a record this
// store remembers is not copied.
func (s *AuthenticatedStore) loadForWrite(ctx context.Context, key RecordKey) (*Record, error) {
	snap, err := s.backend.Load(ctx, key)
	if err != nil {
		return nil, &Error{Kind: ErrBackend, Err: err}
	}
	return s.openWith(key, snap, false)
}

// open applies the load checks to a snapshot, in the reference order.
func (s *AuthenticatedStore) open(key RecordKey, snap Snapshot) (*Record, error) {
	return s.openWith(key, snap, true)
}

// openWith is open; without copy, a remembered record's payload is left out.
func (s *AuthenticatedStore) openWith(key RecordKey, snap Snapshot, copy bool) (*Record, error) {
	var revision *uint64
	if snap.Record != nil {
		revision = ExpectRevision(snap.Record.Revision)
	}
	if err := checkRevisionPair(revision, snap.RevisionFloor); err != nil {
		return nil, err
	}
	if snap.Record == nil {
		return nil, nil
	}
	if rec, ok := s.recall(key, snap.Record.Revision, snap.Record.Bytes, copy); ok {
		return rec, nil
	}
	generation := s.keyring.currentGeneration()
	opened, err := openEnvelope(s.keyring, key, snap.Record.Revision, snap.Record.Bytes)
	if err != nil {
		return nil, err
	}
	s.remember(key, generation, snap.Record.Revision, snap.Record.Bytes, opened.keyID)
	return &Record{Revision: snap.Record.Revision, KeyID: opened.keyID, Payload: opened.payload}, nil
}

// checkRevisionPair checks a record revision (nil = absent) against its
// floor: absent needs floor 0; a present revision must be nonzero and equal
// the floor.
func checkRevisionPair(revision *uint64, floor uint64) error {
	switch {
	case revision == nil && floor == 0:
		return nil
	case revision == nil:
		return &Error{Kind: ErrRollbackDetected, Floor: floor}
	case *revision == 0:
		return &Error{Kind: ErrInvalidRevision}
	case *revision < floor:
		return &Error{Kind: ErrRollbackDetected, Actual: copyRevision(revision), Floor: floor}
	case *revision > floor:
		return &Error{Kind: ErrRevisionFloorMismatch, Actual: copyRevision(revision), Floor: floor}
	}
	return nil
}

// Create writes payload as revision 1 of an absent record.
func (s *AuthenticatedStore) Create(ctx context.Context, key RecordKey, payload []byte) (Record, error) {
	return s.CompareAndSwap(ctx, key, nil, payload)
}

// Replace writes payload over the record currently at revision.
func (s *AuthenticatedStore) Replace(ctx context.Context, key RecordKey, revision uint64, payload []byte) (Record, error) {
	return s.CompareAndSwap(ctx, key, ExpectRevision(revision), payload)
}

// CompareAndSwap verifies the current record, requires its revision to equal
// expected (nil = absent), and writes payload at the next revision sealed
// with the active key. It fails with ErrFencingRequired (wrapped in
// ErrBackend) once the record is fenced.
func (s *AuthenticatedStore) CompareAndSwap(ctx context.Context, key RecordKey, expected *uint64, payload []byte) (Record, error) {
	if err := key.Validate(); err != nil {
		return Record{}, err
	}
	generation := s.keyring.currentGeneration()
	replacement, keyID, err := s.prepare(ctx, key, expected, payload)
	if err != nil {
		return Record{}, err
	}
	outcome, err := s.backend.CompareAndSwap(ctx, key, expected, replacement)
	if err != nil {
		return Record{}, &Error{Kind: ErrBackend, Err: err}
	}
	rec, err := s.finish(key, generation, expected, replacement, keyID, outcome)
	if err == nil {
		rec.Payload = append([]byte(nil), payload...)
	}
	return rec, err
}

// CompareAndSwapFenced first establishes token as the record's fence (so a
// newer writer fences older ones even if this write then fails), then
// behaves as CompareAndSwap with the backend's fenced swap, which rechecks
// the token atomically.
func (s *AuthenticatedStore) CompareAndSwapFenced(ctx context.Context, key RecordKey, expected *uint64, payload []byte, token uint64) (Record, error) {
	rec, err := s.SwapFenced(ctx, key, expected, payload, token)
	if err == nil {
		rec.Payload = append([]byte(nil), payload...)
	}
	return rec, err
}

// SwapFenced is CompareAndSwapFenced for a writer that does not need its payload back: the
// record it returns has no payload.
func (s *AuthenticatedStore) SwapFenced(ctx context.Context, key RecordKey, expected *uint64, payload []byte, token uint64) (Record, error) {
	if err := key.Validate(); err != nil {
		return Record{}, err
	}
	if rec, done, err := s.swapRemembered(ctx, key, expected, payload, token); done {
		return rec, err
	}
	load := s.loadForWrite
	// A payload too large is refused after the fence is established, without a read.
	if fe, ok := s.backend.(FenceEstablisher); ok && len(payload) <= MaxPayloadBytes {
		load = func(ctx context.Context, key RecordKey) (*Record, error) {
			snap, err := fe.EstablishFenceAndLoad(ctx, key, token)
			if err != nil {
				return nil, &Error{Kind: ErrBackend, Err: err}
			}
			return s.openWith(key, snap, false)
		}
	} else if err := s.backend.EstablishFence(ctx, key, token); err != nil {
		return Record{}, &Error{Kind: ErrBackend, Err: err}
	}
	generation := s.keyring.currentGeneration()
	replacement, keyID, err := s.prepareWith(ctx, load, key, expected, payload)
	if err != nil {
		return Record{}, err
	}
	outcome, err := swapFencedKeeping(ctx, s.backend, key, expected, replacement, token)
	if err != nil {
		return Record{}, &Error{Kind: ErrBackend, Err: err}
	}
	return s.finish(key, generation, expected, replacement, keyID, outcome)
}

// swapRemembered tries a fenced write decided on the state the backend remembers (see
// StateRememberer). It is done when the write was stored, or when the swap failed (as the
// full path's swap would); when the remembered state does not lead to a write, or the swap
// found it stale and did not store, the full path decides instead.
func (s *AuthenticatedStore) swapRemembered(ctx context.Context, key RecordKey, expected *uint64, payload []byte, token uint64) (Record, bool, error) {
	sr, ok := s.backend.(StateRememberer)
	if !ok || token == 0 || len(payload) > MaxPayloadBytes {
		return Record{}, false, nil
	}
	snap, ok := sr.RememberedSnapshot(key, token)
	if !ok {
		return Record{}, false, nil
	}
	generation := s.keyring.currentGeneration()
	replacement, keyID, err := s.prepareWith(ctx, func(_ context.Context, key RecordKey) (*Record, error) {
		return s.openWith(key, snap, false)
	}, key, expected, payload)
	if err != nil {
		return Record{}, false, nil
	}
	outcome, err := swapFencedKeeping(ctx, sr, key, expected, replacement, token)
	if err != nil {
		return Record{}, true, &Error{Kind: ErrBackend, Err: err}
	}
	if !outcome.Stored {
		return Record{}, false, nil
	}
	rec, err := s.finish(key, generation, expected, replacement, keyID, outcome)
	return rec, true, err
}

// CurrentFence returns the record's current fence, for observation only.
func (s *AuthenticatedStore) CurrentFence(ctx context.Context, key RecordKey) (uint64, error) {
	if err := key.Validate(); err != nil {
		return 0, err
	}
	t, err := s.backend.CurrentFence(ctx, key)
	if err != nil {
		return 0, &Error{Kind: ErrBackend, Err: err}
	}
	return t, nil
}

// ReserveFence atomically allocates the record's next fencing token.
func (s *AuthenticatedStore) ReserveFence(ctx context.Context, key RecordKey) (uint64, error) {
	if err := key.Validate(); err != nil {
		return 0, err
	}
	t, err := s.backend.ReserveFence(ctx, key)
	if err != nil {
		return 0, &Error{Kind: ErrBackend, Err: err}
	}
	return t, nil
}

// prepare checks the payload size, loads and verifies the current record,
// compares it with expected and seals the replacement.
func (s *AuthenticatedStore) prepare(ctx context.Context, key RecordKey, expected *uint64, payload []byte) (StoredRecord, KeyID, error) {
	return s.prepareWith(ctx, s.loadForWrite, key, expected, payload)
}

// prepareWith is prepare with the current record read by load.
func (s *AuthenticatedStore) prepareWith(ctx context.Context, load func(context.Context, RecordKey) (*Record, error), key RecordKey, expected *uint64, payload []byte) (StoredRecord, KeyID, error) {
	if len(payload) > MaxPayloadBytes {
		return StoredRecord{}, "", &Error{Kind: ErrPayloadTooLarge, Size: len(payload), Limit: MaxPayloadBytes}
	}
	current, err := load(ctx, key)
	if err != nil {
		return StoredRecord{}, "", err
	}
	switch {
	case expected == nil && current != nil:
		return StoredRecord{}, "", &Error{Kind: ErrWriteConflict, Actual: ExpectRevision(current.Revision), Floor: current.Revision}
	case expected != nil && current == nil:
		return StoredRecord{}, "", &Error{Kind: ErrWriteConflict, Expected: copyRevision(expected)}
	case expected != nil && *expected != current.Revision:
		return StoredRecord{}, "", &Error{Kind: ErrWriteConflict, Expected: copyRevision(expected), Actual: ExpectRevision(current.Revision), Floor: current.Revision}
	}
	previous := revisionOrZero(expected)
	if previous == ^uint64(0) {
		return StoredRecord{}, "", &Error{Kind: ErrRevisionExhausted}
	}
	revision := previous + 1
	keyID, signingKey, ok := s.keyring.activeKey()
	if !ok {
		return StoredRecord{}, "", &Error{Kind: ErrKeyringUnknownKeyID, KeyID: keyID}
	}
	bytes, err := sealEnvelope(signingKey, keyID, key, revision, payload)
	if err != nil {
		return StoredRecord{}, "", err
	}
	return StoredRecord{Revision: revision, Bytes: bytes}, keyID, nil
}

// finish interprets the backend's outcome of a swap and remembers an envelope it stored.
func (s *AuthenticatedStore) finish(key RecordKey, generation uint64, expected *uint64, replacement StoredRecord, keyID KeyID, outcome CASOutcome) (Record, error) {
	rec, err := finish(expected, replacement.Revision, keyID, outcome)
	if err == nil {
		s.remember(key, generation, rec.Revision, replacement.Bytes, keyID)
	}
	return rec, err
}

// finish interprets the backend's outcome of a swap.
func finish(expected *uint64, revision uint64, keyID KeyID, outcome CASOutcome) (Record, error) {
	if outcome.Stored {
		if outcome.RevisionFloor != revision {
			return Record{}, &Error{Kind: ErrRevisionFloorMismatch, Actual: ExpectRevision(revision), Floor: outcome.RevisionFloor}
		}
		return Record{Revision: revision, KeyID: keyID}, nil
	}
	if err := checkRevisionPair(outcome.ActualRevision, outcome.RevisionFloor); err != nil {
		return Record{}, err
	}
	return Record{}, &Error{Kind: ErrWriteConflict, Expected: copyRevision(expected), Actual: copyRevision(outcome.ActualRevision), Floor: outcome.RevisionFloor}
}
