// Package logstore is a durable storage.Backend in one append-only log file: every change of
// a record key's state is one frame written at the end of the log and made durable with one
// fdatasync before the operation returns. It is the bundled reference worker's journal store.
//
// # Layout
//
// The file starts with a 32-byte header (the magic line "splash-storage-log v1\n", zero
// padded). Frames follow, each a 16-byte head (u32 body length, u32 CRC-32C of the sequence
// number and the body, u64 sequence number, all big-endian) and a body holding one record
// key's whole state after the change: the fence, the revision floor, the commitment to the
// record at the floor, and the record (its revision and envelope bytes, written whole or as a
// delta from the key's previous record, so that a step of a growing journal writes about what
// changed). Sequence numbers count from 1 without gaps. The log ends at the first frame that
// is zeros, does not check, or does not follow its predecessor's number: a frame torn by a
// crash was never acknowledged, and the next write overwrites it.
//
// The file is grown in zeroed chunks ahead of the frames, so that writing a frame overwrites
// allocated blocks and its fdatasync does not also commit a change of the file's size. Open
// makes room for about a thousand frames of a journal step, so that a session's writes rarely
// grow the file themselves.
//
// # Processes
//
// Each process keeps the state of every key in memory. An operation takes an exclusive lock
// on the file (flock), reads the frames other processes appended since its last operation,
// decides on the current state, appends its frame when the state changes and releases the
// lock; it then makes the file durable (fdatasync) before it returns, outside the lock, so
// that the syncs of several processes overlap. A frame another process reads before its
// writer's sync is durable once the reader's own sync returns, and a reader that read frames
// of other processes syncs too before it answers, so no operation answers with state that a
// crash could still take back. A read is one lock and one short read of the file when nothing
// changed.
//
// When the log is four times the size of the state it holds (and at least CompactAfter
// bytes), the writer rewrites the state into a new file, syncs it and renames it over the
// old one under the lock; other processes see the renamed file on their next operation and
// read it from the start.
//
// As with boltstore, the rollback-anchor state lives in the same file: restoring the whole
// file to an older copy is not detected.
package logstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/storage/internal/delta"
)

// Magic is the first line of a log file; the header is it, zero padded to 32 bytes.
const Magic = "splash-storage-log v1\n"

const (
	headerBytes    = 32
	frameHeadBytes = 16
	// maxBody bounds a frame body: a whole record and its state.
	maxBody = storage.MaxRecordBytes + 1024
	// growChunk is how much zeroed room the file is grown by at a time.
	growChunk = 1 << 20
	// openRoom is the zeroed room Open makes past the last frame: about a thousand journal
	// steps of a worker, so that a session rarely grows the file.
	openRoom = growChunk / 2
)

// DefaultLockTimeout is how long an operation waits for another process to release the file.
const DefaultLockTimeout = 5 * time.Second

// DefaultCompactAfter is the smallest log that is compacted.
const DefaultCompactAfter = 8 << 20

// Options configures Open. The zero value selects the defaults.
type Options struct {
	// LockTimeout bounds the wait for the file lock held by another process.
	LockTimeout time.Duration
	// CompactAfter is the smallest log, in bytes, that is rewritten when it holds four times
	// the state it describes.
	CompactAfter int64
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// entry is one record key's state.
type entry struct {
	fence, floor uint64
	commitment   *[32]byte
	hasRecord    bool
	rev          uint64
	record       []byte
	// checked says matches is known: whether the record matches the commitment, judged once
	// per state (when it is first loaded, or by the write that made it), not at every load.
	checked, matches bool
}

// Backend is a durable storage.Backend in one log file. Its methods are safe for concurrent
// use, and several processes may share the file.
type Backend struct {
	path         string
	timeout      time.Duration
	compactAfter int64

	// mu serializes this process's operations; the file lock serializes them with other
	// processes'. Everything below is guarded by mu.
	mu     sync.Mutex
	closed atomic.Bool
	f      *os.File
	info   os.FileInfo // f's identity, to tell when the path names another file
	size   int64       // the file's size as last seen
	end    int64       // offset of the next frame
	seq    uint64      // number of the last frame read or written
	live   int64       // bytes the state would take written whole
	states map[string]*entry
	buf    []byte
	// pending is closed once a lock wait that timed out has ended (see lock).
	pending chan struct{}
	// retired is the file a compaction replaced, closed once its lock is released.
	retired *os.File
	// unsynced says the file may hold frames not yet made durable: this operation's own, or
	// frames of other processes it read, whose writers may still be syncing them.
	unsynced bool
}

// Open opens the log file at path, creating it if needed, and reads it.
func Open(path string, opts *Options) (*Backend, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.LockTimeout <= 0 {
		o.LockTimeout = DefaultLockTimeout
	}
	if o.CompactAfter <= 0 {
		o.CompactAfter = DefaultCompactAfter
	}
	b := &Backend{path: path, timeout: o.LockTimeout, compactAfter: o.CompactAfter}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.reopen(); err != nil {
		return nil, err
	}
	// The room the next frames need is made when the log is opened, before any operation:
	// otherwise the write that first runs out of room would grow the file, and its sync
	// would commit the chunk of zeros and the new size. It is made as far as it can be: a
	// disk too full for it fails the write that needs the room, as before, not the opening.
	err := b.locked(func() error {
		_ = b.makeRoom(b.end + openRoom)
		return nil
	})
	if err != nil {
		b.f.Close()
		return nil, err
	}
	return b, nil
}

// Close ends the use of the backend and closes the file; later operations fail with
// storage.ErrBackendClosed.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed.Swap(true) || b.f == nil {
		return nil
	}
	return b.f.Close()
}

func logError(err error) error {
	var se *storage.Error
	if err == nil || errors.As(err, &se) {
		return err
	}
	return &storage.Error{Kind: storage.ErrLogFile, Err: err}
}

// reopen opens the file at the path afresh and forgets what was read of the old one.
func (b *Backend) reopen() error {
	if b.f != nil {
		b.f.Close()
		b.f = nil
	}
	f, err := os.OpenFile(b.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return logError(err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return logError(err)
	}
	b.f, b.info, b.size, b.end, b.seq, b.live = f, info, 0, 0, 0, 0
	b.states = make(map[string]*entry)
	return nil
}

// locked runs fn with the file locked and the state read up to the end of the log.
func (b *Backend) locked(fn func() error) error {
	for range 8 {
		unlock, err := b.lock()
		if err != nil {
			return logError(err)
		}
		replaced, err := b.replaced()
		if err == nil && replaced {
			unlock()
			if err := b.reopen(); err != nil {
				return err
			}
			continue
		}
		if err == nil {
			err = b.catchUp()
		}
		if err == nil {
			err = fn()
		}
		unlock()
		if b.retired != nil {
			b.retired.Close()
			b.retired = nil
		}
		// The sync comes after the lock is released, so that the syncs of several processes
		// overlap (one flush of the file's pages serves them all). An operation answers only
		// once every frame it wrote or read is durable: a frame another process builds on
		// precedes that process's own frame, which its sync makes durable with it.
		if b.unsynced {
			if serr := datasync(b.f); serr != nil && err == nil {
				err = serr
			}
			b.unsynced = false
		}
		return logError(err)
	}
	return logError(errors.New("the log file kept being replaced"))
}

// replaced reports whether the path now names another file than the one open (a compaction
// by another process renamed a new file over it).
func (b *Backend) replaced() (bool, error) {
	named, err := os.Stat(b.path)
	if err != nil {
		return false, err
	}
	return !os.SameFile(b.info, named), nil
}

// catchUp initializes an empty file and reads the frames appended since the last read.
func (b *Backend) catchUp() error {
	if b.end == 0 {
		info, err := b.f.Stat()
		if err != nil {
			return err
		}
		size := info.Size()
		if size == 0 {
			if err := b.initialize(); err != nil {
				return err
			}
			size = headerBytes
		} else {
			head := make([]byte, headerBytes)
			if _, err := b.f.ReadAt(head, 0); err != nil {
				return fmt.Errorf("reading the log header: %w", err)
			}
			if !bytes.Equal(head, header()) {
				return &storage.Error{Kind: storage.ErrCorrupt, Err: errors.New("the file is not a storage log (wrong header)")}
			}
		}
		b.size, b.end = size, headerBytes
	}
	var head [frameHeadBytes]byte
	for {
		if _, err := b.f.ReadAt(head[:], b.end); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		n := binary.BigEndian.Uint32(head[:])
		if n == 0 || n > maxBody {
			return nil
		}
		seq := binary.BigEndian.Uint64(head[8:])
		if seq != b.seq+1 {
			return nil
		}
		body := b.scratch(int(n))
		if _, err := b.f.ReadAt(body, b.end+frameHeadBytes); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if frameCRC(head[8:], body) != binary.BigEndian.Uint32(head[4:]) {
			return nil
		}
		if err := b.apply(body); err != nil {
			return &storage.Error{Kind: storage.ErrCorrupt, Err: fmt.Errorf("frame %d at offset %d: %w", seq, b.end, err)}
		}
		b.unsynced = true
		b.end += frameHeadBytes + int64(n)
		b.seq = seq
		if b.end > b.size {
			b.size = b.end
		}
	}
}

func header() []byte {
	h := make([]byte, headerBytes)
	copy(h, Magic)
	return h
}

// initialize writes the header of a new log and makes the file's name durable.
func (b *Backend) initialize() error {
	if _, err := b.f.WriteAt(header(), 0); err != nil {
		return err
	}
	if err := b.f.Sync(); err != nil {
		return err
	}
	return syncDir(filepath.Dir(b.path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func (b *Backend) scratch(n int) []byte {
	if cap(b.buf) < n {
		b.buf = make([]byte, n)
	}
	return b.buf[:n]
}

func frameCRC(seq, body []byte) uint32 {
	return crc32.Update(crc32.Checksum(seq, castagnoli), castagnoli, body)
}

// Body flags.
const (
	hasCommitment = 1 << iota
	hasRecord
	recordDelta
)

// keyBytes is the map key and the body encoding of key: u8 length and bytes of the
// namespace, then of the name.
func keyBytes(key storage.RecordKey) string {
	out := make([]byte, 0, 2+len(key.Namespace)+len(key.Name))
	out = append(out, byte(len(key.Namespace)))
	out = append(out, key.Namespace...)
	out = append(out, byte(len(key.Name)))
	return string(append(out, key.Name...))
}

var errShortBody = errors.New("frame body is truncated")

// apply decodes one frame body and makes it the state of its key.
func (b *Backend) apply(body []byte) error {
	r := reader{data: body}
	nsLen := int(r.byte())
	r.bytes(nsLen)
	nameLen := int(r.byte())
	r.bytes(nameLen)
	if r.err != nil {
		return r.err
	}
	k := string(body[:2+nsLen+nameLen])
	e := &entry{fence: r.u64(), floor: r.u64()}
	flags := r.byte()
	if flags&hasCommitment != 0 {
		c := [32]byte(r.bytes(32))
		e.commitment = &c
	}
	if flags&hasRecord != 0 {
		e.hasRecord, e.rev = true, r.u64()
		size := int(r.u32())
		if r.err != nil {
			return r.err
		}
		if size > maxBody {
			return errors.New("record too large")
		}
		if flags&recordDelta != 0 {
			prev := b.states[k]
			if prev == nil || !prev.hasRecord {
				return errors.New("record delta without a previous record")
			}
			rec, err := delta.Apply(prev.record, r.rest(), size)
			if err != nil {
				return err
			}
			e.record = rec
		} else {
			e.record = bytes.Clone(r.bytes(size))
		}
	}
	if r.err != nil {
		return r.err
	}
	if !r.done() {
		return errors.New("frame body has trailing bytes")
	}
	b.setState(k, e)
	return nil
}

// setState replaces the state of k and keeps the live size.
func (b *Backend) setState(k string, e *entry) {

	if old := b.states[k]; old != nil {
		b.live -= wholeSize(k, old)
	}
	b.states[k] = e
	b.live += wholeSize(k, e)
}

func wholeSize(k string, e *entry) int64 {
	return int64(frameHeadBytes + len(k) + 17 + 32 + 12 + len(e.record))
}

type reader struct {
	data []byte
	err  error
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil || n > len(r.data) {
		r.err = errShortBody
		return make([]byte, n)
	}
	v := r.data[:n]
	r.data = r.data[n:]
	return v
}

func (r *reader) byte() byte { return r.bytes(1)[0] }
func (r *reader) u32() uint32 {
	return binary.BigEndian.Uint32(r.bytes(4))
}
func (r *reader) u64() uint64 {
	return binary.BigEndian.Uint64(r.bytes(8))
}
func (r *reader) rest() []byte {
	v := r.data
	r.data = nil
	return v
}
func (r *reader) done() bool { return len(r.data) == 0 }

// appendBody encodes e as the state of k; the record as a delta from prev when that is much
// smaller.
func appendBody(dst []byte, k string, e, prev *entry) []byte {
	dst = append(dst, k...)
	dst = binary.BigEndian.AppendUint64(dst, e.fence)
	dst = binary.BigEndian.AppendUint64(dst, e.floor)
	var flags byte
	if e.commitment != nil {
		flags |= hasCommitment
	}
	if e.hasRecord {
		flags |= hasRecord
	}
	flagAt := len(dst)
	dst = append(dst, flags)
	if e.commitment != nil {
		dst = append(dst, e.commitment[:]...)
	}
	if !e.hasRecord {
		return dst
	}
	dst = binary.BigEndian.AppendUint64(dst, e.rev)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(e.record)))
	if prev != nil && prev.hasRecord && len(e.record) >= 256 {
		withDelta, ok := delta.Append(dst, prev.record, e.record)
		if ok {
			withDelta[flagAt] |= recordDelta
			return withDelta
		}
		dst = withDelta[:len(dst)]
	}
	return append(dst, e.record...)
}

// commit appends the frame that makes e the state of k, syncs it, and only then adopts it.
func (b *Backend) commit(k string, e *entry) error {
	prev := b.states[k]
	frame := b.scratch(frameHeadBytes)[:frameHeadBytes]
	frame = appendBody(frame, k, e, prev)
	b.buf = frame
	body := frame[frameHeadBytes:]
	if len(body) > maxBody {
		return fmt.Errorf("frame body of %d bytes exceeds %d", len(body), maxBody)
	}
	binary.BigEndian.PutUint32(frame, uint32(len(body)))
	binary.BigEndian.PutUint64(frame[8:], b.seq+1)
	binary.BigEndian.PutUint32(frame[4:], frameCRC(frame[8:16], body))
	need := b.end + int64(len(frame))
	if err := b.makeRoom(need); err != nil {
		return err
	}
	if _, err := b.f.WriteAt(frame, b.end); err != nil {
		return err
	}
	b.unsynced = true
	b.end = need
	b.seq++
	b.setState(k, e)
	if b.end >= b.compactAfter && b.end >= 4*b.live {
		// The change is durable; a failed compaction leaves the log as it was.
		_ = b.compact()
	}
	return nil
}

// makeRoom grows the file in zeroed chunks until it holds need bytes (b.mu and the file lock
// held). The zeros are written, so that frames later overwrite allocated blocks and their
// fdatasync commits no change of the file's size or its blocks.
func (b *Backend) makeRoom(need int64) error {
	if need > b.size {
		// Another process may have grown the file already.
		info, err := b.f.Stat()
		if err != nil {
			return err
		}
		b.size = max(b.size, info.Size())
	}
	if need <= b.size {
		return nil
	}
	grown := need + growChunk - need%growChunk
	if err := b.f.Truncate(grown); err != nil {
		return err
	}
	zeros := make([]byte, 64<<10)
	for off := b.size; off < grown; off += int64(len(zeros)) {
		if _, err := b.f.WriteAt(zeros[:min(int64(len(zeros)), grown-off)], off); err != nil {
			return err
		}
	}
	b.size = grown
	b.unsynced = true
	return nil
}

// compact writes the state into a new file and renames it over the log.
func (b *Backend) compact() error {
	tmp := b.path + ".compact"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	out := header()
	var seq uint64
	for k, e := range b.states {
		seq++
		at := len(out)
		out = append(out, make([]byte, frameHeadBytes)...)
		out = appendBody(out, k, e, nil)
		body := out[at+frameHeadBytes:]
		binary.BigEndian.PutUint32(out[at:], uint32(len(body)))
		binary.BigEndian.PutUint64(out[at+8:], seq)
		binary.BigEndian.PutUint32(out[at+4:], frameCRC(out[at+8:at+16], body))
	}
	if _, err := f.Write(out); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := os.Rename(tmp, b.path); err != nil {
		return err
	}
	ok = true
	if err := syncDir(filepath.Dir(b.path)); err != nil {
		return err
	}
	// This process holds the old file's lock until the operation ends; it moves to the new
	// file, whose state it wrote, for the next one.
	info, err := f.Stat()
	if err != nil {
		return err
	}
	b.retired = b.f
	b.f, b.info, b.size, b.end, b.seq = f, info, int64(len(out)), int64(len(out)), seq
	return nil
}

// begin checks the key, the context and that the backend is open.
func (b *Backend) begin(ctx context.Context, key storage.RecordKey) error {
	if err := key.Validate(); err != nil {
		return err
	}
	if b.closed.Load() {
		return &storage.Error{Kind: storage.ErrBackendClosed}
	}
	if err := ctx.Err(); err != nil {
		return &storage.Error{Kind: storage.ErrLogFile, Err: err}
	}
	return nil
}

// do runs fn on the current state of key, with the file locked and read to its end. fn
// returns the new state to commit, or nil to leave the state as it is.
func (b *Backend) do(ctx context.Context, key storage.RecordKey, fn func(e entry) (*entry, error)) error {
	if err := b.begin(ctx, key); err != nil {
		return err
	}
	k := keyBytes(key)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed.Load() {
		return &storage.Error{Kind: storage.ErrBackendClosed}
	}
	return b.locked(func() error {
		var cur entry
		if e := b.states[k]; e != nil {
			cur = *e
		}
		if err := checkAnchor(cur); err != nil {
			return err
		}
		next, err := fn(cur)
		if err != nil || next == nil {
			return err
		}
		return b.commit(k, next)
	})
}

// checkAnchor applies the rule every durable backend applies to its anchor state: a
// commitment exactly when the floor is nonzero.
func checkAnchor(e entry) error {
	switch {
	case e.floor == 0 && e.commitment != nil:
		return &storage.Error{Kind: storage.ErrUnexpectedRecordCommitment}
	case e.floor != 0 && e.commitment == nil:
		return &storage.Error{Kind: storage.ErrMissingRecordCommitment}
	}
	return nil
}

// Load implements storage.Backend.Load.
func (b *Backend) Load(ctx context.Context, key storage.RecordKey) (storage.Snapshot, error) {
	var snap storage.Snapshot
	err := b.do(ctx, key, func(e entry) (*entry, error) {
		var err error
		snap, err = b.snapshot(key, &e)
		return nil, err
	})
	if err != nil {
		return storage.Snapshot{}, err
	}
	return snap, nil
}

// snapshot returns what Load returns for the state e of key (b.mu and the file lock held).
func (b *Backend) snapshot(key storage.RecordKey, e *entry) (storage.Snapshot, error) {
	snap := storage.Snapshot{RevisionFloor: e.floor}
	if !e.hasRecord {
		return snap, nil
	}
	if len(e.record) > storage.MaxRecordBytes {
		return storage.Snapshot{}, &storage.Error{Kind: storage.ErrStoredRecordTooLarge, Size: len(e.record), Limit: storage.MaxRecordBytes}
	}
	if e.rev == e.floor && e.commitment != nil {
		stored := b.states[keyBytes(key)]
		if !stored.checked {
			stored.checked, stored.matches = true, storage.RecordCommitment(key, e.rev, e.record) == *e.commitment
		}
		if !stored.matches {
			return storage.Snapshot{}, &storage.Error{Kind: storage.ErrRecordCommitmentMismatch}
		}
	}
	snap.Record = &storage.StoredRecord{Revision: e.rev, Bytes: bytes.Clone(e.record)}
	if snap.Record.Bytes == nil {
		snap.Record.Bytes = []byte{}
	}
	return snap, nil
}

// EstablishFenceAndLoad implements storage.FenceEstablisher: EstablishFence and Load under
// one lock.
func (b *Backend) EstablishFenceAndLoad(ctx context.Context, key storage.RecordKey, token uint64) (storage.Snapshot, error) {
	if err := b.begin(ctx, key); err != nil {
		return storage.Snapshot{}, err
	}
	if token == 0 {
		return storage.Snapshot{}, &storage.Error{Kind: storage.ErrInvalidFencingToken}
	}
	var snap storage.Snapshot
	err := b.do(ctx, key, func(e entry) (*entry, error) {
		next, err := storage.CheckEstablish(e.fence, token)
		if err != nil {
			return nil, err
		}
		if next != e.fence {
			e.fence = next
			if err := b.commit(keyBytes(key), &e); err != nil {
				return nil, err
			}
		}
		snap, err = b.snapshot(key, &e)
		return nil, err
	})
	if err != nil {
		return storage.Snapshot{}, err
	}
	return snap, nil
}

// RememberedSnapshot implements storage.StateRememberer with the state this process last
// read or wrote (without reading what other processes appended since): a fenced swap decides
// under the lock, on the current state, so a swap decided on a stale snapshot is refused by
// its fence or conflicts on its revision. The snapshot shares the record's bytes, which are
// never changed in place. A state without a record (a fence reserved for a new key) is
// remembered too: there is no record to judge, as Load judges none.
func (b *Backend) RememberedSnapshot(key storage.RecordKey, token uint64) (storage.Snapshot, bool) {
	if key.Validate() != nil {
		return storage.Snapshot{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed.Load() {
		return storage.Snapshot{}, false
	}
	e := b.states[keyBytes(key)]
	if e == nil || e.fence != token || checkAnchor(*e) != nil || (e.hasRecord && (!e.checked || !e.matches)) || len(e.record) > storage.MaxRecordBytes {
		return storage.Snapshot{}, false
	}
	snap := storage.Snapshot{RevisionFloor: e.floor}
	if e.hasRecord {
		snap.Record = &storage.StoredRecord{Revision: e.rev, Bytes: e.record}
	}
	return snap, true
}

// CompareAndSwap implements storage.Backend.CompareAndSwap.
func (b *Backend) CompareAndSwap(ctx context.Context, key storage.RecordKey, expected *uint64, replacement storage.StoredRecord) (storage.CASOutcome, error) {
	return b.swap(ctx, key, expected, replacement, false, 0, false)
}

// CompareAndSwapFenced implements storage.Backend.CompareAndSwapFenced: the fence check and
// the swap are decided under one lock and written in one frame.
func (b *Backend) CompareAndSwapFenced(ctx context.Context, key storage.RecordKey, expected *uint64, replacement storage.StoredRecord, token uint64) (storage.CASOutcome, error) {
	return b.swap(ctx, key, expected, replacement, true, token, false)
}

// CompareAndSwapFencedKeeping implements storage.RecordKeeper: CompareAndSwapFenced that
// keeps replacement.Bytes as the record instead of a copy.
func (b *Backend) CompareAndSwapFencedKeeping(ctx context.Context, key storage.RecordKey, expected *uint64, replacement storage.StoredRecord, token uint64) (storage.CASOutcome, error) {
	return b.swap(ctx, key, expected, replacement, true, token, true)
}

func (b *Backend) swap(ctx context.Context, key storage.RecordKey, expected *uint64, replacement storage.StoredRecord, fenced bool, token uint64, keep bool) (storage.CASOutcome, error) {
	if err := b.begin(ctx, key); err != nil {
		return storage.CASOutcome{}, err
	}
	if fenced && token == 0 {
		return storage.CASOutcome{}, &storage.Error{Kind: storage.ErrInvalidFencingToken}
	}
	var outcome storage.CASOutcome
	err := b.do(ctx, key, func(e entry) (*entry, error) {
		var actual *uint64
		if e.hasRecord {
			actual = storage.ExpectRevision(e.rev)
		}
		conflict, revision, err := storage.PlanSwap(e.fence, fenced, token, actual, e.floor, expected, replacement)
		if err != nil || revision == 0 {
			outcome = conflict
			return nil, err
		}
		commitment := storage.RecordCommitment(key, revision, replacement.Bytes)
		outcome = storage.CASOutcome{Stored: true, RevisionFloor: revision}
		record := replacement.Bytes
		if !keep {
			record = bytes.Clone(record)
		}
		return &entry{
			fence: e.fence, floor: revision, commitment: &commitment,
			hasRecord: true, rev: revision, record: record, checked: true, matches: true,
		}, nil
	})
	if err != nil {
		return storage.CASOutcome{}, err
	}
	return outcome, nil
}

// CurrentFence implements storage.Backend.CurrentFence.
func (b *Backend) CurrentFence(ctx context.Context, key storage.RecordKey) (uint64, error) {
	var fence uint64
	err := b.do(ctx, key, func(e entry) (*entry, error) {
		fence = e.fence
		return nil, nil
	})
	return fence, err
}

// ReserveFence implements storage.Backend.ReserveFence with one frame.
func (b *Backend) ReserveFence(ctx context.Context, key storage.RecordKey) (uint64, error) {
	var token uint64
	err := b.do(ctx, key, func(e entry) (*entry, error) {
		var err error
		if token, err = storage.NextFence(e.fence); err != nil {
			return nil, err
		}
		e.fence = token
		return &e, nil
	})
	if err != nil {
		return 0, err
	}
	return token, nil
}

// EstablishFence implements storage.Backend.EstablishFence; an equal token writes nothing.
func (b *Backend) EstablishFence(ctx context.Context, key storage.RecordKey, token uint64) error {
	if err := b.begin(ctx, key); err != nil {
		return err
	}
	if token == 0 {
		return &storage.Error{Kind: storage.ErrInvalidFencingToken}
	}
	return b.do(ctx, key, func(e entry) (*entry, error) {
		next, err := storage.CheckEstablish(e.fence, token)
		if err != nil || next == e.fence {
			return nil, err
		}
		e.fence = next
		return &e, nil
	})
}
