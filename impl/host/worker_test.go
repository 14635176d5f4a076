package host

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// fakeTransport answers invocations with answer and records what it saw.
type fakeTransport struct {
	answer    func(inv protocol.ToolInvocation) (protocol.ToolResult, error)
	seen      []protocol.ToolInvocation
	deadlines []time.Duration
	discarded int
}

func (f *fakeTransport) Dispatch(inv protocol.ToolInvocation, deadline time.Duration) (protocol.ToolResult, error) {
	f.seen = append(f.seen, inv)
	f.deadlines = append(f.deadlines, deadline)
	return f.answer(inv)
}

func (f *fakeTransport) Discard() { f.discarded++ }

// adder returns {"total": left + right}.
func adder(inv protocol.ToolInvocation) (protocol.ToolResult, error) {
	l, _ := inv.Payload.JSON.Get("left")
	r, _ := inv.Payload.JSON.Get("right")
	a, _ := l.Uint64()
	b, _ := r.Uint64()
	return protocol.NewToolResult(inv.SessionID, inv.RequestID,
		protocol.JSONPayload(canonjson.Object(canonjson.Entry{Key: "total", Value: canonjson.Uint(a + b)})))
}

func workerManifest(t testing.TB, calls uint32) protocol.CapabilityManifest {
	t.Helper()
	g := protocol.JSONGrant("calc")
	g.MaxCalls, g.MaxInputBytes, g.MaxOutputBytes = calls, 4096, 64
	m, err := protocol.NewCapabilityManifest("worker-1", []protocol.CapabilityGrant{g, protocol.TextGrant("echo")})
	wantNoError(t, err)
	return m
}

// Spec: RUN-170
func TestProtocolToolRegistrationRequiresAnAttenuatedPolicy(t *testing.T) {
	r, _ := newTestRuntime(t, Config{})
	client, err := NewProtocolWorkerClient(workerManifest(t, 2), &fakeTransport{answer: adder})
	wantNoError(t, err)
	lease, _ := r.IssueLease(nil, nil)
	wantNoError(t, r.ActivateLease(lease))
	wide := JSONPolicy("calc")
	wide.MaxCalls = 3
	for _, p := range []Policy{wide, NewPolicy("calc"), JSONPolicy("echo"), JSONPolicy("other"),
		func() Policy { p := JSONPolicy("calc"); p.MaxInputBytes = 4097; return p }(),
		func() Policy { p := JSONPolicy("calc"); p.MaxOutputBytes = 65; return p }()} {
		err := r.RegisterProtocolJSONTool(p, Metadata{}, client)
		wantKind(t, err, ErrIncompatibleWorkerGrant) // before the lease check
	}
	r.DeactivateLease()
	p := JSONPolicy("calc")
	p.MaxCalls, p.MaxInputBytes, p.MaxOutputBytes = 2, 4096, 64
	mustRegister(t, r.RegisterProtocolJSONTool(p, Metadata{}, client))
	d, _ := r.Descriptor("calc")
	if d.Dispatch != DispatchHostPump || d.Format != FormatJSON || d.ContractEnforced {
		t.Fatalf("descriptor = %+v", d)
	}
	_, err = NewProtocolWorkerClient(protocol.CapabilityManifest{ProtocolVersion: 4, SessionID: "s"}, &fakeTransport{})
	if err == nil {
		t.Fatal("an invalid manifest was accepted")
	}
}

// Spec: RUN-171, RUN-172
func TestProtocolWorkerDispatch(t *testing.T) {
	r, _ := newTestRuntime(t, Config{})
	tr := &fakeTransport{answer: adder}
	client, err := NewProtocolWorkerClient(workerManifest(t, 2), tr)
	wantNoError(t, err)
	p := JSONPolicy("calc")
	p.MaxCalls, p.MaxInputBytes, p.MaxOutputBytes = 2, 4096, 64
	mustRegister(t, r.RegisterProtocolJSONTool(p, Metadata{}, client))

	// A payload deeper than 32 levels passes the runtime's envelope check (no depth limit there),
	// spends the local call, and is denied by the worker authorizer without discarding.
	deep := strings.Repeat(`{"a":`, 32) + `1` + strings.Repeat(`}`, 32)
	_, err = r.CallJSON("calc", deep)
	var te *ToolError
	if !errors.As(err, &te) || te.Kind != ToolDenied || !strings.HasPrefix(te.Message, "worker capability denied: ") {
		t.Fatalf("deep payload: %v", err)
	}
	if tr.discarded != 0 || len(tr.seen) != 0 {
		t.Fatal("an authorizer refusal reached or discarded the transport")
	}
	out, err := r.CallJSON("calc", `{"left":2,"right":40}`)
	if err != nil || out != `{"total":42}` {
		t.Fatalf("call = %q, %v", out, err)
	}
	if tr.seen[0].RequestID != "request-2" || tr.seen[0].SessionID != "worker-1" || tr.seen[0].Tool != "calc" {
		t.Fatalf("invocation = %+v", tr.seen[0])
	}
	// The local budget (2) is now exhausted: no third dispatch.
	_, err = r.CallJSON("calc", `{"left":1,"right":1}`)
	wantToolError(t, err, ToolDenied, "calc exhausted its 2 call budget")

	// Two budgets: the worker session counts its own calls. Here one worker call was spent
	// outside this runtime, so the runtime's second call spends its local budget and is then
	// denied by the worker authorizer.
	r2, _ := newTestRuntime(t, Config{})
	c2, _ := NewProtocolWorkerClient(workerManifest(t, 2), &fakeTransport{answer: adder})
	mustRegister(t, r2.RegisterProtocolJSONTool(p, Metadata{}, c2))
	if _, err := c2.DispatchJSON(JSONToolRequest{Name: "calc", Input: jv(t, `{"left":0,"right":0}`)}); err != nil {
		t.Fatal(err) // spends the worker's first call outside the runtime
	}
	if _, err := r2.CallJSON("calc", `{"left":1,"right":2}`); err != nil {
		t.Fatal(err)
	}
	_, err = r2.CallJSON("calc", `{"left":1,"right":2}`)
	if !errors.As(err, &te) || te.Kind != ToolDenied || !strings.HasPrefix(te.Message, "worker capability denied: ") {
		t.Fatalf("worker budget: %v", err)
	}
	if r2.tools["calc"].calls != 2 {
		t.Fatal("the local budget was not spent by the worker-denied call")
	}
}

// Spec: RUN-171
func TestProtocolWorkerFailuresDiscard(t *testing.T) {
	cases := []struct {
		name   string
		answer func(inv protocol.ToolInvocation) (protocol.ToolResult, error)
		msg    string
	}{
		{"transport error", func(protocol.ToolInvocation) (protocol.ToolResult, error) {
			return protocol.ToolResult{}, errors.New("adapter connection secret: production-token")
		}, "worker transport failed"},
		{"foreign session", func(inv protocol.ToolInvocation) (protocol.ToolResult, error) {
			return protocol.NewToolResult("other-worker", inv.RequestID, protocol.JSONPayload(jv(t, `{"total":42}`)))
		}, "worker protocol failed: "},
		{"text result", func(inv protocol.ToolInvocation) (protocol.ToolResult, error) {
			return protocol.NewToolResult(inv.SessionID, inv.RequestID, protocol.TextPayload("42"))
		}, "worker protocol failed: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, _ := newTestRuntime(t, Config{})
			tr := &fakeTransport{answer: c.answer}
			client, _ := NewProtocolWorkerClient(workerManifest(t, 2), tr)
			p := JSONPolicy("calc")
			p.MaxInputBytes, p.MaxOutputBytes = 4096, 64
			mustRegister(t, r.RegisterProtocolJSONTool(p, Metadata{}, client))
			_, err := r.CallJSON("calc", `{"left":1,"right":1}`)
			var te *ToolError
			if !errors.As(err, &te) || te.Kind != ToolFailed || !strings.HasPrefix(te.Message, c.msg) {
				t.Fatalf("error = %v", err)
			}
			if c.msg == "worker transport failed" && te.Message != c.msg {
				t.Fatalf("transport detail leaked: %q", te.Message)
			}
			if strings.Contains(err.Error(), "secret") || tr.discarded != 1 {
				t.Fatalf("discarded %d, error %v", tr.discarded, err)
			}
			if got := r.Audit()[0]; got.Outcome != OutcomeFailed {
				t.Fatalf("audit = %+v", got)
			}
		})
	}
	client, _ := NewProtocolWorkerClient(workerManifest(t, 2), &fakeTransport{answer: adder})
	client.next = ^uint64(0)
	_, te := client.DispatchJSON(JSONToolRequest{Name: "calc", Input: jv(t, `{}`)})
	if te == nil || te.Message != "worker request sequence exhausted" {
		t.Fatalf("exhausted = %v", te)
	}
}
