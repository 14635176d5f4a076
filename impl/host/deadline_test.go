package host

import (
	"errors"
	"testing"
	"time"
)

// Spec: RUN-200
// A protocol-backed call waits for the worker at most the client's deadline, shortened to the
// operation's remaining deferred deadline when that is shorter; a synchronous call uses the
// client's deadline alone.
func TestProtocolWorkerDeadlineIsPassedThrough(t *testing.T) {
	r, clock := newTestRuntime(t, Config{})
	tr := &fakeTransport{answer: adder}
	client, err := NewProtocolWorkerClient(workerManifest(t, 4), tr)
	wantNoError(t, err)
	if client.Deadline() != DefaultWorkerDeadline {
		t.Fatalf("default deadline = %v", client.Deadline())
	}
	if !errors.Is(client.SetDeadline(0), ErrInvalidWorkerDeadline) || !errors.Is(client.SetDeadline(-time.Second), ErrInvalidWorkerDeadline) {
		t.Fatal("a deadline that is not positive was accepted")
	}
	wantNoError(t, client.SetDeadline(5*time.Second))
	p := JSONPolicy("calc").WithDeadline(3 * time.Second)
	p.MaxCalls, p.MaxInputBytes, p.MaxOutputBytes = 4, 4096, 64
	mustRegister(t, r.RegisterProtocolJSONTool(p, Metadata{}, client))

	if _, err := r.CallJSON("calc", `{"left":1,"right":1}`); err != nil {
		t.Fatal(err)
	}
	id, err := r.StartJSON("calc", `{"left":2,"right":2}`)
	wantNoError(t, err)
	clock.Advance(1200 * time.Millisecond)
	if s := r.Pump(); len(s) != 1 || s[0].ID != id || s[0].Err != nil {
		t.Fatalf("pump = %+v", s)
	}
	// A deferred start whose remaining deadline exceeds the client's keeps the client's.
	wantNoError(t, client.SetDeadline(time.Second))
	if _, err := r.StartJSON("calc", `{"left":3,"right":3}`); err != nil {
		t.Fatal(err)
	}
	r.Pump()
	want := []time.Duration{5 * time.Second, 1800 * time.Millisecond, time.Second}
	if len(tr.deadlines) != len(want) {
		t.Fatalf("deadlines = %v", tr.deadlines)
	}
	for i := range want {
		if tr.deadlines[i] != want[i] {
			t.Fatalf("deadline %d = %v, want %v", i, tr.deadlines[i], want[i])
		}
	}
}

// Spec: RUN-201
// NextDeadline names the earliest deadline among unsettled operations, skips settled ones and
// operations without a deadline, and reports none when nothing is due.
func TestNextDeadline(t *testing.T) {
	r, clock := newTestRuntime(t, Config{})
	mustRegister(t, r.RegisterExternalTool(func() Policy { p := NewPolicy("slow").WithDeadline(5 * time.Second); p.MaxCalls = 9; return p }(), Metadata{}))
	mustRegister(t, r.RegisterExternalTool(func() Policy { p := NewPolicy("fast").WithDeadline(2 * time.Second); p.MaxCalls = 9; return p }(), Metadata{}))
	mustRegister(t, r.RegisterExternalTool(func() Policy { p := NewPolicy("none"); p.MaxCalls = 9; return p }(), Metadata{}))
	if _, ok := r.NextDeadline(); ok {
		t.Fatal("a deadline without operations")
	}
	start := clock.Now()
	if _, err := r.Start("none", "x"); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.NextDeadline(); ok {
		t.Fatal("a deadline for an operation without one")
	}
	if _, err := r.Start("slow", "x"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	fast, err := r.Start("fast", "x")
	wantNoError(t, err)
	if at, ok := r.NextDeadline(); !ok || !at.Equal(start.Add(3*time.Second)) {
		t.Fatalf("next = %v %v, want the fast deadline", at, ok)
	}
	inv, err := r.ClaimExternal(fast)
	wantNoError(t, err)
	if d, ok := inv.RemainingDeadline(); !ok || d != 2*time.Second {
		t.Fatalf("remaining = %v %v", d, ok)
	}
	if _, err := r.CompleteExternal(fast, OK("done")); err != nil {
		t.Fatal(err)
	}
	if at, ok := r.NextDeadline(); !ok || !at.Equal(start.Add(5*time.Second)) {
		t.Fatalf("next after settling = %v %v, want the slow deadline", at, ok)
	}
	clock.Advance(4 * time.Second)
	if n := len(r.ExpireTimedOut()); n != 1 {
		t.Fatalf("expired %d", n)
	}
	if _, ok := r.NextDeadline(); ok {
		t.Fatal("a deadline after every deadline settled")
	}
}
