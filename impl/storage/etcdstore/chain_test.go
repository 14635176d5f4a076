package etcdstore

import (
	"math/rand/v2"
	"testing"

	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/storage/storagetest"
)

// A record that grows a little at each write is written as one delta of about the size of
// the change (plus the head and the anchor), whatever the record's size, until its deltas
// outgrow the larger of its base and chainFloor, when it is written as a new base: what a
// record holds in the cluster stays within about twice its envelope. A fresh backend (a fresh
// process) rebuilds it from the chain, and a delta that does not apply is corruption.
//
// Spec: STO-064, STO-086
func TestEtcdRecordIsWrittenAsAChain(t *testing.T) {
	prefix := freshPrefix(t)
	b := openAt(t, prefix)
	s := storage.NewAuthenticatedStore(b, storagetest.Keyring(t))
	key := storagetest.TestKey
	token, err := s.ReserveFence(ctxb(), key)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var payload []byte
	var expected *uint64
	prev, rebased := 0, 0
	for i := range 64 {
		item := make([]byte, 200)
		for j := range item {
			item[j] = byte(' ' + rng.IntN(90))
		}
		payload = append(payload, item...)
		rec, err := s.CompareAndSwapFenced(ctxb(), key, expected, payload, token)
		if err != nil {
			t.Fatal(err)
		}
		expected = storage.ExpectRevision(rec.Revision)
		head, err := decodeHead(rawValue(t, b, b.recordKey(key)))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case i == 0 && head.n != 0:
			t.Fatalf("the first write made a chain of %d deltas, want a base", head.n)
		case i > 0 && head.n == prev+1:
			// One more delta, of about what changed.
			if d := rawValue(t, b, b.chainKey(key)+deltaName(head.n)); len(d) > 700 {
				t.Fatalf("write %d of a %d-byte record wrote a %d-byte delta", i+1, len(payload), len(d))
			}
		case i > 0 && head.n == 0:
			// A new base, only once the deltas reached the larger of the base and chainFloor.
			rebased++
		case i > 0:
			t.Fatalf("write %d: chain of %d deltas after %d", i+1, head.n, prev)
		}
		// What the record holds stays within about twice its envelope.
		if head.deltaSz > max(head.baseBytes, chainFloor) {
			t.Fatalf("write %d: %d bytes of deltas over a %d-byte base, want at most %d", i+1, head.deltaSz, head.baseBytes, max(head.baseBytes, chainFloor))
		}
		prev = head.n
	}
	// 64 writes of a record that grows to 12,800 bytes: deltas first, then new bases as the
	// deltas outgrow the base, each after at least as many bytes of deltas as it holds.
	if rebased == 0 || rebased > 8 {
		t.Errorf("%d new bases in 64 growing writes, want between 1 and 8", rebased)
	}
	storagetest.WantLoaded(t, storage.NewAuthenticatedStore(b2(t, prefix), storagetest.Keyring(t)), key, 64, "storage-v1", string(payload))

	if prev == 0 {
		t.Fatal("the last write left no delta to corrupt")
	}
	put(t, b, b.chainKey(key)+deltaName(prev), []byte{0, 0, 0, 9, 0xff})
	_, err = storage.NewAuthenticatedStore(b2(t, prefix), storagetest.Keyring(t)).Load(ctxb(), key)
	storagetest.WantKind(t, err, storage.ErrBackend, storage.ErrCorrupt)
}

// A fenced write decided on the state this process remembers is refused or decided again
// when another process changed the record since: a newer fence is refused, a newer record
// is a conflict for the stale expectation and written for the current one.
//
// Spec: STO-026, STO-027
func TestEtcdRememberedStateIsCheckedByTheWrite(t *testing.T) {
	prefix := freshPrefix(t)
	key := storagetest.TestKey
	a := storage.NewAuthenticatedStore(openAt(t, prefix), storagetest.Keyring(t))
	other := storage.NewAuthenticatedStore(b2(t, prefix), storagetest.Keyring(t))
	token, err := a.ReserveFence(ctxb(), key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.CompareAndSwapFenced(ctxb(), key, nil, []byte("one"), token); err != nil {
		t.Fatal(err)
	}
	// The other handle writes under the same token: a's remembered state is stale.
	if _, err := other.CompareAndSwapFenced(ctxb(), key, storage.ExpectRevision(1), []byte("two"), token); err != nil {
		t.Fatal(err)
	}
	_, err = a.CompareAndSwapFenced(ctxb(), key, storage.ExpectRevision(1), []byte("stale"), token)
	storagetest.WantKind(t, err, storage.ErrWriteConflict)
	if _, err := a.CompareAndSwapFenced(ctxb(), key, storage.ExpectRevision(2), []byte("three"), token); err != nil {
		t.Fatal(err)
	}
	// A newer writer takes the record: the remembered state's fence is stale.
	newer, err := other.ReserveFence(ctxb(), key)
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.CompareAndSwapFenced(ctxb(), key, storage.ExpectRevision(3), []byte("superseded"), token)
	storagetest.WantKind(t, err, storage.ErrBackend, storage.ErrFencingTokenRejected)
	if _, err := other.CompareAndSwapFenced(ctxb(), key, storage.ExpectRevision(3), []byte("four"), newer); err != nil {
		t.Fatal(err)
	}
	storagetest.WantLoaded(t, a, key, 4, "storage-v1", "four")
}
