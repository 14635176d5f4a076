package etcdstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/storage/storagetest"
)

// A stored value that does not decode is corruption, not an outage: every read and write of
// the record fails with storage.ErrCorrupt (never ErrEtcd), and nothing is overwritten.
//
// Spec: STO-086
func TestEtcdCorruptValuesFailClosed(t *testing.T) {
	key := storagetest.TestKey
	deflated := encodeRecord(1, bytes.Repeat([]byte("{}"), 100))
	if deflated[8] != bodyDeflate {
		t.Fatalf("a compressible envelope is stored with format %d", deflated[8])
	}
	cases := []struct {
		name          string
		anchor, value []byte // nil = leave as written
	}{
		{"anchor of 5 bytes", []byte("short"), nil},
		{"record of 3 bytes", nil, []byte{0, 0, 1}},
		{"record body of unknown format", nil, append(binary.BigEndian.AppendUint64(nil, 1), 0x02, 'x')},
		{"record body that does not inflate", nil, append(binary.BigEndian.AppendUint64(nil, 1), bodyDeflate, 0xff, 0xff, 0xff)},
		{"deflated record cut short", nil, deflated[:len(deflated)-4]},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := openAt(t, freshPrefix(t))
			s := storage.NewAuthenticatedStore(b, storagetest.Keyring(t))
			if _, err := s.CompareAndSwap(ctxb(), key, nil, []byte(`{"a":1}`)); err != nil {
				t.Fatal(err)
			}
			if c.anchor != nil {
				put(t, b, b.anchorKey(key), c.anchor)
			}
			if c.value != nil {
				put(t, b, b.recordKey(key), c.value)
			}
			_, err := s.Load(ctxb(), key)
			storagetest.WantKind(t, err, storage.ErrBackend, storage.ErrCorrupt)
			if errors.Is(err, storage.ErrEtcd) {
				t.Fatalf("corruption reported as an outage: %v", err)
			}
			_, err = b.CompareAndSwap(ctxb(), key, storage.ExpectRevision(1), storage.StoredRecord{Revision: 2, Bytes: []byte("x")})
			storagetest.WantKind(t, err, storage.ErrCorrupt)
			if c.anchor != nil {
				_, err = b.ReserveFence(ctxb(), key)
				storagetest.WantKind(t, err, storage.ErrCorrupt)
			}
			if c.value != nil && !bytes.Equal(rawValue(t, b, b.recordKey(key)), c.value) {
				t.Fatal("a write replaced the corrupt record")
			}
		})
	}
}

// Records are stored compressed when that is shorter, raw otherwise, and the form earlier
// versions wrote (the envelope right after the revision) still loads.
//
// Spec: STO-064
func TestEtcdRecordFormats(t *testing.T) {
	envelope := []byte(`{"format_version":1,"payload":"` + strings.Repeat("QUJD", 500) + `"}`)
	v := encodeRecord(7, envelope)
	if v[8] != bodyDeflate || len(v) >= len(envelope)/4 {
		t.Fatalf("compressible envelope of %d bytes stored in %d bytes, format %d", len(envelope), len(v), v[8])
	}
	random := make([]byte, 256)
	for i := range random {
		random[i] = byte(i*151 + i*i*7)
	}
	if r := encodeRecord(7, random); r[8] != bodyRaw || !bytes.Equal(r[9:], random) {
		t.Fatalf("incompressible envelope stored as format %d", r[8])
	}
	for _, body := range [][]byte{v[8:], encodeRecord(7, random)[8:], envelope, nil} {
		got, err := decodeRecordBody(body)
		want := envelope
		switch {
		case body == nil:
			want = nil
		case len(body) == len(random)+1:
			want = random
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("body %.12q decodes to %.12q (%v)", body, got, err)
		}
	}
	// Inflating stops one byte past the record limit.
	big := encodeRecord(1, bytes.Repeat([]byte{'{'}, storage.MaxRecordBytes+100))
	_, err := decodeRecordBody(big[8:])
	storagetest.WantKind(t, err, storage.ErrStoredRecordTooLarge)
}

// witnessAt opens a backend on prefix with the witness file at path.
func witnessAt(t *testing.T, prefix, path string) (*Backend, error) {
	t.Helper()
	needEtcd(t)
	w, err := OpenWitness(path)
	if err != nil {
		return nil, err
	}
	b, err := Open(Config{Endpoints: []string{os.Getenv(endpointEnv)}, Prefix: prefix, Witness: w})
	if err == nil {
		t.Cleanup(func() { _ = b.Close() })
	}
	return b, err
}

// The witness outlives the backend: a later backend on the same machine refuses a record
// whose fence or floor went back, another cluster id and a lower revision, all as
// storage.ErrBelowWitness; the operator's acceptance moves it on, and is refused when the
// cluster changed after the comparison.
//
// Spec: STO-087
func TestEtcdWitnessRefusesWhatWentBack(t *testing.T) {
	prefix := freshPrefix(t)
	path := filepath.Join(t.TempDir(), "witness.json")
	key := storagetest.TestKey
	b, err := witnessAt(t, prefix, path)
	if err != nil {
		t.Fatal(err)
	}
	s := storage.NewAuthenticatedStore(b, storagetest.Keyring(t))
	token, err := s.ReserveFence(ctxb(), key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CompareAndSwapFenced(ctxb(), key, nil, []byte("one"), token); err != nil {
		t.Fatal(err)
	}
	oldAnchor := rawValue(t, b, b.anchorKey(key))
	oldRecord := rawValue(t, b, b.recordKey(key))
	if _, err := s.CompareAndSwapFenced(ctxb(), key, storage.ExpectRevision(1), []byte("two"), token); err != nil {
		t.Fatal(err)
	}
	b.Close()

	// A fresh backend (a fresh worker process) reads the record as it was before the last
	// write, though the cluster's revision only went up.
	put(t, b2(t, prefix), b.anchorKey(key), oldAnchor)
	put(t, b2(t, prefix), b.recordKey(key), oldRecord)
	fresh, err := witnessAt(t, prefix, path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = fresh.Load(ctxb(), key)
	storagetest.WantKind(t, err, storage.ErrBelowWitness)
	_, err = fresh.ReserveFence(ctxb(), key)
	storagetest.WantKind(t, err, storage.ErrBelowWitness)
	if !strings.Contains(err.Error(), "floor 2") || !strings.Contains(err.Error(), "etcd-witness accept") {
		t.Fatalf("refusal does not say what went back or what to do: %v", err)
	}

	// Another cluster id, and a lower revision, are refused at open.
	w, err := OpenWitness(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.update(func(wf *witnessFile) { wf.Prefixes[fresh.prefix].ClusterID = "1234" }); err != nil {
		t.Fatal(err)
	}
	_, err = witnessAt(t, prefix, path)
	storagetest.WantKind(t, err, storage.ErrBelowWitness)
	if err := w.update(func(wf *witnessFile) {
		wf.Prefixes[fresh.prefix].ClusterID = strconv.FormatUint(fresh.cluster, 16)
		wf.Prefixes[fresh.prefix].Revision = 1 << 40
	}); err != nil {
		t.Fatal(err)
	}
	_, err = witnessAt(t, prefix, path)
	storagetest.WantKind(t, err, storage.ErrBelowWitness)

	// The operator compares, then accepts: the witness now holds the cluster as it is.
	plain := b2(t, prefix)
	r, err := plain.CompareWitness(ctxb(), w)
	if err != nil || !r.Below() || len(r.Records) != 1 || r.Records[0].Witnessed.Floor != 2 || r.Records[0].Current.Floor != 1 {
		t.Fatalf("comparison %+v (%v)", r, err)
	}
	// The cluster moves between comparison and acceptance: refused.
	if _, err := plain.ReserveFence(ctxb(), key); err != nil {
		t.Fatal(err)
	}
	if err := plain.AcceptWitness(ctxb(), w, r); !errors.Is(err, ErrClusterMoved) {
		t.Fatalf("accept after a change: %v", err)
	}
	if r, err = plain.CompareWitness(ctxb(), w); err != nil {
		t.Fatal(err)
	}
	if err := plain.AcceptWitness(ctxb(), w, r); err != nil {
		t.Fatal(err)
	}
	again, err := witnessAt(t, prefix, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := storage.NewAuthenticatedStore(again, storagetest.Keyring(t)).Load(ctxb(), key); err != nil {
		t.Fatal(err)
	}
}

// A witness file that does not decode is corruption.
//
// Spec: STO-087
func TestEtcdWitnessFileCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "witness.json")
	for _, content := range []string{"{", `{"format":2,"prefixes":{}}`, `{"format":1,"prefixes":{"/p/":{"cluster_id":"zz","revision":1,"records":{}}}}`, `{"format":1,"extra":1}`} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := OpenWitness(path)
		storagetest.WantKind(t, err, storage.ErrCorrupt)
	}
}

// b2 opens a backend on prefix without a witness.
func b2(t *testing.T, prefix string) *Backend { return openAt(t, prefix) }

// rawValue reads one etcd key's value, bypassing the backend.
func rawValue(t *testing.T, b *Backend, k string) []byte {
	t.Helper()
	resp, err := b.cli.Get(ctxb(), k)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("get %s: %v", k, err)
	}
	return resp.Kvs[0].Value
}

// The backend compacts the cluster's history below its latest revision minus Retain once the
// cluster keeps more than Retain + Every revisions, and never when the cluster compacts itself.
//
// Spec: STO-088
func TestEtcdCompactsItsHistory(t *testing.T) {
	needEtcd(t)
	for _, server := range []bool{false, true} {
		b, err := Open(Config{Endpoints: []string{os.Getenv(endpointEnv)}, Prefix: freshPrefix(t),
			Compaction: Compaction{Server: server, Retain: 5, Every: 3}})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		first := b.seen() + 1
		for range 12 {
			if _, err := b.ReserveFence(ctxb(), storagetest.TestKey); err != nil {
				t.Fatal(err)
			}
		}
		_, err = b.cli.Get(ctxb(), b.prefix, clientv3.WithRev(first))
		if compacted := errors.Is(err, rpctypes.ErrCompacted); compacted == server {
			t.Fatalf("server compaction %t: reading revision %d: %v", server, first, err)
		}
	}
}

// Backends that each write twice and close, as workers serving one session do, still bound
// the cluster's history: the decision to compact comes from the cluster's revisions, not from
// a count of one process's writes (which never reached Every).
//
// Spec: STO-088
func TestEtcdShortLivedBackendsCompact(t *testing.T) {
	needEtcd(t)
	prefix := freshPrefix(t)
	cfg := Config{Endpoints: []string{os.Getenv(endpointEnv)}, Prefix: prefix, Compaction: Compaction{Retain: 5, Every: 3}}
	var first, last int64
	for i := range 20 {
		b, err := Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := b.ReserveFence(ctxb(), storagetest.TestKey); err != nil {
				t.Fatal(err)
			}
		}
		if i == 0 {
			first = b.seen()
		}
		last = b.seen()
		b.Close()
	}
	b := openAt(t, prefix)
	if _, err := b.cli.Get(ctxb(), b.prefix, clientv3.WithRev(first)); !errors.Is(err, rpctypes.ErrCompacted) {
		t.Fatalf("40 writes by 20 backends (revisions %d to %d): revision %d is still kept (%v); the history must be compacted to within Retain + 2 Every revisions of the last write",
			first, last, first, err)
	}
	// The history kept is bounded: Retain + 2 Every revisions at most before the last write.
	if _, err := b.cli.Get(ctxb(), b.prefix, clientv3.WithRev(last-5-2*3-1)); !errors.Is(err, rpctypes.ErrCompacted) {
		t.Fatalf("revision %d, %d before the last write, is still kept: %v", last-12, 12, err)
	}
}
