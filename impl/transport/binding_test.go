package transport_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
)

// claimed returns a host runtime with the external tools toolText and toolJSON, one operation
// started with input and claimed, and its invocation.
func claimed(t *testing.T, tool, input string) (*host.Runtime, host.Invocation) {
	t.Helper()
	rt, err := host.New(host.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.RegisterExternalTool(host.NewPolicy(toolText), host.Metadata{}); err != nil {
		t.Fatal(err)
	}
	if err := rt.RegisterExternalJSONTool(host.JSONPolicy(toolJSON), host.Metadata{}); err != nil {
		t.Fatal(err)
	}
	start := rt.Start
	if tool == toolJSON {
		start = rt.StartJSON
	}
	if _, err := start(tool, input); err != nil {
		t.Fatal(err)
	}
	inv, ok := rt.ClaimNextExternal()
	if !ok {
		t.Fatal("nothing to claim")
	}
	return rt, inv
}

func state(t *testing.T, rt *host.Runtime, id host.OperationID) host.OperationInfo {
	t.Helper()
	info, ok := rt.Operation(id)
	if !ok {
		t.Fatalf("operation %d is gone", id)
	}
	return info
}

// Spec: TRN-070, TRN-071, TRN-073, TRN-074
// A bound invocation reaches the worker with only its request id, tool and payload, and its
// validated result completes the runtime operation.
func TestBindingCompletes(t *testing.T) {
	rt, inv := claimed(t, toolText, "release")
	mux, w := newMultiplexedPair(t, nil)
	b, err := transport.StartExternalBinding(mux, inv, "request-1")
	if err != nil {
		t.Fatal(err)
	}
	line, err := w.in.ReadLine()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(line, []byte(inv.IdempotencyKey)) {
		t.Fatal("the idempotency key reached the worker")
	}
	m := openAs(t, w.auth, bytes.Clone(line), protocol.TypeInvoke).(protocol.InvokeMessage)
	if m.Invocation.RequestID != "request-1" || m.Invocation.Tool != toolText || m.Invocation.Payload.Text != "release" ||
		m.Invocation.SessionID != testSession {
		t.Fatalf("invocation %+v", m.Invocation)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		t.Fatal(err)
	}
	var msg map[string]json.RawMessage
	_ = json.Unmarshal(fields["message"], &msg)
	var invFields map[string]json.RawMessage
	_ = json.Unmarshal(msg["invocation"], &invFields)
	keys := make([]string, 0, len(invFields))
	for k := range invFields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"payload", "protocol_version", "request_id", "session_id", "tool"}) {
		t.Fatalf("invocation fields %v", keys)
	}
	if ev, err := b.PollEvent(); err != nil || ev.Kind != transport.ExternalPending {
		t.Fatalf("poll before the result: %+v, %v", ev, err)
	}
	w.send(textResult(t, "request-1", "done"))
	ev, err := b.WaitEvent(waitCtx(t))
	if err != nil || ev.Kind != transport.ExternalCompleted || ev.ID != inv.ID || ev.Output != "done" || !ev.Terminal() {
		t.Fatalf("event %+v, %v", ev, err)
	}
	p, err := transport.ApplyToRuntime(ev, rt)
	if err != nil || p.Kind != transport.ExternalCompleted || p.Settlement.Output != "done" {
		t.Fatalf("apply: %+v, %v", p, err)
	}
	if info := state(t, rt, inv.ID); info.State != host.StateReady || info.Output != "done" {
		t.Fatalf("runtime state %+v", info)
	}
	_, err = b.PollEvent()
	wantKind(t, err, transport.ErrTransport)
	wantKind(t, err, transport.ErrExternalBindingTerminal)
	wantKind(t, b.RequestCancellation(host.CancellationRequest{}, "c1"), transport.ErrAlreadyTerminal)
}

// Spec: TRN-073
// A JSON result is handed to the runtime in canonical form, keys sorted.
func TestBindingJSONOutputIsCanonical(t *testing.T) {
	rt, inv := claimed(t, toolJSON, `{"z":1,"a":[true]}`)
	mux, w := newMultiplexedPair(t, nil)
	b, err := transport.StartExternalBinding(mux, inv, "request-1")
	if err != nil {
		t.Fatal(err)
	}
	m := w.expect(protocol.TypeInvoke).(protocol.InvokeMessage)
	if got := string(m.Invocation.Payload.JSON.JSON()); got != `{"a":[true],"z":1}` {
		t.Fatalf("worker payload %s", got)
	}
	r, _ := protocol.NewToolResult(testSession, "request-1", jsonPayload(t, `{"y":2,"b":{"d":1,"c":0}}`))
	w.send(protocol.ResultMessage{Result: r})
	p, err := pollUntil(t, b, rt)
	if err != nil || p.Kind != transport.ExternalCompleted {
		t.Fatalf("poll: %+v, %v", p, err)
	}
	if info := state(t, rt, inv.ID); info.Output != `{"b":{"c":0,"d":1},"y":2}` {
		t.Fatalf("output %q", info.Output)
	}
}

// pollUntil polls b against rt until the event is not pending.
func pollUntil(t *testing.T, b *transport.ExternalBinding, rt *host.Runtime) (transport.ExternalPoll, error) {
	t.Helper()
	for {
		p, err := b.Poll(rt)
		if err != nil || p.Kind != transport.ExternalPending {
			return p, err
		}
		if err := b.Wait(waitCtx(t)); err != nil {
			return transport.ExternalPoll{}, err
		}
	}
}

// Spec: TRN-071, TRN-072, TRN-074
// Cancellation through a binding: the runtime's request must match the bound operation
// exactly; the cancel frame carries only its own ids; an acknowledgement confirms the runtime
// cancellation.
func TestBindingCancellationAcknowledged(t *testing.T) {
	rt, inv := claimed(t, toolText, "release")
	mux, w := newMultiplexedPair(t, nil)
	b, err := transport.StartExternalBinding(mux, inv, "request-1")
	if err != nil {
		t.Fatal(err)
	}
	w.expect(protocol.TypeInvoke)
	req, err := rt.RequestExternalCancellation(inv.ID)
	if err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*host.CancellationRequest){
		"id":              func(r *host.CancellationRequest) { r.ID++ },
		"name":            func(r *host.CancellationRequest) { r.Name = toolJSON },
		"call index":      func(r *host.CancellationRequest) { r.CallIndex++ },
		"attempt":         func(r *host.CancellationRequest) { r.Attempt++ },
		"idempotency key": func(r *host.CancellationRequest) { r.IdempotencyKey += "x" },
	} {
		bad := req
		mutate(&bad)
		if err := b.RequestCancellation(bad, "c1"); !errors.Is(err, transport.ErrCancellationBindingMismatch) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if err := b.RequestCancellation(req, "c1"); err != nil {
		t.Fatal(err)
	}
	wantKind(t, b.RequestCancellation(req, "c2"), transport.ErrCancellationAlreadyRequested)
	line, err := w.in.ReadLine()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(line, []byte(req.IdempotencyKey)) || bytes.Contains(line, []byte("release")) {
		t.Fatal("the cancel frame carries the idempotency key or the input")
	}
	c := openAs(t, w.auth, bytes.Clone(line), protocol.TypeCancel).(protocol.CancelMessage)
	if c.Request != (protocol.WorkerCancellationRequest{ProtocolVersion: protocol.ProtocolVersion, SessionID: testSession,
		CancellationID: "c1", RequestID: "request-1", Tool: toolText}) {
		t.Fatalf("cancel %+v", c.Request)
	}
	w.send(cancellationResult(t, "c1", "request-1", toolText, protocol.OutcomeAcknowledged))
	ev, err := b.WaitEvent(waitCtx(t))
	if err != nil || ev.Kind != transport.ExternalCancelled || ev.Acknowledgement.Outcome != protocol.OutcomeAcknowledged {
		t.Fatalf("event %+v, %v", ev, err)
	}
	if _, err := transport.ApplyToRuntime(ev, rt); err != nil {
		t.Fatal(err)
	}
	if info := state(t, rt, inv.ID); info.State != host.StateReady || info.Err == nil || info.Err.Kind != host.ToolCancelled {
		t.Fatalf("runtime state %+v", info)
	}
}

// Spec: TRN-053, TRN-075
// A result that wins the race against the cancellation surfaces as Completed; the binding is
// then terminal and the too_late disposition is never observed separately.
func TestBindingResultWinsRace(t *testing.T) {
	rt, inv := claimed(t, toolText, "release")
	mux, w := newMultiplexedPair(t, nil)
	b, _ := transport.StartExternalBinding(mux, inv, "request-1")
	w.expect(protocol.TypeInvoke)
	req, _ := rt.RequestExternalCancellation(inv.ID)
	if err := b.RequestCancellation(req, "c1"); err != nil {
		t.Fatal(err)
	}
	w.expect(protocol.TypeCancel)
	w.send(textResult(t, "request-1", "won"))
	w.send(cancellationResult(t, "c1", "request-1", toolText, protocol.OutcomeTooLate))
	ev, err := b.WaitEvent(waitCtx(t))
	if err != nil || ev.Kind != transport.ExternalCompleted || ev.Output != "won" {
		t.Fatalf("event %+v, %v", ev, err)
	}
	if _, err := transport.ApplyToRuntime(ev, rt); err != nil {
		t.Fatal(err)
	}
	if info := state(t, rt, inv.ID); info.State != host.StateReady || info.Output != "won" {
		t.Fatalf("runtime state %+v", info)
	}
	_, err = b.PollEvent()
	wantKind(t, err, transport.ErrExternalBindingTerminal)
}

// Spec: TRN-054, TRN-073
// An unsupported disposition is a non-terminal event; the invocation may still complete.
func TestBindingUnsupported(t *testing.T) {
	rt, inv := claimed(t, toolText, "release")
	mux, w := newMultiplexedPair(t, nil)
	b, _ := transport.StartExternalBinding(mux, inv, "request-1")
	w.expect(protocol.TypeInvoke)
	req, _ := rt.RequestExternalCancellation(inv.ID)
	_ = b.RequestCancellation(req, "c1")
	w.expect(protocol.TypeCancel)
	w.send(cancellationResult(t, "c1", "request-1", toolText, protocol.OutcomeUnsupported))
	ev, err := b.WaitEvent(waitCtx(t))
	if err != nil || ev.Kind != transport.ExternalCancellationUnsupported || ev.Terminal() {
		t.Fatalf("event %+v, %v", ev, err)
	}
	if p, err := transport.ApplyToRuntime(ev, rt); err != nil || state(t, rt, inv.ID).State != host.StateCancellationRequested {
		t.Fatalf("apply unsupported: %+v, %v", p, err)
	}
	w.send(textResult(t, "request-1", "late"))
	ev, err = b.WaitEvent(waitCtx(t))
	if err != nil || ev.Kind != transport.ExternalCompleted || ev.Output != "late" {
		t.Fatalf("event %+v, %v", ev, err)
	}
}

// Spec: TRN-070, TRN-074
// Start refusals, and the runtime's refusal to confirm a cancellation it never requested;
// an unacknowledged cancelled event is refused.
func TestBindingRefusals(t *testing.T) {
	mux, w := newMultiplexedPair(t, nil)
	_, err := transport.StartExternalBinding(mux, host.Invocation{ID: 7, Name: toolJSON, Format: host.FormatJSON, Input: "1"}, "request-1")
	wantKind(t, err, transport.ErrExternal)
	_, err = transport.StartExternalBinding(mux, host.Invocation{ID: 7, Name: "Bad Tool", Format: host.FormatText}, "request-1")
	wantKind(t, err, transport.ErrProtocol)

	rt, inv := claimed(t, toolText, "release")
	b, err := transport.StartExternalBinding(mux, inv, "request-1")
	if err != nil {
		t.Fatal(err)
	}
	w.expect(protocol.TypeInvoke)
	_, err = transport.StartExternalBinding(mux, inv, "request-2")
	wantKind(t, err, transport.ErrTransport)
	wantKind(t, err, transport.ErrBusy)

	ack := cancellationResult(t, "c1", "request-1", toolText, protocol.OutcomeAcknowledged).Result
	_, err = transport.ApplyToRuntime(transport.ExternalEvent{Kind: transport.ExternalCancelled, ID: inv.ID, Acknowledgement: ack}, rt)
	wantKind(t, err, transport.ErrExternal)
	if !errors.Is(err, host.ErrCancellationNotRequested) {
		t.Fatalf("confirm without request: %v", err)
	}
	late := cancellationResult(t, "c1", "request-1", toolText, protocol.OutcomeTooLate).Result
	_, err = transport.ApplyToRuntime(transport.ExternalEvent{Kind: transport.ExternalCancelled, ID: inv.ID, Acknowledgement: late}, rt)
	wantKind(t, err, transport.ErrInvalidCancelledOutcome)
	if state(t, rt, inv.ID).State != host.StateClaimed {
		t.Fatal("a refused apply changed the runtime")
	}
	_ = b
}
