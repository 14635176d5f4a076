package host

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/schema"
)

// Spec: RUN-030, RUN-051
func TestPendingBudgetIsCheckedFirstAndSharedByAllRecords(t *testing.T) {
	r, _ := newTestRuntime(t, Config{MaxPendingTools: 2})
	local := NewPolicy("local")
	local.MaxCalls = 10
	mustRegister(t, r.RegisterTool(local, Metadata{}, echo))
	remote := NewPolicy("remote")
	remote.MaxCalls = 10
	mustRegister(t, r.RegisterExternalTool(remote, Metadata{}))
	a, err := r.Start("local", "a")
	wantNoError(t, err)
	b, err := r.Start("remote", "b")
	wantNoError(t, err)
	r.Pump() // a is settled but still retained
	if r.PendingTools() != 2 {
		t.Fatalf("pending = %d", r.PendingTools())
	}
	// Even an unknown tool name is refused by the budget first.
	_, err = r.Start("missing", "cc")
	wantToolError(t, err, ToolDenied, "pending tool budget of 2 exhausted")
	_, err = r.Start("remote", "ddd")
	wantToolError(t, err, ToolDenied, "pending tool budget of 2 exhausted")
	if d, _ := r.Descriptor("remote"); r.tools["remote"].calls != 1 || d.MaxCalls != 10 {
		t.Fatal("a budget denial spent a call")
	}
	r.ReleasePromise(a)
	r.CollectGarbage()
	c, err := r.Start("remote", "e")
	wantNoError(t, err)
	if a != 1 || b != 2 || c != 3 {
		// The two budget denials allocate no operation ID.
		t.Fatalf("IDs = %d %d %d, want 1 2 3", a, b, c)
	}
	wantAudit(t, evs(r.Audit()), []ev{
		{0, "local", 1, 6, "allowed", ""},
		{2, "missing", 2, 0, "denied", ""},
		{3, "remote", 3, 0, "denied", ""},
	})
}

// Spec: RUN-030
func TestDeniedReservationStillConsumesTheOperationID(t *testing.T) {
	r, _ := lifecycleRuntime(t)
	a := opIn(t, r, StateQueued)                       // ID 1
	if _, err := r.Start("missing", "x"); err == nil { // ID 2 allocated, reservation denied
		t.Fatal("unknown tool started")
	}
	b := opIn(t, r, StateQueued)
	if a != 1 || b != 3 {
		t.Fatalf("IDs = %d, %d; want 1, 3", a, b)
	}
	r.nextID = ^uint64(0)
	_, err := r.Start("remote", "x")
	wantToolError(t, err, ToolFailed, "deferred tool identifier space exhausted")
}

// Spec: RUN-031
func TestReservationChecksInOrder(t *testing.T) {
	r, _ := newTestRuntime(t, Config{})
	contract, err := schema.NewContract(jv(t, `{"type":"object","required":["n"]}`), jv(t, `{"type":"object"}`))
	wantNoError(t, err)
	jp := JSONPolicy("calc")
	jp.MaxInputBytes = 16
	mustRegister(t, r.RegisterValidatedJSONTool(jp, Metadata{}, contract, func(req JSONToolRequest) (canonjson.Value, error) {
		return canonjson.Object(canonjson.Entry{Key: "ok", Value: canonjson.Bool(true)}), nil
	}))
	tp := NewPolicy("text")
	tp.MaxInputBytes = 4
	mustRegister(t, r.RegisterTool(tp, Metadata{}, echo))
	mustRegister(t, r.RegisterExternalTool(NewPolicy("remote"), Metadata{}))

	cases := []struct {
		call  func() (string, error)
		msg   string
		label string
		in    int
	}{
		{func() (string, error) { return r.Call("nope", "x") }, "no capability grants nope", "nope", 1},
		{func() (string, error) { return r.CallJSON("text", "toolongforit") }, "text is not registered for JSON envelopes", "text", 12},
		{func() (string, error) { return r.CallJSON("remote", strings.Repeat("x", 20000)) }, "remote is not registered for JSON envelopes", "remote", 20000},
		{func() (string, error) { return r.Call("remote", strings.Repeat("x", 20000)) }, "remote is available only through tool.start", "remote", 20000},
		{func() (string, error) { return r.Call("text", "12345") }, "text input exceeds 4 bytes", "text", 5},
		{func() (string, error) { return r.CallJSON("calc", `{"n":"0123456789ab"}`) }, "calc input exceeds 16 bytes", "calc", 20},
		{func() (string, error) { return r.CallJSON("calc", `{"n":`) }, "calc input is not valid JSON", "calc", 5},
		{func() (string, error) { return r.Call("calc", `7`) }, "calc input must be a JSON object or array", "calc", 1},
		{func() (string, error) { return r.CallJSON("calc", `{}`) }, `input does not match its schema: $: missing required property "n"`, "calc", 2},
	}
	for i, c := range cases {
		out, err := c.call()
		if out != "" {
			t.Fatalf("case %d: output %q", i, out)
		}
		wantToolError(t, err, ToolDenied, c.msg)
		last := r.Audit()[len(r.Audit())-1]
		if last.Sequence != uint64(i) || last.Tool != c.label || last.InputBytes != c.in || last.Outcome != OutcomeDenied || last.OutputBytes != 0 {
			t.Fatalf("case %d: audit %+v", i, last)
		}
	}
	if len(r.Audit()) != len(cases) {
		t.Fatalf("%d audit records for %d denials", len(r.Audit()), len(cases))
	}
	// The call budget is checked after the contract: one call (the default) is allowed.
	out, err := r.CallJSON("calc", `{"n":1}`)
	if err != nil || out != `{"ok":true}` {
		t.Fatalf("call = %q, %v", out, err)
	}
	_, err = r.CallJSON("calc", `{}`)
	wantToolError(t, err, ToolDenied, `input does not match its schema: $: missing required property "n"`)
	_, err = r.CallJSON("calc", `{"n":2}`)
	wantToolError(t, err, ToolDenied, "calc exhausted its 1 call budget")
	// tool.call on a JSON tool accepts JSON text.
	r2, _ := newTestRuntime(t, Config{})
	mustRegister(t, r2.RegisterJSONTool(JSONPolicy("j"), Metadata{}, func(req JSONToolRequest) (canonjson.Value, error) { return req.Input, nil }))
	if out, err := r2.Call("j", `[1]`); err != nil || out != `[1]` {
		t.Fatalf("tool.call on a JSON tool = %q, %v", out, err)
	}
}

// Spec: RUN-032, RUN-033
func TestExternalToolsAreDeniedToSynchronousCallsBeforeBudget(t *testing.T) {
	r, _ := newTestRuntime(t, Config{})
	mustRegister(t, r.RegisterExternalJSONTool(JSONPolicy("remote"), Metadata{}))
	lease, err := r.IssueLease([]LeaseGrant{{"remote", 1}}, nil)
	wantNoError(t, err)
	wantNoError(t, r.ActivateLease(lease))
	for i := 0; i < 3; i++ {
		_, err := r.Call("remote", "{}")
		wantToolError(t, err, ToolDenied, "remote is available only through tool.start")
		_, err = r.CallJSON("remote", "{}")
		wantToolError(t, err, ToolDenied, "remote is available only through tool.start")
	}
	if r.tools["remote"].calls != 0 || lease.Calls("remote") != 0 {
		t.Fatal("a refused synchronous call spent budget")
	}
	id, err := r.StartJSON("remote", "{}")
	wantNoError(t, err)
	if info, _ := r.Operation(id); info.CallIndex != 1 {
		t.Fatalf("call index = %d", info.CallIndex)
	}
}

// Spec: RUN-033
func TestNothingIsRefunded(t *testing.T) {
	r, clock := newTestRuntime(t, Config{})
	fail := NewPolicy("fail")
	fail.MaxCalls = 2
	mustRegister(t, r.RegisterTool(fail, Metadata{}, func(ToolRequest) (string, error) { return "", Failed("boom") }))
	remote := NewPolicy("remote").WithDeadline(time.Second)
	remote.MaxCalls = 3
	mustRegister(t, r.RegisterExternalTool(remote, Metadata{}))
	_, err := r.Call("fail", "")
	wantToolError(t, err, ToolFailed, "boom")
	_, err = r.Call("fail", "")
	wantToolError(t, err, ToolFailed, "boom")
	_, err = r.Call("fail", "")
	wantToolError(t, err, ToolDenied, "fail exhausted its 2 call budget")

	a, _ := r.Start("remote", "a") // collected while queued
	r.ReleasePromise(a)
	r.CollectGarbage()
	b, _ := r.Start("remote", "b") // times out
	clock.Advance(time.Second)
	r.ExpireTimedOut()
	c, _ := r.Start("remote", "c")
	_, err = r.Start("remote", "d")
	wantToolError(t, err, ToolDenied, "remote exhausted its 3 call budget")
	if ib, _ := r.Operation(b); ib.CallIndex != 2 {
		t.Fatalf("b call index %d", ib.CallIndex)
	}
	if ic, _ := r.Operation(c); ic.CallIndex != 3 {
		t.Fatalf("c call index %d", ic.CallIndex)
	}
}

// Spec: RUN-034
func TestSynchronousCallsNeverTimeOut(t *testing.T) {
	r, clock := newTestRuntime(t, Config{})
	p := NewPolicy("slow").WithDeadline(0)
	p.MaxCalls = 2
	mustRegister(t, r.RegisterTool(p, Metadata{}, func(req ToolRequest) (string, error) {
		clock.Advance(time.Hour)
		return "late", nil
	}))
	if out, err := r.Call("slow", ""); err != nil || out != "late" {
		t.Fatalf("synchronous call = %q, %v", out, err)
	}
	id, err := r.Start("slow", "")
	wantNoError(t, err)
	sts := r.Pump()
	if len(sts) != 1 || sts[0].ID != id {
		t.Fatalf("pump = %+v", sts)
	}
	wantToolError(t, sts[0].Err, ToolTimedOut, "slow exceeded its deferred deadline")
}

// Spec: RUN-035, RUN-036
func TestLease(t *testing.T) {
	r, _ := newTestRuntime(t, Config{})
	a := NewPolicy("a")
	a.MaxCalls = 3
	mustRegister(t, r.RegisterTool(a, Metadata{}, echo))
	mustRegister(t, r.RegisterTool(NewPolicy("b"), Metadata{}, echo))

	for _, c := range []struct {
		grants []LeaseGrant
		kind   error
	}{
		{[]LeaseGrant{{"a", 0}}, ErrLeaseZeroCallLimit},
		{[]LeaseGrant{{"zzz", 1}}, ErrLeaseUnknownTool},
		{[]LeaseGrant{{"a", 4}}, ErrLeaseCallLimitExceedsPolicy},
		{[]LeaseGrant{{"a", 1}, {"a", 1}}, ErrLeaseDuplicateTool},
	} {
		_, err := r.IssueLease(c.grants, nil)
		wantKind(t, err, c.kind)
	}
	calls := 0
	lease, err := r.IssueLease([]LeaseGrant{{"a", 2}}, func(req ToolRequest, d Descriptor) error {
		calls++
		if req.Input == "refuse" {
			return Cancelled("operator said no")
		}
		if req.Input == "opaque" {
			return errors.New("internal detail")
		}
		return nil
	})
	wantNoError(t, err)
	other, _ := newTestRuntime(t, Config{})
	wantKind(t, other.ActivateLease(lease), ErrLeaseRuntimeMismatch)
	wantNoError(t, r.ActivateLease(lease))
	wantKind(t, r.ActivateLease(lease), ErrLeaseAlreadyActive)
	_, err = r.IssueLease(nil, nil)
	wantKind(t, err, ErrLeaseAlreadyActive)

	_, err = r.Call("b", "x")
	wantToolError(t, err, ToolDenied, "b is not granted by the active capability lease")
	_, err = r.Call("a", "refuse")
	wantToolError(t, err, ToolCancelled, "operator said no")
	_, err = r.Call("a", "opaque")
	wantToolError(t, err, ToolFailed, "a authorizer failed")
	if out, err := r.Call("a", "1"); err != nil || out != "echo:1" {
		t.Fatalf("leased call = %q, %v", out, err)
	}
	if out, err := r.Call("a", "2"); err != nil || out != "echo:2" {
		t.Fatalf("leased call = %q, %v", out, err)
	}
	_, err = r.Call("a", "3")
	wantToolError(t, err, ToolDenied, "a exhausted its capability lease call budget of 2")
	if calls != 4 || lease.Calls("a") != 2 || r.tools["a"].calls != 2 {
		t.Fatalf("authorizer calls %d, lease calls %d, tool calls %d", calls, lease.Calls("a"), r.tools["a"].calls)
	}
	wantAudit(t, evs(r.Audit()), []ev{
		{0, "b", 1, 0, "denied", ""},
		{1, "a", 6, 0, "cancelled", ""},
		{2, "a", 6, 0, "failed", ""},
		{3, "a", 1, 6, "allowed", ""},
		{4, "a", 1, 6, "allowed", ""},
		{5, "a", 1, 0, "denied", ""},
	})
	r.DeactivateLease()
	stale, _ := r.IssueLease(nil, nil)
	mustRegister(t, r.RegisterTool(NewPolicy("c"), Metadata{}, echo))
	wantKind(t, r.ActivateLease(stale), ErrLeaseCatalogChanged)
}
