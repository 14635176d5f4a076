// Package sqlitestore is a durable storage.Backend in one SQLite database file that several
// processes may share. It is a package of its own so that only programs that choose SQLite
// link it: the driver (modernc.org/sqlite, a translation of SQLite to Go) takes about a minute
// to compile from a cold build cache.
package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/splashv5/conform/impl/storage"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// JournalMode selects how SQLite makes transactions atomic.
type JournalMode uint8

const (
	// JournalWAL uses a write-ahead log: readers do not block the writer.
	// The database file must be on a local file system.
	JournalWAL JournalMode = iota
	// JournalDelete uses a rollback journal that is deleted on commit, the
	// setting of the reference implementation.
	JournalDelete
)

// String returns the SQLite pragma value.
func (m JournalMode) String() string {
	if m == JournalDelete {
		return "DELETE"
	}
	return "WAL"
}

// DefaultBusyTimeout is how long a connection waits for another
// process's write lock before failing.
const DefaultBusyTimeout = 5 * time.Second

// Options configures Open. The zero value selects WAL, the
// default busy timeout and four pooled connections.
type Options struct {
	JournalMode JournalMode
	// BusyTimeout bounds the wait for a lock held by another connection or
	// process (default DefaultBusyTimeout).
	BusyTimeout time.Duration
	// MaxOpenConns bounds the connection pool (default 4).
	MaxOpenConns int
}

const sqliteSchema = `
CREATE TABLE IF NOT EXISTS splash_storage_anchors (
	namespace TEXT NOT NULL,
	name TEXT NOT NULL,
	revision_floor BLOB NOT NULL CHECK (length(revision_floor) = 8),
	record_commitment BLOB CHECK (record_commitment IS NULL OR length(record_commitment) = 32),
	fencing_token BLOB NOT NULL CHECK (length(fencing_token) = 8),
	PRIMARY KEY (namespace, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS splash_storage_records (
	namespace TEXT NOT NULL,
	name TEXT NOT NULL,
	revision BLOB NOT NULL CHECK (length(revision) = 8),
	record BLOB NOT NULL,
	PRIMARY KEY (namespace, name)
) WITHOUT ROWID;
`

// Backend is a durable Backend in one SQLite database file. Several
// processes may open the same file at once: every operation is one SQLite
// transaction (writes use BEGIN IMMEDIATE), so reservations and fenced swaps
// are atomic across processes, and with synchronous=FULL a write is on disk
// when it returns. A crash leaves either the old or the new state.
//
// Per key it keeps the envelope and its revision, and the rollback-anchor
// state: the revision floor, a commitment to the envelope at the floor, and
// the fencing token. Load reports a record whose revision differs from the
// floor as is, so that AuthenticatedStore detects the rollback, and rejects a
// record at the floor whose bytes do not match the commitment
// (ErrRecordCommitmentMismatch). Because the anchor lives in the same file,
// restoring the whole file to an older copy is not detected; a deployment
// that must detect that needs an external monotonic anchor.
type Backend struct {
	db     *sql.DB
	closed atomic.Bool
}

// Open opens (creating if needed) the database at path and prepares
// its schema. path is a plain file path; it must not contain '?'.
func Open(ctx context.Context, path string, opts *Options) (*Backend, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = DefaultBusyTimeout
	}
	if o.MaxOpenConns <= 0 {
		o.MaxOpenConns = 4
	}
	if path == "" || strings.ContainsRune(path, '?') || strings.HasPrefix(path, "file:") || path == ":memory:" {
		return nil, &storage.Error{Kind: storage.ErrSQLite, Err: fmt.Errorf("database path %q is not a plain file path", path)}
	}
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(o.BusyTimeout.Milliseconds(), 10))
	q.Set("_journal_mode", o.JournalMode.String())
	q.Set("_synchronous", "FULL")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", path+"?"+q.Encode())
	if err != nil {
		return nil, &storage.Error{Kind: storage.ErrSQLite, Err: err}
	}
	db.SetMaxOpenConns(o.MaxOpenConns)
	db.SetMaxIdleConns(o.MaxOpenConns)
	b := &Backend{db: db}
	if err := b.inWriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, sqliteSchema)
		return err
	}); err != nil {
		_ = db.Close()
		return nil, err
	}
	return b, nil
}

// anchorState is the rollback-protected state kept per key.
type anchorState struct {
	floor      uint64
	commitment *[32]byte
	fence      uint64
}

// Close releases the database connections.
func (b *Backend) Close() error {
	if b.closed.Swap(true) {
		return nil
	}
	if err := b.db.Close(); err != nil {
		return &storage.Error{Kind: storage.ErrSQLite, Err: err}
	}
	return nil
}

// sqliteError wraps a driver failure, preferring the context's error when the
// context ended.
func sqliteError(ctx context.Context, err error) error {
	var se *storage.Error
	if errors.As(err, &se) {
		return err
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return &storage.Error{Kind: storage.ErrSQLite, Err: ctxErr}
	}
	return &storage.Error{Kind: storage.ErrSQLite, Err: err}
}

func (b *Backend) prelude(key storage.RecordKey) error {
	if err := key.Validate(); err != nil {
		return err
	}
	if b.closed.Load() {
		return &storage.Error{Kind: storage.ErrBackendClosed}
	}
	return nil
}

// inWriteTx runs fn inside BEGIN IMMEDIATE … COMMIT.
func (b *Backend) inWriteTx(ctx context.Context, fn func(*sql.Tx) error) error {
	return b.inTx(ctx, false, fn)
}

func (b *Backend) inTx(ctx context.Context, readOnly bool, fn func(*sql.Tx) error) error {
	tx, err := b.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: readOnly})
	if err != nil {
		return sqliteError(ctx, err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return sqliteError(ctx, err)
	}
	if err := tx.Commit(); err != nil {
		return sqliteError(ctx, err)
	}
	return nil
}

func u64Blob(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func blobU64(column string, b []byte) (uint64, error) {
	if len(b) != 8 {
		return 0, &storage.Error{Kind: storage.ErrSQLite, Err: fmt.Errorf("column %s holds %d bytes, want 8", column, len(b))}
	}
	return binary.BigEndian.Uint64(b), nil
}

// readAnchor reads and validates the anchor state of key (the initial state
// when no row exists).
func readAnchor(ctx context.Context, tx *sql.Tx, key storage.RecordKey) (anchorState, error) {
	var floorBlob, commitment, fenceBlob []byte
	err := tx.QueryRowContext(ctx,
		`SELECT revision_floor, record_commitment, fencing_token FROM splash_storage_anchors WHERE namespace = ? AND name = ?`,
		key.Namespace, key.Name).Scan(&floorBlob, &commitment, &fenceBlob)
	if errors.Is(err, sql.ErrNoRows) {
		return anchorState{}, nil
	}
	if err != nil {
		return anchorState{}, err
	}
	var st anchorState
	if st.floor, err = blobU64("revision_floor", floorBlob); err != nil {
		return anchorState{}, err
	}
	if st.fence, err = blobU64("fencing_token", fenceBlob); err != nil {
		return anchorState{}, err
	}
	switch {
	case commitment != nil && len(commitment) != 32:
		return anchorState{}, &storage.Error{Kind: storage.ErrSQLite, Err: fmt.Errorf("column record_commitment holds %d bytes, want 32", len(commitment))}
	case st.floor == 0 && commitment != nil:
		return anchorState{}, &storage.Error{Kind: storage.ErrUnexpectedRecordCommitment}
	case st.floor != 0 && commitment == nil:
		return anchorState{}, &storage.Error{Kind: storage.ErrMissingRecordCommitment}
	case commitment != nil:
		st.commitment = (*[32]byte)(commitment)
	}
	return st, nil
}

// readRevision returns the stored record's revision and byte length, or nil
// when no record row exists.
func readRevision(ctx context.Context, tx *sql.Tx, key storage.RecordKey) (*uint64, int64, error) {
	var revBlob []byte
	var length int64
	err := tx.QueryRowContext(ctx,
		`SELECT revision, length(CAST(record AS BLOB)) FROM splash_storage_records WHERE namespace = ? AND name = ?`,
		key.Namespace, key.Name).Scan(&revBlob, &length)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	rev, err := blobU64("revision", revBlob)
	if err != nil {
		return nil, 0, err
	}
	return &rev, length, nil
}

func writeAnchor(ctx context.Context, tx *sql.Tx, key storage.RecordKey, st anchorState) error {
	var commitment []byte
	if st.commitment != nil {
		commitment = st.commitment[:]
	}
	_, err := tx.ExecContext(ctx,
		`INSERT INTO splash_storage_anchors (namespace, name, revision_floor, record_commitment, fencing_token)
		 VALUES (?, ?, ?, ?, ?)
		 ON CONFLICT (namespace, name) DO UPDATE SET
		   revision_floor = excluded.revision_floor,
		   record_commitment = excluded.record_commitment,
		   fencing_token = excluded.fencing_token`,
		key.Namespace, key.Name, u64Blob(st.floor), commitment, u64Blob(st.fence))
	return err
}

// Load reads the anchor state and the record in one read transaction. The
// record's size is checked before its bytes are read.
func (b *Backend) Load(ctx context.Context, key storage.RecordKey) (storage.Snapshot, error) {
	if err := b.prelude(key); err != nil {
		return storage.Snapshot{}, err
	}
	var snap storage.Snapshot
	err := b.inTx(ctx, true, func(tx *sql.Tx) error {
		st, err := readAnchor(ctx, tx, key)
		if err != nil {
			return err
		}
		snap.RevisionFloor = st.floor
		rev, length, err := readRevision(ctx, tx, key)
		if err != nil || rev == nil {
			return err
		}
		if length > storage.MaxRecordBytes {
			return &storage.Error{Kind: storage.ErrStoredRecordTooLarge, Size: int(min(length, int64(^uint(0)>>1))), Limit: storage.MaxRecordBytes}
		}
		var data []byte
		err = tx.QueryRowContext(ctx,
			`SELECT CAST(record AS BLOB) FROM splash_storage_records
			 WHERE namespace = ? AND name = ? AND length(CAST(record AS BLOB)) <= ?`,
			key.Namespace, key.Name, storage.MaxRecordBytes).Scan(&data)
		if err != nil {
			return err
		}
		rec, err := storage.LoadedRecord(key, *rev, st.floor, st.commitment, data)
		snap.Record = rec
		return err
	})
	if err != nil {
		return storage.Snapshot{}, err
	}
	return snap, nil
}

// CompareAndSwap implements Backend.CompareAndSwap in one write transaction.
func (b *Backend) CompareAndSwap(ctx context.Context, key storage.RecordKey, expected *uint64, replacement storage.StoredRecord) (storage.CASOutcome, error) {
	return b.swap(ctx, key, expected, replacement, false, 0)
}

// CompareAndSwapFenced implements Backend.CompareAndSwapFenced in one write
// transaction: the fence check and the swap commit together.
func (b *Backend) CompareAndSwapFenced(ctx context.Context, key storage.RecordKey, expected *uint64, replacement storage.StoredRecord, token uint64) (storage.CASOutcome, error) {
	return b.swap(ctx, key, expected, replacement, true, token)
}

func (b *Backend) swap(ctx context.Context, key storage.RecordKey, expected *uint64, replacement storage.StoredRecord, fenced bool, token uint64) (storage.CASOutcome, error) {
	if err := b.prelude(key); err != nil {
		return storage.CASOutcome{}, err
	}
	if fenced && token == 0 {
		// Rejected before any lock is taken; checkFence repeats the rule.
		return storage.CASOutcome{}, &storage.Error{Kind: storage.ErrInvalidFencingToken}
	}
	var outcome storage.CASOutcome
	err := b.inWriteTx(ctx, func(tx *sql.Tx) error {
		st, err := readAnchor(ctx, tx, key)
		if err != nil {
			return err
		}
		actual, _, err := readRevision(ctx, tx, key)
		if err != nil {
			return err
		}
		conflict, revision, err := storage.PlanSwap(st.fence, fenced, token, actual, st.floor, expected, replacement)
		if err != nil || revision == 0 {
			outcome = conflict
			return err
		}
		commitment := storage.RecordCommitment(key, revision, replacement.Bytes)
		data := replacement.Bytes
		if data == nil {
			data = []byte{}
		}
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO splash_storage_records (namespace, name, revision, record) VALUES (?, ?, ?, ?)
			 ON CONFLICT (namespace, name) DO UPDATE SET revision = excluded.revision, record = excluded.record`,
			key.Namespace, key.Name, u64Blob(revision), data); err != nil {
			return err
		}
		if err := writeAnchor(ctx, tx, key, anchorState{floor: revision, commitment: &commitment, fence: st.fence}); err != nil {
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

// CurrentFence implements Backend.CurrentFence.
func (b *Backend) CurrentFence(ctx context.Context, key storage.RecordKey) (uint64, error) {
	if err := b.prelude(key); err != nil {
		return 0, err
	}
	var fence uint64
	err := b.inTx(ctx, true, func(tx *sql.Tx) error {
		st, err := readAnchor(ctx, tx, key)
		fence = st.fence
		return err
	})
	return fence, err
}

// ReserveFence implements Backend.ReserveFence as one write transaction.
func (b *Backend) ReserveFence(ctx context.Context, key storage.RecordKey) (uint64, error) {
	if err := b.prelude(key); err != nil {
		return 0, err
	}
	var token uint64
	err := b.inWriteTx(ctx, func(tx *sql.Tx) error {
		st, err := readAnchor(ctx, tx, key)
		if err != nil {
			return err
		}
		if token, err = storage.NextFence(st.fence); err != nil {
			return err
		}
		st.fence = token
		return writeAnchor(ctx, tx, key, st)
	})
	if err != nil {
		return 0, err
	}
	return token, nil
}

// EstablishFence implements Backend.EstablishFence as one write transaction.
func (b *Backend) EstablishFence(ctx context.Context, key storage.RecordKey, token uint64) error {
	if err := b.prelude(key); err != nil {
		return err
	}
	if token == 0 {
		return &storage.Error{Kind: storage.ErrInvalidFencingToken}
	}
	return b.inWriteTx(ctx, func(tx *sql.Tx) error {
		st, err := readAnchor(ctx, tx, key)
		if err != nil {
			return err
		}
		next, err := storage.CheckEstablish(st.fence, token)
		if err != nil || next == st.fence {
			return err
		}
		st.fence = next
		return writeAnchor(ctx, tx, key, st)
	})
}
