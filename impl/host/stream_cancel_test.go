package host

import (
	"strings"
	"testing"
)

// streamRuntime registers "s" with 3 chunks of at most 4 bytes, 10 source bytes, 12 emitted
// bytes, 2 attempts, and a redactor that doubles every "x"; and "plain" without a stream.
func streamRuntime(t testing.TB) *Runtime {
	t.Helper()
	r, _ := newTestRuntime(t, Config{})
	p := NewPolicy("s").WithStream(StreamPolicy{MaxChunks: 3, MaxChunkBytes: 4, MaxTotalBytes: 10, MaxEmittedBytes: 12})
	p.MaxAttempts = 2
	mustRegister(t, r.RegisterExternalTool(p, Metadata{}))
	mustRegister(t, r.SetExternalStreamRedactor("s", func(s string) string { return strings.ReplaceAll(s, "x", "xx") }))
	mustRegister(t, r.RegisterExternalTool(NewPolicy("plain"), Metadata{}))
	return r
}

// Spec: RUN-121, RUN-122, RUN-120
func TestStreamLimits(t *testing.T) {
	r := streamRuntime(t)
	id, _ := r.Start("s", "in")
	inv, _ := r.ClaimExternal(id)
	push := func(text string) (StreamChunk, error) { return r.PushExternalChunk(id, text) }

	// Per-chunk limit: 5 > 4 bytes.
	_, err := push("abcde")
	wantKind(t, err, ErrStreamLimitExceeded)
	// Accepted: "ab" (2 bytes, emitted 2).
	ch, err := push("ab")
	wantNoError(t, err)
	if ch != (StreamChunk{ID: id, Name: "s", CallIndex: 1, Attempt: 1, ChunkIndex: 1, IdempotencyKey: inv.IdempotencyKey, Text: "ab"}) {
		t.Fatalf("chunk = %+v", ch)
	}
	// A retry keeps the counters.
	if _, err := r.RetryExternal(id, RetryTransient); err != nil {
		t.Fatal(err)
	}
	// Emitted limit: "xxxx" releases 8 bytes; 2 + 8 = 10 <= 12 accepted.
	ch, err = push("xxxx")
	wantNoError(t, err)
	if ch.Text != "xxxxxxxx" || ch.ChunkIndex != 2 || ch.Attempt != 2 {
		t.Fatalf("chunk = %+v", ch)
	}
	// Source aggregate: 6 used, 4 left; emitted: 10 used, 2 left. "xy" releases 3 > 2.
	_, err = push("xy")
	wantKind(t, err, ErrStreamLimitExceeded)
	// Empty chunk counts as the third chunk.
	ch, err = push("")
	wantNoError(t, err)
	if ch.ChunkIndex != 3 || ch.Text != "" {
		t.Fatalf("empty chunk = %+v", ch)
	}
	// Chunk count limit reached.
	_, err = push("a")
	wantKind(t, err, ErrStreamLimitExceeded)
	info, _ := r.Operation(id)
	if info.Chunks != 3 || info.SourceBytes != 6 || info.EmittedBytes != 10 {
		t.Fatalf("counters = %+v", info)
	}
	wantAudit(t, evs(r.Audit()), []ev{
		{0, "s", 5, 0, "stream_denied", ""},
		{0, "s", 2, 2, "streamed", ""},
		{0, "s", 2, 0, "retry_scheduled", "transient"},
		{0, "s", 4, 8, "streamed", ""},
		{0, "s", 2, 0, "stream_denied", ""},
		{0, "s", 0, 0, "streamed", ""},
		{0, "s", 1, 0, "stream_denied", ""},
	})
	for _, e := range r.Audit() {
		wantNoError(t, e.ValidateForTelemetry())
	}
	// The terminal result still obeys the output rules and settles normally.
	st, err := r.CompleteExternal(id, OK("final"))
	if err != nil || st.Output != "final" {
		t.Fatalf("complete = %+v, %v", st, err)
	}
	_, err = push("late")
	wantKind(t, err, ErrAlreadyCompleted)
}

// Spec: RUN-121
func TestStreamAggregateSourceLimitAndDisabledStream(t *testing.T) {
	r := streamRuntime(t)
	id, _ := r.Start("s", "")
	_, _ = r.ClaimExternal(id)
	for _, c := range []string{"aaaa", "bbbb"} {
		if _, err := r.PushExternalChunk(id, c); err != nil {
			t.Fatal(err)
		}
	}
	_, err := r.PushExternalChunk(id, "ccc") // 8 + 3 > 10 source bytes
	wantKind(t, err, ErrStreamLimitExceeded)
	if _, err := r.PushExternalChunk(id, "cc"); err != nil { // exactly 10
		t.Fatal(err)
	}
	p, _ := r.Start("plain", "")
	_, _ = r.ClaimExternal(p)
	before := len(r.Audit())
	_, err = r.PushExternalChunk(p, "hello")
	wantKind(t, err, ErrStreamingDisabled)
	wantAudit(t, auditAfter(r, before), []ev{{1, "plain", 5, 0, "stream_denied", ""}})
}

// Spec: RUN-130, RUN-131
func TestCancellationRequestIsIdempotentAndCarriesNoInput(t *testing.T) {
	r, _ := lifecycleRuntime(t)
	id, _ := r.Start("remote", "secret input")
	_, _ = r.ClaimExternal(id)
	a, err := r.RequestExternalCancellation(id)
	wantNoError(t, err)
	b, err := r.RequestExternalCancellation(id)
	wantNoError(t, err)
	if a != b {
		t.Fatalf("repeated request differs: %+v %+v", a, b)
	}
	if strings.Contains(a.Name+a.IdempotencyKey, "secret") {
		t.Fatal("the request carries the input")
	}
	wantAudit(t, evs(r.Audit()), []ev{{0, "remote", 12, 0, "cancellation_requested", ""}})
	// While cancellation is requested the promise stays pending and retries, validation and
	// chunks are refused.
	if _, ready, _ := r.Await(id); ready {
		t.Fatal("a cancellation request settled the promise")
	}
	_, err = r.RetryExternal(id, RetryTransient)
	wantKind(t, err, ErrCancellationRequested)
	wantKind(t, r.ValidateClaimedExternal(id), ErrCancellationRequested)
	_, err = r.PushExternalChunk(id, "x")
	wantKind(t, err, ErrCancellationRequested)
	if len(r.Audit()) != 1 {
		t.Fatalf("refusals were audited: %+v", r.Audit())
	}
}

// Spec: RUN-131, RUN-132, RUN-133
func TestCancellationRaces(t *testing.T) {
	type step func(r *Runtime, id OperationID) (Settlement, error)
	complete := func(res Result) step {
		return func(r *Runtime, id OperationID) (Settlement, error) { return r.CompleteExternal(id, res) }
	}
	confirm := func(r *Runtime, id OperationID) (Settlement, error) { return r.ConfirmExternalCancellation(id) }
	cancel := func(r *Runtime, id OperationID) (Settlement, error) { return r.CancelExternal(id) }
	cases := []struct {
		name    string
		request bool
		first   step
		kind    ToolErrorKind // 0 = success
		output  string
		outcome string
		second  step
	}{
		{"result wins over a requested cancellation", true, complete(OK("done")), 0, "done", "allowed", confirm},
		{"failure wins over a requested cancellation", true, complete(Fail(Failed("broke"))), ToolFailed, "", "failed", confirm},
		{"confirmation wins, the late result is refused", true, confirm, ToolCancelled, "", "cancelled", complete(OK("late"))},
		{"direct cancel without a request", false, cancel, ToolCancelled, "", "cancelled", complete(OK("late"))},
		{"direct cancel after a request", true, cancel, ToolCancelled, "", "cancelled", confirm},
		{"host result of kind cancelled", false, complete(Fail(Cancelled("by host"))), ToolCancelled, "", "cancelled", cancel},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, _ := lifecycleRuntime(t)
			id := opIn(t, r, StateClaimed)
			if c.request {
				_, _ = r.RequestExternalCancellation(id)
			}
			before := len(r.Audit())
			st, err := c.first(r, id)
			wantNoError(t, err)
			if c.kind == 0 {
				if st.Err != nil || st.Output != c.output {
					t.Fatalf("settlement = %+v", st)
				}
			} else if st.Err == nil || st.Err.Kind != c.kind {
				t.Fatalf("settlement = %+v", st)
			}
			out := 0
			if c.outcome == "allowed" {
				out = len(c.output)
			}
			wantAudit(t, auditAfter(r, before), []ev{{0, "remote", 2, out, c.outcome, ""}})
			_, err = c.second(r, id)
			wantKind(t, err, ErrAlreadyCompleted)
			if len(r.Audit()) != before+1 {
				t.Fatal("the losing call was audited")
			}
		})
	}
}
