package worker_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/protocol"
)

// The in-process cost of one 256-byte echo through a session: the host seals the invoke, the
// session opens, authorizes, runs the adapter, validates and seals, the host opens the answer.
// A session holds at most 1,024 request ids, so a new session is opened every 1,000 calls with
// the timer stopped.
func BenchmarkSessionInvoke(b *testing.B) {
	payload := text(strings.Repeat("x", 256))
	var r *rig
	n := 0
	restart := func() {
		r = newRig(b, rigOptions{grants: []protocol.CapabilityGrant{profileGrant(echo, 1000, 0)}})
		n = 0
	}
	restart()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if n == 1000 {
			b.StopTimer()
			restart()
			b.StartTimer()
		}
		line, err := r.session.Handle(context.Background(), r.host.Seal(r.host.Invoke("r"+strconv.Itoa(n), echo, payload)), r.store)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.host.Open(line); err != nil {
			b.Fatal(err)
		}
		n++
	}
}

// The worker's own in-process cost of the same echo: the invoke frames of a session are
// sealed before the clock runs, so only Handle (decode, open, authorize, run the adapter,
// validate, seal) is timed.
func BenchmarkSessionHandle(b *testing.B) {
	payload := text(strings.Repeat("x", 256))
	var r *rig
	var frames [][]byte
	n := 0
	restart := func() {
		r = newRig(b, rigOptions{grants: []protocol.CapabilityGrant{profileGrant(echo, 1000, 0)}})
		frames = frames[:0]
		for i := range 1000 {
			frames = append(frames, r.host.Seal(r.host.Invoke("r"+strconv.Itoa(i), echo, payload)))
		}
		n = 0
	}
	restart()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if n == 1000 {
			b.StopTimer()
			restart()
			b.StartTimer()
		}
		if _, err := r.session.Handle(context.Background(), frames[n], r.store); err != nil {
			b.Fatal(err)
		}
		n++
	}
}
