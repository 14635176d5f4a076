package host

import (
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/schema"
)

// Spec: RUN-191, RUN-162
func TestScriptResumesThroughAuthenticatedReconciliation(t *testing.T) {
	r, _ := newTestRuntime(t, Config{})
	p := NewPolicy("remote")
	p.MaxCalls = 3
	mustRegister(t, r.RegisterExternalTool(p, Metadata{}))
	s := newSession(t, r)
	if s.Runtime() != r || s.Machine() == nil {
		t.Fatal("accessors")
	}
	ev, err := s.Eval(`use mod.tool
tool.start("remote", "r").await()`)
	if err != nil || !ev.Suspended {
		t.Fatalf("eval = %+v %v", ev, err)
	}
	inv, _ := r.ClaimNextExternal()
	host, worker := authPair(t, "worker-1")
	out, err := r.PrepareAuthenticatedReconciliation(inv.ID, "reconcile-1", host)
	wantNoError(t, err)
	running, resumed, err := s.ReconcileAuthenticated(inv.ID, out.Request, host, workerAnswer(t, worker, out.Line, protocol.Running()))
	if err != nil || !running || resumed != nil {
		t.Fatalf("running = %v %v %v", running, resumed, err)
	}
	out, _ = r.PrepareAuthenticatedReconciliation(inv.ID, "reconcile-2", host)
	running, resumed, err = s.ReconcileAuthenticated(inv.ID, out.Request, host, workerAnswer(t, worker, out.Line, protocol.Succeeded(protocol.TextPayload("worker done"))))
	if err != nil || running {
		t.Fatalf("succeeded = %v %v", running, err)
	}
	wantCompleted(t, resumed)
	if resumed.Value.Text() != "worker done" {
		t.Fatalf("value = %q", resumed.Value.Text())
	}
	// Plain reconciliation and the direct cancel through the session.
	ev, _ = s.Eval(`use mod.tool
let a = try tool.start("remote", "a").await() catch "cancelled"
let b = tool.start("remote", "b").await()
a + b`)
	if !ev.Suspended {
		t.Fatal("not suspended")
	}
	inv, _ = r.ClaimNextExternal()
	resumed, err = s.CancelExternal(inv.ID)
	wantNoError(t, err)
	if resumed == nil || !resumed.Suspended {
		t.Fatalf("after cancel = %+v", resumed)
	}
	inv, _ = r.ClaimNextExternal()
	req, res := reconcilePair(t, r, inv.ID, protocol.Succeeded(protocol.TextPayload("B")))
	_, resumed, err = s.ReconcileExternal(inv.ID, req, res)
	wantNoError(t, err)
	wantCompleted(t, resumed)
	if resumed.Value.Text() != "cancelledB" {
		t.Fatalf("value = %q", resumed.Value.Text())
	}
}

// Spec: RUN-170, RUN-016
func TestValidatedProtocolTool(t *testing.T) {
	r, _ := newTestRuntime(t, Config{})
	tr := &fakeTransport{answer: adder}
	client, _ := NewProtocolWorkerClient(workerManifest(t, 2), tr)
	if client.Transport() != tr || client.Manifest().SessionID != "worker-1" {
		t.Fatal("accessors")
	}
	contract, err := schema.NewContract(
		jv(t, `{"type":"object","properties":{"left":{"type":"integer","maximum":10},"right":{"type":"integer"}},"required":["left","right"],"additionalProperties":false}`),
		jv(t, `{"type":"object","properties":{"total":{"type":"integer","maximum":15}},"required":["total"]}`))
	wantNoError(t, err)
	if contract.InputSchema().Kind() != canonjson.KindObject || contract.OutputSchema().Kind() != canonjson.KindObject {
		t.Fatal("contract schemas")
	}
	p := JSONPolicy("calc")
	p.MaxCalls, p.MaxInputBytes, p.MaxOutputBytes = 2, 4096, 64
	mustRegister(t, r.RegisterValidatedProtocolJSONTool(p, Metadata{}, contract, client))
	if d, _ := r.Descriptor("calc"); !d.ContractEnforced {
		t.Fatal("contract not enforced")
	}
	_, err = r.CallJSON("calc", `{"left":11,"right":1}`)
	wantToolError(t, err, ToolDenied, `input does not match its schema: $["left"]: number is above maximum`)
	if len(tr.seen) != 0 {
		t.Fatal("a contract denial reached the worker")
	}
	_, err = r.CallJSON("calc", `{"left":10,"right":9}`)
	wantToolError(t, err, ToolDenied, `output does not match its schema: $["total"]: number is above maximum`)
	// The input denial spent no call (the contract precedes the budget); the output denial did.
	out, err := r.CallJSON("calc", `{"left":1,"right":2}`)
	if err != nil || out != `{"total":3}` {
		t.Fatalf("third call = %q %v", out, err)
	}
	_, err = r.CallJSON("calc", `{"left":1,"right":2}`)
	if err == nil || !strings.Contains(err.Error(), "exhausted its 2 call budget") {
		t.Fatalf("fourth call = %v", err)
	}
}
