//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/worker/workertest"
)

// leanChild is a child process driven the way a load generator drives a server: over two
// blocking pipes whose ends the driver reads and writes with bare system calls, with no
// buffering, decoding or authentication of its own.
type leanChild struct {
	cmd     *exec.Cmd
	in, out int // the driver's ends: the child's standard input and standard output
	buf     []byte
	lat     []time.Duration
}

// startLean starts path with args on two fresh blocking pipes.
func startLean(b *testing.B, path string, args ...string) *leanChild {
	b.Helper()
	var in, out [2]int
	if err := syscall.Pipe2(in[:], syscall.O_CLOEXEC); err != nil {
		b.Fatal(err)
	}
	if err := syscall.Pipe2(out[:], syscall.O_CLOEXEC); err != nil {
		b.Fatal(err)
	}
	stdin, stdout := os.NewFile(uintptr(in[0]), "stdin"), os.NewFile(uintptr(out[1]), "stdout")
	c := &leanChild{cmd: exec.Command(path, args...), in: in[1], out: out[0], buf: make([]byte, 64<<10)}
	c.cmd.Stdin, c.cmd.Stdout = stdin, stdout
	if err := c.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	_ = stdin.Close()
	_ = stdout.Close()
	b.Cleanup(c.stop)
	return c
}

// stop closes the child's input and reaps it.
func (c *leanChild) stop() {
	if c.in >= 0 {
		_ = syscall.Close(c.in)
		c.in = -1
	}
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
	if c.out >= 0 {
		_ = syscall.Close(c.out)
		c.out = -1
	}
}

// write writes all of p to the child's input.
func (c *leanChild) write(b *testing.B, p []byte) {
	for len(p) > 0 {
		n, err := syscall.Write(c.in, p)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			b.Fatalf("writing to the child: %v", err)
		}
		p = p[n:]
	}
}

// readLine reads until the child has written one whole line, which must be the last
// thing it wrote, and returns the line.
func (c *leanChild) readLine(b *testing.B) []byte {
	n := 0
	for {
		if n == len(c.buf) {
			b.Fatal("answer longer than the read buffer")
		}
		m, err := syscall.Read(c.out, c.buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil || m == 0 {
			b.Fatalf("reading from the child: %v (read %d bytes)", err, n)
		}
		n += m
		if c.buf[n-1] == '\n' {
			return c.buf[:n]
		}
	}
}

// roundTrip writes frame and reads the answer, timing the two.
func (c *leanChild) roundTrip(b *testing.B, frame []byte) []byte {
	start := time.Now()
	c.write(b, frame)
	line := c.readLine(b)
	c.lat = append(c.lat, time.Since(start))
	return line
}

// BenchmarkLeanRoundTrip drives the worker with a lean loop: the invoke frames of a session
// (a 256-byte text echo) are sealed before the clock runs, and each iteration writes one to
// the worker's input and reads the answer line back, with nothing else in the loop: the host
// side neither seals nor opens anything while it is timed. cat, driven by the same loop with
// the same frames in the same iterations, is the floor of a round trip over two pipes on the
// machine at that moment. A session reserves at most 1,024 request ids, so a new worker is
// started with the clock stopped every 1,000 calls.
//
// goecho (testdata/goecho), a line echo in Go, runs in the same iterations too: the floor of
// any Go process on the same path, which tells the runtime's share from the worker's.
//
// It reports each child's round trips per second of its own latency (worker-rt/s, cat-rt/s,
// goecho-rt/s), the ratios to cat (worker/cat, goecho/cat), the p50s and p99s, and the
// worker's p50 over cat's (over-cat-p50-µs), and per round trip each child's CPU time
// (…-cpu-µs) and how often its threads were switched out (…-switches).
// docs/performance.md compares these with the Rust-built worker's measured ratio to cat.
func BenchmarkLeanRoundTrip(b *testing.B) {
	const perSession = 1000
	payload := text(strings.Repeat("x", 256))
	want := []byte(`"type":"result"`)
	echoed := []byte(`"value":"` + strings.Repeat("x", 256) + `"`)
	catPath, err := exec.LookPath("cat")
	if err != nil {
		b.Skip("no cat to measure the floor with")
	}
	cat := startLean(b, catPath)
	goecho := startLean(b, goEcho(b))
	var w *leanChild
	var frames [][]byte
	var workerLat []time.Duration
	var workerUsage childUsage
	sessions, n := 0, 0
	restart := func() {
		if w != nil {
			workerUsage.stop()
			workerLat = append(workerLat, w.lat...)
			w.stop()
		}
		sessions++
		host, err := workertest.NewHost("lean-" + strconv.Itoa(sessions))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(host.Close)
		w = startLean(b, workerBinary)
		w.write(b, host.Bootstrap())
		w.write(b, append(host.Seal(host.OpenSession(grant(echoTool, perSession, 0))), '\n'))
		frames = frames[:0]
		for i := range perSession {
			frames = append(frames, append(host.Seal(host.Invoke("r"+strconv.Itoa(i), echoTool, payload)), '\n'))
		}
		// The first call opens the session; it is not timed.
		if line := w.roundTrip(b, frames[0]); !bytes.Contains(line, want) || !bytes.Contains(line, echoed) {
			b.Fatalf("unexpected answer %q", line)
		}
		w.lat = w.lat[:0]
		workerUsage.start(w.cmd.Process.Pid)
		n = 1
	}
	restart()
	var catUsage, goUsage childUsage
	catUsage.start(cat.cmd.Process.Pid)
	goUsage.start(goecho.cmd.Process.Pid)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if n == perSession {
			b.StopTimer()
			restart()
			b.StartTimer()
		}
		frame := frames[n]
		if line := cat.roundTrip(b, frame); len(line) != len(frame) {
			b.Fatalf("cat answered %d bytes for %d", len(line), len(frame))
		}
		if line := goecho.roundTrip(b, frame); len(line) != len(frame) {
			b.Fatalf("goecho answered %d bytes for %d", len(line), len(frame))
		}
		if line := w.roundTrip(b, frame); !bytes.Contains(line, want) || !bytes.Contains(line, echoed) {
			b.Fatalf("unexpected answer %q", line)
		}
		n++
	}
	b.StopTimer()
	workerUsage.stop()
	catUsage.stop()
	goUsage.stop()
	workerUsage.report(b, "worker")
	catUsage.report(b, "cat")
	goUsage.report(b, "goecho")
	workerLat = append(workerLat, w.lat...)
	catLat := cat.lat
	goLat := goecho.lat
	workerRate, catRate, goRate := roundTripsPerSecond(workerLat), roundTripsPerSecond(catLat), roundTripsPerSecond(goLat)
	b.ReportMetric(workerRate, "worker-rt/s")
	b.ReportMetric(catRate, "cat-rt/s")
	b.ReportMetric(goRate, "goecho-rt/s")
	if catRate > 0 {
		b.ReportMetric(workerRate/catRate, "worker/cat")
		b.ReportMetric(goRate/catRate, "goecho/cat")
	}
	slices.Sort(workerLat)
	slices.Sort(catLat)
	slices.Sort(goLat)
	if len(workerLat) > 0 && len(catLat) > 0 && len(goLat) > 0 {
		b.ReportMetric(percentile(workerLat, 0.50), "worker-p50-µs")
		b.ReportMetric(percentile(catLat, 0.50), "cat-p50-µs")
		b.ReportMetric(percentile(goLat, 0.50), "goecho-p50-µs")
		b.ReportMetric(percentile(workerLat, 0.99), "worker-p99-µs")
		b.ReportMetric(percentile(catLat, 0.99), "cat-p99-µs")
		b.ReportMetric(percentile(workerLat, 0.50)-percentile(catLat, 0.50), "over-cat-p50-µs")
	}
}
