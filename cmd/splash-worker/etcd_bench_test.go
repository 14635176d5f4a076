package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/storage/etcdstore/etcdstoretest"
	"github.com/splashv5/conform/impl/worker/workertest"
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

// BenchmarkEtcdDispatch is one durable dispatch of a new operation key whose result is a
// value of about 3 KB, against a journal in a one-member etcd cluster on loopback (the
// splashetcd build), with the worker's witness file and without it. Besides the latency it
// reports the bytes the member wrote per dispatch (write-ahead log, database file and log
// together) and the growth of its database file.
func BenchmarkEtcdDispatch(b *testing.B) {
	b.Run("witness", func(b *testing.B) { etcdDispatch(b, true) })
	b.Run("no-witness", func(b *testing.B) { etcdDispatch(b, false) })
}

func etcdDispatch(b *testing.B, witness bool) {
	if _, err := etcdstoretest.Binary(); err != nil {
		b.Skip(err)
	}
	c, err := etcdstoretest.Start(b.TempDir(), 1)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Stop()
	bin := binaries.MustWorker(b, "splashetcd")
	journal := journalURL(c, "splash/bench")
	effects := b.TempDir() + "/effects.log"
	value := strconv.Quote(strings.Repeat("v", 3000))
	const perSession = 60
	var p *proc
	sessions, n := 0, 0
	restart := func() {
		if p != nil {
			p.end()
		}
		sessions++
		sc := "bench-" + strconv.Itoa(sessions)
		p = start(b, bin, mustHost(b, sc), benchEtcdArgs(b, journal, effects, sc, witness)...)
		p.write(p.host.Bootstrap())
		p.open(grant(recordTool, perSession, 0))
		n = 0
	}
	restart()
	pid := c.PID(0)
	written := procWritten(b, pid)
	size0 := dbSize(b, c)
	b.ResetTimer()
	began := time.Now()
	for i := 0; i < b.N; i++ {
		if n == perSession {
			b.StopTimer()
			restart()
			b.StartTimer()
		}
		key := "op-" + strconv.Itoa(n)
		p.send(p.host.Dispatch("d"+strconv.Itoa(n), recordTool, key, workertest.Record("succeed", value)))
		line, err := readLine(p.stdout, 10*time.Second)
		if err != nil {
			b.Fatalf("no answer: %v (stderr: %s)", err, p.stderr)
		}
		if _, err := p.host.Open(line); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.StopTimer()
	elapsed := time.Since(began)
	p.end()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "dispatches/s")
	b.ReportMetric(float64(procWritten(b, pid)-written)/float64(b.N), "etcd-written-B/dispatch")
	b.ReportMetric(float64(dbSize(b, c)-size0)/float64(b.N), "db-growth-B/dispatch")
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
