package main

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/storage/etcdstore/etcdstoretest"
	"github.com/splashv5/conform/impl/worker/workertest"
)

// reportLatencies adds throughput and latency percentiles to a benchmark's output.
func reportLatencies(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		i := int(p * float64(len(lat)-1))
		return float64(lat[i].Microseconds())
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}

// One 256-byte text echo over the worker's real stdin and stdout pipes: the host seals the
// invoke, the worker opens, authorizes, runs the adapter, validates and seals the result, and
// the host opens it. A session can reserve at most 1,024 request ids, so a new worker is
// started (with the timer stopped) every 1,000 calls.
func BenchmarkInvokeRoundTrip(b *testing.B) {
	payload := text(strings.Repeat("x", 256))
	const perSession = 1000
	var p *proc
	sessions, n := 0, 0
	restart := func() {
		if p != nil {
			p.end()
		}
		sessions++
		p = launch(b, "bench-"+strconv.Itoa(sessions))
		p.open(grant(echoTool, perSession, 0))
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
	reportLatencies(b, lat)
	p.end()
}

// One durable dispatch of a new operation key against the journal file: the admission and
// the observation are each persisted (fenced compare-and-swap, synchronous commit) and the
// effect line is synced before the answer. A journal scope holds at most 64 operations, so a
// new worker with a new scope is started (with the timer stopped) every 60 dispatches. The
// bbolt journal file and a journal in a one-member etcd cluster on loopback (the splashetcd
// build) run side by side.
func BenchmarkDurableDispatch(b *testing.B) {
	b.Run("bolt", func(b *testing.B) {
		durableDispatch(b, workerBinary, filepath.Join(b.TempDir(), "journal.db"))
	})
	b.Run("etcd", func(b *testing.B) {
		if _, err := etcdstoretest.Binary(); err != nil {
			b.Skip(err)
		}
		c, err := etcdstoretest.Start(b.TempDir(), 1)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Stop()
		durableDispatch(b, binaries.MustWorker(b, "splashetcd"), journalURL(c, "splash/bench"))
	})
}

func durableDispatch(b *testing.B, bin, journal string) {
	effects := filepath.Join(b.TempDir(), "effects.log")
	const perSession = 60
	var p *proc
	sessions, n := 0, 0
	restart := func() {
		if p != nil {
			p.end()
		}
		sessions++
		sc := "bench-" + strconv.Itoa(sessions)
		p = start(b, bin, mustHost(b, sc), "--journal", journal, "--effect-log", effects, "--scope", sc)
		p.write(p.host.Bootstrap())
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
