package etcdstore

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/storage/etcdstore/etcdstoretest"
	"github.com/splashv5/conform/impl/storage/storagetest"
)

// A partition that never heals (the network drops every byte, no connection is closed):
// every operation, reads with their retries and back-off included, fails as an outage
// (storage.ErrEtcd) within the operation deadline, and keeps failing so.
//
// Spec: STO-090, STO-080
func TestEtcdPartitionThatNeverHeals(t *testing.T) {
	needEtcd(t)
	proxy, err := etcdstoretest.NewProxy(strings.TrimPrefix(os.Getenv(endpointEnv), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	const deadline = 800 * time.Millisecond
	b, err := Open(Config{Endpoints: []string{"http://" + proxy.Addr()}, Prefix: freshPrefix(t),
		OpTimeout: 250 * time.Millisecond, Deadline: deadline, KeepAliveTime: 5 * time.Second, KeepAliveTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	key := storagetest.TestKey
	if _, err := b.ReserveFence(ctxb(), key); err != nil {
		t.Fatal(err)
	}
	proxy.Blackhole()
	ops := []struct {
		name string
		do   func() error
	}{
		{"Load", func() error { _, err := b.Load(ctxb(), key); return err }},
		{"ReserveFence", func() error { _, err := b.ReserveFence(ctxb(), key); return err }},
		{"CompareAndSwapFenced", func() error {
			_, err := b.CompareAndSwapFenced(ctxb(), key, nil, storage.StoredRecord{Revision: 1, Bytes: []byte("x")}, 1)
			return err
		}},
	}
	for round := range 2 {
		for _, op := range ops {
			began := time.Now()
			err := op.do()
			took := time.Since(began)
			if !errors.Is(err, storage.ErrEtcd) {
				t.Fatalf("round %d, %s during the partition: %v, want an etcd failure", round, op.name, err)
			}
			if took > deadline+time.Second {
				t.Fatalf("round %d, %s took %s, beyond the deadline of %s", round, op.name, took, deadline)
			}
		}
	}
}

// Keepalive notices a dead connection without an operation timing out on it: with one
// endpoint behind a partition that never heals and another reachable, once a keepalive
// probe went unanswered every operation goes to the reachable member and succeeds well
// within its timeout.
//
// Spec: STO-090
func TestEtcdKeepaliveLeavesADeadConnection(t *testing.T) {
	needEtcd(t)
	direct := os.Getenv(endpointEnv)
	proxy, err := etcdstoretest.NewProxy(strings.TrimPrefix(direct, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	// gRPC sends keepalive probes no more often than every 10 s.
	const keepalive, timeout = 10 * time.Second, time.Second
	b, err := Open(Config{Endpoints: []string{"http://" + proxy.Addr(), direct}, Prefix: freshPrefix(t),
		OpTimeout: 3 * time.Second, KeepAliveTime: keepalive, KeepAliveTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	key := storagetest.TestKey
	for range 4 {
		if _, err := b.ReserveFence(ctxb(), key); err != nil {
			t.Fatal(err)
		}
	}
	proxy.Blackhole()
	time.Sleep(keepalive + timeout + time.Second)
	for i := range 10 {
		began := time.Now()
		if _, err := b.ReserveFence(ctxb(), key); err != nil {
			t.Fatalf("operation %d after the keepalive: %v", i, err)
		}
		if took := time.Since(began); took > time.Second {
			t.Fatalf("operation %d took %s: it waited on the dead connection", i, took)
		}
	}
}
