// Package etcdstore is a storage.Backend on an etcd cluster (official client
// go.etcd.io/etcd/client/v3), for workers on several machines that share one fenced journal.
//
// Per record key it keeps two etcd keys under a configured prefix: the anchor (revision
// floor, fencing token, record commitment, as storage.AppendAnchor encodes them) and the
// record (u64be(revision) || envelope). Every write is one etcd transaction whose guard
// compares the etcd modification revisions of the keys it read: the transaction commits only
// if neither key changed since, otherwise the operation reads again and retries. So a
// compare-and-swap, a fence reservation and a fence establishment are each atomic and
// linearizable (etcd serializes transactions through raft and answers reads linearizably),
// and none is a read followed by an unconditional write.
//
// The backend remembers the highest etcd revision and the cluster id it has seen; an answer
// with a lower revision or another cluster id (a cluster restored from an older snapshot or
// replaced) fails with storage.ErrEtcdRollback. Any other failure, including a timeout, is
// storage.ErrEtcd: the outcome of a write that fails so is unknown, and callers must treat it
// as indeterminate.
package etcdstore

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/splashv5/conform/impl/storage"
)

// Defaults of Config.
const (
	DefaultDialTimeout = 5 * time.Second
	DefaultOpTimeout   = 5 * time.Second
)

// maxResponseBytes bounds every gRPC answer the client accepts: one anchor and one record
// of at most storage.MaxRecordBytes, with room for headers.
const maxResponseBytes = storage.MaxRecordBytes + 64*1024

// Config says how to reach the cluster. It comes from the operator (flags or a file), never
// from a frame. String and GoString omit the password.
type Config struct {
	// Endpoints are the client URLs of the members, such as "http://10.0.0.5:2379".
	Endpoints []string
	// Prefix is prepended to every etcd key the backend uses; workers sharing a journal
	// use the same prefix. It must be nonempty.
	Prefix string
	// Username and Password authenticate to etcd when Username is set.
	Username, Password string
	// TLS, when not nil, secures the connections.
	TLS *tls.Config
	// DialTimeout bounds the first connection; OpTimeout bounds each etcd call.
	DialTimeout, OpTimeout time.Duration
}

// String describes the configuration without the password.
func (c Config) String() string {
	user := "none"
	if c.Username != "" {
		user = "set"
	}
	return fmt.Sprintf("etcdstore.Config{endpoints: %s, prefix: %q, auth: %s, tls: %t}", strings.Join(c.Endpoints, ","), c.Prefix, user, c.TLS != nil)
}

// GoString is String, so that %#v omits the password too.
func (c Config) GoString() string { return c.String() }

// Backend is a storage.Backend on etcd. It is safe for concurrent use.
type Backend struct {
	cli    *clientv3.Client
	prefix string
	opTO   time.Duration
	closed atomic.Bool

	mu       sync.Mutex
	revision int64
	cluster  uint64
}

// Open connects to the cluster cfg names, failing with storage.ErrEtcd when no member
// answers within the dial timeout.
func Open(cfg Config) (*Backend, error) {
	if len(cfg.Endpoints) == 0 || cfg.Prefix == "" {
		return nil, &storage.Error{Kind: storage.ErrEtcd, Err: errors.New("etcd configuration needs endpoints and a key prefix")}
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.OpTimeout <= 0 {
		cfg.OpTimeout = DefaultOpTimeout
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:          cfg.Endpoints,
		DialTimeout:        cfg.DialTimeout,
		Username:           cfg.Username,
		Password:           cfg.Password,
		TLS:                cfg.TLS,
		MaxCallRecvMsgSize: maxResponseBytes,
		MaxCallSendMsgSize: maxResponseBytes,
		Logger:             zap.NewNop(),
	})
	if err != nil {
		return nil, &storage.Error{Kind: storage.ErrEtcd, Err: err}
	}
	return &Backend{cli: cli, prefix: cfg.Prefix, opTO: cfg.OpTimeout}, nil
}

// Close ends the use of the backend and its connections; later operations fail with
// storage.ErrBackendClosed.
func (b *Backend) Close() error {
	if b.closed.Swap(true) {
		return nil
	}
	return b.cli.Close()
}

// keyPart encodes key injectively as lowercase hex of lp(namespace) || lp(name).
func keyPart(key storage.RecordKey) string {
	raw := make([]byte, 0, 4+len(key.Namespace)+len(key.Name))
	raw = binary.BigEndian.AppendUint16(raw, uint16(len(key.Namespace)))
	raw = append(raw, key.Namespace...)
	raw = binary.BigEndian.AppendUint16(raw, uint16(len(key.Name)))
	raw = append(raw, key.Name...)
	return hex.EncodeToString(raw)
}

// anchorKey and recordKey are the etcd keys of key's anchor state and record.
func (b *Backend) anchorKey(key storage.RecordKey) string {
	return b.prefix + "/anchor/" + keyPart(key)
}

func (b *Backend) recordKey(key storage.RecordKey) string {
	return b.prefix + "/record/" + keyPart(key)
}

// begin checks the key, that the backend is open and the context.
func (b *Backend) begin(ctx context.Context, key storage.RecordKey) error {
	if err := key.Validate(); err != nil {
		return err
	}
	if b.closed.Load() {
		return &storage.Error{Kind: storage.ErrBackendClosed}
	}
	if err := ctx.Err(); err != nil {
		return &storage.Error{Kind: storage.ErrEtcd, Err: err}
	}
	return nil
}

// seen returns the highest etcd revision answered so far. A request sent afterwards must be
// answered at that revision or later.
func (b *Backend) seen() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.revision
}

// observe checks an answer's header: its revision is not below floor, the highest revision
// answered before the request was sent, and the cluster id never changes.
func (b *Backend) observe(floor int64, clusterID uint64, revision int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cluster != 0 && clusterID != b.cluster {
		return &storage.Error{Kind: storage.ErrEtcdRollback, Err: fmt.Errorf("cluster id %x, was %x", clusterID, b.cluster)}
	}
	if revision < floor {
		return &storage.Error{Kind: storage.ErrEtcdRollback, Err: fmt.Errorf("revision %d after %d", revision, floor)}
	}
	b.cluster = clusterID
	b.revision = max(b.revision, revision)
	return nil
}

// state is what one consistent read returns: the anchor and record values (nil = absent)
// and their etcd modification revisions (0 = absent).
type state struct {
	anchor, record       []byte
	anchorMod, recordMod int64
}

// txn runs one etcd transaction under the operation timeout and checks its header.
func (b *Backend) txn(ctx context.Context, cmps []clientv3.Cmp, ops ...clientv3.Op) (*clientv3.TxnResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, b.opTO)
	defer cancel()
	floor := b.seen()
	resp, err := b.cli.Txn(ctx).If(cmps...).Then(ops...).Commit()
	if err != nil {
		return nil, &storage.Error{Kind: storage.ErrEtcd, Err: err}
	}
	if err := b.observe(floor, resp.Header.ClusterId, resp.Header.Revision); err != nil {
		return nil, err
	}
	return resp, nil
}

// read reads key's anchor and record at one etcd revision (a linearizable read).
func (b *Backend) read(ctx context.Context, key storage.RecordKey) (state, error) {
	resp, err := b.txn(ctx, nil, clientv3.OpGet(b.anchorKey(key)), clientv3.OpGet(b.recordKey(key)))
	if err != nil {
		return state{}, err
	}
	var st state
	if len(resp.Responses) != 2 {
		return state{}, &storage.Error{Kind: storage.ErrEtcd, Err: fmt.Errorf("read answered %d results, want 2", len(resp.Responses))}
	}
	if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) == 1 {
		st.anchor, st.anchorMod = kvs[0].Value, kvs[0].ModRevision
		if st.anchor == nil {
			st.anchor = []byte{}
		}
	}
	if kvs := resp.Responses[1].GetResponseRange().Kvs; len(kvs) == 1 {
		st.record, st.recordMod = kvs[0].Value, kvs[0].ModRevision
		if st.record == nil {
			st.record = []byte{}
		}
	}
	return st, nil
}

// anchorState decodes the anchor of st.
func anchorState(st state) (storage.AnchorState, error) {
	a, err := storage.ParseAnchor(st.anchor)
	var se *storage.Error
	if err != nil && !errors.As(err, &se) {
		err = &storage.Error{Kind: storage.ErrEtcd, Err: err}
	}
	return a, err
}

// recordRevision returns the revision of the record in st (nil when absent).
func recordRevision(st state) (*uint64, error) {
	if st.record == nil {
		return nil, nil
	}
	if len(st.record) < 8 {
		return nil, &storage.Error{Kind: storage.ErrEtcd, Err: fmt.Errorf("record holds %d bytes, want at least 8", len(st.record))}
	}
	rev := binary.BigEndian.Uint64(st.record)
	return &rev, nil
}

// unchanged guards a write: neither key was modified since st was read.
func (b *Backend) unchanged(key storage.RecordKey, st state) []clientv3.Cmp {
	return []clientv3.Cmp{
		clientv3.Compare(clientv3.ModRevision(b.anchorKey(key)), "=", st.anchorMod),
		clientv3.Compare(clientv3.ModRevision(b.recordKey(key)), "=", st.recordMod),
	}
}

// Load reads the anchor and the record at one etcd revision. A record larger than
// storage.MaxRecordBytes is refused (the client refuses any answer much larger), and a
// record at the floor whose bytes do not match the commitment is
// storage.ErrRecordCommitmentMismatch.
func (b *Backend) Load(ctx context.Context, key storage.RecordKey) (storage.Snapshot, error) {
	if err := b.begin(ctx, key); err != nil {
		return storage.Snapshot{}, err
	}
	st, err := b.read(ctx, key)
	if err != nil {
		return storage.Snapshot{}, err
	}
	a, err := anchorState(st)
	if err != nil {
		return storage.Snapshot{}, err
	}
	rev, err := recordRevision(st)
	if err != nil || rev == nil {
		return storage.Snapshot{RevisionFloor: a.Floor}, err
	}
	if size := len(st.record) - 8; size > storage.MaxRecordBytes {
		return storage.Snapshot{}, &storage.Error{Kind: storage.ErrStoredRecordTooLarge, Size: size, Limit: storage.MaxRecordBytes}
	}
	rec, err := storage.LoadedRecord(key, *rev, a.Floor, a.Commitment, st.record[8:])
	if err != nil {
		return storage.Snapshot{}, err
	}
	return storage.Snapshot{Record: rec, RevisionFloor: a.Floor}, nil
}

// CompareAndSwap implements storage.Backend.CompareAndSwap as one guarded transaction.
func (b *Backend) CompareAndSwap(ctx context.Context, key storage.RecordKey, expected *uint64, replacement storage.StoredRecord) (storage.CASOutcome, error) {
	return b.swap(ctx, key, expected, replacement, false, 0)
}

// CompareAndSwapFenced implements storage.Backend.CompareAndSwapFenced: the fence is checked
// against the anchor the guarded transaction compares, so the check and the swap commit
// together.
func (b *Backend) CompareAndSwapFenced(ctx context.Context, key storage.RecordKey, expected *uint64, replacement storage.StoredRecord, token uint64) (storage.CASOutcome, error) {
	return b.swap(ctx, key, expected, replacement, true, token)
}

func (b *Backend) swap(ctx context.Context, key storage.RecordKey, expected *uint64, replacement storage.StoredRecord, fenced bool, token uint64) (storage.CASOutcome, error) {
	if err := b.begin(ctx, key); err != nil {
		return storage.CASOutcome{}, err
	}
	if fenced && token == 0 {
		return storage.CASOutcome{}, &storage.Error{Kind: storage.ErrInvalidFencingToken}
	}
	for {
		st, err := b.read(ctx, key)
		if err != nil {
			return storage.CASOutcome{}, err
		}
		a, err := anchorState(st)
		if err != nil {
			return storage.CASOutcome{}, err
		}
		actual, err := recordRevision(st)
		if err != nil {
			return storage.CASOutcome{}, err
		}
		conflict, revision, err := storage.PlanSwap(a.Fence, fenced, token, actual, a.Floor, expected, replacement)
		if err != nil || revision == 0 {
			return conflict, err
		}
		rec := make([]byte, 0, 8+len(replacement.Bytes))
		rec = binary.BigEndian.AppendUint64(rec, revision)
		rec = append(rec, replacement.Bytes...)
		commitment := storage.RecordCommitment(key, revision, replacement.Bytes)
		anchor := storage.AppendAnchor(nil, storage.AnchorState{Floor: revision, Fence: a.Fence, Commitment: &commitment})
		resp, err := b.txn(ctx, b.unchanged(key, st), clientv3.OpPut(b.recordKey(key), string(rec)), clientv3.OpPut(b.anchorKey(key), string(anchor)))
		if err != nil {
			return storage.CASOutcome{}, err
		}
		if resp.Succeeded {
			return storage.CASOutcome{Stored: true, RevisionFloor: revision}, nil
		}
		// Another writer changed a key between the read and the guard: decide again.
		if err := b.begin(ctx, key); err != nil {
			return storage.CASOutcome{}, err
		}
	}
}

// CurrentFence implements storage.Backend.CurrentFence.
func (b *Backend) CurrentFence(ctx context.Context, key storage.RecordKey) (uint64, error) {
	if err := b.begin(ctx, key); err != nil {
		return 0, err
	}
	st, err := b.read(ctx, key)
	if err != nil {
		return 0, err
	}
	a, err := anchorState(st)
	return a.Fence, err
}

// updateFence applies next to the anchor's fence in a guarded transaction, retrying when
// the anchor changed between the read and the guard. next returns the new fence, or the
// current one to leave the anchor as it is.
func (b *Backend) updateFence(ctx context.Context, key storage.RecordKey, next func(current uint64) (uint64, error)) (uint64, error) {
	if err := b.begin(ctx, key); err != nil {
		return 0, err
	}
	for {
		st, err := b.read(ctx, key)
		if err != nil {
			return 0, err
		}
		a, err := anchorState(st)
		if err != nil {
			return 0, err
		}
		fence, err := next(a.Fence)
		if err != nil || fence == a.Fence {
			return fence, err
		}
		a.Fence = fence
		resp, err := b.txn(ctx, b.unchanged(key, st)[:1], clientv3.OpPut(b.anchorKey(key), string(storage.AppendAnchor(nil, a))))
		if err != nil {
			return 0, err
		}
		if resp.Succeeded {
			return fence, nil
		}
		if err := b.begin(ctx, key); err != nil {
			return 0, err
		}
	}
}

// ReserveFence implements storage.Backend.ReserveFence: the raised fence is written by a
// transaction guarded by the anchor's modification revision, so two concurrent reservations
// never return the same token.
func (b *Backend) ReserveFence(ctx context.Context, key storage.RecordKey) (uint64, error) {
	return b.updateFence(ctx, key, storage.NextFence)
}

// EstablishFence implements storage.Backend.EstablishFence.
func (b *Backend) EstablishFence(ctx context.Context, key storage.RecordKey, token uint64) error {
	if err := b.begin(ctx, key); err != nil {
		return err
	}
	if token == 0 {
		return &storage.Error{Kind: storage.ErrInvalidFencingToken}
	}
	_, err := b.updateFence(ctx, key, func(current uint64) (uint64, error) { return storage.CheckEstablish(current, token) })
	return err
}

// LoadAnchor implements storage.RollbackAnchor: the anchor state of key alone, so that a
// local file backend can keep its records and anchor them here.
func (b *Backend) LoadAnchor(ctx context.Context, key storage.RecordKey) (storage.AnchorState, error) {
	if err := b.begin(ctx, key); err != nil {
		return storage.AnchorState{}, err
	}
	st, err := b.read(ctx, key)
	if err != nil {
		return storage.AnchorState{}, err
	}
	return anchorState(st)
}

// SwapAnchor implements storage.RollbackAnchor in one transaction guarded by the anchor's
// value: expected's encoding, or the key's absence for the zero state (a written anchor always
// has a nonzero fence or floor).
func (b *Backend) SwapAnchor(ctx context.Context, key storage.RecordKey, expected, replacement storage.AnchorState) (bool, error) {
	if err := b.begin(ctx, key); err != nil {
		return false, err
	}
	k := b.anchorKey(key)
	guard := clientv3.Compare(clientv3.CreateRevision(k), "=", 0)
	if expected != (storage.AnchorState{}) {
		guard = clientv3.Compare(clientv3.Value(k), "=", string(storage.AppendAnchor(nil, expected)))
	}
	resp, err := b.txn(ctx, []clientv3.Cmp{guard}, clientv3.OpPut(k, string(storage.AppendAnchor(nil, replacement))))
	if err != nil {
		return false, err
	}
	return resp.Succeeded, nil
}
