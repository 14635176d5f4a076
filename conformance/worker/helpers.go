package worker

import (
	"fmt"
	"strings"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// The tools of the conformance adapter profile (spec/15-profile.md, PRF-001).
const (
	toolTextEcho      = "conf.text.echo"
	toolJSONEcho      = "conf.json.echo"
	toolTextFail      = "conf.text.fail"
	toolUndeclared    = "conf.text.undeclared"
	toolDurable       = "conf.durable.record"
	toolCancellable   = "conf.slow.cancellable"
	toolUncooperative = "conf.slow.uncooperative"
	toolTyped         = "conf.json.typed"
)

// absenceMessage is the failure message of the durable tool when no effect is recorded.
const absenceMessage = "conformance: no effect recorded"

// grant returns a grant with generous limits: 100 calls, 64 KiB in and out, no compensation.
func grant(tool string, format protocol.EnvelopeFormat) protocol.CapabilityGrant {
	return protocol.CapabilityGrant{Tool: tool, Format: format, MaxCalls: 100, MaxInputBytes: 64 << 10, MaxOutputBytes: 64 << 10}
}

func textGrant(tool string) protocol.CapabilityGrant { return grant(tool, protocol.FormatText) }
func jsonGrant(tool string) protocol.CapabilityGrant { return grant(tool, protocol.FormatJSON) }

// durableGrant grants conf.durable.record with the given compensation budget.
func durableGrant(compensations uint32) protocol.CapabilityGrant {
	g := jsonGrant(toolDurable)
	g.MaxCompensations = compensations
	return g
}

// baselineGrants grants the standard profile tools, so the worker runs the baseline session.
func baselineGrants() []protocol.CapabilityGrant {
	return []protocol.CapabilityGrant{textGrant(toolTextEcho), jsonGrant(toolJSONEcho), textGrant(toolTextFail), textGrant(toolUndeclared), durableGrant(0)}
}

// cancellableGrants grants only the two slow tools, so the worker runs the cancellable driver.
func cancellableGrants() []protocol.CapabilityGrant {
	return []protocol.CapabilityGrant{textGrant(toolCancellable), textGrant(toolUncooperative)}
}

func text(s string) protocol.ToolPayload { return protocol.TextPayload(s) }

// jsonValue parses a JSON literal written in a check; a bad literal is a bug of the check.
func jsonValue(s string) canonjson.Value {
	v, err := canonjson.ParseValue([]byte(s), canonjson.Preserve)
	if err != nil {
		panic(fmt.Sprintf("conformance: bad JSON literal %q: %v", s, err))
	}
	return v
}

func jsonPayload(s string) protocol.ToolPayload { return protocol.JSONPayload(jsonValue(s)) }

// payloadText renders a payload for messages.
func payloadText(p protocol.ToolPayload) string { return string(p.AppendJSON(nil)) }

// manifest returns the version-5 manifest of the worker's session with the given grants.
func (w *Worker) manifest(grants ...protocol.CapabilityGrant) protocol.CapabilityManifest {
	return protocol.CapabilityManifest{ProtocolVersion: protocol.ProtocolVersion, SessionID: w.SessionID, Grants: grants}
}

// open sends the open_session frame for the given grants.
func (w *Worker) open(grants ...protocol.CapabilityGrant) {
	w.send(protocol.OpenSessionMessage{Manifest: w.manifest(grants...)})
}

// session launches a worker, writes its bootstrap and opens a session with the given grants.
func (t *T) session(grants ...protocol.CapabilityGrant) *Worker {
	w := t.launch()
	w.bootstrap()
	w.open(grants...)
	return w
}

// baseline opens a session that grants the standard profile tools.
func (t *T) baseline() *Worker { return t.session(baselineGrants()...) }

// cancellable opens a session that grants only the slow tools.
func (t *T) cancellable() *Worker { return t.session(cancellableGrants()...) }

// invocation builds an invoke message for this session.
func (w *Worker) invocation(requestID, tool string, p protocol.ToolPayload) protocol.InvokeMessage {
	return protocol.InvokeMessage{Invocation: protocol.ToolInvocation{
		ProtocolVersion: protocol.ProtocolVersion, SessionID: w.SessionID, RequestID: requestID, Tool: tool, Payload: p}}
}

// sendInvoke sends an invocation under a fresh request id and returns the id.
func (w *Worker) sendInvoke(tool string, p protocol.ToolPayload) string {
	id := w.nextRequestID()
	w.send(w.invocation(id, tool, p))
	return id
}

// expectResult waits for the result of requestID and returns its payload.
func (w *Worker) expectResult(requestID string) protocol.ToolPayload {
	want := "a result for " + requestID
	m := w.recv(want)
	res, ok := m.(protocol.ResultMessage)
	if !ok {
		w.t.Failf(want, "a "+string(m.Type())+" frame")
	}
	if res.Result.RequestID != requestID || res.Result.SessionID != w.SessionID || res.Result.ProtocolVersion != protocol.ProtocolVersion {
		w.t.Failf(want, fmt.Sprintf("a result for session %q request %q", res.Result.SessionID, res.Result.RequestID))
	}
	return res.Result.Payload
}

// invoke sends an invocation and returns the payload of its result.
func (w *Worker) invoke(tool string, p protocol.ToolPayload) protocol.ToolPayload {
	return w.expectResult(w.sendInvoke(tool, p))
}

// expectPayload fails unless got equals want (format and value).
func (t *T) expectPayload(what string, want, got protocol.ToolPayload) {
	if !want.Equal(got) || payloadText(want) != payloadText(got) {
		t.Failf(what+" "+payloadText(want), payloadText(got))
	}
}

// dispatchRequest builds a dispatch request for this session.
func (w *Worker) dispatchRequest(requestID, tool, key string, p protocol.ToolPayload) protocol.OperationDispatchRequest {
	return protocol.OperationDispatchRequest{ProtocolVersion: protocol.ProtocolVersion, SessionID: w.SessionID,
		RequestID: requestID, Tool: tool, OperationKey: key, Payload: p}
}

// sendDispatch sends a dispatch_operation under a fresh request id and returns the request.
func (w *Worker) sendDispatch(tool, key string, p protocol.ToolPayload) protocol.OperationDispatchRequest {
	req := w.dispatchRequest(w.nextRequestID(), tool, key, p)
	w.send(protocol.DispatchOperationMessage{Request: req})
	return req
}

// expectOperationResult waits for the operation_result that answers req.
func (w *Worker) expectOperationResult(req protocol.OperationDispatchRequest) protocol.OperationStatus {
	return w.operationStatus(req, w.recv(operationResultFor(req)))
}

// operationResultFor describes the answer to req.
func operationResultFor(req protocol.OperationDispatchRequest) string {
	return fmt.Sprintf("an operation_result for %s (operation %s)", req.RequestID, req.OperationKey)
}

// operationStatus returns the status of m, which must be the operation_result that answers req.
func (w *Worker) operationStatus(req protocol.OperationDispatchRequest, m protocol.Message) protocol.OperationStatus {
	want := operationResultFor(req)
	res, ok := m.(protocol.OperationResultMessage)
	if !ok {
		w.t.Failf(want, "a "+string(m.Type())+" frame")
	}
	if !res.Result.MatchesDispatch(req) {
		w.t.Failf(want, "a result bound to "+string(res.Result.AppendJSON(nil)))
	}
	return res.Result.Status
}

// dispatch sends a durable dispatch and returns the status of its answer.
func (w *Worker) dispatch(key string, input string) protocol.OperationStatus {
	return w.expectOperationResult(w.sendDispatch(toolDurable, key, jsonPayload(input)))
}

// sendReconcile sends a reconcile_operation and returns the request.
func (w *Worker) sendReconcile(tool, key string) protocol.OperationReconcileRequest {
	req := protocol.OperationReconcileRequest{ProtocolVersion: protocol.ProtocolVersion, SessionID: w.SessionID,
		RequestID: w.nextRequestID(), Tool: tool, OperationKey: key}
	w.send(protocol.ReconcileOperationMessage{Request: req})
	return req
}

// reconcile sends a reconcile_operation for the durable tool and returns the reported status.
func (w *Worker) reconcile(key string) protocol.OperationStatus {
	req := w.sendReconcile(toolDurable, key)
	want := fmt.Sprintf("a reconciled_operation for %s (operation %s)", req.RequestID, key)
	m := w.recv(want)
	res, ok := m.(protocol.ReconciledOperationMessage)
	if !ok {
		w.t.Failf(want, "a "+string(m.Type())+" frame")
	}
	if !res.Result.MatchesRequest(req) {
		w.t.Failf(want, "a result bound to "+string(res.Result.AppendJSON(nil)))
	}
	return res.Result.Status
}

// compensationRequest builds a compensation request for the durable tool under grant g.
func (w *Worker) compensationRequest(g protocol.CapabilityGrant, key, compensationKey, scope, input string) protocol.OperationCompensationRequest {
	fp, err := g.CompensationFingerprint()
	if err != nil {
		w.t.Internal(err)
	}
	return protocol.OperationCompensationRequest{ProtocolVersion: protocol.ProtocolVersion, SessionID: w.SessionID,
		RequestID: w.nextRequestID(), Tool: g.Tool, OperationKey: key, CompensationKey: compensationKey,
		TenantScope: scope, GrantFingerprint: fp, Payload: jsonPayload(input)}
}

// compensate sends req and returns the status of the compensation_result that answers it.
func (w *Worker) compensate(req protocol.OperationCompensationRequest) protocol.OperationStatus {
	w.send(protocol.CompensateOperationMessage{Request: req})
	want := fmt.Sprintf("a compensation_result for %s (compensation %s)", req.RequestID, req.CompensationKey)
	m := w.recv(want)
	res, ok := m.(protocol.CompensationResultMessage)
	if !ok {
		w.t.Failf(want, "a "+string(m.Type())+" frame")
	}
	if !res.Result.MatchesRequest(req) {
		w.t.Failf(want, "a result bound to "+string(res.Result.AppendJSON(nil)))
	}
	return res.Result.Status
}

// expectStatus fails unless got equals want.
func (t *T) expectStatus(what string, want, got protocol.OperationStatus) {
	if !want.Equal(got) || string(want.AppendJSON(nil)) != string(got.AppendJSON(nil)) {
		t.Failf(what+" "+string(want.AppendJSON(nil)), string(got.AppendJSON(nil)))
	}
}

// succeededRecord is the success payload of the durable tool (PRF-008).
func succeededRecord(key, value string) protocol.OperationStatus {
	return protocol.Succeeded(jsonPayload(fmt.Sprintf(`{"operation_key":%q,"value":%s}`, key, value)))
}

// effectLine is the exact effect line of a dispatch effect (PRF-018).
func effectLine(key, value string) string {
	return fmt.Sprintf(`{"kind":"effect","tool":%q,"operation_key":%q,"value":%s}`, toolDurable, key, value)
}

// compensationLine is the exact effect line of a compensation (PRF-018).
func compensationLine(key, compensationKey, value string) string {
	return fmt.Sprintf(`{"kind":"compensation","tool":%q,"operation_key":%q,"compensation_key":%q,"value":%s}`, toolDurable, key, compensationKey, value)
}

// cancelRequest builds a cancellation request for this session.
func (w *Worker) cancelRequest(targetID, tool string) protocol.WorkerCancellationRequest {
	return protocol.WorkerCancellationRequest{ProtocolVersion: protocol.ProtocolVersion, SessionID: w.SessionID,
		CancellationID: w.nextRequestID(), RequestID: targetID, Tool: tool}
}

// expectCancellationResult waits for the cancellation_result of req and returns its outcome.
func (w *Worker) expectCancellationResult(req protocol.WorkerCancellationRequest) protocol.WorkerCancellationOutcome {
	want := "a cancellation_result for " + req.CancellationID
	m := w.recv(want)
	res, ok := m.(protocol.CancellationResultMessage)
	if !ok {
		w.t.Failf(want, "a "+string(m.Type())+" frame: "+conformance.Clip(string(m.AppendJSON(nil)), 200))
	}
	r := res.Result
	if r.SessionID != req.SessionID || r.CancellationID != req.CancellationID || r.RequestID != req.RequestID || r.Tool != req.Tool {
		w.t.Failf(want, "a cancellation_result bound to "+string(r.AppendJSON(nil)))
	}
	return r.Outcome
}

// closeSession sends close_session.
func (w *Worker) closeSession() {
	w.send(protocol.CloseSessionMessage{ProtocolVersion: protocol.ProtocolVersion, Session: w.SessionID})
}

// endInput closes the worker's input and expects a clean exit.
func (w *Worker) endInput() {
	w.closeInput()
	w.expectExit(exitClean, "end of input at a frame boundary")
}

// repeat returns s repeated n times.
func repeat(s string, n int) string { return strings.Repeat(s, n) }
