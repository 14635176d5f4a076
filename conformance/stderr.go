package conformance

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Bounds of what the runner keeps of a worker's standard error.
const (
	stderrHeadBytes = 2048
	stderrTailBytes = 2048
)

// stderrTail consumes a worker's standard error with bounded memory: it keeps the first and
// the last bytes, counts the rest, and watches the whole stream for encodings of the session
// key.
type stderrTail struct {
	mu    sync.Mutex
	head  []byte
	tail  []byte
	total int64
	keys  leakStream // encodings of the session and storage keys, which must never appear (WRK-093)
	stub  leakStream // encodings of the profile's stub secret, which must never appear (SEC-010)
	done  chan struct{}
}

// newStderrTail returns a consumer that looks for the encodings of keys (the session key
// and, when the runner gave one, the storage key) and for those of the profile's stub
// secret.
func newStderrTail(keys *leakMatcher) *stderrTail {
	return &stderrTail{keys: leakStream{m: keys}, stub: leakStream{m: stubMatcher}, done: make(chan struct{})}
}

// consume reads r until it ends and then closes done.
func (s *stderrTail) consume(r io.Reader) {
	defer close(s.done)
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			s.add(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

func (s *stderrTail) add(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total += int64(len(p))
	if room := stderrHeadBytes - len(s.head); room > 0 {
		take := min(room, len(p))
		s.head = append(s.head, p[:take]...)
	}
	s.tail = append(s.tail, p...)
	if len(s.tail) > stderrTailBytes {
		s.tail = append(s.tail[:0], s.tail[len(s.tail)-stderrTailBytes:]...)
	}
	s.keys.add(p)
	s.stub.add(p)
}

// containsAny reports whether data holds one of the patterns.
func containsAny(data []byte, patterns [][]byte) bool {
	for _, pat := range patterns {
		if bytes.Contains(data, pat) {
			return true
		}
	}
	return false
}

// excerpt returns the kept text: everything when the stream was short, otherwise the head,
// a marker with the number of bytes left out, and the tail. Invalid UTF-8 is replaced.
func (s *stderrTail) excerpt() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	if s.total <= int64(stderrHeadBytes) {
		b.Write(s.head)
	} else {
		b.Write(s.head)
		tailStart := s.total - int64(len(s.tail))
		if tailStart > int64(stderrHeadBytes) {
			b.WriteString("\n[… ")
			b.WriteString(strconv.FormatInt(tailStart-int64(stderrHeadBytes), 10))
			b.WriteString(" bytes left out …]\n")
			b.Write(s.tail)
		} else {
			b.Write(s.tail[int64(stderrHeadBytes)-tailStart:])
		}
	}
	return strings.ToValidUTF8(b.String(), "\uFFFD")
}

// keyLeaked reports whether an encoding of the session key appeared.
func (s *stderrTail) keyLeaked() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys.seen
}

// stubLeaked reports whether an encoding of the profile's stub secret appeared.
func (s *stderrTail) stubLeaked() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stub.seen
}

// panicMarkers are texts that language runtimes print when a program crashes.
var panicMarkers = []string{"panic: ", "fatal error: ", "panicked at", "SIGSEGV", "stack overflow"}

// looksLikeCrash reports whether a stderr excerpt holds a runtime crash report.
func looksLikeCrash(excerpt string) bool {
	for _, m := range panicMarkers {
		if strings.Contains(excerpt, m) {
			return true
		}
	}
	return false
}

// clip shortens s to at most n bytes (on a rune boundary) for messages.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
