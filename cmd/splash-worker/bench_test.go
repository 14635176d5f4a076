package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/worker/workertest"
)

// percentile returns the p-quantile of sorted latencies in microseconds.
func percentile(sorted []time.Duration, p float64) float64 {
	return float64(sorted[int(p*float64(len(sorted)-1))]) / 1e3
}

// reportLatencies adds throughput and latency percentiles to a benchmark's output.
func reportLatencies(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	b.ReportMetric(percentile(lat, 0.50), "p50-µs")
	b.ReportMetric(percentile(lat, 0.99), "p99-µs")
}

// childCPU returns the CPU time all threads of process pid have used so far, from the
// scheduler's per-thread accounting (nanosecond resolution, unlike rusage's clock ticks),
// or -1 where that is not available.
func childCPU(pid int) time.Duration {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return -1
	}
	var total time.Duration
	for _, t := range tasks {
		data, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread ended
		}
		f := strings.Fields(string(data))
		if len(f) == 0 {
			return -1
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return -1
		}
		total += time.Duration(ns)
	}
	return total
}

// echoChild is a bare line echo (cat) driven exactly like the worker: the host seals each
// invoke and a worker-role authenticator opens what comes back, so the echo's round trip
// carries the same host-side work (one seal, one open of a frame of the same size) and only
// the worker process is missing from it.
type echoChild struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	host   *workertest.Host
	opener *protocol.Authenticator
}

func startEcho(b *testing.B) *echoChild {
	b.Helper()
	path, err := exec.LookPath("cat")
	if err != nil {
		b.Skip("no cat to measure the floor with")
	}
	host, err := workertest.NewHost("bench-echo")
	if err != nil {
		b.Fatal(err)
	}
	opener, err := host.WorkerAuthenticator(canonjson.Preserve)
	if err != nil {
		b.Fatal(err)
	}
	e := &echoChild{cmd: exec.Command(path), host: host, opener: opener}
	if e.stdin, err = e.cmd.StdinPipe(); err != nil {
		b.Fatal(err)
	}
	out, err := e.cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	e.stdout = bufio.NewReader(out)
	if err := e.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = e.stdin.Close()
		_ = e.cmd.Wait()
		opener.Close()
		host.Close()
	})
	return e
}

// roundTrip sends one sealed invoke through the echo and opens it.
func (e *echoChild) roundTrip(b *testing.B, m protocol.Message) {
	if _, err := e.stdin.Write(append(e.host.Seal(m), '\n')); err != nil {
		b.Fatal(err)
	}
	line, err := readLine(e.stdout, 10*time.Second)
	if err != nil {
		b.Fatalf("no echo: %v", err)
	}
	if _, err := e.opener.Open(line[:len(line)-1]); err != nil {
		b.Fatal(err)
	}
}

// One 256-byte text echo over the worker's real stdin and stdout pipes: the host seals the
// invoke, the worker opens, authorizes, runs the adapter, validates and seals the result, and
// the host opens it. A session can reserve at most 1,024 request ids, so a new worker is
// started (with the timer stopped) every 1,000 calls.
//
// Every iteration also sends the same invoke through a bare line echo (cat), the floor of a
// round trip over two pipes on this machine, right before the worker's, so both see the same
// load. Besides the worker's p50 and p99 it reports the echo's (echo-p50-µs, echo-p99-µs),
// the worker's own cost (own-p50-µs: its p50 minus the echo's; own-p99-µs likewise), and the
// CPU time each child used per round trip (worker-cpu-µs, echo-cpu-µs). ns/op covers both
// round trips.
func BenchmarkInvokeRoundTrip(b *testing.B) {
	payload := text(strings.Repeat("x", 256))
	const perSession = 1000
	var p *proc
	var workerCPU time.Duration
	sessions, n := 0, 0
	sessionCPU := time.Duration(0)
	endSession := func() {
		if p == nil {
			return
		}
		if c := childCPU(p.cmd.Process.Pid); c >= 0 && sessionCPU >= 0 {
			workerCPU += c - sessionCPU
		}
		p.end()
	}
	restart := func() {
		endSession()
		sessions++
		p = launch(b, "bench-"+strconv.Itoa(sessions))
		p.open(grant(echoTool, perSession, 0))
		// Wait for the session to be open, then start counting the worker's CPU.
		p.call(p.host.Invoke("warm", echoTool, payload), "result text:"+strings.Repeat("x", 256))
		sessionCPU = childCPU(p.cmd.Process.Pid)
		n = 1
	}
	echo := startEcho(b)
	restart()
	echoStart := childCPU(echo.cmd.Process.Pid)
	lat := make([]time.Duration, 0, b.N)
	echoLat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if n == perSession {
			b.StopTimer()
			restart()
			b.StartTimer()
		}
		start := time.Now()
		echo.roundTrip(b, echo.host.Invoke("r"+strconv.Itoa(i), echoTool, payload))
		echoLat = append(echoLat, time.Since(start))

		start = time.Now()
		p.send(p.host.Invoke("r"+strconv.Itoa(n), echoTool, payload))
		line, err := readLine(p.stdout, 10*time.Second)
		if err != nil {
			b.Fatalf("no answer: %v (stderr: %s)", err, p.stderr)
		}
		if _, err := p.host.Open(line); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		n++
	}
	b.StopTimer()
	echoCPU := childCPU(echo.cmd.Process.Pid) - echoStart
	endSession()
	reportLatencies(b, lat)
	slices.Sort(echoLat)
	b.ReportMetric(percentile(echoLat, 0.50), "echo-p50-µs")
	b.ReportMetric(percentile(echoLat, 0.99), "echo-p99-µs")
	b.ReportMetric(percentile(lat, 0.50)-percentile(echoLat, 0.50), "own-p50-µs")
	b.ReportMetric(percentile(lat, 0.99)-percentile(echoLat, 0.99), "own-p99-µs")
	if workerCPU > 0 && echoStart >= 0 {
		b.ReportMetric(float64(workerCPU)/1e3/float64(b.N), "worker-cpu-µs")
		b.ReportMetric(float64(echoCPU)/1e3/float64(b.N), "echo-cpu-µs")
	}
}

// One durable dispatch of a new operation key against the SQLite journal: the admission and
// the observation are each persisted (fenced compare-and-swap, synchronous commit) and the
// effect line is synced before the answer. A journal scope holds at most 64 operations, so a
// new worker with a new scope is started (with the timer stopped) every 60 dispatches.
func BenchmarkDurableDispatchSQLite(b *testing.B) {
	dir := b.TempDir()
	db := filepath.Join(dir, "journal.db")
	effects := filepath.Join(dir, "effects.log")
	const perSession = 60
	var p *proc
	sessions, n := 0, 0
	restart := func() {
		if p != nil {
			p.end()
		}
		sessions++
		sc := "bench-" + strconv.Itoa(sessions)
		p = launch(b, sc, "--journal", db, "--effect-log", effects, "--scope", sc)
		p.open(grant(recordTool, perSession, 0))
		n = 0
	}
	restart()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if n == perSession {
			b.StopTimer()
			restart()
			b.StartTimer()
		}
		start := time.Now()
		key := "op-" + strconv.Itoa(n)
		p.send(p.host.Dispatch("d"+strconv.Itoa(n), recordTool, key, workertest.Record("succeed", `"v"`)))
		line, err := readLine(p.stdout, 10*time.Second)
		if err != nil {
			b.Fatalf("no answer: %v (stderr: %s)", err, p.stderr)
		}
		if _, err := p.host.Open(line); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		n++
	}
	b.StopTimer()
	reportLatencies(b, lat)
	p.end()
}
