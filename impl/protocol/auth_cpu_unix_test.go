//go:build unix

package protocol

import (
	"syscall"
	"testing"
	"time"
)

// processCPU returns the CPU time (user + system) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuMeter reports the process CPU time per operation as "cpu-ns/op" next to
// the wall-clock ns/op. On a machine shared with other work, wall time
// includes waiting for a core; CPU time does not, and it also counts the
// garbage collector's work on other threads.
type cpuMeter struct {
	b     *testing.B
	start time.Duration
}

func startCPU(b *testing.B) cpuMeter { return cpuMeter{b: b, start: processCPU()} }

func (m cpuMeter) stop() {
	if m.b.N > 0 {
		m.b.ReportMetric(float64(processCPU()-m.start)/float64(m.b.N), "cpu-ns/op")
	}
}
