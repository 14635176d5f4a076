package etcdstore

import (
	"context"
	"crypto/tls"
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

// An unreachable cluster is a typed etcd error within the dial timeout; unsafe or incomplete
// configurations are refused before anything is sent; the configuration never prints its
// password.
//
// Spec: STO-080, STO-083, STO-089
func TestEtcdUnavailableAndRedaction(t *testing.T) {
	_, err := Open(Config{Endpoints: []string{"http://127.0.0.1:1"}, Prefix: "/p", DialTimeout: 200e6, OpTimeout: 300e6})
	storagetest.WantKind(t, err, storage.ErrEtcd)
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	refused := []struct {
		cfg  Config
		want string
	}{
		{Config{Prefix: "/p"}, "needs endpoints and a key prefix"},
		{Config{Endpoints: []string{"http://127.0.0.1:1"}, Prefix: "/"}, "needs endpoints and a key prefix"},
		{Config{Endpoints: []string{"http://127.0.0.1:1"}, Prefix: "/a//b"}, "empty segment"},
		{Config{Endpoints: []string{"127.0.0.1:1"}, Prefix: "/p"}, "is not http://HOST:PORT"},
		{Config{Endpoints: []string{"http://127.0.0.1:1"}, Prefix: "/p", Username: "u", Password: "hunter2-secret"}, "never sent over plain http"},
		{Config{Endpoints: []string{"https://127.0.0.1:1"}, Prefix: "/p"}, "is https but no TLS"},
		{Config{Endpoints: []string{"http://127.0.0.1:1"}, Prefix: "/p", TLS: tlsCfg}, "is plain http"},
		{Config{Endpoints: []string{"http://127.0.0.1:1"}, Prefix: "/p", Password: "hunter2-secret"}, "password without a username"},
	}
	for _, c := range refused {
		for _, s := range []string{c.cfg.String(), fmt.Sprintf("%v %+v %#v %s", c.cfg, c.cfg, c.cfg, c.cfg)} {
			if strings.Contains(s, "hunter2") {
				t.Fatalf("password printed: %s", s)
			}
		}
		_, err := Open(c.cfg)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "hunter2") {
			t.Fatalf("%v: %v, want ErrConfig with %q", c.cfg, err, c.want)
		}
	}
}

func BenchmarkEtcdBackend(b *testing.B) {
	if os.Getenv(endpointEnv) == "" {
		b.Skip("no etcd member")
	}
	storagetest.RunBenchmarks(b, func(t testing.TB) storage.Backend { return openAt(t, freshPrefix(t)) })
}
