package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/storage/etcdstore"
	"github.com/splashv5/conform/impl/storage/etcdstore/etcdstoretest"
	"github.com/splashv5/conform/impl/worker"
	"github.com/splashv5/conform/impl/worker/workertest"
)

// faultyBackend passes every call to a storage.Backend and fails the call numbered failAt
// (counting from 1) with an etcd timeout: before the call reaches the backend, or, when
// afterWrite is set and the call writes, after it did (the outcome a timeout leaves unknown).
type faultyBackend struct {
	storage.Backend
	failAt, calls int
	afterWrite    bool
	failed        string // the call that failed
}

func (f *faultyBackend) fault(name string, write bool, do func() error) error {
	f.calls++
	if f.calls != f.failAt {
		return do()
	}
	f.failed = name
	if write && f.afterWrite {
		_ = do()
	}
	return &storage.Error{Kind: storage.ErrEtcd, Err: context.DeadlineExceeded}
}

func (f *faultyBackend) Load(ctx context.Context, key storage.RecordKey) (s storage.Snapshot, err error) {
	err = f.fault("Load "+key.Namespace, false, func() error { s, err = f.Backend.Load(ctx, key); return err })
	return s, err
}

func (f *faultyBackend) CompareAndSwap(ctx context.Context, key storage.RecordKey, expected *uint64, r storage.StoredRecord) (o storage.CASOutcome, err error) {
	err = f.fault("CompareAndSwap "+key.Namespace, true, func() error { o, err = f.Backend.CompareAndSwap(ctx, key, expected, r); return err })
	return o, err
}

func (f *faultyBackend) CompareAndSwapFenced(ctx context.Context, key storage.RecordKey, expected *uint64, r storage.StoredRecord, token uint64) (o storage.CASOutcome, err error) {
	err = f.fault("CompareAndSwapFenced "+key.Namespace, true, func() error {
		o, err = f.Backend.CompareAndSwapFenced(ctx, key, expected, r, token)
		return err
	})
	return o, err
}

func (f *faultyBackend) CurrentFence(ctx context.Context, key storage.RecordKey) (t uint64, err error) {
	err = f.fault("CurrentFence "+key.Namespace, false, func() error { t, err = f.Backend.CurrentFence(ctx, key); return err })
	return t, err
}

func (f *faultyBackend) ReserveFence(ctx context.Context, key storage.RecordKey) (t uint64, err error) {
	err = f.fault("ReserveFence "+key.Namespace, true, func() error { t, err = f.Backend.ReserveFence(ctx, key); return err })
	return t, err
}

func (f *faultyBackend) EstablishFence(ctx context.Context, key storage.RecordKey, token uint64) error {
	return f.fault("EstablishFence "+key.Namespace, true, func() error { return f.Backend.EstablishFence(ctx, key, token) })
}

// serveOnce runs one worker session in process, composed as the worker process composes it
// (authenticated store, journal store, store admission, the profile's adapters), on backend:
// open, one durable dispatch of op, then the end of input. It returns the session's output and
// error.
func serveOnce(t *testing.T, backend storage.Backend, session, op string) ([]byte, error) {
	t.Helper()
	host := mustHost(t, session)
	auth, err := host.WorkerAuthenticator(canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	defer auth.Close()
	ring, err := storage.NewKeyring("test-only", storage.NewKey([32]byte{1}))
	if err != nil {
		t.Fatal(err)
	}
	store := storage.NewAuthenticatedStore(backend, ring)
	journal, err := worker.NewStorageJournalStore(store, "splash-worker-journal", "conformance", canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	admission, err := worker.NewStoreAdmission(store, journal, "splash-worker-admission")
	if err != nil {
		t.Fatal(err)
	}
	registry := worker.NewRegistry()
	if err := profile.Register(registry, profile.Options{Effects: profile.NewEffectLog(nil, nil)}); err != nil {
		t.Fatal(err)
	}
	var in bytes.Buffer
	for _, m := range []protocol.Message{host.OpenSession(grant(recordTool, 4, 0)), host.Dispatch("d", recordTool, op, workertest.Record("succeed", `"v"`))} {
		in.Write(host.Seal(m))
		in.WriteByte('\n')
	}
	var out bytes.Buffer
	err = worker.Serve(context.Background(), worker.ServeConfig{
		Auth: auth, Lines: worker.NewFrameReader(&in), Output: &out,
		Store: journal, Registry: registry, Admission: admission,
	})
	return out.Bytes(), err
}

// Every storage call of a session, from the journal load through admission (its record's
// load and swap, the fence reservation) to the dispatch's two persists, fails in turn with an
// etcd timeout, before or after the call took effect: the session always ends with status 7
// (persistence), never 5 (rejected), and answers nothing. A fresh session afterwards completes
// another operation on the same journal.
//
// Spec: WRK-092, STO-080
func TestEveryStorageFailureIsPersistence(t *testing.T) {
	if _, err := etcdstoretest.Binary(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	c, err := etcdstoretest.Start(t.TempDir(), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	seen := map[string]bool{}
	for _, after := range []bool{false, true} {
		for k := 1; ; k++ {
			prefix := fmt.Sprintf("/splash/faults/%t/%d", after, k)
			b, err := etcdstore.Open(etcdstore.Config{Endpoints: c.Endpoints(), Prefix: prefix})
			if err != nil {
				t.Fatal(err)
			}
			f := &faultyBackend{Backend: b, failAt: k, afterWrite: after}
			out, err := serveOnce(t, f, fmt.Sprintf("s-%t-%d", after, k), "op-1")
			if f.failed == "" {
				// Past the last storage call: the session completed.
				if worker.ExitCode(err) != worker.ExitClean || len(out) == 0 {
					t.Fatalf("unfaulted session: %v, output %q", err, out)
				}
				if k < 6 {
					t.Fatalf("only %d storage calls in a session with a durable dispatch", k-1)
				}
				b.Close()
				break
			}
			seen[f.failed] = true
			if code := worker.ExitCode(err); code != worker.ExitPersistence || len(out) != 0 {
				t.Fatalf("call %d (%s, after=%t) failed: exit %d (%v), output %q; want 7 and no answer", k, f.failed, after, code, err, out)
			}
			if !errors.Is(err, storage.ErrEtcd) {
				t.Fatalf("call %d (%s): the storage failure is lost from %v", k, f.failed, err)
			}
			// Recovery: a fresh session on the same journal completes the operation.
			if out, err := serveOnce(t, b, fmt.Sprintf("r-%t-%d", after, k), "op-2"); worker.ExitCode(err) != worker.ExitClean || len(out) == 0 {
				t.Fatalf("after the fault at call %d (%s): %v, output %q", k, f.failed, err, out)
			}
			b.Close()
		}
	}
	t.Logf("faults injected at %v", seen)
	for _, call := range []string{"Load splash-worker-journal", "Load splash-worker-admission", "CompareAndSwap splash-worker-admission",
		"ReserveFence splash-worker-journal", "CompareAndSwapFenced splash-worker-journal"} {
		if !seen[call] {
			t.Errorf("no fault injected at %s (saw %v)", call, seen)
		}
	}
}
