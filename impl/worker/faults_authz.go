//go:build splashfaults

package worker

// Deliberate faults in authorization. The session authorizer (package authorizer) cannot be
// told to skip a check, so a faulty authorizer wraps it: it asks the session authorizer
// first, and only when that refuses a request for the one reason an enabled fault ignores
// does it let the request through, in one of two ways:
//
//   - stand-in: it authorizes a copy of the request in which the offending field is replaced
//     by a harmless one, so the session authorizer still runs every other check and keeps its
//     state (reserved ids, spent budgets);
//   - minting: it re-runs the checks that come after the ignored one against the session
//     authorizer's state, then has a single-use authorizer, built for a manifest holding only
//     the (adjusted) grant, issue the token. It remembers the ids and calls of minted tokens
//     so that later checks still count them, and routes the validation of their answers to
//     the authorizer that issued them.
//

import (
	"math"

	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// authorizerFaults are the faults the faulty authorizer implements.
var authorizerFaults = []Fault{
	FaultIgnoreInputLimit, FaultIgnoreCallBudget, FaultForgetRequestID, FaultSkipOutputValidation,
	FaultIgnoreGrant, FaultNoCompensationBudget, FaultSkipFingerprintCheck, FaultSkipScopeCheck,
	FaultAcceptScalarJSON, FaultLimitOffByOne, FaultCancelInBaseline,
}

// authorizer returns az, or a faulty authorizer around it when an authorization fault
// is enabled. journalScope is the scope of the session's journal.
func (f *Faults) authorizer(az *authorizer.SessionAuthorizer, journalScope string) sessionAuthorizer {
	if f != nil {
		m := az.Manifest()
		f.manifest = &m
	}
	if f == nil || !f.Enabled.Any(authorizerFaults...) {
		return az
	}
	grants := map[string]protocol.CapabilityGrant{}
	for _, g := range az.Manifest().Grants {
		grants[g.Tool] = g
	}
	return &faultyAuthorizer{
		SessionAuthorizer: az, faults: f.Enabled, journalScope: journalScope, grants: grants,
		issuers: map[string]*authorizer.SessionAuthorizer{}, ids: map[string]struct{}{}, calls: map[string]uint32{},
	}
}

// faultyAuthorizer is a session authorizer with some checks weakened.
type faultyAuthorizer struct {
	*authorizer.SessionAuthorizer
	faults       FaultSet
	journalScope string
	grants       map[string]protocol.CapabilityGrant
	// issuers maps a request or cancellation id to the single-use authorizer that issued its
	// token, when that is not the session authorizer.
	issuers map[string]*authorizer.SessionAuthorizer
	// ids and calls are what minted tokens reserved and spent, which the session authorizer
	// does not know about.
	ids   map[string]struct{}
	calls map[string]uint32
	// last is the most recent invocation whose result was accepted (FaultCancelInBaseline).
	last *authorizer.AuthorizedInvocation
}

func (f *faultyAuthorizer) has(x Fault) bool { return f.faults.Has(x) }

// The checks of an ordinary or durable dispatch, in the authorizer's order.
type dispatchCheck uint8

const (
	checkGrant dispatchCheck = iota + 1
	checkInput
	checkDuplicate
	checkBudget
	checkCapacity
)

// precheck runs the checks the session authorizer cannot run itself because they involve
// minted tokens, and the stricter input limit of FaultLimitOffByOne.
func (f *faultyAuthorizer) precheck(id, tool string, p *protocol.ToolPayload, chargesCall bool) error {
	if p != nil && f.has(FaultLimitOffByOne) {
		if g, ok := f.grants[tool]; ok {
			if n, err := p.ValidateFor(g.Format); err == nil && n >= int(g.MaxInputBytes) {
				return &protocol.Error{Kind: protocol.ErrInputTooLarge, Actual: uint64(n), Maximum: uint64(g.MaxInputBytes)}
			}
		}
	}
	if len(f.ids) == 0 && len(f.calls) == 0 {
		return nil
	}
	if _, used := f.ids[id]; used && !f.has(FaultForgetRequestID) {
		return &protocol.Error{Kind: protocol.ErrDuplicateRequest, Value: id}
	}
	if g, ok := f.grants[tool]; ok && chargesCall && f.calls[tool] > 0 && !f.has(FaultIgnoreCallBudget) &&
		f.CallsFor(tool)+f.calls[tool] >= g.MaxCalls {
		return &protocol.Error{Kind: protocol.ErrCallBudgetExhausted, Value: tool, Maximum: uint64(g.MaxCalls)}
	}
	return f.checkCapacity()
}

// checkCapacity counts minted ids towards the session's 1,024 ids.
func (f *faultyAuthorizer) checkCapacity() error {
	if !f.has(FaultForgetRequestID) && f.ReservedRequestIDs()+len(f.ids) >= protocol.MaxSessionRequestIDs {
		return &protocol.Error{Kind: protocol.ErrSessionRequestLimitExceeded, Maximum: protocol.MaxSessionRequestIDs}
	}
	return nil
}

// lenientDispatch decides whether a dispatch the session authorizer refused with err passes
// under the enabled faults. It returns the grant a single-use authorizer must hold to issue
// the token, or the error to report.
func (f *faultyAuthorizer) lenientDispatch(err error, id, tool string, format protocol.EnvelopeFormat) (protocol.CapabilityGrant, bool, error) {
	kind, _ := protocol.KindOf(err)
	g, granted := f.grants[tool]
	var skipped dispatchCheck
	switch {
	case kind == protocol.ErrUnknownTool && f.has(FaultIgnoreGrant):
		g, skipped = protocol.TextGrant(tool), checkGrant
		g.Format, g.MaxCalls, g.MaxInputBytes, g.MaxOutputBytes = format, math.MaxUint32, protocol.MaxWireFrameBytes, protocol.MaxWireFrameBytes
	case !granted:
		return protocol.CapabilityGrant{}, false, err
	case kind == protocol.ErrInputTooLarge && f.has(FaultIgnoreInputLimit):
		g.MaxInputBytes, skipped = math.MaxUint32, checkInput
	case kind == protocol.ErrDuplicateRequest && f.has(FaultForgetRequestID):
		skipped = checkDuplicate
	case kind == protocol.ErrCallBudgetExhausted && f.has(FaultIgnoreCallBudget):
		g.MaxCalls, skipped = math.MaxUint32, checkBudget
	case kind == protocol.ErrSessionRequestLimitExceeded && f.has(FaultForgetRequestID):
		skipped = checkCapacity
	default:
		return protocol.CapabilityGrant{}, false, err
	}
	// The checks after the skipped one (the input check runs in the single-use authorizer).
	if skipped < checkDuplicate && !f.has(FaultForgetRequestID) {
		if _, used := f.ids[id]; used || f.IsReserved(id) {
			return protocol.CapabilityGrant{}, false, &protocol.Error{Kind: protocol.ErrDuplicateRequest, Value: id}
		}
	}
	if skipped < checkBudget && granted && !f.has(FaultIgnoreCallBudget) && f.CallsFor(tool)+f.calls[tool] >= g.MaxCalls {
		return protocol.CapabilityGrant{}, false, &protocol.Error{Kind: protocol.ErrCallBudgetExhausted, Value: tool, Maximum: uint64(g.MaxCalls)}
	}
	if skipped < checkCapacity {
		if err := f.checkCapacity(); err != nil {
			return protocol.CapabilityGrant{}, false, err
		}
	}
	return g, true, nil
}

// mint returns a single-use authorizer for a manifest holding only g.
func (f *faultyAuthorizer) mint(g protocol.CapabilityGrant) (*authorizer.SessionAuthorizer, error) {
	return authorizer.New(protocol.CapabilityManifest{ProtocolVersion: protocol.ProtocolVersion, SessionID: f.SessionID(), Grants: []protocol.CapabilityGrant{g}})
}

// minted records a token a single-use authorizer issued.
func (f *faultyAuthorizer) minted(id, tool string, issuer *authorizer.SessionAuthorizer, chargesCall bool) {
	f.issuers[id] = issuer
	if !f.has(FaultForgetRequestID) {
		f.ids[id] = struct{}{}
	}
	if chargesCall {
		f.calls[tool]++
	}
}

// issuer returns the authorizer that issued the token of id when err says the session
// authorizer did not.
func (f *faultyAuthorizer) issuer(err error, id string) (*authorizer.SessionAuthorizer, bool) {
	if kind, _ := protocol.KindOf(err); kind != protocol.ErrAuthorizationProvenanceMismatch {
		return nil, false
	}
	a, ok := f.issuers[id]
	return a, ok
}

// emptyPayload returns the smallest valid payload of format: "" or {}.
func emptyPayload(format protocol.EnvelopeFormat) protocol.ToolPayload {
	if format == protocol.FormatJSON {
		return protocol.JSONPayload(canonjson.Object())
	}
	return protocol.TextPayload("")
}

// Authorize authorizes an ordinary invocation under the enabled faults.
func (f *faultyAuthorizer) Authorize(inv protocol.ToolInvocation) (authorizer.AuthorizedInvocation, error) {
	if err := f.precheck(inv.RequestID, inv.Tool, &inv.Payload, true); err != nil {
		return authorizer.AuthorizedInvocation{}, err
	}
	tok, err := f.SessionAuthorizer.Authorize(inv)
	if err == nil {
		return tok, nil
	}
	if kind, _ := protocol.KindOf(err); f.has(FaultAcceptScalarJSON) && inv.Payload.Format == protocol.FormatJSON &&
		(kind == protocol.ErrInvalidJsonEnvelope || kind == protocol.ErrJsonPayloadTooDeep) {
		// Stand-in: the token holds {} in place of the payload; the runtime passes the
		// invocation as received to the adapter.
		standIn := inv
		standIn.Payload = emptyPayload(protocol.FormatJSON)
		return f.SessionAuthorizer.Authorize(standIn)
	}
	g, ok, err := f.lenientDispatch(err, inv.RequestID, inv.Tool, inv.Payload.Format)
	if !ok {
		return authorizer.AuthorizedInvocation{}, err
	}
	issuer, err := f.mint(g)
	if err != nil {
		return authorizer.AuthorizedInvocation{}, err
	}
	if tok, err = issuer.Authorize(inv); err == nil {
		f.minted(inv.RequestID, inv.Tool, issuer, true)
	}
	return tok, err
}

// AuthorizeOperation authorizes a durable dispatch under the enabled faults.
func (f *faultyAuthorizer) AuthorizeOperation(req protocol.OperationDispatchRequest) (authorizer.AuthorizedOperationInvocation, error) {
	if err := f.precheck(req.RequestID, req.Tool, &req.Payload, true); err != nil {
		return authorizer.AuthorizedOperationInvocation{}, err
	}
	tok, err := f.SessionAuthorizer.AuthorizeOperation(req)
	if err == nil {
		return tok, nil
	}
	g, ok, err := f.lenientDispatch(err, req.RequestID, req.Tool, req.Payload.Format)
	if !ok {
		return authorizer.AuthorizedOperationInvocation{}, err
	}
	issuer, err := f.mint(g)
	if err != nil {
		return authorizer.AuthorizedOperationInvocation{}, err
	}
	if tok, err = issuer.AuthorizeOperation(req); err == nil {
		f.minted(req.RequestID, req.Tool, issuer, true)
	}
	return tok, err
}

// AuthorizeReconciliation authorizes a reconciliation under the enabled faults.
func (f *faultyAuthorizer) AuthorizeReconciliation(req protocol.OperationReconcileRequest) (authorizer.AuthorizedOperationReconciliation, error) {
	if err := f.precheck(req.RequestID, req.Tool, nil, false); err != nil {
		return authorizer.AuthorizedOperationReconciliation{}, err
	}
	tok, err := f.SessionAuthorizer.AuthorizeReconciliation(req)
	kind, _ := protocol.KindOf(err)
	g, granted := f.grants[req.Tool]
	if err == nil || !granted || !f.has(FaultForgetRequestID) ||
		(kind != protocol.ErrDuplicateRequest && kind != protocol.ErrSessionRequestLimitExceeded) {
		return tok, err
	}
	issuer, err := f.mint(g)
	if err != nil {
		return authorizer.AuthorizedOperationReconciliation{}, err
	}
	if tok, err = issuer.AuthorizeReconciliation(req); err == nil {
		f.minted(req.RequestID, req.Tool, issuer, false)
	}
	return tok, err
}

// AuthorizeCompensation authorizes a compensation under the enabled faults. A stand-in
// request carries the journal's scope (FaultSkipScopeCheck) or the live grant's fingerprint
// (FaultSkipFingerprintCheck); the runtime answers with the binding as received.
func (f *faultyAuthorizer) AuthorizeCompensation(req protocol.OperationCompensationRequest) (authorizer.AuthorizedOperationCompensation, error) {
	if err := f.precheck(req.RequestID, req.Tool, &req.Payload, false); err != nil {
		return authorizer.AuthorizedOperationCompensation{}, err
	}
	standIn := req
	if f.has(FaultSkipScopeCheck) && protocol.IsToken(req.TenantScope) {
		standIn.TenantScope = f.journalScope
	}
	tok, err := f.SessionAuthorizer.AuthorizeCompensation(standIn)
	kind, _ := protocol.KindOf(err)
	g, granted := f.grants[req.Tool]
	if !granted {
		return tok, err
	}
	live, fpErr := g.CompensationFingerprint()
	if fpErr != nil {
		return tok, err
	}
	if kind == protocol.ErrCompensationGrantMismatch && f.has(FaultSkipFingerprintCheck) {
		standIn.GrantFingerprint = live
		tok, err = f.SessionAuthorizer.AuthorizeCompensation(standIn)
		kind, _ = protocol.KindOf(err)
	}
	var skippedBudget, skippedInput bool
	switch {
	case err == nil:
		return tok, nil
	case kind == protocol.ErrInputTooLarge && f.has(FaultIgnoreInputLimit):
		// The grant and fingerprint checks came before the input check; the duplicate and
		// budget checks that follow it run here against the session authorizer's state.
		skippedInput = true
		if _, used := f.ids[req.RequestID]; (used || f.IsReserved(req.RequestID)) && !f.has(FaultForgetRequestID) {
			return authorizer.AuthorizedOperationCompensation{}, &protocol.Error{Kind: protocol.ErrDuplicateRequest, Value: req.RequestID}
		}
		if f.CompensationsFor(req.Tool) >= g.MaxCompensations && !f.has(FaultNoCompensationBudget) {
			return authorizer.AuthorizedOperationCompensation{}, &protocol.Error{Kind: protocol.ErrCompensationBudgetExhausted, Value: req.Tool, Maximum: uint64(g.MaxCompensations)}
		}
	case (kind == protocol.ErrCompensationNotGranted || kind == protocol.ErrCompensationBudgetExhausted) && f.has(FaultNoCompensationBudget):
		skippedBudget = true
		if kind == protocol.ErrCompensationNotGranted {
			if standIn.GrantFingerprint != live {
				return authorizer.AuthorizedOperationCompensation{}, &protocol.Error{Kind: protocol.ErrCompensationGrantMismatch}
			}
			if _, used := f.ids[req.RequestID]; (used || f.IsReserved(req.RequestID)) && !f.has(FaultForgetRequestID) {
				return authorizer.AuthorizedOperationCompensation{}, &protocol.Error{Kind: protocol.ErrDuplicateRequest, Value: req.RequestID}
			}
		}
	case (kind == protocol.ErrDuplicateRequest || kind == protocol.ErrSessionRequestLimitExceeded) && f.has(FaultForgetRequestID):
		if f.CompensationsFor(req.Tool) >= g.MaxCompensations && !f.has(FaultNoCompensationBudget) {
			return authorizer.AuthorizedOperationCompensation{}, &protocol.Error{Kind: protocol.ErrCompensationBudgetExhausted, Value: req.Tool, Maximum: uint64(g.MaxCompensations)}
		}
	default:
		return tok, err
	}
	if err := f.checkCapacity(); err != nil {
		return authorizer.AuthorizedOperationCompensation{}, err
	}
	if skippedBudget || skippedInput {
		// The single-use grant allows compensations or any input size, so its fingerprint
		// differs from the live grant's; the journal records the single-use fingerprint.
		if skippedBudget {
			g.MaxCompensations = math.MaxUint32
		}
		if skippedInput {
			g.MaxInputBytes = math.MaxUint32
		}
		if standIn.GrantFingerprint, err = g.CompensationFingerprint(); err != nil {
			return authorizer.AuthorizedOperationCompensation{}, err
		}
	}
	issuer, err := f.mint(g)
	if err != nil {
		return authorizer.AuthorizedOperationCompensation{}, err
	}
	if tok, err = issuer.AuthorizeCompensation(standIn); err == nil {
		f.minted(req.RequestID, req.Tool, issuer, false)
	}
	return tok, err
}

// AuthorizeCancellation authorizes a cancellation, against the authorizer that issued its
// target, under the enabled faults.
func (f *faultyAuthorizer) AuthorizeCancellation(req protocol.WorkerCancellationRequest, target authorizer.AuthorizedInvocation) (authorizer.AuthorizedWorkerCancellation, error) {
	if err := f.precheck(req.CancellationID, req.Tool, nil, false); err != nil {
		return authorizer.AuthorizedWorkerCancellation{}, err
	}
	a := f.SessionAuthorizer
	c, err := a.AuthorizeCancellation(req, target)
	if issuer, ok := f.issuer(err, target.Invocation().RequestID); ok {
		a = issuer
		c, err = a.AuthorizeCancellation(req, target)
	}
	kind, _ := protocol.KindOf(err)
	if err == nil {
		if a != f.SessionAuthorizer {
			f.issuers[req.CancellationID] = a
		}
		return c, nil
	}
	g, granted := f.grants[target.Invocation().Tool]
	if !granted || !f.has(FaultForgetRequestID) || (kind != protocol.ErrDuplicateRequest && kind != protocol.ErrSessionRequestLimitExceeded) {
		return c, err
	}
	// A single-use authorizer that knows only the target: it authorizes the target again and,
	// if the target's result was accepted, accepts a stand-in result so that too_late holds.
	issuer, err := f.mint(g)
	if err != nil {
		return authorizer.AuthorizedWorkerCancellation{}, err
	}
	inv := target.Invocation()
	again, err := issuer.Authorize(inv)
	if err != nil {
		return authorizer.AuthorizedWorkerCancellation{}, err
	}
	if a.IsCompleted(inv.RequestID) {
		res, err := protocol.NewToolResult(inv.SessionID, inv.RequestID, emptyPayload(g.Format))
		if err == nil {
			err = issuer.ValidateResult(again, res)
		}
		if err != nil {
			return authorizer.AuthorizedWorkerCancellation{}, err
		}
	}
	if c, err = issuer.AuthorizeCancellation(req, again); err == nil {
		f.minted(req.CancellationID, req.Tool, issuer, false)
	}
	return c, err
}

// ValidateResult checks an ordinary result under the enabled faults.
func (f *faultyAuthorizer) ValidateResult(tok authorizer.AuthorizedInvocation, res protocol.ToolResult) error {
	g := tok.Grant()
	if f.has(FaultLimitOffByOne) {
		if n, err := res.Payload.ValidateFor(g.Format); err == nil && n >= int(g.MaxOutputBytes) {
			return &protocol.Error{Kind: protocol.ErrOutputTooLarge, Actual: uint64(n), Maximum: uint64(g.MaxOutputBytes)}
		}
	}
	if f.has(FaultSkipOutputValidation) {
		// Stand-in: the bookkeeping runs on an empty output; the output itself is never checked.
		res.Payload = emptyPayload(g.Format)
	}
	err := f.SessionAuthorizer.ValidateResult(tok, res)
	if issuer, ok := f.issuer(err, res.RequestID); ok {
		err = issuer.ValidateResult(tok, res)
	}
	if err == nil {
		f.last = &tok
	}
	return err
}

// ValidateOperationResult checks a dispatch's status with the authorizer that issued its token.
func (f *faultyAuthorizer) ValidateOperationResult(tok authorizer.AuthorizedOperationInvocation, res protocol.OperationReconcileResult) error {
	err := f.SessionAuthorizer.ValidateOperationResult(tok, res)
	if issuer, ok := f.issuer(err, res.RequestID); ok {
		err = issuer.ValidateOperationResult(tok, res)
	}
	return err
}

// ValidateReconciliationResult checks a reconciled status with the authorizer that issued its
// token.
func (f *faultyAuthorizer) ValidateReconciliationResult(tok authorizer.AuthorizedOperationReconciliation, res protocol.OperationReconcileResult) error {
	err := f.SessionAuthorizer.ValidateReconciliationResult(tok, res)
	if issuer, ok := f.issuer(err, res.RequestID); ok {
		err = issuer.ValidateReconciliationResult(tok, res)
	}
	return err
}

// ValidateCompensationResult checks a compensation's status with the authorizer that issued
// its token. An answer bound as received is checked with the stand-in binding of the token.
func (f *faultyAuthorizer) ValidateCompensationResult(tok authorizer.AuthorizedOperationCompensation, res protocol.OperationCompensationResult) error {
	authorized := tok.Request()
	res.TenantScope, res.GrantFingerprint = authorized.TenantScope, authorized.GrantFingerprint
	err := f.SessionAuthorizer.ValidateCompensationResult(tok, res)
	if issuer, ok := f.issuer(err, res.RequestID); ok {
		err = issuer.ValidateCompensationResult(tok, res)
	}
	return err
}

// ValidateCancellationResult checks a cancellation outcome with the authorizer that issued the
// cancellation.
func (f *faultyAuthorizer) ValidateCancellationResult(c authorizer.AuthorizedWorkerCancellation, res protocol.WorkerCancellationResult) error {
	err := f.SessionAuthorizer.ValidateCancellationResult(c, res)
	if issuer, ok := f.issuer(err, res.CancellationID); ok {
		err = issuer.ValidateCancellationResult(c, res)
	}
	return err
}

// lastInvocation returns the most recent invocation whose result was accepted.
func (f *faultyAuthorizer) lastInvocation() (authorizer.AuthorizedInvocation, bool) {
	if f.last == nil {
		return authorizer.AuthorizedInvocation{}, false
	}
	return *f.last, true
}
