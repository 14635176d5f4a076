package host

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"time"

	"github.com/splashv5/conform/impl/protocol"
)

var lifecycleStates = []State{stateUnknown, StateQueued, StateClaimed, StateCancellationRequested, StateHostPump, StateReady}

func stateName(s State) string {
	if s == stateUnknown {
		return "unknown"
	}
	return s.String()
}

// cell is one host call applied to one operation state: want is the error kind (nil for
// success), next the state afterwards, audit the records the call writes.
type cell struct {
	want  error
	next  State
	audit []ev
}

// runCells builds a fresh runtime per state, applies call and checks error, state and audit.
func runCells(t *testing.T, cells map[State]cell, call func(t *testing.T, r *Runtime, id OperationID) error) {
	t.Helper()
	for _, s := range lifecycleStates {
		c, ok := cells[s]
		if !ok {
			t.Fatalf("no expectation for state %s", stateName(s))
		}
		t.Run(stateName(s), func(t *testing.T) {
			r, _ := lifecycleRuntime(t)
			id := opIn(t, r, s)
			before := len(r.Audit())
			opsBefore := r.Operations()
			err := call(t, r, id)
			if c.want == nil {
				wantNoError(t, err)
			} else {
				wantKind(t, err, c.want)
				// A refused call changes no record.
				if d := cmp.Diff(opsBefore, r.Operations()); d != "" {
					t.Fatalf("refused call changed the records (-before +after):\n%s", d)
				}
			}
			if got := stateOf(r, id); got != c.next {
				t.Fatalf("state = %s, want %s", stateName(got), stateName(c.next))
			}
			wantAudit(t, auditAfter(r, before), c.audit)
		})
	}
}

// refusals builds the cells where the call is refused in Unknown, Q, HP and R.
func refusals(q error, extra map[State]cell) map[State]cell {
	m := map[State]cell{
		stateUnknown:  {want: ErrUnknownOperation, next: stateUnknown},
		StateQueued:   {want: q, next: StateQueued},
		StateHostPump: {want: ErrNotExternal, next: StateHostPump},
		StateReady:    {want: ErrAlreadyCompleted, next: StateReady},
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// Spec: RUN-072, RUN-084
func TestLifecycleClaimExternal(t *testing.T) {
	cells := refusals(nil, map[State]cell{
		StateQueued:                {next: StateClaimed},
		StateClaimed:               {want: ErrAlreadyClaimed, next: StateClaimed},
		StateCancellationRequested: {want: ErrAlreadyClaimed, next: StateCancellationRequested},
	})
	runCells(t, cells, func(t *testing.T, r *Runtime, id OperationID) error {
		inv, err := r.ClaimExternal(id)
		if err == nil && (inv.ID != id || inv.Name != "remote" || inv.Input != "in" || inv.Attempt != 1) {
			t.Fatalf("invocation = %+v", inv)
		}
		return err
	})
}

// Spec: RUN-073, RUN-084
func TestLifecycleValidateClaimed(t *testing.T) {
	cells := refusals(ErrNotClaimed, map[State]cell{
		StateClaimed:               {next: StateClaimed},
		StateCancellationRequested: {want: ErrCancellationRequested, next: StateCancellationRequested},
	})
	runCells(t, cells, func(t *testing.T, r *Runtime, id OperationID) error {
		return r.ValidateClaimedExternal(id)
	})
}

// Spec: RUN-074, RUN-100, RUN-101, RUN-084
func TestLifecycleRetry(t *testing.T) {
	cells := refusals(ErrNotClaimed, map[State]cell{
		StateClaimed:               {next: StateClaimed, audit: []ev{{0, "remote", 2, 0, "retry_scheduled", "transient"}}},
		StateCancellationRequested: {want: ErrCancellationRequested, next: StateCancellationRequested},
	})
	runCells(t, cells, func(t *testing.T, r *Runtime, id OperationID) error {
		inv, err := r.RetryExternal(id, RetryTransient)
		if err == nil && inv.Attempt != 2 {
			t.Fatalf("attempt = %d, want 2", inv.Attempt)
		}
		return err
	})
}

// Spec: RUN-075, RUN-130, RUN-084
func TestLifecycleRequestCancellation(t *testing.T) {
	cells := refusals(ErrNotClaimed, map[State]cell{
		StateClaimed:               {next: StateCancellationRequested, audit: []ev{{0, "remote", 2, 0, "cancellation_requested", ""}}},
		StateCancellationRequested: {next: StateCancellationRequested},
	})
	runCells(t, cells, func(t *testing.T, r *Runtime, id OperationID) error {
		req, err := r.RequestExternalCancellation(id)
		if err == nil {
			want := CancellationRequest{ID: id, Name: "remote", CallIndex: 1, Attempt: 1, IdempotencyKey: r.idempotencyKey(0), issued: true}
			if req != want || !req.Issued() {
				t.Fatalf("request = %+v, want %+v", req, want)
			}
		}
		return err
	})
}

// Spec: RUN-076, RUN-132, RUN-084
func TestLifecycleConfirmCancellation(t *testing.T) {
	cells := refusals(ErrNotClaimed, map[State]cell{
		StateClaimed:               {want: ErrCancellationNotRequested, next: StateClaimed},
		StateCancellationRequested: {next: StateReady, audit: []ev{{0, "remote", 2, 0, "cancelled", ""}}},
	})
	runCells(t, cells, func(t *testing.T, r *Runtime, id OperationID) error {
		st, err := r.ConfirmExternalCancellation(id)
		if err == nil {
			wantToolError(t, st.Err, ToolCancelled, "external operation was reported cancelled")
		}
		return err
	})
}

// Spec: RUN-077, RUN-133, RUN-084
func TestLifecycleCancel(t *testing.T) {
	cancelled := []ev{{0, "remote", 2, 0, "cancelled", ""}}
	cells := refusals(ErrNotClaimed, map[State]cell{
		StateClaimed:               {next: StateReady, audit: cancelled},
		StateCancellationRequested: {next: StateReady, audit: cancelled},
	})
	runCells(t, cells, func(t *testing.T, r *Runtime, id OperationID) error {
		_, err := r.CancelExternal(id)
		return err
	})
}

// Spec: RUN-078, RUN-131, RUN-084
func TestLifecycleComplete(t *testing.T) {
	allowed := []ev{{0, "remote", 2, 4, "allowed", ""}}
	cells := refusals(ErrNotClaimed, map[State]cell{
		StateClaimed:               {next: StateReady, audit: allowed},
		StateCancellationRequested: {next: StateReady, audit: allowed},
	})
	runCells(t, cells, func(t *testing.T, r *Runtime, id OperationID) error {
		st, err := r.CompleteExternal(id, OK("done"))
		if err == nil && (st.Output != "done" || st.Err != nil) {
			t.Fatalf("settlement = %+v", st)
		}
		return err
	})
}

// Spec: RUN-079, RUN-121, RUN-084
func TestLifecyclePushChunk(t *testing.T) {
	cells := refusals(ErrNotClaimed, map[State]cell{
		StateClaimed:               {next: StateClaimed, audit: []ev{{0, "remote", 3, 3, "streamed", ""}}},
		StateCancellationRequested: {want: ErrCancellationRequested, next: StateCancellationRequested},
	})
	runCells(t, cells, func(t *testing.T, r *Runtime, id OperationID) error {
		ch, err := r.PushExternalChunk(id, "abc")
		if err == nil && (ch.Text != "abc" || ch.ChunkIndex != 1) {
			t.Fatalf("chunk = %+v", ch)
		}
		return err
	})
}

// Spec: RUN-080, RUN-160, RUN-084
func TestLifecycleReconcileRequest(t *testing.T) {
	cells := refusals(ErrNotClaimed, map[State]cell{
		StateClaimed:               {next: StateClaimed},
		StateCancellationRequested: {next: StateCancellationRequested},
	})
	runCells(t, cells, func(t *testing.T, r *Runtime, id OperationID) error {
		req, err := r.ExternalReconcileRequest(id, "session-1", "reconcile-1")
		if err == nil {
			want, _ := protocol.NewOperationReconcileRequest("session-1", "reconcile-1", "remote", r.idempotencyKey(0))
			if req != want {
				t.Fatalf("request = %+v, want %+v", req, want)
			}
		}
		return err
	})
}

// Spec: RUN-081, RUN-161, RUN-084
func TestLifecycleReconcile(t *testing.T) {
	allowed := []ev{{0, "remote", 2, 2, "allowed", ""}}
	cells := refusals(ErrNotClaimed, map[State]cell{
		StateClaimed:               {next: StateReady, audit: allowed},
		StateCancellationRequested: {next: StateReady, audit: allowed},
	})
	runCells(t, cells, func(t *testing.T, r *Runtime, id OperationID) error {
		req, err := protocol.NewOperationReconcileRequest("session-1", "reconcile-1", "remote", r.idempotencyKey(0))
		wantNoError(t, err)
		res, err := protocol.NewOperationReconcileResult("session-1", "reconcile-1", "remote", r.idempotencyKey(0),
			protocol.Succeeded(protocol.TextPayload("ok")))
		wantNoError(t, err)
		_, err = r.ReconcileExternal(id, req, res)
		return err
	})
}

// Spec: RUN-070, RUN-071
func TestLifecyclePeekAndClaimNext(t *testing.T) {
	for _, s := range lifecycleStates[1:] {
		t.Run(stateName(s), func(t *testing.T) {
			r, _ := lifecycleRuntime(t)
			id := opIn(t, r, s)
			before := len(r.Audit())
			inv, ok := r.PeekNextExternal()
			if ok != (s == StateQueued) {
				t.Fatalf("peek found = %v", ok)
			}
			if ok && (inv.ID != id || stateOf(r, id) != StateQueued) {
				t.Fatalf("peek = %+v changed state to %s", inv, stateOf(r, id))
			}
			inv, ok = r.ClaimNextExternal()
			if ok != (s == StateQueued) {
				t.Fatalf("claim next found = %v", ok)
			}
			want := s
			if s == StateQueued {
				want = StateClaimed
				if inv.ID != id {
					t.Fatalf("claimed %d, want %d", inv.ID, id)
				}
			}
			if got := stateOf(r, id); got != want {
				t.Fatalf("state = %s, want %s", got, want)
			}
			wantAudit(t, auditAfter(r, before), nil)
		})
	}
}

// Spec: RUN-070, RUN-071, RUN-052
func TestPeekAndClaimNextScanOrder(t *testing.T) {
	r, _ := lifecycleRuntime(t)
	a := opIn(t, r, StateHostPump)
	b := opIn(t, r, StateClaimed)
	c := opIn(t, r, StateQueued)
	d := opIn(t, r, StateQueued)
	if a >= b || b >= c || c >= d {
		t.Fatalf("IDs not ascending: %d %d %d %d", a, b, c, d)
	}
	if inv, ok := r.PeekNextExternal(); !ok || inv.ID != c {
		t.Fatalf("peek = %d %v, want %d", inv.ID, ok, c)
	}
	if inv, _ := r.ClaimNextExternal(); inv.ID != c {
		t.Fatalf("first claim = %d, want %d", inv.ID, c)
	}
	if inv, _ := r.ClaimNextExternal(); inv.ID != d {
		t.Fatalf("second claim = %d, want %d", inv.ID, d)
	}
	if _, ok := r.ClaimNextExternal(); ok {
		t.Fatal("a third claim found work")
	}
}

// Spec: RUN-082
func TestLifecyclePump(t *testing.T) {
	for _, s := range lifecycleStates[1:] {
		t.Run(stateName(s), func(t *testing.T) {
			r, _ := lifecycleRuntime(t)
			id := opIn(t, r, s)
			before := len(r.Audit())
			sts := r.PumpUpTo(4)
			want, wantAuditRecs := s, []ev(nil)
			if s == StateHostPump {
				want = StateReady
				wantAuditRecs = []ev{{0, "local", 2, 7, "allowed", ""}}
				if len(sts) != 1 || sts[0].ID != id || sts[0].Output != "echo:in" {
					t.Fatalf("settlements = %+v", sts)
				}
			} else if len(sts) != 0 {
				t.Fatalf("pump settled %+v", sts)
			}
			if got := stateOf(r, id); got != want {
				t.Fatalf("state = %s, want %s", got, want)
			}
			wantAudit(t, auditAfter(r, before), wantAuditRecs)
		})
	}
}

// Spec: RUN-082
func TestPumpBatchAndOrder(t *testing.T) {
	r, _ := lifecycleRuntime(t)
	var ids []OperationID
	for i := 0; i < 3; i++ {
		ids = append(ids, opIn(t, r, StateHostPump))
	}
	if sts := r.Pump(); len(sts) != 1 || sts[0].ID != ids[0] {
		t.Fatalf("pump = %+v", sts)
	}
	if sts := r.PumpUpTo(5); len(sts) != 2 || sts[0].ID != ids[1] || sts[1].ID != ids[2] {
		t.Fatalf("pump up to 5 = %+v", sts)
	}
	if sts := r.PumpUpTo(5); len(sts) != 0 {
		t.Fatalf("empty pump = %+v", sts)
	}
}

// deadlineRuntime registers "local" and "remote" with a 100 ms deadline.
func deadlineRuntime(t testing.TB) (*Runtime, *fakeClock) {
	t.Helper()
	r, clock := newTestRuntime(t, Config{})
	local := NewPolicy("local").WithDeadline(100 * time.Millisecond)
	local.MaxCalls = 100
	mustRegister(t, r.RegisterTool(local, Metadata{}, echo))
	remote := NewPolicy("remote").WithDeadline(100 * time.Millisecond).WithStream(DefaultStreamPolicy())
	remote.MaxCalls, remote.MaxAttempts = 100, 3
	mustRegister(t, r.RegisterExternalTool(remote, Metadata{}))
	return r, clock
}

// Spec: RUN-083, RUN-111, RUN-112
func TestLifecycleExpire(t *testing.T) {
	for _, s := range lifecycleStates[1:] {
		t.Run(stateName(s), func(t *testing.T) {
			r, clock := deadlineRuntime(t)
			id := opIn(t, r, s)
			name := "remote"
			if s == StateHostPump {
				name = "local"
			}
			clock.Advance(99 * time.Millisecond)
			if sts := r.ExpireTimedOut(); len(sts) != 0 {
				t.Fatalf("expired early: %+v", sts)
			}
			clock.Advance(time.Millisecond)
			before := len(r.Audit())
			sts := r.ExpireTimedOut()
			if s == StateReady {
				if len(sts) != 0 || stateOf(r, id) != StateReady {
					t.Fatalf("a ready operation expired: %+v", sts)
				}
				wantAudit(t, auditAfter(r, before), nil)
				return
			}
			if len(sts) != 1 || sts[0].ID != id {
				t.Fatalf("settlements = %+v", sts)
			}
			wantToolError(t, sts[0].Err, ToolTimedOut, name+" exceeded its deferred deadline")
			if got := stateOf(r, id); got != StateReady {
				t.Fatalf("state = %s", got)
			}
			wantAudit(t, auditAfter(r, before), []ev{{0, name, 2, 0, "timed_out", ""}})
		})
	}
}
