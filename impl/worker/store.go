package worker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/storage"
)

// JournalStore is a JournalPersister that can also load its journal and reserve fencing
// tokens for admission.
type JournalStore interface {
	JournalPersister
	// Load returns the stored journal and its revision, read together.
	Load(ctx context.Context) (*journal.Journal, uint64, error)
	// ReserveFence atomically reserves the next fencing token of the journal's record.
	ReserveFence(ctx context.Context) (uint64, error)
}

// StorageJournalStore persists one journal as one record of an authenticated store
// (WRK-080 to WRK-083). The record key is (namespace, scope); the store can address no other
// record.
type StorageJournalStore struct {
	store *storage.AuthenticatedStore
	key   storage.RecordKey
	scope string
	mode  canonjson.Mode

	// mu guards buf, the serialized journal of the write in progress, reused from write to
	// write (the store keeps nothing of it).
	mu  sync.Mutex
	buf []byte
}

// NewStorageJournalStore returns the journal store for scope under namespace. The scope must
// be a valid journal scope (ErrJournalFormat) and (namespace, scope) a valid record key
// (ErrStorage). Stored journals are read in number mode m.
func NewStorageJournalStore(store *storage.AuthenticatedStore, namespace, scope string, m canonjson.Mode) (*StorageJournalStore, error) {
	key, err := JournalRecordKey(namespace, scope)
	if err != nil {
		return nil, err
	}
	return &StorageJournalStore{store: store, key: key, scope: scope, mode: m}, nil
}

// JournalRecordKey returns the one record key of the journal of scope under namespace
// (WRK-080): an invalid journal scope is ErrJournalFormat, a pair that is no record key
// ErrStorage. A process checks it before it opens or creates any store.
func JournalRecordKey(namespace, scope string) (storage.RecordKey, error) {
	if _, err := journal.New(scope); err != nil {
		return storage.RecordKey{}, &Error{Kind: ErrJournalFormat, Err: err}
	}
	key, err := storage.NewRecordKey(namespace, scope)
	if err != nil {
		return storage.RecordKey{}, &Error{Kind: ErrStorage, Err: err}
	}
	return key, nil
}

// RecordKey returns the one record key the store addresses.
func (s *StorageJournalStore) RecordKey() storage.RecordKey { return s.key }

// Scope returns the journal scope bound to the store.
func (s *StorageJournalStore) Scope() string { return s.scope }

// Load returns the stored journal and its record revision, or an empty journal for the scope at
// revision 0 when the record is absent (WRK-081).
func (s *StorageJournalStore) Load(ctx context.Context) (*journal.Journal, uint64, error) {
	rec, err := s.store.Load(ctx, s.key)
	if err != nil {
		return nil, 0, &Error{Kind: ErrStorage, Err: err}
	}
	if rec == nil {
		j, err := journal.New(s.scope)
		if err != nil {
			return nil, 0, &Error{Kind: ErrJournalFormat, Err: err}
		}
		return j, 0, nil
	}
	if !utf8.Valid(rec.Payload) {
		return nil, 0, &Error{Kind: ErrInvalidJournalEncoding}
	}
	j, err := journal.FromJSONForScope(rec.Payload, s.scope, s.mode)
	if err != nil {
		return nil, 0, &Error{Kind: ErrJournalFormat, Err: err}
	}
	return j, rec.Revision, nil
}

// Persist checks the journal's scope, serializes it and writes it with a fenced
// compare-and-swap under the lease, expecting the record to be absent when expectedRevision
// is 0 (WRK-082). It returns the new record revision.
func (s *StorageJournalStore) Persist(ctx context.Context, j *journal.Journal, expectedRevision uint64, lease Lease) (uint64, error) {
	if err := j.ValidateScope(s.scope); err != nil {
		return 0, &Error{Kind: ErrJournalFormat, Err: err}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	data, err := j.AppendJSON(s.buf[:0])
	if err != nil {
		return 0, &Error{Kind: ErrJournalFormat, Err: err}
	}
	s.buf = data
	var expected *uint64
	if expectedRevision != 0 {
		expected = storage.ExpectRevision(expectedRevision)
	}
	rec, err := s.store.SwapFenced(ctx, s.key, expected, data, lease.Token())
	if err != nil {
		return 0, &Error{Kind: ErrStorage, Err: err}
	}
	return rec.Revision, nil
}

// ReserveFence atomically reserves the next fencing token of the journal's record (WRK-083).
func (s *StorageJournalStore) ReserveFence(ctx context.Context) (uint64, error) {
	t, err := s.store.ReserveFence(ctx, s.key)
	if err != nil {
		return 0, &Error{Kind: ErrStorage, Err: err}
	}
	return t, nil
}

// CurrentFence returns the record's current fence, for inspection only. Never derive a lease
// from it.
func (s *StorageJournalStore) CurrentFence(ctx context.Context) (uint64, error) {
	t, err := s.store.CurrentFence(ctx, s.key)
	if err != nil {
		return 0, &Error{Kind: ErrStorage, Err: err}
	}
	return t, nil
}

// MaxAdmittedSessionIDs is how many admitted session ids a StoreAdmission remembers per
// journal.
const MaxAdmittedSessionIDs = 1024

// Admission refusals of StoreAdmission.
var (
	// ErrReplayedSession: the session id was already admitted for this journal.
	ErrReplayedSession = errors.New("worker admission: session id already admitted for this journal")
	// ErrAdmissionScope: the session asks for a journal scope the admission is not bound to.
	ErrAdmissionScope = errors.New("worker admission: journal scope is not the bound scope")
	// ErrAdmissionConflict: another admission for the same journal ran at the same time.
	ErrAdmissionConflict = errors.New("worker admission: concurrent admission for this journal")
)

// StoreAdmission is the reference worker's admission policy (WRK-094). It is bound to one
// journal store, whose scope is the tenant binding; it refuses a session id already admitted
// for that journal, remembering the most recent MaxAdmittedSessionIDs in a record of its own
// (admission namespace, scope) in the same authenticated store; and it reserves the lease
// atomically on the journal's record.
type StoreAdmission struct {
	store   *storage.AuthenticatedStore
	journal *StorageJournalStore
	key     storage.RecordKey
}

// NewStoreAdmission returns the admission policy for journal, keeping its list of admitted
// session ids under namespace, which must differ from the journal's namespace.
func NewStoreAdmission(store *storage.AuthenticatedStore, journal *StorageJournalStore, namespace string) (*StoreAdmission, error) {
	if namespace == journal.key.Namespace {
		return nil, fmt.Errorf("worker admission: namespace %q is the journal's namespace", namespace)
	}
	key, err := storage.NewRecordKey(namespace, journal.scope)
	if err != nil {
		return nil, &Error{Kind: ErrStorage, Err: err}
	}
	return &StoreAdmission{store: store, journal: journal, key: key}, nil
}

// admissionAttempts bounds how often Admit reads the admitted ids again after another
// worker's admission changed them between its read and its write.
const admissionAttempts = 16

// Admit records manifest's session id as admitted for the journal and returns a freshly
// reserved fencing token. The id is recorded before the token is reserved, so a replayed
// opening never moves the fence. Workers opened at once on one journal each get admitted: a
// write that lost the race to another admission reads the ids again and retries, up to
// admissionAttempts times before it gives ErrAdmissionConflict.
func (a *StoreAdmission) Admit(ctx context.Context, manifest protocol.CapabilityManifest, journalScope string) (uint64, error) {
	if journalScope != a.journal.scope {
		return 0, ErrAdmissionScope
	}
	for range admissionAttempts {
		err := a.record(ctx, manifest.SessionID)
		if errors.Is(err, ErrAdmissionConflict) {
			continue
		}
		if err != nil {
			return 0, err
		}
		return a.journal.ReserveFence(ctx)
	}
	return 0, ErrAdmissionConflict
}

// record adds sessionID to the admitted ids in one compare-and-swap: ErrReplayedSession when
// it is there already, ErrAdmissionConflict when another admission wrote first.
func (a *StoreAdmission) record(ctx context.Context, sessionID string) error {
	rec, err := a.store.Load(ctx, a.key)
	if err != nil {
		return err
	}
	var ids []string
	var expected *uint64
	if rec != nil {
		expected = storage.ExpectRevision(rec.Revision)
		if ids, err = decodeAdmitted(rec.Payload); err != nil {
			// The record authenticated, so its bytes are what was stored: corrupt, not refused.
			return &storage.Error{Kind: storage.ErrCorrupt, Err: err}
		}
	}
	if slices.Contains(ids, sessionID) {
		return ErrReplayedSession
	}
	ids = append(ids, sessionID)
	if len(ids) > MaxAdmittedSessionIDs {
		ids = ids[len(ids)-MaxAdmittedSessionIDs:]
	}
	if _, err := a.store.CompareAndSwap(ctx, a.key, expected, encodeAdmitted(ids)); err != nil {
		if errors.Is(err, storage.ErrWriteConflict) {
			return ErrAdmissionConflict
		}
		return err
	}
	return nil
}

// The admission record is {"admitted":["id",...]}, oldest first.
func encodeAdmitted(ids []string) []byte {
	elems := make([]canonjson.Value, len(ids))
	for i, id := range ids {
		elems[i] = canonjson.String(id)
	}
	return canonjson.Object(canonjson.Entry{Key: "admitted", Value: canonjson.Array(elems...)}).JSON()
}

func decodeAdmitted(data []byte) ([]string, error) {
	v, err := canonjson.ParseValue(data, canonjson.Preserve)
	if err != nil {
		return nil, fmt.Errorf("worker admission: malformed admission record: %w", err)
	}
	list, ok := v.Get("admitted")
	if !ok || list.Kind() != canonjson.KindArray || len(v.Entries()) != 1 {
		return nil, errors.New("worker admission: malformed admission record")
	}
	ids := make([]string, 0, len(list.Elems()))
	for _, e := range list.Elems() {
		if e.Kind() != canonjson.KindString || !protocol.IsToken(e.StringValue()) {
			return nil, errors.New("worker admission: malformed admission record")
		}
		ids = append(ids, e.StringValue())
	}
	return ids, nil
}
