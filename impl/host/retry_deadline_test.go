package host

import (
	"testing"
	"time"

	"github.com/splashv5/conform/impl/protocol"
)

// Spec: RUN-100, RUN-101
func TestRetries(t *testing.T) {
	r, _ := lifecycleRuntime(t) // "remote" allows 3 attempts
	id := opIn(t, r, StateClaimed)
	first, _ := r.Operation(id)
	callsBefore := r.tools["remote"].calls
	for attempt := uint32(2); attempt <= 3; attempt++ {
		class := RetryTransient
		if attempt == 3 {
			class = RetryRateLimited
		}
		inv, err := r.RetryExternal(id, class)
		wantNoError(t, err)
		if inv.ID != id || inv.Attempt != attempt || inv.MaxAttempts != 3 || inv.IdempotencyKey != first.IdempotencyKey ||
			inv.CallIndex != 1 || inv.Input != "in" {
			t.Fatalf("retry %d = %+v", attempt, inv)
		}
		if stateOf(r, id) != StateClaimed {
			t.Fatal("a retry left the claimed state")
		}
		if _, ok := r.ClaimNextExternal(); ok {
			t.Fatal("a retried operation is claimable again")
		}
	}
	before := len(r.Audit())
	_, err := r.RetryExternal(id, RetryTransient)
	wantKind(t, err, ErrRetryLimitReached)
	if r.tools["remote"].calls != callsBefore {
		t.Fatal("retries spent call budget")
	}
	wantAudit(t, auditAfter(r, before), nil)
	wantAudit(t, evs(r.Audit()), []ev{
		{0, "remote", 2, 0, "retry_scheduled", "transient"},
		{0, "remote", 2, 0, "retry_scheduled", "rate_limited"},
	})
	for _, e := range r.Audit() {
		wantNoError(t, e.ValidateForTelemetry())
	}
	// The default policy allows one attempt: no retry at all.
	r2, _ := newTestRuntime(t, Config{})
	mustRegister(t, r2.RegisterExternalTool(NewPolicy("once"), Metadata{}))
	once, _ := r2.Start("once", "")
	_, _ = r2.ClaimExternal(once)
	_, err = r2.RetryExternal(once, RetryTransient)
	wantKind(t, err, ErrRetryLimitReached)
	_, err = r2.RetryExternal(once, RetryClass(0))
	if err != ErrInvalidRetryClass {
		t.Fatalf("invalid class: %v", err)
	}
	// The operation is completed or cancelled after the last attempt.
	st, err := r.CompleteExternal(id, Fail(Failed("gave up")))
	wantNoError(t, err)
	wantToolError(t, st.Err, ToolFailed, "gave up")
}

// Spec: RUN-110, RUN-113, RUN-114, RUN-034
func TestDeadlineChecks(t *testing.T) {
	r, clock := deadlineRuntime(t)
	id := opIn(t, r, StateQueued)
	clock.Advance(40*time.Millisecond + 999*time.Microsecond)
	peek, _ := r.PeekNextExternal()
	if !peek.HasDeadline || peek.RemainingDeadlineMillis != 59 {
		t.Fatalf("remaining at peek = %+v", peek)
	}
	clock.Advance(60 * time.Millisecond) // elapsed 100.999 ms: expired
	inv, err := r.ClaimExternal(id)      // claim does not check the deadline
	wantNoError(t, err)
	if inv.RemainingDeadlineMillis != 0 || !inv.HasDeadline {
		t.Fatalf("remaining after expiry = %+v", inv)
	}
	before := len(r.Audit())
	wantKind(t, r.ValidateClaimedExternal(id), ErrDeadlineElapsed)
	_, err = r.RetryExternal(id, RetryTransient)
	wantKind(t, err, ErrDeadlineElapsed)
	_, err = r.PushExternalChunk(id, "x")
	wantKind(t, err, ErrDeadlineElapsed)
	_, err = r.ExternalReconcileRequest(id, "s", "r")
	wantKind(t, err, ErrDeadlineElapsed)
	req, _ := protocol.NewOperationReconcileRequest("s", "r", "remote", inv.IdempotencyKey)
	res, _ := protocol.NewOperationReconcileResult("s", "r", "remote", inv.IdempotencyKey, protocol.Running())
	_, err = r.ReconcileExternal(id, req, res)
	wantKind(t, err, ErrDeadlineElapsed)
	if stateOf(r, id) != StateClaimed {
		t.Fatal("a deadline check settled the operation")
	}
	wantAudit(t, auditAfter(r, before), nil)
	// Requesting cancellation ignores the deadline; the confirmation then times out.
	if _, err := r.RequestExternalCancellation(id); err != nil {
		t.Fatal(err)
	}
	st, err := r.ConfirmExternalCancellation(id)
	wantNoError(t, err)
	wantToolError(t, st.Err, ToolTimedOut, "remote exceeded its deferred deadline")

	// A zero deadline is expired at once; no deadline never expires.
	r2, clock2 := newTestRuntime(t, Config{})
	mustRegister(t, r2.RegisterExternalTool(NewPolicy("zero").WithDeadline(0), Metadata{}))
	mustRegister(t, r2.RegisterExternalTool(NewPolicy("forever"), Metadata{}))
	z, _ := r2.Start("zero", "")
	f, _ := r2.Start("forever", "")
	clock2.Advance(1000 * time.Hour)
	sts := r2.ExpireTimedOut()
	if len(sts) != 1 || sts[0].ID != z {
		t.Fatalf("expired = %+v", sts)
	}
	finv, _ := r2.ClaimExternal(f)
	if finv.HasDeadline || finv.RemainingDeadlineMillis != 0 {
		t.Fatalf("no-deadline invocation = %+v", finv)
	}
	// A clock that goes backwards counts as no time elapsed.
	r3, clock3 := deadlineRuntime(t)
	b := opIn(t, r3, StateQueued)
	clock3.Advance(-time.Hour)
	binv, _ := r3.ClaimExternal(b)
	if binv.RemainingDeadlineMillis != 100 {
		t.Fatalf("remaining with a backwards clock = %d", binv.RemainingDeadlineMillis)
	}
}

// Spec: RUN-111
func TestLateSettlementsBecomeTimeouts(t *testing.T) {
	settle := map[string]func(r *Runtime, id OperationID) (Settlement, error){
		"complete ok":     func(r *Runtime, id OperationID) (Settlement, error) { return r.CompleteExternal(id, OK("fine")) },
		"complete denied": func(r *Runtime, id OperationID) (Settlement, error) { return r.CompleteExternal(id, Fail(Denied("x"))) },
		"cancel":          func(r *Runtime, id OperationID) (Settlement, error) { return r.CancelExternal(id) },
		"reconcile succeeded": func(r *Runtime, id OperationID) (Settlement, error) {
			inv, _ := r.Operation(id)
			req, _ := protocol.NewOperationReconcileRequest("s", "r", "remote", inv.IdempotencyKey)
			res, _ := protocol.NewOperationReconcileResult("s", "r", "remote", inv.IdempotencyKey, protocol.Succeeded(protocol.TextPayload("ok")))
			rec, err := r.ReconcileExternal(id, req, res)
			return rec.Settlement, err
		},
		"reconcile failed": func(r *Runtime, id OperationID) (Settlement, error) {
			inv, _ := r.Operation(id)
			req, _ := protocol.NewOperationReconcileRequest("s", "r", "remote", inv.IdempotencyKey)
			res, _ := protocol.NewOperationReconcileResult("s", "r", "remote", inv.IdempotencyKey, protocol.Failed("bad"))
			rec, err := r.ReconcileExternal(id, req, res)
			return rec.Settlement, err
		},
	}
	for name, f := range settle {
		t.Run(name, func(t *testing.T) {
			r, clock := deadlineRuntime(t)
			id := opIn(t, r, StateClaimed)
			clock.Advance(100 * time.Millisecond)
			before := len(r.Audit())
			st, err := f(r, id)
			wantNoError(t, err)
			wantToolError(t, st.Err, ToolTimedOut, "remote exceeded its deferred deadline")
			wantAudit(t, auditAfter(r, before), []ev{{0, "remote", 2, 0, "timed_out", ""}})
		})
	}
	// A pumped operation past its deadline is settled without running its handler.
	r, clock := newTestRuntime(t, Config{})
	ran := 0
	mustRegister(t, r.RegisterTool(NewPolicy("local").WithDeadline(time.Second), Metadata{}, func(ToolRequest) (string, error) {
		ran++
		return "x", nil
	}))
	_, _ = r.Start("local", "")
	clock.Advance(time.Second)
	sts := r.Pump()
	if ran != 0 || len(sts) != 1 {
		t.Fatalf("handler ran %d times, settlements %+v", ran, sts)
	}
	wantToolError(t, sts[0].Err, ToolTimedOut, "local exceeded its deferred deadline")
}

// Spec: RUN-112, RUN-083
func TestExpiryIsHostDrivenAndBounded(t *testing.T) {
	r, clock := deadlineRuntime(t)
	var ids []OperationID
	for i := 0; i < 5; i++ {
		ids = append(ids, opIn(t, r, []State{StateQueued, StateHostPump, StateClaimed, StateCancellationRequested, StateQueued}[i]))
	}
	clock.Advance(time.Second)
	for _, id := range ids {
		if stateOf(r, id) == StateReady {
			t.Fatal("an operation expired without an expiry call")
		}
	}
	sts := r.ExpireTimedOutUpTo(2)
	if len(sts) != 2 || sts[0].ID != ids[0] || sts[1].ID != ids[1] {
		t.Fatalf("first batch = %+v", sts)
	}
	sts = r.ExpireTimedOut()
	if len(sts) != 3 || sts[0].ID != ids[2] || sts[2].ID != ids[4] {
		t.Fatalf("second batch = %+v", sts)
	}
	if len(r.ExpireTimedOut()) != 0 {
		t.Fatal("settled operations expired again")
	}
	// The default batch is the pending limit.
	r2, clock2 := newTestRuntime(t, Config{MaxPendingTools: 3})
	p := NewPolicy("remote").WithDeadline(time.Millisecond)
	p.MaxCalls = 10
	mustRegister(t, r2.RegisterExternalTool(p, Metadata{}))
	for i := 0; i < 3; i++ {
		_, _ = r2.Start("remote", "")
	}
	clock2.Advance(time.Millisecond)
	if n := len(r2.ExpireTimedOut()); n != 3 {
		t.Fatalf("expired %d", n)
	}
}
