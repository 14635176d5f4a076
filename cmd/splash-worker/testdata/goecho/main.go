// Command goecho copies standard input to standard output a line at a time, one write per
// line: the floor of a line round trip through a Go process, for the worker's round-trip
// benchmarks. It reads through the same kind of yielding reader as splash-worker (run.go), so
// the difference between the two is the worker's own work, not the Go scheduler's hand-offs.
//
// With the argument "hash" it also computes a keyed BLAKE3 hash of each line twice before it
// writes the line back, as a worker computes the tag of the frame it opens and of the answer
// it seals: the floor of any Go worker, which must do at least that much per frame.
package main

import (
	"bufio"
	"io"
	"os"
	"runtime"
	"time"

	"lukechampine.com/blake3"
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
	var tags *blake3.Hasher
	if len(os.Args) > 1 && os.Args[1] == "hash" {
		tags = blake3.New(32, []byte("goecho: a fixed 32-byte hash key"))
	}
	var tag [32]byte
	in := bufio.NewReaderSize(&yieldingReader{r: os.Stdin}, 64<<10)
	for {
		line, err := in.ReadSlice('\n')
		if len(line) > 0 {
			if tags != nil {
				for range 2 {
					tags.Reset()
					_, _ = tags.Write(line)
					tags.Sum(tag[:0])
				}
			}
			if _, werr := os.Stdout.Write(line); werr != nil {
				os.Exit(1)
			}
		}
		if err != nil && err != bufio.ErrBufferFull {
			return
		}
	}
}
