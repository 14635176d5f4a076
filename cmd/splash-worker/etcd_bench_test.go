package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/splashv5/conform/impl/worker/workertest"

	"github.com/splashv5/conform/impl/storage/etcdstore/etcdstoretest"
)

// procWritten returns the bytes process pid has handed to write system calls so far (wchar of
// /proc/PID/io): for an etcd member, its write-ahead log, its database file and its log.
func procWritten(tb testing.TB, pid int) int64 {
	tb.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		tb.Skipf("no write accounting: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "wchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				tb.Fatal(err)
			}
			return n
		}
	}
	tb.Skip("no wchar in /proc/PID/io")
	return 0
}

// BenchmarkEtcdDispatch is one durable dispatch of a new operation key whose result is 3,000
// random printable characters (a new value each time, which DEFLATE shrinks by less than a
// fifth: a repeated character would compress to nothing and hide what a journal costs),
// against a journal in a one-member etcd cluster on loopback (the splashetcd build), with the
// worker's witness file and without it. A scope takes 60 dispatches. Besides the latency it
// reports the bytes the member wrote per dispatch (write-ahead log, database file and log
// together), the growth of its database file per dispatch, and the live bytes (keys and values
// under the prefix) per dispatch and per scope.
//
// The history etcd keeps holds every version of a journal record written in its last
// compact_retain_revisions + 2 x compact_every_writes revisions, and a record holds every
// result of its scope, so with large results the history, not the live data, sizes the
// database: the retain-10 run keeps 10 revisions and compacts every 10.
func BenchmarkEtcdDispatch(b *testing.B) {
	b.Run("witness", func(b *testing.B) { etcdDispatch(b, true, 0) })
	b.Run("no-witness", func(b *testing.B) { etcdDispatch(b, false, 0) })
	b.Run("no-witness-retain-10", func(b *testing.B) { etcdDispatch(b, false, 10) })
}

// benchMember starts a one-member cluster for a benchmark, stopped when it ends; without
// etcd the benchmark is skipped.
func benchMember(b *testing.B) *etcdstoretest.Cluster {
	if _, err := etcdstoretest.Binary(); err != nil {
		b.Skip(err)
	}
	c, err := etcdstoretest.Start(b.TempDir(), 1)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Stop)
	return c
}

func etcdDispatch(b *testing.B, witness bool, retain int) {
	c := benchMember(b)
	bin := binaries.MustWorker(b, "splashetcd")
	journal := journalURL(c, "splash/bench")
	effects := filepath.Join(b.TempDir(), "effects.log")
	pid := c.PID(0)
	var written, size0 int64
	rnd := rand.New(rand.NewPCG(7, 8))
	elapsed, scopes := randomDispatchLoop(b, bin, func() string { return strconv.Quote(randomText(rnd, 3000)) }, func(sc string) []string {
		args := benchEtcdArgs(b, journal, effects, sc, witness)
		if retain > 0 {
			cfg := filepath.Join(b.TempDir(), "etcd.json")
			if err := os.WriteFile(cfg, fmt.Appendf(nil, `{"compact_retain_revisions": %d, "compact_every_writes": %d}`, retain, retain), 0o600); err != nil {
				b.Fatal(err)
			}
			args = append(args, "--etcd-config", cfg)
		}
		return args
	}, func() {
		written, size0 = procWritten(b, pid), dbSize(b, c)
	})
	live := liveBytes(b, c, "/splash/bench/")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "dispatches/s")
	b.ReportMetric(float64(procWritten(b, pid)-written)/float64(b.N), "etcd-written-B/dispatch")
	b.ReportMetric(float64(dbSize(b, c)-size0)/float64(b.N), "db-growth-B/dispatch")
	b.ReportMetric(float64(live)/float64(b.N), "live-B/dispatch")
	b.ReportMetric(float64(live)/float64(scopes), "live-B/scope")
	b.ReportMetric(float64(dbSize(b, c)), "db-B")
}

// textAlphabet is the 92 printable ASCII characters that need no escaping in a JSON string:
// '!' to '~' without '"' and '\\'.
var textAlphabet = func() []byte {
	var out []byte
	for c := byte('!'); c <= '~'; c++ {
		if c != '"' && c != '\\' {
			out = append(out, c)
		}
	}
	return out
}()

// randomText returns n characters drawn uniformly from textAlphabet.
func randomText(rnd *rand.Rand, n int) string {
	out := make([]byte, n)
	for i := range out {
		out[i] = textAlphabet[rnd.IntN(len(textAlphabet))]
	}
	return string(out)
}

// liveBytes is the size of every key and value under prefix in the member, bypassing the
// worker.
func liveBytes(tb testing.TB, c *etcdstoretest.Cluster, prefix string) int64 {
	tb.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	defer cli.Close()
	resp, err := cli.Get(context.Background(), prefix, clientv3.WithPrefix())
	if err != nil {
		tb.Fatal(err)
	}
	var n int64
	for _, kv := range resp.Kvs {
		n += int64(len(kv.Key) + len(kv.Value))
	}
	return n
}

// randomDispatchLoop runs b.N durable dispatches, each with a new result value; it returns
// the time the dispatches took and the number of scopes (sessions of 60 dispatches) used.
func randomDispatchLoop(b *testing.B, bin string, value func() string, args func(scope string) []string, started func()) (time.Duration, int) {
	const perSession = 60
	var p *proc
	sessions, n := 0, 0
	restart := func() {
		if p != nil {
			p.end()
		}
		sessions++
		sc := "bench-" + strconv.Itoa(sessions)
		p = start(b, bin, mustHost(b, sc), args(sc)...)
		p.write(p.host.Bootstrap())
		p.open(grant(recordTool, perSession, 0))
		n = 0
	}
	restart()
	started()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	began := time.Now()
	for i := 0; i < b.N; i++ {
		if n == perSession {
			b.StopTimer()
			restart()
			b.StartTimer()
		}
		v := value()
		start := time.Now()
		key := "op-" + strconv.Itoa(n)
		p.send(p.host.Dispatch("d"+strconv.Itoa(n), recordTool, key, workertest.Record("succeed", v)))
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
	elapsed := time.Since(began)
	reportLatencies(b, lat)
	p.end()
	return elapsed, sessions
}

// dbSize returns the member's database size from its metrics.
func dbSize(tb testing.TB, c *etcdstoretest.Cluster) int64 {
	tb.Helper()
	v, err := c.Metric(0, "etcd_mvcc_db_total_size_in_bytes")
	if err != nil {
		tb.Fatal(err)
	}
	return int64(v)
}

// benchEtcdArgs are the worker's flags for the benchmark.
func benchEtcdArgs(tb testing.TB, journal, effects, scope string, witness bool) []string {
	w := "none"
	if witness {
		w = filepath.Join(tb.TempDir(), "witness.json")
	}
	return []string{"--journal", journal, "--effect-log", effects, "--scope", scope, "--etcd-witness", w}
}

// journalEtcd is a journal in a one-member etcd cluster, with or without the machine's
// witness file, for BenchmarkDurableDispatch.
type journalEtcd struct {
	witness bool
	rec     *etcdFloor
}

func (j journalEtcd) args(b *testing.B) []string {
	w := "none"
	if j.witness {
		w = filepath.Join(b.TempDir(), "witness.json")
	}
	return []string{"--etcd-witness", w}
}

func (j journalEtcd) prepare(b *testing.B, _ string) {
	j.rec.open(b)
	if j.witness {
		j.rec.witness = newSyncFloor(b, b.TempDir())
	}
}

func (j journalEtcd) steps(b *testing.B) []int { return j.rec.written(b) }

// before and after measure what the member wrote during one dispatch.
func (j journalEtcd) before(b *testing.B) { j.rec.before = procWritten(b, j.rec.pid) }

func (j journalEtcd) after(b *testing.B, index int) {
	j.rec.bytes[index] = append(j.rec.bytes[index], procWritten(b, j.rec.pid)-j.rec.before)
}

func (j journalEtcd) floor(b *testing.B, steps []int, effect func()) time.Duration {
	if len(steps) != 2 {
		b.Fatalf("the dispatch committed %d etcd transactions, want 2", len(steps))
	}
	start := time.Now()
	j.rec.txn(b, steps[0])
	effect()
	j.rec.txn(b, steps[1])
	took := time.Since(start)
	if j.witness {
		// The same steps with the witness's: after each transaction, one record appended to
		// a preallocated local file and made durable with fdatasync.
		start := time.Now()
		j.rec.txn(b, steps[0])
		j.rec.witness.step(b, witnessRecordBytes)
		effect()
		j.rec.txn(b, steps[1])
		j.rec.witness.step(b, witnessRecordBytes)
		j.rec.withWitness = append(j.rec.withWitness, time.Since(start))
	}
	return took
}

// witnessRecordBytes is about the size of one raise appended to the witness: a 16-byte head
// and a JSON body naming the prefix, cluster, revision, record, fence and floor.
const witnessRecordBytes = 190

// etcdFloor reads back the transactions the worker committed and replays transactions of
// the same sizes under another prefix of the same member.
type etcdFloor struct {
	member *etcdstoretest.Cluster
	cli    *clientv3.Client
	prefix string // of the floor's keys ("/floor/" when empty)
	// seen is the member's revision after the worker's last transaction read back.
	seen int64
	// head is the modification revision of the floor's head key; n counts its deltas.
	head int64
	n    int
	// bytes is what the member wrote per dispatch, by record index.
	bytes  [perScope][]int64
	pid    int
	before int64
	// witness, for a run with the witness file, performs the witness's appends in a second
	// floor, whose latencies are withWitness.
	witness     *syncFloor
	withWitness []time.Duration
}

func (f *etcdFloor) open(b *testing.B) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: f.member.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cli.Close() })
	f.cli, f.pid = cli, f.member.PID(0)
}

// written returns, per transaction the worker committed since the last call, the size of the
// record delta (or base) it wrote. Each transaction is read at its own revision, so that one
// whose keys a later transaction deleted (a record rebased onto a new base) still counts.
func (f *etcdFloor) written(b *testing.B) []int {
	ctx := context.Background()
	now, err := f.cli.Get(ctx, "/splash/bench/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		b.Fatal(err)
	}
	var out []int
	for rev := f.seen + 1; f.seen > 0 && rev <= now.Header.Revision; rev++ {
		resp, err := f.cli.Get(ctx, "/splash/bench/", clientv3.WithPrefix(), clientv3.WithRev(rev),
			clientv3.WithMinModRev(rev), clientv3.WithMaxModRev(rev))
		if err != nil {
			b.Fatal(err)
		}
		if len(resp.Kvs) == 0 {
			continue // a write of the floor's, under its own prefix
		}
		size := 0
		for _, kv := range resp.Kvs {
			if strings.Contains(string(kv.Key), "/chain/") {
				size = len(kv.Value)
			}
		}
		out = append(out, size)
	}
	f.seen = now.Header.Revision
	return out
}

// txn commits what one durable step of the worker commits: the record's head (25 bytes), a
// delta of size bytes and the anchor (48 bytes), guarded by the head's modification revision.
func (f *etcdFloor) txn(b *testing.B, size int) {
	if err := f.tryTxn(size); err != nil {
		b.Fatal(err)
	}
}

func (f *etcdFloor) tryTxn(size int) error {
	f.n++
	prefix := f.prefix
	if prefix == "" {
		prefix = "/floor/"
	}
	resp, err := f.cli.Txn(context.Background()).
		If(clientv3.Compare(clientv3.ModRevision(prefix+"head"), "=", f.head)).
		Then(clientv3.OpPut(prefix+"head", strings.Repeat("h", 25)),
			clientv3.OpPut(fmt.Sprintf("%schain/d%08x", prefix, f.n), strings.Repeat("d", size)),
			clientv3.OpPut(prefix+"anchor", strings.Repeat("a", 48))).
		Commit()
	if err != nil {
		return fmt.Errorf("floor transaction: %w", err)
	}
	if !resp.Succeeded {
		return errors.New("floor transaction: guard failed")
	}
	f.head = resp.Header.Revision
	return nil
}

func (f *etcdFloor) report(b *testing.B) {
	mean := func(from, to int) float64 {
		var sum, n int64
		for _, l := range f.bytes[from:to] {
			for _, v := range l {
				sum += v
				n++
			}
		}
		if n == 0 {
			return 0
		}
		return float64(sum) / float64(n)
	}
	b.ReportMetric(mean(0, 8), "first8-etcd-written-B")
	b.ReportMetric(mean(perScope-8, perScope), "last8-etcd-written-B")
}
