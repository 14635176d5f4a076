package storage

import (
	"context"
	"fmt"
)

// StoredRecord is one persisted envelope and the revision the backend holds
// it under.
type StoredRecord struct {
	Revision uint64
	Bytes    []byte
}

// String describes the record without its bytes.
func (r StoredRecord) String() string {
	return fmt.Sprintf("StoredRecord{revision: %d, bytes: %d}", r.Revision, len(r.Bytes))
}

// Snapshot is the result of one consistent backend read: the record (nil
// when absent) and the rollback-protected revision floor. For a live record
// the floor equals its revision; an absent record has floor 0. Any other
// combination is reported by AuthenticatedStore as rollback or corruption.
type Snapshot struct {
	Record        *StoredRecord
	RevisionFloor uint64
}

// CASOutcome is the result of a compare-and-swap that did not fail.
// Stored means the replacement was written and the floor raised to its
// revision; otherwise the swap conflicted and ActualRevision (nil = absent)
// and RevisionFloor describe what the backend holds.
type CASOutcome struct {
	Stored         bool
	RevisionFloor  uint64
	ActualRevision *uint64
}

// Backend persists records with a per-key revision floor and fencing token.
// Every method is atomic and linearizable per record key, and a successful
// write is durable when the method returns (for durable backends).
//
// Load returns the record and its floor from one consistent read.
//
// CompareAndSwap writes replacement when the current revision equals
// expected (nil = absent) and also equals the floor; otherwise it reports a
// conflict. The replacement revision must be expected+1
// (ErrInvalidReplacementRevision; ErrBackendRevisionExhausted at overflow).
// It fails with ErrFencingRequired once the record has a nonzero fence.
//
// CurrentFence returns the current fence (0 if never fenced). It is for
// observation only and must never be used to allocate a token.
//
// ReserveFence atomically raises the fence by one, persists it and returns
// it; concurrent reservations return distinct increasing tokens. It fails
// with ErrFencingTokenExhausted instead of wrapping.
//
// EstablishFence rejects 0 (ErrInvalidFencingToken) and a token below the
// current one (ErrFencingTokenRejected); a higher token becomes current and
// stays current whatever happens next; an equal token is accepted unchanged.
//
// CompareAndSwapFenced checks, inside the same atomic step as the swap, that
// token is nonzero and equals the current fence, then behaves as
// CompareAndSwap. It never changes the fence.
type Backend interface {
	Load(ctx context.Context, key RecordKey) (Snapshot, error)
	CompareAndSwap(ctx context.Context, key RecordKey, expected *uint64, replacement StoredRecord) (CASOutcome, error)
	CurrentFence(ctx context.Context, key RecordKey) (uint64, error)
	ReserveFence(ctx context.Context, key RecordKey) (uint64, error)
	EstablishFence(ctx context.Context, key RecordKey, token uint64) error
	CompareAndSwapFenced(ctx context.Context, key RecordKey, expected *uint64, replacement StoredRecord, token uint64) (CASOutcome, error)
}

// FenceEstablisher is a Backend that can establish a fence and read the record in one atomic
// step: the effect of EstablishFence followed by Load, with no other operation between them
// (the fence is raised even when the read then fails). AuthenticatedStore uses it for the
// first two steps of a fenced write, so that such a backend pays one round trip (or one lock)
// for them instead of two.
type FenceEstablisher interface {
	Backend
	EstablishFenceAndLoad(ctx context.Context, key RecordKey, token uint64) (Snapshot, error)
}

// StateRememberer is a FenceEstablisher that remembers the state of a record key it last
// read or wrote, and guards its next fenced compare-and-swap of the key by that state: the
// swap commits over it only if it is still current, and is decided from a fresh read
// otherwise. AuthenticatedStore then decides a fenced write on the remembered state first,
// and takes the full path (establish, read, swap) whenever that does not store.
type StateRememberer interface {
	FenceEstablisher
	// RememberedSnapshot returns the snapshot of key as this backend last read or wrote it,
	// if token was its fence then. The record key may have changed since.
	RememberedSnapshot(key RecordKey, token uint64) (Snapshot, bool)
}

// RecordKeeper is a Backend whose fenced compare-and-swap can keep the replacement's bytes
// as its state instead of a copy of them. AuthenticatedStore uses it for the envelopes it
// seals, whose bytes nothing changes afterwards; the backend then also hands the same bytes
// back in its snapshots, which the store recognizes without comparing them byte by byte.
type RecordKeeper interface {
	Backend
	// CompareAndSwapFencedKeeping is CompareAndSwapFenced, except that the backend may keep
	// replacement.Bytes, which the caller must never change afterwards.
	CompareAndSwapFencedKeeping(ctx context.Context, key RecordKey, expected *uint64, replacement StoredRecord, token uint64) (CASOutcome, error)
}

// swapFencedKeeping is a fenced compare-and-swap of bytes the caller never changes: kept by a
// RecordKeeper, copied by any other backend.
func swapFencedKeeping(ctx context.Context, b Backend, key RecordKey, expected *uint64, replacement StoredRecord, token uint64) (CASOutcome, error) {
	if k, ok := b.(RecordKeeper); ok {
		return k.CompareAndSwapFencedKeeping(ctx, key, expected, replacement, token)
	}
	return b.CompareAndSwapFenced(ctx, key, expected, replacement, token)
}

// CheckFence applies the fencing rule of a compare-and-swap, for backends: a
// fenced write needs a nonzero token equal to the current fence; a plain
// write needs an unfenced record.
func CheckFence(current uint64, fenced bool, token uint64) error {
	if fenced {
		if token == 0 {
			return &Error{Kind: ErrInvalidFencingToken}
		}
		if token != current {
			return &Error{Kind: ErrFencingTokenRejected, CurrentFence: current, SuppliedFence: token}
		}
		return nil
	}
	if current != 0 {
		return &Error{Kind: ErrFencingRequired, CurrentFence: current}
	}
	return nil
}

// CheckSwap applies the revision rule of a compare-and-swap over the current
// record revision (nil = absent) and floor, for backends. It returns either
// a conflict outcome with revision 0, or the (nonzero) revision the
// replacement carries, or the error of an invalid replacement.
func CheckSwap(actual *uint64, floor uint64, expected *uint64, replacement uint64) (CASOutcome, uint64, error) {
	if !sameRevision(actual, expected) || revisionOrZero(actual) != floor {
		return CASOutcome{ActualRevision: copyRevision(actual), RevisionFloor: floor}, 0, nil
	}
	prev := revisionOrZero(expected)
	if prev == ^uint64(0) {
		return CASOutcome{}, 0, &Error{Kind: ErrBackendRevisionExhausted}
	}
	if replacement != prev+1 {
		return CASOutcome{}, 0, &Error{Kind: ErrInvalidReplacementRevision, Expected: ExpectRevision(prev + 1), Actual: ExpectRevision(replacement)}
	}
	return CASOutcome{}, prev + 1, nil
}

// PlanSwap applies every rule of a compare-and-swap, for a durable backend, to the state it
// read inside its write transaction (current fence, record revision, nil = absent, and
// floor), in the reference order: the fence, then the revision against expected and the floor
// (a conflict is an outcome, not an error), then the MaxRecordBytes limit, then the
// replacement revision. It returns either the conflict outcome with revision 0, or the
// revision to write, or an error.
func PlanSwap(fence uint64, fenced bool, token uint64, actual *uint64, floor uint64, expected *uint64, replacement StoredRecord) (CASOutcome, uint64, error) {
	if err := CheckFence(fence, fenced, token); err != nil {
		return CASOutcome{}, 0, err
	}
	conflict, revision, err := CheckSwap(actual, floor, expected, replacement.Revision)
	if err == nil && revision == 0 {
		return conflict, 0, nil
	}
	if len(replacement.Bytes) > MaxRecordBytes {
		return CASOutcome{}, 0, &Error{Kind: ErrStoredRecordTooLarge, Size: len(replacement.Bytes), Limit: MaxRecordBytes}
	}
	return CASOutcome{}, revision, err
}

// CheckEstablish applies the EstablishFence rule, for backends, and returns
// the new fence.
func CheckEstablish(current, token uint64) (uint64, error) {
	if token == 0 {
		return 0, &Error{Kind: ErrInvalidFencingToken}
	}
	if token < current {
		return 0, &Error{Kind: ErrFencingTokenRejected, CurrentFence: current, SuppliedFence: token}
	}
	return token, nil
}

// NextFence applies the ReserveFence rule, for backends: the fence after
// current, or ErrFencingTokenExhausted.
func NextFence(current uint64) (uint64, error) {
	if current == ^uint64(0) {
		return 0, &Error{Kind: ErrFencingTokenExhausted}
	}
	return current + 1, nil
}

func sameRevision(a, b *uint64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func revisionOrZero(r *uint64) uint64 {
	if r == nil {
		return 0
	}
	return *r
}

func copyRevision(r *uint64) *uint64 {
	if r == nil {
		return nil
	}
	return ExpectRevision(*r)
}
