package host

import (
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/protocol"
)

// Spec: RUN-050
func TestStartCreatesOneRecord(t *testing.T) {
	r, _ := lifecycleRuntime(t)
	hp := opIn(t, r, StateHostPump)
	q := opIn(t, r, StateQueued)
	if _, err := r.Start("local", strings.Repeat("x", 20000)); err == nil {
		t.Fatal("oversized start accepted")
	}
	ops := r.Operations()
	if len(ops) != 2 {
		t.Fatalf("records = %+v", ops)
	}
	for _, op := range ops {
		if op.Attempt != 1 || op.Chunks != 0 || op.SourceBytes != 0 || op.EmittedBytes != 0 || op.Awaited || op.Released {
			t.Fatalf("fresh record = %+v", op)
		}
	}
	if ops[0].ID != hp || ops[0].State != StateHostPump || ops[1].ID != q || ops[1].State != StateQueued {
		t.Fatalf("records = %+v", ops)
	}
}

// Spec: RUN-053, RUN-055
func TestAwait(t *testing.T) {
	r, _ := lifecycleRuntime(t)
	id := opIn(t, r, StateClaimed)
	if _, ready, err := r.Await(id); ready || err != nil {
		t.Fatalf("first await = %v, %v", ready, err)
	}
	if info, _ := r.Operation(id); !info.Awaited {
		t.Fatal("the waiter was not recorded")
	}
	_, _, err := r.Await(id)
	if err != ErrPromiseAlreadyAwaited || err.Error() != "tool promise is already awaited" {
		t.Fatalf("second await = %v", err)
	}
	st, err := r.CompleteExternal(id, OK("v"))
	wantNoError(t, err)
	if !st.Awaited || st.Output != "v" {
		t.Fatalf("settlement = %+v", st)
	}
	for i := 0; i < 3; i++ {
		out, ready, err := r.Await(id)
		if !ready || err != nil || out != "v" {
			t.Fatalf("await of a settled operation = %q %v %v", out, ready, err)
		}
	}
	failed := opIn(t, r, StateClaimed)
	st, _ = r.CompleteExternal(failed, Fail(Failed("nope")))
	if st.Awaited {
		t.Fatal("an operation nobody awaited reports a waiter")
	}
	for i := 0; i < 2; i++ {
		_, ready, err := r.Await(failed)
		if !ready {
			t.Fatal("not ready")
		}
		wantToolError(t, err, ToolFailed, "nope")
	}
	_, _, err = r.Await(12345)
	if err != ErrUnknownPromise || err.Error() != "unknown tool promise" {
		t.Fatalf("await unknown = %v", err)
	}
	r.ReleasePromise(failed)
	if _, _, err := r.Await(failed); err != ErrUnknownPromise {
		t.Fatalf("await released = %v", err)
	}
}

// Spec: RUN-054, RUN-051
func TestGarbageCollection(t *testing.T) {
	r, _ := lifecycleRuntime(t)
	ids := map[State]OperationID{}
	for _, s := range lifecycleStates[1:] {
		ids[s] = opIn(t, r, s)
	}
	before := len(r.Audit())
	for _, id := range ids {
		if !r.ReleasePromise(id) {
			t.Fatal("release of a retained record failed")
		}
	}
	if r.PendingTools() != 5 {
		t.Fatalf("release alone removed records: %d", r.PendingTools())
	}
	if removed := r.CollectGarbage(); removed != 3 {
		t.Fatalf("removed = %d, want 3 (queued, host-pump, ready)", removed)
	}
	for _, s := range []State{StateQueued, StateHostPump, StateReady} {
		if _, ok := r.Operation(ids[s]); ok {
			t.Fatalf("%s record survived", s)
		}
	}
	for _, s := range []State{StateClaimed, StateCancellationRequested} {
		info, ok := r.Operation(ids[s])
		if !ok || !info.Orphaned || info.State != s {
			t.Fatalf("%s orphan = %+v %v", s, info, ok)
		}
	}
	wantAudit(t, auditAfter(r, before), nil)
	// The collected host-pump record never runs.
	if sts := r.PumpUpTo(10); len(sts) != 0 {
		t.Fatalf("pump ran a collected operation: %+v", sts)
	}
	// A collected queued record is never claimable.
	if _, ok := r.ClaimNextExternal(); ok {
		t.Fatal("a collected operation was claimed")
	}
	_, err := r.ClaimExternal(ids[StateQueued])
	wantKind(t, err, ErrUnknownOperation)
	// The orphans stay manageable and are deleted as soon as they settle, after their audit.
	if _, err := r.PushExternalChunk(ids[StateClaimed], "c"); err != nil {
		t.Fatal(err)
	}
	st, err := r.CompleteExternal(ids[StateClaimed], OK("x"))
	wantNoError(t, err)
	if st.Awaited {
		t.Fatal("an orphan reports a waiter")
	}
	st, err = r.ConfirmExternalCancellation(ids[StateCancellationRequested])
	wantNoError(t, err)
	if r.PendingTools() != 0 {
		t.Fatalf("orphans retained after settling: %+v", r.Operations())
	}
	_, err = r.CompleteExternal(ids[StateClaimed], OK("again"))
	wantKind(t, err, ErrUnknownOperation)
	wantAudit(t, auditAfter(r, before), []ev{
		{1, "remote", 1, 1, "streamed", ""}, // a chunk's own length is its input bytes
		{1, "remote", 2, 1, "allowed", ""},
		{2, "remote", 2, 0, "cancelled", ""},
	})
	// Collection of a record the script still references changes nothing.
	kept := opIn(t, r, StateQueued)
	r.CollectGarbage()
	if _, ok := r.Operation(kept); !ok {
		t.Fatal("a referenced record was collected")
	}
	if r.ReleasePromise(99999) {
		t.Fatal("released an unknown record")
	}
}

// Spec: RUN-054
func TestOrphanExpiresAndIsRemoved(t *testing.T) {
	r, clock := deadlineRuntime(t)
	id := opIn(t, r, StateClaimed)
	r.ReleasePromise(id)
	r.CollectGarbage()
	clock.Advance(200_000_000)
	sts := r.ExpireTimedOut()
	if len(sts) != 1 || sts[0].ID != id || r.PendingTools() != 0 {
		t.Fatalf("expiry of an orphan: %+v, %d retained", sts, r.PendingTools())
	}
}

// Spec: RUN-085
func TestInvocationSnapshot(t *testing.T) {
	r, _ := lifecycleRuntime(t)
	id, err := r.StartJSON("remote.json", `{"b":[1.50,{"z":null,"a":"\u00e9"}],"a":1}`)
	wantNoError(t, err)
	inv, err := r.ClaimExternal(id)
	wantNoError(t, err)
	if inv.Input != `{"b":[1.50,{"z":null,"a":"\u00e9"}],"a":1}` || inv.Format != FormatJSON || inv.CallIndex != 1 ||
		inv.MaxAttempts != 1 || inv.MaxOutputBytes != 65536 || inv.HasDeadline || inv.Stream != nil {
		t.Fatalf("invocation = %+v", inv)
	}
	p, err := inv.WorkerPayload()
	wantNoError(t, err)
	if p.Format != protocol.FormatJSON || string(p.JSON.JSON()) != `{"a":1,"b":[1.50,{"a":"é","z":null}]}` {
		t.Fatalf("payload = %s", p.JSON.JSON())
	}
	canon, err := inv.CanonicalInputBytes()
	wantNoError(t, err)
	body := `{"a":1,"b":[1.50,{"a":"é","z":null}]}`
	if want := "json" + string(be64(uint64(len(body)))) + body; string(canon) != want {
		t.Fatalf("canonical = %q, want %q", canon, want)
	}
	text := opIn(t, r, StateClaimed)
	rinv, err := r.RetryExternal(text, RetryTransient)
	wantNoError(t, err)
	tp, err := rinv.WorkerPayload()
	if err != nil || tp.Format != protocol.FormatText || tp.Text != "in" {
		t.Fatalf("text payload = %+v, %v", tp, err)
	}
	if rinv.Stream == nil || *rinv.Stream != (StreamPolicy{4, 8, 16, 16}) {
		t.Fatalf("stream = %+v", rinv.Stream)
	}
	// A JSON input beyond the protocol depth limit passes the runtime but not the payload.
	deep := strings.Repeat("[", 33) + strings.Repeat("]", 33)
	did, err := r.StartJSON("remote.json", deep)
	wantNoError(t, err)
	dinv, err := r.ClaimExternal(did)
	wantNoError(t, err)
	_, err = dinv.WorkerPayload()
	wantKind(t, err, ErrInvalidPayload)
	_, err = dinv.CanonicalInputBytes()
	wantKind(t, err, ErrInvalidPayload)
}
