package storagetest

import (
	"bytes"
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/splashv5/conform/impl/storage"
)

func mustLoad(t testing.TB, b storage.Backend, key storage.RecordKey) storage.Snapshot {
	t.Helper()
	snap, err := b.Load(ctxb(), key)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return snap
}

func mustFence(t testing.TB, b storage.Backend, key storage.RecordKey) uint64 {
	t.Helper()
	f, err := b.CurrentFence(ctxb(), key)
	if err != nil {
		t.Fatalf("current fence: %v", err)
	}
	return f
}

func wantSnapshot(t testing.TB, snap storage.Snapshot, revision *uint64, data string, floor uint64) {
	t.Helper()
	if snap.RevisionFloor != floor {
		t.Fatalf("floor %d, want %d", snap.RevisionFloor, floor)
	}
	if revision == nil {
		if snap.Record != nil {
			t.Fatalf("record %v, want absent", snap.Record)
		}
		return
	}
	if snap.Record == nil || snap.Record.Revision != *revision || string(snap.Record.Bytes) != data {
		t.Fatalf("record %v (%q), want revision %d %q", snap.Record, recordBytes(snap.Record), *revision, data)
	}
}

func recordBytes(r *storage.StoredRecord) string {
	if r == nil {
		return ""
	}
	return string(r.Bytes)
}

func wantStored(t testing.TB, out storage.CASOutcome, err error, floor uint64) {
	t.Helper()
	if err != nil {
		t.Fatalf("swap: %v", err)
	}
	if !out.Stored || out.RevisionFloor != floor || out.ActualRevision != nil {
		t.Fatalf("outcome %+v, want stored at floor %d", out, floor)
	}
}

func wantConflict(t testing.TB, out storage.CASOutcome, err error, actual *uint64, floor uint64) {
	t.Helper()
	if err != nil {
		t.Fatalf("swap: %v", err)
	}
	if out.Stored || out.RevisionFloor != floor || !sameRevision(out.ActualRevision, actual) {
		t.Fatalf("outcome %+v (actual %s), want conflict actual %s floor %d", out, optRevision(out.ActualRevision), optRevision(actual), floor)
	}
}

// Spec: STO-020, STO-021, STO-023, STO-041
func testBackendCompareAndSwap(t *testing.T, h Harness) {
	b := h.Open(t)
	wantSnapshot(t, mustLoad(t, b, TestKey), nil, "", 0)

	out, err := b.CompareAndSwap(ctxb(), TestKey, nil, storage.StoredRecord{Revision: 1, Bytes: []byte("one")})
	wantStored(t, out, err, 1)
	wantSnapshot(t, mustLoad(t, b, TestKey), rev(1), "one", 1)

	// Expecting absence while present, a wrong revision, or revision 0.
	for _, exp := range []*uint64{nil, rev(0), rev(2), rev(math.MaxUint64)} {
		out, err = b.CompareAndSwap(ctxb(), TestKey, exp, storage.StoredRecord{Revision: revisionOrZero(exp) + 1, Bytes: []byte("x")})
		wantConflict(t, out, err, rev(1), 1)
	}
	wantSnapshot(t, mustLoad(t, b, TestKey), rev(1), "one", 1)

	out, err = b.CompareAndSwap(ctxb(), TestKey, rev(1), storage.StoredRecord{Revision: 2, Bytes: []byte("two")})
	wantStored(t, out, err, 2)
	wantSnapshot(t, mustLoad(t, b, TestKey), rev(2), "two", 2)

	// Expecting a revision of an absent record.
	out, err = b.CompareAndSwap(ctxb(), OtherKey, rev(1), storage.StoredRecord{Revision: 2, Bytes: []byte("x")})
	wantConflict(t, out, err, nil, 0)
	wantSnapshot(t, mustLoad(t, b, OtherKey), nil, "", 0)
}

// Spec: STO-021
func testBackendConflictWhenRevisionDiffersFromFloor(t *testing.T, h Harness) {
	b := h.Open(t)
	if _, err := b.CompareAndSwap(ctxb(), TestKey, nil, storage.StoredRecord{Revision: 1, Bytes: []byte("one")}); err != nil {
		t.Fatal(err)
	}
	// The floor says revision 2 was committed, but the record is at 1.
	h.SetFloor(t, b, TestKey, 2)
	out, err := b.CompareAndSwap(ctxb(), TestKey, rev(1), storage.StoredRecord{Revision: 2, Bytes: []byte("x")})
	wantConflict(t, out, err, rev(1), 2)
	// The record was lost but the floor remembers revision 2.
	h.SetRecord(t, b, TestKey, nil)
	out, err = b.CompareAndSwap(ctxb(), TestKey, nil, storage.StoredRecord{Revision: 1, Bytes: []byte("x")})
	wantConflict(t, out, err, nil, 2)
}

// Spec: STO-022
func testBackendReplacementRevision(t *testing.T, h Harness) {
	b := h.Open(t)
	_, err := b.CompareAndSwap(ctxb(), TestKey, nil, storage.StoredRecord{Revision: 2, Bytes: []byte("x")})
	e := WantKind(t, err, storage.ErrInvalidReplacementRevision)
	if *e.Expected != 1 || *e.Actual != 2 {
		t.Fatalf("%v", e)
	}
	wantSnapshot(t, mustLoad(t, b, TestKey), nil, "", 0)
	if _, err := b.CompareAndSwap(ctxb(), TestKey, nil, storage.StoredRecord{Revision: 1, Bytes: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	_, err = b.CompareAndSwap(ctxb(), TestKey, rev(1), storage.StoredRecord{Revision: 1, Bytes: []byte("y")})
	e = WantKind(t, err, storage.ErrInvalidReplacementRevision)
	if *e.Expected != 2 || *e.Actual != 1 {
		t.Fatalf("%v", e)
	}
	wantSnapshot(t, mustLoad(t, b, TestKey), rev(1), "x", 1)

	h.Plant(t, b, TestKey, storage.StoredRecord{Revision: math.MaxUint64, Bytes: []byte("last")})
	_, err = b.CompareAndSwap(ctxb(), TestKey, rev(math.MaxUint64), storage.StoredRecord{Revision: 0, Bytes: []byte("wrapped")})
	WantKind(t, err, storage.ErrBackendRevisionExhausted)
	wantSnapshot(t, mustLoad(t, b, TestKey), rev(math.MaxUint64), "last", math.MaxUint64)
}

// Spec: STO-025, STO-026, STO-027
func testBackendFenceLifecycle(t *testing.T, h Harness) {
	b := h.Open(t)
	if f := mustFence(t, b, TestKey); f != 0 {
		t.Fatalf("initial fence %d", f)
	}
	for want := uint64(1); want <= 2; want++ {
		got, err := b.ReserveFence(ctxb(), TestKey)
		if err != nil || got != want {
			t.Fatalf("reserve = %d, %v; want %d", got, err, want)
		}
	}
	if f := mustFence(t, b, TestKey); f != 2 {
		t.Fatalf("fence %d, want 2", f)
	}
	if f := mustFence(t, b, TestKey); f != 2 {
		t.Fatalf("reading the fence changed it: %d", f)
	}

	WantKind(t, b.EstablishFence(ctxb(), TestKey, 0), storage.ErrInvalidFencingToken)
	e := WantKind(t, b.EstablishFence(ctxb(), TestKey, 1), storage.ErrFencingTokenRejected)
	if e.CurrentFence != 2 || e.SuppliedFence != 1 {
		t.Fatalf("%v", e)
	}
	if err := b.EstablishFence(ctxb(), TestKey, 2); err != nil {
		t.Fatalf("equal token: %v", err)
	}
	if f := mustFence(t, b, TestKey); f != 2 {
		t.Fatalf("fence %d after equal establish", f)
	}
	// A token that was never reserved is accepted when higher.
	if err := b.EstablishFence(ctxb(), TestKey, 10); err != nil {
		t.Fatalf("higher token: %v", err)
	}
	if f := mustFence(t, b, TestKey); f != 10 {
		t.Fatalf("fence %d, want 10", f)
	}
	if got, err := b.ReserveFence(ctxb(), TestKey); err != nil || got != 11 {
		t.Fatalf("reserve after establish = %d, %v", got, err)
	}
	// The fence advanced while the record is still absent.
	wantSnapshot(t, mustLoad(t, b, TestKey), nil, "", 0)
}

// Spec: STO-026
func testBackendFenceExhaustion(t *testing.T, h Harness) {
	b := h.Open(t)
	if err := b.EstablishFence(ctxb(), TestKey, math.MaxUint64); err != nil {
		t.Fatal(err)
	}
	_, err := b.ReserveFence(ctxb(), TestKey)
	WantKind(t, err, storage.ErrFencingTokenExhausted)
	if f := mustFence(t, b, TestKey); f != math.MaxUint64 {
		t.Fatalf("fence wrapped to %d", f)
	}
	h.SetFence(t, b, OtherKey, math.MaxUint64-1)
	if got, err := b.ReserveFence(ctxb(), OtherKey); err != nil || got != math.MaxUint64 {
		t.Fatalf("last reservation = %d, %v", got, err)
	}
}

// Spec: STO-024, STO-028
func testBackendFencedSwap(t *testing.T, h Harness) {
	b := h.Open(t)
	// Plain writes work until the record is fenced.
	if _, err := b.CompareAndSwap(ctxb(), TestKey, nil, storage.StoredRecord{Revision: 1, Bytes: []byte("one")}); err != nil {
		t.Fatal(err)
	}
	if err := b.EstablishFence(ctxb(), TestKey, 5); err != nil {
		t.Fatal(err)
	}
	_, err := b.CompareAndSwap(ctxb(), TestKey, rev(1), storage.StoredRecord{Revision: 2, Bytes: []byte("plain")})
	if e := WantKind(t, err, storage.ErrFencingRequired); e.CurrentFence != 5 {
		t.Fatalf("%v", e)
	}
	wantSnapshot(t, mustLoad(t, b, TestKey), rev(1), "one", 1)

	// Token 0 is invalid even when the fence also mismatches.
	_, err = b.CompareAndSwapFenced(ctxb(), TestKey, rev(1), storage.StoredRecord{Revision: 2, Bytes: []byte("x")}, 0)
	WantKind(t, err, storage.ErrInvalidFencingToken)
	// A lower or higher token is rejected before the revision check and
	// does not move the fence.
	for _, token := range []uint64{4, 6} {
		_, err = b.CompareAndSwapFenced(ctxb(), TestKey, rev(7), storage.StoredRecord{Revision: 8, Bytes: []byte("x")}, token)
		e := WantKind(t, err, storage.ErrFencingTokenRejected)
		if e.CurrentFence != 5 || e.SuppliedFence != token {
			t.Fatalf("%v", e)
		}
	}
	if f := mustFence(t, b, TestKey); f != 5 {
		t.Fatalf("fenced swap moved the fence to %d", f)
	}
	wantSnapshot(t, mustLoad(t, b, TestKey), rev(1), "one", 1)

	// The current token gets normal swap semantics.
	out, err := b.CompareAndSwapFenced(ctxb(), TestKey, nil, storage.StoredRecord{Revision: 1, Bytes: []byte("x")}, 5)
	wantConflict(t, out, err, rev(1), 1)
	out, err = b.CompareAndSwapFenced(ctxb(), TestKey, rev(1), storage.StoredRecord{Revision: 3, Bytes: []byte("x")}, 5)
	if e := WantKind(t, err, storage.ErrInvalidReplacementRevision); *e.Expected != 2 {
		t.Fatalf("%v %+v", e, out)
	}
	out, err = b.CompareAndSwapFenced(ctxb(), TestKey, rev(1), storage.StoredRecord{Revision: 2, Bytes: []byte("two")}, 5)
	wantStored(t, out, err, 2)
	wantSnapshot(t, mustLoad(t, b, TestKey), rev(2), "two", 2)
	if f := mustFence(t, b, TestKey); f != 5 {
		t.Fatalf("fence %d, want 5", f)
	}

	// A fenced swap on a never-fenced record: the current fence is 0, so
	// every nonzero token is rejected.
	_, err = b.CompareAndSwapFenced(ctxb(), OtherKey, nil, storage.StoredRecord{Revision: 1, Bytes: []byte("x")}, 1)
	if e := WantKind(t, err, storage.ErrFencingTokenRejected); e.CurrentFence != 0 {
		t.Fatalf("%v", e)
	}
}

// Spec: STO-030
func testBackendKeysAreIndependent(t *testing.T, h Harness) {
	b := h.Open(t)
	keys := []storage.RecordKey{TestKey, OtherKey, {Namespace: "other-ns", Name: TestKey.Name}}
	for i, k := range keys {
		for range i + 1 {
			if _, err := b.ReserveFence(ctxb(), k); err != nil {
				t.Fatal(err)
			}
		}
		token := uint64(i + 1)
		var prev *uint64
		for r := uint64(1); r <= uint64(i+1); r++ {
			if _, err := b.CompareAndSwapFenced(ctxb(), k, prev, storage.StoredRecord{Revision: r, Bytes: []byte(k.String())}, token); err != nil {
				t.Fatal(err)
			}
			prev = rev(r)
		}
	}
	for i, k := range keys {
		wantSnapshot(t, mustLoad(t, b, k), rev(uint64(i+1)), k.String(), uint64(i+1))
		if f := mustFence(t, b, k); f != uint64(i+1) {
			t.Fatalf("%v fence %d", k, f)
		}
	}
}

// Spec: STO-031
func testBackendRejectsInvalidRecordKeys(t *testing.T, h Harness) {
	b := h.Open(t)
	bad := map[storage.RecordKey]storage.ErrorKind{
		{}:                                 storage.ErrInvalidNamespace,
		{Namespace: "ns"}:                  storage.ErrInvalidName,
		{Namespace: "NS", Name: "x"}:       storage.ErrInvalidNamespace,
		{Namespace: "ns", Name: "a/b"}:     storage.ErrInvalidName,
		{Namespace: "ns", Name: "../etc"}:  storage.ErrInvalidName,
		{Namespace: "n s", Name: "bad si"}: storage.ErrInvalidNamespace,
	}
	for key, kind := range bad {
		_, err := b.Load(ctxb(), key)
		WantKind(t, err, kind)
		_, err = b.CompareAndSwap(ctxb(), key, nil, storage.StoredRecord{Revision: 1})
		WantKind(t, err, kind)
		_, err = b.CompareAndSwapFenced(ctxb(), key, nil, storage.StoredRecord{Revision: 1}, 1)
		WantKind(t, err, kind)
		_, err = b.CurrentFence(ctxb(), key)
		WantKind(t, err, kind)
		_, err = b.ReserveFence(ctxb(), key)
		WantKind(t, err, kind)
		WantKind(t, b.EstablishFence(ctxb(), key, 1), kind)
	}
}

// Spec: STO-026, STO-029
func testBackendConcurrentReservationsAreDistinct(t *testing.T, h Harness) {
	b := h.Open(t)
	const workers, each = 6, 8
	var mu sync.Mutex
	var got []uint64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var mine []uint64
			for range each {
				token, err := b.ReserveFence(ctxb(), TestKey)
				if err != nil {
					t.Error(err)
					return
				}
				mine = append(mine, token)
			}
			if !slices.IsSorted(mine) {
				t.Errorf("one worker's tokens are not increasing: %v", mine)
			}
			mu.Lock()
			got = append(got, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(got)
	for i, token := range got {
		if token != uint64(i+1) {
			t.Fatalf("tokens %v are not exactly 1..%d", got, workers*each)
		}
	}
}

func testBackendHonoursCancelledContext(t *testing.T, h Harness) {
	b := h.Open(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.ReserveFence(ctx, TestKey); !errors.Is(err, context.Canceled) {
		t.Fatalf("reserve with a cancelled context: %v", err)
	}
	if _, err := b.Load(ctx, TestKey); !errors.Is(err, context.Canceled) {
		t.Fatalf("load with a cancelled context: %v", err)
	}
	if f := mustFence(t, b, TestKey); f != 0 {
		t.Fatalf("cancelled reservation took effect: %d", f)
	}
}

// Spec: STO-020
func testBackendLoadReturnsACopy(t *testing.T, h Harness) {
	b := h.Open(t)
	data := []byte("original")
	if _, err := b.CompareAndSwap(ctxb(), TestKey, nil, storage.StoredRecord{Revision: 1, Bytes: data}); err != nil {
		t.Fatal(err)
	}
	data[0] = 'X'
	snap := mustLoad(t, b, TestKey)
	snap.Record.Bytes[1] = 'Y'
	if got := mustLoad(t, b, TestKey); !bytes.Equal(got.Record.Bytes, []byte("original")) {
		t.Fatalf("backend state aliased caller memory: %q", got.Record.Bytes)
	}
}

// A backend that bounds stored records refuses an oversized replacement and keeps the old
// state; a record of exactly the limit is stored.
//
// Spec: STO-064
func testBackendRejectsOversizedReplacement(t *testing.T, h Harness) {
	if !h.OversizeIsBackendError {
		t.Skip("the backend does not bound stored records")
	}
	b := h.Open(t)
	_, err := b.CompareAndSwap(ctxb(), TestKey, nil, storage.StoredRecord{Revision: 1, Bytes: make([]byte, storage.MaxRecordBytes+1)})
	if e := WantKind(t, err, storage.ErrStoredRecordTooLarge); e.Size != storage.MaxRecordBytes+1 {
		t.Fatalf("%v", e)
	}
	wantSnapshot(t, mustLoad(t, b, TestKey), nil, "", 0)
	out, err := b.CompareAndSwap(ctxb(), TestKey, nil, storage.StoredRecord{Revision: 1, Bytes: make([]byte, storage.MaxRecordBytes)})
	wantStored(t, out, err, 1)
}
