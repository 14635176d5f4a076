package childproc

import (
	"io"
	"strconv"
	"strings"
	"sync"
)

// Capture keeps a bounded excerpt of a stream a child writes, typically its standard error:
// the first HeadBytes and the last TailBytes, and the count of everything. Each chunk is
// also copied to Tee and shown to Observe, when set, before the next one is read. Set the
// fields before the first write; a Capture is then safe for concurrent use. Use NewCapture
// to get one.
type Capture struct {
	HeadBytes int            // bytes kept from the start
	TailBytes int            // bytes kept from the end
	Tee       io.Writer      // receives every chunk as it comes, when set
	Observe   func(p []byte) // sees every chunk, under the capture's lock, when set
	mu        sync.Mutex
	head      []byte
	tail      []byte
	total     int64
	done      chan struct{}
	doneOnce  sync.Once
}

// NewCapture returns a capture that keeps the first head and the last tail bytes.
func NewCapture(head, tail int) *Capture {
	return &Capture{HeadBytes: head, TailBytes: tail, done: make(chan struct{})}
}

// Write keeps what fits of p and always reports all of p written, so a child writing
// without end is never blocked by the capture.
func (c *Capture) Write(p []byte) (int, error) {
	if c.Tee != nil {
		_, _ = c.Tee.Write(p)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += int64(len(p))
	if room := c.HeadBytes - len(c.head); room > 0 {
		c.head = append(c.head, p[:min(room, len(p))]...)
	}
	if c.TailBytes > 0 {
		c.tail = append(c.tail, p...)
		if len(c.tail) > c.TailBytes {
			c.tail = append(c.tail[:0], c.tail[len(c.tail)-c.TailBytes:]...)
		}
	}
	if c.Observe != nil {
		c.Observe(p)
	}
	return len(p), nil
}

// Consume reads r until it ends, keeping what it reads, and then closes Done.
func (c *Capture) Consume(r io.Reader) {
	defer c.finish()
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			_, _ = c.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

func (c *Capture) finish() { c.doneOnce.Do(func() { close(c.done) }) }

// Done is closed once Consume has read its stream to the end.
func (c *Capture) Done() <-chan struct{} { return c.done }

// Head returns the kept first bytes as they came.
func (c *Capture) Head() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.head)
}

// Tail returns the kept last bytes, with invalid UTF-8 replaced.
func (c *Capture) Tail() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.ToValidUTF8(string(c.tail), "\uFFFD")
}

// Excerpt returns the kept text: everything when the stream was no longer than the head,
// otherwise the head, a marker with the number of bytes left out, and the tail. Invalid
// UTF-8 is replaced.
func (c *Capture) Excerpt() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	b.Write(c.head)
	if c.total > int64(c.HeadBytes) {
		tailStart := c.total - int64(len(c.tail))
		if tailStart > int64(c.HeadBytes) {
			b.WriteString("\n[… ")
			b.WriteString(strconv.FormatInt(tailStart-int64(c.HeadBytes), 10))
			b.WriteString(" bytes left out …]\n")
			b.Write(c.tail)
		} else {
			b.Write(c.tail[int64(c.HeadBytes)-tailStart:])
		}
	}
	return strings.ToValidUTF8(b.String(), "\uFFFD")
}
