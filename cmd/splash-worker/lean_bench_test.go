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

// leanWorker is a worker binary under the lean loop: a new process and session every
// perSession calls (a session reserves at most 1,024 request ids), with the session's invoke
// frames sealed before the clock runs.
type leanWorker struct {
	path     string
	name     string
	child    *leanChild
	frames   [][]byte
	next     int // the index of the next frame to send
	sessions int
	lat      []time.Duration
	usage    childUsage
}

// leanPerSession is how many calls the lean loop makes in one worker session.
const leanPerSession = 1000

// leanPayload is the payload the lean loop echoes: 256 bytes of text.
var leanPayload = strings.Repeat("x", 256)

// ready makes sure the worker can take its next call, starting a new process and session,
// whose first call is not timed, when the current one has made all of its calls.
func (w *leanWorker) ready(b *testing.B) {
	if w.child != nil && w.next < leanPerSession {
		return
	}
	if w.child != nil {
		w.usage.stop()
		w.lat = append(w.lat, w.child.lat...)
		w.child.stop()
	}
	w.sessions++
	host, err := workertest.NewHost("lean-" + w.name + "-" + strconv.Itoa(w.sessions))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(host.Close)
	w.child = startLean(b, w.path)
	w.child.write(b, host.Bootstrap())
	w.child.write(b, append(host.Seal(host.OpenSession(grant(echoTool, leanPerSession, 0))), '\n'))
	w.frames = w.frames[:0]
	for i := range leanPerSession {
		w.frames = append(w.frames, append(host.Seal(host.Invoke("r"+strconv.Itoa(i), echoTool, text(leanPayload))), '\n'))
	}
	w.next = 0
	w.call(b) // opens the session
	w.child.lat = w.child.lat[:0]
	w.usage.start(w.child.cmd.Process.Pid)
}

// call makes the worker's next call and checks its answer.
func (w *leanWorker) call(b *testing.B) {
	line := w.child.roundTrip(b, w.frames[w.next])
	if !bytes.Contains(line, []byte(`"type":"result"`)) || !bytes.Contains(line, []byte(`"value":"`+leanPayload+`"`)) {
		b.Fatalf("%s: unexpected answer %q", w.name, line)
	}
	w.next++
}

// finish stops the measurement and returns every timed round trip, sorted.
func (w *leanWorker) finish() []time.Duration {
	w.usage.stop()
	w.lat = append(w.lat, w.child.lat...)
	w.child.lat = nil
	slices.Sort(w.lat)
	return w.lat
}

// leanFloor is an echo the lean loop drives beside the workers, with the same frames in the
// same iterations: a floor the workers' round trips are compared with.
type leanFloor struct {
	name  string
	child *leanChild
	usage childUsage
}

// leanBlock is how many round trips in a row the lean loop makes with each child before it
// turns to the next: SPLASH_LEAN_BLOCK, 1 when unset. With 1 the children take turns round
// trip by round trip, so a drift in the machine's load reaches each alike; with a block of
// 100 each child is driven back to back, as a load generator drives one server, and keeps its
// caches warm between round trips (docs/performance.md compares the two).
func leanBlock(b *testing.B) int {
	v := os.Getenv("SPLASH_LEAN_BLOCK")
	if v == "" {
		return 1
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > leanPerSession {
		b.Fatalf("SPLASH_LEAN_BLOCK=%q: want a number of round trips from 1 to %d", v, leanPerSession)
	}
	return n
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
// any Go process on the same path, which tells the runtime's share from the worker's. So does
// hashecho, goecho computing a keyed BLAKE3 hash of each line twice before echoing it: the
// floor of any Go worker, which must compute the tag of each frame it opens and of each answer
// it seals. With
// SPLASH_LEAN_BASELINE set to the path of another worker binary (an earlier build, say), that
// worker runs in the same iterations as well, the two taking turns to go first, so a change is
// measured before and after in one run. SPLASH_LEAN_BLOCK (see leanBlock) makes the loop drive
// each child for that many round trips in a row instead of one.
//
// It reports each child's round trips per second of its own latency (worker-rt/s, cat-rt/s,
// goecho-rt/s, hashecho-rt/s, baseline-rt/s), the ratios to cat (worker/cat, …), the
// p50s and p99s, and the worker's p50 over cat's (over-cat-p50-µs), and per round trip each
// child's CPU time (…-cpu-µs), how often its threads were switched out (…-switches) and its
// page faults (…-faults). docs/performance.md compares these with the Rust-built worker's
// measured ratio to cat.
func BenchmarkLeanRoundTrip(b *testing.B) {
	catPath, err := exec.LookPath("cat")
	if err != nil {
		b.Skip("no cat to measure the floor with")
	}
	goecho := goEcho(b)
	floors := []*leanFloor{
		{name: "cat", child: startLean(b, catPath)},
		{name: "goecho", child: startLean(b, goecho)},
		{name: "hashecho", child: startLean(b, goecho, "hash")},
	}
	workers := []*leanWorker{{path: workerBinary, name: "worker"}}
	if path := os.Getenv("SPLASH_LEAN_BASELINE"); path != "" {
		workers = append(workers, &leanWorker{path: path, name: "baseline"})
	}
	for _, w := range workers {
		w.ready(b)
	}
	// The floors echo the worker's frames, which are as long as every answer.
	floorFrame := workers[0].frames[1]
	for _, f := range floors {
		f.usage.start(f.child.cmd.Process.Pid)
	}
	block := leanBlock(b)
	b.ResetTimer()
	for i := 0; i < b.N; i += block {
		n := min(block, b.N-i)
		for _, f := range floors {
			for range n {
				if line := f.child.roundTrip(b, floorFrame); len(line) != len(floorFrame) {
					b.Fatalf("%s answered %d bytes for %d", f.name, len(line), len(floorFrame))
				}
			}
		}
		// The workers take turns going first, so neither gains from its place in the loop.
		for k := range workers {
			w := workers[(k+i/block)%len(workers)]
			for range n {
				if w.next == leanPerSession {
					b.StopTimer()
					w.ready(b)
					b.StartTimer()
				}
				w.call(b)
			}
		}
	}
	b.StopTimer()
	for _, f := range floors {
		f.usage.stop()
		slices.Sort(f.child.lat)
	}
	catLat := floors[0].child.lat
	catRate := roundTripsPerSecond(catLat)
	report := func(name string, lat []time.Duration) {
		rate := roundTripsPerSecond(lat)
		b.ReportMetric(rate, name+"-rt/s")
		if catRate > 0 && name != "cat" {
			b.ReportMetric(rate/catRate, name+"/cat")
		}
		if len(lat) > 0 {
			b.ReportMetric(percentile(lat, 0.50), name+"-p50-µs")
		}
	}
	for _, f := range floors {
		f.usage.report(b, f.name)
		report(f.name, f.child.lat)
	}
	for _, w := range workers {
		lat := w.finish()
		w.usage.report(b, w.name)
		report(w.name, lat)
		if len(lat) > 0 && len(catLat) > 0 {
			b.ReportMetric(percentile(lat, 0.99), w.name+"-p99-µs")
			if w.name == "worker" {
				b.ReportMetric(percentile(lat, 0.50)-percentile(catLat, 0.50), "over-cat-p50-µs")
			}
		}
	}
	if len(catLat) > 0 {
		b.ReportMetric(percentile(catLat, 0.99), "cat-p99-µs")
	}
}
