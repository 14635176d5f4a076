package etcdstore

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/storage/boltstore"
	"github.com/splashv5/conform/impl/storage/etcdstore/etcdstoretest"
	"github.com/splashv5/conform/impl/storage/storagetest"
)

// endpointEnv carries the test member's client URL to child processes.
const endpointEnv = "SPLASH_ETCD_TEST_ENDPOINT"

// missing is set when etcd is absent outside CI: every test that needs it skips.
var missing error

// TestMain starts one etcd member for the package's tests (child processes of the
// process-level tests reuse the parent's member) and stops it at the end. Without etcd the
// tests fail when CI is set and skip otherwise.
func TestMain(m *testing.M) {
	if storagetest.IsChild() {
		storagetest.Main(m, openDurable)
	}
	if os.Getenv(witnessChildEnv) != "" {
		os.Exit(witnessChildMain())
	}
	dir, err := os.MkdirTemp("", "etcdstore-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	c, err := etcdstoretest.Start(dir, 1)
	if err != nil {
		if os.Getenv("CI") != "" {
			fmt.Fprintf(os.Stderr, "etcdstore tests need a real etcd member: %v\n", err)
			os.Exit(1)
		}
		missing = err
	} else {
		os.Setenv(endpointEnv, c.Members[0].ClientURL)
	}
	code := m.Run()
	if c != nil {
		c.Stop()
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// needEtcd skips t when etcd is absent (outside CI; in CI TestMain already failed).
func needEtcd(t testing.TB) {
	t.Helper()
	if missing != nil {
		t.Skipf("skipping: %v", missing)
	}
}

// prefixes hands out a fresh key prefix per backend, so that tests sharing the member
// never see each other's keys.
var prefixes atomic.Int64

func freshPrefix(t testing.TB) string {
	return fmt.Sprintf("/splash-test/%d/%s/%d", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "_"), prefixes.Add(1))
}

// openAt opens a backend on the test member under prefix, closed when t ends.
func openAt(t testing.TB, prefix string) *Backend {
	t.Helper()
	needEtcd(t)
	b, err := Open(Config{Endpoints: []string{os.Getenv(endpointEnv)}, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// openDurable opens a backend whose key prefix is path: the process-level tests hand every
// process the same path, so they share the records. Variant "anchored" opens the bbolt file at
// path anchored on etcd under that prefix instead.
func openDurable(_ context.Context, path, variant string) (storagetest.Durable, error) {
	b, err := Open(Config{Endpoints: []string{os.Getenv(endpointEnv)}, Prefix: "/splash-test" + path})
	if err != nil || variant != "anchored" {
		return b, err
	}
	a, err := boltstore.OpenAnchored(path, nil, b)
	if err != nil {
		b.Close()
		return nil, err
	}
	return anchoredDurable{a, b}, nil
}

// anchoredDurable closes the anchored file and its etcd anchor together.
type anchoredDurable struct {
	*boltstore.Anchored
	anchor *Backend
}

func (d anchoredDurable) Close() error {
	err := d.Anchored.Close()
	if aerr := d.anchor.Close(); err == nil {
		err = aerr
	}
	return err
}

// put writes raw etcd state, bypassing the backend, the way an operator with etcd access
// (or a faulty restore) could.
func put(t testing.TB, b storage.Backend, k string, v []byte) {
	t.Helper()
	cli := b.(*Backend).cli
	var err error
	if v == nil {
		_, err = cli.Delete(context.Background(), k)
	} else {
		_, err = cli.Put(context.Background(), k, string(v))
	}
	if err != nil {
		t.Fatal(err)
	}
}

func rawAnchor(t testing.TB, b storage.Backend, key storage.RecordKey) storage.AnchorState {
	t.Helper()
	st, err := b.(*Backend).read(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	a, err := storage.ParseAnchor(st.anchor)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func etcdHarness() storagetest.Harness {
	return storagetest.Harness{
		Name: "etcd",
		Open: func(t testing.TB) storage.Backend { return openAt(t, freshPrefix(t)) },
		SetRecord: func(t testing.TB, b storage.Backend, key storage.RecordKey, rec *storage.StoredRecord) {
			if rec == nil {
				put(t, b, b.(*Backend).recordKey(key), nil)
				return
			}
			put(t, b, b.(*Backend).recordKey(key), encodeRecord(rec.Revision, rec.Bytes))
		},
		SetFloor: func(t testing.TB, b storage.Backend, key storage.RecordKey, floor uint64) {
			a := rawAnchor(t, b, key)
			a.Floor, a.Commitment = floor, nil
			if floor != 0 {
				c := [32]byte{0xee}
				if snap, err := b.(*Backend).read(context.Background(), key); err == nil {
					if rev, _ := recordRevision(snap); rev != nil && *rev == floor {
						if envelope, err := snap.envelopeOf(); err == nil {
							c = storage.RecordCommitment(key, floor, envelope)
						}
					}
				}
				a.Commitment = &c
			}
			put(t, b, b.(*Backend).anchorKey(key), storage.AppendAnchor(nil, a))
		},
		SetFence: func(t testing.TB, b storage.Backend, key storage.RecordKey, fence uint64) {
			a := rawAnchor(t, b, key)
			a.Fence = fence
			put(t, b, b.(*Backend).anchorKey(key), storage.AppendAnchor(nil, a))
		},
		OversizeIsBackendError: true,
	}
}
