//go:build splashprofile

package main

// The profiling build of the worker (go build -tags splashprofile), for finding where a
// round trip's time and memory go: with SPLASH_WORKER_CPUPROFILE, SPLASH_WORKER_MEMPROFILE
// or SPLASH_WORKER_TRACE set to a path prefix, each process writes a CPU profile, a profile
// of every allocation (read it with -sample_index=alloc_space) or an execution trace to that
// prefix followed by its process id. See docs/performance.md.

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
)

func init() {
	var stops []func()
	if prefix := os.Getenv("SPLASH_WORKER_CPUPROFILE"); prefix != "" {
		f := create(prefix)
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "splash-worker: cpu profile:", err)
			os.Exit(8)
		}
		stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
	}
	if prefix := os.Getenv("SPLASH_WORKER_MEMPROFILE"); prefix != "" {
		runtime.MemProfileRate = 1
		stops = append(stops, func() {
			f := create(prefix)
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
				fmt.Fprintln(os.Stderr, "splash-worker: memory profile:", err)
			}
			f.Close()
		})
	}
	if prefix := os.Getenv("SPLASH_WORKER_TRACE"); prefix != "" {
		f := create(prefix)
		if err := trace.Start(f); err != nil {
			fmt.Fprintln(os.Stderr, "splash-worker: trace:", err)
			os.Exit(8)
		}
		stops = append(stops, func() { trace.Stop(); f.Close() })
	}
	stopProfiles = func() {
		for _, stop := range stops {
			stop()
		}
	}
}

func create(prefix string) *os.File {
	f, err := os.Create(fmt.Sprintf("%s%d", prefix, os.Getpid()))
	if err != nil {
		fmt.Fprintln(os.Stderr, "splash-worker:", err)
		os.Exit(8)
	}
	return f
}
