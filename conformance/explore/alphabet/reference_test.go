package alphabet_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/splashv5/conform/conformance/explore/alphabet"
	"github.com/splashv5/conform/conformance/explore/learn"
	"github.com/splashv5/conform/conformance/explore/mealy"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/spec"
)

// quiet is how long a step waits for more output after the last line (or after the input)
// before it counts the worker as quiet. Only this cross-check uses a clock.
const quiet = 250 * time.Millisecond

var (
	buildOnce sync.Once
	buildDir  string
	workerBin string
	buildErr  error
)

// TestMain removes the reference worker built for the cross-check.
func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// referenceWorker builds cmd/splash-worker once.
func referenceWorker(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		root, err := spec.FindModuleRoot(".")
		if err != nil {
			buildErr = err
			return
		}
		buildDir, err = os.MkdirTemp("", "explore-worker-")
		if err != nil {
			buildErr = err
			return
		}
		workerBin = filepath.Join(buildDir, "splash-worker")
		cmd := exec.Command("go", "build", "-o", workerBin, "./cmd/splash-worker")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = errors.New(string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("building the reference worker: %v", buildErr)
	}
	return workerBin
}

// runWord runs word against a fresh reference worker process and returns the abstract output
// of each step.
func runWord(t *testing.T, bin string, n int, word []alphabet.Name, needs ...alphabet.Need) []alphabet.Output {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--journal", filepath.Join(dir, "journal.db"), "--effect-log", filepath.Join(dir, "effects.log"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan []byte)
	status := make(chan alphabet.Exit, 1)
	go func() {
		r := bufio.NewReaderSize(stdout, 64<<10)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 && line[len(line)-1] == '\n' {
				lines <- line[:len(line)-1]
			}
			if err != nil {
				break
			}
		}
		close(lines)
		err := cmd.Wait()
		var ee *exec.ExitError
		switch {
		case err == nil:
			status <- 0
		case errors.As(err, &ee) && ee.ExitCode() >= 0:
			status <- alphabet.Exit(ee.ExitCode())
		default:
			status <- alphabet.Killed
		}
	}()
	ended := false
	defer func() {
		_ = stdin.Close()
		if !ended {
			_ = cmd.Process.Kill()
			for range lines {
			}
			<-status
		}
	}()

	raw := make([]byte, protocol.SessionKeyBytes)
	if _, err := rand.Read(raw); err != nil {
		t.Fatal(err)
	}
	key, err := protocol.NewSessionKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	defer key.Close()
	s, err := alphabet.NewSession("explore-"+strconv.Itoa(n), key, canonjson.Preserve, needs...)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WriteBootstrap(stdin); err != nil {
		t.Fatal(err)
	}
	var outs []alphabet.Output
	for _, sym := range word {
		if ended {
			outs = append(outs, alphabet.Output{Exit: alphabet.Gone})
			continue
		}
		a, err := s.Concretize(sym)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case a.EndInput:
			_ = stdin.Close()
		case a.Line != nil:
			_, _ = stdin.Write(append(a.Line, '\n')) // a worker that ended refuses the write
		}
		obs := alphabet.Observation{Exit: alphabet.Running}
		timer := time.NewTimer(quiet)
	collect:
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					obs.Exit = <-status
					ended = true
					break collect
				}
				obs.Lines = append(obs.Lines, line)
				timer.Reset(quiet)
			case <-timer.C:
				break collect
			}
		}
		timer.Stop()
		outs = append(outs, s.Abstract(obs))
	}
	return outs
}

// Spec: EXP-014 — the machine derived from the worker rules is what the reference worker does:
// every word of the chapters' table, run against the real reference worker process.
func TestExpectedMachineAgreesWithTheReferenceWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the reference worker")
	}
	bin := referenceWorker(t)
	var names []alphabet.Name
	for _, s := range alphabet.Symbols {
		if s.Simulated {
			names = append(names, s.Name)
		}
	}
	m, err := alphabet.Expected(names)
	if err != nil {
		t.Fatal(err)
	}
	A, C := alphabet.OpenBaseline, alphabet.OpenCancellable
	words := [][]alphabet.Name{
		{alphabet.Invoke, alphabet.Invoke},
		{alphabet.EndOfInput},
		{A, alphabet.Invoke, alphabet.Invoke, alphabet.EndOfInput},
		{A, alphabet.Invoke, alphabet.InvokeReusedID},
		{A, alphabet.InvokeReusedID, alphabet.EndOfInput},
		{A, alphabet.CloseSession},
		{A, alphabet.Invoke, alphabet.CancelFinished},
		{A, alphabet.InvokeBadTag},
		{C, alphabet.InvokeWrongSeq},
		{alphabet.InvokeForged},
		{A, alphabet.OpenAgain},
		{C, alphabet.ResultFromHost},
		{C, alphabet.InvokeSlow, alphabet.CancelCurrent, alphabet.CloseSession},
		{C, alphabet.InvokeSlow, alphabet.CancelCurrent, alphabet.CancelCurrent},
		{C, alphabet.InvokeSlow, alphabet.Invoke},
		{C, alphabet.InvokeSlow, alphabet.CloseSession},
		{C, alphabet.InvokeSlow, alphabet.EndOfInput},
		{C, alphabet.InvokeSlow, alphabet.CancelUnknown},
		{C, alphabet.InvokeSlow, alphabet.CancelFinished},
		{C, alphabet.Invoke, alphabet.CancelFinished, alphabet.CancelFinished},
		{C, alphabet.Invoke, alphabet.CancelCurrent, alphabet.Invoke, alphabet.CancelCurrent, alphabet.EndOfInput},
		{C, alphabet.CancelCurrent},
		{C, alphabet.CloseSession, alphabet.Invoke},
		{A, alphabet.InvokeSlow},
		{C, alphabet.InvokeOverLimit},
		{A, alphabet.InvokeOverLimit},
		{A, alphabet.CompensateScope},
		{C, alphabet.Invoke, alphabet.InvokeReusedID},
	}
	durable := [][]alphabet.Name{
		{A, alphabet.Invoke, alphabet.CompensateScope},
		{A, alphabet.Invoke, alphabet.InvokeReusedID, alphabet.EndOfInput},
		{C, alphabet.CompensateScope},
	}
	for n, w := range append(words, durable...) {
		var needs []alphabet.Need
		if n >= len(words) {
			needs = []alphabet.Need{alphabet.NeedDurable, alphabet.NeedCompensation, alphabet.NeedCancel}
		}
		want, _ := m.Run(w)
		got := runWord(t, bin, n, w, needs...)
		for i := range w {
			if got[i] != want[i] {
				t.Errorf("%v: step %d (%s): the reference worker did %q, the expected machine says %q", w, i, w[i], got[i], want[i])
				break
			}
		}
	}
}

// Spec: EXP-004, EXP-006, EXP-014 — learning the reference worker black-box, one fresh process
// per query, recovers the expected machine. It runs only when EXPLORE_LEARN_REFERENCE is set:
// each silent step waits for the quiet period, so it takes tens of seconds.
func TestLearningTheReferenceWorkerGivesTheExpectedMachine(t *testing.T) {
	if os.Getenv("EXPLORE_LEARN_REFERENCE") == "" {
		t.Skip("set EXPLORE_LEARN_REFERENCE=1 to learn the reference worker")
	}
	bin := referenceWorker(t)
	names := []alphabet.Name{alphabet.OpenCancellable, alphabet.InvokeSlow, alphabet.Invoke, alphabet.CancelCurrent, alphabet.CloseSession, alphabet.EndOfInput}
	want, err := alphabet.Expected(names)
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	oracle := learn.Parallel(2, func(_ context.Context, w []alphabet.Name) ([]alphabet.Output, error) {
		return runWord(t, bin, int(n.Add(1)), w, alphabet.NeedCancel), nil
	})
	start := time.Now()
	got, stats, err := learn.LearnLSharp(context.Background(), oracle, learn.Config[alphabet.Name, alphabet.Output]{
		Inputs: names, Sink: alphabet.Sink, Equivalence: learn.Chain[alphabet.Name, alphabet.Output]{learn.WpMethod[alphabet.Name, alphabet.Output]{Extra: 1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d symbols: %d states learned with %d processes (%d symbols) in %s", len(names), got.States(), stats.Queries, stats.Symbols, time.Since(start).Round(time.Millisecond))
	if diffs, _ := mealy.Differences(want, got, 0); len(diffs) > 0 {
		for _, d := range diffs {
			t.Errorf("%v: expected %v, the reference worker did %v", d.Word, d.Expected, d.Observed)
		}
	}
}
