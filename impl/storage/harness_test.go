package storage

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// harness opens a fresh backend and lets tests tamper with its raw state,
// the way an attacker or a faulty disk could, bypassing the Backend API.
type harness struct {
	name string
	open func(t testing.TB) Backend
	// setRecord replaces the raw record (nil deletes it) without touching
	// the anchor state.
	setRecord func(t testing.TB, b Backend, key RecordKey, rec *StoredRecord)
	// setFloor sets the revision floor; a durable backend's commitment is
	// set to match the record at that revision when there is one.
	setFloor func(t testing.TB, b Backend, key RecordKey, floor uint64)
	// setFence sets the raw fencing token.
	setFence func(t testing.TB, b Backend, key RecordKey, fence uint64)
	// oversizeIsBackendError: the backend itself refuses to hand back an
	// oversized record (ErrStoredRecordTooLarge) instead of returning it.
	oversizeIsBackendError bool
}

// plant stores rec as the record of key with a consistent floor, as if it
// had been written through the backend.
func (h harness) plant(t testing.TB, b Backend, key RecordKey, rec StoredRecord) {
	t.Helper()
	h.setRecord(t, b, key, &rec)
	h.setFloor(t, b, key, rec.Revision)
}

func memoryHarness() harness {
	return harness{
		name: "memory",
		open: func(testing.TB) Backend { return NewMemoryBackend() },
		setRecord: func(_ testing.TB, b Backend, key RecordKey, rec *StoredRecord) {
			m := b.(*MemoryBackend)
			m.mu.Lock()
			defer m.mu.Unlock()
			if rec == nil {
				delete(m.records, key)
				return
			}
			m.records[key] = *rec
		},
		setFloor: func(_ testing.TB, b Backend, key RecordKey, floor uint64) {
			m := b.(*MemoryBackend)
			m.mu.Lock()
			defer m.mu.Unlock()
			m.floors[key] = floor
		},
		setFence: func(_ testing.TB, b Backend, key RecordKey, fence uint64) {
			m := b.(*MemoryBackend)
			m.mu.Lock()
			defer m.mu.Unlock()
			m.fences[key] = fence
		},
	}
}

func openTestSQLite(t testing.TB, mode SQLiteJournalMode) *SQLiteBackend {
	t.Helper()
	path := filepath.Join(t.TempDir(), "store.db")
	b, err := OpenSQLite(context.Background(), path, &SQLiteOptions{JournalMode: mode})
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func sqliteExec(t testing.TB, b Backend, query string, args ...any) {
	t.Helper()
	if _, err := b.(*SQLiteBackend).db.ExecContext(context.Background(), query, args...); err != nil {
		t.Fatalf("tamper %q: %v", query, err)
	}
}

// sqliteAnchor reads the raw anchor row (initial state when absent).
func sqliteAnchor(t testing.TB, b Backend, key RecordKey) (floor uint64, commitment []byte, fence uint64) {
	t.Helper()
	var f, c, k []byte
	err := b.(*SQLiteBackend).db.QueryRowContext(context.Background(),
		`SELECT revision_floor, record_commitment, fencing_token FROM splash_storage_anchors WHERE namespace = ? AND name = ?`,
		key.Namespace, key.Name).Scan(&f, &c, &k)
	if err == sql.ErrNoRows {
		return 0, nil, 0
	}
	if err != nil {
		t.Fatal(err)
	}
	fl, _ := blobU64("revision_floor", f)
	fe, _ := blobU64("fencing_token", k)
	return fl, c, fe
}

func sqliteWriteAnchor(t testing.TB, b Backend, key RecordKey, floor uint64, commitment []byte, fence uint64) {
	t.Helper()
	sqliteExec(t, b, `INSERT INTO splash_storage_anchors (namespace, name, revision_floor, record_commitment, fencing_token)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (namespace, name) DO UPDATE SET
		revision_floor = excluded.revision_floor, record_commitment = excluded.record_commitment, fencing_token = excluded.fencing_token`,
		key.Namespace, key.Name, u64Blob(floor), commitment, u64Blob(fence))
}

func sqliteHarness(mode SQLiteJournalMode) harness {
	return harness{
		name: "sqlite-" + mode.String(),
		open: func(t testing.TB) Backend { return openTestSQLite(t, mode) },
		setRecord: func(t testing.TB, b Backend, key RecordKey, rec *StoredRecord) {
			if rec == nil {
				sqliteExec(t, b, `DELETE FROM splash_storage_records WHERE namespace = ? AND name = ?`, key.Namespace, key.Name)
				return
			}
			data := rec.Bytes
			if data == nil {
				data = []byte{}
			}
			sqliteExec(t, b, `INSERT INTO splash_storage_records (namespace, name, revision, record) VALUES (?, ?, ?, ?)
				ON CONFLICT (namespace, name) DO UPDATE SET revision = excluded.revision, record = excluded.record`,
				key.Namespace, key.Name, u64Blob(rec.Revision), data)
		},
		setFloor: func(t testing.TB, b Backend, key RecordKey, floor uint64) {
			_, _, fence := sqliteAnchor(t, b, key)
			var commitment []byte
			if floor != 0 {
				c := [32]byte{0xee}
				var revBlob, data []byte
				err := b.(*SQLiteBackend).db.QueryRowContext(context.Background(),
					`SELECT revision, record FROM splash_storage_records WHERE namespace = ? AND name = ?`,
					key.Namespace, key.Name).Scan(&revBlob, &data)
				if err == nil {
					if rev, _ := blobU64("revision", revBlob); rev == floor {
						c = RecordCommitment(key, floor, data)
					}
				}
				commitment = c[:]
			}
			sqliteWriteAnchor(t, b, key, floor, commitment, fence)
		},
		setFence: func(t testing.TB, b Backend, key RecordKey, fence uint64) {
			floor, commitment, _ := sqliteAnchor(t, b, key)
			sqliteWriteAnchor(t, b, key, floor, commitment, fence)
		},
		oversizeIsBackendError: true,
	}
}

func allHarnesses() []harness {
	return []harness{memoryHarness(), sqliteHarness(JournalWAL), sqliteHarness(JournalDelete)}
}

// forEachBackend runs fn as a subtest for every backend.
func forEachBackend(t *testing.T, fn func(t *testing.T, h harness)) {
	for _, h := range allHarnesses() {
		t.Run(h.name, func(t *testing.T) { fn(t, h) })
	}
}

// forEachBackendLight runs fn against the memory backend and the default
// SQLite configuration only, for tests whose logic lies above the backend.
func forEachBackendLight(t *testing.T, fn func(t *testing.T, h harness)) {
	for _, h := range allHarnesses()[:2] {
		t.Run(h.name, func(t *testing.T) { fn(t, h) })
	}
}

var (
	testKey   = RecordKey{Namespace: "workflow-ledger", Name: "release-42"}
	otherKey  = RecordKey{Namespace: "workflow-ledger", Name: "release-43"}
	vectorKey = RecordKey{Namespace: "worker-journal", Name: "tenant-release"}
)

func rev(r uint64) *uint64 { return &r }

// kindOf returns the innermost storage error kind of err (the backend's own
// kind for a wrapped backend error).
func kindOf(err error) ErrorKind {
	var last ErrorKind
	for err != nil {
		if se, ok := err.(*Error); ok {
			last = se.Kind
			err = se.Err
			continue
		}
		break
	}
	return last
}

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
