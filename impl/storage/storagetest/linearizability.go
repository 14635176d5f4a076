package storagetest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/splashv5/conform/impl/storage"
)

// This file checks that backends are linearizable per record key (STO-029)
// with porcupine, against a model of a fenced register: the state of one key
// is its fence, its revision (0 = absent) and the value written at that
// revision. Clients run as goroutines here and, for a backend that several
// processes share, as separate processes in that backend's tests. A
// deliberately broken backend proves the checker can fail.

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
	Unknown    bool              `json:"unknown,omitempty"`
	Err        storage.ErrorKind `json:"err,omitempty"`
	ErrCurrent uint64            `json:"err_current,omitempty"`
	Token      uint64            `json:"token,omitempty"`
	Stored     bool              `json:"stored,omitempty"`
	Floor      uint64            `json:"floor,omitempty"`
	HasActual  bool              `json:"has_actual,omitempty"`
	Actual     uint64            `json:"actual,omitempty"`
	HasRecord  bool              `json:"has_record,omitempty"`
	Revision   uint64            `json:"revision,omitempty"`
	Value      string            `json:"value,omitempty"`
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
			return s, linOutput{Err: storage.ErrFencingTokenExhausted}
		}
		s.Fence++
		return s, linOutput{Token: s.Fence}
	case linEstablish:
		switch {
		case in.Token == 0:
			return s, linOutput{Err: storage.ErrInvalidFencingToken}
		case in.Token < s.Fence:
			return s, linOutput{Err: storage.ErrFencingTokenRejected, ErrCurrent: s.Fence}
		}
		s.Fence = in.Token
		return s, linOutput{}
	case linFencedSwap:
		switch {
		case in.Token == 0:
			return s, linOutput{Err: storage.ErrInvalidFencingToken}
		case in.Token != s.Fence:
			return s, linOutput{Err: storage.ErrFencingTokenRejected, ErrCurrent: s.Fence}
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
func linCall(ctx context.Context, b storage.Backend, keys []storage.RecordKey, in linInput) linOutput {
	key := keys[in.Key]
	var out linOutput
	var err error
	switch in.Op {
	case linLoad:
		var snap storage.Snapshot
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
			expected = storage.ExpectRevision(in.Expected)
		}
		var res storage.CASOutcome
		res, err = b.CompareAndSwapFenced(ctx, key, expected, storage.StoredRecord{Revision: in.Expected + 1, Bytes: []byte(in.Value)}, in.Token)
		out.Stored, out.Floor = res.Stored, res.RevisionFloor
		if res.ActualRevision != nil {
			out.HasActual, out.Actual = true, *res.ActualRevision
		}
	}
	if err != nil {
		out = linOutput{}
		switch k := kindOf(err); k {
		case storage.ErrFencingTokenRejected:
			out.Err, out.ErrCurrent = k, err.(*storage.Error).CurrentFence
		case storage.ErrInvalidFencingToken, storage.ErrFencingTokenExhausted:
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
func linClient(ctx context.Context, b storage.Backend, keys []storage.RecordKey, client int, seed uint64, n int, clock func() int64, emit func(linRecord)) {
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

// linKeys returns the count record keys of history run.
func linKeys(run, count int) []storage.RecordKey {
	keys := make([]storage.RecordKey, count)
	for i := range keys {
		keys[i] = storage.RecordKey{Namespace: "linearizability", Name: fmt.Sprintf("run-%d-key-%d", run, i)}
	}
	return keys
}

// runGoroutineHistory runs clients concurrently against b and returns the
// recorded history.
func runGoroutineHistory(b storage.Backend, keys []storage.RecordKey, clients, opsPerClient int, seed uint64, clock func() int64) []porcupine.Operation {
	var mu sync.Mutex
	var ops []porcupine.Operation
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			linClient(context.Background(), b, keys, c, seed, opsPerClient, clock, func(r linRecord) {
				mu.Lock()
				ops = append(ops, linOperation(r))
				mu.Unlock()
			})
		})
	}
	wg.Wait()
	return ops
}

// linOperation turns a recorded call into a porcupine operation.
func linOperation(r linRecord) porcupine.Operation {
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

// add counts the calls of one history.
func (s *linStats) add(ops []porcupine.Operation) {
	for i, op := range ops {
		in, out := op.Input.(linInput), op.Output.(linOutput)
		s.calls++
		switch {
		case out.Unknown:
			s.unknown++
		case out.Err == storage.ErrFencingTokenRejected:
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
	if !s.rich() {
		t.Fatal("the histories are too poor to refute linearizability")
	}
}

// rich reports whether the histories hold few unknown outcomes and at least one of every
// event a non-linearizable backend would get wrong.
func (s linStats) rich() bool {
	return s.unknown*20 <= s.calls && s.stored > 0 && s.conflicts > 0 && s.rejected > 0 && s.reserved > 0 && s.overlapping > 0
}

// linPlan sizes a linearizability run: histories, keys per history, clients and calls per
// client.
type linPlan struct {
	runs, keys, clients, ops int
}

// soak reports whether long runs were asked for (SPLASH_SOAK=1).
func soak() bool { return os.Getenv("SPLASH_SOAK") == "1" }

// linScale returns long under soak, else short.
func linScale(short, long linPlan) linPlan {
	if soak() {
		return long
	}
	return short
}

// RunLinearizable runs concurrent clients against b, several histories over several keys,
// and checks with porcupine that every history is linearizable under the fenced register
// model. jitter selects more and longer histories, with a random pause around each call, for
// backends whose calls rarely overlap on their own (in memory, or serialized in-process).
func RunLinearizable(t *testing.T, b storage.Backend, jitter bool) {
	plan := linScale(linPlan{runs: 4, keys: 3, clients: 4, ops: 24}, linPlan{runs: 60, keys: 4, clients: 5, ops: 30})
	seed := uint64(1000)
	if jitter {
		plan = linScale(linPlan{runs: 10, keys: 3, clients: 4, ops: 30}, linPlan{runs: 150, keys: 4, clients: 5, ops: 40})
		b, seed = jitterBackend{b, 200 * time.Microsecond}, 0
	}
	histories := 0
	var stats linStats
	for run := range plan.runs {
		ops := runGoroutineHistory(b, linKeys(run, plan.keys), plan.clients, plan.ops, uint64(run)+seed, monotonicClock())
		requireLinearizable(t, ops, fmt.Sprintf("run %d", run))
		stats.add(ops)
		histories += plan.keys
	}
	stats.require(t)
	t.Logf("%d linearizable histories", histories)
}

// jitterBackend delays each call before and after the wrapped backend runs
// it, so that calls of fast backends overlap in time. The wrapped call stays
// atomic, so a linearizable backend stays linearizable.
type jitterBackend struct {
	storage.Backend
	max time.Duration
}

func (j jitterBackend) pause() { time.Sleep(time.Duration(rand.Int64N(int64(j.max)))) }

func (j jitterBackend) Load(ctx context.Context, key storage.RecordKey) (storage.Snapshot, error) {
	j.pause()
	defer j.pause()
	return j.Backend.Load(ctx, key)
}

func (j jitterBackend) CurrentFence(ctx context.Context, key storage.RecordKey) (uint64, error) {
	j.pause()
	defer j.pause()
	return j.Backend.CurrentFence(ctx, key)
}

func (j jitterBackend) ReserveFence(ctx context.Context, key storage.RecordKey) (uint64, error) {
	j.pause()
	defer j.pause()
	return j.Backend.ReserveFence(ctx, key)
}

func (j jitterBackend) EstablishFence(ctx context.Context, key storage.RecordKey, token uint64) error {
	j.pause()
	defer j.pause()
	return j.Backend.EstablishFence(ctx, key, token)
}

func (j jitterBackend) CompareAndSwapFenced(ctx context.Context, key storage.RecordKey, expected *uint64, replacement storage.StoredRecord, token uint64) (storage.CASOutcome, error) {
	j.pause()
	defer j.pause()
	return j.Backend.CompareAndSwapFenced(ctx, key, expected, replacement, token)
}
