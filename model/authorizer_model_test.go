package model_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/model"
	"pgregory.net/rapid"
)

// payloadCase is one concrete payload and its abstract description. Sizes and wire lengths are
// counted by hand from the literal text, not computed by the code under test.
type payloadCase struct {
	name string
	make func() protocol.ToolPayload
	spec model.Payload
}

func mustJSON(s string, m canonjson.Mode) canonjson.Value {
	v, err := canonjson.ParseValue([]byte(s), m)
	if err != nil {
		panic(err)
	}
	return v
}

// wireText and wireJSON give the length of {"format":...,"value":...} around a value whose
// compact form has n bytes (plain ASCII text needs no escaping).
func wireText(n int) int { return len(`{"format":"text","value":""}`) + n }
func wireJSON(n int) int { return len(`{"format":"json","value":}`) + n }

func authorizerPayloads() []payloadCase {
	text := func(s string) payloadCase {
		return payloadCase{"text " + s, func() protocol.ToolPayload { return protocol.TextPayload(s) },
			model.Payload{Format: "text", Shape: model.ShapeValid, Size: len(s), Value: "text:" + s, WireLen: wireText(len(s))}}
	}
	js := func(src, label string, size int, shape string) payloadCase {
		return payloadCase{"json " + src, func() protocol.ToolPayload { return protocol.JSONPayload(mustJSON(src, canonjson.Preserve)) },
			model.Payload{Format: "json", Shape: shape, Size: size, Value: label, WireLen: wireJSON(size)}}
	}
	return []payloadCase{
		text(""),
		text("a"),
		text("hello world!"),  // 12 bytes: the echo limit
		text("hello world!!"), // 13 bytes
		js(`{"k":1}`, "json:k1", 7, model.ShapeValid),
		js(`{ "k" : 1 }`, "json:k1", 7, model.ShapeValid), // the same value, another spelling
		js(`[1,2,3]`, "json:123", 7, model.ShapeValid),
		js(`{"long":"0123456"}`, "json:long7", 18, model.ShapeValid), // 18 bytes
		js(`{"k":"0123456789"}`, "json:k10", 18, model.ShapeValid),
		js(`{"a":"123456789"}`, "json:a9", 17, model.ShapeValid),
		js(`{"a":"12345678"}`, "json:a8", 16, model.ShapeValid), // 16 bytes: the calc limit
		js(`5`, "json:5", 1, model.ShapeScalar),
		js(`null`, "json:null", 4, model.ShapeScalar),
		js(strings.Repeat("[", 32)+"1"+strings.Repeat("]", 32), "json:deep", 65, model.ShapeTooDeep),
		js(strings.Repeat("[", 31)+"1"+strings.Repeat("]", 31), "json:deep31", 63, model.ShapeValid),
	}
}

const modelSession = "session-1"

var authorizerGrants = []protocol.CapabilityGrant{
	{Tool: "echo", Format: protocol.FormatText, MaxCalls: 2, MaxInputBytes: 12, MaxOutputBytes: 12},
	{Tool: "calc", Format: protocol.FormatJSON, MaxCalls: 3, MaxInputBytes: 16, MaxOutputBytes: 16, MaxCompensations: 2},
}

func modelGrants(t interface{ Fatalf(string, ...any) }, gs []protocol.CapabilityGrant) []model.Grant {
	out := make([]model.Grant, len(gs))
	for i, g := range gs {
		fp, err := g.CompensationFingerprint()
		if err != nil {
			t.Fatalf("%v", err)
		}
		out[i] = model.Grant{
			Tool: g.Tool, Format: g.Format.String(), MaxCalls: g.MaxCalls, MaxInput: int(g.MaxInputBytes),
			MaxOutput: int(g.MaxOutputBytes), MaxCompensations: g.MaxCompensations, Fingerprint: fp,
		}
	}
	return out
}

// kindName returns the error variant name of err, or "" for nil.
func kindName(t *rapid.T, err error) string {
	if err == nil {
		return ""
	}
	k, ok := protocol.KindOf(err)
	if !ok {
		t.Fatalf("untyped error: %v", err)
	}
	return k.String()
}

type statusCase struct {
	name string
	impl protocol.OperationStatus
	spec model.Status
}

func statusCases(payloads []payloadCase) []statusCase {
	out := []statusCase{
		{"running", protocol.Running(), model.Status{State: "running"}},
		{"cancelled", protocol.Cancelled(), model.Status{State: "cancelled"}},
	}
	for _, m := range []string{"", "boom", "bang", strings.Repeat("x", model.MaxFailureMessageBytes), strings.Repeat("x", model.MaxFailureMessageBytes+1)} {
		out = append(out, statusCase{fmt.Sprintf("failed(%d)", len(m)), protocol.Failed(m), model.Status{State: "failed", Message: m}})
	}
	for _, p := range payloads {
		out = append(out, statusCase{"succeeded " + p.name, protocol.Succeeded(p.make()), model.Status{State: "succeeded", Payload: p.spec}})
	}
	return out
}

type invPair struct {
	impl authorizer.AuthorizedInvocation
	m    model.Ticket
}
type opPair struct {
	impl authorizer.AuthorizedOperationInvocation
	m    model.Ticket
}
type recPair struct {
	impl authorizer.AuthorizedOperationReconciliation
	m    model.Ticket
}
type cmpPair struct {
	impl authorizer.AuthorizedOperationCompensation
	m    model.Ticket
}
type cancelPair struct {
	impl authorizer.AuthorizedWorkerCancellation
	m    model.Ticket
}

// authorizerHarness drives two implementation authorizers with the same manifest (the session
// authorizer under test and a foreign one that only issues tokens) next to their models.
type authorizerHarness struct {
	impl, foreign   *authorizer.SessionAuthorizer
	model, mforeign *model.Authorizer
	payloads        []payloadCase
	statuses        []statusCase
	fingerprints    []string
	// compensationFingerprints favours calc's fingerprint so that compensations get through.
	compensationFingerprints []string
	ids                      []string
	bulk                     int

	invs    []invPair
	ops     []opPair
	recs    []recPair
	cmps    []cmpPair
	cancels []cancelPair
}

func newAuthorizerHarness(t *rapid.T) *authorizerHarness {
	m, err := protocol.NewCapabilityManifest(modelSession, authorizerGrants)
	if err != nil {
		t.Fatalf("%v", err)
	}
	a, err := authorizer.New(m)
	if err != nil {
		t.Fatalf("%v", err)
	}
	b, err := authorizer.New(m)
	if err != nil {
		t.Fatalf("%v", err)
	}
	gs := modelGrants(t, authorizerGrants)
	h := &authorizerHarness{
		impl: a, foreign: b,
		model: model.NewAuthorizer(1, modelSession, gs), mforeign: model.NewAuthorizer(2, modelSession, gs),
		payloads: authorizerPayloads(),
		ids:      []string{"r0", "r1", "r2", "r3", "r4", "r5"},
	}
	h.statuses = statusCases(h.payloads)
	h.fingerprints = []string{gs[0].Fingerprint, gs[1].Fingerprint, strings.Repeat("ab", 32), "not-hex"}
	h.compensationFingerprints = append([]string{gs[1].Fingerprint, gs[1].Fingerprint, gs[1].Fingerprint, gs[1].Fingerprint}, h.fingerprints...)
	return h
}

func (h *authorizerHarness) version(t *rapid.T) uint16 {
	return rapid.SampledFrom([]uint16{5, 5, 5, 5, 5, 5, 4}).Draw(t, "version")
}
func (h *authorizerHarness) session(t *rapid.T) string {
	return rapid.SampledFrom([]string{modelSession, modelSession, modelSession, modelSession, "other", "Bad"}).Draw(t, "session")
}
func (h *authorizerHarness) id(t *rapid.T) string {
	return rapid.SampledFrom(h.ids).Draw(t, "id")
}
func (h *authorizerHarness) tool(t *rapid.T) string {
	return rapid.SampledFrom([]string{"echo", "echo", "calc", "calc", "calc", "nope", "T!"}).Draw(t, "tool")
}
func (h *authorizerHarness) payload(t *rapid.T) payloadCase {
	return rapid.SampledFrom(h.payloads).Draw(t, "payload")
}
func (h *authorizerHarness) status(t *rapid.T) statusCase {
	return rapid.SampledFrom(h.statuses).Draw(t, "status")
}

// foreignDraw decides whether a token is issued by the foreign authorizer.
func (h *authorizerHarness) foreignDraw(t *rapid.T) bool {
	return rapid.IntRange(0, 9).Draw(t, "foreign") == 0
}

func (h *authorizerHarness) pick(t *rapid.T, n int, label string) int {
	return rapid.IntRange(0, n-1).Draw(t, label)
}

func compare(t *rapid.T, op, implErr, modelErr string) {
	if implErr != modelErr {
		t.Fatalf("%s: implementation %q, model %q", op, implErr, modelErr)
	}
}

// check compares the observable authorizer state with the model.
func (h *authorizerHarness) check(t *rapid.T) {
	for _, tool := range []string{"echo", "calc", "nope"} {
		if got, want := h.impl.CallsFor(tool), h.model.Calls[tool]; got != want {
			t.Fatalf("calls[%s] = %d, model %d", tool, got, want)
		}
		if got, want := h.impl.CompensationsFor(tool), h.model.Compensations[tool]; got != want {
			t.Fatalf("compensations[%s] = %d, model %d", tool, got, want)
		}
	}
	if got, want := h.impl.ReservedRequestIDs(), len(h.model.Seen); got != want {
		t.Fatalf("reserved %d, model %d", got, want)
	}
	for _, id := range h.ids {
		if h.impl.IsReserved(id) != h.model.Seen[id] || h.impl.IsCompleted(id) != h.model.Completed[id] ||
			h.impl.IsCancellationRequested(id) != h.model.CancelRequested[id] || h.impl.IsCancelled(id) != h.model.Cancelled[id] {
			t.Fatalf("state of %s differs from the model", id)
		}
	}
}

// Spec: AUZ-001, AUZ-003, AUZ-004, AUZ-005, AUZ-006, AUZ-008, AUZ-009, AUZ-012, AUZ-013, AUZ-014
// Spec: AUZ-015, AUZ-016, AUZ-017, AUZ-018, AUZ-019, AUZ-020, AUZ-021, AUZ-022, AUZ-023, AUZ-024, AUZ-025
func TestAuthorizerModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := newAuthorizerHarness(t)
		actions := map[string]func(*rapid.T){
			"authorize": func(t *rapid.T) {
				p := h.payload(t)
				inv := protocol.ToolInvocation{ProtocolVersion: h.version(t), SessionID: h.session(t), RequestID: h.id(t), Tool: h.tool(t), Payload: p.make()}
				mi := model.Invocation{Version: inv.ProtocolVersion, Session: inv.SessionID, RequestID: inv.RequestID, Tool: inv.Tool, Payload: p.spec}
				a, ma := h.impl, h.model
				if h.foreignDraw(t) {
					a, ma = h.foreign, h.mforeign
				}
				tok, err := a.Authorize(inv)
				mt, merr := ma.Authorize(mi)
				compare(t, "authorize", kindName(t, err), merr)
				if err == nil {
					h.invs = append(h.invs, invPair{tok, mt})
				}
			},
			"authorizeOperation": func(t *rapid.T) {
				p := h.payload(t)
				req := protocol.OperationDispatchRequest{ProtocolVersion: h.version(t), SessionID: h.session(t), RequestID: h.id(t), Tool: h.tool(t),
					OperationKey: rapid.SampledFrom([]string{"k1", "k2", "K!"}).Draw(t, "key"), Payload: p.make()}
				md := model.Dispatch{Version: req.ProtocolVersion, Session: req.SessionID, RequestID: req.RequestID, Tool: req.Tool, OperationKey: req.OperationKey, Payload: p.spec}
				a, ma := h.impl, h.model
				if h.foreignDraw(t) {
					a, ma = h.foreign, h.mforeign
				}
				tok, err := a.AuthorizeOperation(req)
				mt, merr := ma.AuthorizeOperation(md)
				compare(t, "authorizeOperation", kindName(t, err), merr)
				if err == nil {
					h.ops = append(h.ops, opPair{tok, mt})
				}
			},
			"authorizeReconciliation": func(t *rapid.T) {
				req := protocol.OperationReconcileRequest{ProtocolVersion: h.version(t), SessionID: h.session(t), RequestID: h.id(t), Tool: h.tool(t),
					OperationKey: rapid.SampledFrom([]string{"k1", "k2", "K!"}).Draw(t, "key")}
				mr := model.Reconcile{Version: req.ProtocolVersion, Session: req.SessionID, RequestID: req.RequestID, Tool: req.Tool, OperationKey: req.OperationKey}
				a, ma := h.impl, h.model
				if h.foreignDraw(t) {
					a, ma = h.foreign, h.mforeign
				}
				tok, err := a.AuthorizeReconciliation(req)
				mt, merr := ma.AuthorizeReconciliation(mr)
				compare(t, "authorizeReconciliation", kindName(t, err), merr)
				if err == nil {
					h.recs = append(h.recs, recPair{tok, mt})
				}
			},
			"authorizeCompensation": func(t *rapid.T) {
				p := h.payload(t)
				req := protocol.OperationCompensationRequest{
					ProtocolVersion: h.version(t), SessionID: h.session(t), RequestID: h.id(t),
					Tool:             rapid.SampledFrom([]string{"calc", "calc", "calc", "calc", "echo", "nope"}).Draw(t, "tool"),
					OperationKey:     rapid.SampledFrom([]string{"k1", "k2"}).Draw(t, "key"),
					CompensationKey:  rapid.SampledFrom([]string{"cmp-1", "cmp-1", "cmp-1", "cmp-2", "cmp-2", "undo", "CMP-1"}).Draw(t, "cmpKey"),
					TenantScope:      rapid.SampledFrom([]string{"tenant", "tenant", "tenant", "tenant-2", "T"}).Draw(t, "tenant"),
					GrantFingerprint: rapid.SampledFrom(h.compensationFingerprints).Draw(t, "fingerprint"),
					Payload:          p.make(),
				}
				mc := model.Compensation{Version: req.ProtocolVersion, Session: req.SessionID, RequestID: req.RequestID, Tool: req.Tool,
					OperationKey: req.OperationKey, CompensationKey: req.CompensationKey, TenantScope: req.TenantScope,
					GrantFingerprint: req.GrantFingerprint, Payload: p.spec}
				a, ma := h.impl, h.model
				if h.foreignDraw(t) {
					a, ma = h.foreign, h.mforeign
				}
				tok, err := a.AuthorizeCompensation(req)
				mt, merr := ma.AuthorizeCompensation(mc)
				compare(t, "authorizeCompensation", kindName(t, err), merr)
				if err == nil {
					h.cmps = append(h.cmps, cmpPair{tok, mt})
				}
			},
			// The same compensation again under a fresh request id, to the authorizer that
			// authorized it: its identity is known, so it is authorized without a charge
			// (AUZ-013, AUZ-014). Random requests seldom repeat an identity.
			"repeatCompensation": func(t *rapid.T) {
				if len(h.cmps) == 0 {
					t.Skip("no compensation")
				}
				prev := h.cmps[h.pick(t, len(h.cmps), "compensation")]
				req, mc := prev.impl.Request(), prev.m.Compensation
				req.RequestID = h.fresh()
				mc.RequestID = req.RequestID
				a, ma := h.impl, h.model
				if prev.m.Issuer == h.mforeign.ID {
					a, ma = h.foreign, h.mforeign
				}
				tok, err := a.AuthorizeCompensation(req)
				mt, merr := ma.AuthorizeCompensation(mc)
				compare(t, "repeatCompensation", kindName(t, err), merr)
				if err == nil {
					h.cmps = append(h.cmps, cmpPair{tok, mt})
				}
			},
			// The same dispatch again under a fresh request id: a new call, charged again.
			"repeatDispatch": func(t *rapid.T) {
				if len(h.ops) == 0 {
					t.Skip("no dispatch")
				}
				prev := h.ops[h.pick(t, len(h.ops), "dispatch")]
				req, md := prev.impl.Request(), prev.m.Dispatch
				req.RequestID = h.fresh()
				md.RequestID = req.RequestID
				a, ma := h.impl, h.model
				if prev.m.Issuer == h.mforeign.ID {
					a, ma = h.foreign, h.mforeign
				}
				tok, err := a.AuthorizeOperation(req)
				mt, merr := ma.AuthorizeOperation(md)
				compare(t, "repeatDispatch", kindName(t, err), merr)
				if err == nil {
					h.ops = append(h.ops, opPair{tok, mt})
				}
			},
			"authorizeCancellation": func(t *rapid.T) {
				var target invPair
				if len(h.invs) > 0 && rapid.IntRange(0, 9).Draw(t, "zeroTarget") != 0 {
					target = h.invs[h.pick(t, len(h.invs), "target")]
				}
				inv := target.impl.Invocation()
				req := protocol.WorkerCancellationRequest{ProtocolVersion: h.version(t), SessionID: h.session(t), CancellationID: h.id(t), RequestID: inv.RequestID, Tool: inv.Tool}
				if rapid.IntRange(0, 5).Draw(t, "otherRequest") == 0 {
					req.RequestID = h.id(t)
				}
				if rapid.IntRange(0, 5).Draw(t, "otherTool") == 0 {
					req.Tool = h.tool(t)
				}
				mc := model.Cancel{Version: req.ProtocolVersion, Session: req.SessionID, CancellationID: req.CancellationID, RequestID: req.RequestID, Tool: req.Tool}
				tok, err := h.impl.AuthorizeCancellation(req, target.impl)
				mt, merr := h.model.AuthorizeCancellation(mc, target.m)
				compare(t, "authorizeCancellation", kindName(t, err), merr)
				if err == nil {
					h.cancels = append(h.cancels, cancelPair{tok, mt})
				}
			},
			"validateResult": func(t *rapid.T) {
				if len(h.invs) == 0 {
					t.Skip("no invocation")
				}
				tok := h.invs[h.pick(t, len(h.invs), "token")]
				p := h.payload(t)
				res := protocol.ToolResult{ProtocolVersion: h.version(t), SessionID: h.session(t), RequestID: tok.impl.Invocation().RequestID, Payload: p.make()}
				if rapid.IntRange(0, 5).Draw(t, "otherRequest") == 0 {
					res.RequestID = h.id(t)
				}
				mr := model.Result{Version: res.ProtocolVersion, Session: res.SessionID, RequestID: res.RequestID, Payload: p.spec}
				compare(t, "validateResult", kindName(t, h.impl.ValidateResult(tok.impl, res)), h.model.ValidateResult(tok.m, mr))
			},
			"validateCancellationResult": func(t *rapid.T) {
				if len(h.cancels) == 0 {
					t.Skip("no cancellation")
				}
				tok := h.cancels[h.pick(t, len(h.cancels), "token")]
				req := tok.impl.Request()
				outcome := rapid.SampledFrom([]protocol.WorkerCancellationOutcome{protocol.OutcomeAcknowledged, protocol.OutcomeTooLate, protocol.OutcomeUnsupported}).Draw(t, "outcome")
				res := protocol.WorkerCancellationResult{ProtocolVersion: h.version(t), SessionID: h.session(t), CancellationID: req.CancellationID, RequestID: req.RequestID, Tool: req.Tool, Outcome: outcome}
				switch rapid.IntRange(0, 9).Draw(t, "mutate") {
				case 0:
					res.CancellationID = h.id(t)
				case 1:
					res.RequestID = h.id(t)
				case 2:
					res.Tool = h.tool(t)
				}
				mr := model.CancelResult{Cancel: model.Cancel{Version: res.ProtocolVersion, Session: res.SessionID, CancellationID: res.CancellationID, RequestID: res.RequestID, Tool: res.Tool}, Outcome: outcome.String()}
				compare(t, "validateCancellationResult", kindName(t, h.impl.ValidateCancellationResult(tok.impl, res)), h.model.ValidateCancellationResult(tok.m, mr))
			},
			"validateOperationResult": func(t *rapid.T) {
				if len(h.ops) == 0 {
					t.Skip("no dispatch")
				}
				tok := h.ops[h.pick(t, len(h.ops), "token")]
				req := tok.impl.Request()
				res, mr := h.operationResult(t, req.RequestID, req.Tool, req.OperationKey)
				compare(t, "validateOperationResult", kindName(t, h.impl.ValidateOperationResult(tok.impl, res)), h.model.ValidateOperationResult(tok.m, mr))
			},
			"validateReconciliationResult": func(t *rapid.T) {
				if len(h.recs) == 0 {
					t.Skip("no reconciliation")
				}
				tok := h.recs[h.pick(t, len(h.recs), "token")]
				req := tok.impl.Request()
				res, mr := h.operationResult(t, req.RequestID, req.Tool, req.OperationKey)
				compare(t, "validateReconciliationResult", kindName(t, h.impl.ValidateReconciliationResult(tok.impl, res)), h.model.ValidateReconciliationResult(tok.m, mr))
			},
			"validateCompensationResult": func(t *rapid.T) {
				if len(h.cmps) == 0 {
					t.Skip("no compensation")
				}
				tok := h.cmps[h.pick(t, len(h.cmps), "token")]
				req := tok.impl.Request()
				st := h.status(t)
				res := protocol.OperationCompensationResult{
					ProtocolVersion: h.version(t), SessionID: h.session(t), RequestID: req.RequestID, Tool: req.Tool, OperationKey: req.OperationKey,
					CompensationKey: req.CompensationKey, TenantScope: req.TenantScope, GrantFingerprint: req.GrantFingerprint, Status: st.impl,
				}
				switch rapid.IntRange(0, 11).Draw(t, "mutate") {
				case 0:
					res.RequestID = h.id(t)
				case 1:
					res.CompensationKey = rapid.SampledFrom([]string{"cmp-1", "cmp-2", "undo"}).Draw(t, "cmpKey")
				case 2:
					res.TenantScope = rapid.SampledFrom([]string{"tenant", "tenant-2"}).Draw(t, "tenant")
				case 3:
					res.GrantFingerprint = rapid.SampledFrom(h.fingerprints).Draw(t, "fingerprint")
				case 4:
					res.OperationKey = rapid.SampledFrom([]string{"k1", "k2"}).Draw(t, "key")
				}
				mr := model.CompensationResult{
					Version: res.ProtocolVersion, Session: res.SessionID, RequestID: res.RequestID, Tool: res.Tool, OperationKey: res.OperationKey,
					CompensationKey: res.CompensationKey, TenantScope: res.TenantScope, GrantFingerprint: res.GrantFingerprint, Status: st.spec,
				}
				compare(t, "validateCompensationResult", kindName(t, h.impl.ValidateCompensationResult(tok.impl, res)), h.model.ValidateCompensationResult(tok.m, mr))
			},
			"bulkReconcile": func(t *rapid.T) {
				n := rapid.IntRange(1, 400).Draw(t, "n")
				for i := 0; i < n; i++ {
					h.bulk++
					req := protocol.OperationReconcileRequest{ProtocolVersion: 5, SessionID: modelSession, RequestID: fmt.Sprintf("bulk-%d", h.bulk), Tool: "calc", OperationKey: "k"}
					_, err := h.impl.AuthorizeReconciliation(req)
					_, merr := h.model.AuthorizeReconciliation(model.Reconcile{Version: 5, Session: modelSession, RequestID: req.RequestID, Tool: "calc", OperationKey: "k"})
					compare(t, "bulkReconcile", kindName(t, err), merr)
				}
			},
			"": h.check,
		}
		// Weight the dispatch paths, which carry most of the budget and id rules.
		actions["authorizeAgain"] = actions["authorize"]
		actions["authorizeOperationAgain"] = actions["authorizeOperation"]
		t.Repeat(actions)
	})
}

// fresh returns a request id no earlier request used.
func (h *authorizerHarness) fresh() string {
	h.bulk++
	return fmt.Sprintf("fresh-%d", h.bulk)
}

func (h *authorizerHarness) operationResult(t *rapid.T, request, tool, key string) (protocol.OperationReconcileResult, model.OperationResult) {
	st := h.status(t)
	res := protocol.OperationReconcileResult{ProtocolVersion: h.version(t), SessionID: h.session(t), RequestID: request, Tool: tool, OperationKey: key, Status: st.impl}
	switch rapid.IntRange(0, 9).Draw(t, "mutate") {
	case 0:
		res.RequestID = h.id(t)
	case 1:
		res.Tool = h.tool(t)
	case 2:
		res.OperationKey = rapid.SampledFrom([]string{"k1", "k2", "K!"}).Draw(t, "key")
	}
	return res, model.OperationResult{Version: res.ProtocolVersion, Session: res.SessionID, RequestID: res.RequestID, Tool: res.Tool, OperationKey: res.OperationKey, Status: st.spec}
}
