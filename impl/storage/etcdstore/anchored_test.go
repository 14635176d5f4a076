package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/storage/boltstore"
	"github.com/splashv5/conform/impl/storage/storagetest"
)

// openAnchored opens a bbolt file in a fresh directory anchored on the test member.
func openAnchored(t *testing.T, anchor storage.RollbackAnchor) (*boltstore.Anchored, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "journal.db")
	a, err := boltstore.OpenAnchored(path, nil, anchor)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a, path
}

// Restoring an older copy of the whole local file, or losing it, is detected through the etcd
// anchor and refused for reads and writes; the plain bbolt file, whose anchor is inside it,
// accepts the same restore (the negative control).
//
// Spec: STO-084
func TestAnchoredBoltRefusesARestoredFile(t *testing.T) {
	anchor := openAt(t, freshPrefix(t))
	anchored, path := openAnchored(t, anchor)
	s := storage.NewAuthenticatedStore(anchored, storagetest.Keyring(t))
	key := storagetest.TestKey
	token, err := s.ReserveFence(ctxb(), key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CompareAndSwapFenced(ctxb(), key, nil, []byte("first"), token); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CompareAndSwapFenced(ctxb(), key, storage.ExpectRevision(1), []byte("second"), token); err != nil {
		t.Fatal(err)
	}
	storagetest.WantLoaded(t, s, key, 2, "storage-v1", "second")

	if err := os.WriteFile(path, old, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = s.Load(ctxb(), key)
	if e := storagetest.WantKind(t, err, storage.ErrRollbackDetected); e.Actual == nil || *e.Actual != 1 || e.Floor != 2 {
		t.Fatalf("%v", e)
	}
	for _, expected := range []*uint64{storage.ExpectRevision(1), storage.ExpectRevision(2)} {
		_, err = s.CompareAndSwapFenced(ctxb(), key, expected, []byte("after restore"), token)
		storagetest.WantKind(t, err, storage.ErrRollbackDetected)
	}
	// A lost file is refused the same way.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	lost, err := boltstore.OpenAnchored(path, nil, anchor)
	if err != nil {
		t.Fatal(err)
	}
	defer lost.Close()
	_, err = storage.NewAuthenticatedStore(lost, storagetest.Keyring(t)).Load(ctxb(), key)
	if e := storagetest.WantKind(t, err, storage.ErrRollbackDetected); e.Actual != nil || e.Floor != 2 {
		t.Fatalf("%v", e)
	}

	// Negative control: the plain bbolt file accepts the same restore.
	plainPath := filepath.Join(t.TempDir(), "plain.db")
	plain, err := boltstore.Open(plainPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	ps := storage.NewAuthenticatedStore(plain, storagetest.Keyring(t))
	if _, err := ps.Create(ctxb(), key, []byte("first")); err != nil {
		t.Fatal(err)
	}
	old, _ = os.ReadFile(plainPath)
	if _, err := ps.Replace(ctxb(), key, 1, []byte("second")); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(plainPath, old, 0o600)
	storagetest.WantLoaded(t, ps, key, 1, "storage-v1", "first")
}

// lostAnswers is the etcd anchor with its swap failing before it reaches etcd while on, the
// way an outage between the candidate commit and the anchor swap looks to the store.
type lostAnswers struct {
	*Backend
	on bool
}

func (l *lostAnswers) SwapAnchor(ctx context.Context, key storage.RecordKey, expected, replacement storage.AnchorState) (bool, error) {
	if l.on {
		return false, &storage.Error{Kind: storage.ErrEtcd, Err: errors.New("injected: no answer")}
	}
	return l.Backend.SwapAnchor(ctx, key, expected, replacement)
}

// Swaps that never reached the anchor leave candidates the store ignores; at MaxCandidates it
// refuses to write until the recovery procedure: reserve a recovery fence (which shuts out the
// older writer), discard the unanchored candidates with it, write again.
//
// Spec: STO-085
func TestAnchoredBoltRecoveryFence(t *testing.T) {
	anchor := &lostAnswers{Backend: openAt(t, freshPrefix(t))}
	anchored, _ := openAnchored(t, anchor)
	s := storage.NewAuthenticatedStore(anchored, storagetest.Keyring(t))
	key := storagetest.TestKey
	token, err := s.ReserveFence(ctxb(), key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CompareAndSwapFenced(ctxb(), key, nil, []byte("committed"), token); err != nil {
		t.Fatal(err)
	}
	anchor.on = true
	for i := range boltstore.MaxCandidates - 1 {
		_, err := s.CompareAndSwapFenced(ctxb(), key, storage.ExpectRevision(1), fmt.Appendf(nil, "lost %d", i), token)
		storagetest.WantKind(t, err, storage.ErrBackend, storage.ErrEtcd)
	}
	anchor.on = false
	// The unanchored candidates are invisible.
	storagetest.WantLoaded(t, s, key, 1, "storage-v1", "committed")
	_, err = s.CompareAndSwapFenced(ctxb(), key, storage.ExpectRevision(1), []byte("blocked"), token)
	storagetest.WantKind(t, err, storage.ErrBackend, storage.ErrTooManyCandidates)

	recovery, err := s.ReserveFence(ctxb(), key)
	if err != nil || recovery != token+1 {
		t.Fatalf("recovery fence %d (%v)", recovery, err)
	}
	err = anchored.DiscardUnanchoredCandidates(ctxb(), key, token)
	storagetest.WantKind(t, err, storage.ErrFencingTokenRejected)
	if err := anchored.DiscardUnanchoredCandidates(ctxb(), key, recovery); err != nil {
		t.Fatal(err)
	}
	storagetest.WantLoaded(t, s, key, 1, "storage-v1", "committed")
	_, err = s.CompareAndSwapFenced(ctxb(), key, storage.ExpectRevision(1), []byte("old writer"), token)
	storagetest.WantKind(t, err, storage.ErrBackend, storage.ErrFencingTokenRejected)
	if _, err := s.CompareAndSwapFenced(ctxb(), key, storage.ExpectRevision(1), []byte("recovered"), recovery); err != nil {
		t.Fatal(err)
	}
	storagetest.WantLoaded(t, s, key, 2, "storage-v1", "recovered")
}

// Spec: STO-084
func TestLinearizableAnchoredBoltGoroutines(t *testing.T) {
	anchored, _ := openAnchored(t, openAt(t, freshPrefix(t)))
	storagetest.RunLinearizable(t, anchored, true)
}

func BenchmarkAnchoredBoltBackend(b *testing.B) {
	if os.Getenv(endpointEnv) == "" {
		b.Skip("no etcd member")
	}
	storagetest.RunBenchmarks(b, func(t testing.TB) storage.Backend {
		a, err := boltstore.OpenAnchored(filepath.Join(t.TempDir(), "journal.db"), nil, openAt(t, freshPrefix(t)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.Close() })
		return a
	})
}

// A writer on an anchored file killed at an arbitrary point (after the candidate commit, the
// anchor swap or the pruning) leaves a record that loads, complete and no older than the last
// acknowledged write.
//
// Spec: STO-060, STO-084
func TestAnchoredBoltSurvivesAKilledWriter(t *testing.T) {
	needEtcd(t)
	storagetest.RunKilledWriterVariant(t, openDurable, "anchored", nil)
}
