package sqlitestore

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/storage/storagetest"
)

func TestMain(m *testing.M) { storagetest.Main(m, openDurable) }

// openDurable opens the database at path in the journal mode variant names (WAL by default).
func openDurable(ctx context.Context, path, variant string) (storagetest.Durable, error) {
	mode := JournalWAL
	if variant == JournalDelete.String() {
		mode = JournalDelete
	}
	return Open(ctx, path, &Options{JournalMode: mode})
}

var (
	testKey   = storagetest.TestKey
	vectorKey = storagetest.VectorKey
	wantKind  = storagetest.WantKind
)

const vector10Envelope = storagetest.Vector10Envelope

func testKeyring(t testing.TB) *storage.Keyring { return storagetest.Keyring(t) }

func wantLoaded(t testing.TB, s *storage.AuthenticatedStore, key storage.RecordKey, revision uint64, keyID storage.KeyID, payload string) {
	t.Helper()
	storagetest.WantLoaded(t, s, key, revision, keyID, payload)
}

func ctxb() context.Context { return context.Background() }

func openTestSQLite(t testing.TB, mode JournalMode) *Backend {
	t.Helper()
	return openSQLiteAt(t, filepath.Join(t.TempDir(), "store.db"), mode)
}

func sqliteExec(t testing.TB, b storage.Backend, query string, args ...any) {
	t.Helper()
	if _, err := b.(*Backend).db.ExecContext(context.Background(), query, args...); err != nil {
		t.Fatalf("tamper %q: %v", query, err)
	}
}

// sqliteAnchor reads the raw anchor row (initial state when absent).
func sqliteAnchor(t testing.TB, b storage.Backend, key storage.RecordKey) (floor uint64, commitment []byte, fence uint64) {
	t.Helper()
	var f, c, k []byte
	err := b.(*Backend).db.QueryRowContext(context.Background(),
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

func sqliteWriteAnchor(t testing.TB, b storage.Backend, key storage.RecordKey, floor uint64, commitment []byte, fence uint64) {
	t.Helper()
	sqliteExec(t, b, `INSERT INTO splash_storage_anchors (namespace, name, revision_floor, record_commitment, fencing_token)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (namespace, name) DO UPDATE SET
		revision_floor = excluded.revision_floor, record_commitment = excluded.record_commitment, fencing_token = excluded.fencing_token`,
		key.Namespace, key.Name, u64Blob(floor), commitment, u64Blob(fence))
}

func sqliteHarness(mode JournalMode) storagetest.Harness {
	return storagetest.Harness{
		Name: "sqlite-" + mode.String(),
		Open: func(t testing.TB) storage.Backend { return openTestSQLite(t, mode) },
		SetRecord: func(t testing.TB, b storage.Backend, key storage.RecordKey, rec *storage.StoredRecord) {
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
		SetFloor: func(t testing.TB, b storage.Backend, key storage.RecordKey, floor uint64) {
			_, _, fence := sqliteAnchor(t, b, key)
			var commitment []byte
			if floor != 0 {
				c := [32]byte{0xee}
				var revBlob, data []byte
				err := b.(*Backend).db.QueryRowContext(context.Background(),
					`SELECT revision, record FROM splash_storage_records WHERE namespace = ? AND name = ?`,
					key.Namespace, key.Name).Scan(&revBlob, &data)
				if err == nil {
					if rev, _ := blobU64("revision", revBlob); rev == floor {
						c = storage.RecordCommitment(key, floor, data)
					}
				}
				commitment = c[:]
			}
			sqliteWriteAnchor(t, b, key, floor, commitment, fence)
		},
		SetFence: func(t testing.TB, b storage.Backend, key storage.RecordKey, fence uint64) {
			floor, commitment, _ := sqliteAnchor(t, b, key)
			sqliteWriteAnchor(t, b, key, floor, commitment, fence)
		},
		OversizeIsBackendError: true,
	}
}

// Both journal modes meet the backend contract.
//
// Spec: STO-020, STO-029, STO-064, STO-065
func TestSQLiteBackendContract(t *testing.T) {
	for _, mode := range []JournalMode{JournalWAL, JournalDelete} {
		t.Run(mode.String(), func(t *testing.T) { storagetest.Run(t, sqliteHarness(mode)) })
	}
}

// Spec: STO-029, STO-061
func TestLinearizableSQLiteBackendGoroutines(t *testing.T) {
	storagetest.RunLinearizable(t, openTestSQLite(t, JournalWAL), false)
}

// A writer process killed at an arbitrary point leaves a database that passes SQLite's
// integrity check and holds a complete, verifiable record no older than the last
// acknowledged write.
//
// Spec: STO-060, STO-061
func TestSQLiteSurvivesAKilledWriter(t *testing.T) {
	storagetest.RunKilledWriter(t, openDurable, func(t *testing.T, b storagetest.Durable) {
		var check string
		if err := b.(*Backend).db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
			t.Fatalf("integrity check: %q, %v", check, err)
		}
	})
}

// Spec: STO-029, STO-061
func TestLinearizableSQLiteBackendProcesses(t *testing.T) {
	storagetest.RunLinearizableProcesses(t, openDurable, JournalWAL.String(), JournalDelete.String())
}

func BenchmarkSQLiteBackend(b *testing.B) {
	for _, mode := range []JournalMode{JournalWAL, JournalDelete} {
		b.Run(mode.String(), func(b *testing.B) { storagetest.RunBenchmarks(b, sqliteHarness(mode).Open) })
	}
}
