package logstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/storage/storagetest"
)

func TestMain(m *testing.M) { storagetest.Main(m, openDurable) }

func openDurable(_ context.Context, path, _ string) (storagetest.Durable, error) {
	return Open(path, nil)
}

func openAt(t testing.TB, path string, opts *Options) *Backend {
	t.Helper()
	b, err := Open(path, opts)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func openTemp(t testing.TB) *Backend {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "store.log"), nil)
}

// tamper writes a frame that gives key the state fn returns, bypassing every rule of the
// Backend API, as an attacker or a faulty disk could.
func tamper(t testing.TB, sb storage.Backend, key storage.RecordKey, fn func(e entry) entry) {
	t.Helper()
	b := sb.(*Backend)
	k := keyBytes(key)
	b.mu.Lock()
	defer b.mu.Unlock()
	err := b.locked(func() error {
		var cur entry
		if e := b.states[k]; e != nil {
			cur = *e
		}
		next := fn(cur)
		next.checked = false // judged again at the next load
		return b.commit(k, &next)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func harness() storagetest.Harness {
	return storagetest.Harness{
		Name: "log",
		Open: func(t testing.TB) storage.Backend { return openTemp(t) },
		SetRecord: func(t testing.TB, b storage.Backend, key storage.RecordKey, rec *storage.StoredRecord) {
			tamper(t, b, key, func(e entry) entry {
				if rec == nil {
					e.hasRecord, e.rev, e.record = false, 0, nil
				} else {
					e.hasRecord, e.rev, e.record = true, rec.Revision, bytes.Clone(rec.Bytes)
				}
				return e
			})
		},
		SetFloor: func(t testing.TB, b storage.Backend, key storage.RecordKey, floor uint64) {
			tamper(t, b, key, func(e entry) entry {
				e.floor, e.commitment = floor, nil
				if floor != 0 {
					c := [32]byte{0xee}
					if e.hasRecord && e.rev == floor {
						c = storage.RecordCommitment(key, floor, e.record)
					}
					e.commitment = &c
				}
				return e
			})
		},
		SetFence: func(t testing.TB, b storage.Backend, key storage.RecordKey, fence uint64) {
			tamper(t, b, key, func(e entry) entry { e.fence = fence; return e })
		},
		OversizeIsBackendError: true,
	}
}

// The log backend meets the backend contract.
//
// Spec: STO-020, STO-029, STO-064, STO-065
func TestLogBackendContract(t *testing.T) {
	storagetest.Run(t, harness())
}

// Spec: STO-029, STO-026, STO-027, STO-028
func TestLinearizableLogBackend(t *testing.T) {
	storagetest.RunLinearizable(t, openTemp(t), true)
}

// Spec: STO-029, STO-061
func TestLinearizableLogBackendProcesses(t *testing.T) {
	storagetest.RunLinearizableProcesses(t, openDurable)
}

// A writer process killed at an arbitrary point leaves a log that opens and holds a
// complete, verifiable record no older than the last acknowledged write.
//
// Spec: STO-060
func TestLogSurvivesAKilledWriter(t *testing.T) {
	storagetest.RunKilledWriter(t, openDurable, nil)
}

func ctxb() context.Context { return context.Background() }

// Spec: STO-060
func TestLogPersistsAcrossReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.log")
	b := openAt(t, path, nil)
	s := storage.NewAuthenticatedStore(b, storagetest.Keyring(t))
	token, err := s.ReserveFence(ctxb(), storagetest.TestKey)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		var expected *uint64
		if i > 0 {
			expected = storage.ExpectRevision(uint64(i))
		}
		if _, err := s.CompareAndSwapFenced(ctxb(), storagetest.TestKey, expected, []byte(fmt.Sprintf("durable %d %s", i, bytes.Repeat([]byte("x"), 400))), token); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = b.Load(ctxb(), storagetest.TestKey)
	storagetest.WantKind(t, err, storage.ErrBackendClosed)

	reopened := storage.NewAuthenticatedStore(openAt(t, path, nil), storagetest.Keyring(t))
	storagetest.WantLoaded(t, reopened, storagetest.TestKey, 5, "storage-v1", "durable 4 "+string(bytes.Repeat([]byte("x"), 400)))
	if f, err := reopened.CurrentFence(ctxb(), storagetest.TestKey); err != nil || f != token {
		t.Fatalf("fence %d, %v", f, err)
	}
}

// A record that grows at its end is written as a delta about the size of the change, and
// read back whole, by this process and by a fresh one.
//
// Spec: STO-067
func TestLogWritesDeltas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.log")
	b := openAt(t, path, nil)
	s := storage.NewAuthenticatedStore(b, storagetest.Keyring(t))
	var payload []byte
	var expected *uint64
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 64 {
		item := make([]byte, 150)
		for j := range item {
			item[j] = byte('a' + rng.IntN(26))
		}
		payload = append(payload, item...)
		before := b.end
		rec, err := s.CompareAndSwap(ctxb(), storagetest.TestKey, expected, payload)
		if err != nil {
			t.Fatal(err)
		}
		expected = storage.ExpectRevision(rec.Revision)
		if written := b.end - before; i > 4 && written > 600 {
			t.Fatalf("write %d of a %d-byte payload took a %d-byte frame, want a delta under 600", i, len(payload), written)
		}
	}
	fresh := storage.NewAuthenticatedStore(openAt(t, path, nil), storagetest.Keyring(t))
	storagetest.WantLoaded(t, fresh, storagetest.TestKey, 64, "storage-v1", string(payload))
}

// A frame torn by a crash (here: its last bytes never written) ends the log: the state is
// the one before it, and the next write takes its place.
//
// Spec: STO-060, STO-067
func TestLogTornFrameEndsTheLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.log")
	b := openAt(t, path, nil)
	s := storage.NewAuthenticatedStore(b, storagetest.Keyring(t))
	if _, err := s.Create(ctxb(), storagetest.TestKey, []byte("first")); err != nil {
		t.Fatal(err)
	}
	at := b.end
	if _, err := s.Replace(ctxb(), storagetest.TestKey, 1, []byte("second")); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, 8), b.end-8); err != nil {
		t.Fatal(err)
	}
	f.Close()

	other := openAt(t, path, nil)
	os2 := storage.NewAuthenticatedStore(other, storagetest.Keyring(t))
	storagetest.WantLoaded(t, os2, storagetest.TestKey, 1, "storage-v1", "first")
	if other.end != at {
		t.Fatalf("log ends at %d, want %d (before the torn frame)", other.end, at)
	}
	if _, err := os2.Replace(ctxb(), storagetest.TestKey, 1, []byte("third")); err != nil {
		t.Fatal(err)
	}
	storagetest.WantLoaded(t, storage.NewAuthenticatedStore(openAt(t, path, nil), storagetest.Keyring(t)), storagetest.TestKey, 2, "storage-v1", "third")
}

// A file that is not a log is refused as corrupt, not overwritten.
func TestLogRefusesAnotherFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	if err := os.WriteFile(path, []byte("not a log at all, but long enough to have a header"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path, nil)
	storagetest.WantKind(t, err, storage.ErrCorrupt)
}

// Compaction rewrites the state into a new file; a second handle (as another process would)
// notices the renamed file and reads it from the start.
func TestLogCompactionIsSeenByOtherHandles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.log")
	opts := &Options{CompactAfter: 64 << 10}
	a := openAt(t, path, opts)
	other := openAt(t, path, opts)
	sa := storage.NewAuthenticatedStore(a, storagetest.Keyring(t))
	so := storage.NewAuthenticatedStore(other, storagetest.Keyring(t))
	token, err := sa.ReserveFence(ctxb(), storagetest.TestKey)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := os.Stat(path)
	var expected *uint64
	compacted := false
	for i := range 400 {
		// Payloads that share nothing, so every frame is written whole.
		payload := bytes.Repeat([]byte{byte('a' + i%26)}, 300+i%7)
		rec, err := sa.CompareAndSwapFenced(ctxb(), storagetest.TestKey, expected, payload, token)
		if err != nil {
			t.Fatal(err)
		}
		expected = storage.ExpectRevision(rec.Revision)
		if now, _ := os.Stat(path); !os.SameFile(info, now) {
			compacted = true
		}
		if i%50 == 0 {
			storagetest.WantLoaded(t, so, storagetest.TestKey, rec.Revision, "storage-v1", string(payload))
		}
	}
	if !compacted {
		t.Fatal("the log was never compacted")
	}
	if f, err := so.CurrentFence(ctxb(), storagetest.TestKey); err != nil || f != token {
		t.Fatalf("fence %d after compaction, %v", f, err)
	}
	if _, err := so.CompareAndSwapFenced(ctxb(), storagetest.TestKey, expected, []byte("from the other"), token); err != nil {
		t.Fatal(err)
	}
	storagetest.WantLoaded(t, sa, storagetest.TestKey, *expected+1, "storage-v1", "from the other")
	if _, err := os.Stat(path + ".compact"); !os.IsNotExist(err) {
		t.Fatalf("the compaction's temporary file is left: %v", err)
	}
}

// Edited anchor state is refused with the kind of its rule; a record edited in place fails
// its commitment.
//
// Spec: STO-062, STO-063
func TestLogDetectsTampering(t *testing.T) {
	b := openTemp(t)
	s := storage.NewAuthenticatedStore(b, storagetest.Keyring(t))
	key := storagetest.TestKey
	if _, err := s.Create(ctxb(), key, []byte("first payload")); err != nil {
		t.Fatal(err)
	}
	load := func() error { _, err := s.Load(ctxb(), key); return err }
	var good entry
	tamper(t, b, key, func(e entry) entry {
		good = e
		e.record = bytes.Clone(e.record)
		e.record[len(e.record)-2] ^= 1
		return e
	})
	storagetest.WantKind(t, load(), storage.ErrBackend, storage.ErrRecordCommitmentMismatch)
	tamper(t, b, key, func(entry) entry { e := good; e.commitment = nil; return e })
	storagetest.WantKind(t, load(), storage.ErrBackend, storage.ErrMissingRecordCommitment)
	tamper(t, b, key, func(entry) entry { e := good; e.floor = 0; return e })
	storagetest.WantKind(t, load(), storage.ErrBackend, storage.ErrUnexpectedRecordCommitment)
}

func BenchmarkLogBackend(b *testing.B) {
	storagetest.RunBenchmarks(b, harness().Open)
}

// A fenced write through the authenticated store, by payload size (the size of a journal
// of 1 and of 64 records); SPLASH_BENCH_DIR puts the log elsewhere (a tmpfs, to leave the
// sync out).
func BenchmarkStoreFencedCASBySize(b *testing.B) {
	for _, size := range []int{300, 16000} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			dir := os.Getenv("SPLASH_BENCH_DIR")
			if dir == "" {
				dir = b.TempDir()
			} else {
				var err error
				if dir, err = os.MkdirTemp(dir, "bench"); err != nil {
					b.Fatal(err)
				}
				defer os.RemoveAll(dir)
			}
			bk := openAt(b, filepath.Join(dir, "store.log"), nil)
			s := storage.NewAuthenticatedStore(bk, storagetest.Keyring(b))
			token, err := s.ReserveFence(ctxb(), storagetest.TestKey)
			if err != nil {
				b.Fatal(err)
			}
			payload := bytes.Repeat([]byte("journal record "), size/15)
			var expected *uint64
			b.ResetTimer()
			for i := range b.N {
				payload[len(payload)-1-i%100]++
				rec, err := s.CompareAndSwapFenced(ctxb(), storagetest.TestKey, expected, payload, token)
				if err != nil {
					b.Fatal(err)
				}
				expected = storage.ExpectRevision(rec.Revision)
			}
		})
	}
}

// A frame that checks but whose delta does not apply is corruption, not the end of the log.
//
// Spec: STO-067
func TestLogUndecodableFrameIsCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.log")
	b := openAt(t, path, nil)
	s := storage.NewAuthenticatedStore(b, storagetest.Keyring(t))
	if _, err := s.Create(ctxb(), storagetest.TestKey, bytes.Repeat([]byte("first "), 100)); err != nil {
		t.Fatal(err)
	}
	// A frame for the key whose delta copies past the previous record.
	body := []byte(keyBytes(storagetest.TestKey))
	body = binary.BigEndian.AppendUint64(body, 0)
	body = binary.BigEndian.AppendUint64(body, 0)
	body = append(body, hasRecord|recordDelta)
	body = binary.BigEndian.AppendUint64(body, 2)
	body = binary.BigEndian.AppendUint32(body, 10)
	body = append(body, 10<<1|1, 0xff, 0x7f)
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	seq := binary.BigEndian.AppendUint64(nil, b.seq+1)
	frame = binary.BigEndian.AppendUint32(frame, frameCRC(seq, body))
	frame = append(append(frame, seq...), body...)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(frame, b.end); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = Open(path, nil)
	storagetest.WantKind(t, err, storage.ErrCorrupt)
	_, err = s.Load(ctxb(), storagetest.TestKey)
	storagetest.WantKind(t, err, storage.ErrBackend, storage.ErrCorrupt)
}

// An operation waits a bounded time for another process's lock, then fails with LogFile;
// the lock released, operations go on.
//
// Spec: STO-061, STO-067
func TestLogLockTimeout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.log")
	b := openAt(t, path, &Options{LockTimeout: 100 * time.Millisecond})
	other, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	_, err = b.ReserveFence(ctxb(), storagetest.TestKey)
	storagetest.WantKind(t, err, storage.ErrLogFile)
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if token, err := b.ReserveFence(ctxb(), storagetest.TestKey); err != nil || token != 1 {
		t.Fatalf("reserve after the lock was released: %d, %v", token, err)
	}
}

// A fenced swap that keeps its bytes holds the caller's envelope as the record (its
// remembered snapshot shares it, and a load still copies it); the plain fenced swap keeps a
// copy. Both write the same frame: the log read afresh holds the record.
//
// Spec: STO-020, STO-067
func TestLogKeepingSwapKeepsTheBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.log")
	b := openAt(t, path, nil)
	token, err := b.ReserveFence(ctxb(), storagetest.TestKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, keep := range []bool{false, true} {
		data := []byte(fmt.Sprintf("record kept %v", keep))
		var expected *uint64
		rev := uint64(1)
		if keep {
			expected, rev = storage.ExpectRevision(1), 2
		}
		replacement := storage.StoredRecord{Revision: rev, Bytes: data}
		var out storage.CASOutcome
		if keep {
			out, err = b.CompareAndSwapFencedKeeping(ctxb(), storagetest.TestKey, expected, replacement, token)
		} else {
			out, err = b.CompareAndSwapFenced(ctxb(), storagetest.TestKey, expected, replacement, token)
		}
		if err != nil || !out.Stored {
			t.Fatalf("keep %v: %+v, %v", keep, out, err)
		}
		snap, ok := b.RememberedSnapshot(storagetest.TestKey, token)
		if !ok || !bytes.Equal(snap.Record.Bytes, data) {
			t.Fatalf("keep %v: remembered %+v (%v)", keep, snap, ok)
		}
		if shared := &snap.Record.Bytes[0] == &data[0]; shared != keep {
			t.Fatalf("keep %v: the remembered record shares the caller's bytes: %v", keep, shared)
		}
		loaded, err := b.Load(ctxb(), storagetest.TestKey)
		if err != nil || &loaded.Record.Bytes[0] == &data[0] {
			t.Fatalf("keep %v: a load returned the caller's bytes, not a copy (%v)", keep, err)
		}
		fresh := openAt(t, path, nil)
		if got, err := fresh.Load(ctxb(), storagetest.TestKey); err != nil || !bytes.Equal(got.Record.Bytes, data) {
			t.Fatalf("keep %v: read afresh: %+v, %v", keep, got, err)
		}
	}
}

// countingLog counts the reads that establish the fence, the full way of a fenced write.
type countingLog struct {
	*Backend
	establishes int
}

func (c *countingLog) EstablishFenceAndLoad(ctx context.Context, key storage.RecordKey, token uint64) (storage.Snapshot, error) {
	c.establishes++
	return c.Backend.EstablishFenceAndLoad(ctx, key, token)
}

// The first fenced write of a new key, right after its fence was reserved (a worker's first
// dispatch in a new scope), is decided on the remembered state, which holds no record: one
// locked step, without a read that establishes the fence first. When another process wrote
// the record in between, the write decided on the remembered state conflicts under the lock
// and the full way refuses it as a write conflict.
//
// Spec: STO-067
func TestLogFirstFencedWriteOfANewKeyIsRemembered(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.log")
	b := &countingLog{Backend: openAt(t, path, nil)}
	s := storage.NewAuthenticatedStore(b, storagetest.Keyring(t))
	token, err := s.ReserveFence(ctxb(), storagetest.TestKey)
	if err != nil {
		t.Fatal(err)
	}
	snap, ok := b.RememberedSnapshot(storagetest.TestKey, token)
	if !ok || snap.Record != nil || snap.RevisionFloor != 0 {
		t.Fatalf("remembered state after the reservation: %+v (%v), want no record at floor 0", snap, ok)
	}
	if _, ok := b.RememberedSnapshot(storagetest.TestKey, token+1); ok {
		t.Fatal("a state was remembered for a token that is not its fence")
	}
	frames := b.seq
	rec, err := s.SwapFenced(ctxb(), storagetest.TestKey, nil, []byte("first"), token)
	if err != nil || rec.Revision != 1 {
		t.Fatalf("first fenced write: revision %d, %v; want revision 1", rec.Revision, err)
	}
	if b.establishes != 0 || b.seq != frames+1 {
		t.Fatalf("first fenced write: %d establishing reads and %d frames, want 0 and 1 (decided on the remembered state)", b.establishes, b.seq-frames)
	}
	storagetest.WantLoaded(t, storage.NewAuthenticatedStore(openAt(t, path, nil), storagetest.Keyring(t)), storagetest.TestKey, 1, "storage-v1", "first")

	// Another process writes the record of a second new key after this one reserved its fence.
	key := storage.RecordKey{Namespace: storagetest.TestKey.Namespace, Name: storagetest.TestKey.Name + "-2"}
	token, err = s.ReserveFence(ctxb(), key)
	if err != nil {
		t.Fatal(err)
	}
	other := storage.NewAuthenticatedStore(openAt(t, path, nil), storagetest.Keyring(t))
	if _, err := other.SwapFenced(ctxb(), key, nil, []byte("theirs"), token); err != nil {
		t.Fatal(err)
	}
	_, err = s.SwapFenced(ctxb(), key, nil, []byte("mine"), token)
	storagetest.WantKind(t, err, storage.ErrWriteConflict)
	storagetest.WantLoaded(t, other, key, 1, "storage-v1", "theirs")
}

// Opening a log makes the zeroed room the next frames need, so that no write of a session
// grows the file (and no write's sync commits a new size): a new log has it before its first
// write, and a log whose room ran low (here: cut off after its last frame) gets it back when
// it is opened again, with its state intact.
//
// Spec: STO-067
func TestLogOpenMakesRoom(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.log")
	size := func() int64 {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return info.Size()
	}
	b := openAt(t, path, nil)
	if got := size(); got < headerBytes+openRoom || got%growChunk != 0 {
		t.Fatalf("a new log is %d bytes after opening, want a multiple of %d of at least %d", got, growChunk, headerBytes+openRoom)
	}
	opened := size()
	s := storage.NewAuthenticatedStore(b, storagetest.Keyring(t))
	if _, err := s.Create(ctxb(), storagetest.TestKey, []byte("first")); err != nil {
		t.Fatal(err)
	}
	if got := size(); got != opened {
		t.Fatalf("the first write changed the file's size from %d to %d", opened, got)
	}
	if err := os.Truncate(path, b.end+10); err != nil {
		t.Fatal(err)
	}
	again := openAt(t, path, nil)
	if got := size(); got < again.end+openRoom {
		t.Fatalf("a log with %d bytes of room was opened with %d, want at least %d", size()-again.end, got-again.end, openRoom)
	}
	storagetest.WantLoaded(t, storage.NewAuthenticatedStore(again, storagetest.Keyring(t)), storagetest.TestKey, 1, "storage-v1", "first")
}
