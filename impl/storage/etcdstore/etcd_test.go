package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/storage/storagetest"
)

func ctxb() context.Context { return context.Background() }

// The etcd backend meets the whole backend contract against a real member.
//
// Spec: STO-020, STO-029, STO-064, STO-065, STO-081
func TestEtcdBackendContract(t *testing.T) {
	needEtcd(t)
	storagetest.Run(t, etcdHarness())
}

// Spec: STO-029, STO-081
func TestLinearizableEtcdBackendGoroutines(t *testing.T) {
	storagetest.RunLinearizable(t, openAt(t, freshPrefix(t)), true)
}

// Clients in three processes (three "machines") share records through etcd; every history
// is linearizable.
//
// Spec: STO-029, STO-061, STO-081
func TestLinearizableEtcdBackendProcesses(t *testing.T) {
	needEtcd(t)
	storagetest.RunLinearizableProcesses(t, openDurable)
}

// A writer process killed at an arbitrary point leaves a complete, verifiable record no
// older than the last acknowledged write.
//
// Spec: STO-060, STO-080
func TestEtcdSurvivesAKilledWriter(t *testing.T) {
	needEtcd(t)
	storagetest.RunKilledWriter(t, openDurable, nil)
}

// A writer superseded on one backend (one machine) cannot write once a newer writer is
// admitted through another backend on the same prefix.
//
// Spec: STO-081
func TestEtcdSupersededWriterOnAnotherClient(t *testing.T) {
	prefix := freshPrefix(t)
	a := storage.NewAuthenticatedStore(openAt(t, prefix), storagetest.Keyring(t))
	b := storage.NewAuthenticatedStore(openAt(t, prefix), storagetest.Keyring(t))
	key := storagetest.TestKey
	ta, err := a.ReserveFence(ctxb(), key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.CompareAndSwapFenced(ctxb(), key, nil, []byte("a1"), ta); err != nil {
		t.Fatal(err)
	}
	tb, err := b.ReserveFence(ctxb(), key)
	if err != nil || tb != ta+1 {
		t.Fatalf("second client reserved %d after %d (%v)", tb, ta, err)
	}
	_, err = a.CompareAndSwapFenced(ctxb(), key, storage.ExpectRevision(1), []byte("a2"), ta)
	storagetest.WantKind(t, err, storage.ErrBackend, storage.ErrFencingTokenRejected)
	if _, err := b.CompareAndSwapFenced(ctxb(), key, storage.ExpectRevision(1), []byte("b2"), tb); err != nil {
		t.Fatal(err)
	}
	storagetest.WantLoaded(t, a, key, 2, "storage-v1", "b2")
}

// An answer from a cluster with a lower revision than one already seen, or from another
// cluster, is refused.
//
// Spec: STO-082
func TestEtcdRefusesARevisionThatGoesBack(t *testing.T) {
	b := openAt(t, freshPrefix(t))
	if _, err := b.ReserveFence(ctxb(), storagetest.TestKey); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	seen, cluster := b.revision, b.cluster
	b.revision = seen + 1_000_000
	b.mu.Unlock()
	_, err := b.Load(ctxb(), storagetest.TestKey)
	storagetest.WantKind(t, err, storage.ErrEtcdRollback)
	if !errors.Is(err, storage.ErrEtcdRollback) {
		t.Fatal("errors.Is")
	}
	b.mu.Lock()
	b.revision, b.cluster = seen, cluster^1
	b.mu.Unlock()
	_, err = b.CurrentFence(ctxb(), storagetest.TestKey)
	storagetest.WantKind(t, err, storage.ErrEtcdRollback)
}

// An unreachable cluster is a typed etcd error within the operation timeout, and the
// configuration never prints its password.
//
// Spec: STO-080, STO-083
func TestEtcdUnavailableAndRedaction(t *testing.T) {
	cfg := Config{Endpoints: []string{"http://127.0.0.1:1"}, Prefix: "/p", Username: "u", Password: "hunter2-secret", DialTimeout: 200e6, OpTimeout: 300e6}
	for _, s := range []string{cfg.String(), fmt.Sprintf("%v %+v %#v %s", cfg, cfg, cfg, cfg)} {
		if strings.Contains(s, "hunter2") {
			t.Fatalf("password printed: %s", s)
		}
	}
	b, err := Open(cfg)
	if err == nil {
		defer b.Close()
		_, err = b.ReserveFence(ctxb(), storagetest.TestKey)
	}
	storagetest.WantKind(t, err, storage.ErrEtcd)
	if strings.Contains(err.Error(), "hunter2") {
		t.Fatal("password in error")
	}
	if _, err := Open(Config{Prefix: "/p"}); !errors.Is(err, storage.ErrEtcd) {
		t.Fatalf("no endpoints: %v", err)
	}
}

func BenchmarkEtcdBackend(b *testing.B) {
	if os.Getenv(endpointEnv) == "" {
		b.Skip("no etcd member")
	}
	storagetest.RunBenchmarks(b, func(t testing.TB) storage.Backend { return openAt(t, freshPrefix(t)) })
}
