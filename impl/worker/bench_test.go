package worker_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/protocol"
)

// benchCallsPerSession is how many calls a benchmark makes in one session: a session holds at
// most 1,024 request ids.
const benchCallsPerSession = 1000

// benchSessions runs call b.N times, with n counting the calls of the current session, and
// opens a new echo session (prepare, then call again from n = 0) every benchCallsPerSession
// calls with the timer stopped.
func benchSessions(b *testing.B, prepare func(*rig), call func(r *rig, n int)) {
	var r *rig
	n := 0
	restart := func() {
		r = newRig(b, rigOptions{grants: []protocol.CapabilityGrant{profileGrant(echo, benchCallsPerSession, 0)}})
		prepare(r)
		n = 0
	}
	restart()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if n == benchCallsPerSession {
			b.StopTimer()
			restart()
			b.StartTimer()
		}
		call(r, n)
		n++
	}
}

// The in-process cost of one 256-byte echo through a session: the host seals the invoke, the
// session opens, authorizes, runs the adapter, validates and seals, the host opens the answer.
func BenchmarkSessionInvoke(b *testing.B) {
	payload := text(strings.Repeat("x", 256))
	benchSessions(b, func(*rig) {}, func(r *rig, n int) {
		line, err := r.session.Handle(context.Background(), r.host.Seal(r.host.Invoke("r"+strconv.Itoa(n), echo, payload)), r.store)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.host.Open(line); err != nil {
			b.Fatal(err)
		}
	})
}

// The worker's own in-process cost of the same echo: the invoke frames of a session are
// sealed before the clock runs, so only Handle (decode, open, authorize, run the adapter,
// validate, seal) is timed.
func BenchmarkSessionHandle(b *testing.B) {
	payload := text(strings.Repeat("x", 256))
	var frames [][]byte
	benchSessions(b, func(r *rig) {
		frames = frames[:0]
		for i := range benchCallsPerSession {
			frames = append(frames, r.host.Seal(r.host.Invoke("r"+strconv.Itoa(i), echo, payload)))
		}
	}, func(r *rig, n int) {
		if _, err := r.session.Handle(context.Background(), frames[n], r.store); err != nil {
			b.Fatal(err)
		}
	})
}
