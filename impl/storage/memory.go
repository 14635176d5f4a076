package storage

import (
	"context"
	"slices"
	"sync"
)

// MemoryBackend is a process-local Backend for tests and development. It
// follows the reference's volatile store exactly, is safe for concurrent use,
// and loses everything when the process exits: it is neither durable nor
// rollback resistant.
type MemoryBackend struct {
	mu      sync.Mutex
	records map[RecordKey]StoredRecord
	floors  map[RecordKey]uint64
	fences  map[RecordKey]uint64
}

// NewMemoryBackend returns an empty memory backend.
func NewMemoryBackend() *MemoryBackend {
	return &MemoryBackend{
		records: make(map[RecordKey]StoredRecord),
		floors:  make(map[RecordKey]uint64),
		fences:  make(map[RecordKey]uint64),
	}
}

func memoryPrelude(ctx context.Context, key RecordKey) error {
	if err := key.Validate(); err != nil {
		return err
	}
	return ctx.Err()
}

// Load returns a copy of the record and its floor.
func (m *MemoryBackend) Load(ctx context.Context, key RecordKey) (Snapshot, error) {
	if err := memoryPrelude(ctx, key); err != nil {
		return Snapshot{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	snap := Snapshot{RevisionFloor: m.floors[key]}
	if r, ok := m.records[key]; ok {
		snap.Record = &StoredRecord{Revision: r.Revision, Bytes: slices.Clone(r.Bytes)}
	}
	return snap, nil
}

// CompareAndSwap implements Backend.CompareAndSwap.
func (m *MemoryBackend) CompareAndSwap(ctx context.Context, key RecordKey, expected *uint64, replacement StoredRecord) (CASOutcome, error) {
	return m.swap(ctx, key, expected, replacement, false, 0)
}

// CompareAndSwapFenced implements Backend.CompareAndSwapFenced.
func (m *MemoryBackend) CompareAndSwapFenced(ctx context.Context, key RecordKey, expected *uint64, replacement StoredRecord, token uint64) (CASOutcome, error) {
	return m.swap(ctx, key, expected, replacement, true, token)
}

func (m *MemoryBackend) swap(ctx context.Context, key RecordKey, expected *uint64, replacement StoredRecord, fenced bool, token uint64) (CASOutcome, error) {
	if err := memoryPrelude(ctx, key); err != nil {
		return CASOutcome{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := CheckFence(m.fences[key], fenced, token); err != nil {
		return CASOutcome{}, err
	}
	var actual *uint64
	if r, ok := m.records[key]; ok {
		actual = ExpectRevision(r.Revision)
	}
	conflict, revision, err := CheckSwap(actual, m.floors[key], expected, replacement.Revision)
	if err != nil {
		return CASOutcome{}, err
	}
	if revision == 0 {
		return conflict, nil
	}
	m.records[key] = StoredRecord{Revision: revision, Bytes: slices.Clone(replacement.Bytes)}
	m.floors[key] = revision
	return CASOutcome{Stored: true, RevisionFloor: revision}, nil
}

// CurrentFence implements Backend.CurrentFence.
func (m *MemoryBackend) CurrentFence(ctx context.Context, key RecordKey) (uint64, error) {
	if err := memoryPrelude(ctx, key); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fences[key], nil
}

// ReserveFence implements Backend.ReserveFence.
func (m *MemoryBackend) ReserveFence(ctx context.Context, key RecordKey) (uint64, error) {
	if err := memoryPrelude(ctx, key); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	next, err := NextFence(m.fences[key])
	if err != nil {
		return 0, err
	}
	m.fences[key] = next
	return next, nil
}

// EstablishFence implements Backend.EstablishFence.
func (m *MemoryBackend) EstablishFence(ctx context.Context, key RecordKey, token uint64) error {
	if err := memoryPrelude(ctx, key); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	next, err := CheckEstablish(m.fences[key], token)
	if err != nil {
		return err
	}
	m.fences[key] = next
	return nil
}
