// Command goecho copies standard input to standard output a line at a time, one write per
// line: the floor of a line round trip through a Go process, for BenchmarkInvokeRoundTrip.
// It reads through the same kind of yielding reader as splash-worker (run.go), so the
// difference between the two is the worker's own work, not the Go scheduler's hand-offs.
package main

import (
	"bufio"
	"io"
	"os"
	"runtime"
	"time"
)

// yieldingReader passes through the scheduler at most every 2 ms before a read.
type yieldingReader struct {
	r    io.Reader
	last time.Time
}

func (y *yieldingReader) Read(p []byte) (int, error) {
	if now := time.Now(); now.Sub(y.last) >= 2*time.Millisecond {
		runtime.Gosched()
		y.last = now
	}
	return y.r.Read(p)
}

func main() {
	in := bufio.NewReaderSize(&yieldingReader{r: os.Stdin}, 64<<10)
	for {
		line, err := in.ReadSlice('\n')
		if len(line) > 0 {
			if _, werr := os.Stdout.Write(line); werr != nil {
				os.Exit(1)
			}
		}
		if err != nil && err != bufio.ErrBufferFull {
			return
		}
	}
}
