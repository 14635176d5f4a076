package storagetest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// Main runs the tests of a durable backend's package (call it from TestMain), or, in a child
// process started by RunKilledWriter or RunLinearizableProcesses, plays that child's role
// against the backend open returns. It does not return.
func Main(m *testing.M, open OpenDurable) {
	switch {
	case os.Getenv(crashPathEnv) != "":
		os.Exit(crashWriterMain(open))
	case os.Getenv(linDBEnv) != "":
		os.Exit(runLinearizabilityChild(open))
	}
	os.Exit(m.Run())
}

// IsChild reports whether this process is a child started by RunKilledWriter or
// RunLinearizableProcesses, which Main runs instead of the tests.
func IsChild() bool {
	return os.Getenv(crashPathEnv) != "" || os.Getenv(linDBEnv) != ""
}

// childCommand re-executes the test binary with env added to its environment.
func childCommand(t testing.TB, env ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	return cmd
}

// Environment of a linearizability child process.
const (
	linDBEnv      = "SPLASH_STORAGE_LIN_DB"
	linVariantEnv = "SPLASH_STORAGE_LIN_VARIANT"
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
func runLinearizabilityChild(open OpenDurable) int {
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
	b, err := open(ctx, os.Getenv(linDBEnv), os.Getenv(linVariantEnv))
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

// RunLinearizableProcesses runs clients in several processes (the test binary itself, whose
// TestMain must be Main) against one shared file and checks with porcupine that every history,
// with wall-clock timestamps, is linearizable. Runs cycle through variants, each of which
// open receives in every process (a backend setting, such as a journal mode; "" for none).
func RunLinearizableProcesses(t *testing.T, open OpenDurable, variants ...string) {
	if len(variants) == 0 {
		variants = []string{""}
	}
	plan := linScale(linPlan{runs: 2, keys: 3, clients: 2, ops: 16}, linPlan{runs: 50, keys: 4, clients: 2, ops: 24})
	const processes = 3
	dir := t.TempDir()
	histories := 0
	var stats linStats
	// Histories this short may by chance hold no write conflict: runs are added until they
	// hold every kind of event that stats.require asks for, up to maxProcessRuns.
	const maxProcessRuns = 12
	for run := 0; run < plan.runs || !stats.rich() && run < maxProcessRuns; run++ {
		// Cycle through the variants; each has its own file.
		variant := variants[run%len(variants)]
		path := filepath.Join(dir, "shared-"+variant+".db")
		setup, err := open(ctxb(), path, variant)
		if err != nil {
			t.Fatal(err)
		}
		if err := setup.Close(); err != nil {
			t.Fatal(err)
		}
		start := time.Now().Add(400 * time.Millisecond).UnixNano()
		results := make([][]linRecord, processes)
		errs := make([]error, processes)
		var wg sync.WaitGroup
		for p := range processes {
			cmd := childCommand(t,
				linDBEnv+"="+path, linVariantEnv+"="+variant, linRunEnv+"="+strconv.Itoa(run), linKeysEnv+"="+strconv.Itoa(plan.keys),
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
				ops = append(ops, linOperation(r))
			}
		}
		requireLinearizable(t, ops, fmt.Sprintf("run %d", run))
		stats.add(ops)
		histories += plan.keys
	}
	stats.require(t)
	t.Logf("%d linearizable multi-process histories", histories)
}
