package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

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

// BenchmarkEtcdDispatch is one durable dispatch of a new operation key whose result is a
// value of about 3 KB, against a journal in a one-member etcd cluster on loopback (the
// splashetcd build), with the worker's witness file and without it. Besides the latency it
// reports the bytes the member wrote per dispatch (write-ahead log, database file and log
// together) and the growth of its database file.
func BenchmarkEtcdDispatch(b *testing.B) {
	b.Run("witness", func(b *testing.B) { etcdDispatch(b, true) })
	b.Run("no-witness", func(b *testing.B) { etcdDispatch(b, false) })
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

func etcdDispatch(b *testing.B, witness bool) {
	c := benchMember(b)
	bin := binaries.MustWorker(b, "splashetcd")
	journal := journalURL(c, "splash/bench")
	effects := filepath.Join(b.TempDir(), "effects.log")
	pid := c.PID(0)
	var written, size0 int64
	elapsed := dispatchLoop(b, bin, strconv.Quote(strings.Repeat("v", 3000)), func(sc string) []string {
		return benchEtcdArgs(b, journal, effects, sc, witness)
	}, func() {
		written, size0 = procWritten(b, pid), dbSize(b, c)
	})
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
