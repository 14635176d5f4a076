package boltstore

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/storage/storagetest"
)

func TestMain(m *testing.M) { storagetest.Main(m, openDurable) }

func openDurable(_ context.Context, path, _ string) (storagetest.Durable, error) {
	return Open(path, nil)
}

func openAt(t testing.TB, path string) *Backend {
	t.Helper()
	b, err := Open(path, nil)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func openTemp(t testing.TB) *Backend {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "store.db"))
}

// tamper changes the raw state of key inside one write transaction, bypassing the Backend
// API: fn gets the current anchor and record values (nil when absent) and returns the new
// ones (nil deletes).
func tamper(t testing.TB, b storage.Backend, key storage.RecordKey, fn func(anchor, record []byte) ([]byte, []byte)) {
	t.Helper()
	k := dbKey(key)
	err := b.(*Backend).update(func(anchors, records *bolt.Bucket) error {
		anchor, record := fn(cloneOrNil(anchors.Get(k)), cloneOrNil(records.Get(k)))
		for _, kv := range []struct {
			bucket *bolt.Bucket
			value  []byte
		}{{anchors, anchor}, {records, record}} {
			var err error
			if kv.value == nil {
				err = kv.bucket.Delete(k)
			} else {
				err = kv.bucket.Put(k, kv.value)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func cloneOrNil(v []byte) []byte {
	if v == nil {
		return nil
	}
	return append([]byte{}, v...)
}

func encodeAnchor(floor, fence uint64, commitment []byte) []byte {
	v := make([]byte, 16, 48)
	putU64(v, floor)
	putU64(v[8:], fence)
	return append(v, commitment...)
}

func putU64(b []byte, v uint64) {
	for i := range 8 {
		b[i] = byte(v >> (56 - 8*i))
	}
}

func u64(b []byte) uint64 {
	var v uint64
	for i := range 8 {
		v = v<<8 | uint64(b[i])
	}
	return v
}

func boltHarness() storagetest.Harness {
	return storagetest.Harness{
		Name: "bolt",
		Open: func(t testing.TB) storage.Backend { return openTemp(t) },
		SetRecord: func(t testing.TB, b storage.Backend, key storage.RecordKey, rec *storage.StoredRecord) {
			tamper(t, b, key, func(anchor, _ []byte) ([]byte, []byte) {
				if rec == nil {
					return anchor, nil
				}
				v := make([]byte, 8, 8+len(rec.Bytes))
				putU64(v, rec.Revision)
				return anchor, append(v, rec.Bytes...)
			})
		},
		SetFloor: func(t testing.TB, b storage.Backend, key storage.RecordKey, floor uint64) {
			tamper(t, b, key, func(anchor, record []byte) ([]byte, []byte) {
				var fence uint64
				if len(anchor) >= 16 {
					fence = u64(anchor[8:])
				}
				var commitment []byte
				if floor != 0 {
					c := [32]byte{0xee}
					if record != nil && u64(record) == floor {
						c = storage.RecordCommitment(key, floor, record[8:])
					}
					commitment = c[:]
				}
				return encodeAnchor(floor, fence, commitment), record
			})
		},
		SetFence: func(t testing.TB, b storage.Backend, key storage.RecordKey, fence uint64) {
			tamper(t, b, key, func(anchor, record []byte) ([]byte, []byte) {
				if anchor == nil {
					return encodeAnchor(0, fence, nil), record
				}
				putU64(anchor[8:], fence)
				return anchor, record
			})
		},
		OversizeIsBackendError: true,
	}
}

// The bbolt backend meets the backend contract.
//
// Spec: STO-020, STO-029, STO-064, STO-065
func TestBoltBackendContract(t *testing.T) {
	storagetest.Run(t, boltHarness())
}

// Spec: STO-029, STO-026, STO-027, STO-028
func TestLinearizableBoltBackend(t *testing.T) {
	storagetest.RunLinearizable(t, openTemp(t), true)
}

// A writer process killed at an arbitrary point leaves a file that passes bbolt's
// consistency check and holds a complete, verifiable record no older than the last
// acknowledged write.
//
// Spec: STO-060
func TestBoltSurvivesAKilledWriter(t *testing.T) {
	storagetest.RunKilledWriter(t, openDurable, func(t *testing.T, b storagetest.Durable) {
		err := b.(*Backend).withDB(func(db *bolt.DB) error {
			return db.View(func(tx *bolt.Tx) error {
				for err := range tx.Check() {
					return err
				}
				return nil
			})
		})
		if err != nil {
			t.Fatalf("consistency check: %v", err)
		}
	})
}

// Spec: STO-060
func TestBoltPersistsAcrossReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	b := openAt(t, path)
	s := storage.NewAuthenticatedStore(b, storagetest.Keyring(t))
	token, err := s.ReserveFence(context.Background(), storagetest.TestKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CompareAndSwapFenced(context.Background(), storagetest.TestKey, nil, []byte("durable"), token); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = b.Load(context.Background(), storagetest.TestKey)
	storagetest.WantKind(t, err, storage.ErrBackendClosed)

	reopened := storage.NewAuthenticatedStore(openAt(t, path), storagetest.Keyring(t))
	storagetest.WantLoaded(t, reopened, storagetest.TestKey, 1, "storage-v1", "durable")
	if f, err := reopened.CurrentFence(context.Background(), storagetest.TestKey); err != nil || f != token {
		t.Fatalf("fence %d, %v", f, err)
	}
}

// The file is locked only during an operation: two handles share it, and an operation waits
// for another's lock a bounded time, then fails with ErrBolt.
//
// Spec: STO-066
func TestBoltFileIsLockedPerOperation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	a, err := Open(path, &Options{LockTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	b := openAt(t, path)
	ta, err := a.ReserveFence(context.Background(), storagetest.TestKey)
	if err != nil {
		t.Fatal(err)
	}
	if tb, err := b.ReserveFence(context.Background(), storagetest.TestKey); err != nil || tb != ta+1 {
		t.Fatalf("second handle reserved %d after %d (%v)", tb, ta, err)
	}
	// Hold the lock the way another process's operation would.
	held := make(chan struct{})
	release := make(chan struct{})
	done := make(chan error)
	go func() {
		done <- b.withDB(func(*bolt.DB) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	_, err = a.Load(context.Background(), storagetest.TestKey)
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	e := storagetest.WantKind(t, err, storage.ErrBolt)
	if !errors.Is(e.Err, bolterrors.ErrTimeout) {
		t.Fatalf("load while the file is locked: %v, want a lock timeout", err)
	}
	if f, err := a.CurrentFence(context.Background(), storagetest.TestKey); err != nil || f != ta+1 {
		t.Fatalf("fence %d after the lock was released (%v)", f, err)
	}
}

// Spec: STO-029, STO-061
func TestLinearizableBoltBackendProcesses(t *testing.T) {
	storagetest.RunLinearizableProcesses(t, openDurable)
}

// Edited anchor state is refused with the kind of its rule; a record edited in place fails
// its commitment.
//
// Spec: STO-062, STO-063
func TestBoltDetectsTampering(t *testing.T) {
	b := openTemp(t)
	s := storage.NewAuthenticatedStore(b, storagetest.Keyring(t))
	key := storagetest.TestKey
	if _, err := s.Create(context.Background(), key, []byte("first payload")); err != nil {
		t.Fatal(err)
	}
	load := func() error { _, err := s.Load(context.Background(), key); return err }
	var good []byte
	tamper(t, b, key, func(anchor, record []byte) ([]byte, []byte) {
		good = anchor
		edited := append([]byte{}, record...)
		edited[len(edited)-2] ^= 1
		return anchor, edited
	})
	storagetest.WantKind(t, load(), storage.ErrBackend, storage.ErrRecordCommitmentMismatch)
	tamper(t, b, key, func(_, record []byte) ([]byte, []byte) { return good[:16], record })
	storagetest.WantKind(t, load(), storage.ErrBackend, storage.ErrMissingRecordCommitment)
	tamper(t, b, key, func(_, record []byte) ([]byte, []byte) { return encodeAnchor(0, 0, good[16:]), record })
	storagetest.WantKind(t, load(), storage.ErrBackend, storage.ErrUnexpectedRecordCommitment)
	tamper(t, b, key, func(_, record []byte) ([]byte, []byte) { return good[:20], record })
	storagetest.WantKind(t, load(), storage.ErrBackend, storage.ErrBolt)
	tamper(t, b, key, func(_, _ []byte) ([]byte, []byte) { return good, []byte{1, 2} })
	storagetest.WantKind(t, load(), storage.ErrBackend, storage.ErrBolt)
}

// A cancelled context is reported before any transaction starts.
func TestBoltHonoursCancelledContext(t *testing.T) {
	b := openTemp(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := b.ReserveFence(ctx, storagetest.TestKey)
	if e := storagetest.WantKind(t, err, storage.ErrBolt); !errors.Is(e.Err, context.Canceled) {
		t.Fatalf("%v", err)
	}
}

func BenchmarkBoltBackend(b *testing.B) {
	storagetest.RunBenchmarks(b, boltHarness().Open)
}
