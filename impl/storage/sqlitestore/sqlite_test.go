package sqlitestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"path/filepath"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/storage"
	"lukechampine.com/blake3"
)

func openSQLiteAt(t testing.TB, path string, mode JournalMode) *Backend {
	t.Helper()
	b, err := Open(context.Background(), path, &Options{JournalMode: mode})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// Spec: STO-060
func TestSQLitePersistsAcrossReopen(t *testing.T) {
	for _, mode := range []JournalMode{JournalWAL, JournalDelete} {
		t.Run(mode.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "store.db")
			b := openSQLiteAt(t, path, mode)
			s := storage.NewAuthenticatedStore(b, testKeyring(t))
			token, err := s.ReserveFence(ctxb(), testKey)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.CompareAndSwapFenced(ctxb(), testKey, nil, []byte("durable"), token); err != nil {
				t.Fatal(err)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			_, err = b.Load(ctxb(), testKey)
			wantKind(t, err, storage.ErrBackendClosed)

			reopened := storage.NewAuthenticatedStore(openSQLiteAt(t, path, mode), testKeyring(t))
			wantLoaded(t, reopened, testKey, 1, "storage-v1", "durable")
			if f, err := reopened.CurrentFence(ctxb(), testKey); err != nil || f != token {
				t.Fatalf("fence %d, %v", f, err)
			}
			var journal string
			if err := reopened.Backend().(*Backend).db.QueryRow("PRAGMA journal_mode").Scan(&journal); err != nil {
				t.Fatal(err)
			}
			if !strings.EqualFold(journal, mode.String()) {
				t.Fatalf("journal mode %s, want %s", journal, mode)
			}
			var sync int
			if err := reopened.Backend().(*Backend).db.QueryRow("PRAGMA synchronous").Scan(&sync); err != nil || sync != 2 {
				t.Fatalf("synchronous = %d (%v), want 2 (FULL)", sync, err)
			}
		})
	}
}

func TestSQLiteRejectsNonFilePaths(t *testing.T) {
	for _, p := range []string{"", ":memory:", "file:x.db", "x.db?mode=memory"} {
		_, err := Open(ctxb(), p, nil)
		wantKind(t, err, storage.ErrSQLite)
	}
}

// Spec: STO-063
func TestSQLiteCommitmentFormula(t *testing.T) {
	b := openTestSQLite(t, JournalWAL)
	s := storage.NewAuthenticatedStore(b, testKeyring(t))
	if _, err := s.Create(ctxb(), vectorKey, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	// The commitment input, spelled out byte by byte.
	var in []byte
	in = append(in, "splash-storage/anchored-sqlite-record/v1"...)
	in = append(in, 0, 0, 0, 0, 0, 0, 0, 14)
	in = append(in, "worker-journal"...)
	in = append(in, 0, 0, 0, 0, 0, 0, 0, 14)
	in = append(in, "tenant-release"...)
	in = append(in, 0, 0, 0, 0, 0, 0, 0, 1)
	in = binary.BigEndian.AppendUint64(in, uint64(len(vector10Envelope)))
	in = append(in, vector10Envelope...)
	want := blake3.Sum256(in)
	floor, commitment, fence := sqliteAnchor(t, b, vectorKey)
	if floor != 1 || fence != 0 || !bytes.Equal(commitment, want[:]) {
		t.Fatalf("anchor = (%d, %x, %d), want (1, %x, 0)", floor, commitment, fence, want)
	}
	if got := storage.RecordCommitment(vectorKey, 1, []byte(vector10Envelope)); got != want {
		t.Fatalf("RecordCommitment = %x", got)
	}
}

// Spec: STO-062, STO-063, STO-065, STO-040
func TestSQLiteDetectsRowTampering(t *testing.T) {
	b := openTestSQLite(t, JournalWAL)
	s := storage.NewAuthenticatedStore(b, testKeyring(t))
	if _, err := s.Create(ctxb(), testKey, []byte("first payload")); err != nil {
		t.Fatal(err)
	}
	var oldRev, oldRecord []byte
	db := b.db
	if err := db.QueryRow(`SELECT revision, record FROM splash_storage_records`).Scan(&oldRev, &oldRecord); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Replace(ctxb(), testKey, 1, []byte("second payload")); err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
	restore := func() {
		t.Helper()
		exec(`DELETE FROM splash_storage_records`)
		exec(`DELETE FROM splash_storage_anchors`)
	}
	var goodRev, goodRecord, goodFloor, goodCommitment, goodFence []byte
	if err := db.QueryRow(`SELECT revision, record FROM splash_storage_records`).Scan(&goodRev, &goodRecord); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT revision_floor, record_commitment, fencing_token FROM splash_storage_anchors`).Scan(&goodFloor, &goodCommitment, &goodFence); err != nil {
		t.Fatal(err)
	}
	reset := func() {
		t.Helper()
		restore()
		exec(`INSERT INTO splash_storage_records VALUES (?, ?, ?, ?)`, testKey.Namespace, testKey.Name, goodRev, goodRecord)
		exec(`INSERT INTO splash_storage_anchors VALUES (?, ?, ?, ?, ?)`, testKey.Namespace, testKey.Name, goodFloor, goodCommitment, goodFence)
		wantLoaded(t, s, testKey, 2, "storage-v1", "second payload")
	}
	reset()

	// The record row is restored from an older copy of the table.
	exec(`UPDATE splash_storage_records SET revision = ?, record = ?`, oldRev, oldRecord)
	_, err := s.Load(ctxb(), testKey)
	if e := wantKind(t, err, storage.ErrRollbackDetected); *e.Actual != 1 || e.Floor != 2 {
		t.Fatalf("%v", e)
	}
	// A rolled-back record also blocks writes.
	_, err = s.Replace(ctxb(), testKey, 1, []byte("x"))
	wantKind(t, err, storage.ErrRollbackDetected)

	reset()
	exec(`DELETE FROM splash_storage_records`)
	_, err = s.Load(ctxb(), testKey)
	if e := wantKind(t, err, storage.ErrRollbackDetected); e.Actual != nil || e.Floor != 2 {
		t.Fatalf("%v", e)
	}
	_, err = s.Create(ctxb(), testKey, []byte("x"))
	wantKind(t, err, storage.ErrRollbackDetected)

	// The bytes change but the revision does not.
	reset()
	exec(`UPDATE splash_storage_records SET record = ?`, bytes.Replace(goodRecord, []byte(`"revision":2`), []byte(`"revision": 2`), 1))
	_, err = s.Load(ctxb(), testKey)
	wantKind(t, err, storage.ErrBackend, storage.ErrRecordCommitmentMismatch)

	reset()
	exec(`UPDATE splash_storage_anchors SET record_commitment = NULL`)
	_, err = s.Load(ctxb(), testKey)
	wantKind(t, err, storage.ErrBackend, storage.ErrMissingRecordCommitment)
	_, err = s.ReserveFence(ctxb(), testKey)
	wantKind(t, err, storage.ErrBackend, storage.ErrMissingRecordCommitment)

	reset()
	exec(`UPDATE splash_storage_anchors SET revision_floor = ?`, u64Blob(0))
	_, err = s.Load(ctxb(), testKey)
	wantKind(t, err, storage.ErrBackend, storage.ErrUnexpectedRecordCommitment)

	// The anchor row disappears: the record is ahead of a zero floor.
	reset()
	exec(`DELETE FROM splash_storage_anchors`)
	_, err = s.Load(ctxb(), testKey)
	if e := wantKind(t, err, storage.ErrRevisionFloorMismatch); *e.Actual != 2 || e.Floor != 0 {
		t.Fatalf("%v", e)
	}

	// A revision column forged far ahead of the floor.
	reset()
	exec(`UPDATE splash_storage_records SET revision = ?`, []byte{1, 2, 3, 4, 5, 6, 7, 8})
	_, err = s.Load(ctxb(), testKey)
	if e := wantKind(t, err, storage.ErrRevisionFloorMismatch); *e.Actual != 0x0102030405060708 || e.Floor != 2 {
		t.Fatalf("%v", e)
	}
}

// Spec: STO-061
func TestSQLiteSharedBetweenHandles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	a := storage.NewAuthenticatedStore(openSQLiteAt(t, path, JournalWAL), testKeyring(t))
	b := storage.NewAuthenticatedStore(openSQLiteAt(t, path, JournalWAL), testKeyring(t))
	ta, err := a.ReserveFence(ctxb(), testKey)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := b.ReserveFence(ctxb(), testKey)
	if err != nil || tb != ta+1 {
		t.Fatalf("second handle reserved %d after %d (%v)", tb, ta, err)
	}
	// Writer a was superseded by b's reservation.
	_, err = a.CompareAndSwapFenced(ctxb(), testKey, nil, []byte("a"), ta)
	wantKind(t, err, storage.ErrBackend, storage.ErrFencingTokenRejected)
	if _, err := b.CompareAndSwapFenced(ctxb(), testKey, nil, []byte("b"), tb); err != nil {
		t.Fatal(err)
	}
	wantLoaded(t, a, testKey, 1, "storage-v1", "b")
}
