package ledger

import (
	"context"
	"unicode/utf8"

	"github.com/splashv5/conform/impl/storage"
)

// Store persists one workflow ledger as one authenticated, fenced record. Writers reserve
// a fencing token, then compare-and-swap against the record revision they loaded, so a stale
// writer can neither overwrite a newer ledger nor keep writing after a newer writer fenced it.
type Store struct {
	store *storage.AuthenticatedStore
	key   storage.RecordKey
}

// NewStore returns a store for the ledger record at key.
func NewStore(store *storage.AuthenticatedStore, key storage.RecordKey) *Store {
	return &Store{store: store, key: key}
}

func storeError(err error) error { return &Error{Kind: ErrStore, Err: err} }

// ReserveFence atomically reserves the next fencing token for the record.
func (s *Store) ReserveFence(ctx context.Context) (uint64, error) {
	t, err := s.store.ReserveFence(ctx, s.key)
	if err != nil {
		return 0, storeError(err)
	}
	return t, nil
}

// Load returns the stored ledger, validated against plan, and its record revision. An absent
// record gives a new empty ledger for the plan and revision 0.
func (s *Store) Load(ctx context.Context, plan Plan) (*Ledger, uint64, error) {
	rec, err := s.store.Load(ctx, s.key)
	if err != nil {
		return nil, 0, storeError(err)
	}
	if rec == nil {
		l, err := New(plan.Fingerprint)
		if err != nil {
			return nil, 0, err
		}
		return l, 0, nil
	}
	if !utf8.Valid(rec.Payload) {
		return nil, 0, &Error{Kind: ErrInvalidEncoding}
	}
	l, err := Decode(rec.Payload)
	if err != nil {
		return nil, 0, err
	}
	if err := plan.ValidateLedger(l); err != nil {
		return nil, 0, err
	}
	return l, rec.Revision, nil
}

// Persist writes l if the record is still at expectedRevision (0: the record must be absent),
// under fence, and returns the new record revision.
func (s *Store) Persist(ctx context.Context, l *Ledger, expectedRevision, fence uint64) (uint64, error) {
	data, err := l.Encode()
	if err != nil {
		return 0, err
	}
	var expected *uint64
	if expectedRevision != 0 {
		expected = storage.ExpectRevision(expectedRevision)
	}
	rec, err := s.store.CompareAndSwapFenced(ctx, s.key, expected, data, fence)
	if err != nil {
		return 0, storeError(err)
	}
	return rec.Revision, nil
}
