package worker_test

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/protocol"
)

// TestEchoAllocations pins what answering a text echo allocates on the heap: one copy of what
// the invocation keeps (its request id, tool and text, copied out of the line together).
// Neither the answer line (the session reuses it), nor a copy of the frame line, nor the
// invocation or the result boxed as a protocol.Message may come back: a worker process rarely
// lives long enough for a collection, so each allocation is memory touched for the first time
// and, every few dozen calls, a fresh span (docs/performance.md). The answer is also checked:
// reused, it is still the right one.
func TestEchoAllocations(t *testing.T) {
	if raceBuild {
		t.Skip("the race detector allocates on its own")
	}
	const calls = 200
	r := newRig(t, rigOptions{grants: []protocol.CapabilityGrant{profileGrant(echo, calls+1, 0)}})
	payload := strings.Repeat("x", 256)
	frames := make([][]byte, calls+1)
	for i := range frames {
		frames[i] = r.host.Seal(r.host.Invoke("r"+strconv.Itoa(i), echo, text(payload)))
	}
	n := 0
	call := func() {
		answer, err := r.session.Handle(context.Background(), frames[n], r.store)
		if err != nil {
			t.Fatal(err)
		}
		if want := `"request_id":"r` + strconv.Itoa(n) + `"`; !bytes.Contains(answer, []byte(want)) {
			t.Fatalf("answer %d does not answer its request: %s", n, answer)
		}
		n++
	}
	call() // the first answer sizes the reused line
	if got := testing.AllocsPerRun(calls-1, call); got > 1 {
		t.Errorf("a text echo allocates %.1f times per call, want at most 1", got)
	}
}
