package authorizer_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/protocol"
)

// orderCase is one row of a check-order table: after setup, the request fails two or more
// checks, and the error must be the one of the earliest check.
type orderCase struct {
	name  string
	setup func(t *testing.T, a *authorizer.SessionAuthorizer)
	want  protocol.ErrorKind
}

func exhaustEcho(t *testing.T, a *authorizer.SessionAuthorizer) {
	for _, id := range []string{"r1", "r2"} {
		if _, err := a.Authorize(invocation(id, "echo", text("x"))); err != nil {
			t.Fatal(err)
		}
	}
}

// Spec: AUZ-001, AUZ-003, AUZ-007, AUZ-008, AUZ-010
func TestAuthorizeCheckOrder(t *testing.T) {
	cases := []struct {
		orderCase
		inv protocol.ToolInvocation
	}{
		{orderCase{"version before session token", nil, protocol.ErrUnsupportedVersion},
			protocol.ToolInvocation{ProtocolVersion: 4, SessionID: "BAD", RequestID: "r", Tool: "echo", Payload: text("x")}},
		{orderCase{"session token before request token", nil, protocol.ErrInvalidToken},
			protocol.ToolInvocation{ProtocolVersion: 5, SessionID: "BAD", RequestID: "R!", Tool: "echo", Payload: text("x")}},
		{orderCase{"request token before tool token", nil, protocol.ErrInvalidToken},
			protocol.ToolInvocation{ProtocolVersion: 5, SessionID: session, RequestID: "R!", Tool: "T!", Payload: text("x")}},
		{orderCase{"tool token before session match", nil, protocol.ErrInvalidToken},
			protocol.ToolInvocation{ProtocolVersion: 5, SessionID: "other", RequestID: "r", Tool: "T!", Payload: text("x")}},
		{orderCase{"session match before tool lookup", nil, protocol.ErrUnknownSession},
			protocol.ToolInvocation{ProtocolVersion: 5, SessionID: "other", RequestID: "r", Tool: "nope", Payload: text("x")}},
		{orderCase{"tool lookup before payload", nil, protocol.ErrUnknownTool},
			invocation("r", "nope", protocol.JSONPayload(protocolScalar()))},
		{orderCase{"format before size", nil, protocol.ErrPayloadFormatMismatch},
			invocation("r", "echo", jsonPayloadNoT(`{"long":"0123456789"}`))},
		{orderCase{"envelope before size", nil, protocol.ErrInvalidJsonEnvelope},
			invocation("r", "calc", protocol.JSONPayload(protocolScalar()))},
		{orderCase{"depth before size", nil, protocol.ErrJsonPayloadTooDeep},
			invocation("r", "calc", deepPayload(t))},
		{orderCase{"size before duplicate id", exhaustEcho, protocol.ErrInputTooLarge},
			invocation("r1", "echo", text("123456789"))},
		{orderCase{"duplicate id before call budget", exhaustEcho, protocol.ErrDuplicateRequest},
			invocation("r1", "echo", text("12345678"))},
		{orderCase{"call budget before capacity", func(t *testing.T, a *authorizer.SessionAuthorizer) {
			exhaustEcho(t, a)
			fill(t, a, protocol.MaxSessionRequestIDs)
		}, protocol.ErrCallBudgetExhausted}, invocation("r3", "echo", text("x"))},
		{orderCase{"capacity last", func(t *testing.T, a *authorizer.SessionAuthorizer) {
			fill(t, a, protocol.MaxSessionRequestIDs)
		}, protocol.ErrSessionRequestLimitExceeded}, invocation("r3", "echo", text("12345678"))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := newAuthorizer(t)
			if c.setup != nil {
				c.setup(t, a)
			}
			before := snap(a)
			_, err := a.Authorize(c.inv)
			wantKind(t, err, c.want)
			if after := snap(a); after != before {
				t.Fatalf("failed authorize changed state: %+v -> %+v", before, after)
			}
		})
	}
}

// Spec: AUZ-008, AUZ-010, AUZ-027
func TestAuthorizeErrorDetailsAndLimits(t *testing.T) {
	a := newAuthorizer(t)
	// Exactly at the limit is allowed (8 text bytes, 16 JSON bytes: {"a":"12345678"}).
	if _, err := a.Authorize(invocation("r1", "echo", text("12345678"))); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authorize(invocation("r2", "calc", jsonPayload(t, `{"a":"12345678"}`))); err != nil {
		t.Fatal(err)
	}
	// The JSON size is the compact re-serialization, not the received spelling.
	if _, err := a.Authorize(invocation("r3", "calc", jsonPayload(t, `{ "a" : "12345678" }`))); err != nil {
		t.Fatal(err)
	}
	_, err := a.Authorize(invocation("r4", "calc", jsonPayload(t, `{"a":"123456789"}`)))
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Kind != protocol.ErrInputTooLarge || pe.Actual != 17 || pe.Maximum != 16 {
		t.Fatalf("got %#v, want InputTooLarge{17,16}", err)
	}
	if _, err := a.Authorize(invocation("r4", "calc", jsonPayload(t, `[]`))); err != nil {
		t.Fatal(err)
	}
	_, err = a.Authorize(invocation("r5", "calc", jsonPayload(t, `[]`)))
	if !errors.As(err, &pe) || pe.Kind != protocol.ErrCallBudgetExhausted || pe.Value != "calc" || pe.Maximum != 3 {
		t.Fatalf("got %v, want CallBudgetExhausted{calc,3}", err)
	}
	_, err = a.Authorize(invocation("r1", "calc", jsonPayload(t, `[]`)))
	if !errors.As(err, &pe) || pe.Kind != protocol.ErrDuplicateRequest || pe.Value != "r1" {
		t.Fatalf("got %v, want DuplicateRequest(r1)", err)
	}
	_, err = a.Authorize(protocol.ToolInvocation{ProtocolVersion: 5, SessionID: "other", RequestID: "r9", Tool: "calc", Payload: text("x")})
	if !errors.As(err, &pe) || pe.Kind != protocol.ErrUnknownSession || pe.Value != "other" {
		t.Fatalf("got %v, want UnknownSession(other)", err)
	}
	_, err = a.Authorize(invocation("r9", "nope", text("x")))
	if !errors.As(err, &pe) || pe.Kind != protocol.ErrUnknownTool || pe.Value != "nope" {
		t.Fatalf("got %v, want UnknownTool(nope)", err)
	}
	_, err = a.Authorize(invocation("r9", "echo", jsonPayload(t, `[]`)))
	if !errors.As(err, &pe) || pe.ExpectedFormat != protocol.FormatText || pe.ActualFormat != protocol.FormatJSON {
		t.Fatalf("got %v, want PayloadFormatMismatch{text,json}", err)
	}
	// 31 nested arrays around a scalar are within the depth rule.
	ok := strings.Repeat("[", 31) + "1" + strings.Repeat("]", 31)
	big := protocol.CapabilityGrant{Tool: "big", Format: protocol.FormatJSON, MaxCalls: 1, MaxInputBytes: 1024, MaxOutputBytes: 1}
	m, err := protocol.NewCapabilityManifest(session, []protocol.CapabilityGrant{big})
	if err != nil {
		t.Fatal(err)
	}
	b, err := authorizer.New(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Authorize(invocation("d", "big", jsonPayload(t, ok))); err != nil {
		t.Fatalf("31 levels: %v", err)
	}
}

// Spec: AUZ-009, AUZ-011
func TestAuthorizeOperationSharesCallBudget(t *testing.T) {
	a := newAuthorizer(t)
	if _, err := a.Authorize(invocation("i1", "calc", jsonPayload(t, `{}`))); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"d1", "d2"} {
		if _, err := a.AuthorizeOperation(dispatch(id, "calc", "op-"+id, jsonPayload(t, `{}`))); err != nil {
			t.Fatal(err)
		}
	}
	if got := a.CallsFor("calc"); got != 3 {
		t.Fatalf("calls %d, want 3", got)
	}
	_, err := a.AuthorizeOperation(dispatch("d3", "calc", "op-d3", jsonPayload(t, `{}`)))
	wantKind(t, err, protocol.ErrCallBudgetExhausted)
	_, err = a.Authorize(invocation("i2", "calc", jsonPayload(t, `{}`)))
	wantKind(t, err, protocol.ErrCallBudgetExhausted)
}

// Spec: AUZ-011
func TestCallsAreNeverRefunded(t *testing.T) {
	a := newAuthorizer(t)
	for i, id := range []string{"x1", "x2"} {
		auth, err := a.Authorize(invocation(id, "echo", text("in")))
		if err != nil {
			t.Fatal(err)
		}
		if err := a.ValidateResult(auth, result(id, text("out"))); err != nil {
			t.Fatal(err)
		}
		if got := a.CallsFor("echo"); got != uint32(i+1) {
			t.Fatalf("calls %d after %d completed calls", got, i+1)
		}
	}
	_, err := a.Authorize(invocation("x3", "echo", text("in")))
	wantKind(t, err, protocol.ErrCallBudgetExhausted)
}

// Spec: AUZ-001, AUZ-003, AUZ-009
func TestAuthorizeOperationCheckOrder(t *testing.T) {
	cases := []struct {
		orderCase
		req protocol.OperationDispatchRequest
	}{
		{orderCase{"version first", nil, protocol.ErrUnsupportedVersion},
			protocol.OperationDispatchRequest{ProtocolVersion: 6, SessionID: "BAD", RequestID: "r", Tool: "calc", OperationKey: "K", Payload: text("x")}},
		{orderCase{"tool token before key token", nil, protocol.ErrInvalidToken},
			protocol.OperationDispatchRequest{ProtocolVersion: 5, SessionID: session, RequestID: "r", Tool: "T!", OperationKey: "K!", Payload: text("x")}},
		{orderCase{"key token before session", nil, protocol.ErrInvalidToken},
			protocol.OperationDispatchRequest{ProtocolVersion: 5, SessionID: "other", RequestID: "r", Tool: "calc", OperationKey: "K!", Payload: text("x")}},
		{orderCase{"session before tool", nil, protocol.ErrUnknownSession},
			protocol.OperationDispatchRequest{ProtocolVersion: 5, SessionID: "other", RequestID: "r", Tool: "nope", OperationKey: "k", Payload: text("x")}},
		{orderCase{"tool before payload", nil, protocol.ErrUnknownTool}, dispatch("r", "nope", "k", text("x"))},
		{orderCase{"format before size", nil, protocol.ErrPayloadFormatMismatch}, dispatch("r", "calc", "k", text("0123456789012345678"))},
		{orderCase{"envelope", nil, protocol.ErrInvalidJsonEnvelope}, dispatch("r", "calc", "k", protocol.JSONPayload(protocolScalar()))},
		{orderCase{"depth", nil, protocol.ErrJsonPayloadTooDeep}, dispatch("r", "calc", "k", deepPayload(t))},
		{orderCase{"size before duplicate", func(t *testing.T, a *authorizer.SessionAuthorizer) {
			if _, err := a.AuthorizeOperation(dispatch("r", "calc", "k", jsonPayloadNoT(`[]`))); err != nil {
				t.Fatal(err)
			}
		}, protocol.ErrInputTooLarge}, dispatch("r", "calc", "k", jsonPayloadNoT(`{"a":"123456789"}`))},
		{orderCase{"duplicate before budget", func(t *testing.T, a *authorizer.SessionAuthorizer) {
			for _, id := range []string{"r", "s", "u"} {
				if _, err := a.AuthorizeOperation(dispatch(id, "calc", "k", jsonPayloadNoT(`[]`))); err != nil {
					t.Fatal(err)
				}
			}
		}, protocol.ErrDuplicateRequest}, dispatch("r", "calc", "k", jsonPayloadNoT(`[]`))},
		{orderCase{"budget before capacity", func(t *testing.T, a *authorizer.SessionAuthorizer) {
			for _, id := range []string{"r", "s", "u"} {
				if _, err := a.AuthorizeOperation(dispatch(id, "calc", "k", jsonPayloadNoT(`[]`))); err != nil {
					t.Fatal(err)
				}
			}
			fill(t, a, protocol.MaxSessionRequestIDs)
		}, protocol.ErrCallBudgetExhausted}, dispatch("v", "calc", "k", jsonPayloadNoT(`[]`))},
		{orderCase{"capacity last", func(t *testing.T, a *authorizer.SessionAuthorizer) {
			fill(t, a, protocol.MaxSessionRequestIDs)
		}, protocol.ErrSessionRequestLimitExceeded}, dispatch("v", "calc", "k", jsonPayloadNoT(`[]`))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := newAuthorizer(t)
			if c.setup != nil {
				c.setup(t, a)
			}
			before := snap(a)
			_, err := a.AuthorizeOperation(c.req)
			wantKind(t, err, c.want)
			if after := snap(a); after != before {
				t.Fatalf("failed authorize changed state: %+v -> %+v", before, after)
			}
		})
	}
}

// Spec: AUZ-003, AUZ-012
func TestAuthorizeReconciliationCheckOrder(t *testing.T) {
	cases := []struct {
		orderCase
		req protocol.OperationReconcileRequest
	}{
		{orderCase{"version first", nil, protocol.ErrUnsupportedVersion},
			protocol.OperationReconcileRequest{ProtocolVersion: 0, SessionID: "BAD", RequestID: "r", Tool: "calc", OperationKey: "k"}},
		{orderCase{"key token before session", nil, protocol.ErrInvalidToken},
			protocol.OperationReconcileRequest{ProtocolVersion: 5, SessionID: "other", RequestID: "r", Tool: "calc", OperationKey: ""}},
		{orderCase{"session before tool", nil, protocol.ErrUnknownSession},
			protocol.OperationReconcileRequest{ProtocolVersion: 5, SessionID: "other", RequestID: "r", Tool: "nope", OperationKey: "k"}},
		{orderCase{"tool before duplicate", func(t *testing.T, a *authorizer.SessionAuthorizer) {
			fill(t, a, 1)
		}, protocol.ErrUnknownTool}, reconcile("fill-0", "nope", "k")},
		{orderCase{"duplicate before capacity", func(t *testing.T, a *authorizer.SessionAuthorizer) {
			fill(t, a, protocol.MaxSessionRequestIDs)
		}, protocol.ErrDuplicateRequest}, reconcile("fill-0", "calc", "k")},
		{orderCase{"capacity", func(t *testing.T, a *authorizer.SessionAuthorizer) {
			fill(t, a, protocol.MaxSessionRequestIDs)
		}, protocol.ErrSessionRequestLimitExceeded}, reconcile("new", "calc", "k")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := newAuthorizer(t)
			if c.setup != nil {
				c.setup(t, a)
			}
			before := snap(a)
			_, err := a.AuthorizeReconciliation(c.req)
			wantKind(t, err, c.want)
			if after := snap(a); after != before {
				t.Fatalf("failed authorize changed state: %+v -> %+v", before, after)
			}
		})
	}
	// Reconciliation charges no call budget and works when the budget is spent.
	a := newAuthorizer(t)
	exhaustEcho(t, a)
	if _, err := a.AuthorizeReconciliation(reconcile("q", "echo", "k")); err != nil {
		t.Fatal(err)
	}
	if a.CallsFor("echo") != 2 || a.ReservedRequestIDs() != 3 {
		t.Fatalf("calls %d reserved %d", a.CallsFor("echo"), a.ReservedRequestIDs())
	}
}

// Spec: AUZ-003, AUZ-013
func TestAuthorizeCompensationCheckOrder(t *testing.T) {
	calcFP := fingerprintOf(t, calcGrant)
	spend := func(t *testing.T, a *authorizer.SessionAuthorizer) {
		for _, k := range []string{"op-1", "op-2"} {
			if _, err := a.AuthorizeCompensation(compensation("c-"+k, "calc", k, "cmp-1", calcFP, jsonPayloadNoT(`[]`))); err != nil {
				t.Fatal(err)
			}
		}
	}
	base := compensation("c", "calc", "op", "cmp-1", calcFP, jsonPayloadNoT(`[]`))
	with := func(f func(*protocol.OperationCompensationRequest)) protocol.OperationCompensationRequest {
		r := base
		f(&r)
		return r
	}
	cases := []struct {
		orderCase
		req protocol.OperationCompensationRequest
	}{
		{orderCase{"version first", nil, protocol.ErrUnsupportedVersion}, with(func(r *protocol.OperationCompensationRequest) { r.ProtocolVersion = 1; r.SessionID = "X" })},
		{orderCase{"key token before compensation key", nil, protocol.ErrInvalidToken}, with(func(r *protocol.OperationCompensationRequest) { r.OperationKey = "K"; r.CompensationKey = "x" })},
		{orderCase{"compensation key token before prefix", nil, protocol.ErrInvalidToken}, with(func(r *protocol.OperationCompensationRequest) { r.CompensationKey = "CMP-1" })},
		{orderCase{"prefix before tenant", nil, protocol.ErrInvalidCompensationKey}, with(func(r *protocol.OperationCompensationRequest) { r.CompensationKey = "undo-1"; r.TenantScope = "T" })},
		{orderCase{"tenant before grant fingerprint", nil, protocol.ErrInvalidToken}, with(func(r *protocol.OperationCompensationRequest) { r.TenantScope = "T"; r.GrantFingerprint = "xyz" })},
		{orderCase{"grant fingerprint before session", nil, protocol.ErrInvalidCompensationGrantFingerprint}, with(func(r *protocol.OperationCompensationRequest) {
			r.GrantFingerprint = calcFP[:63] + "A"
			r.SessionID = "other"
		})},
		{orderCase{"header does not check the payload", nil, protocol.ErrUnknownSession}, with(func(r *protocol.OperationCompensationRequest) {
			r.SessionID = "other"
			r.Payload = protocol.JSONPayload(protocolScalar())
		})},
		{orderCase{"session before tool", nil, protocol.ErrUnknownSession}, with(func(r *protocol.OperationCompensationRequest) { r.SessionID = "other"; r.Tool = "nope" })},
		{orderCase{"tool before grant checks", nil, protocol.ErrUnknownTool}, with(func(r *protocol.OperationCompensationRequest) { r.Tool = "nope" })},
		{orderCase{"not granted before fingerprint", nil, protocol.ErrCompensationNotGranted}, with(func(r *protocol.OperationCompensationRequest) {
			r.Tool = "echo"
			r.GrantFingerprint = wrongFingerprint
		})},
		{orderCase{"fingerprint before payload", nil, protocol.ErrCompensationGrantMismatch}, with(func(r *protocol.OperationCompensationRequest) {
			r.GrantFingerprint = wrongFingerprint
			r.Payload = text("x")
		})},
		{orderCase{"another grant's fingerprint", nil, protocol.ErrCompensationGrantMismatch}, with(func(r *protocol.OperationCompensationRequest) {
			r.GrantFingerprint = releaseFingerprint
		})},
		{orderCase{"format", nil, protocol.ErrPayloadFormatMismatch}, with(func(r *protocol.OperationCompensationRequest) { r.Payload = text("x") })},
		{orderCase{"envelope", nil, protocol.ErrInvalidJsonEnvelope}, with(func(r *protocol.OperationCompensationRequest) { r.Payload = protocol.JSONPayload(protocolScalar()) })},
		{orderCase{"size before duplicate", func(t *testing.T, a *authorizer.SessionAuthorizer) { fill(t, a, 1) }, protocol.ErrInputTooLarge},
			with(func(r *protocol.OperationCompensationRequest) {
				r.RequestID = "fill-0"
				r.Payload = jsonPayloadNoT(`{"a":"123456789"}`)
			})},
		{orderCase{"duplicate before budget", spend, protocol.ErrDuplicateRequest}, with(func(r *protocol.OperationCompensationRequest) { r.RequestID = "c-op-1" })},
		{orderCase{"budget before capacity", func(t *testing.T, a *authorizer.SessionAuthorizer) {
			spend(t, a)
			fill(t, a, protocol.MaxSessionRequestIDs)
		}, protocol.ErrCompensationBudgetExhausted}, base},
		{orderCase{"a known identity skips the budget; capacity last", func(t *testing.T, a *authorizer.SessionAuthorizer) {
			spend(t, a)
			fill(t, a, protocol.MaxSessionRequestIDs)
		}, protocol.ErrSessionRequestLimitExceeded}, with(func(r *protocol.OperationCompensationRequest) { r.OperationKey = "op-1"; r.RequestID = "fresh" })},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := newAuthorizer(t)
			if c.setup != nil {
				c.setup(t, a)
			}
			before := snap(a)
			_, err := a.AuthorizeCompensation(c.req)
			wantKind(t, err, c.want)
			if after := snap(a); after != before {
				t.Fatalf("failed authorize changed state: %+v -> %+v", before, after)
			}
		})
	}
}

// Spec: AUZ-014
func TestCompensationBudgetPerIdentity(t *testing.T) {
	a := newAuthorizer(t)
	fp := fingerprintOf(t, calcGrant)
	if fp2 := fingerprintOf(t, releaseGrant); fp2 != releaseFingerprint {
		t.Fatalf("release fingerprint %s, want reference anchor A5", fp2)
	}
	first := compensation("c1", "calc", "op-1", "cmp-1", fp, jsonPayload(t, `{"undo":1}`))
	if _, err := a.AuthorizeCompensation(first); err != nil {
		t.Fatal(err)
	}
	// An exact retransmission under a fresh id costs an id slot but no budget; key order in
	// the payload does not change the identity.
	retry := first
	retry.RequestID = "c2"
	retry.Payload = jsonPayload(t, `{ "undo" : 1 }`)
	if _, err := a.AuthorizeCompensation(retry); err != nil {
		t.Fatal(err)
	}
	if a.CompensationsFor("calc") != 1 || a.ReservedRequestIDs() != 2 || a.CallsFor("calc") != 0 {
		t.Fatalf("compensations %d reserved %d calls %d", a.CompensationsFor("calc"), a.ReservedRequestIDs(), a.CallsFor("calc"))
	}
	// Each identity component makes a new identity.
	variants := []func(*protocol.OperationCompensationRequest){
		func(r *protocol.OperationCompensationRequest) { r.OperationKey = "op-2" },
		func(r *protocol.OperationCompensationRequest) { r.CompensationKey = "cmp-2" },
		func(r *protocol.OperationCompensationRequest) { r.TenantScope = "tenant-2" },
		func(r *protocol.OperationCompensationRequest) { r.Payload = jsonPayloadNoT(`{"undo":2}`) },
	}
	for i, v := range variants {
		b := newAuthorizer(t)
		if _, err := b.AuthorizeCompensation(first); err != nil {
			t.Fatal(err)
		}
		r := first
		r.RequestID = "other"
		v(&r)
		if _, err := b.AuthorizeCompensation(r); err != nil {
			t.Fatalf("variant %d: %v", i, err)
		}
		if got := b.CompensationsFor("calc"); got != 2 {
			t.Fatalf("variant %d: compensations %d, want 2", i, got)
		}
		r.RequestID = "third"
		r.OperationKey = "op-3"
		_, err := b.AuthorizeCompensation(r)
		var pe *protocol.Error
		if !errors.As(err, &pe) || pe.Kind != protocol.ErrCompensationBudgetExhausted || pe.Value != "calc" || pe.Maximum != 2 {
			t.Fatalf("variant %d: got %v, want CompensationBudgetExhausted{calc,2}", i, err)
		}
	}
}

// reserveKind reserves one id through one kind of authorization. prepare runs first and may
// reserve other ids (the cancel kind authorizes its target there).
type reserveKind struct {
	prepare func(t *testing.T, a *authorizer.SessionAuthorizer)
	reserve func(a *authorizer.SessionAuthorizer, id string) error
}

func reserveKinds(t *testing.T) map[string]reserveKind {
	calcFP := fingerprintOf(t, calcGrant)
	var target authorizer.AuthorizedInvocation
	return map[string]reserveKind{
		"invoke": {reserve: func(a *authorizer.SessionAuthorizer, id string) error {
			_, err := a.Authorize(invocation(id, "calc", jsonPayloadNoT(`[]`)))
			return err
		}},
		"dispatch": {reserve: func(a *authorizer.SessionAuthorizer, id string) error {
			_, err := a.AuthorizeOperation(dispatch(id, "calc", "k", jsonPayloadNoT(`[]`)))
			return err
		}},
		"reconcile": {reserve: func(a *authorizer.SessionAuthorizer, id string) error {
			_, err := a.AuthorizeReconciliation(reconcile(id, "calc", "k"))
			return err
		}},
		"compensate": {reserve: func(a *authorizer.SessionAuthorizer, id string) error {
			_, err := a.AuthorizeCompensation(compensation(id, "calc", "k", "cmp-1", calcFP, jsonPayloadNoT(`[]`)))
			return err
		}},
		"cancel": {
			prepare: func(t *testing.T, a *authorizer.SessionAuthorizer) {
				var err error
				if target, err = a.Authorize(invocation("target", "echo", text("x"))); err != nil {
					t.Fatal(err)
				}
			},
			reserve: func(a *authorizer.SessionAuthorizer, id string) error {
				_, err := a.AuthorizeCancellation(cancel(id, "target", "echo"), target)
				return err
			},
		},
	}
}

// Spec: AUZ-005, AUZ-006, AUZ-007
func TestRequestIDNamespaceIsShared(t *testing.T) {
	kinds := reserveKinds(t)
	for first, k1 := range kinds {
		for second, k2 := range kinds {
			t.Run(first+" then "+second, func(t *testing.T) {
				a := newAuthorizer(t)
				if k1.prepare != nil {
					k1.prepare(t, a)
				}
				if err := k1.reserve(a, "shared"); err != nil {
					t.Fatal(err)
				}
				if k2.prepare != nil && second != first {
					k2.prepare(t, a)
				}
				before := snap(a)
				err := k2.reserve(a, "shared")
				if first == "cancel" && second == "cancel" {
					// The target already has its one cancellation, which is checked first.
					wantKind(t, err, protocol.ErrCancellationAlreadyRequested)
				} else {
					wantKind(t, err, protocol.ErrDuplicateRequest)
				}
				if snap(a) != before {
					t.Fatal("failed reservation changed state")
				}
			})
		}
	}
	// The capacity is exactly 1,024 ids for every kind: the 1,024th reservation succeeds and
	// the 1,025th fails, also for a repeated id only as DuplicateRequest.
	for name, k := range kinds {
		t.Run("capacity "+name, func(t *testing.T) {
			a := newAuthorizer(t)
			if k.prepare != nil {
				k.prepare(t, a)
			}
			fill(t, a, protocol.MaxSessionRequestIDs-1)
			if err := k.reserve(a, "last"); err != nil {
				t.Fatal(err)
			}
			if a.ReservedRequestIDs() != protocol.MaxSessionRequestIDs {
				t.Fatalf("reserved %d", a.ReservedRequestIDs())
			}
			if name == "cancel" {
				// A second cancel of the same target fails earlier; use a fresh authorizer
				// whose target has no cancellation yet.
				a = newAuthorizer(t)
				k.prepare(t, a)
				fill(t, a, protocol.MaxSessionRequestIDs)
			}
			before := snap(a)
			err := k.reserve(a, "over")
			var pe *protocol.Error
			if !errors.As(err, &pe) || pe.Kind != protocol.ErrSessionRequestLimitExceeded || pe.Maximum != 1024 {
				t.Fatalf("got %v, want SessionRequestLimitExceeded{1024}", err)
			}
			if snap(a) != before {
				t.Fatal("failed reservation changed state")
			}
		})
	}
}

// Spec: AUZ-002
func TestNewValidatesAndCopiesManifest(t *testing.T) {
	bad := protocol.CapabilityManifest{ProtocolVersion: 5, SessionID: session, Grants: []protocol.CapabilityGrant{echoGrant, echoGrant}}
	if _, err := authorizer.New(bad); !errors.Is(err, protocol.ErrDuplicateGrant) {
		t.Fatalf("got %v, want DuplicateGrant", err)
	}
	if _, err := authorizer.New(protocol.CapabilityManifest{ProtocolVersion: 4, SessionID: session}); !errors.Is(err, protocol.ErrUnsupportedVersion) {
		t.Fatalf("got %v, want UnsupportedVersion", err)
	}
	m := manifest(t)
	a, err := authorizer.New(m)
	if err != nil {
		t.Fatal(err)
	}
	// Changing the caller's manifest afterwards does not change the authorizer's grants.
	m.Grants[0].MaxInputBytes = 1000
	m.Grants[2].Resources[0].ID = "changed"
	if _, err := a.Authorize(invocation("r", "echo", text("123456789"))); !errors.Is(err, protocol.ErrInputTooLarge) {
		t.Fatalf("got %v, want InputTooLarge", err)
	}
	if got := a.Manifest(); !got.Equal(manifest(t)) {
		t.Fatal("authorizer manifest changed with the caller's copy")
	}
	if a.SessionID() != session {
		t.Fatal(a.SessionID())
	}
	// An empty manifest is valid and authorizes nothing.
	empty, _ := protocol.NewCapabilityManifest(session, nil)
	e, err := authorizer.New(empty)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Authorize(invocation("r", "echo", text("x")))
	wantKind(t, err, protocol.ErrUnknownTool)
}
