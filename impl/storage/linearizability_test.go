package storage

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// This file checks that backends are linearizable per record key (STO-029)
// with porcupine, against a model of a fenced register: the state of one key
// is its fence, its revision (0 = absent) and the value written at that
// revision. Clients run as goroutines and, for SQLite, as separate
// processes. A deliberately broken backend proves the checker can fail.

type linOp uint8

const (
	linLoad linOp = iota + 1
	linCurrentFence
	linReserve
	linEstablish
	linFencedSwap
)

var linOpNames = map[linOp]string{
	linLoad: "load", linCurrentFence: "current", linReserve: "reserve",
	linEstablish: "establish", linFencedSwap: "fenced-cas",
}

// linInput is one call. Key selects the record key (the history partition).
type linInput struct {
	Key         int    `json:"key"`
	Op          linOp  `json:"op"`
	Token       uint64 `json:"token,omitempty"`
	HasExpected bool   `json:"has_expected,omitempty"`
	Expected    uint64 `json:"expected,omitempty"`
	Value       string `json:"value,omitempty"`
}

// linOutput is one observed result. Unknown marks a call whose outcome is
// unknown (an I/O failure): it may or may not have taken effect.
type linOutput struct {
	Unknown    bool      `json:"unknown,omitempty"`
	Err        ErrorKind `json:"err,omitempty"`
	ErrCurrent uint64    `json:"err_current,omitempty"`
	Token      uint64    `json:"token,omitempty"`
	Stored     bool      `json:"stored,omitempty"`
	Floor      uint64    `json:"floor,omitempty"`
	HasActual  bool      `json:"has_actual,omitempty"`
	Actual     uint64    `json:"actual,omitempty"`
	HasRecord  bool      `json:"has_record,omitempty"`
	Revision   uint64    `json:"revision,omitempty"`
	Value      string    `json:"value,omitempty"`
}

type linState struct {
	Fence    uint64
	Revision uint64
	Value    string
}

// linApply is the sequential specification: the next state and the output
// a correct backend gives for in.
func linApply(s linState, in linInput) (linState, linOutput) {
	switch in.Op {
	case linLoad:
		return s, linOutput{HasRecord: s.Revision != 0, Revision: s.Revision, Value: s.Value, Floor: s.Revision}
	case linCurrentFence:
		return s, linOutput{Token: s.Fence}
	case linReserve:
		if s.Fence == math.MaxUint64 {
			return s, linOutput{Err: ErrFencingTokenExhausted}
		}
		s.Fence++
		return s, linOutput{Token: s.Fence}
	case linEstablish:
		switch {
		case in.Token == 0:
			return s, linOutput{Err: ErrInvalidFencingToken}
		case in.Token < s.Fence:
			return s, linOutput{Err: ErrFencingTokenRejected, ErrCurrent: s.Fence}
		}
		s.Fence = in.Token
		return s, linOutput{}
	case linFencedSwap:
		switch {
		case in.Token == 0:
			return s, linOutput{Err: ErrInvalidFencingToken}
		case in.Token != s.Fence:
			return s, linOutput{Err: ErrFencingTokenRejected, ErrCurrent: s.Fence}
		}
		matches := in.HasExpected == (s.Revision != 0) && (!in.HasExpected || in.Expected == s.Revision)
		if !matches {
			return s, linOutput{HasActual: s.Revision != 0, Actual: s.Revision, Floor: s.Revision}
		}
		s.Revision++
		s.Value = in.Value
		return s, linOutput{Stored: true, Floor: s.Revision}
	}
	panic("unknown operation")
}

var fencedRegisterModel = porcupine.NondeterministicModel{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[int][]porcupine.Operation{}
		var keys []int
		for _, op := range history {
			k := op.Input.(linInput).Key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		var parts [][]porcupine.Operation
		for _, k := range keys {
			parts = append(parts, byKey[k])
		}
		return parts
	},
	Init: func() []interface{} { return []interface{}{linState{}} },
	Step: func(state, input, output interface{}) []interface{} {
		s, in, out := state.(linState), input.(linInput), output.(linOutput)
		next, want := linApply(s, in)
		if out.Unknown {
			return []interface{}{s, next}
		}
		if out == want {
			return []interface{}{next}
		}
		return nil
	},
	Equal: func(a, b interface{}) bool { return a.(linState) == b.(linState) },
	DescribeOperation: func(input, output interface{}) string {
		in, out := input.(linInput), output.(linOutput)
		call := linOpNames[in.Op]
		switch in.Op {
		case linEstablish:
			call += fmt.Sprintf("(%d)", in.Token)
		case linFencedSwap:
			exp := "absent"
			if in.HasExpected {
				exp = strconv.FormatUint(in.Expected, 10)
			}
			call += fmt.Sprintf("(t=%d, expect %s, %s)", in.Token, exp, in.Value)
		}
		switch {
		case out.Unknown:
			return call + " -> unknown"
		case out.Err != 0:
			return fmt.Sprintf("%s -> %v(current %d)", call, out.Err, out.ErrCurrent)
		case in.Op == linLoad:
			return fmt.Sprintf("%s -> rev %d %q floor %d", call, out.Revision, out.Value, out.Floor)
		case in.Op == linFencedSwap && out.Stored:
			return fmt.Sprintf("%s -> stored floor %d", call, out.Floor)
		case in.Op == linFencedSwap:
			return fmt.Sprintf("%s -> conflict actual %d floor %d", call, out.Actual, out.Floor)
		default:
			return fmt.Sprintf("%s -> %d", call, out.Token)
		}
	},
	DescribeState: func(state interface{}) string {
		s := state.(linState)
		return fmt.Sprintf("fence %d, rev %d %q", s.Fence, s.Revision, s.Value)
	},
}

// linRecord is one completed call as recorded by a client.
type linRecord struct {
	Client int       `json:"client"`
	Input  linInput  `json:"input"`
	Output linOutput `json:"output"`
	Call   int64     `json:"call"`
	Return int64     `json:"return"`
}

// linCall performs in against b and translates the result.
func linCall(ctx context.Context, b Backend, keys []RecordKey, in linInput) linOutput {
	key := keys[in.Key]
	var out linOutput
	var err error
	switch in.Op {
	case linLoad:
		var snap Snapshot
		snap, err = b.Load(ctx, key)
		out.Floor = snap.RevisionFloor
		if snap.Record != nil {
			out.HasRecord, out.Revision, out.Value = true, snap.Record.Revision, string(snap.Record.Bytes)
		}
	case linCurrentFence:
		out.Token, err = b.CurrentFence(ctx, key)
	case linReserve:
		out.Token, err = b.ReserveFence(ctx, key)
	case linEstablish:
		err = b.EstablishFence(ctx, key, in.Token)
	case linFencedSwap:
		var expected *uint64
		if in.HasExpected {
			expected = ExpectRevision(in.Expected)
		}
		var res CASOutcome
		res, err = b.CompareAndSwapFenced(ctx, key, expected, StoredRecord{Revision: in.Expected + 1, Bytes: []byte(in.Value)}, in.Token)
		out.Stored, out.Floor = res.Stored, res.RevisionFloor
		if res.ActualRevision != nil {
			out.HasActual, out.Actual = true, *res.ActualRevision
		}
	}
	if err != nil {
		out = linOutput{}
		switch k := kindOf(err); k {
		case ErrFencingTokenRejected:
			out.Err, out.ErrCurrent = k, err.(*Error).CurrentFence
		case ErrInvalidFencingToken, ErrFencingTokenExhausted:
			out.Err = k
		default:
			out.Unknown = true
		}
	}
	return out
}

// linClient runs a random workload of n calls for one client. A client
// keeps the lease it last reserved and the revision it last observed, as a
// worker does, and sometimes misbehaves (a stale lease, token 0) so that
// every branch of the model is exercised.
func linClient(ctx context.Context, b Backend, keys []RecordKey, client int, seed uint64, n int, clock func() int64, emit func(linRecord)) {
	rng := rand.New(rand.NewPCG(seed, uint64(client)))
	leases := make([]uint64, len(keys))
	stale := make([]uint64, len(keys))
	seen := make([]uint64, len(keys))
	for i := range n {
		k := rng.IntN(len(keys))
		if i < len(keys) {
			k = i
		}
		in := linInput{Key: k}
		switch r := rng.IntN(100); {
		case i < len(keys) || r < 18:
			// Admission: every client starts by reserving a lease per key.
			in.Op = linReserve
		case r < 28:
			in.Op = linEstablish
			in.Token = leases[k]
			if rng.IntN(4) == 0 {
				in.Token = stale[k]
			}
		case r < 62:
			in.Op = linFencedSwap
			in.Token = leases[k]
			if rng.IntN(8) == 0 {
				in.Token = stale[k]
			}
			in.HasExpected, in.Expected = seen[k] != 0, seen[k]
			in.Value = fmt.Sprintf("c%d-op%d", client, i)
		case r < 90:
			in.Op = linLoad
		default:
			in.Op = linCurrentFence
		}
		call := clock()
		out := linCall(ctx, b, keys, in)
		ret := clock()
		if out.Unknown {
			ret = math.MaxInt64
		}
		emit(linRecord{Client: client, Input: in, Output: out, Call: call, Return: ret})
		switch {
		case in.Op == linReserve && out.Err == 0 && !out.Unknown:
			stale[in.Key], leases[in.Key] = leases[in.Key], out.Token
		case in.Op == linLoad && !out.Unknown:
			seen[in.Key] = out.Revision
		case in.Op == linFencedSwap && out.Stored:
			seen[in.Key] = out.Floor
		case in.Op == linFencedSwap && out.Err == 0 && !out.Unknown:
			seen[in.Key] = out.Actual
		}
	}
}

func linKeys(run, count int) []RecordKey {
	keys := make([]RecordKey, count)
	for i := range keys {
		keys[i] = RecordKey{Namespace: "linearizability", Name: fmt.Sprintf("run-%d-key-%d", run, i)}
	}
	return keys
}

// runGoroutineHistory runs clients concurrently against b and returns the
// recorded history.
func runGoroutineHistory(b Backend, keys []RecordKey, clients, opsPerClient int, seed uint64, clock func() int64) []porcupine.Operation {
	var mu sync.Mutex
	var ops []porcupine.Operation
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			linClient(context.Background(), b, keys, c, seed, opsPerClient, clock, func(r linRecord) {
				mu.Lock()
				ops = append(ops, recordToOperation(r))
				mu.Unlock()
			})
		})
	}
	wg.Wait()
	return ops
}

func recordToOperation(r linRecord) porcupine.Operation {
	return porcupine.Operation{ClientId: r.Client, Input: r.Input, Output: r.Output, Call: r.Call, Return: r.Return}
}

// monotonicClock returns nanoseconds since its creation, from the
// monotonic clock.
func monotonicClock() func() int64 {
	start := time.Now()
	return func() int64 { return int64(time.Since(start)) }
}

// checkHistory runs porcupine and returns its verdict and what porcupine needs to draw the
// history.
func checkHistory(t testing.TB, ops []porcupine.Operation) (porcupine.CheckResult, porcupine.LinearizationInfo) {
	t.Helper()
	return porcupine.CheckOperationsVerbose(fencedRegisterModel.ToModel(), ops, 30*time.Second)
}

// artifactsEnv names a directory that keeps the visualizations of failed linearizability
// checks (CI uploads it); the default is the system's temporary directory.
const artifactsEnv = "SPLASH_ARTIFACTS"

// requireLinearizable fails the test unless ops are linearizable. For an illegal history it
// first writes porcupine's visualization to a file that the failure message names, so that
// the history can be looked at in a browser rather than read.
func requireLinearizable(t testing.TB, ops []porcupine.Operation, what string) {
	t.Helper()
	res, info := checkHistory(t, ops)
	switch res {
	case porcupine.Ok:
		return
	case porcupine.Illegal:
		t.Fatalf("%s: history is %s; %s", what, res, visualizeHistory(t, info))
	default:
		t.Fatalf("%s: history is %s (porcupine timed out)", what, res)
	}
}

// visualizeHistory writes porcupine's visualization of info to a new HTML file and returns
// "visualization: PATH", or why there is none.
func visualizeHistory(t testing.TB, info porcupine.LinearizationInfo) string {
	dir := os.Getenv(artifactsEnv)
	if dir == "" {
		dir = os.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return "no visualization: " + err.Error()
	}
	name := strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
	f, err := os.CreateTemp(dir, "linearizability-"+name+"-*.html")
	if err != nil {
		return "no visualization: " + err.Error()
	}
	err = porcupine.Visualize(fencedRegisterModel.ToModel(), info, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "no visualization: " + err.Error()
	}
	return "visualization: " + f.Name()
}

// linStats counts what a set of histories exercised, so that a test cannot
// pass on histories too poor to be refuted (for example all outcomes
// unknown, or no concurrency at all).
type linStats struct {
	calls, unknown, stored, conflicts, rejected, reserved, overlapping int
}

func (s *linStats) add(ops []porcupine.Operation) {
	for i, op := range ops {
		in, out := op.Input.(linInput), op.Output.(linOutput)
		s.calls++
		switch {
		case out.Unknown:
			s.unknown++
		case out.Err == ErrFencingTokenRejected:
			s.rejected++
		case in.Op == linFencedSwap && out.Err == 0 && out.Stored:
			s.stored++
		case in.Op == linFencedSwap && out.Err == 0:
			s.conflicts++
		case in.Op == linReserve && out.Err == 0:
			s.reserved++
		}
		for j, other := range ops {
			if j != i && other.ClientId != op.ClientId && other.Input.(linInput).Key == in.Key &&
				other.Call < op.Return && op.Call < other.Return {
				s.overlapping++
				break
			}
		}
	}
}

// require fails unless the histories had known outcomes, successful and
// failed writes, fencing rejections, and operations that overlapped in time.
func (s linStats) require(t testing.TB) {
	t.Helper()
	t.Logf("calls %d (unknown %d): %d stored, %d conflicts, %d fence rejections, %d reservations, %d overlapping",
		s.calls, s.unknown, s.stored, s.conflicts, s.rejected, s.reserved, s.overlapping)
	if s.unknown*20 > s.calls || s.stored == 0 || s.conflicts == 0 || s.rejected == 0 || s.reserved == 0 || s.overlapping == 0 {
		t.Fatal("the histories are too poor to refute linearizability")
	}
}

type linPlan struct {
	runs, keys, clients, ops int
}

func linScale(short, long linPlan) linPlan {
	if soak() {
		return long
	}
	return short
}

// Spec: STO-029, STO-026, STO-027, STO-028
func TestLinearizableMemoryBackend(t *testing.T) {
	plan := linScale(linPlan{runs: 10, keys: 3, clients: 4, ops: 30}, linPlan{runs: 150, keys: 4, clients: 5, ops: 40})
	histories := 0
	var stats linStats
	for run := range plan.runs {
		ops := runGoroutineHistory(jitterBackend{NewMemoryBackend(), 200 * time.Microsecond}, linKeys(run, plan.keys), plan.clients, plan.ops, uint64(run), monotonicClock())
		requireLinearizable(t, ops, fmt.Sprintf("run %d", run))
		stats.add(ops)
		histories += plan.keys
	}
	stats.require(t)
	t.Logf("%d linearizable histories", histories)
}

// Spec: STO-029, STO-061
func TestLinearizableSQLiteBackendGoroutines(t *testing.T) {
	plan := linScale(linPlan{runs: 4, keys: 3, clients: 4, ops: 24}, linPlan{runs: 60, keys: 4, clients: 5, ops: 30})
	b := openTestSQLite(t, JournalWAL)
	histories := 0
	var stats linStats
	for run := range plan.runs {
		ops := runGoroutineHistory(b, linKeys(run, plan.keys), plan.clients, plan.ops, uint64(run)+1000, monotonicClock())
		requireLinearizable(t, ops, fmt.Sprintf("run %d", run))
		stats.add(ops)
		histories += plan.keys
	}
	stats.require(t)
	t.Logf("%d linearizable histories", histories)
}

// Environment of a linearizability child process.
const (
	linDBEnv      = "SPLASH_STORAGE_LIN_DB"
	linModeEnv    = "SPLASH_STORAGE_LIN_JOURNAL_MODE"
	linRunEnv     = "SPLASH_STORAGE_LIN_RUN"
	linKeysEnv    = "SPLASH_STORAGE_LIN_KEYS"
	linClientsEnv = "SPLASH_STORAGE_LIN_CLIENTS"
	linFirstEnv   = "SPLASH_STORAGE_LIN_FIRST_CLIENT"
	linOpsEnv     = "SPLASH_STORAGE_LIN_OPS"
	linStartEnv   = "SPLASH_STORAGE_LIN_START"
)

// runLinearizabilityChild runs this process's clients against the shared
// database and prints every recorded call as one JSON line. Timestamps are
// wall-clock nanoseconds, comparable between processes of one machine.
func runLinearizabilityChild() int {
	env := func(name string) int {
		v, err := strconv.Atoi(os.Getenv(name))
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			os.Exit(2)
		}
		return v
	}
	run, nKeys, clients, first, n, start := env(linRunEnv), env(linKeysEnv), env(linClientsEnv), env(linFirstEnv), env(linOpsEnv), env(linStartEnv)
	ctx := context.Background()
	mode := JournalWAL
	if os.Getenv(linModeEnv) == JournalDelete.String() {
		mode = JournalDelete
	}
	b, err := OpenSQLite(ctx, os.Getenv(linDBEnv), &SQLiteOptions{JournalMode: mode})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer b.Close()
	// Start together with the other processes.
	time.Sleep(time.Until(time.Unix(0, int64(start))))
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	var wg sync.WaitGroup
	for c := first; c < first+clients; c++ {
		wg.Go(func() {
			linClient(ctx, b, linKeys(run, nKeys), c, uint64(run)+5000, n, func() int64 { return time.Now().UnixNano() }, func(r linRecord) {
				mu.Lock()
				_ = enc.Encode(r)
				mu.Unlock()
			})
		})
	}
	wg.Wait()
	if err := out.Flush(); err != nil {
		return 1
	}
	return 0
}

// Spec: STO-029, STO-061
func TestLinearizableSQLiteBackendProcesses(t *testing.T) {
	plan := linScale(linPlan{runs: 2, keys: 3, clients: 2, ops: 16}, linPlan{runs: 50, keys: 4, clients: 2, ops: 24})
	const processes = 3
	dir := t.TempDir()
	histories := 0
	var stats linStats
	for run := range plan.runs {
		// Alternate the journal modes; each has its own database file.
		mode := []SQLiteJournalMode{JournalWAL, JournalDelete}[run%2]
		path := filepath.Join(dir, "shared-"+mode.String()+".db")
		setup := openSQLiteAt(t, path, mode)
		_ = setup.Close()
		start := time.Now().Add(400 * time.Millisecond).UnixNano()
		results := make([][]linRecord, processes)
		errs := make([]error, processes)
		var wg sync.WaitGroup
		for p := range processes {
			cmd := childCommand(t, "linearizability-client",
				linDBEnv+"="+path, linModeEnv+"="+mode.String(), linRunEnv+"="+strconv.Itoa(run), linKeysEnv+"="+strconv.Itoa(plan.keys),
				linClientsEnv+"="+strconv.Itoa(plan.clients), linFirstEnv+"="+strconv.Itoa(p*plan.clients),
				linOpsEnv+"="+strconv.Itoa(plan.ops), linStartEnv+"="+strconv.FormatInt(start, 10))
			wg.Go(func() {
				stdout, err := cmd.Output()
				if err != nil {
					errs[p] = fmt.Errorf("child %d: %w", p, err)
					return
				}
				sc := bufio.NewScanner(bytes.NewReader(stdout))
				for sc.Scan() {
					var r linRecord
					if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
						errs[p] = err
						return
					}
					results[p] = append(results[p], r)
				}
			})
		}
		wg.Wait()
		var ops []porcupine.Operation
		for p := range processes {
			if errs[p] != nil {
				t.Fatal(errs[p])
			}
			if len(results[p]) != plan.clients*plan.ops {
				t.Fatalf("child %d recorded %d calls, want %d", p, len(results[p]), plan.clients*plan.ops)
			}
			for _, r := range results[p] {
				ops = append(ops, recordToOperation(r))
			}
		}
		requireLinearizable(t, ops, fmt.Sprintf("run %d", run))
		stats.add(ops)
		histories += plan.keys
	}
	stats.require(t)
	t.Logf("%d linearizable multi-process histories", histories)
}

// jitterBackend delays each call before and after the wrapped backend runs
// it, so that calls of fast backends overlap in time. The wrapped call stays
// atomic, so a linearizable backend stays linearizable.
type jitterBackend struct {
	Backend
	max time.Duration
}

func (j jitterBackend) pause() { time.Sleep(time.Duration(rand.Int64N(int64(j.max)))) }

func (j jitterBackend) Load(ctx context.Context, key RecordKey) (Snapshot, error) {
	j.pause()
	defer j.pause()
	return j.Backend.Load(ctx, key)
}

func (j jitterBackend) CurrentFence(ctx context.Context, key RecordKey) (uint64, error) {
	j.pause()
	defer j.pause()
	return j.Backend.CurrentFence(ctx, key)
}

func (j jitterBackend) ReserveFence(ctx context.Context, key RecordKey) (uint64, error) {
	j.pause()
	defer j.pause()
	return j.Backend.ReserveFence(ctx, key)
}

func (j jitterBackend) EstablishFence(ctx context.Context, key RecordKey, token uint64) error {
	j.pause()
	defer j.pause()
	return j.Backend.EstablishFence(ctx, key, token)
}

func (j jitterBackend) CompareAndSwapFenced(ctx context.Context, key RecordKey, expected *uint64, replacement StoredRecord, token uint64) (CASOutcome, error) {
	j.pause()
	defer j.pause()
	return j.Backend.CompareAndSwapFenced(ctx, key, expected, replacement, token)
}
