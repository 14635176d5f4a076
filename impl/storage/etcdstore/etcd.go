// Package etcdstore is a storage.Backend on an etcd cluster (official client
// go.etcd.io/etcd/client/v3), for workers on several machines that share one fenced journal.
//
// Per record key it keeps two etcd keys under the configured prefix, always below
// PREFIX + "/": the anchor (revision floor, fencing token, record commitment, as
// storage.AppendAnchor encodes them) and the record (u64be(revision), then the envelope,
// compressed when that makes it smaller). Every write is one etcd transaction whose guard
// compares the etcd modification revisions of the keys it read: the transaction commits only
// if neither key changed since, otherwise the operation backs off, reads again and retries
// until its deadline. So a compare-and-swap, a fence reservation and a fence establishment
// are each atomic and linearizable (etcd serializes transactions through raft and answers
// reads linearizably), and none is a read followed by an unconditional write.
//
// Failures are kept apart by kind: storage.ErrEtcd is an outage (a timeout, no quorum, a
// refused connection, a full database); the outcome of a write that fails so is unknown and
// callers must treat it as indeterminate. storage.ErrCorrupt is a stored value that does not
// decode. storage.ErrEtcdRollback is a cluster that answers with a lower revision than one
// this backend already saw, or under another cluster id; storage.ErrBelowWitness is a
// cluster below the durable Witness of what this machine saw before (a restored snapshot
// seen by a freshly started process).
package etcdstore

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/storage/internal/delta"
)

// Defaults of Config.
const (
	DefaultDialTimeout      = 5 * time.Second
	DefaultOpTimeout        = 5 * time.Second
	DefaultDeadline         = 15 * time.Second
	DefaultKeepAliveTime    = 10 * time.Second
	DefaultKeepAliveTimeout = 5 * time.Second
	// DefaultCompactRetain is how many etcd revisions of history a compaction keeps.
	DefaultCompactRetain = 100
	// DefaultQuotaBytes is etcd's default backend quota (--quota-backend-bytes), assumed when
	// the member does not report its quota and Config.QuotaBytes is not set.
	DefaultQuotaBytes = 2 << 30
	// DefaultQuotaWarnPercent is the share of the quota at which the backend warns.
	DefaultQuotaWarnPercent = 80
	// DefaultCompactEvery is by how many revisions the cluster's history may exceed the
	// retained window before the backend compacts it.
	DefaultCompactEvery = 50
)

// maxResponseBytes bounds every gRPC answer the client accepts: one anchor and one record
// of at most storage.MaxRecordBytes, with room for headers.
const maxResponseBytes = storage.MaxRecordBytes + 64*1024

// ErrConfig is wrapped by every refusal of an unsafe or incomplete Config.
var ErrConfig = errors.New("etcd configuration refused")

// Compaction says who bounds the history etcd keeps of the backend's keys.
type Compaction struct {
	// Server means the cluster compacts itself (etcd --auto-compaction-mode and
	// --auto-compaction-retention); the backend then never compacts. Otherwise, after a
	// committed write at revision R, the backend compacts the cluster's history below
	// R - Retain once the cluster still keeps revision R - Retain - Every: it decides from the
	// cluster's state, not from a count of its own writes, so workers that each write a few
	// times and exit bound the history together. Compaction applies to the whole cluster,
	// not to the prefix only.
	Server bool
	// Retain and Every default to DefaultCompactRetain and DefaultCompactEvery.
	Retain int64
	Every  int64
}

// Config says how to reach the cluster. It comes from the operator (flags or a file), never
// from a frame. String and GoString omit the password.
type Config struct {
	// Endpoints are the client URLs of the members, such as "https://10.0.0.5:2379".
	Endpoints []string
	// Prefix names the backend's key range: every etcd key it uses starts with Prefix + "/"
	// (a trailing "/" given here is dropped), so a role granted the range Prefix + "/"
	// covers the backend and not a sibling prefix that merely starts with the same bytes.
	// Workers sharing a journal use the same prefix. It must be nonempty.
	Prefix string
	// Username and Password authenticate to etcd when Username is set. A password is only
	// sent over TLS: Open refuses it with an http:// endpoint.
	Username, Password string
	// TLS, when not nil, secures the connections; every endpoint must then be https://.
	TLS *tls.Config
	// DialTimeout bounds the first connection; OpTimeout bounds each etcd call; Deadline
	// bounds one backend operation in all, its retries and back-off included.
	DialTimeout, OpTimeout, Deadline time.Duration
	// KeepAliveTime and KeepAliveTimeout set the gRPC keepalive probes that notice a dead
	// connection while it is idle or an answer is awaited.
	KeepAliveTime, KeepAliveTimeout time.Duration
	// Compaction bounds the history the cluster keeps.
	Compaction Compaction
	// Witness, when not nil, is the durable record of what this machine saw; Open and every
	// read refuse a cluster below it (storage.ErrBelowWitness), and every read and write
	// raises it.
	Witness *Witness
	// Warn, when not nil, receives the backend's warnings to the operator (one sentence
	// each, no secret): a role that may write outside the prefix where that cannot be told
	// for certain, a database close to its quota.
	Warn func(string)
	// QuotaBytes is the members' backend quota (etcd --quota-backend-bytes); 0 takes the
	// quota a member reports (etcd 3.6 and later), else DefaultQuotaBytes. When a member's
	// database reaches QuotaWarnPercent (default DefaultQuotaWarnPercent) of it, at open and
	// with each compaction decision, the backend warns through Warn.
	QuotaBytes       int64
	QuotaWarnPercent int
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
	cli      *clientv3.Client
	prefix   string // the configured prefix followed by "/"
	opTO     time.Duration
	deadline time.Duration
	compact  Compaction
	witness  *Witness
	closed   atomic.Bool
	warn     func(string)
	quota    int64
	warnAt   int

	mu       sync.Mutex
	revision int64
	cluster  uint64
	// checked is the revision at which the backend last asked whether the cluster keeps
	// history (0: not yet).
	checked int64
	// last holds, per record key (keyPart), the state this process last read or wrote, for
	// the next swap of the key to try first: its write is guarded by the modification
	// revisions of that state, so it commits only if the state is still current, and is
	// decided again from a fresh read otherwise.
	last map[string]state
}

// validate checks cfg and returns it with defaults filled in and the prefix normalized.
func validate(cfg Config) (Config, error) {
	refuse := func(format string, args ...any) (Config, error) {
		return Config{}, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...)
	}
	cfg.Prefix = strings.TrimSuffix(cfg.Prefix, "/")
	if len(cfg.Endpoints) == 0 || cfg.Prefix == "" {
		return refuse("needs endpoints and a key prefix")
	}
	if strings.Contains(cfg.Prefix+"/", "//") {
		return refuse("key prefix %q has an empty segment", cfg.Prefix)
	}
	for _, e := range cfg.Endpoints {
		u, err := url.Parse(e)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return refuse("endpoint %q is not http://HOST:PORT or https://HOST:PORT", e)
		}
		switch {
		case u.Scheme == "https" && cfg.TLS == nil:
			return refuse("endpoint %s is https but no TLS is configured", e)
		case u.Scheme == "http" && cfg.TLS != nil:
			return refuse("TLS is configured but endpoint %s is plain http", e)
		case u.Scheme == "http" && cfg.Username != "":
			return refuse("a password is never sent over plain http (endpoint %s); configure TLS", e)
		}
	}
	if cfg.Username == "" && cfg.Password != "" {
		return refuse("a password without a username")
	}
	defaults := []struct {
		d   *time.Duration
		def time.Duration
	}{
		{&cfg.DialTimeout, DefaultDialTimeout}, {&cfg.OpTimeout, DefaultOpTimeout},
		{&cfg.Deadline, DefaultDeadline}, {&cfg.KeepAliveTime, DefaultKeepAliveTime},
		{&cfg.KeepAliveTimeout, DefaultKeepAliveTimeout},
	}
	for _, d := range defaults {
		if *d.d <= 0 {
			*d.d = d.def
		}
	}
	if cfg.Compaction.Retain <= 0 {
		cfg.Compaction.Retain = DefaultCompactRetain
	}
	if cfg.Compaction.Every <= 0 {
		cfg.Compaction.Every = DefaultCompactEvery
	}
	if cfg.QuotaBytes < 0 || cfg.QuotaWarnPercent < 0 || cfg.QuotaWarnPercent > 100 {
		return refuse("quota %d bytes, warning at %d%%: want a size of at least 0 and a percentage from 1 to 100", cfg.QuotaBytes, cfg.QuotaWarnPercent)
	}
	if cfg.QuotaWarnPercent == 0 {
		cfg.QuotaWarnPercent = DefaultQuotaWarnPercent
	}
	return cfg, nil
}

// Open checks cfg (refusing an unsafe or incomplete one with an error wrapping ErrConfig),
// connects to the cluster and reads it once: it fails with storage.ErrEtcd when no member
// answers within the dial timeout (naming a TLS handshake failure when there is one), with
// storage.ErrBelowWitness when cfg.Witness saw another cluster or a later revision, and with
// ErrConfig when the backend is to compact but the user may not.
func Open(cfg Config) (*Backend, error) {
	cfg, err := validate(cfg)
	if err != nil {
		return nil, err
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:            cfg.Endpoints,
		DialTimeout:          cfg.DialTimeout,
		DialKeepAliveTime:    cfg.KeepAliveTime,
		DialKeepAliveTimeout: cfg.KeepAliveTimeout,
		PermitWithoutStream:  true,
		Username:             cfg.Username,
		Password:             cfg.Password,
		TLS:                  cfg.TLS,
		MaxCallRecvMsgSize:   maxResponseBytes,
		MaxCallSendMsgSize:   maxResponseBytes,
		Logger:               zap.NewNop(),
	})
	if err != nil {
		return nil, failure(diagnose(cfg, err))
	}
	b := &Backend{cli: cli, prefix: cfg.Prefix + "/", opTO: cfg.OpTimeout, deadline: cfg.Deadline, compact: cfg.Compaction, witness: cfg.Witness, warn: cfg.Warn,
		quota: cfg.QuotaBytes, warnAt: cfg.QuotaWarnPercent}
	if err := b.probe(cfg); err != nil {
		cli.Close()
		return nil, err
	}
	return b, nil
}

// probe reads the cluster once, within the dial timeout, and checks it against the witness.
func (b *Backend) probe(cfg Config) error {
	ctx, cancel := context.WithTimeout(context.Background(), cfg.DialTimeout)
	defer cancel()
	resp, err := b.cli.Get(ctx, b.prefix, clientv3.WithCountOnly())
	if err != nil {
		return failure(diagnose(cfg, err))
	}
	if err := b.witness.checkCluster(b.prefix, resp.Header.ClusterId, resp.Header.Revision); err != nil {
		return err
	}
	if err := b.observe(0, resp.Header.ClusterId, resp.Header.Revision); err != nil {
		return err
	}
	if !cfg.Compaction.Server {
		// Compacting below revision 1 removes nothing; it shows whether the user may compact
		// (etcd 3.5 and later reserve compaction to the root role once authentication is on).
		if _, err := b.cli.Compact(ctx, 1); errors.Is(err, rpctypes.ErrPermissionDenied) {
			return fmt.Errorf("%w: compaction \"self\" but user %q may not compact this cluster: run the members with --auto-compaction-mode and --auto-compaction-retention and configure compaction \"server\"", ErrConfig, cfg.Username)
		}
	}
	if err := b.checkIsolation(ctx, cfg); err != nil {
		return err
	}
	b.checkQuota(ctx)
	return nil
}

// checkQuota asks every member for its status and warns when a member's database reached
// the warning share of the quota. A member that does not answer within a second is left out.
func (b *Backend) checkQuota(ctx context.Context) {
	if b.warn == nil {
		return
	}
	for _, e := range b.cli.Endpoints() {
		sctx, cancel := context.WithTimeout(ctx, min(b.opTO, time.Second))
		st, err := b.cli.Status(sctx, e)
		cancel()
		if err != nil {
			continue
		}
		quota := b.quota
		if quota == 0 {
			quota = st.DbSizeQuota
		}
		if quota <= 0 {
			quota = DefaultQuotaBytes
		}
		if st.DbSize*100 >= quota*int64(b.warnAt) {
			b.warnf("etcd member %s: the database holds %d bytes, %d%% of the %d-byte backend quota (warning at %d%%; %d bytes in use): before the NOSPACE alarm stops every write, compact and defragment, raise --quota-backend-bytes, or move scopes to another cluster",
				e, st.DbSize, st.DbSize*100/quota, quota, b.warnAt, st.DbSizeInUse)
		}
	}
}

// warnf passes a warning to the configured Warn function, if any.
func (b *Backend) warnf(format string, args ...any) {
	if b.warn != nil {
		b.warn(fmt.Sprintf(format, args...))
	}
}

// checkIsolation asks the cluster whether the user may write next to the prefix range: the
// bare prefix and the key just past the range (Prefix + "0"), both of which a role granted the
// prefix without its trailing "/" covers, and with it every sibling prefix that starts with
// the same bytes ("/splash/prod2" next to "/splash/prod"). Each probe is a transaction whose
// guard never holds and whose only operation writes the sibling key: etcd checks the
// permission of every operation of a transaction before it evaluates the guard, so the probe
// is refused without the permission and writes nothing with it. A user with password
// authentication that may write there is refused (ErrConfig). Without a username, a client
// certificate may name the user or the cluster may run without authentication; that cannot
// be told apart, so it is a warning. Without either, the check is skipped: nothing isolates
// the prefixes of a cluster without authentication.
func (b *Backend) checkIsolation(ctx context.Context, cfg Config) error {
	certUser := cfg.TLS != nil && (len(cfg.TLS.Certificates) > 0 || cfg.TLS.GetClientCertificate != nil)
	if cfg.Username == "" && !certUser {
		return nil
	}
	never := clientv3.Compare(clientv3.CreateRevision(b.prefix), "<", 0)
	for _, sibling := range []string{cfg.Prefix, cfg.Prefix + "0"} {
		_, err := b.cli.Txn(ctx).If(never).Then(clientv3.OpPut(sibling, "")).Commit()
		switch {
		case errors.Is(err, rpctypes.ErrPermissionDenied):
			continue
		case err != nil:
			b.warnf("could not check that the etcd user may not write outside %q: %v", b.prefix, err)
			return nil
		case cfg.Username == "":
			b.warnf("this client may write the etcd key %q outside its prefix range %q: either the cluster runs without authentication, or the role of the client certificate's user covers sibling prefixes; grant it the range %q (with the trailing slash)", sibling, b.prefix, b.prefix)
			return nil
		}
		return fmt.Errorf("%w: etcd user %q may write the key %q outside its prefix range %q, so deployments whose prefixes start with the same bytes can overwrite each other%s; grant the role the range with the trailing slash: etcdctl role grant-permission ROLE --prefix=true readwrite %s",
			ErrConfig, cfg.Username, sibling, b.prefix, b.grantsCovering(ctx, cfg.Username, sibling), b.prefix)
	}
	return nil
}

// grantsCovering names the user's roles whose permissions cover key, as far as the user may
// read its own roles (etcd lets a user read itself and its roles), or "" when it may not.
func (b *Backend) grantsCovering(ctx context.Context, user, key string) string {
	u, err := b.cli.UserGet(ctx, user)
	if err != nil {
		return ""
	}
	var found []string
	for _, role := range u.Roles {
		r, err := b.cli.RoleGet(ctx, role)
		if err != nil {
			continue
		}
		for _, p := range r.Perm {
			if covers(string(p.Key), string(p.RangeEnd), key) {
				what := fmt.Sprintf("the key %q", p.Key)
				switch {
				case string(p.RangeEnd) == clientv3.GetPrefixRangeEnd(string(p.Key)):
					what = fmt.Sprintf("the prefix %q", p.Key)
				case len(p.RangeEnd) > 0:
					what = fmt.Sprintf("the range [%q, %q)", p.Key, p.RangeEnd)
				}
				found = append(found, fmt.Sprintf("role %q is granted %s", role, what))
			}
		}
	}
	if len(found) == 0 {
		return ""
	}
	return " (" + strings.Join(found, "; ") + ")"
}

// covers reports whether etcd's permission range [from, end) holds key: end "" is the key
// from alone, and end "\x00" every key from on.
func covers(from, end, key string) bool {
	switch end {
	case "":
		return key == from
	case "\x00":
		return key >= from
	}
	return key >= from && key < end
}

// Close ends the use of the backend and its connections; later operations fail with
// storage.ErrBackendClosed.
func (b *Backend) Close() error {
	if b.closed.Swap(true) {
		return nil
	}
	return b.cli.Close()
}

// Prefix returns the key range of the backend: every key it uses starts with it.
func (b *Backend) Prefix() string { return b.prefix }

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
	return b.prefix + "anchor/" + keyPart(key)
}

func (b *Backend) recordKey(key storage.RecordKey) string {
	return b.prefix + "record/" + keyPart(key)
}

// chainKey is the key below which a chained record keeps its base and deltas.
func (b *Backend) chainKey(key storage.RecordKey) string {
	return b.prefix + "chain/" + keyPart(key) + "/"
}

// begin checks the key, that the backend is open and the context, and bounds the operation
// by the backend's deadline.
func (b *Backend) begin(ctx context.Context, key storage.RecordKey) (context.Context, context.CancelFunc, error) {
	if err := key.Validate(); err != nil {
		return nil, nil, err
	}
	if b.closed.Load() {
		return nil, nil, &storage.Error{Kind: storage.ErrBackendClosed}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, &storage.Error{Kind: storage.ErrEtcd, Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, b.deadline)
	return ctx, cancel, nil
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

// failure wraps a client error as storage.ErrEtcd, naming the operator's remedy for the
// errors that have one.
func failure(err error) error {
	switch {
	case errors.Is(err, rpctypes.ErrNoSpace):
		err = fmt.Errorf("%w (the cluster raised its NOSPACE alarm: compact, defragment, then disarm the alarm)", err)
	case errors.Is(err, rpctypes.ErrPermissionDenied):
		err = fmt.Errorf("%w (the etcd user needs read and write permission on the prefix range)", err)
	}
	return &storage.Error{Kind: storage.ErrEtcd, Err: err}
}

// permanent reports whether a client error would recur on a retry.
func permanent(err error) bool {
	switch status.Code(err) {
	case codes.PermissionDenied, codes.Unauthenticated, codes.InvalidArgument, codes.FailedPrecondition,
		codes.ResourceExhausted, codes.OutOfRange, codes.Unimplemented:
		return true
	}
	return errors.Is(err, context.Canceled)
}

// backoff waits before retry attempt n (1, 2, ...): a jittered exponential delay from 5 ms
// to 500 ms. It returns false when ctx ends first.
func backoff(ctx context.Context, n int) bool {
	d := min(5*time.Millisecond<<min(n, 7), 500*time.Millisecond)
	d = d/2 + rand.N(d/2+1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// readTxn runs one etcd transaction with an else branch under the operation timeout and
// checks its header.
func (b *Backend) readTxn(ctx context.Context, cmps []clientv3.Cmp, then, els []clientv3.Op) (*clientv3.TxnResponse, error) {
	opCtx, cancel := context.WithTimeout(ctx, b.opTO)
	defer cancel()
	floor := b.seen()
	resp, err := b.cli.Txn(opCtx).If(cmps...).Then(then...).Else(els...).Commit()
	if err != nil {
		return nil, err
	}
	if err := b.observe(floor, resp.Header.ClusterId, resp.Header.Revision); err != nil {
		return nil, err
	}
	return resp, nil
}

// txn runs one etcd transaction under the operation timeout and checks its header.
func (b *Backend) txn(ctx context.Context, cmps []clientv3.Cmp, ops ...clientv3.Op) (*clientv3.TxnResponse, error) {
	opCtx, cancel := context.WithTimeout(ctx, b.opTO)
	defer cancel()
	floor := b.seen()
	resp, err := b.cli.Txn(opCtx).If(cmps...).Then(ops...).Commit()
	if err != nil {
		return nil, err
	}
	if err := b.observe(floor, resp.Header.ClusterId, resp.Header.Revision); err != nil {
		return nil, err
	}
	return resp, nil
}

// write runs a guarded write transaction. A failure is not retried: its outcome is unknown.
// After a committed write the backend compacts the cluster's history when it is due.
func (b *Backend) write(ctx context.Context, cmps []clientv3.Cmp, ops ...clientv3.Op) (*clientv3.TxnResponse, error) {
	resp, err := b.txn(ctx, cmps, ops...)
	var se *storage.Error
	if errors.As(err, &se) {
		return nil, err
	}
	if err != nil {
		return nil, failure(err)
	}
	if resp.Succeeded && !b.compact.Server {
		b.compactBelow(ctx, resp.Header.Revision)
	}
	return resp, nil
}

// compactBelow compacts the cluster's history below revision - Retain once the cluster keeps
// more than Retain + Every revisions of it, best effort: a failure (a compaction already past
// it, a user without the permission) leaves the history as it is. Whether the history is that
// long is the cluster's answer to a read at revision - Retain - Every (refused as compacted
// when it is not), asked at most once per Every revisions of the cluster in each process.
func (b *Backend) compactBelow(ctx context.Context, revision int64) {
	target := revision - b.compact.Retain
	probe := target - b.compact.Every
	b.mu.Lock()
	due := probe > 0 && (b.checked == 0 || probe >= b.checked+b.compact.Every)
	if due {
		b.checked = probe
	}
	b.mu.Unlock()
	if !due {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, b.opTO)
	defer cancel()
	defer b.checkQuota(ctx)
	if _, err := b.cli.Get(ctx, b.prefix, clientv3.WithRev(probe), clientv3.WithCountOnly()); err != nil {
		return // compacted already (rpctypes.ErrCompacted), or not known now
	}
	_, _ = b.cli.Compact(ctx, target)
}

// state is what one consistent read returns: the anchor and record values (nil = absent),
// their etcd modification revisions (0 = absent), and the anchor decoded.
type state struct {
	anchor, record       []byte
	anchorMod, recordMod int64
	a                    storage.AnchorState
	// chain holds the values under a chained record's chain key, with their names (the
	// keys after it); envelope is the record's envelope once decoded (nil: not yet).
	chainNames  []string
	chainValues [][]byte
	envelope    []byte
}

// envelopeOf returns the envelope of the record in st (nil when there is none): the record
// value's body, or the chain it heads rebuilt. A value that does not decode is
// storage.ErrCorrupt.
func (st *state) envelopeOf() ([]byte, error) {
	if st.record == nil || st.envelope != nil {
		return st.envelope, nil
	}
	if len(st.record) < 8 {
		return nil, &storage.Error{Kind: storage.ErrCorrupt, Err: fmt.Errorf("record holds %d bytes, want at least 8", len(st.record))}
	}
	if len(st.record) > 8 && st.record[8] == bodyChain {
		h, err := decodeHead(st.record)
		if err != nil {
			return nil, err
		}
		env, err := rebuildChain(h, st.chainNames, st.chainValues)
		if err != nil {
			return nil, err
		}
		st.envelope = env
		return env, nil
	}
	env, err := decodeRecordBody(st.record[8:])
	if err != nil {
		return nil, err
	}
	st.envelope = env
	return env, nil
}

// chained reports whether the record in st is a chain, and its head.
func (st *state) chained() (chainHead, bool) {
	if len(st.record) != headBytes || st.record[8] != bodyChain {
		return chainHead{}, false
	}
	h, err := decodeHead(st.record)
	return h, err == nil
}

// read reads key's anchor and record at one etcd revision (a linearizable read), retrying
// an outage with back-off until ctx ends, and checks and raises the witness.
func (b *Backend) read(ctx context.Context, key storage.RecordKey) (state, error) {
	for attempt := 1; ; attempt++ {
		// The chain is read only when the record changed since this process last saw it.
		rem, known := b.peek(key)
		known = known && rem.recordMod != 0 && rem.envelope != nil
		head := []clientv3.Op{clientv3.OpGet(b.anchorKey(key)), clientv3.OpGet(b.recordKey(key))}
		all := append(head[:2:2], clientv3.OpGet(b.chainKey(key), clientv3.WithPrefix()))
		var cmps []clientv3.Cmp
		then, els := all, []clientv3.Op(nil)
		if known {
			cmps = []clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(b.recordKey(key)), "=", rem.recordMod)}
			then, els = head, all
		}
		resp, err := b.readTxn(ctx, cmps, then, els)
		var se *storage.Error
		switch {
		case errors.As(err, &se):
			return state{}, err
		case err != nil:
			if permanent(err) || !backoff(ctx, attempt) {
				return state{}, failure(err)
			}
			continue
		}
		st, err := b.decodeState(key, resp)
		if err != nil {
			return state{}, err
		}
		if known && resp.Succeeded {
			st.envelope = rem.envelope
		}
		if err := b.witness.checkRecord(b.prefix, keyPart(key), st.a); err != nil {
			return state{}, err
		}
		return st, b.witness.raise(b.prefix, resp.Header.ClusterId, resp.Header.Revision, keyPart(key), st.a)
	}
}

// decodeState decodes the answer of a read: the anchor, the record, and the chain when it
// was asked for.
func (b *Backend) decodeState(key storage.RecordKey, resp *clientv3.TxnResponse) (state, error) {
	var st state
	if n := len(resp.Responses); n != 2 && n != 3 {
		return state{}, &storage.Error{Kind: storage.ErrEtcd, Err: fmt.Errorf("read answered %d results, want 2 or 3", len(resp.Responses))}
	}
	if len(resp.Responses) == 3 {
		prefix := b.chainKey(key)
		for _, kv := range resp.Responses[2].GetResponseRange().Kvs {
			st.chainNames = append(st.chainNames, strings.TrimPrefix(string(kv.Key), prefix))
			st.chainValues = append(st.chainValues, kv.Value)
		}
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
	a, err := parseAnchor(st.anchor)
	st.a = a
	return st, err
}

// parseAnchor decodes an anchor value; bytes that do not decode are storage.ErrCorrupt.
func parseAnchor(v []byte) (storage.AnchorState, error) {
	a, err := storage.ParseAnchor(v)
	var se *storage.Error
	if err != nil && !errors.As(err, &se) {
		err = &storage.Error{Kind: storage.ErrCorrupt, Err: fmt.Errorf("anchor: %w", err)}
	}
	return a, err
}

// recordRevision returns the revision of the record in st (nil when absent).
func recordRevision(st state) (*uint64, error) {
	if st.record == nil {
		return nil, nil
	}
	if len(st.record) < 8 {
		return nil, &storage.Error{Kind: storage.ErrCorrupt, Err: fmt.Errorf("record holds %d bytes, want at least 8", len(st.record))}
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
	ctx, cancel, err := b.begin(ctx, key)
	if err != nil {
		return storage.Snapshot{}, err
	}
	defer cancel()
	st, err := b.read(ctx, key)
	if err != nil {
		return storage.Snapshot{}, err
	}
	return snapshotOf(key, &st)
}

// snapshotOf returns what Load returns for the state st of key.
func snapshotOf(key storage.RecordKey, st *state) (storage.Snapshot, error) {
	rev, err := recordRevision(*st)
	if err != nil || rev == nil {
		return storage.Snapshot{RevisionFloor: st.a.Floor}, err
	}
	envelope, err := st.envelopeOf()
	if err != nil {
		return storage.Snapshot{}, err
	}
	rec, err := storage.LoadedRecord(key, *rev, st.a.Floor, st.a.Commitment, envelope)
	if err != nil {
		return storage.Snapshot{}, err
	}
	return storage.Snapshot{Record: rec, RevisionFloor: st.a.Floor}, nil
}

// EstablishFenceAndLoad implements storage.FenceEstablisher: one read of the anchor and the
// record, a guarded write of the anchor only when the fence rises, and the snapshot of that
// read (the write's guard covers the record too, so the record read is still current).
func (b *Backend) EstablishFenceAndLoad(ctx context.Context, key storage.RecordKey, token uint64) (storage.Snapshot, error) {
	ctx, cancel, err := b.begin(ctx, key)
	if err != nil {
		return storage.Snapshot{}, err
	}
	defer cancel()
	if token == 0 {
		return storage.Snapshot{}, &storage.Error{Kind: storage.ErrInvalidFencingToken}
	}
	for attempt := 1; ; attempt++ {
		st, err := b.read(ctx, key)
		if err != nil {
			return storage.Snapshot{}, err
		}
		fence, err := storage.CheckEstablish(st.a.Fence, token)
		if err != nil {
			return storage.Snapshot{}, err
		}
		if fence != st.a.Fence {
			a := st.a
			a.Fence = fence
			anchor := storage.AppendAnchor(nil, a)
			resp, err := b.write(ctx, b.unchanged(key, st), clientv3.OpPut(b.anchorKey(key), string(anchor)))
			if err != nil {
				return storage.Snapshot{}, err
			}
			if !resp.Succeeded {
				if err := b.retry(ctx, attempt); err != nil {
					return storage.Snapshot{}, err
				}
				continue
			}
			if err := b.witness.raise(b.prefix, resp.Header.ClusterId, resp.Header.Revision, keyPart(key), a); err != nil {
				return storage.Snapshot{}, err
			}
			st.a, st.anchor, st.anchorMod = a, anchor, resp.Header.Revision
		}
		snap, err := snapshotOf(key, &st)
		if err == nil {
			b.remember(key, st)
		}
		return snap, err
	}
}

// remember keeps st as the state of key this process saw last.
func (b *Backend) remember(key storage.RecordKey, st state) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.last == nil {
		b.last = make(map[string]state)
	}
	b.last[keyPart(key)] = st
}

// RememberedSnapshot implements storage.StateRememberer: the snapshot of the state of key
// this process last read or wrote, when its fence was token.
func (b *Backend) RememberedSnapshot(key storage.RecordKey, token uint64) (storage.Snapshot, bool) {
	if b.closed.Load() {
		return storage.Snapshot{}, false
	}
	st, ok := b.peek(key)
	if !ok || st.a.Fence != token || (st.record != nil && st.envelope == nil) {
		return storage.Snapshot{}, false
	}
	snap, err := snapshotOf(key, &st)
	if err != nil {
		return storage.Snapshot{}, false
	}
	return snap, true
}

// peek returns the state of key this process saw last.
func (b *Backend) peek(key storage.RecordKey) (state, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st, ok := b.last[keyPart(key)]
	return st, ok
}

// CompareAndSwap implements storage.Backend.CompareAndSwap as one guarded transaction.
func (b *Backend) CompareAndSwap(ctx context.Context, key storage.RecordKey, expected *uint64, replacement storage.StoredRecord) (storage.CASOutcome, error) {
	return b.swap(ctx, key, expected, replacement, false, 0, false)
}

// CompareAndSwapFenced implements storage.Backend.CompareAndSwapFenced: the fence is checked
// against the anchor the guarded transaction compares, so the check and the swap commit
// together.
func (b *Backend) CompareAndSwapFenced(ctx context.Context, key storage.RecordKey, expected *uint64, replacement storage.StoredRecord, token uint64) (storage.CASOutcome, error) {
	return b.swap(ctx, key, expected, replacement, true, token, false)
}

// CompareAndSwapFencedKeeping implements storage.RecordKeeper: CompareAndSwapFenced that
// remembers replacement.Bytes as the record's envelope instead of a copy.
func (b *Backend) CompareAndSwapFencedKeeping(ctx context.Context, key storage.RecordKey, expected *uint64, replacement storage.StoredRecord, token uint64) (storage.CASOutcome, error) {
	return b.swap(ctx, key, expected, replacement, true, token, true)
}

func (b *Backend) swap(ctx context.Context, key storage.RecordKey, expected *uint64, replacement storage.StoredRecord, fenced bool, token uint64, keep bool) (storage.CASOutcome, error) {
	ctx, cancel, err := b.begin(ctx, key)
	if err != nil {
		return storage.CASOutcome{}, err
	}
	defer cancel()
	if fenced && token == 0 {
		return storage.CASOutcome{}, &storage.Error{Kind: storage.ErrInvalidFencingToken}
	}
	for attempt := 1; ; attempt++ {
		// The first attempt may start from the state this process saw last; only a write
		// guarded by it is decided on it: any other outcome is decided on a fresh read.
		st, remembered := b.peek(key)
		remembered = remembered && attempt == 1
		if !remembered {
			if st, err = b.read(ctx, key); err != nil {
				return storage.CASOutcome{}, err
			}
		}
		conflict, revision, err := planSwap(&st, fenced, token, expected, replacement)
		if remembered && (err != nil || revision == 0) {
			continue
		}
		if err != nil || revision == 0 {
			return conflict, err
		}
		commitment := storage.RecordCommitment(key, revision, replacement.Bytes)
		next := storage.AnchorState{Floor: revision, Fence: st.a.Fence, Commitment: &commitment}
		anchor := storage.AppendAnchor(nil, next)
		record, ops := b.recordWrite(key, &st, revision, replacement.Bytes)
		resp, err := b.write(ctx, b.unchanged(key, st), append(ops, clientv3.OpPut(b.anchorKey(key), string(anchor)))...)
		if err != nil {
			return storage.CASOutcome{}, err
		}
		if resp.Succeeded {
			rev := resp.Header.Revision
			envelope := replacement.Bytes
			if !keep {
				envelope = bytes.Clone(envelope)
			}
			b.remember(key, state{anchor: anchor, record: record, anchorMod: rev, recordMod: rev, a: next, envelope: envelope})
			return storage.CASOutcome{Stored: true, RevisionFloor: revision}, b.witness.raise(b.prefix, resp.Header.ClusterId, rev, keyPart(key), next)
		}
		if remembered && attempt == 1 {
			continue // the remembered state was not current: read it
		}
		// Another writer changed a key between the read and the guard: decide again.
		if err := b.retry(ctx, attempt); err != nil {
			return storage.CASOutcome{}, err
		}
	}
}

// recordWrite returns the record value and the operations that write envelope as revision of
// key over the state st: one more delta of its chain, or a new base.
func (b *Backend) recordWrite(key storage.RecordKey, st *state, revision uint64, envelope []byte) ([]byte, []clientv3.Op) {
	chain := b.chainKey(key)
	if h, ok := st.chained(); ok && h.n < maxChain {
		if prev, err := st.envelopeOf(); err == nil && prev != nil {
			d, small := delta.Append(binary.BigEndian.AppendUint32(nil, uint32(len(envelope))), prev, envelope)
			deltas := h.deltaSz + len(d)
			if small && h.baseBytes+deltas <= storage.MaxRecordBytes && deltas <= max(h.baseBytes, chainFloor) {
				head := encodeHead(chainHead{revision: revision, n: h.n + 1, size: len(envelope), baseBytes: h.baseBytes, deltaSz: h.deltaSz + len(d)})
				return head, []clientv3.Op{
					clientv3.OpPut(b.recordKey(key), string(head)),
					clientv3.OpPut(chain+deltaName(h.n+1), string(d)),
				}
			}
		}
	}
	base := encodeBody(envelope)
	head := encodeHead(chainHead{revision: revision, size: len(envelope), baseBytes: len(base)})
	return head, []clientv3.Op{
		clientv3.OpPut(b.recordKey(key), string(head)),
		clientv3.OpPut(chain+"b", string(base)),
		clientv3.OpDelete(chain+"d", clientv3.WithRange(chain+"e")),
	}
}

// planSwap applies storage.PlanSwap to the state st, refusing to write over a record whose
// value does not decode.
func planSwap(st *state, fenced bool, token uint64, expected *uint64, replacement storage.StoredRecord) (storage.CASOutcome, uint64, error) {
	actual, err := recordRevision(*st)
	if err != nil {
		return storage.CASOutcome{}, 0, err
	}
	if actual != nil {
		if _, err := st.envelopeOf(); err != nil {
			return storage.CASOutcome{}, 0, err
		}
	}
	return storage.PlanSwap(st.a.Fence, fenced, token, actual, st.a.Floor, expected, replacement)
}

// retry backs off before another attempt after a lost guard, or fails when the backend was
// closed or the operation's deadline passed.
func (b *Backend) retry(ctx context.Context, attempt int) error {
	if b.closed.Load() {
		return &storage.Error{Kind: storage.ErrBackendClosed}
	}
	if !backoff(ctx, attempt) {
		return &storage.Error{Kind: storage.ErrEtcd, Err: fmt.Errorf("guarded write lost to other writers %d times: %w", attempt, ctx.Err())}
	}
	return nil
}

// CurrentFence implements storage.Backend.CurrentFence.
func (b *Backend) CurrentFence(ctx context.Context, key storage.RecordKey) (uint64, error) {
	a, err := b.LoadAnchor(ctx, key)
	return a.Fence, err
}

// updateFence applies next to the anchor's fence in a guarded transaction, retrying when
// the anchor changed between the read and the guard. next returns the new fence, or the
// current one to leave the anchor as it is.
func (b *Backend) updateFence(ctx context.Context, key storage.RecordKey, next func(current uint64) (uint64, error)) (uint64, error) {
	ctx, cancel, err := b.begin(ctx, key)
	if err != nil {
		return 0, err
	}
	defer cancel()
	for attempt := 1; ; attempt++ {
		st, err := b.read(ctx, key)
		if err != nil {
			return 0, err
		}
		fence, err := next(st.a.Fence)
		if err != nil || fence == st.a.Fence {
			return fence, err
		}
		a := st.a
		a.Fence = fence
		resp, err := b.write(ctx, b.unchanged(key, st)[:1], clientv3.OpPut(b.anchorKey(key), string(storage.AppendAnchor(nil, a))))
		if err != nil {
			return 0, err
		}
		if resp.Succeeded {
			return fence, b.witness.raise(b.prefix, resp.Header.ClusterId, resp.Header.Revision, keyPart(key), a)
		}
		if err := b.retry(ctx, attempt); err != nil {
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
	_, cancel, err := b.begin(ctx, key)
	if err != nil {
		return err
	}
	cancel()
	if token == 0 {
		return &storage.Error{Kind: storage.ErrInvalidFencingToken}
	}
	_, err = b.updateFence(ctx, key, func(current uint64) (uint64, error) { return storage.CheckEstablish(current, token) })
	return err
}

// LoadAnchor implements storage.RollbackAnchor: the anchor state of key alone, so that a
// local file backend can keep its records and anchor them here.
func (b *Backend) LoadAnchor(ctx context.Context, key storage.RecordKey) (storage.AnchorState, error) {
	ctx, cancel, err := b.begin(ctx, key)
	if err != nil {
		return storage.AnchorState{}, err
	}
	defer cancel()
	st, err := b.read(ctx, key)
	return st.a, err
}

// SwapAnchor implements storage.RollbackAnchor in one transaction guarded by the anchor's
// value: expected's encoding, or the key's absence for the zero state (a written anchor always
// has a nonzero fence or floor).
func (b *Backend) SwapAnchor(ctx context.Context, key storage.RecordKey, expected, replacement storage.AnchorState) (bool, error) {
	ctx, cancel, err := b.begin(ctx, key)
	if err != nil {
		return false, err
	}
	defer cancel()
	k := b.anchorKey(key)
	guard := clientv3.Compare(clientv3.CreateRevision(k), "=", 0)
	if expected != (storage.AnchorState{}) {
		guard = clientv3.Compare(clientv3.Value(k), "=", string(storage.AppendAnchor(nil, expected)))
	}
	resp, err := b.write(ctx, []clientv3.Cmp{guard}, clientv3.OpPut(k, string(storage.AppendAnchor(nil, replacement))))
	if err != nil || !resp.Succeeded {
		return false, err
	}
	return true, b.witness.raise(b.prefix, resp.Header.ClusterId, resp.Header.Revision, keyPart(key), replacement)
}
