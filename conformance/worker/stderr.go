package worker

import (
	"bytes"
	"strings"
	"sync"

	"github.com/splashv5/conform/internal/childproc"
)

// Bounds of what the runner keeps of a worker's standard error.
const (
	stderrHeadBytes = 2048
	stderrTailBytes = 2048
)

// stderrTail consumes a worker's standard error with bounded memory (the first and the last
// bytes) and watches the whole stream for encodings of the session key.
type stderrTail struct {
	*childproc.Capture
	mu   sync.Mutex
	keys leakStream // encodings of the session and storage keys, which must never appear (WRK-093)
	stub leakStream // encodings of the profile's stub secret, which must never appear (SEC-010)
}

// newStderrTail returns a consumer that looks for the encodings of keys (the session key
// and, when the runner gave one, the storage key) and for those of the profile's stub
// secret.
func newStderrTail(keys *leakMatcher) *stderrTail {
	s := &stderrTail{keys: leakStream{m: keys}, stub: leakStream{m: stubMatcher}}
	s.Capture = childproc.NewCapture(stderrHeadBytes, stderrTailBytes)
	s.Observe = func(p []byte) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.keys.add(p)
		s.stub.add(p)
	}
	return s
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
