package authorizer_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/protocol"
)

func mustAuthorize(t *testing.T, a *authorizer.SessionAuthorizer, inv protocol.ToolInvocation) authorizer.AuthorizedInvocation {
	t.Helper()
	auth, err := a.Authorize(inv)
	if err != nil {
		t.Fatal(err)
	}
	return auth
}

func mustCancel(t *testing.T, a *authorizer.SessionAuthorizer, req protocol.WorkerCancellationRequest, target authorizer.AuthorizedInvocation) authorizer.AuthorizedWorkerCancellation {
	t.Helper()
	auth, err := a.AuthorizeCancellation(req, target)
	if err != nil {
		t.Fatal(err)
	}
	return auth
}

// Spec: AUZ-003, AUZ-021, AUZ-023
func TestValidateResultCheckOrder(t *testing.T) {
	type fixture struct {
		a    *authorizer.SessionAuthorizer
		auth authorizer.AuthorizedInvocation
	}
	setup := func(t *testing.T) fixture {
		a := newAuthorizer(t)
		return fixture{a, mustAuthorize(t, a, invocation("r1", "echo", text("in")))}
	}
	complete := func(t *testing.T, f fixture) {
		if err := f.a.ValidateResult(f.auth, result("r1", text("out"))); err != nil {
			t.Fatal(err)
		}
	}
	acknowledge := func(t *testing.T, f fixture) {
		c := mustCancel(t, f.a, cancel("c1", "r1", "echo"), f.auth)
		if err := f.a.ValidateCancellationResult(c, cancelResult(c.Request(), protocol.OutcomeAcknowledged)); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name  string
		prep  func(*testing.T, fixture)
		token func(*testing.T, fixture) authorizer.AuthorizedInvocation
		res   protocol.ToolResult
		want  protocol.ErrorKind
	}{
		{"provenance before header", nil, func(t *testing.T, f fixture) authorizer.AuthorizedInvocation {
			b := newAuthorizer(t)
			return mustAuthorize(t, b, invocation("r1", "echo", text("in")))
		}, protocol.ToolResult{ProtocolVersion: 4, SessionID: "BAD", RequestID: "r1", Payload: text("out")}, protocol.ErrAuthorizationProvenanceMismatch},
		{"zero token", nil, func(*testing.T, fixture) authorizer.AuthorizedInvocation { return authorizer.AuthorizedInvocation{} },
			result("r1", text("out")), protocol.ErrAuthorizationProvenanceMismatch},
		{"version before tokens", nil, nil, protocol.ToolResult{ProtocolVersion: 4, SessionID: "BAD", RequestID: "r1", Payload: text("out")}, protocol.ErrUnsupportedVersion},
		{"request token before session", nil, nil, protocol.ToolResult{ProtocolVersion: 5, SessionID: "other", RequestID: "R1", Payload: text("out")}, protocol.ErrInvalidToken},
		{"session before request match", nil, nil, protocol.ToolResult{ProtocolVersion: 5, SessionID: "other", RequestID: "r2", Payload: text("out")}, protocol.ErrUnknownSession},
		{"request match before cancellation", acknowledge, nil, result("r2", text("out")), protocol.ErrRequestMismatch},
		{"cancellation before payload", acknowledge, nil, result("r1", jsonPayloadNoT(`[]`)), protocol.ErrResultAfterCancellation},
		{"duplicate before payload", complete, nil, result("r1", jsonPayloadNoT(`[]`)), protocol.ErrDuplicateResult},
		{"format before size", nil, nil, result("r1", jsonPayloadNoT(`{"a":"0123456789"}`)), protocol.ErrPayloadFormatMismatch},
		{"size", nil, nil, result("r1", text("123456789")), protocol.ErrOutputTooLarge},
		{"size at the limit", nil, nil, result("r1", text("12345678")), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := setup(t)
			if c.prep != nil {
				c.prep(t, f)
			}
			token := f.auth
			if c.token != nil {
				token = c.token(t, f)
			}
			completed := f.a.IsCompleted("r1")
			err := f.a.ValidateResult(token, c.res)
			wantKind(t, err, c.want)
			if err != nil && f.a.IsCompleted("r1") != completed {
				t.Fatal("failed validation changed the completed set")
			}
		})
	}
	// RequestMismatch and OutputTooLarge carry their details.
	f := setup(t)
	var pe *protocol.Error
	if err := f.a.ValidateResult(f.auth, result("r9", text("x"))); !errors.As(err, &pe) || pe.ExpectedText != "r1" || pe.ActualText != "r9" {
		t.Fatalf("got %v, want RequestMismatch{r1,r9}", err)
	}
	if err := f.a.ValidateResult(f.auth, result("r1", text("123456789"))); !errors.As(err, &pe) || pe.Actual != 9 || pe.Maximum != 8 {
		t.Fatalf("got %v, want OutputTooLarge{9,8}", err)
	}
}

// Spec: AUZ-024
func TestResponsesNeedNoIDSlot(t *testing.T) {
	a := newAuthorizer(t)
	inv := mustAuthorize(t, a, invocation("r1", "echo", text("in")))
	op, err := a.AuthorizeOperation(dispatch("d1", "calc", "op", jsonPayloadNoT(`[]`)))
	if err != nil {
		t.Fatal(err)
	}
	fill(t, a, protocol.MaxSessionRequestIDs)
	if err := a.ValidateResult(inv, result("r1", text("out"))); err != nil {
		t.Fatal(err)
	}
	if err := a.ValidateOperationResult(op, operationResult("d1", "calc", "op", protocol.Running())); err != nil {
		t.Fatal(err)
	}
	if a.ReservedRequestIDs() != protocol.MaxSessionRequestIDs || a.CallsFor("echo") != 1 || a.CallsFor("calc") != 1 {
		t.Fatal("validating results changed reservations or budgets")
	}
}

// Spec: AUZ-003, AUZ-015, AUZ-016, AUZ-020
func TestAuthorizeCancellationCheckOrder(t *testing.T) {
	type fixture struct {
		a      *authorizer.SessionAuthorizer
		target authorizer.AuthorizedInvocation
	}
	setup := func(t *testing.T) fixture {
		a := newAuthorizer(t)
		return fixture{a, mustAuthorize(t, a, invocation("r1", "echo", text("in")))}
	}
	withOutcome := func(o protocol.WorkerCancellationOutcome) func(*testing.T, fixture) {
		return func(t *testing.T, f fixture) {
			c := mustCancel(t, f.a, cancel("c0", "r1", "echo"), f.target)
			if err := f.a.ValidateCancellationResult(c, cancelResult(c.Request(), o)); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []struct {
		name   string
		prep   func(*testing.T, fixture)
		target func(*testing.T, fixture) authorizer.AuthorizedInvocation
		req    protocol.WorkerCancellationRequest
		want   protocol.ErrorKind
	}{
		{"provenance before request", nil, func(t *testing.T, f fixture) authorizer.AuthorizedInvocation {
			b := newAuthorizer(t)
			return mustAuthorize(t, b, invocation("r1", "echo", text("in")))
		}, protocol.WorkerCancellationRequest{ProtocolVersion: 3}, protocol.ErrAuthorizationProvenanceMismatch},
		{"zero target", nil, func(*testing.T, fixture) authorizer.AuthorizedInvocation { return authorizer.AuthorizedInvocation{} },
			cancel("c1", "r1", "echo"), protocol.ErrAuthorizationProvenanceMismatch},
		{"version", nil, nil, protocol.WorkerCancellationRequest{ProtocolVersion: 3, SessionID: "X"}, protocol.ErrUnsupportedVersion},
		{"cancellation token before request token", nil, nil, protocol.WorkerCancellationRequest{ProtocolVersion: 5, SessionID: session, CancellationID: "C", RequestID: "R", Tool: "echo"}, protocol.ErrInvalidToken},
		{"same ids before session", nil, nil, protocol.WorkerCancellationRequest{ProtocolVersion: 5, SessionID: "other", CancellationID: "r1", RequestID: "r1", Tool: "echo"}, protocol.ErrCancellationIdMatchesRequest},
		{"session before target", nil, nil, protocol.WorkerCancellationRequest{ProtocolVersion: 5, SessionID: "other", CancellationID: "c1", RequestID: "r2", Tool: "echo"}, protocol.ErrUnknownSession},
		{"target request id", nil, nil, cancel("c1", "r2", "echo"), protocol.ErrCancellationTargetMismatch},
		{"target tool", nil, nil, cancel("c1", "r1", "calc"), protocol.ErrCancellationTargetMismatch},
		{"target before cancelled", withOutcome(protocol.OutcomeAcknowledged), nil, cancel("c1", "r1", "calc"), protocol.ErrCancellationTargetMismatch},
		{"cancelled before requested", withOutcome(protocol.OutcomeAcknowledged), nil, cancel("c0", "r1", "echo"), protocol.ErrRequestAlreadyCancelled},
		{"requested before duplicate id (after unsupported)", withOutcome(protocol.OutcomeUnsupported), nil, cancel("c0", "r1", "echo"), protocol.ErrCancellationAlreadyRequested},
		{"requested, result still outstanding", func(t *testing.T, f fixture) {
			mustCancel(t, f.a, cancel("c0", "r1", "echo"), f.target)
		}, nil, cancel("c1", "r1", "echo"), protocol.ErrCancellationAlreadyRequested},
		{"duplicate id before capacity", func(t *testing.T, f fixture) { fill(t, f.a, protocol.MaxSessionRequestIDs) }, nil,
			cancel("fill-1", "r1", "echo"), protocol.ErrDuplicateRequest},
		{"the target's own id", nil, nil, protocol.WorkerCancellationRequest{ProtocolVersion: 5, SessionID: session, CancellationID: "r1", RequestID: "r1", Tool: "echo"}, protocol.ErrCancellationIdMatchesRequest},
		{"capacity last", func(t *testing.T, f fixture) { fill(t, f.a, protocol.MaxSessionRequestIDs) }, nil,
			cancel("c1", "r1", "echo"), protocol.ErrSessionRequestLimitExceeded},
		{"allowed after the target's result", func(t *testing.T, f fixture) {
			if err := f.a.ValidateResult(f.target, result("r1", text("out"))); err != nil {
				t.Fatal(err)
			}
		}, nil, cancel("c1", "r1", "echo"), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := setup(t)
			if c.prep != nil {
				c.prep(t, f)
			}
			target := f.target
			if c.target != nil {
				target = c.target(t, f)
			}
			requested, reserved := f.a.IsCancellationRequested("r1"), f.a.ReservedRequestIDs()
			_, err := f.a.AuthorizeCancellation(c.req, target)
			wantKind(t, err, c.want)
			if err != nil && (f.a.IsCancellationRequested("r1") != requested || f.a.ReservedRequestIDs() != reserved) {
				t.Fatal("failed cancellation changed state")
			}
			if err == nil && (!f.a.IsCancellationRequested("r1") || f.a.ReservedRequestIDs() != reserved+1) {
				t.Fatal("cancellation did not reserve its id and mark the target")
			}
		})
	}
}

// Spec: AUZ-017, AUZ-019, AUZ-020
func TestCancellationOutcomeTable(t *testing.T) {
	outcomes := []protocol.WorkerCancellationOutcome{protocol.OutcomeAcknowledged, protocol.OutcomeTooLate, protocol.OutcomeUnsupported}
	want := map[bool]map[protocol.WorkerCancellationOutcome]protocol.ErrorKind{
		true: { // the target's result was already accepted
			protocol.OutcomeAcknowledged: protocol.ErrCancellationAcknowledgedAfterResult,
			protocol.OutcomeTooLate:      0,
			protocol.OutcomeUnsupported:  protocol.ErrCancellationUnsupportedAfterResult,
		},
		false: {
			protocol.OutcomeAcknowledged: 0,
			protocol.OutcomeTooLate:      protocol.ErrCancellationTooLateBeforeResult,
			protocol.OutcomeUnsupported:  0,
		},
	}
	for _, resultFirst := range []bool{true, false} {
		for _, o := range outcomes {
			name := o.String()
			if resultFirst {
				name += " after result"
			} else {
				name += " before result"
			}
			t.Run(name, func(t *testing.T) {
				a := newAuthorizer(t)
				target := mustAuthorize(t, a, invocation("r1", "echo", text("in")))
				if resultFirst {
					if err := a.ValidateResult(target, result("r1", text("out"))); err != nil {
						t.Fatal(err)
					}
				}
				c := mustCancel(t, a, cancel("c1", "r1", "echo"), target)
				err := a.ValidateCancellationResult(c, cancelResult(c.Request(), o))
				wantKind(t, err, want[resultFirst][o])
				var pe *protocol.Error
				if err != nil && (!errors.As(err, &pe) || pe.Value != "r1") {
					t.Fatalf("outcome error %v does not name the target", err)
				}
				if err != nil {
					// Nothing was consumed: the cancellation id has no accepted result.
					if a.IsCompleted("c1") || a.IsCancelled("r1") {
						t.Fatal("failed outcome changed state")
					}
					return
				}
				if !a.IsCompleted("c1") {
					t.Fatal("accepted outcome not recorded")
				}
				// A second result for the same cancellation id is a replay.
				wantKind(t, a.ValidateCancellationResult(c, cancelResult(c.Request(), o)), protocol.ErrDuplicateResult)
				switch {
				case o == protocol.OutcomeAcknowledged:
					if !a.IsCancelled("r1") {
						t.Fatal("acknowledged target not cancelled")
					}
					wantKind(t, a.ValidateResult(target, result("r1", text("out"))), protocol.ErrResultAfterCancellation)
				case o == protocol.OutcomeUnsupported:
					// The invocation stays active and may still complete.
					if err := a.ValidateResult(target, result("r1", text("out"))); err != nil {
						t.Fatal(err)
					}
				}
				// Only one cancellation per target, ever.
				_, err = a.AuthorizeCancellation(cancel("c2", "r1", "echo"), target)
				if o == protocol.OutcomeAcknowledged {
					wantKind(t, err, protocol.ErrRequestAlreadyCancelled)
				} else {
					wantKind(t, err, protocol.ErrCancellationAlreadyRequested)
				}
			})
		}
	}
	// A rejected outcome consumes nothing: the same cancellation may still be answered with
	// the valid outcome.
	a := newAuthorizer(t)
	target := mustAuthorize(t, a, invocation("r1", "echo", text("in")))
	if err := a.ValidateResult(target, result("r1", text("out"))); err != nil {
		t.Fatal(err)
	}
	c := mustCancel(t, a, cancel("c1", "r1", "echo"), target)
	wantKind(t, a.ValidateCancellationResult(c, cancelResult(c.Request(), protocol.OutcomeAcknowledged)), protocol.ErrCancellationAcknowledgedAfterResult)
	wantKind(t, a.ValidateCancellationResult(c, cancelResult(c.Request(), protocol.OutcomeTooLate)), 0)
}

// Spec: AUZ-018
func TestValidateCancellationResultCheckOrder(t *testing.T) {
	setup := func(t *testing.T) (*authorizer.SessionAuthorizer, authorizer.AuthorizedWorkerCancellation) {
		a := newAuthorizer(t)
		target := mustAuthorize(t, a, invocation("r1", "echo", text("in")))
		return a, mustCancel(t, a, cancel("c1", "r1", "echo"), target)
	}
	good := cancelResult(cancel("c1", "r1", "echo"), protocol.OutcomeUnsupported)
	with := func(f func(*protocol.WorkerCancellationResult)) protocol.WorkerCancellationResult {
		r := good
		f(&r)
		return r
	}
	cases := []struct {
		name    string
		foreign bool
		replay  bool
		res     protocol.WorkerCancellationResult
		want    protocol.ErrorKind
	}{
		{"provenance before validation", true, false, with(func(r *protocol.WorkerCancellationResult) { r.ProtocolVersion = 9 }), protocol.ErrAuthorizationProvenanceMismatch},
		{"version", false, false, with(func(r *protocol.WorkerCancellationResult) { r.ProtocolVersion = 9; r.Tool = "T" }), protocol.ErrUnsupportedVersion},
		{"tool token before same ids", false, false, with(func(r *protocol.WorkerCancellationResult) { r.Tool = "T"; r.CancellationID = "r1" }), protocol.ErrInvalidToken},
		{"same ids before session", false, false, with(func(r *protocol.WorkerCancellationResult) { r.CancellationID = "r1"; r.SessionID = "other" }), protocol.ErrCancellationIdMatchesRequest},
		{"session before match", false, false, with(func(r *protocol.WorkerCancellationResult) { r.SessionID = "other"; r.Tool = "calc" }), protocol.ErrUnknownSession},
		{"match: tool", false, false, with(func(r *protocol.WorkerCancellationResult) { r.Tool = "calc" }), protocol.ErrCancellationResultMismatch},
		{"match: cancellation id", false, false, with(func(r *protocol.WorkerCancellationResult) { r.CancellationID = "c2" }), protocol.ErrCancellationResultMismatch},
		{"match: request id", false, false, with(func(r *protocol.WorkerCancellationResult) { r.RequestID = "r2" }), protocol.ErrCancellationResultMismatch},
		{"match before duplicate", false, true, with(func(r *protocol.WorkerCancellationResult) { r.RequestID = "r2" }), protocol.ErrCancellationResultMismatch},
		{"duplicate before outcome", false, true, with(func(r *protocol.WorkerCancellationResult) { r.Outcome = protocol.OutcomeTooLate }), protocol.ErrDuplicateResult},
		{"outcome", false, false, with(func(r *protocol.WorkerCancellationResult) { r.Outcome = protocol.OutcomeTooLate }), protocol.ErrCancellationTooLateBeforeResult},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, auth := setup(t)
			if c.replay {
				if err := a.ValidateCancellationResult(auth, good); err != nil {
					t.Fatal(err)
				}
			}
			if c.foreign {
				b, foreign := setup(t)
				_ = b
				auth = foreign
			}
			wantKind(t, a.ValidateCancellationResult(auth, c.res), c.want)
		})
	}
	a, _ := setup(t)
	wantKind(t, a.ValidateCancellationResult(authorizer.AuthorizedWorkerCancellation{}, good), protocol.ErrAuthorizationProvenanceMismatch)
}

// header is an editable copy of a result header.
type header struct {
	version                     uint16
	session, request, tool, key string
	cmpKey, tenant, fp          string
}

// resultValidator authorizes one request on issuer and returns a function that validates, on
// the given authorizer, a result with header h and status s against that authorization.
type resultValidator struct {
	name      string
	mismatch  protocol.ErrorKind
	authorize func(t *testing.T, issuer *authorizer.SessionAuthorizer) func(on *authorizer.SessionAuthorizer, h header, s protocol.OperationStatus) error
}

func resultValidators(t *testing.T) []resultValidator {
	calcFP := fingerprintOf(t, calcGrant)
	reconcileResult := func(h header, s protocol.OperationStatus) protocol.OperationReconcileResult {
		return protocol.OperationReconcileResult{ProtocolVersion: h.version, SessionID: h.session, RequestID: h.request, Tool: h.tool, OperationKey: h.key, Status: s}
	}
	return []resultValidator{
		{"operation", protocol.ErrOperationResultMismatch, func(t *testing.T, issuer *authorizer.SessionAuthorizer) func(*authorizer.SessionAuthorizer, header, protocol.OperationStatus) error {
			auth, err := issuer.AuthorizeOperation(dispatch("d1", "calc", "op", jsonPayloadNoT(`[]`)))
			if err != nil {
				t.Fatal(err)
			}
			return func(on *authorizer.SessionAuthorizer, h header, s protocol.OperationStatus) error {
				return on.ValidateOperationResult(auth, reconcileResult(h, s))
			}
		}},
		{"reconciliation", protocol.ErrOperationResultMismatch, func(t *testing.T, issuer *authorizer.SessionAuthorizer) func(*authorizer.SessionAuthorizer, header, protocol.OperationStatus) error {
			auth, err := issuer.AuthorizeReconciliation(reconcile("d1", "calc", "op"))
			if err != nil {
				t.Fatal(err)
			}
			return func(on *authorizer.SessionAuthorizer, h header, s protocol.OperationStatus) error {
				return on.ValidateReconciliationResult(auth, reconcileResult(h, s))
			}
		}},
		{"compensation", protocol.ErrCompensationResultMismatch, func(t *testing.T, issuer *authorizer.SessionAuthorizer) func(*authorizer.SessionAuthorizer, header, protocol.OperationStatus) error {
			auth, err := issuer.AuthorizeCompensation(compensation("d1", "calc", "op", "cmp-1", calcFP, jsonPayloadNoT(`[]`)))
			if err != nil {
				t.Fatal(err)
			}
			return func(on *authorizer.SessionAuthorizer, h header, s protocol.OperationStatus) error {
				return on.ValidateCompensationResult(auth, protocol.OperationCompensationResult{
					ProtocolVersion: h.version, SessionID: h.session, RequestID: h.request, Tool: h.tool, OperationKey: h.key,
					CompensationKey: h.cmpKey, TenantScope: h.tenant, GrantFingerprint: h.fp, Status: s,
				})
			}
		}},
	}
}

// Spec: AUZ-003, AUZ-022, AUZ-023
func TestValidateOperationResultsCheckOrder(t *testing.T) {
	calcFP := fingerprintOf(t, calcGrant)
	base := header{5, session, "d1", "calc", "op", "cmp-1", "tenant", calcFP}
	longMessage := strings.Repeat("m", protocol.MaxOperationErrorBytes+1)
	ok := protocol.Running()
	type resultCase struct {
		name    string
		foreign bool
		replay  bool
		edit    func(h *header)
		status  protocol.OperationStatus
		want    protocol.ErrorKind
	}
	same := func(*header) {}
	for _, v := range resultValidators(t) {
		cases := []resultCase{
			{"provenance before validation", true, false, func(h *header) { h.version = 1 }, ok, protocol.ErrAuthorizationProvenanceMismatch},
			{"version", false, false, func(h *header) { h.version = 1; h.session = "S" }, ok, protocol.ErrUnsupportedVersion},
			{"key token before status", false, false, func(h *header) { h.key = "K" }, protocol.Failed(""), protocol.ErrInvalidToken},
			{"status validity before session", false, false, func(h *header) { h.session = "other" }, protocol.Failed(""), protocol.ErrInvalidOperationFailure},
			{"failure message bound", false, false, same, protocol.Failed(longMessage), protocol.ErrOperationFailureTooLarge},
			{"succeeded payload valid on its own before session", false, false, func(h *header) { h.session = "other" }, protocol.Succeeded(protocol.JSONPayload(protocolScalar())), protocol.ErrInvalidJsonEnvelope},
			{"session before match", false, false, func(h *header) { h.session = "other"; h.tool = "echo" }, ok, protocol.ErrUnknownSession},
			{"match: request id", false, false, func(h *header) { h.request = "d2" }, ok, v.mismatch},
			{"match: tool", false, false, func(h *header) { h.tool = "echo" }, ok, v.mismatch},
			{"match: key", false, false, func(h *header) { h.key = "op2" }, ok, v.mismatch},
			{"match before duplicate", false, true, func(h *header) { h.key = "op2" }, ok, v.mismatch},
			{"duplicate before grant check", false, true, same, protocol.Succeeded(text("wrong format")), protocol.ErrDuplicateResult},
			{"grant format", false, false, same, protocol.Succeeded(text("x")), protocol.ErrPayloadFormatMismatch},
			{"grant output size", false, false, same, protocol.Succeeded(jsonPayloadNoT(`{"a":"123456789"}`)), protocol.ErrOutputTooLarge},
			{"output size at the limit", false, false, same, protocol.Succeeded(jsonPayloadNoT(`{"a":"12345678"}`)), 0},
			{"failed message is not bounded by the output limit", false, false, same, protocol.Failed(strings.Repeat("m", protocol.MaxOperationErrorBytes)), 0},
			{"cancelled", false, false, same, protocol.Cancelled(), 0},
		}
		if v.name == "compensation" {
			cases = append(cases,
				resultCase{"match: compensation key", false, false, func(h *header) { h.cmpKey = "cmp-2" }, ok, v.mismatch},
				resultCase{"match: tenant", false, false, func(h *header) { h.tenant = "tenant-2" }, ok, v.mismatch},
				resultCase{"match: grant fingerprint", false, false, func(h *header) { h.fp = wrongFingerprint }, ok, v.mismatch},
				resultCase{"compensation key prefix before status", false, false, func(h *header) { h.cmpKey = "undo" }, protocol.Failed(""), protocol.ErrInvalidCompensationKey},
				resultCase{"grant fingerprint hex before status", false, false, func(h *header) { h.fp = "ab" }, protocol.Failed(""), protocol.ErrInvalidCompensationGrantFingerprint},
			)
		}
		for _, c := range cases {
			t.Run(v.name+"/"+c.name, func(t *testing.T) {
				a := newAuthorizer(t)
				issuer := a
				if c.foreign {
					issuer = newAuthorizer(t)
				}
				validate := v.authorize(t, issuer)
				if c.replay {
					if err := validate(a, base, ok); err != nil {
						t.Fatal(err)
					}
				}
				h := base
				c.edit(&h)
				err := validate(a, h, c.status)
				wantKind(t, err, c.want)
				if err != nil && !c.replay && a.IsCompleted("d1") {
					t.Fatal("failed validation marked the request completed")
				}
				if err == nil && !a.IsCompleted("d1") {
					t.Fatal("accepted result not recorded")
				}
			})
		}
	}
}
