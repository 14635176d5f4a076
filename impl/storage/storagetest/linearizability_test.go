package storagetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/splashv5/conform/impl/storage"
)

// racyReserveBackend allocates fencing tokens the forbidden way: it reads
// the current fence, yields, and establishes current+1. The first
// `rendezvous` reservations wait for each other after the read and again
// after the write, so they all read the same fence and all succeed.
type racyReserveBackend struct {
	storage.Backend
	afterRead, afterWrite *sync.WaitGroup
	remaining             *atomic.Int64
}

func newRacyReserveBackend(b storage.Backend, rendezvous int) racyReserveBackend {
	r := racyReserveBackend{Backend: b, afterRead: &sync.WaitGroup{}, afterWrite: &sync.WaitGroup{}, remaining: &atomic.Int64{}}
	r.afterRead.Add(rendezvous)
	r.afterWrite.Add(rendezvous)
	r.remaining.Store(int64(rendezvous))
	return r
}

func (r racyReserveBackend) ReserveFence(ctx context.Context, key storage.RecordKey) (uint64, error) {
	current, err := r.Backend.CurrentFence(ctx, key)
	if err != nil {
		return 0, err
	}
	participant := r.remaining.Add(-1) >= 0
	if participant {
		r.afterRead.Done()
		r.afterRead.Wait()
	} else {
		runtime.Gosched()
	}
	next := current + 1
	err = r.Backend.EstablishFence(ctx, key, next)
	if participant {
		r.afterWrite.Done()
		r.afterWrite.Wait()
	}
	if err != nil {
		return 0, err
	}
	return next, nil
}

// ignoredFenceBackend performs fenced swaps under whatever fence is current,
// ignoring the caller's token: the bug that lets a superseded writer write.
type ignoredFenceBackend struct{ storage.Backend }

func (b ignoredFenceBackend) CompareAndSwapFenced(ctx context.Context, key storage.RecordKey, expected *uint64, replacement storage.StoredRecord, _ uint64) (storage.CASOutcome, error) {
	current, err := b.Backend.CurrentFence(ctx, key)
	if err != nil {
		return storage.CASOutcome{}, err
	}
	return b.Backend.CompareAndSwapFenced(ctx, key, expected, replacement, current)
}

// The checker must refute a backend whose reservations are read-then-write:
// every client starts by reserving a lease on key 0, the rendezvous makes
// all of them read fence 0, and all get token 1.
//
// Spec: STO-029, STO-071
func TestLinearizabilityCheckerRejectsRacyReservations(t *testing.T) {
	const clients = 4
	b := newRacyReserveBackend(storage.NewMemoryBackend(), clients)
	ops := runGoroutineHistory(b, linKeys(0, 2), clients, 12, 7, monotonicClock())
	duplicates := map[uint64]int{}
	for _, op := range ops {
		if in, out := op.Input.(linInput), op.Output.(linOutput); in.Op == linReserve && in.Key == 0 && out.Err == 0 {
			duplicates[out.Token]++
		}
	}
	if duplicates[1] != clients {
		t.Fatalf("the rendezvous did not force a collision: token 1 issued %d times", duplicates[1])
	}
	if res, _ := checkHistory(t, ops); res != porcupine.Illegal {
		t.Fatalf("a history with duplicated reservations was judged %s", res)
	}
}

// The checker must refute a backend whose fenced swap ignores the token: a
// writer superseded by a newer reservation still writes.
//
// Spec: STO-029, STO-028
func TestLinearizabilityCheckerRejectsIgnoredFences(t *testing.T) {
	b := ignoredFenceBackend{storage.NewMemoryBackend()}
	keys := linKeys(0, 1)
	clock := monotonicClock()
	var ops []porcupine.Operation
	step := func(client int, in linInput) linOutput {
		call := clock()
		out := linCall(context.Background(), b, keys, in)
		ops = append(ops, porcupine.Operation{ClientId: client, Input: in, Output: out, Call: call, Return: clock()})
		return out
	}
	old := step(0, linInput{Op: linReserve})
	newer := step(1, linInput{Op: linReserve})
	if old.Token != 1 || newer.Token != 2 {
		t.Fatalf("reservations %d and %d", old.Token, newer.Token)
	}
	// The superseded writer writes with token 1 after token 2 exists.
	out := step(0, linInput{Op: linFencedSwap, Token: old.Token, Value: "stale writer"})
	if !out.Stored {
		t.Fatalf("the broken backend did not let the stale writer through: %+v", out)
	}
	// Concurrent traffic after the violation does not hide it.
	ops = append(ops, runGoroutineHistory(b, keys, 3, 10, 11, clock)...)
	if res, _ := checkHistory(t, ops); res != porcupine.Illegal {
		t.Fatalf("a history with a write under a stale fence was judged %s", res)
	}
}

// The model itself, on hand-written histories.
//
// Spec: STO-026, STO-027, STO-028
func TestFencedRegisterModel(t *testing.T) {
	op := func(client int, call, ret int64, in linInput, out linOutput) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Input: in, Output: out, Call: call, Return: ret}
	}
	reserve := linInput{Op: linReserve}
	cases := []struct {
		name string
		ops  []porcupine.Operation
		want porcupine.CheckResult
	}{
		{"sequential reservations", []porcupine.Operation{
			op(0, 0, 1, reserve, linOutput{Token: 1}),
			op(1, 2, 3, reserve, linOutput{Token: 2}),
		}, porcupine.Ok},
		{"overlapping reservations in either order", []porcupine.Operation{
			op(0, 0, 10, reserve, linOutput{Token: 2}),
			op(1, 1, 9, reserve, linOutput{Token: 1}),
		}, porcupine.Ok},
		{"one token issued twice", []porcupine.Operation{
			op(0, 0, 10, reserve, linOutput{Token: 1}),
			op(1, 1, 9, reserve, linOutput{Token: 1}),
		}, porcupine.Illegal},
		{"reservation going backwards", []porcupine.Operation{
			op(0, 0, 1, reserve, linOutput{Token: 2}),
			op(1, 2, 3, reserve, linOutput{Token: 1}),
		}, porcupine.Illegal},
		{"higher establish sticks after a conflict", []porcupine.Operation{
			op(0, 0, 1, linInput{Op: linEstablish, Token: 5}, linOutput{}),
			op(0, 2, 3, linInput{Op: linFencedSwap, Token: 5, HasExpected: true, Expected: 3, Value: "x"}, linOutput{Floor: 0}),
			op(1, 4, 5, linInput{Op: linCurrentFence}, linOutput{Token: 5}),
		}, porcupine.Ok},
		{"write with a lower token", []porcupine.Operation{
			op(0, 0, 1, linInput{Op: linEstablish, Token: 5}, linOutput{}),
			op(1, 2, 3, linInput{Op: linFencedSwap, Token: 4, Value: "x"}, linOutput{Stored: true, Floor: 1}),
		}, porcupine.Illegal},
		{"write with a higher, unestablished token", []porcupine.Operation{
			op(0, 0, 1, linInput{Op: linEstablish, Token: 5}, linOutput{}),
			op(1, 2, 3, linInput{Op: linFencedSwap, Token: 6, Value: "x"}, linOutput{Err: storage.ErrFencingTokenRejected, ErrCurrent: 5}),
		}, porcupine.Ok},
		{"lost update", []porcupine.Operation{
			op(0, 0, 1, linInput{Op: linEstablish, Token: 1}, linOutput{}),
			op(0, 2, 3, linInput{Op: linFencedSwap, Token: 1, Value: "a"}, linOutput{Stored: true, Floor: 1}),
			op(1, 4, 5, linInput{Op: linFencedSwap, Token: 1, Value: "b"}, linOutput{Stored: true, Floor: 1}),
		}, porcupine.Illegal},
		{"stale read", []porcupine.Operation{
			op(0, 0, 1, linInput{Op: linEstablish, Token: 1}, linOutput{}),
			op(0, 2, 3, linInput{Op: linFencedSwap, Token: 1, Value: "a"}, linOutput{Stored: true, Floor: 1}),
			op(1, 4, 5, linInput{Op: linLoad}, linOutput{}),
		}, porcupine.Illegal},
		{"unknown outcome may have applied", []porcupine.Operation{
			op(0, 0, 1, linInput{Op: linEstablish, Token: 1}, linOutput{}),
			op(0, 2, time.Hour.Nanoseconds(), linInput{Op: linFencedSwap, Token: 1, Value: "a"}, linOutput{Unknown: true}),
			op(1, 4, 5, linInput{Op: linLoad}, linOutput{HasRecord: true, Revision: 1, Value: "a", Floor: 1}),
		}, porcupine.Ok},
		{"zero token", []porcupine.Operation{
			op(0, 0, 1, linInput{Op: linEstablish}, linOutput{}),
		}, porcupine.Illegal},
	}
	for _, c := range cases {
		if got, _ := checkHistory(t, c.ops); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// fatalRecorder is a testing.TB whose Fatalf records the message instead of ending the test.
type fatalRecorder struct {
	testing.TB
	fatal string
}

func (r *fatalRecorder) Fatalf(format string, args ...any) { r.fatal = fmt.Sprintf(format, args...) }

// An illegal history leaves porcupine's visualization behind, in the directory CI keeps, in a
// file the failure message names; a linearizable history leaves nothing.
//
// Spec: STO-029
func TestIllegalHistoryLeavesVisualization(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(artifactsEnv, dir)
	op := func(client int, call, ret int64, in linInput, out linOutput) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Input: in, Output: out, Call: call, Return: ret}
	}
	establish := op(0, 0, 1, linInput{Op: linEstablish, Token: 1}, linOutput{})
	first := op(0, 2, 3, linInput{Op: linFencedSwap, Token: 1, Value: "first-writer"}, linOutput{Stored: true, Floor: 1})
	lost := op(1, 4, 5, linInput{Op: linFencedSwap, Token: 1, Value: "lost-update"}, linOutput{Stored: true, Floor: 1})

	rec := &fatalRecorder{TB: t}
	requireLinearizable(rec, []porcupine.Operation{establish, first}, "legal")
	if rec.fatal != "" {
		t.Fatalf("a legal history failed: %s", rec.fatal)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a legal history left %d files", len(entries))
	}

	requireLinearizable(rec, []porcupine.Operation{establish, first, lost}, "lost update")
	path, ok := strings.CutPrefix(rec.fatal, "lost update: history is Illegal; visualization: ")
	if !ok {
		t.Fatalf("failure message %q does not name a visualization", rec.fatal)
	}
	if filepath.Dir(path) != dir || filepath.Ext(path) != ".html" {
		t.Errorf("visualization %s is not an HTML file in %s", path, dir)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<html", "fenced-cas", "lost-update"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the visualization lacks %q", want)
		}
	}
}
