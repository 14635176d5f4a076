package model

// This file models the worker session of the worker-runtime chapter: the order of its checks,
// its two persistence points, poisoning and restore, the reconciliation budgets, and a restart
// from the durable journal. It composes the Authorizer and Journal models and plays the part of
// the conformance profile's adapters, whose behaviour is fully specified, so that every reply and
// every effect can be predicted.

// Tool names of the conformance profile used by the session model.
const (
	SessionToolEcho       = "conf.text.echo"
	SessionToolFail       = "conf.text.fail"
	SessionToolUndeclared = "conf.text.undeclared"
	SessionToolRecord     = "conf.durable.record"
)

// SessionAbsenceMessage is the failure message the profile's durable tool reports when it has
// no effect for an operation key.
const SessionAbsenceMessage = "conformance: no effect recorded"

// Frame kinds of SessionFrame.
const (
	SessionInvoke     = "invoke"
	SessionDispatch   = "dispatch"
	SessionReconcile  = "reconcile"
	SessionCompensate = "compensate"
	SessionOther      = "other" // any message kind the baseline session does not handle
)

// Authentication defects of a SessionFrame.
const (
	SessionAuthBadTag   = "tag"      // the frame's tag does not verify
	SessionAuthSequence = "sequence" // the frame carries a sequence other than the next one
)

// Persistence faults of a SessionStep.
const (
	SessionPersistError = "error" // the store fails and writes nothing
	SessionPersistStale = "stale" // the store writes nothing and returns a revision that is not greater
)

// SessionFrame is one abstract host frame.
type SessionFrame struct {
	Kind            string
	Tool            string
	RequestID       string
	OperationKey    string
	CompensationKey string
	TenantScope     string
	// GrantFingerprint is the fingerprint a compensation request carries.
	GrantFingerprint string
	// Text is the text payload of an invoke, or of a dispatch or compensation to a text tool.
	Text string
	// Mode and Value form the JSON input {"mode":Mode,"value":Value} of a dispatch or
	// compensation to the durable tool. Value is the canonical JSON text of the value.
	Mode  string
	Value string
	// Auth is "" for a frame that authenticates, else SessionAuthBadTag or SessionAuthSequence.
	Auth string
	// Message names the message kind of a SessionOther frame.
	Message string
}

// SessionStep is one input of the session model: a restart, or a frame together with the
// faults the store injects into the persists of this step, in order.
type SessionStep struct {
	Restart bool
	Frame   SessionFrame
	Faults  []string
}

// SessionOutcome is what the session model predicts for one step.
type SessionOutcome struct {
	// Err is the error variant name ("" when the frame was answered): a worker session error
	// name such as "PendingOperation", or, for an error the session reports as a protocol
	// error, the protocol variant name such as "DuplicateRequest".
	Err string
	// Cause names the cause of an indeterminate error: "Adapter", a protocol variant name,
	// "Journal" or "InvalidJournalRevision".
	Cause string
	// Reply is the answer's message kind when Err is "".
	Reply string
	// Status is the answered status of an operation, reconciliation or compensation result.
	Status Status
	// Result is the answered payload of an ordinary result.
	Result Payload
	// Consumed reports whether the frame's sequence number was consumed.
	Consumed bool
	// Persists is the number of persist calls made.
	Persists int
	// AdapterCalls is the number of adapter calls made.
	AdapterCalls int
}

// SessionLimits are the reconciliation budgets of a session.
type SessionLimits struct {
	PerTool    int
	PerSession int
}

// SessionModel models one worker runtime across restarts: the durable journal and the
// profile's effect record survive a restart; everything else is per session.
type SessionModel struct {
	session string
	grants  []Grant
	limits  SessionLimits

	// durable state
	durable        *Journal
	revision       uint64
	effects        map[string]string // tool + " " + key -> value of the latest effect
	effectCount    map[string]int    // tool + " " + key -> number of effects
	compensations  map[string]int    // tool + " " + key -> number of compensation effects
	authorizerSeed int

	// per-session state
	auth      *Authorizer
	journal   *Journal
	poisoned  bool
	recTotal  int
	recByTool map[string]int
}

// NewSessionModel returns a model whose first session uses grants and whose empty journal has
// the given scope.
func NewSessionModel(session, scope string, grants []Grant, limits SessionLimits) *SessionModel {
	m := &SessionModel{
		session:       session,
		grants:        grants,
		limits:        limits,
		durable:       NewJournal(scope),
		effects:       map[string]string{},
		effectCount:   map[string]int{},
		compensations: map[string]int{},
	}
	m.restart()
	return m
}

func (m *SessionModel) restart() {
	m.authorizerSeed++
	m.auth = NewAuthorizer(m.authorizerSeed, m.session, m.grants)
	m.journal = m.durable.clone()
	m.poisoned = false
	m.recTotal = 0
	m.recByTool = map[string]int{}
}

// Poisoned reports whether the current session is poisoned.
func (m *SessionModel) Poisoned() bool { return m.poisoned }

// Journal returns a copy of the current session's in-memory journal.
func (m *SessionModel) Journal() *Journal { return m.journal.clone() }

// Durable returns a copy of the last persisted journal.
func (m *SessionModel) Durable() *Journal { return m.durable.clone() }

// Revision returns the revision of the last persisted journal (0 before the first persist).
func (m *SessionModel) Revision() uint64 { return m.revision }

// Effects returns how many effects the durable tool performed for an operation key.
func (m *SessionModel) Effects(tool, key string) int { return m.effectCount[tool+" "+key] }

// CompensationEffects returns how many compensations the durable tool performed for an
// operation key.
func (m *SessionModel) CompensationEffects(tool, key string) int {
	return m.compensations[tool+" "+key]
}

// SessionSuccessPayload is the durable tool's success payload for an operation key and a value
// given as canonical JSON text.
func SessionSuccessPayload(key, value string) Payload {
	return sessionJSON(`{"operation_key":"` + key + `","value":` + value + `}`)
}

// SessionCompensationPayload is the durable tool's compensation success payload.
func SessionCompensationPayload(cmpKey, key, value string) Payload {
	return sessionJSON(`{"compensation_key":"` + cmpKey + `","operation_key":"` + key + `","value":` + value + `}`)
}

// SessionInputPayload is the durable tool's dispatch or compensation input.
func SessionInputPayload(mode, value string) Payload {
	return sessionJSON(`{"mode":"` + mode + `","value":` + value + `}`)
}

// SessionTextPayload is a text payload.
func SessionTextPayload(text string) Payload {
	return Payload{Format: "text", Shape: ShapeValid, Size: len(text), Value: text,
		WireLen: len(`{"format":"text","value":""}`) + len(text)}
}

func sessionJSON(text string) Payload {
	return Payload{Format: "json", Shape: ShapeValid, Size: len(text), Value: text,
		WireLen: len(`{"format":"json","value":}`) + len(text)}
}

func (m *SessionModel) inputPayload(f SessionFrame) Payload {
	g, ok := m.auth.Grants[f.Tool]
	if ok && g.Format == "json" {
		return SessionInputPayload(f.Mode, f.Value)
	}
	return SessionTextPayload(f.Text)
}

// persist models one persist call; it returns the error name or "".
func (m *SessionModel) persist(out *SessionOutcome, faults []string, before *Journal) string {
	fault := ""
	if out.Persists < len(faults) {
		fault = faults[out.Persists]
	}
	out.Persists++
	switch fault {
	case SessionPersistError:
		m.journal, m.poisoned = before, true
		return "Journal"
	case SessionPersistStale:
		m.journal, m.poisoned = before, true
		return "InvalidJournalRevision"
	}
	m.durable = m.journal.clone()
	m.revision++
	return ""
}

// Step applies one step and returns the predicted outcome.
func (m *SessionModel) Step(step SessionStep) SessionOutcome {
	if step.Restart {
		m.restart()
		return SessionOutcome{}
	}
	f := step.Frame
	if m.poisoned {
		return SessionOutcome{Err: "SessionPoisoned"}
	}
	switch f.Auth {
	case SessionAuthBadTag:
		return SessionOutcome{Err: "InvalidAuthenticationTag"}
	case SessionAuthSequence:
		return SessionOutcome{Err: "UnexpectedSequence"}
	}
	out := SessionOutcome{Consumed: true}
	switch f.Kind {
	case SessionInvoke:
		m.invoke(f, &out)
	case SessionDispatch:
		m.dispatch(f, step.Faults, &out)
	case SessionCompensate:
		m.compensate(f, step.Faults, &out)
	case SessionReconcile:
		m.reconcile(f, step.Faults, &out)
	default:
		out.Err = "UnexpectedMessage"
	}
	return out
}

func (m *SessionModel) invoke(f SessionFrame, out *SessionOutcome) {
	in := Invocation{Version: 5, Session: m.session, RequestID: f.RequestID, Tool: f.Tool, Payload: m.inputPayload(f)}
	tk, e := m.auth.Authorize(in)
	if e != "" {
		out.Err = e
		return
	}
	switch f.Tool {
	case SessionToolUndeclared, SessionToolRecord:
		out.Err = "InvocationSafetyNotDeclared"
		return
	case SessionToolFail:
		out.AdapterCalls++
		out.Err = "Adapter"
		return
	}
	out.AdapterCalls++
	result := Result{Version: 5, Session: m.session, RequestID: f.RequestID, Payload: in.Payload}
	if e := m.auth.ValidateResult(tk, result); e != "" {
		out.Err = e
		return
	}
	out.Reply, out.Result = "result", in.Payload
}

// adapterStatus runs the durable tool's dispatch or compensation handler; it returns the status,
// or an adapter outcome name ("Adapter" or "Indeterminate").
func (m *SessionModel) adapterStatus(f SessionFrame, compensation bool) (Status, string) {
	id := f.Tool + " " + f.OperationKey
	success := SessionSuccessPayload(f.OperationKey, f.Value)
	if compensation {
		success = SessionCompensationPayload(f.CompensationKey, f.OperationKey, f.Value)
	}
	effect := func() {
		if compensation {
			m.compensations[id]++
		} else {
			m.effects[id] = f.Value
			m.effectCount[id]++
		}
	}
	switch f.Mode {
	case "succeed":
		effect()
		return Status{State: "succeeded", Payload: success}, ""
	case "running":
		effect()
		if compensation {
			return Status{State: "succeeded", Payload: success}, ""
		}
		return Status{State: "running"}, ""
	case "fail":
		return Status{State: "failed", Message: SessionAbsenceMessage}, ""
	case "indeterminate":
		effect()
		return Status{}, "Indeterminate"
	}
	return Status{}, "Adapter"
}

func (m *SessionModel) dispatch(f SessionFrame, faults []string, out *SessionOutcome) {
	d := Dispatch{Version: 5, Session: m.session, RequestID: f.RequestID, Tool: f.Tool,
		OperationKey: f.OperationKey, Payload: m.inputPayload(f)}
	tk, e := m.auth.AuthorizeOperation(d)
	if e != "" {
		out.Err = e
		return
	}
	status, ok := m.runDurable(f, faults, out, durableOperation, func() (string, JournalState, string) { return m.journal.Admit(tk) },
		func(st Status) string {
			_, e := m.journal.Observe(tk, st)
			return e
		})
	if !ok {
		return
	}
	result := OperationResult{Version: 5, Session: m.session, RequestID: f.RequestID, Tool: f.Tool,
		OperationKey: f.OperationKey, Status: status}
	if e := m.auth.ValidateOperationResult(tk, result); e != "" {
		out.Err = e
		return
	}
	out.Reply, out.Status = "operation_result", status
}

func (m *SessionModel) compensate(f SessionFrame, faults []string, out *SessionOutcome) {
	c := Compensation{Version: 5, Session: m.session, RequestID: f.RequestID, Tool: f.Tool,
		OperationKey: f.OperationKey, CompensationKey: f.CompensationKey, TenantScope: f.TenantScope,
		GrantFingerprint: f.GrantFingerprint, Payload: m.inputPayload(f)}
	tk, e := m.auth.AuthorizeCompensation(c)
	if e != "" {
		out.Err = e
		return
	}
	status, ok := m.runDurable(f, faults, out, durableCompensation, func() (string, JournalState, string) { return m.journal.AdmitCompensation(tk) },
		func(st Status) string {
			_, e := m.journal.ObserveCompensation(tk, st)
			return e
		})
	if !ok {
		return
	}
	result := CompensationResult{Version: 5, Session: m.session, RequestID: f.RequestID, Tool: f.Tool,
		OperationKey: f.OperationKey, CompensationKey: f.CompensationKey, TenantScope: f.TenantScope,
		GrantFingerprint: f.GrantFingerprint, Status: status}
	if e := m.auth.ValidateCompensationResult(tk, result); e != "" {
		out.Err = e
		return
	}
	out.Reply, out.Status = "compensation_result", status
}

// durableFlow names what differs between the durable dispatch and compensation flows: the
// refusal of a duplicate whose record is still pending, the indeterminate error kind, and
// whether the adapter runs as a compensation.
type durableFlow struct {
	pending, indeterminate string
	compensation           bool
}

var (
	durableOperation    = durableFlow{pending: "PendingOperation", indeterminate: "IndeterminateOperation"}
	durableCompensation = durableFlow{pending: "PendingCompensation", indeterminate: "IndeterminateCompensation", compensation: true}
)

// runDurable runs the journaled part of a durable flow (WRK-040 to WRK-047) after
// authorization: the contract check, admission, a persisted pending record, the adapter, the
// observed status and its persistence. An admitted duplicate answers its recorded status. It
// returns the status to answer, or false with out.Err set.
func (m *SessionModel) runDurable(f SessionFrame, faults []string, out *SessionOutcome, flow durableFlow,
	admit func() (string, JournalState, string), observe func(Status) string) (Status, bool) {
	if f.Tool != SessionToolRecord {
		out.Err = "DurableOperationContractNotDeclared"
		return Status{}, false
	}
	before := m.journal.clone()
	admission, state, e := admit()
	if e != "" {
		out.Err = e
		return Status{}, false
	}
	if admission == AdmitExisting {
		if state.State == "pending" {
			out.Err = flow.pending
			return Status{}, false
		}
		return Status(state), true
	}
	if e := m.persist(out, faults, before); e != "" {
		out.Err = e
		return Status{}, false
	}
	out.AdapterCalls++
	status, outcome := m.adapterStatus(f, flow.compensation)
	switch outcome {
	case "Indeterminate":
		out.Err, out.Cause = flow.indeterminate, "Adapter"
		return Status{}, false
	case "Adapter":
		out.Err = "Adapter"
		return Status{}, false
	}
	pending := m.journal.clone()
	if e := observe(status); e != "" {
		out.Err, out.Cause = flow.indeterminate, e
		return Status{}, false
	}
	if e := m.persist(out, faults, pending); e != "" {
		out.Err, out.Cause = flow.indeterminate, e
		return Status{}, false
	}
	return status, true
}

func (m *SessionModel) reconcile(f SessionFrame, faults []string, out *SessionOutcome) {
	r := Reconcile{Version: 5, Session: m.session, RequestID: f.RequestID, Tool: f.Tool, OperationKey: f.OperationKey}
	tk, e := m.auth.AuthorizeReconciliation(r)
	if e != "" {
		out.Err = e
		return
	}
	if e := m.journal.ValidateReconciliation(tk); e != "" {
		out.Err = e
		return
	}
	if m.recTotal >= m.limits.PerSession {
		out.Err = "ReconciliationSessionBudgetExhausted"
		return
	}
	if m.recByTool[f.Tool] >= m.limits.PerTool {
		out.Err = "ReconciliationBudgetExhausted"
		return
	}
	m.recTotal++
	m.recByTool[f.Tool]++
	out.AdapterCalls++
	if f.Tool != SessionToolRecord {
		// Only the durable tool implements reconciliation; the others are unsupported.
		out.Err = "Adapter"
		return
	}
	status := Status{State: "failed", Message: SessionAbsenceMessage}
	if v, ok := m.effects[f.Tool+" "+f.OperationKey]; ok {
		status = Status{State: "succeeded", Payload: SessionSuccessPayload(f.OperationKey, v)}
	}
	before := m.journal.clone()
	if _, e := m.journal.ObserveReconciliation(tk, status); e != "" {
		out.Err = e
		return
	}
	if e := m.persist(out, faults, before); e != "" {
		out.Err = e
		return
	}
	result := OperationResult{Version: 5, Session: m.session, RequestID: f.RequestID, Tool: f.Tool,
		OperationKey: f.OperationKey, Status: status}
	if e := m.auth.ValidateReconciliationResult(tk, result); e != "" {
		out.Err = e
		return
	}
	out.Reply, out.Status = "reconciled_operation", status
}
