// Package authorizer implements the session authorizer of Splash worker protocol v5: the
// in-process state machine that decides, for one session and its capability manifest, which
// requests may be dispatched and which responses may be accepted.
//
// Every operation runs its checks in the order of the Rust reference's code (spec chapter 11),
// returns a typed *protocol.Error naming the first failing check, and changes nothing when it
// fails. The authorizer performs no I/O. It is not safe for concurrent use; callers that share
// one across goroutines must serialize access.
//
// Authorization tokens (Authorized*) remember the authorizer instance that issued them; every
// operation that takes a token rejects one issued by another instance with
// AuthorizationProvenanceMismatch, even if both instances hold the same manifest.
package authorizer

import (
	"github.com/splashv5/conform/impl/protocol"
)

// issuer identifies one authorizer instance. It has a non-zero size so that every allocation
// has a distinct address.
type issuer struct{ _ byte }

// compensationIdentity is the budgeting identity of a compensation request.
type compensationIdentity struct {
	tool, operationKey, compensationKey, tenantScope, grantFingerprint, inputFingerprint string
}

// grantEntry is a manifest grant with its precomputed compensation fingerprint.
type grantEntry struct {
	grant       protocol.CapabilityGrant
	fingerprint string
}

// SessionAuthorizer is the authorization state of one session.
type SessionAuthorizer struct {
	id       *issuer
	manifest protocol.CapabilityManifest
	grants   map[string]*grantEntry

	calls           map[string]uint32
	compensations   map[string]uint32
	identities      map[compensationIdentity]struct{}
	reserved        map[string]struct{}
	completed       map[string]struct{}
	cancelRequested map[string]struct{}
	cancelled       map[string]struct{}
}

// New validates the manifest and returns an authorizer with empty state. The authorizer keeps
// its own copy of the manifest.
func New(manifest protocol.CapabilityManifest) (*SessionAuthorizer, error) {
	if err := manifest.Validate(); err != nil {
		return nil, err
	}
	manifest = cloneManifest(manifest)
	ids := requestIDHint(manifest)
	a := &SessionAuthorizer{
		id:              new(issuer),
		manifest:        manifest,
		grants:          make(map[string]*grantEntry, len(manifest.Grants)),
		calls:           map[string]uint32{},
		compensations:   map[string]uint32{},
		identities:      map[compensationIdentity]struct{}{},
		reserved:        make(map[string]struct{}, ids),
		completed:       make(map[string]struct{}, ids),
		cancelRequested: map[string]struct{}{},
		cancelled:       map[string]struct{}{},
	}
	for _, g := range manifest.Grants {
		fp, err := g.CompensationFingerprint()
		if err != nil {
			return nil, err
		}
		a.grants[g.Tool] = &grantEntry{grant: g, fingerprint: fp}
	}
	return a, nil
}

// requestIDHint is how many request ids the session's calls can reserve: the sum of the
// grants' call budgets, at most the session bound. The id sets are made that size, so that a
// session does not copy them as they grow call by call.
func requestIDHint(m protocol.CapabilityManifest) int {
	n := 0
	for _, g := range m.Grants {
		n += int(g.MaxCalls)
		if n >= protocol.MaxSessionRequestIDs {
			return protocol.MaxSessionRequestIDs
		}
	}
	return n
}

func cloneGrant(g protocol.CapabilityGrant) protocol.CapabilityGrant {
	if g.Resources != nil {
		g.Resources = append([]protocol.ResourceSelector(nil), g.Resources...)
	}
	return g
}

func cloneManifest(m protocol.CapabilityManifest) protocol.CapabilityManifest {
	grants := make([]protocol.CapabilityGrant, len(m.Grants))
	for i, g := range m.Grants {
		grants[i] = cloneGrant(g)
	}
	m.Grants = grants
	return m
}

// Manifest returns a copy of the manifest the authorizer enforces.
func (a *SessionAuthorizer) Manifest() protocol.CapabilityManifest { return cloneManifest(a.manifest) }

// SessionID returns the session id of the manifest.
func (a *SessionAuthorizer) SessionID() string { return a.manifest.SessionID }

// CallsFor returns the ordinary and durable dispatches charged to tool so far.
func (a *SessionAuthorizer) CallsFor(tool string) uint32 { return a.calls[tool] }

// CompensationsFor returns the compensation identities charged to tool so far.
func (a *SessionAuthorizer) CompensationsFor(tool string) uint32 { return a.compensations[tool] }

// ReservedRequestIDs returns how many ids (of every kind) the authorizer has reserved.
func (a *SessionAuthorizer) ReservedRequestIDs() int { return len(a.reserved) }

// IsReserved reports whether id has been reserved by any authorization.
func (a *SessionAuthorizer) IsReserved(id string) bool { _, ok := a.reserved[id]; return ok }

// IsCompleted reports whether a response for id (a request or cancellation id) was accepted.
func (a *SessionAuthorizer) IsCompleted(id string) bool { _, ok := a.completed[id]; return ok }

// IsCancellationRequested reports whether a cancellation was authorized for the request id.
func (a *SessionAuthorizer) IsCancellationRequested(requestID string) bool {
	_, ok := a.cancelRequested[requestID]
	return ok
}

// IsCancelled reports whether the request id was cancelled by an acknowledged cancellation.
func (a *SessionAuthorizer) IsCancelled(requestID string) bool {
	_, ok := a.cancelled[requestID]
	return ok
}

func (a *SessionAuthorizer) has(set map[string]struct{}, id string) bool {
	_, ok := set[id]
	return ok
}

func (a *SessionAuthorizer) checkProvenance(id *issuer) error {
	if id == nil || id != a.id {
		return &protocol.Error{Kind: protocol.ErrAuthorizationProvenanceMismatch}
	}
	return nil
}

func (a *SessionAuthorizer) checkSession(session string) error {
	if session != a.manifest.SessionID {
		return &protocol.Error{Kind: protocol.ErrUnknownSession, Value: session}
	}
	return nil
}

func (a *SessionAuthorizer) lookupGrant(tool string) (*grantEntry, error) {
	g, ok := a.grants[tool]
	if !ok {
		return nil, &protocol.Error{Kind: protocol.ErrUnknownTool, Value: tool}
	}
	return g, nil
}

func duplicateRequest(id string) error {
	return &protocol.Error{Kind: protocol.ErrDuplicateRequest, Value: id}
}

// checkReservable runs the two reservation checks (duplicate, then capacity) without
// reserving.
func (a *SessionAuthorizer) checkReservable(id string) error {
	if a.has(a.reserved, id) {
		return duplicateRequest(id)
	}
	if len(a.reserved) >= protocol.MaxSessionRequestIDs {
		return &protocol.Error{Kind: protocol.ErrSessionRequestLimitExceeded, Maximum: protocol.MaxSessionRequestIDs}
	}
	return nil
}

// checkInput checks a request payload against the grant's format and input limit.
func checkInput(p protocol.ToolPayload, g protocol.CapabilityGrant) error {
	n, err := p.ValidateFor(g.Format)
	if err != nil {
		return err
	}
	if n > int(g.MaxInputBytes) {
		return &protocol.Error{Kind: protocol.ErrInputTooLarge, Actual: uint64(n), Maximum: uint64(g.MaxInputBytes)}
	}
	return nil
}

// checkOutput checks a response payload against the grant's format and output limit.
func checkOutput(p protocol.ToolPayload, g protocol.CapabilityGrant) error {
	n, err := p.ValidateFor(g.Format)
	if err != nil {
		return err
	}
	if n > int(g.MaxOutputBytes) {
		return &protocol.Error{Kind: protocol.ErrOutputTooLarge, Actual: uint64(n), Maximum: uint64(g.MaxOutputBytes)}
	}
	return nil
}

// ValidateStatusForGrant checks an operation status as a response under grant g: the status on
// its own (a succeeded payload valid for its own format, a failed message non-empty and at most
// 4,096 bytes), then a succeeded payload against the grant's format and output limit.
func ValidateStatusForGrant(s protocol.OperationStatus, g protocol.CapabilityGrant) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if s.State == protocol.StateSucceeded {
		return checkOutput(s.Payload, g)
	}
	return nil
}

// authorizeDispatch is the shared core of Authorize and AuthorizeOperation, after the header
// check: session, grant, payload, size, duplicate id, call budget, capacity; then it reserves
// the id and charges one call.
func (a *SessionAuthorizer) authorizeDispatch(session, requestID, tool string, p protocol.ToolPayload) (protocol.CapabilityGrant, error) {
	if err := a.checkSession(session); err != nil {
		return protocol.CapabilityGrant{}, err
	}
	entry, err := a.lookupGrant(tool)
	if err != nil {
		return protocol.CapabilityGrant{}, err
	}
	g := entry.grant
	if err := checkInput(p, g); err != nil {
		return protocol.CapabilityGrant{}, err
	}
	if a.has(a.reserved, requestID) {
		return protocol.CapabilityGrant{}, duplicateRequest(requestID)
	}
	if a.calls[g.Tool] >= g.MaxCalls {
		return protocol.CapabilityGrant{}, &protocol.Error{Kind: protocol.ErrCallBudgetExhausted, Value: g.Tool, Maximum: uint64(g.MaxCalls)}
	}
	if err := a.checkReservable(requestID); err != nil {
		return protocol.CapabilityGrant{}, err
	}
	a.reserved[requestID] = struct{}{}
	a.calls[g.Tool]++
	return g, nil
}

// Authorize checks an ordinary invocation and, on success, reserves its request id and charges
// one call to its tool (AUZ-008).
func (a *SessionAuthorizer) Authorize(inv protocol.ToolInvocation) (AuthorizedInvocation, error) {
	if err := inv.ValidateHeader(); err != nil {
		return AuthorizedInvocation{}, err
	}
	g, err := a.authorizeDispatch(inv.SessionID, inv.RequestID, inv.Tool, inv.Payload)
	if err != nil {
		return AuthorizedInvocation{}, err
	}
	return AuthorizedInvocation{issuer: a.id, invocation: inv, grant: g}, nil
}

// AuthorizeOperation checks a durable dispatch like Authorize, with the dispatch header, and
// charges the same per-tool call budget (AUZ-009).
func (a *SessionAuthorizer) AuthorizeOperation(req protocol.OperationDispatchRequest) (AuthorizedOperationInvocation, error) {
	if err := req.ValidateHeader(); err != nil {
		return AuthorizedOperationInvocation{}, err
	}
	g, err := a.authorizeDispatch(req.SessionID, req.RequestID, req.Tool, req.Payload)
	if err != nil {
		return AuthorizedOperationInvocation{}, err
	}
	return AuthorizedOperationInvocation{issuer: a.id, request: req, grant: g}, nil
}

// AuthorizeReconciliation checks a reconciliation request and reserves its request id; it
// charges no budget (AUZ-012).
func (a *SessionAuthorizer) AuthorizeReconciliation(req protocol.OperationReconcileRequest) (AuthorizedOperationReconciliation, error) {
	if err := req.Validate(); err != nil {
		return AuthorizedOperationReconciliation{}, err
	}
	if err := a.checkSession(req.SessionID); err != nil {
		return AuthorizedOperationReconciliation{}, err
	}
	entry, err := a.lookupGrant(req.Tool)
	if err != nil {
		return AuthorizedOperationReconciliation{}, err
	}
	if err := a.checkReservable(req.RequestID); err != nil {
		return AuthorizedOperationReconciliation{}, err
	}
	a.reserved[req.RequestID] = struct{}{}
	return AuthorizedOperationReconciliation{issuer: a.id, request: req, grant: entry.grant}, nil
}

// AuthorizeCompensation checks a compensation request, reserves its request id and charges one
// compensation to its tool only when its identity is new (AUZ-013, AUZ-014).
func (a *SessionAuthorizer) AuthorizeCompensation(req protocol.OperationCompensationRequest) (AuthorizedOperationCompensation, error) {
	if err := req.ValidateHeader(); err != nil {
		return AuthorizedOperationCompensation{}, err
	}
	if err := a.checkSession(req.SessionID); err != nil {
		return AuthorizedOperationCompensation{}, err
	}
	entry, err := a.lookupGrant(req.Tool)
	if err != nil {
		return AuthorizedOperationCompensation{}, err
	}
	g := entry.grant
	if g.MaxCompensations == 0 {
		return AuthorizedOperationCompensation{}, &protocol.Error{Kind: protocol.ErrCompensationNotGranted, Value: g.Tool}
	}
	if entry.fingerprint != req.GrantFingerprint {
		return AuthorizedOperationCompensation{}, &protocol.Error{Kind: protocol.ErrCompensationGrantMismatch}
	}
	if err := checkInput(req.Payload, g); err != nil {
		return AuthorizedOperationCompensation{}, err
	}
	if a.has(a.reserved, req.RequestID) {
		return AuthorizedOperationCompensation{}, duplicateRequest(req.RequestID)
	}
	input, err := protocol.OperationInputFingerprint(req.Payload)
	if err != nil {
		return AuthorizedOperationCompensation{}, err
	}
	identity := compensationIdentity{
		tool: req.Tool, operationKey: req.OperationKey, compensationKey: req.CompensationKey,
		tenantScope: req.TenantScope, grantFingerprint: req.GrantFingerprint, inputFingerprint: input,
	}
	_, known := a.identities[identity]
	if !known && a.compensations[g.Tool] >= g.MaxCompensations {
		return AuthorizedOperationCompensation{}, &protocol.Error{Kind: protocol.ErrCompensationBudgetExhausted, Value: g.Tool, Maximum: uint64(g.MaxCompensations)}
	}
	if err := a.checkReservable(req.RequestID); err != nil {
		return AuthorizedOperationCompensation{}, err
	}
	a.reserved[req.RequestID] = struct{}{}
	if !known {
		a.identities[identity] = struct{}{}
		a.compensations[g.Tool]++
	}
	return AuthorizedOperationCompensation{issuer: a.id, request: req, grant: g}, nil
}

// AuthorizeCancellation checks a cancellation of the target invocation, reserves the
// cancellation id and marks the target as having a cancellation requested (AUZ-015). At most
// one cancellation is ever authorized per target.
func (a *SessionAuthorizer) AuthorizeCancellation(req protocol.WorkerCancellationRequest, target AuthorizedInvocation) (AuthorizedWorkerCancellation, error) {
	if err := a.checkResponse(target.issuer, req.Validate, req.SessionID); err != nil {
		return AuthorizedWorkerCancellation{}, err
	}
	t := target.invocation
	if req.SessionID != t.SessionID || req.RequestID != t.RequestID || req.Tool != t.Tool {
		return AuthorizedWorkerCancellation{}, &protocol.Error{Kind: protocol.ErrCancellationTargetMismatch}
	}
	if a.has(a.cancelled, req.RequestID) {
		return AuthorizedWorkerCancellation{}, &protocol.Error{Kind: protocol.ErrRequestAlreadyCancelled, Value: req.RequestID}
	}
	if a.has(a.cancelRequested, req.RequestID) {
		return AuthorizedWorkerCancellation{}, &protocol.Error{Kind: protocol.ErrCancellationAlreadyRequested, Value: req.RequestID}
	}
	if err := a.checkReservable(req.CancellationID); err != nil {
		return AuthorizedWorkerCancellation{}, err
	}
	a.reserved[req.CancellationID] = struct{}{}
	a.cancelRequested[req.RequestID] = struct{}{}
	return AuthorizedWorkerCancellation{issuer: a.id, request: req, target: t}, nil
}

// ValidateResult checks an ordinary result against its authorized invocation and marks the
// request completed (AUZ-021).
func (a *SessionAuthorizer) ValidateResult(auth AuthorizedInvocation, res protocol.ToolResult) error {
	if err := a.checkResponse(auth.issuer, res.ValidateHeader, res.SessionID); err != nil {
		return err
	}
	if want := auth.invocation.RequestID; res.RequestID != want {
		return &protocol.Error{Kind: protocol.ErrRequestMismatch, ExpectedText: want, ActualText: res.RequestID}
	}
	if a.has(a.cancelled, res.RequestID) {
		return &protocol.Error{Kind: protocol.ErrResultAfterCancellation, Value: res.RequestID}
	}
	if a.has(a.completed, res.RequestID) {
		return &protocol.Error{Kind: protocol.ErrDuplicateResult, Value: res.RequestID}
	}
	if err := checkOutput(res.Payload, auth.grant); err != nil {
		return err
	}
	a.completed[res.RequestID] = struct{}{}
	return nil
}

// ValidateCancellationResult checks a cancellation result against its authorized request and
// the outcome rule (AUZ-018, AUZ-019), then marks the cancellation id completed. An accepted
// acknowledged outcome marks the target cancelled.
func (a *SessionAuthorizer) ValidateCancellationResult(auth AuthorizedWorkerCancellation, res protocol.WorkerCancellationResult) error {
	if err := a.checkResponse(auth.issuer, res.Validate, res.SessionID); err != nil {
		return err
	}
	if !res.MatchesRequest(auth.request) {
		return &protocol.Error{Kind: protocol.ErrCancellationResultMismatch}
	}
	if a.has(a.completed, res.CancellationID) {
		return &protocol.Error{Kind: protocol.ErrDuplicateResult, Value: res.CancellationID}
	}
	resultAccepted := a.has(a.completed, res.RequestID)
	switch res.Outcome {
	case protocol.OutcomeAcknowledged:
		if resultAccepted {
			return &protocol.Error{Kind: protocol.ErrCancellationAcknowledgedAfterResult, Value: res.RequestID}
		}
		a.cancelled[res.RequestID] = struct{}{}
	case protocol.OutcomeTooLate:
		if !resultAccepted {
			return &protocol.Error{Kind: protocol.ErrCancellationTooLateBeforeResult, Value: res.RequestID}
		}
	case protocol.OutcomeUnsupported:
		if resultAccepted {
			return &protocol.Error{Kind: protocol.ErrCancellationUnsupportedAfterResult, Value: res.RequestID}
		}
	default:
		return &protocol.Error{Kind: protocol.ErrSerialization, Message: "cannot serialize invalid cancellation outcome " + res.Outcome.String()}
	}
	a.completed[res.CancellationID] = struct{}{}
	return nil
}

// checkResponse runs the checks every response validation starts with, in the reference's
// order: the token's provenance, the message's own validation, then its session.
func (a *SessionAuthorizer) checkResponse(id *issuer, validate func() error, session string) error {
	if err := a.checkProvenance(id); err != nil {
		return err
	}
	if err := validate(); err != nil {
		return err
	}
	return a.checkSession(session)
}

// checkOperationResult is the shared sequence of the three operation-result validators:
// checkResponse, then the validator's own match against its authorized request (a mismatch
// fails with the given kind), then the duplicate-result check and the status against the grant;
// on success it marks the request completed.
func (a *SessionAuthorizer) checkOperationResult(id *issuer, validate func() error, session string, matches func() bool, mismatch protocol.ErrorKind, requestID string, s protocol.OperationStatus, g protocol.CapabilityGrant) error {
	if err := a.checkResponse(id, validate, session); err != nil {
		return err
	}
	if !matches() {
		return &protocol.Error{Kind: mismatch}
	}
	if a.has(a.completed, requestID) {
		return &protocol.Error{Kind: protocol.ErrDuplicateResult, Value: requestID}
	}
	if err := ValidateStatusForGrant(s, g); err != nil {
		return err
	}
	a.completed[requestID] = struct{}{}
	return nil
}

// ValidateOperationResult checks the status reported for a durable dispatch (AUZ-022).
func (a *SessionAuthorizer) ValidateOperationResult(auth AuthorizedOperationInvocation, res protocol.OperationReconcileResult) error {
	return a.checkOperationResult(auth.issuer, res.Validate, res.SessionID,
		func() bool { return res.MatchesDispatch(auth.request) }, protocol.ErrOperationResultMismatch,
		res.RequestID, res.Status, auth.grant)
}

// ValidateReconciliationResult checks the status reported for a reconciliation (AUZ-022).
func (a *SessionAuthorizer) ValidateReconciliationResult(auth AuthorizedOperationReconciliation, res protocol.OperationReconcileResult) error {
	return a.checkOperationResult(auth.issuer, res.Validate, res.SessionID,
		func() bool { return res.MatchesRequest(auth.request) }, protocol.ErrOperationResultMismatch,
		res.RequestID, res.Status, auth.grant)
}

// ValidateCompensationResult checks the status reported for a compensation (AUZ-022).
func (a *SessionAuthorizer) ValidateCompensationResult(auth AuthorizedOperationCompensation, res protocol.OperationCompensationResult) error {
	return a.checkOperationResult(auth.issuer, res.Validate, res.SessionID,
		func() bool { return res.MatchesRequest(auth.request) }, protocol.ErrCompensationResultMismatch,
		res.RequestID, res.Status, auth.grant)
}
