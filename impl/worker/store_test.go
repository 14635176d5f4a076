package worker_test

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/storage/boltstore"
	"github.com/splashv5/conform/impl/worker"
	"github.com/splashv5/conform/impl/worker/workertest"
)

func authStore(t *testing.T, backend storage.Backend) *storage.AuthenticatedStore {
	t.Helper()
	var k [32]byte
	for i := range k {
		k[i] = 7
	}
	ring, err := storage.NewKeyring("storage-v1", storage.NewKey(k))
	if err != nil {
		t.Fatal(err)
	}
	return storage.NewAuthenticatedStore(backend, ring)
}

// openWith opens a session over the storage journal store with the store admission and
// returns it with its host.
func openWith(t *testing.T, js *worker.StorageJournalStore, adm worker.Admission, session string) (*worker.Session, *workertest.Host, error) {
	t.Helper()
	host, err := workertest.NewHost(session)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(host.Close)
	auth, err := host.WorkerAuthenticator(canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	j, rev, err := js.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	reg := worker.NewRegistry()
	if err := reg.Register(record, &scripted{contract: worker.Reconciliation, dispatch: func(protocol.OperationDispatchRequest) (protocol.OperationStatus, error) {
		return protocol.Succeeded(text("done")), nil
	}}); err != nil {
		t.Fatal(err)
	}
	s, err := worker.Open(context.Background(), auth, host.Seal(host.OpenSession(workertest.Grant(record, protocol.FormatText, 5, 0))),
		worker.Config{Journal: j, Revision: rev, Registry: reg, Admission: adm})
	return s, host, err
}

// Spec: WRK-080, WRK-081, WRK-082
func TestStorageJournalStore(t *testing.T) {
	ctx := context.Background()
	store := authStore(t, storage.NewMemoryBackend())
	if _, err := worker.NewStorageJournalStore(store, "worker-journal", "Bad Scope", canonjson.Preserve); !errors.Is(err, worker.ErrJournalFormat) || !errors.Is(err, protocol.ErrInvalidToken) {
		t.Fatalf("invalid scope: %v", err)
	}
	if _, err := worker.NewStorageJournalStore(store, "Bad Namespace", scope, canonjson.Preserve); !errors.Is(err, worker.ErrStorage) || !errors.Is(err, storage.ErrInvalidNamespace) {
		t.Fatalf("invalid namespace: %v", err)
	}
	js, err := worker.NewStorageJournalStore(store, "worker-journal", scope, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	if js.RecordKey() != (storage.RecordKey{Namespace: "worker-journal", Name: scope}) || js.Scope() != scope {
		t.Fatalf("record key %v", js.RecordKey())
	}
	j, rev, err := js.Load(ctx)
	if err != nil || rev != 0 || j.Len() != 0 || j.Scope() != scope {
		t.Fatalf("absent record: %v rev %d", err, rev)
	}
	// Persist through a real session: revision 0 means "must be absent"; then 1, 2, ...
	adm, err := worker.NewStoreAdmission(store, js, "worker-admission")
	if err != nil {
		t.Fatal(err)
	}
	s, host, err := openWith(t, js, adm, "session-1")
	if err != nil {
		t.Fatal(err)
	}
	line, err := s.Handle(ctx, host.Seal(host.Dispatch("d1", record, "op-1", text("x"))), js)
	if err != nil || host.MustOpen(line) != "operation_result succeeded text:done" {
		t.Fatalf("dispatch: %v", err)
	}
	j, rev, err = js.Load(ctx)
	if err != nil || rev != 2 {
		t.Fatalf("after dispatch: %v rev %d", err, rev)
	}
	rec, ok := j.Operation("op-1")
	if !ok || rec.State.State != protocol.StateSucceeded {
		t.Fatalf("stored record %+v", rec)
	}
	// The stored bytes are exactly the journal's JSON.
	raw, err := store.Load(ctx, js.RecordKey())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := s.Journal().ToJSON()
	if string(raw.Payload) != string(want) {
		t.Fatalf("stored payload %s, want %s", raw.Payload, want)
	}
	// A journal for another scope is refused before anything is written.
	other, _ := journal.New("tenant-b")
	if _, err := js.Persist(ctx, other, rev, s.Lease()); !errors.Is(err, protocol.ErrOperationJournalScopeMismatch) {
		t.Fatalf("foreign scope: %v", err)
	}
	// A stored payload that is not UTF-8 is refused on load.
	bad, err := worker.NewStorageJournalStore(store, "worker-journal", "tenant-c", canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Create(ctx, bad.RecordKey(), []byte{0xff, 0xfe}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := bad.Load(ctx); !errors.Is(err, worker.ErrInvalidJournalEncoding) {
		t.Fatalf("non-UTF-8 journal: %v", err)
	}
	// A journal stored for another scope is refused on load.
	wrong, _ := journal.New("tenant-d")
	data, _ := wrong.ToJSON()
	swapped, _ := worker.NewStorageJournalStore(store, "worker-journal", "tenant-e", canonjson.Preserve)
	if _, err := store.Create(ctx, swapped.RecordKey(), data); err != nil {
		t.Fatal(err)
	}
	if _, _, err := swapped.Load(ctx); !errors.Is(err, protocol.ErrOperationJournalScopeMismatch) {
		t.Fatalf("journal of another scope: %v", err)
	}
}

// Spec: WRK-083, WRK-094, WRK-015
func TestStoreAdmissionFencesAndRefusesReplays(t *testing.T) {
	ctx := context.Background()
	backend, err := boltstore.Open(filepath.Join(t.TempDir(), "j.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer backend.Close()
	store := authStore(t, backend)
	js, err := worker.NewStorageJournalStore(store, "worker-journal", scope, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := worker.NewStoreAdmission(store, js, "worker-journal"); err == nil {
		t.Fatal("admission accepted the journal's own namespace")
	}
	adm, err := worker.NewStoreAdmission(store, js, "worker-admission")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := adm.Admit(ctx, protocol.CapabilityManifest{SessionID: "s-x"}, "tenant-b"); !errors.Is(err, worker.ErrAdmissionScope) {
		t.Fatalf("foreign scope admitted: %v", err)
	}
	old, oldHost, err := openWith(t, js, adm, "session-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Handle(ctx, oldHost.Seal(oldHost.Dispatch("d1", record, "op-1", text("x"))), js); err != nil {
		t.Fatal(err)
	}
	// A replayed session id is refused and does not move the fence.
	fence, _ := js.CurrentFence(ctx)
	if _, _, err := openWith(t, js, adm, "session-1"); !errors.Is(err, worker.ErrAdmission) || !errors.Is(err, worker.ErrReplayedSession) {
		t.Fatalf("replayed session: %v", err)
	}
	if f, _ := js.CurrentFence(ctx); f != fence {
		t.Fatalf("replay moved the fence from %d to %d", fence, f)
	}
	// A new session gets a strictly greater, reserved lease; from then on the old lease is fenced.
	fresh, freshHost, err := openWith(t, js, adm, "session-2")
	if err != nil {
		t.Fatal(err)
	}
	if fresh.Lease().Token() <= old.Lease().Token() {
		t.Fatalf("new lease %d not above old %d", fresh.Lease().Token(), old.Lease().Token())
	}
	if f, _ := js.CurrentFence(ctx); f != fresh.Lease().Token() {
		t.Fatalf("current fence %d, new lease %d", f, fresh.Lease().Token())
	}
	_, err = old.Handle(ctx, oldHost.Seal(oldHost.Dispatch("d2", record, "op-2", text("x"))), js)
	if !errors.Is(err, worker.ErrJournal) || !errors.Is(err, storage.ErrFencingTokenRejected) || !old.Poisoned() {
		t.Fatalf("stale lease wrote: %v", err)
	}
	if _, err := fresh.Handle(ctx, freshHost.Seal(freshHost.Dispatch("d1", record, "op-2", text("x"))), js); err != nil {
		t.Fatalf("new lease: %v", err)
	}
	// The admission list is bounded (checked on the memory backend, which does not sync).
	store = authStore(t, storage.NewMemoryBackend())
	js, _ = worker.NewStorageJournalStore(store, "worker-journal", scope, canonjson.Preserve)
	adm, _ = worker.NewStoreAdmission(store, js, "worker-admission")
	for i := 3; i < worker.MaxAdmittedSessionIDs+10; i++ {
		if _, err := adm.Admit(ctx, protocol.CapabilityManifest{SessionID: "s-" + strconv.Itoa(i)}, scope); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := store.Load(ctx, storage.RecordKey{Namespace: "worker-admission", Name: scope})
	if err != nil {
		t.Fatal(err)
	}
	v, err := canonjson.ParseValue(rec.Payload, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := v.Get("admitted")
	if n := len(ids.Elems()); n != worker.MaxAdmittedSessionIDs {
		t.Fatalf("admission list holds %d ids", n)
	}
}

// racingBackend runs race, once, just before the first compare-and-swap of the admission
// namespace reaches the backend: another worker's admission that lands between this one's read
// and its write.
type racingBackend struct {
	storage.Backend
	race func()
}

func (b *racingBackend) CompareAndSwap(ctx context.Context, key storage.RecordKey, expected *uint64, replacement storage.StoredRecord) (storage.CASOutcome, error) {
	if key.Namespace == "worker-admission" && b.race != nil {
		race := b.race
		b.race = nil
		race()
	}
	return b.Backend.CompareAndSwap(ctx, key, expected, replacement)
}

// Spec: STO-071, STO-026 — workers opened at once on one journal are each admitted: an
// admission whose write lost the race to another reads the admitted ids again and retries, so
// both sessions are admitted, both ids recorded, and the later reservation holds the higher fence.
func TestStoreAdmissionRetriesARacedWrite(t *testing.T) {
	ctx := context.Background()
	inner := storage.NewMemoryBackend()
	racing := &racingBackend{Backend: inner}
	js, err := worker.NewStorageJournalStore(authStore(t, racing), "worker-journal", scope, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	adm, err := worker.NewStoreAdmission(authStore(t, racing), js, "worker-admission")
	if err != nil {
		t.Fatal(err)
	}
	otherJournal, _ := worker.NewStorageJournalStore(authStore(t, inner), "worker-journal", scope, canonjson.Preserve)
	other, _ := worker.NewStoreAdmission(authStore(t, inner), otherJournal, "worker-admission")
	var otherFence uint64
	racing.race = func() {
		if otherFence, err = other.Admit(ctx, protocol.CapabilityManifest{SessionID: "s-other"}, scope); err != nil {
			t.Errorf("the racing admission: %v", err)
		}
	}
	fence, err := adm.Admit(ctx, protocol.CapabilityManifest{SessionID: "s-mine"}, scope)
	if err != nil {
		t.Fatalf("an admission that lost one race was refused: %v", err)
	}
	if fence <= otherFence {
		t.Fatalf("fence %d not above the racing admission's %d", fence, otherFence)
	}
	for _, id := range []string{"s-other", "s-mine"} {
		if _, err := adm.Admit(ctx, protocol.CapabilityManifest{SessionID: id}, scope); !errors.Is(err, worker.ErrReplayedSession) {
			t.Errorf("%s admitted again (%v): it was not recorded", id, err)
		}
	}
}
