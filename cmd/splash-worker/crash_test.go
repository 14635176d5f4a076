package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/worker"
	"github.com/splashv5/conform/impl/worker/workertest"
)

// crashStore opens the worker's journal file from the test side, with the same test key.
func crashStore(t testing.TB, db string) (*storage.AuthenticatedStore, func()) {
	t.Helper()
	backend, err := openJournalFile(db)
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := storageKey("")
	if err != nil {
		t.Fatal(err)
	}
	ring, err := storage.NewKeyring("test-only", key)
	if err != nil {
		t.Fatal(err)
	}
	return storage.NewAuthenticatedStore(backend, ring), func() { backend.Close() }
}

type crashTrial struct {
	point string // a persistence point of the faulty build, such as "after-admission"
	mode  string
}

// crashExpectations gives, for a kill at a point after a dispatch in a mode, the durable state
// the journal must hold and whether the effect must be in the effect log.
func crashExpectations(tr crashTrial) (state string, effect bool) {
	performs := tr.mode == "succeed" || tr.mode == "running" || tr.mode == "indeterminate"
	switch tr.point {
	case "after-admission":
		return "pending", false
	case "after-adapter":
		return "pending", performs
	case "after-observation":
		return map[string]string{"succeed": "succeeded", "running": "running", "fail": "failed"}[tr.mode], performs
	}
	return "succeeded", true // after-reconciliation, after an indeterminate dispatch
}

// The worker is killed with SIGKILL while paused at each persistence point; a restarted worker
// on the same journal, with a fresh session and lease, must load the journal, never repeat the
// effect, report a pending operation as pending and reconcile it truthfully, and the killed
// worker's lease must no longer be able to write.
//
// Spec: WRK-042, WRK-046, WRK-071, WRK-073, WRK-081, WRK-083, WRK-094, PRF-013, PRF-014, PRF-019, PRF-020
func TestCrashConsistency(t *testing.T) {
	trials := 8
	if os.Getenv("SPLASH_SOAK") != "" {
		trials = 1000
	}
	seed := uint64(20240611)
	rng := rand.New(rand.NewPCG(seed, seed))
	dir := t.TempDir()
	db := filepath.Join(dir, "journal.db")
	effects := filepath.Join(dir, "effects.log")
	points := []string{"after-admission", "after-adapter", "after-observation", "after-reconciliation"}
	counts := map[string]int{}
	for i := 0; i < trials; i++ {
		tr := crashTrial{point: points[i%len(points)]}
		switch tr.point {
		case "after-admission":
			tr.mode = []string{"succeed", "running", "fail", "indeterminate", "error"}[rng.IntN(5)]
		case "after-reconciliation":
			tr.mode = "indeterminate"
		default:
			tr.mode = []string{"succeed", "running", "fail"}[rng.IntN(3)]
		}
		runCrashTrial(t, i, tr, db, effects)
		wantState, _ := crashExpectations(tr)
		counts[fmt.Sprintf("%-22s %-13s -> %s", tr.point, tr.mode, wantState)]++
	}
	var lines []string
	for k, v := range counts {
		lines = append(lines, fmt.Sprintf("%5d  %s", v, k))
	}
	sort.Strings(lines)
	t.Logf("crash consistency: %d trials (seed %d), by point, mode and durable state:", trials, seed)
	for _, l := range lines {
		t.Log(l)
	}
}

// runCrashTrial runs one trial. The journal file is opened from the test side only while no
// worker runs: a worker holds the file's lock for as long as it lives.
func runCrashTrial(t *testing.T, i int, tr crashTrial, db, effects string) {
	t.Helper()
	ctx := context.Background()
	sc := "t" + strconv.Itoa(i)
	key := "op-" + strconv.Itoa(i)
	value := strconv.Itoa(i)
	args := []string{"--journal", db, "--effect-log", effects, "--scope", sc}
	g := grant(recordTool, 5, 0)
	dispatch := func(h *workertest.Host, id string) protocol.Message {
		return h.Dispatch(id, recordTool, key, workertest.Record(tr.mode, value))
	}
	openJournal := func() (*storage.AuthenticatedStore, *worker.StorageJournalStore, func()) {
		store, closeStore := crashStore(t, db)
		journalStore, err := worker.NewStorageJournalStore(store, "splash-worker-journal", sc, canonjson.Preserve)
		if err != nil {
			t.Fatal(err)
		}
		return store, journalStore, closeStore
	}

	// Before a reconciliation crash, leave a pending operation whose effect happened.
	if tr.point == "after-reconciliation" {
		p := launch(t, "s"+sc+"-0", args...)
		p.open(g)
		p.send(dispatch(p.host, "d0"))
		p.expectExit(6, "IndeterminateOperation")
	}

	// The worker that is killed while paused at the point.
	p := launchFaulty(t, "s"+sc+"-1", append(args, "--fault", "pause-"+tr.point)...)
	p.open(g)
	if tr.point == "after-reconciliation" {
		p.send(p.host.Reconcile("q1", recordTool, key))
	} else {
		p.send(dispatch(p.host, "d1"))
	}
	p.waitFor("fault: paused " + tr.point)
	p.kill()
	if line, err := readLine(p.stdout, 2*time.Second); len(line) != 0 || err == nil {
		t.Fatalf("trial %d: the killed worker answered %q", i, line)
	}
	// The killed worker's lease is the journal's fence: nothing has written since.
	_, journalStore, closeStore := openJournal()
	oldLease, err := journalStore.CurrentFence(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// The journal loads (it is never torn) and holds exactly the state of the point.
	wantState, wantEffect := crashExpectations(tr)
	j, _, err := journalStore.Load(ctx)
	if err != nil {
		t.Fatalf("trial %d %+v: journal does not load after the kill: %v", i, tr, err)
	}
	rec, ok := j.Operation(key)
	if !ok || rec.State.State.WireName() != wantState {
		t.Fatalf("trial %d %+v: durable state %v, want %s", i, tr, rec.State.State, wantState)
	}
	closeStore()

	// A restarted worker answers the exact duplicate from the journal, never a pending state.
	p = launch(t, "s"+sc+"-2", args...)
	p.open(g)
	p.send(dispatch(p.host, "d1"))
	switch wantState {
	case "pending":
		p.expectExit(6, "PendingOperation operation_key="+key)
	case "failed":
		p.expect("operation_result failed " + absence)
		p.expectExit(0, "")
	case "running":
		p.expect("operation_result running")
		p.expectExit(0, "")
	default:
		p.expect(`operation_result succeeded json:{"operation_key":"` + key + `","value":` + value + `}`)
		p.expectExit(0, "")
	}
	// The killed worker's lease can no longer write the journal.
	store, journalStore, closeStore := openJournal()
	rev := storage.ExpectRevision(0)
	if r, err := store.Load(ctx, journalStore.RecordKey()); err != nil || r == nil {
		t.Fatalf("trial %d: journal record: %v", i, err)
	} else {
		*rev = r.Revision
	}
	_, err = store.CompareAndSwapFenced(ctx, journalStore.RecordKey(), rev, []byte("{}"), oldLease)
	if !errors.Is(err, storage.ErrFencingTokenRejected) {
		t.Fatalf("trial %d: the old lease %d could still write: %v", i, oldLease, err)
	}
	closeStore()

	// Reconciliation reports the truth of the effect log, and the effect happened at most once.
	effectsSeen := effectLines(t, effects, "effect", key)
	if effectsSeen > 1 || (effectsSeen == 1) != wantEffect {
		t.Fatalf("trial %d %+v: %d effects in the log, want effect=%v", i, tr, effectsSeen, wantEffect)
	}
	p = launch(t, "s"+sc+"-3", args...)
	p.open(g)
	if wantEffect {
		p.call(p.host.Reconcile("q1", recordTool, key), `reconciled_operation succeeded json:{"operation_key":"`+key+`","value":`+value+`}`)
	} else {
		p.call(p.host.Reconcile("q1", recordTool, key), "reconciled_operation failed "+absence)
	}
	p.expectExit(0, "")
	if n := effectLines(t, effects, "effect", key); n != effectsSeen {
		t.Fatalf("trial %d: recovery performed the effect again (%d lines)", i, n)
	}
}
