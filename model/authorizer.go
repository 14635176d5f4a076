// Package model holds small, pure reference models of the protocol's state machines. Property
// tests drive an implementation and a model with the same commands and compare every outcome.
//
// The models are written for readability, not speed: plain maps and counters, abstract payloads,
// and error outcomes reported as the reference error variant names (for example
// "DuplicateRequest"), so that they share no code with the implementation they check.
package model

// MaxSessionRequestIDs is the number of distinct ids one authorizer may ever reserve.
const MaxSessionRequestIDs = 1024

// MaxFailureMessageBytes is the largest allowed failed-status message, in bytes.
const MaxFailureMessageBytes = 4096

// Payload shapes understood by the models.
const (
	ShapeValid   = "valid"    // a text string, or a JSON object or array within the depth limit
	ShapeScalar  = "scalar"   // a JSON scalar or null root
	ShapeTooDeep = "too-deep" // a JSON object or array nested beyond the depth limit
)

// Payload is an abstract tool payload: what the model needs to know about one concrete payload.
type Payload struct {
	Format  string // "text" or "json"
	Shape   string // ShapeValid, ShapeScalar or ShapeTooDeep
	Size    int    // byte count of the payload as measured by the size limits
	Value   string // identity label: two payloads with the same label are equal values
	WireLen int    // length of the payload's compact JSON form {"format":...,"value":...}
}

// Grant is the abstract capability grant of one tool.
type Grant struct {
	Tool             string
	Format           string
	MaxCalls         uint32
	MaxInput         int
	MaxOutput        int
	MaxCompensations uint32
	Fingerprint      string // the grant's compensation fingerprint
}

// Status is an abstract operation status: "running", "succeeded", "failed" or "cancelled".
type Status struct {
	State   string
	Payload Payload // for "succeeded"
	Message string  // for "failed"
}

// Invocation is an ordinary tool invocation.
type Invocation struct {
	Version   uint16
	Session   string
	RequestID string
	Tool      string
	Payload   Payload
}

// Dispatch is a durable operation dispatch request.
type Dispatch struct {
	Version      uint16
	Session      string
	RequestID    string
	Tool         string
	OperationKey string
	Payload      Payload
}

// Reconcile is an operation reconciliation request.
type Reconcile struct {
	Version      uint16
	Session      string
	RequestID    string
	Tool         string
	OperationKey string
}

// Compensation is an operation compensation request.
type Compensation struct {
	Version          uint16
	Session          string
	RequestID        string
	Tool             string
	OperationKey     string
	CompensationKey  string
	TenantScope      string
	GrantFingerprint string
	Payload          Payload
}

// Cancel is a cancellation request.
type Cancel struct {
	Version        uint16
	Session        string
	CancellationID string
	RequestID      string
	Tool           string
}

// CancelResult is a cancellation result; Outcome is "acknowledged", "too_late" or "unsupported".
type CancelResult struct {
	Cancel
	Outcome string
}

// Result is an ordinary tool result.
type Result struct {
	Version   uint16
	Session   string
	RequestID string
	Payload   Payload
}

// OperationResult is an operation or reconciliation result.
type OperationResult struct {
	Version      uint16
	Session      string
	RequestID    string
	Tool         string
	OperationKey string
	Status       Status
}

// CompensationResult is a compensation result.
type CompensationResult struct {
	Version          uint16
	Session          string
	RequestID        string
	Tool             string
	OperationKey     string
	CompensationKey  string
	TenantScope      string
	GrantFingerprint string
	Status           Status
}

// Ticket is the model's authorization token. Issuer names the authorizer that issued it.
type Ticket struct {
	Issuer       int
	Grant        Grant
	Invocation   Invocation   // for ordinary invocations
	Dispatch     Dispatch     // for durable dispatches
	Reconcile    Reconcile    // for reconciliations
	Compensation Compensation // for compensations
	Cancel       Cancel       // for cancellations
}

type compensationIdentity struct {
	tool, operationKey, compensationKey, tenantScope, grantFingerprint, input string
}

// Authorizer models one session authorizer.
type Authorizer struct {
	ID      int
	Session string
	Grants  map[string]Grant

	Seen            map[string]bool
	Calls           map[string]uint32
	Compensations   map[string]uint32
	identities      map[compensationIdentity]bool
	Completed       map[string]bool
	CancelRequested map[string]bool
	Cancelled       map[string]bool
}

// NewAuthorizer returns a model authorizer with the given instance id, session and grants.
func NewAuthorizer(id int, session string, grants []Grant) *Authorizer {
	m := &Authorizer{
		ID:              id,
		Session:         session,
		Grants:          map[string]Grant{},
		Seen:            map[string]bool{},
		Calls:           map[string]uint32{},
		Compensations:   map[string]uint32{},
		identities:      map[compensationIdentity]bool{},
		Completed:       map[string]bool{},
		CancelRequested: map[string]bool{},
		Cancelled:       map[string]bool{},
	}
	for _, g := range grants {
		m.Grants[g.Tool] = g
	}
	return m
}

// IsToken reports whether s satisfies the token grammar.
func IsToken(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

// IsHex64 reports whether s is 64 lowercase hex characters.
func IsHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) {
			return false
		}
	}
	return true
}

// checkTokens returns the first failing check among a version and a list of tokens.
func checkTokens(version uint16, tokens ...string) string {
	if version != 5 {
		return "UnsupportedVersion"
	}
	for _, tok := range tokens {
		if !IsToken(tok) {
			return "InvalidToken"
		}
	}
	return ""
}

func checkCompensationKey(key string) string {
	if !IsToken(key) {
		return "InvalidToken"
	}
	if len(key) < 4 || key[:4] != "cmp-" {
		return "InvalidCompensationKey"
	}
	return ""
}

// PayloadFor checks a payload against a format and returns its size or the failing check.
func PayloadFor(p Payload, format string) (int, string) {
	if p.Format != format {
		return 0, "PayloadFormatMismatch"
	}
	switch p.Shape {
	case ShapeScalar:
		return 0, "InvalidJsonEnvelope"
	case ShapeTooDeep:
		return 0, "JsonPayloadTooDeep"
	}
	return p.Size, ""
}

// StatusValid checks a status on its own (a succeeded payload against its own format, a failed
// message's length).
func StatusValid(s Status) string {
	switch s.State {
	case "succeeded":
		_, e := PayloadFor(s.Payload, s.Payload.Format)
		return e
	case "failed":
		if len(s.Message) == 0 {
			return "InvalidOperationFailure"
		}
		if len(s.Message) > MaxFailureMessageBytes {
			return "OperationFailureTooLarge"
		}
	}
	return ""
}

// StatusForGrant checks a status on its own and then a succeeded payload against the grant.
func StatusForGrant(s Status, g Grant) string {
	if e := StatusValid(s); e != "" {
		return e
	}
	if s.State == "succeeded" {
		n, e := PayloadFor(s.Payload, g.Format)
		if e != "" {
			return e
		}
		if n > g.MaxOutput {
			return "OutputTooLarge"
		}
	}
	return ""
}

func (m *Authorizer) reserve(id string) string {
	if m.Seen[id] {
		return "DuplicateRequest"
	}
	if len(m.Seen) >= MaxSessionRequestIDs {
		return "SessionRequestLimitExceeded"
	}
	m.Seen[id] = true
	return ""
}

func (m *Authorizer) dispatchCore(session, requestID, tool string, p Payload) (Grant, string) {
	if session != m.Session {
		return Grant{}, "UnknownSession"
	}
	g, ok := m.Grants[tool]
	if !ok {
		return Grant{}, "UnknownTool"
	}
	n, e := PayloadFor(p, g.Format)
	if e != "" {
		return Grant{}, e
	}
	if n > g.MaxInput {
		return Grant{}, "InputTooLarge"
	}
	if m.Seen[requestID] {
		return Grant{}, "DuplicateRequest"
	}
	if m.Calls[tool] >= g.MaxCalls {
		return Grant{}, "CallBudgetExhausted"
	}
	if e := m.reserve(requestID); e != "" {
		return Grant{}, e
	}
	m.Calls[tool]++
	return g, ""
}

// Authorize models authorizing an ordinary invocation.
func (m *Authorizer) Authorize(in Invocation) (Ticket, string) {
	if e := checkTokens(in.Version, in.Session, in.RequestID, in.Tool); e != "" {
		return Ticket{}, e
	}
	g, e := m.dispatchCore(in.Session, in.RequestID, in.Tool, in.Payload)
	if e != "" {
		return Ticket{}, e
	}
	return Ticket{Issuer: m.ID, Grant: g, Invocation: in}, ""
}

// AuthorizeOperation models authorizing a durable dispatch.
func (m *Authorizer) AuthorizeOperation(d Dispatch) (Ticket, string) {
	if e := checkTokens(d.Version, d.Session, d.RequestID, d.Tool, d.OperationKey); e != "" {
		return Ticket{}, e
	}
	g, e := m.dispatchCore(d.Session, d.RequestID, d.Tool, d.Payload)
	if e != "" {
		return Ticket{}, e
	}
	return Ticket{Issuer: m.ID, Grant: g, Dispatch: d}, ""
}

// AuthorizeReconciliation models authorizing a reconciliation.
func (m *Authorizer) AuthorizeReconciliation(r Reconcile) (Ticket, string) {
	if e := checkTokens(r.Version, r.Session, r.RequestID, r.Tool, r.OperationKey); e != "" {
		return Ticket{}, e
	}
	if r.Session != m.Session {
		return Ticket{}, "UnknownSession"
	}
	g, ok := m.Grants[r.Tool]
	if !ok {
		return Ticket{}, "UnknownTool"
	}
	if e := m.reserve(r.RequestID); e != "" {
		return Ticket{}, e
	}
	return Ticket{Issuer: m.ID, Grant: g, Reconcile: r}, ""
}

// AuthorizeCompensation models authorizing a compensation.
func (m *Authorizer) AuthorizeCompensation(c Compensation) (Ticket, string) {
	if e := checkTokens(c.Version, c.Session, c.RequestID, c.Tool, c.OperationKey); e != "" {
		return Ticket{}, e
	}
	if e := checkCompensationKey(c.CompensationKey); e != "" {
		return Ticket{}, e
	}
	if !IsToken(c.TenantScope) {
		return Ticket{}, "InvalidToken"
	}
	if !IsHex64(c.GrantFingerprint) {
		return Ticket{}, "InvalidCompensationGrantFingerprint"
	}
	if c.Session != m.Session {
		return Ticket{}, "UnknownSession"
	}
	g, ok := m.Grants[c.Tool]
	if !ok {
		return Ticket{}, "UnknownTool"
	}
	if g.MaxCompensations == 0 {
		return Ticket{}, "CompensationNotGranted"
	}
	if g.Fingerprint != c.GrantFingerprint {
		return Ticket{}, "CompensationGrantMismatch"
	}
	n, e := PayloadFor(c.Payload, g.Format)
	if e != "" {
		return Ticket{}, e
	}
	if n > g.MaxInput {
		return Ticket{}, "InputTooLarge"
	}
	if m.Seen[c.RequestID] {
		return Ticket{}, "DuplicateRequest"
	}
	id := compensationIdentity{c.Tool, c.OperationKey, c.CompensationKey, c.TenantScope, c.GrantFingerprint, c.Payload.Value}
	known := m.identities[id]
	if !known && m.Compensations[c.Tool] >= g.MaxCompensations {
		return Ticket{}, "CompensationBudgetExhausted"
	}
	if e := m.reserve(c.RequestID); e != "" {
		return Ticket{}, e
	}
	if !known {
		m.identities[id] = true
		m.Compensations[c.Tool]++
	}
	return Ticket{Issuer: m.ID, Grant: g, Compensation: c}, ""
}

// AuthorizeCancellation models authorizing a cancellation of the target invocation.
func (m *Authorizer) AuthorizeCancellation(c Cancel, target Ticket) (Ticket, string) {
	if target.Issuer != m.ID {
		return Ticket{}, "AuthorizationProvenanceMismatch"
	}
	if e := checkTokens(c.Version, c.Session, c.CancellationID, c.RequestID, c.Tool); e != "" {
		return Ticket{}, e
	}
	if c.CancellationID == c.RequestID {
		return Ticket{}, "CancellationIdMatchesRequest"
	}
	if c.Session != m.Session {
		return Ticket{}, "UnknownSession"
	}
	t := target.Invocation
	if c.Session != t.Session || c.RequestID != t.RequestID || c.Tool != t.Tool {
		return Ticket{}, "CancellationTargetMismatch"
	}
	if m.Cancelled[c.RequestID] {
		return Ticket{}, "RequestAlreadyCancelled"
	}
	if m.CancelRequested[c.RequestID] {
		return Ticket{}, "CancellationAlreadyRequested"
	}
	if e := m.reserve(c.CancellationID); e != "" {
		return Ticket{}, e
	}
	m.CancelRequested[c.RequestID] = true
	return Ticket{Issuer: m.ID, Cancel: c, Invocation: t}, ""
}

// ValidateResult models validating an ordinary result.
func (m *Authorizer) ValidateResult(tk Ticket, r Result) string {
	if tk.Issuer != m.ID {
		return "AuthorizationProvenanceMismatch"
	}
	if e := checkTokens(r.Version, r.Session, r.RequestID); e != "" {
		return e
	}
	if r.Session != m.Session {
		return "UnknownSession"
	}
	if r.RequestID != tk.Invocation.RequestID {
		return "RequestMismatch"
	}
	if m.Cancelled[r.RequestID] {
		return "ResultAfterCancellation"
	}
	if m.Completed[r.RequestID] {
		return "DuplicateResult"
	}
	n, e := PayloadFor(r.Payload, tk.Grant.Format)
	if e != "" {
		return e
	}
	if n > tk.Grant.MaxOutput {
		return "OutputTooLarge"
	}
	m.Completed[r.RequestID] = true
	return ""
}

// ValidateCancellationResult models validating a cancellation result.
func (m *Authorizer) ValidateCancellationResult(tk Ticket, r CancelResult) string {
	if tk.Issuer != m.ID {
		return "AuthorizationProvenanceMismatch"
	}
	if e := checkTokens(r.Version, r.Session, r.CancellationID, r.RequestID, r.Tool); e != "" {
		return e
	}
	if r.CancellationID == r.RequestID {
		return "CancellationIdMatchesRequest"
	}
	if r.Session != m.Session {
		return "UnknownSession"
	}
	if r.Cancel != tk.Cancel {
		return "CancellationResultMismatch"
	}
	if m.Completed[r.CancellationID] {
		return "DuplicateResult"
	}
	resultSeen := m.Completed[r.RequestID]
	switch r.Outcome {
	case "acknowledged":
		if resultSeen {
			return "CancellationAcknowledgedAfterResult"
		}
		m.Cancelled[r.RequestID] = true
	case "too_late":
		if !resultSeen {
			return "CancellationTooLateBeforeResult"
		}
	case "unsupported":
		if resultSeen {
			return "CancellationUnsupportedAfterResult"
		}
	}
	m.Completed[r.CancellationID] = true
	return ""
}

func (m *Authorizer) operationResult(tk Ticket, r OperationResult, match bool) string {
	if tk.Issuer != m.ID {
		return "AuthorizationProvenanceMismatch"
	}
	if e := checkTokens(r.Version, r.Session, r.RequestID, r.Tool, r.OperationKey); e != "" {
		return e
	}
	if e := StatusValid(r.Status); e != "" {
		return e
	}
	if r.Session != m.Session {
		return "UnknownSession"
	}
	if !match {
		return "OperationResultMismatch"
	}
	if m.Completed[r.RequestID] {
		return "DuplicateResult"
	}
	if e := StatusForGrant(r.Status, tk.Grant); e != "" {
		return e
	}
	m.Completed[r.RequestID] = true
	return ""
}

// ValidateOperationResult models validating the result of a durable dispatch.
func (m *Authorizer) ValidateOperationResult(tk Ticket, r OperationResult) string {
	d := tk.Dispatch
	match := r.Version == d.Version && r.Session == d.Session && r.RequestID == d.RequestID &&
		r.Tool == d.Tool && r.OperationKey == d.OperationKey
	return m.operationResult(tk, r, match)
}

// ValidateReconciliationResult models validating the result of a reconciliation.
func (m *Authorizer) ValidateReconciliationResult(tk Ticket, r OperationResult) string {
	q := tk.Reconcile
	match := r.Version == q.Version && r.Session == q.Session && r.RequestID == q.RequestID &&
		r.Tool == q.Tool && r.OperationKey == q.OperationKey
	return m.operationResult(tk, r, match)
}

// ValidateCompensationResult models validating the result of a compensation.
func (m *Authorizer) ValidateCompensationResult(tk Ticket, r CompensationResult) string {
	if tk.Issuer != m.ID {
		return "AuthorizationProvenanceMismatch"
	}
	if e := checkTokens(r.Version, r.Session, r.RequestID, r.Tool, r.OperationKey); e != "" {
		return e
	}
	if e := checkCompensationKey(r.CompensationKey); e != "" {
		return e
	}
	if !IsToken(r.TenantScope) {
		return "InvalidToken"
	}
	if !IsHex64(r.GrantFingerprint) {
		return "InvalidCompensationGrantFingerprint"
	}
	if e := StatusValid(r.Status); e != "" {
		return e
	}
	if r.Session != m.Session {
		return "UnknownSession"
	}
	c := tk.Compensation
	if r.Version != c.Version || r.Session != c.Session || r.RequestID != c.RequestID ||
		r.Tool != c.Tool || r.OperationKey != c.OperationKey || r.CompensationKey != c.CompensationKey ||
		r.TenantScope != c.TenantScope || r.GrantFingerprint != c.GrantFingerprint {
		return "CompensationResultMismatch"
	}
	if m.Completed[r.RequestID] {
		return "DuplicateResult"
	}
	if e := StatusForGrant(r.Status, tk.Grant); e != "" {
		return e
	}
	m.Completed[r.RequestID] = true
	return ""
}
