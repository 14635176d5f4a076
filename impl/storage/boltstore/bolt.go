// Package boltstore is a durable storage.Backend in one bbolt file (go.etcd.io/bbolt, the
// embedded B+tree store under etcd). It is the bundled reference worker's journal store: pure
// Go, it compiles in a few seconds.
//
// bbolt locks its file exclusively for as long as a handle is open. So that several
// processes can share one file (two workers on one journal, the older fenced by the newer),
// each operation opens the file, takes the lock (waiting up to Options.LockTimeout for another
// process's operation, then failing with storage.ErrBolt), runs one transaction, which bbolt
// fsyncs before the commit returns, and closes the file again. No process holds the lock
// between operations.
package boltstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/splashv5/conform/impl/storage"
)

// DefaultLockTimeout is how long an operation waits for another process to release the file.
const DefaultLockTimeout = 5 * time.Second

// Options configures Open. The zero value selects DefaultLockTimeout.
type Options struct {
	// LockTimeout bounds the wait for the file lock held by another process.
	LockTimeout time.Duration
}

// Bucket names. Keys in both are lp(namespace) || lp(name), each length a uint16 big-endian.
var (
	anchorsBucket = []byte("splash_storage_anchors")
	recordsBucket = []byte("splash_storage_records")
)

// An anchor value is storage.AppendAnchor's encoding. A record value is u64be(revision) ||
// envelope bytes.
const revisionBytes = 8

// Backend is a durable storage.Backend in one bbolt file. Per key it keeps the envelope and
// its revision, and the rollback-anchor state: the revision floor, a commitment to the
// envelope at the floor, and the fencing token. Load reports a record whose revision differs
// from the floor as is, so that storage.AuthenticatedStore detects the rollback, and rejects
// a record at the floor whose bytes do not match the commitment
// (storage.ErrRecordCommitmentMismatch). As with sqlitestore, restoring the whole file to an
// older copy is not detected.
type Backend struct {
	path    string
	timeout time.Duration
	// mu serializes this process's operations, so that they queue here rather than poll
	// the file lock; the file lock serializes them with other processes'.
	mu     sync.Mutex
	closed atomic.Bool
}

// Open prepares the bbolt file at path, creating it and its buckets if needed.
func Open(path string, opts *Options) (*Backend, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.LockTimeout <= 0 {
		o.LockTimeout = DefaultLockTimeout
	}
	b := &Backend{path: path, timeout: o.LockTimeout}
	err := b.withDB(func(db *bolt.DB) error {
		return db.Update(func(tx *bolt.Tx) error {
			for _, name := range [][]byte{anchorsBucket, recordsBucket} {
				if _, err := tx.CreateBucketIfNotExists(name); err != nil {
					return err
				}
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// Close ends the use of the backend; later operations fail with storage.ErrBackendClosed.
// The file is not held between operations, so there is nothing else to release.
func (b *Backend) Close() error {
	b.closed.Store(true)
	return nil
}

// withDB opens the file, waiting for its lock, runs fn and closes the file.
func (b *Backend) withDB(fn func(db *bolt.DB) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	db, err := bolt.Open(b.path, 0o600, &bolt.Options{Timeout: b.timeout})
	if err != nil {
		return &storage.Error{Kind: storage.ErrBolt, Err: err}
	}
	err = fn(db)
	if cerr := db.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return boltError(err)
}

// dbKey returns the bucket key of key.
func dbKey(key storage.RecordKey) []byte {
	out := make([]byte, 0, 4+len(key.Namespace)+len(key.Name))
	out = binary.BigEndian.AppendUint16(out, uint16(len(key.Namespace)))
	out = append(out, key.Namespace...)
	out = binary.BigEndian.AppendUint16(out, uint16(len(key.Name)))
	return append(out, key.Name...)
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
		return &storage.Error{Kind: storage.ErrBolt, Err: err}
	}
	return nil
}

// boltError wraps a bbolt failure; storage errors pass through.
func boltError(err error) error {
	var se *storage.Error
	if err == nil || errors.As(err, &se) {
		return err
	}
	return &storage.Error{Kind: storage.ErrBolt, Err: err}
}

// view runs fn in a read transaction.
func (b *Backend) view(fn func(anchors, records *bolt.Bucket) error) error {
	return b.withDB(func(db *bolt.DB) error {
		return db.View(func(tx *bolt.Tx) error { return inBuckets(tx, fn) })
	})
}

// update runs fn in a write transaction, committed and fsynced before it returns.
func (b *Backend) update(fn func(anchors, records *bolt.Bucket) error) error {
	return b.withDB(func(db *bolt.DB) error {
		return db.Update(func(tx *bolt.Tx) error { return inBuckets(tx, fn) })
	})
}

// inBuckets runs fn over the two buckets of tx, refusing a file that lacks them.
func inBuckets(tx *bolt.Tx, fn func(anchors, records *bolt.Bucket) error) error {
	anchors, records := tx.Bucket(anchorsBucket), tx.Bucket(recordsBucket)
	if anchors == nil || records == nil {
		return errors.New("the file lacks the storage buckets")
	}
	return fn(anchors, records)
}

// readAnchor reads and validates the anchor state of k (the initial state when absent).
func readAnchor(anchors *bolt.Bucket, k []byte) (storage.AnchorState, error) {
	st, err := storage.ParseAnchor(anchors.Get(k))
	var se *storage.Error
	if err != nil && !errors.As(err, &se) {
		err = &storage.Error{Kind: storage.ErrBolt, Err: err}
	}
	return st, err
}

func writeAnchor(anchors *bolt.Bucket, k []byte, st storage.AnchorState) error {
	return anchors.Put(k, storage.AppendAnchor(make([]byte, 0, 48), st))
}

// readRevision returns the stored record's revision and the stored value (valid only inside
// the transaction), or nil when there is no record.
func readRevision(records *bolt.Bucket, k []byte) (*uint64, []byte, error) {
	v := records.Get(k)
	if v == nil {
		return nil, nil, nil
	}
	if len(v) < revisionBytes {
		return nil, nil, &storage.Error{Kind: storage.ErrBolt, Err: fmt.Errorf("record holds %d bytes, want at least %d", len(v), revisionBytes)}
	}
	rev := binary.BigEndian.Uint64(v)
	return &rev, v, nil
}

// Load reads the anchor state and the record in one read transaction. The record's size is
// checked before its bytes are copied.
func (b *Backend) Load(ctx context.Context, key storage.RecordKey) (storage.Snapshot, error) {
	if err := b.begin(ctx, key); err != nil {
		return storage.Snapshot{}, err
	}
	k := dbKey(key)
	var snap storage.Snapshot
	err := b.view(func(anchors, records *bolt.Bucket) error {
		st, err := readAnchor(anchors, k)
		if err != nil {
			return err
		}
		snap.RevisionFloor = st.Floor
		rev, v, err := readRevision(records, k)
		if err != nil || rev == nil {
			return err
		}
		if size := len(v) - revisionBytes; size > storage.MaxRecordBytes {
			return &storage.Error{Kind: storage.ErrStoredRecordTooLarge, Size: size, Limit: storage.MaxRecordBytes}
		}
		rec, err := storage.LoadedRecord(key, *rev, st.Floor, st.Commitment, v[revisionBytes:])
		snap.Record = rec
		return err
	})
	if err != nil {
		return storage.Snapshot{}, err
	}
	return snap, nil
}

// CompareAndSwap implements storage.Backend.CompareAndSwap in one write transaction.
func (b *Backend) CompareAndSwap(ctx context.Context, key storage.RecordKey, expected *uint64, replacement storage.StoredRecord) (storage.CASOutcome, error) {
	return b.swap(ctx, key, expected, replacement, false, 0)
}

// CompareAndSwapFenced implements storage.Backend.CompareAndSwapFenced in one write
// transaction: the fence check and the swap commit together.
func (b *Backend) CompareAndSwapFenced(ctx context.Context, key storage.RecordKey, expected *uint64, replacement storage.StoredRecord, token uint64) (storage.CASOutcome, error) {
	return b.swap(ctx, key, expected, replacement, true, token)
}

func (b *Backend) swap(ctx context.Context, key storage.RecordKey, expected *uint64, replacement storage.StoredRecord, fenced bool, token uint64) (storage.CASOutcome, error) {
	if err := b.begin(ctx, key); err != nil {
		return storage.CASOutcome{}, err
	}
	if fenced && token == 0 {
		// Rejected before the write lock is taken; CheckFence repeats the rule.
		return storage.CASOutcome{}, &storage.Error{Kind: storage.ErrInvalidFencingToken}
	}
	k := dbKey(key)
	var outcome storage.CASOutcome
	err := b.update(func(anchors, records *bolt.Bucket) error {
		st, err := readAnchor(anchors, k)
		if err != nil {
			return err
		}
		actual, _, err := readRevision(records, k)
		if err != nil {
			return err
		}
		conflict, revision, err := storage.PlanSwap(st.Fence, fenced, token, actual, st.Floor, expected, replacement)
		if err != nil || revision == 0 {
			outcome = conflict
			return err
		}
		v := make([]byte, 0, revisionBytes+len(replacement.Bytes))
		v = binary.BigEndian.AppendUint64(v, revision)
		v = append(v, replacement.Bytes...)
		if err := records.Put(k, v); err != nil {
			return err
		}
		commitment := storage.RecordCommitment(key, revision, replacement.Bytes)
		if err := writeAnchor(anchors, k, storage.AnchorState{Floor: revision, Commitment: &commitment, Fence: st.Fence}); err != nil {
			return err
		}
		outcome = storage.CASOutcome{Stored: true, RevisionFloor: revision}
		return nil
	})
	if err != nil {
		return storage.CASOutcome{}, err
	}
	return outcome, nil
}

// CurrentFence implements storage.Backend.CurrentFence.
func (b *Backend) CurrentFence(ctx context.Context, key storage.RecordKey) (uint64, error) {
	if err := b.begin(ctx, key); err != nil {
		return 0, err
	}
	var fence uint64
	err := b.view(func(anchors, _ *bolt.Bucket) error {
		st, err := readAnchor(anchors, dbKey(key))
		fence = st.Fence
		return err
	})
	return fence, err
}

// ReserveFence implements storage.Backend.ReserveFence as one write transaction.
func (b *Backend) ReserveFence(ctx context.Context, key storage.RecordKey) (uint64, error) {
	if err := b.begin(ctx, key); err != nil {
		return 0, err
	}
	k := dbKey(key)
	var token uint64
	err := b.update(func(anchors, _ *bolt.Bucket) error {
		st, err := readAnchor(anchors, k)
		if err != nil {
			return err
		}
		if token, err = storage.NextFence(st.Fence); err != nil {
			return err
		}
		st.Fence = token
		return writeAnchor(anchors, k, st)
	})
	if err != nil {
		return 0, err
	}
	return token, nil
}

// EstablishFence implements storage.Backend.EstablishFence as one write transaction.
func (b *Backend) EstablishFence(ctx context.Context, key storage.RecordKey, token uint64) error {
	if err := b.begin(ctx, key); err != nil {
		return err
	}
	if token == 0 {
		return &storage.Error{Kind: storage.ErrInvalidFencingToken}
	}
	k := dbKey(key)
	return b.update(func(anchors, _ *bolt.Bucket) error {
		st, err := readAnchor(anchors, k)
		if err != nil {
			return err
		}
		next, err := storage.CheckEstablish(st.Fence, token)
		if err != nil || next == st.Fence {
			return err
		}
		st.Fence = next
		return writeAnchor(anchors, k, st)
	})
}
