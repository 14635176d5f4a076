package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/storage/boltstore"
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

// roundTripsPerSecond returns how many round trips of the given latencies fit in a second
// when they follow one another.
func roundTripsPerSecond(lat []time.Duration) float64 {
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	if sum <= 0 {
		return 0
	}
	return float64(len(lat)) / sum.Seconds()
}

// childStat is what a child process has used so far.
type childStat struct {
	cpu      time.Duration // CPU time of all its threads
	switches int64         // times its threads were switched out
	faults   int64         // minor page faults: first touches of fresh memory, mostly
}

// childStats returns what process pid has used so far: the CPU time of all its threads, from
// the scheduler's per-thread accounting (nanosecond resolution, unlike rusage's clock ticks),
// how many times they have been switched out (voluntarily: blocked or slept; and
// involuntarily), and its minor page faults, or ok == false where that is not available.
func childStats(pid int) (st childStat, ok bool) {
	proc := "/proc/" + strconv.Itoa(pid)
	tasks, err := os.ReadDir(proc + "/task")
	if err != nil {
		return childStat{}, false
	}
	for _, t := range tasks {
		data, err := os.ReadFile(proc + "/task/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread ended
		}
		f := strings.Fields(string(data))
		if len(f) == 0 {
			return childStat{}, false
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return childStat{}, false
		}
		st.cpu += time.Duration(ns)
		status, err := os.ReadFile(proc + "/task/" + t.Name() + "/status")
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(status)) {
			if rest, found := strings.CutPrefix(line, "voluntary_ctxt_switches:"); found {
				n, _ := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
				st.switches += n
			} else if rest, found := strings.CutPrefix(line, "nonvoluntary_ctxt_switches:"); found {
				n, _ := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
				st.switches += n
			}
		}
	}
	// /proc/PID/stat: the command name is in parentheses and may hold spaces; minflt is the
	// seventh field after it.
	data, err := os.ReadFile(proc + "/stat")
	if err != nil {
		return childStat{}, false
	}
	if i := bytes.LastIndexByte(data, ')'); i >= 0 {
		if f := strings.Fields(string(data[i+1:])); len(f) > 7 {
			st.faults, _ = strconv.ParseInt(f[7], 10, 64)
		}
	}
	return st, true
}

// childUsage accumulates what a child uses over measured stretches.
type childUsage struct {
	pid               int
	begin, used       childStat
	measuring, broken bool
}

func (u *childUsage) start(pid int) {
	u.pid = pid
	u.begin, u.measuring = childStat{}, false
	if st, ok := childStats(pid); ok {
		u.begin, u.measuring = st, true
	} else {
		u.broken = true
	}
}

func (u *childUsage) stop() {
	if !u.measuring {
		return
	}
	u.measuring = false
	if st, ok := childStats(u.pid); ok {
		u.used.cpu += st.cpu - u.begin.cpu
		u.used.switches += st.switches - u.begin.switches
		u.used.faults += st.faults - u.begin.faults
	} else {
		u.broken = true
	}
}

// report adds the usage per round trip as name-cpu-µs, name-switches and name-faults.
func (u *childUsage) report(b *testing.B, name string) {
	if u.broken || b.N == 0 {
		return
	}
	b.ReportMetric(float64(u.used.cpu)/1e3/float64(b.N), name+"-cpu-µs")
	b.ReportMetric(float64(u.used.switches)/float64(b.N), name+"-switches")
	b.ReportMetric(float64(u.used.faults)/float64(b.N), name+"-faults")
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

func startEcho(b *testing.B, path string) *echoChild {
	b.Helper()
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

// goEcho builds testdata/goecho, a line echo written in Go, into a temporary directory.
func goEcho(b *testing.B) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "goecho")
	if out, err := exec.Command("go", "build", "-o", path, "./testdata/goecho").CombinedOutput(); err != nil {
		b.Fatalf("building the Go line echo: %v\n%s", err, out)
	}
	return path
}

// One 256-byte text echo over the worker's real stdin and stdout pipes: the host seals the
// invoke, the worker opens, authorizes, runs the adapter, validates and seals the result, and
// the host opens it. A session can reserve at most 1,024 request ids, so a new worker is
// started (with the timer stopped) every 1,000 calls.
//
// Every iteration also sends the same invoke through two bare line echoes right before the
// worker's, so all three see the same load: cat, the floor of a round trip over two pipes on
// this machine, and goecho (testdata/goecho), the same echo written in Go, the floor of any Go
// process that reads a line and writes it back with blocking system calls. Besides the
// worker's p50 and p99 it reports each echo's (echo-p50-µs, goecho-p50-µs, and p99 likewise),
// the worker's own cost over cat (own-p50-µs: its p50 minus cat's; own-p99-µs likewise) and
// over goecho (own-go-p50-µs), and per round trip the CPU time each child used (worker-cpu-µs,
// echo-cpu-µs, goecho-cpu-µs) and how often its threads were switched out (…-switches), which
// depends much less on the machine's load than latency does. ns/op covers the three round
// trips.
func BenchmarkInvokeRoundTrip(b *testing.B) {
	payload := text(strings.Repeat("x", 256))
	const perSession = 1000
	var p *proc
	var workerUsage childUsage
	sessions, n := 0, 0
	restart := func() {
		if p != nil {
			workerUsage.stop()
			p.end()
		}
		sessions++
		p = launch(b, "bench-"+strconv.Itoa(sessions))
		p.open(grant(echoTool, perSession, 0))
		// Wait for the session to be open, then start counting the worker's usage.
		p.call(p.host.Invoke("warm", echoTool, payload), "result text:"+strings.Repeat("x", 256))
		workerUsage.start(p.cmd.Process.Pid)
		n = 1
	}
	cat, err := exec.LookPath("cat")
	if err != nil {
		b.Skip("no cat to measure the floor with")
	}
	echoes := []*echoChild{startEcho(b, cat), startEcho(b, goEcho(b))}
	echoNames := []string{"echo", "goecho"}
	restart()
	echoUsage := make([]childUsage, len(echoes))
	echoLat := make([][]time.Duration, len(echoes))
	for i, e := range echoes {
		echoUsage[i].start(e.cmd.Process.Pid)
		echoLat[i] = make([]time.Duration, 0, b.N)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if n == perSession {
			b.StopTimer()
			restart()
			b.StartTimer()
		}
		for k, e := range echoes {
			start := time.Now()
			e.roundTrip(b, e.host.Invoke("r"+strconv.Itoa(i), echoTool, payload))
			echoLat[k] = append(echoLat[k], time.Since(start))
		}

		start := time.Now()
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
	workerUsage.stop()
	p.end()
	// ops/s counts iterations, each of which drives every child once; rt/s is one child's
	// round trips per second of its own latency, the throughput it alone would have.
	b.ReportMetric(roundTripsPerSecond(lat), "worker-rt/s")
	reportLatencies(b, lat)
	for k := range echoes {
		echoUsage[k].stop()
		name := echoNames[k]
		b.ReportMetric(roundTripsPerSecond(echoLat[k]), name+"-rt/s")
		slices.Sort(echoLat[k])
		b.ReportMetric(percentile(echoLat[k], 0.50), name+"-p50-µs")
		b.ReportMetric(percentile(echoLat[k], 0.99), name+"-p99-µs")
		echoUsage[k].report(b, name)
	}
	b.ReportMetric(percentile(lat, 0.50)-percentile(echoLat[0], 0.50), "own-p50-µs")
	b.ReportMetric(percentile(lat, 0.99)-percentile(echoLat[0], 0.99), "own-p99-µs")
	b.ReportMetric(percentile(lat, 0.50)-percentile(echoLat[1], 0.50), "own-go-p50-µs")
	workerUsage.report(b, "worker")
}

// BenchmarkDurableDispatch is one durable dispatch of a new operation key whose result is
// 100 random printable characters (a new value each time: incompressible), the way a user
// runs it: the worker process over its pipes, with a journal and an effect log. The
// admission and the observation are each persisted (a fenced compare-and-swap made durable)
// and the effect line is synced, before the answer. A scope holds at most 64 operations, so
// a new worker with a new scope on the same journal is started (with the timer stopped) every
// 64 dispatches; an echo call waits until its session is open.
//
// Each dispatch is followed, in the same iteration, by its floor: exactly the durable steps
// the protocol needs, of the same sizes, and nothing else. For a journal file that is the two
// frames the worker wrote (read back from the file), each written at the end of a
// preallocated file on the same file system and made durable with fdatasync, around the
// effect line appended and synced as the effect log does (for the bbolt journal, whose
// writes cannot be read back so, frames of 512 bytes). For etcd it is the two transactions
// the worker committed, replayed with values of the same sizes under another prefix of the
// same member, each guarded by a modification revision as the worker's are, around the same
// effect line. Besides the dispatch's p50 and p99 it reports the floor's (floor-p50-µs,
// floor-p99-µs), their ratios (x-floor-p50, x-floor-p99), and the dispatch's p50 by record
// index in its scope: the first dispatch (idx0-p50-µs), the last (idx63-p50-µs), and the
// first and last eight (first8-p50-µs, last8-p50-µs, last8/first8), and the worker's CPU
// time, context switches and page faults per dispatch (worker-cpu-µs, …); for etcd also the bytes
// the member wrote per dispatch (write-ahead log and database file, etcd-written-B), for the
// first and the last eight dispatches of the scopes.
//
// The log is the worker's journal file format; the bbolt run is the format of earlier
// releases, which the worker still opens. The etcd runs use a one-member cluster on loopback
// (the splashetcd build), with the machine's witness file and without it. With the witness
// a second floor follows in the same iteration: the same transactions, each followed by the
// witness's step (a record of about 190 bytes appended to a preallocated local file and made
// durable with fdatasync), around the same effect line (floor-witness-p50-µs, …, and the
// ratios x-floor-witness-p50 and x-floor-witness-p99).
//
// SPLASH_DURABLE_DIR puts the journal, the effect log and the floor's files in a directory
// of that file system instead of the system's temporary directory. SPLASH_DURABLE_BASELINE=PATH
// runs the worker binary at PATH in the same iterations as the one under test (log and bbolt
// only), on a journal of its own, the two taking turns to go first, each dispatch followed by
// its own floor: it reports the baseline's figures (baseline-…) and the ratios of the p50 and
// p99 to it (x-baseline-p50, x-baseline-p99), so that a change is measured before and after
// under the same load.
func BenchmarkDurableDispatch(b *testing.B) {
	b.Run("log", func(b *testing.B) {
		durableDispatch(b, workerBinary, filepath.Join(durableDir(b), "journal.log"), &journalFile{})
	})
	b.Run("bolt", func(b *testing.B) {
		durableDispatch(b, workerBinary, filepath.Join(durableDir(b), "journal.db"), &journalFile{bolt: true})
	})
	b.Run("etcd", func(b *testing.B) { durableEtcd(b, true) })
	b.Run("etcd-no-witness", func(b *testing.B) { durableEtcd(b, false) })
}

func durableEtcd(b *testing.B, witness bool) {
	c := benchMember(b)
	durableDispatch(b, binaries.MustWorker(b, "splashetcd"), journalURL(c, "splash/bench"), journalEtcd{witness: witness, rec: &etcdFloor{member: c}})
}

// durableDir returns a new directory for a durable benchmark's files, removed when it ends.
func durableDir(b *testing.B) string {
	parent := os.Getenv("SPLASH_DURABLE_DIR")
	if parent == "" {
		return b.TempDir()
	}
	dir, err := os.MkdirTemp(parent, "durable")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// perScope is how many dispatches a benchmark runs in one scope: the most a journal holds.
const perScope = 64

// journalKind is a journal the durable benchmark drives, and its floor.
type journalKind interface {
	// args are the worker's journal flags.
	args(b *testing.B) []string
	// prepare runs once before the first worker starts.
	prepare(b *testing.B, journal string)
	// steps returns what the worker wrote since the last call (for a session's start, only
	// to pass it).
	steps(b *testing.B) []int
	// floor performs the journal's floor of one dispatch around effect (which performs the
	// effect line's sync) and returns how long it took.
	floor(b *testing.B, steps []int, effect func()) time.Duration
}

// dispatchObserver is a journalKind that measures something around each dispatch.
type dispatchObserver interface {
	before(b *testing.B)
	after(b *testing.B, index int)
}

// journalFile is a local journal file, log or bbolt.
type journalFile struct {
	bolt   bool
	frames *frameReader
	sync   *syncFloor
}

func (j *journalFile) args(*testing.B) []string { return nil }

func (j *journalFile) prepare(b *testing.B, journal string) {
	if j.bolt {
		db, err := boltstore.Open(journal, nil)
		if err != nil {
			b.Fatal(err)
		}
		db.Close()
	} else {
		j.frames = &frameReader{path: journal}
	}
	j.sync = newSyncFloor(b, filepath.Dir(journal))
}

func (j *journalFile) steps(b *testing.B) []int {
	if j.frames == nil {
		return []int{512, 512}
	}
	return j.frames.next(b)
}

func (j *journalFile) floor(b *testing.B, steps []int, effect func()) time.Duration {
	if len(steps) != 2 {
		b.Fatalf("the dispatch wrote %d journal frames, want 2", len(steps))
	}
	start := time.Now()
	j.sync.step(b, steps[0])
	effect()
	j.sync.step(b, steps[1])
	return time.Since(start)
}

func durableDispatch(b *testing.B, bin, journal string, kind journalKind) {
	run := newDurableRun(b, bin, journal, kind)
	// SPLASH_DURABLE_BASELINE runs a second worker binary in the same iterations, on a journal
	// of its own in another directory of the same file system, the two taking turns to go
	// first, so that a change is measured before and after under the same load.
	var base *durableRun
	if path := os.Getenv("SPLASH_DURABLE_BASELINE"); path != "" {
		if j, ok := kind.(*journalFile); ok {
			base = newDurableRun(b, path, filepath.Join(durableDir(b), filepath.Base(journal)), &journalFile{bolt: j.bolt})
		}
	}
	rnd := rand.New(rand.NewPCG(11, 12))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		value := strconv.Quote(randomText(rnd, 100))
		// The order changes every iteration, and every scope, so that the first dispatches
		// of new processes (the slowest) too go first as often for each.
		baseFirst := (i+i/perScope)%2 == 1
		if base != nil && baseFirst {
			base.one(b, value)
		}
		run.one(b, value)
		if base != nil && !baseFirst {
			base.one(b, value)
		}
	}
	b.StopTimer()
	run.report(b, "")
	if base != nil {
		base.report(b, "baseline-")
		b.ReportMetric(percentile(run.lat, 0.50)/percentile(base.lat, 0.50), "x-baseline-p50")
		b.ReportMetric(percentile(run.lat, 0.99)/percentile(base.lat, 0.99), "x-baseline-p99")
	}
}

// durableRun is one worker binary under BenchmarkDurableDispatch: its journal, effect log,
// current process and what was measured.
type durableRun struct {
	bin, journal, effects string
	kind                  journalKind
	floorEffects          *os.File
	effectBuf             []byte
	effectSize            int64
	p                     *proc
	usage                 childUsage
	sessions, n           int
	lat, floorLat         []time.Duration
	byIndex               [][]time.Duration
}

func newDurableRun(b *testing.B, bin, journal string, kind journalKind) *durableRun {
	dir := durableDir(b)
	r := &durableRun{bin: bin, journal: journal, effects: filepath.Join(dir, "effects.log"), kind: kind,
		effectBuf: make([]byte, 64<<10), byIndex: make([][]time.Duration, perScope),
		lat: make([]time.Duration, 0, b.N), floorLat: make([]time.Duration, 0, b.N)}
	kind.prepare(b, journal)
	var err error
	r.floorEffects, err = os.OpenFile(filepath.Join(dir, "floor.effects"), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.floorEffects.Close() })
	r.restart(b)
	return r
}

// restart starts a new worker with a new scope on the same journal, with the timer stopped.
func (r *durableRun) restart(b *testing.B) {
	b.StopTimer()
	defer b.StartTimer()
	if r.p != nil {
		r.usage.stop()
		r.p.end()
	}
	r.sessions++
	sc := "bench-" + strconv.Itoa(r.sessions)
	args := append([]string{"--journal", r.journal, "--effect-log", r.effects, "--scope", sc}, r.kind.args(b)...)
	r.p = start(b, r.bin, mustHost(b, sc), args...)
	r.p.write(r.p.host.Bootstrap())
	r.p.open(grant(recordTool, perScope, 0), grant(echoTool, 1, 0))
	// The opening has no answer: an echo waits until the session is open (admitted).
	r.p.call(r.p.host.Invoke("warm", echoTool, text("w")), "result text:w")
	r.n = 0
	r.kind.steps(b)
	r.effectSize = fileSize(b, r.effects)
	r.usage.start(r.p.cmd.Process.Pid)
}

// one runs one dispatch with result value, then its floor.
func (r *durableRun) one(b *testing.B, value string) {
	if r.n == perScope {
		r.restart(b)
	}
	observer, observed := r.kind.(dispatchObserver)
	if observed {
		observer.before(b)
	}
	p := r.p
	start := time.Now()
	key := "op-" + strconv.Itoa(r.n)
	p.send(p.host.Dispatch("d"+strconv.Itoa(r.n), recordTool, key, workertest.Record("succeed", value)))
	line, err := readLine(p.stdout, 10*time.Second)
	if err != nil {
		b.Fatalf("no answer: %v (stderr: %s)", err, p.stderr)
	}
	if _, err := p.host.Open(line); err != nil {
		b.Fatal(err)
	}
	d := time.Since(start)
	if observed {
		observer.after(b, r.n)
	}
	r.lat = append(r.lat, d)
	r.byIndex[r.n] = append(r.byIndex[r.n], d)
	r.n++

	// The floor, with the sizes this dispatch wrote.
	steps := r.kind.steps(b)
	size := fileSize(b, r.effects)
	effect := int(size - r.effectSize)
	r.effectSize = size
	r.floorLat = append(r.floorLat, r.kind.floor(b, steps, func() {
		r.effectBuf[0]++
		if _, err := r.floorEffects.Write(r.effectBuf[:effect]); err != nil {
			b.Fatal(err)
		}
		if err := r.floorEffects.Sync(); err != nil {
			b.Fatal(err)
		}
	}))
}

// report ends the worker and reports what was measured, each metric's name prefixed.
func (r *durableRun) report(b *testing.B, prefix string) {
	r.usage.stop()
	r.p.end()
	if prefix == "" {
		reportLatencies(b, r.lat)
	} else {
		slices.Sort(r.lat)
		b.ReportMetric(percentile(r.lat, 0.50), prefix+"p50-µs")
		b.ReportMetric(percentile(r.lat, 0.99), prefix+"p99-µs")
	}
	r.usage.report(b, prefix+"worker")
	slices.Sort(r.floorLat)
	f50, f99 := percentile(r.floorLat, 0.50), percentile(r.floorLat, 0.99)
	b.ReportMetric(f50, prefix+"floor-p50-µs")
	b.ReportMetric(f99, prefix+"floor-p99-µs")
	b.ReportMetric(percentile(r.lat, 0.50)/f50, prefix+"x-floor-p50")
	b.ReportMetric(percentile(r.lat, 0.99)/f99, prefix+"x-floor-p99")
	if prefix != "" {
		return
	}
	reportByIndex(b, r.byIndex)
	if j, ok := r.kind.(*journalFile); ok && j.frames != nil {
		b.ReportMetric(float64(j.frames.total)/float64(j.frames.count), "frame-B")
	}
	if e, ok := r.kind.(journalEtcd); ok {
		e.rec.report(b)
		if w := e.rec.withWitness; len(w) > 0 {
			slices.Sort(w)
			b.ReportMetric(percentile(w, 0.50), "floor-witness-p50-µs")
			b.ReportMetric(percentile(w, 0.99), "floor-witness-p99-µs")
			b.ReportMetric(percentile(r.lat, 0.50)/percentile(w, 0.50), "x-floor-witness-p50")
			b.ReportMetric(percentile(r.lat, 0.99)/percentile(w, 0.99), "x-floor-witness-p99")
		}
	}
}

// reportByIndex reports the median dispatch latency by record index in its scope: the first,
// the last, and the first and last eight together.
func reportByIndex(b *testing.B, byIndex [][]time.Duration) {
	median := func(from, to int) float64 {
		var all []time.Duration
		for _, l := range byIndex[from:to] {
			all = append(all, l...)
		}
		if len(all) == 0 {
			return 0
		}
		slices.Sort(all)
		return percentile(all, 0.5)
	}
	last := len(byIndex)
	if median(last-1, last) == 0 {
		return // no scope was filled
	}
	b.ReportMetric(median(0, 1), "idx0-p50-µs")
	b.ReportMetric(median(last-1, last), "idx63-p50-µs")
	first8, last8 := median(0, 8), median(last-8, last)
	b.ReportMetric(first8, "first8-p50-µs")
	b.ReportMetric(last8, "last8-p50-µs")
	b.ReportMetric(last8/first8, "last8/first8")
}

func fileSize(b *testing.B, path string) int64 {
	info, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		b.Fatal(err)
	}
	return info.Size()
}

// frameReader follows the frames of a storage log file (impl/storage/logstore): a 32-byte
// header, then frames of a 16-byte head whose first four bytes are the body's length.
type frameReader struct {
	path         string
	off          int64
	total, count int64 // bytes and number of the frames read
}

// next returns the sizes of the frames written since the last call.
func (r *frameReader) next(b *testing.B) []int {
	f, err := os.Open(r.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if r.off == 0 {
		r.off = 32
	}
	var sizes []int
	var head [16]byte
	for {
		if _, err := f.ReadAt(head[:], r.off); err != nil {
			break
		}
		n := binary.BigEndian.Uint32(head[:])
		if n == 0 {
			break
		}
		sizes = append(sizes, 16+int(n))
		r.off += 16 + int64(n)
		r.total += 16 + int64(n)
		r.count++
	}
	return sizes
}

// syncFloor performs a journal step's sync and nothing else: the step's bytes written at the
// end of a preallocated file and made durable with fdatasync.
type syncFloor struct {
	journal *os.File
	off     int64
	buf     []byte
}

func newSyncFloor(b *testing.B, dir string) *syncFloor {
	j, err := os.OpenFile(filepath.Join(dir, "floor.journal"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	// Preallocated with written zeros, as the log is.
	if _, err := j.Write(make([]byte, 32<<20)); err != nil {
		b.Fatal(err)
	}
	if err := j.Sync(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { j.Close() })
	return &syncFloor{journal: j, buf: make([]byte, 1<<20)}
}

func (f *syncFloor) step(b *testing.B, size int) {
	if f.off+int64(size) > 32<<20 {
		f.off = 0
	}
	f.buf[0]++
	if _, err := f.journal.WriteAt(f.buf[:size], f.off); err != nil {
		b.Fatal(err)
	}
	if err := syscall.Fdatasync(int(f.journal.Fd())); err != nil {
		b.Fatal(err)
	}
	f.off += int64(size)
}

// BenchmarkSyncAfterPause measures the floor's step (a frame of 437 bytes written into a
// preallocated file and made durable with fdatasync) right after another step and after
// pauses of 0.2, 1 and 5 ms (sync-after-PAUSE-p50-µs, and p90). On some machines (virtual
// disks, devices that idle) a sync costs more the longer the device was left alone: the
// floor of BenchmarkDurableDispatch runs its syncs back to back, right after the dispatch's,
// while a dispatch's first sync follows the host's and the worker's work, and the first
// dispatch of a new worker follows its start. SPLASH_DURABLE_DIR applies as there.
func BenchmarkSyncAfterPause(b *testing.B) {
	f := newSyncFloor(b, durableDir(b))
	pauses := []time.Duration{0, 200 * time.Microsecond, time.Millisecond, 5 * time.Millisecond}
	lat := make([][]time.Duration, len(pauses))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k, pause := range pauses {
			f.step(b, 437)
			if pause > 0 {
				time.Sleep(pause)
			}
			start := time.Now()
			f.step(b, 437)
			lat[k] = append(lat[k], time.Since(start))
		}
	}
	b.StopTimer()
	for k, pause := range pauses {
		slices.Sort(lat[k])
		name := "sync-after-" + strconv.FormatFloat(pause.Seconds()*1e3, 'f', -1, 64) + "ms"
		b.ReportMetric(percentile(lat[k], 0.50), name+"-p50-µs")
		b.ReportMetric(percentile(lat[k], 0.90), name+"-p90-µs")
	}
}
