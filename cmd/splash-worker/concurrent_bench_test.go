package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/worker/workertest"
)

// BenchmarkDurableConcurrent runs durable dispatches (results of 100 random characters) from
// 1, 4 and 16 worker processes at once, each on a scope of its own, all on one journal store:
// one log file, and one one-member etcd cluster on loopback (without the witness file). Every
// worker serves at most 64 dispatches (a scope's journal holds no more), so a run takes
// b.N dispatches split evenly, at most 64 per worker; b.N above 64 times the workers is cut
// to it. It reports the dispatches per second of all workers together, and its floor measured
// right after in the same run: as many goroutines, each performing the durable steps of a
// dispatch (for the log: two journal steps of the log's mean frame size, written at the end
// of one shared preallocated file and made durable with fdatasync, around an effect line
// appended to one shared file and synced; for etcd: two guarded transactions of the sizes
// the worker writes, around the same effect line) as often, and the ratio.
func BenchmarkDurableConcurrent(b *testing.B) {
	for _, workers := range []int{1, 4, 16} {
		b.Run("log/"+strconv.Itoa(workers), func(b *testing.B) {
			dir := durableDir(b)
			concurrentDispatch(b, workerBinary, filepath.Join(dir, "journal.log"), nil, workers, func(n int) time.Duration {
				return fileFloor(b, dir, workers, n, 450)
			})
		})
	}
	for _, workers := range []int{1, 4, 16} {
		b.Run("etcd/"+strconv.Itoa(workers), func(b *testing.B) {
			c := benchMember(b)
			rec := &etcdFloor{member: c}
			rec.open(b)
			dir := durableDir(b)
			concurrentDispatch(b, binaries.MustWorker(b, "splashetcd"), journalURL(c, "splash/bench"), []string{"--etcd-witness", "none"}, workers, func(n int) time.Duration {
				return etcdConcurrentFloor(b, rec, dir, workers, n, 600)
			})
		})
	}
}

func concurrentDispatch(b *testing.B, bin, journal string, extra []string, workers int, floor func(perWorker int) time.Duration) {
	perWorker := min(perScope, max(1, b.N/workers))
	effects := filepath.Join(durableDir(b), "effects.log")
	procs := make([]*proc, workers)
	for i := range procs {
		sc := "bench-" + strconv.Itoa(i)
		args := append([]string{"--journal", journal, "--effect-log", effects, "--scope", sc}, extra...)
		p := start(b, bin, mustHost(b, sc), args...)
		p.write(p.host.Bootstrap())
		p.open(grant(recordTool, perScope, 0), grant(echoTool, 1, 0))
		p.call(p.host.Invoke("warm", echoTool, text("w")), "result text:w")
		procs[i] = p
	}
	b.ResetTimer()
	began := time.Now()
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for i, p := range procs {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(i), 13))
			for n := range perWorker {
				value := strconv.Quote(randomText(rnd, 100))
				line := append(p.host.Seal(p.host.Dispatch("d"+strconv.Itoa(n), recordTool, "op-"+strconv.Itoa(n), workertest.Record("succeed", value))), '\n')
				if _, err := p.stdin.Write(line); err != nil {
					errs <- err
					return
				}
				answer, err := readLine(p.stdout, 30*time.Second)
				if err != nil {
					errs <- fmt.Errorf("worker %d: no answer: %v (stderr: %s)", i, err, p.stderr)
					return
				}
				if _, err := p.host.Open(answer); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(began)
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	for _, p := range procs {
		p.end()
	}
	total := float64(workers * perWorker)
	rate := total / elapsed.Seconds()
	floorRate := total / floor(perWorker).Seconds()
	b.ReportMetric(rate, "dispatches/s")
	b.ReportMetric(floorRate, "floor-dispatches/s")
	b.ReportMetric(rate/floorRate, "of-floor")
}

// fileFloor runs the log's floor: goroutines performing n dispatches' syncs each on shared
// files in dir, and returns how long they took.
func fileFloor(b *testing.B, dir string, goroutines, n, frame int) time.Duration {
	j, err := os.OpenFile(filepath.Join(dir, "floor.journal"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	size := int64(2 * goroutines * n * frame)
	if _, err := j.WriteAt(make([]byte, size), 0); err != nil {
		b.Fatal(err)
	}
	if err := j.Sync(); err != nil {
		b.Fatal(err)
	}
	e, err := os.OpenFile(filepath.Join(dir, "floor.effects"), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	var mu sync.Mutex
	var off int64
	step := func(buf []byte) {
		mu.Lock()
		at := off
		off += int64(len(buf))
		mu.Unlock()
		_, _ = j.WriteAt(buf, at)
		_ = syscall.Fdatasync(int(j.Fd()))
	}
	began := time.Now()
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			buf := make([]byte, frame)
			line := make([]byte, 120)
			for range n {
				step(buf)
				_, _ = e.Write(line)
				_ = e.Sync()
				step(buf)
			}
		})
	}
	wg.Wait()
	return time.Since(began)
}

// etcdConcurrentFloor runs etcd's floor: goroutines performing n dispatches' transactions and
// effect syncs each, and returns how long they took.
func etcdConcurrentFloor(b *testing.B, rec *etcdFloor, dir string, goroutines, n, delta int) time.Duration {
	e, err := os.OpenFile(filepath.Join(dir, "floor.effects"), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	began := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			f := &etcdFloor{cli: rec.cli, prefix: "/floor/" + strconv.Itoa(g) + "/"}
			line := make([]byte, 120)
			for range n {
				if err := f.tryTxn(delta); err != nil {
					errs <- err
					return
				}
				_, _ = e.Write(line)
				_ = e.Sync()
				if err := f.tryTxn(delta); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return time.Since(began)
}
