package host

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/schema"
)

// Spec: RUN-140, RUN-016
func TestOutputRules(t *testing.T) {
	r, _ := newTestRuntime(t, Config{})
	contract, err := schema.NewContract(jv(t, `{}`), jv(t, `{"type":"object","required":["ok"]}`))
	wantNoError(t, err)
	p := JSONPolicy("j")
	p.MaxCalls, p.MaxOutputBytes = 100, 12
	mustRegister(t, r.RegisterValidatedExternalJSONTool(p, Metadata{}, contract))
	tp := NewPolicy("t")
	tp.MaxCalls, tp.MaxOutputBytes = 100, 3
	mustRegister(t, r.RegisterExternalTool(tp, Metadata{}))
	deep := strings.Repeat(`{"a":`, 40) + `{"ok":1}` + strings.Repeat(`}`, 40)
	cases := []struct {
		tool, output string
		kind         ToolErrorKind
		msg          string
	}{
		{"j", `{"ok":true}`, 0, ""},
		{"j", `{"ok":"1234"}`, ToolDenied, "j output exceeds 12 bytes"},
		{"j", `{"ok":`, ToolDenied, "j output is not valid JSON"},
		{"j", `"str"`, ToolDenied, "j output must be a JSON object or array"},
		{"j", `{"no":1}`, ToolDenied, `output does not match its schema: $: missing required property "ok"`},
		{"t", "abc", 0, ""},
		{"t", "abcd", ToolDenied, "t output exceeds 3 bytes"},
		{"t", "é", 0, ""},  // 2 bytes
		{"t", "{x", 0, ""}, // text tools check nothing else
	}
	for _, c := range cases {
		id, err := r.Start(c.tool, "{}")
		wantNoError(t, err)
		_, _ = r.ClaimExternal(id)
		st, err := r.CompleteExternal(id, OK(c.output))
		wantNoError(t, err)
		if c.kind == 0 {
			if st.Err != nil || st.Output != c.output {
				t.Fatalf("%s %q: %+v", c.tool, c.output, st)
			}
			continue
		}
		wantToolError(t, st.Err, c.kind, c.msg)
	}
	// No depth limit at this layer: a 41-level output passes a large enough tool.
	big := JSONPolicy("deep")
	mustRegister(t, r.RegisterExternalJSONTool(big, Metadata{}))
	id, _ := r.StartJSON("deep", "[]")
	_, _ = r.ClaimExternal(id)
	if st, _ := r.CompleteExternal(id, OK(deep)); st.Err != nil {
		t.Fatalf("deep output: %v", st.Err)
	}
	// A host failure passes unchanged, whatever its kind; an invalid kind becomes Failed.
	for _, k := range []ToolErrorKind{ToolDenied, ToolFailed, ToolCancelled, ToolTimedOut} {
		id, _ := r.Start("t", "")
		_, _ = r.ClaimExternal(id)
		st, _ := r.CompleteExternal(id, Fail(&ToolError{Kind: k, Message: "m"}))
		wantToolError(t, st.Err, k, "m")
	}
	id, _ = r.Start("t", "")
	_, _ = r.ClaimExternal(id)
	st, _ := r.CompleteExternal(id, Fail(&ToolError{Message: "m"}))
	wantToolError(t, st.Err, ToolFailed, "m")
}

// Spec: RUN-140, RUN-141
func TestHostPumpHandlers(t *testing.T) {
	r, _ := newTestRuntime(t, Config{})
	var got canonjson.Value
	p := JSONPolicy("j")
	p.MaxCalls = 5
	mustRegister(t, r.RegisterJSONTool(p, Metadata{}, func(req JSONToolRequest) (canonjson.Value, error) {
		got = req.Input
		if req.CallIndex == 2 {
			return canonjson.String("scalar"), nil
		}
		if req.CallIndex == 3 {
			return canonjson.Value{}, errors.New("secret detail")
		}
		return canonjson.Object(
			canonjson.Entry{Key: "z", Value: canonjson.Int(1)},
			canonjson.Entry{Key: "a", Value: req.Input},
		), nil
	}))
	out, err := r.CallJSON("j", `{"n":1.50,"m":100000000000000000000}`)
	wantNoError(t, err)
	if out != `{"a":{"m":100000000000000000000,"n":1.50},"z":1}` {
		t.Fatalf("output = %s", out)
	}
	if string(got.JSON()) != `{"m":100000000000000000000,"n":1.50}` {
		t.Fatalf("handler input = %s", got.JSON())
	}
	_, err = r.CallJSON("j", `[]`)
	wantToolError(t, err, ToolDenied, "j output must be a JSON object or array")
	_, err = r.CallJSON("j", `[]`)
	wantToolError(t, err, ToolFailed, "j handler failed")
	if strings.Contains(err.Error(), "secret") {
		t.Fatal("a handler's error detail reached the script")
	}
	wantAudit(t, evs(r.Audit()), []ev{
		{0, "j", 36, 48, "allowed", ""},
		{1, "j", 2, 0, "denied", ""},
		{2, "j", 2, 0, "failed", ""},
	})
}

// Spec: RUN-150, RUN-155
func TestAuditEventJSONAndTelemetry(t *testing.T) {
	e := AuditEvent{EventSequence: 3, Sequence: 2, Tool: "remote", InputBytes: 5, Outcome: OutcomeRetryScheduled, RetryClass: RetryRateLimited}
	if got := string(e.AppendJSON(nil)); got != `{"event_sequence":3,"sequence":2,"tool":"remote","input_bytes":5,"output_bytes":0,"outcome":"retry_scheduled","retry_class":"rate_limited"}` {
		t.Fatalf("json = %s", got)
	}
	a := AuditEvent{EventSequence: 1, Tool: "t", OutputBytes: 9, Outcome: OutcomeAllowed}
	if got := string(a.AppendJSON(nil)); got != `{"event_sequence":1,"sequence":0,"tool":"t","input_bytes":0,"output_bytes":9,"outcome":"allowed"}` {
		t.Fatalf("json = %s", got)
	}
	bad := []struct {
		e   AuditEvent
		err error
	}{
		{AuditEvent{EventSequence: 0, Tool: "t", Outcome: OutcomeAllowed}, ErrAuditInvalidEventSequence},
		{AuditEvent{EventSequence: math.MaxUint64, Tool: "t", Outcome: OutcomeAllowed}, ErrAuditInvalidEventSequence},
		{AuditEvent{EventSequence: 1, Tool: "T", Outcome: OutcomeAllowed}, ErrAuditInvalidTool},
		{AuditEvent{EventSequence: 1, Tool: "unrecognized:" + strings.Repeat("A", 64), Outcome: OutcomeAllowed}, ErrAuditInvalidTool},
		{AuditEvent{EventSequence: 1, Tool: "t", Outcome: OutcomeRetryScheduled}, ErrAuditRetryClassRequired},
		{AuditEvent{EventSequence: 1, Tool: "t", Outcome: OutcomeDenied, RetryClass: RetryTransient}, ErrAuditRetryClassUnexpected},
		{AuditEvent{EventSequence: 1, Tool: "t", Outcome: OutcomeStreamDenied, OutputBytes: 1}, ErrAuditUnexpectedOutputBytes},
	}
	for i, c := range bad {
		if err := c.e.ValidateForTelemetry(); err != c.err {
			t.Fatalf("case %d: %v, want %v", i, err, c.err)
		}
	}
	for _, ok := range []AuditEvent{
		{EventSequence: 1, Tool: "unrecognized:" + strings.Repeat("0a", 32), Outcome: OutcomeDenied},
		{EventSequence: 2, Tool: "t", Outcome: OutcomeStreamed, OutputBytes: 4},
		{EventSequence: math.MaxUint64 - 1, Tool: "t", Outcome: OutcomeRetryScheduled, RetryClass: RetryTransient},
	} {
		wantNoError(t, ok.ValidateForTelemetry())
	}
}

// Spec: RUN-151
func TestNothingElseIsAudited(t *testing.T) {
	r, _ := lifecycleRuntime(t)
	id := opIn(t, r, StateQueued)
	_, _ = r.PeekNextExternal()
	_, _ = r.ClaimExternal(id)
	_, _ = r.ClaimExternal(id)               // refused
	_, _ = r.ConfirmExternalCancellation(id) // refused
	_ = r.ValidateClaimedExternal(id)
	_, _ = r.ExternalReconcileRequest(id, "s", "r")
	_, _ = r.RequestExternalCancellation(id)
	_, _ = r.RequestExternalCancellation(id)
	_ = r.RegisterTool(NewPolicy("another"), Metadata{}, echo)
	q := opIn(t, r, StateQueued)
	hp := opIn(t, r, StateHostPump)
	r.ReleasePromise(q)
	r.ReleasePromise(hp)
	r.CollectGarbage()
	wantAudit(t, evs(r.Audit()), []ev{{0, "remote", 2, 0, "cancellation_requested", ""}})
}

// Spec: RUN-152, RUN-153, RUN-154
func TestAuditRing(t *testing.T) {
	r, _ := newTestRuntime(t, Config{})
	wantKind(t, r.SetMaxAuditEvents(0), ErrInvalidLimits)
	wantKind(t, r.SetMaxAuditEvents(8193), ErrInvalidLimits)
	wantNoError(t, r.SetMaxAuditEvents(8192))
	wantNoError(t, r.SetMaxAuditEvents(3))
	for i := 0; i < 5; i++ {
		_, _ = r.Call("t"+string(rune('a'+i)), "")
	}
	got := r.Audit()
	if len(got) != 3 || got[0].EventSequence != 3 || got[2].EventSequence != 5 || got[0].Tool != "tc" || r.DroppedAuditEvents() != 2 {
		t.Fatalf("ring = %+v dropped %d", got, r.DroppedAuditEvents())
	}
	_, err := r.AuditSince(0)
	wantKind(t, err, ErrAuditInvalidCursor)
	_, err = r.AuditSince(2)
	wantKind(t, err, ErrAuditCursorEvicted)
	if ce := err.(*AuditCursorError); ce.Requested != 2 || ce.Available != 3 {
		t.Fatalf("evicted = %+v", ce)
	}
	_, err = r.AuditSince(7)
	wantKind(t, err, ErrAuditCursorAhead)
	if ce := err.(*AuditCursorError); ce.Available != 6 {
		t.Fatalf("ahead = %+v", ce)
	}
	b, err := r.AuditSince(4)
	wantNoError(t, err)
	if len(b.Events) != 2 || b.First() != 4 || b.Next != 6 {
		t.Fatalf("batch = %+v", b)
	}
	b, err = r.AuditSince(6)
	wantNoError(t, err)
	if len(b.Events) != 0 || b.First() != 6 || b.Next != 6 {
		t.Fatalf("empty batch = %+v", b)
	}
	// Shrinking evicts at once.
	wantNoError(t, r.SetMaxAuditEvents(1))
	if got := r.Audit(); len(got) != 1 || got[0].EventSequence != 5 || r.DroppedAuditEvents() != 4 {
		t.Fatalf("after shrink = %+v, dropped %d", got, r.DroppedAuditEvents())
	}
	// Growing keeps the records; clearing resets.
	wantNoError(t, r.SetMaxAuditEvents(10))
	_, _ = r.Call("tf", "")
	if got := r.Audit(); len(got) != 2 || got[1].EventSequence != 6 {
		t.Fatalf("after growth = %+v", got)
	}
	r.ClearAudit()
	if len(r.Audit()) != 0 || r.DroppedAuditEvents() != 0 {
		t.Fatal("clear kept records")
	}
	_, err = r.AuditSince(6)
	wantKind(t, err, ErrAuditCursorEvicted)
	b, err = r.AuditSince(7)
	if err != nil || len(b.Events) != 0 || b.Next != 7 {
		t.Fatalf("after clear = %+v %v", b, err)
	}
	_, _ = r.Call("tg", "")
	b, _ = r.AuditSince(7)
	if len(b.Events) != 1 || b.Events[0].EventSequence != 7 {
		t.Fatalf("after clear and one call = %+v", b)
	}
	// At the last sequence value, new records are dropped instead of wrapping.
	r.audit.next = math.MaxUint64 - 1
	_, _ = r.Call("th", "")
	_, _ = r.Call("ti", "")
	all := r.Audit()
	if last := all[len(all)-1]; last.EventSequence != math.MaxUint64-1 || last.Tool != "th" || r.DroppedAuditEvents() != 1 {
		t.Fatalf("last = %+v dropped %d", last, r.DroppedAuditEvents())
	}
}

// Spec: RUN-153
func TestAuditRingWrapsManyTimes(t *testing.T) {
	r, _ := newTestRuntime(t, Config{})
	wantNoError(t, r.SetMaxAuditEvents(5))
	for i := 1; i <= 123; i++ {
		_, _ = r.Call("x", "")
		got := r.Audit()
		want := min(i, 5)
		if len(got) != want || got[len(got)-1].EventSequence != uint64(i) || got[0].EventSequence != uint64(i-want+1) {
			t.Fatalf("after %d: %+v", i, got)
		}
	}
	if r.DroppedAuditEvents() != 118 {
		t.Fatalf("dropped = %d", r.DroppedAuditEvents())
	}
}
