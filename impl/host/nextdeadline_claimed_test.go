package host_test

import (
	"testing"
	"time"

	"github.com/splashv5/conform/impl/host"
)

// claimClock is a manual clock for the runtime's deferred deadlines.
type claimClock struct{ now time.Time }

func (c *claimClock) Now() time.Time { return c.now }

// Spec: RUN-201
// NextDeadline counts a claimed operation, and one whose cancellation was requested, as
// unsettled: their deadlines are the ones the host must schedule the expiry for, since a
// worker holds them. Only settling the operation takes its deadline away.
func TestNextDeadlineCountsClaimedOperations(t *testing.T) {
	clock := &claimClock{now: time.Unix(1_700_000_000, 0)}
	rt, err := host.New(host.Config{Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	p := host.NewPolicy("work.run").WithDeadline(5 * time.Second)
	p.MaxCalls = 4
	if err := rt.RegisterExternalTool(p, host.Metadata{}); err != nil {
		t.Fatal(err)
	}
	start := clock.now
	first, err := rt.Start("work.run", "a")
	if err != nil {
		t.Fatal(err)
	}
	inv, ok := rt.ClaimNextExternal()
	if !ok || inv.ID != first {
		t.Fatalf("claimed %v %v, want operation %v", inv.ID, ok, first)
	}
	if at, ok := rt.NextDeadline(); !ok || !at.Equal(start.Add(5*time.Second)) {
		t.Fatalf("with one claimed operation: next deadline %v %v, want %v", at, ok, start.Add(5*time.Second))
	}
	// A later pending operation does not hide the claimed one's earlier deadline.
	clock.now = start.Add(2 * time.Second)
	if _, err := rt.Start("work.run", "b"); err != nil {
		t.Fatal(err)
	}
	if at, ok := rt.NextDeadline(); !ok || !at.Equal(start.Add(5*time.Second)) {
		t.Fatalf("claimed and pending: next deadline %v %v, want the claimed one's %v", at, ok, start.Add(5*time.Second))
	}
	// Still unsettled while its cancellation is requested.
	if _, err := rt.RequestExternalCancellation(first); err != nil {
		t.Fatal(err)
	}
	if at, ok := rt.NextDeadline(); !ok || !at.Equal(start.Add(5*time.Second)) {
		t.Fatalf("cancellation requested: next deadline %v %v, want %v", at, ok, start.Add(5*time.Second))
	}
	// Once it settles, the pending operation's deadline is next.
	if _, err := rt.ConfirmExternalCancellation(first); err != nil {
		t.Fatal(err)
	}
	if at, ok := rt.NextDeadline(); !ok || !at.Equal(start.Add(7*time.Second)) {
		t.Fatalf("after settling: next deadline %v %v, want %v", at, ok, start.Add(7*time.Second))
	}
}
