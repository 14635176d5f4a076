package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/protocol"
)

// Default reconciliation budgets of a session (WRK-061).
const (
	DefaultMaxReconciliationsPerTool    uint32 = 16
	DefaultMaxReconciliationsPerSession uint32 = 64
)

// Limits are a session's reconciliation budgets. The zero value means the defaults.
type Limits struct {
	perTool, perSession uint32
}

// DefaultLimits returns the default budgets: 16 per tool, 64 per session.
func DefaultLimits() Limits {
	return Limits{DefaultMaxReconciliationsPerTool, DefaultMaxReconciliationsPerSession}
}

// NewLimits returns budgets of perTool reconciliations per tool and perSession per session;
// neither may be 0 (ErrZeroPerToolReconciliationLimit, ErrZeroSessionReconciliationLimit).
func NewLimits(perTool, perSession uint32) (Limits, error) {
	if perTool == 0 {
		return Limits{}, &Error{Kind: ErrZeroPerToolReconciliationLimit}
	}
	if perSession == 0 {
		return Limits{}, &Error{Kind: ErrZeroSessionReconciliationLimit}
	}
	return Limits{perTool, perSession}, nil
}

// PerTool returns the per-tool budget.
func (l Limits) PerTool() uint32 { return l.perTool }

// PerSession returns the per-session budget.
func (l Limits) PerSession() uint32 { return l.perSession }

// Lease is the fencing lease a session writes its journal under: an opaque nonzero token
// issued by admission. Only Open creates one.
type Lease struct{ token uint64 }

// Token returns the fencing token, for a journal store implementation.
func (l Lease) Token() uint64 { return l.token }

// String hides the token, which is meaningful only to the journal store.
func (Lease) String() string { return "Lease(redacted)" }

// GoString hides the token.
func (l Lease) GoString() string { return l.String() }

// JournalPersister durably replaces a session's journal (WRK-070). Persist must compare
// expectedRevision with the stored revision and require lease to be the current fencing lease
// in one atomic step, commit the journal durably, and return the new, strictly greater
// revision. On error nothing may have been committed. It must not retain j.
type JournalPersister interface {
	Persist(ctx context.Context, j *journal.Journal, expectedRevision uint64, lease Lease) (uint64, error)
}

// Admission is the trusted host policy that admits a newly opened session (WRK-015). Admit
// must bind the manifest's session id and the journal scope to one tenant, refuse a session id
// it already admitted for that journal, and return a nonzero fencing token reserved atomically
// on the journal's storage record (never the current fence plus one).
type Admission interface {
	Admit(ctx context.Context, manifest protocol.CapabilityManifest, journalScope string) (uint64, error)
}

// AdmissionFunc adapts a function to the Admission interface.
type AdmissionFunc func(ctx context.Context, manifest protocol.CapabilityManifest, journalScope string) (uint64, error)

// Admit calls f.
func (f AdmissionFunc) Admit(ctx context.Context, m protocol.CapabilityManifest, scope string) (uint64, error) {
	return f(ctx, m, scope)
}

// Config is what Open needs besides the authenticator and the opening frame.
type Config struct {
	// Journal and Revision must have been loaded together, atomically.
	Journal  *journal.Journal
	Revision uint64
	// Registry holds the adapters; the session uses it exclusively.
	Registry *Registry
	// Limits are the reconciliation budgets; the zero value means DefaultLimits.
	Limits Limits
	// Admission admits the session and issues its lease.
	Admission Admission

	hooks testOnlyHooks // set only by the faulty build
}

// frameOpener authenticates incoming frame lines; *protocol.Authenticator is one.
type frameOpener interface {
	Open(line []byte) (protocol.Frame, error)
}

// frameSealer seals answers; *protocol.Authenticator is one.
type frameSealer interface {
	SealAppend(dst []byte, m protocol.Message) (protocol.Frame, []byte, error)
}

// invokeOpener and resultSealer are the allocation-free paths of a frameOpener and a
// frameSealer for the frames of a call: *protocol.Authenticator has both. A session uses them
// when its opener and sealer have them (the faulty build's wrappers do not).
type (
	invokeOpener interface {
		OpenInvoke(line []byte) (protocol.ToolInvocation, protocol.Message, error)
	}
	resultSealer interface {
		SealResultAppend(dst []byte, r protocol.ToolResult) ([]byte, error)
	}
)

// sessionAuthorizer is the part of *authorizer.SessionAuthorizer the runtime uses.
type sessionAuthorizer interface {
	Manifest() protocol.CapabilityManifest
	Authorize(protocol.ToolInvocation) (authorizer.AuthorizedInvocation, error)
	AuthorizeOperation(protocol.OperationDispatchRequest) (authorizer.AuthorizedOperationInvocation, error)
	AuthorizeReconciliation(protocol.OperationReconcileRequest) (authorizer.AuthorizedOperationReconciliation, error)
	AuthorizeCompensation(protocol.OperationCompensationRequest) (authorizer.AuthorizedOperationCompensation, error)
	AuthorizeCancellation(protocol.WorkerCancellationRequest, authorizer.AuthorizedInvocation) (authorizer.AuthorizedWorkerCancellation, error)
	ValidateResult(authorizer.AuthorizedInvocation, protocol.ToolResult) error
	ValidateOperationResult(authorizer.AuthorizedOperationInvocation, protocol.OperationReconcileResult) error
	ValidateReconciliationResult(authorizer.AuthorizedOperationReconciliation, protocol.OperationReconcileResult) error
	ValidateCompensationResult(authorizer.AuthorizedOperationCompensation, protocol.OperationCompensationResult) error
	ValidateCancellationResult(authorizer.AuthorizedWorkerCancellation, protocol.WorkerCancellationResult) error
}

// sessionParts are the parts of a session that Open assembles from its arguments.
type sessionParts struct {
	opener    frameOpener
	sealer    frameSealer
	admission Admission
	registry  *Registry
	limits    Limits
}

// Session is an open worker session (chapter 13): a pure state machine that takes frame lines
// and returns answer lines. It is not safe for concurrent use.
type Session struct {
	auth       *protocol.Authenticator
	opener     frameOpener
	sealer     frameSealer
	invokes    invokeOpener // opener's, when it has the path; nil otherwise
	results    resultSealer // sealer's, when it has the path; nil otherwise
	authorizer sessionAuthorizer
	journal    *journal.Journal
	revision   uint64
	lease      Lease
	registry   *Registry
	limits     Limits
	recByTool  map[string]uint32
	recTotal   uint32
	poisoned   bool
	// answer holds the last sealed answer line; the next seal reuses it, so that answering
	// allocates no line (a worker process rarely lives long enough for a collection, and
	// every fresh page it touches costs a page fault).
	answer []byte
	hooks  testOnlyHooks
}

// Open opens a session from the first frame line (WRK-010 to WRK-018). Its checks run in
// order: the authenticator's role is worker; the frame opens at incoming sequence 1; it is
// open_session; the manifest validates; every grant has an adapter; admission admits the
// session; the lease is nonzero. A failed Open writes nothing and leaves no session.
func Open(ctx context.Context, auth *protocol.Authenticator, line []byte, cfg Config) (*Session, error) {
	if cfg.Journal == nil || cfg.Registry == nil || cfg.Admission == nil {
		return nil, errors.New("worker: Open needs a journal, a registry and an admission policy")
	}
	if auth == nil || auth.Role() != protocol.RoleWorker {
		return nil, &Error{Kind: ErrRequiresWorkerAuthenticator}
	}
	limits := cfg.Limits
	if limits == (Limits{}) {
		limits = DefaultLimits()
	}
	parts := sessionParts{opener: auth, sealer: auth, admission: cfg.Admission, registry: cfg.Registry, limits: limits}
	if cfg.hooks != nil {
		if err := cfg.hooks.open(auth, &parts); err != nil {
			return nil, err
		}
	}
	frame, err := parts.opener.Open(line)
	if err != nil {
		return nil, &Error{Kind: ErrProtocol, Stage: StageOpen, Err: err}
	}
	opening, ok := frame.Message.(protocol.OpenSessionMessage)
	if !ok {
		return nil, &Error{Kind: ErrUnexpectedOpeningMessage, MessageType: string(frame.Message.Type())}
	}
	az, err := authorizer.New(opening.Manifest)
	if err != nil {
		return nil, &Error{Kind: ErrProtocol, Stage: StageManifest, Err: err}
	}
	manifest := az.Manifest()
	for _, g := range manifest.Grants {
		if !parts.registry.Contains(g.Tool) {
			return nil, &Error{Kind: ErrMissingAdapter, Tool: g.Tool}
		}
	}
	token, err := parts.admission.Admit(ctx, manifest, cfg.Journal.Scope())
	if err != nil {
		return nil, &Error{Kind: ErrAdmission, Err: err}
	}
	if token == 0 {
		return nil, &Error{Kind: ErrInvalidJournalLease}
	}
	var authz sessionAuthorizer = az
	if cfg.hooks != nil {
		authz = cfg.hooks.authorizer(az, cfg.Journal.Scope())
	}
	invokes, _ := parts.opener.(invokeOpener)
	results, _ := parts.sealer.(resultSealer)
	return &Session{
		auth:       auth,
		opener:     parts.opener,
		sealer:     parts.sealer,
		invokes:    invokes,
		results:    results,
		authorizer: authz,
		journal:    cfg.Journal,
		revision:   cfg.Revision,
		lease:      Lease{token},
		registry:   parts.registry,
		limits:     parts.limits,
		recByTool:  map[string]uint32{},
		hooks:      cfg.hooks,
	}, nil
}

// Manifest returns the session's manifest.
func (s *Session) Manifest() protocol.CapabilityManifest { return s.authorizer.Manifest() }

// Journal returns a copy of the in-memory journal.
func (s *Session) Journal() *journal.Journal { return s.journal.Clone() }

// Revision returns the revision the next persist expects.
func (s *Session) Revision() uint64 { return s.revision }

// Lease returns the session's fencing lease.
func (s *Session) Lease() Lease { return s.lease }

// Poisoned reports whether a persistence failure poisoned the session. A poisoned session
// must be discarded; recovery opens a fresh session from a freshly loaded journal.
func (s *Session) Poisoned() bool { return s.poisoned }

// Registry returns the session's adapter registry.
func (s *Session) Registry() *Registry { return s.registry }

// ReconciliationsSpent returns the reconciliations spent in the session, in total and for tool.
func (s *Session) ReconciliationsSpent(tool string) (total, forTool uint32) {
	return s.recTotal, s.recByTool[tool]
}

// Handle opens one host frame line and answers it (WRK-020 to WRK-063). It returns the sealed
// answer line (without a newline), or an error and no answer. The answer is valid until the
// session answers again: write or copy it first. store persists the journal in the durable
// flows.
func (s *Session) Handle(ctx context.Context, line []byte, store JournalPersister) ([]byte, error) {
	if s.poisoned {
		return nil, &Error{Kind: ErrSessionPoisoned}
	}
	inv, m, err := s.open(line)
	if err != nil {
		return nil, &Error{Kind: ErrProtocol, Stage: StageOpen, Err: err}
	}
	if m == nil { // an invoke, opened without a message around it
		if (protocol.WorkerState{Kind: protocol.BaselineSession}).Admit(protocol.TypeInvoke) == protocol.Accepted {
			return s.flowA(ctx, inv, store)
		}
		m = protocol.InvokeMessage{Invocation: inv}
	}
	if (protocol.WorkerState{Kind: protocol.BaselineSession}).Admit(m.Type()) != protocol.Accepted {
		if s.hooks != nil {
			if answer, handled, err := s.hooks.otherMessage(s, m); handled {
				return answer, err
			}
		}
		return nil, &Error{Kind: ErrUnexpectedMessage, MessageType: string(m.Type())}
	}
	switch m := m.(type) {
	case protocol.InvokeMessage:
		return s.flowA(ctx, m.Invocation, store)
	case protocol.DispatchOperationMessage:
		return s.dispatch(ctx, m.Request, store)
	case protocol.CompensateOperationMessage:
		return s.compensate(ctx, m.Request, store)
	case protocol.ReconcileOperationMessage:
		return s.reconcile(ctx, m.Request, store)
	}
	return nil, &Error{Kind: ErrUnexpectedMessage, MessageType: string(m.Type())}
}

// open opens a frame line: an invoke as its invocation and a nil message when the opener
// has the allocation-free path, and every other frame as its message.
func (s *Session) open(line []byte) (protocol.ToolInvocation, protocol.Message, error) {
	if s.invokes != nil {
		return s.invokes.OpenInvoke(line)
	}
	frame, err := s.opener.Open(line)
	return protocol.ToolInvocation{}, frame.Message, err
}

// seal seals an answer. An output whose numbers the session may not send (ENC-037: not
// portable, and the peer has not proven that it keeps number text) is a result the adapter
// should not have produced: it is reported at StageResult, in the adapter's exit class, not
// as an internal failure (WRK-048).
func (s *Session) seal(m protocol.Message) ([]byte, error) {
	_, line, err := s.sealer.SealAppend(s.answer[:0], m)
	return s.sealed(line, err)
}

// sealResult seals the result of an invoke, without allocating the message when the sealer
// has the path.
func (s *Session) sealResult(r protocol.ToolResult) ([]byte, error) {
	if s.results == nil {
		return s.seal(protocol.ResultMessage{Result: r})
	}
	return s.sealed(s.results.SealResultAppend(s.answer[:0], r))
}

// sealed keeps a sealed answer line for the next seal to reuse, or classifies the failure.
func (s *Session) sealed(line []byte, err error) ([]byte, error) {
	if errors.Is(err, protocol.ErrNonPortableNumber) {
		return nil, &Error{Kind: ErrProtocol, Stage: StageResult, Err: err}
	}
	if err != nil {
		return nil, &Error{Kind: ErrProtocol, Stage: StageSeal, Err: err}
	}
	s.answer = line
	return line, nil
}

func (s *Session) adapter(tool string) (Adapter, error) {
	a, ok := s.registry.Adapter(tool)
	if !ok {
		return nil, &Error{Kind: ErrMissingAdapter, Tool: tool}
	}
	return a, nil
}

// fenced returns a's fenced operations, when it has them: the runtime then gives it the
// session's fencing token with every durable call (STO-072), unless the faulty build
// withholds it.
func (s *Session) fenced(a Adapter) (FencedOperations, bool) {
	f, ok := a.(FencedOperations)
	if !ok || (s.hooks != nil && s.hooks.unfencedEffects()) {
		return nil, false
	}
	return f, true
}

// guard runs an adapter call and turns a panic into ErrAdapterPanicked.
func guard(tool string, call func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &Error{Kind: ErrAdapterPanicked, Tool: tool, Err: fmt.Errorf("panic: %v", r)}
		}
	}()
	return call()
}

// invoke is flow A (WRK-030, WRK-031).
func (s *Session) invoke(inv protocol.ToolInvocation) ([]byte, error) {
	authorized, err := s.authorizer.Authorize(inv)
	if err != nil {
		return nil, &Error{Kind: ErrProtocol, Stage: StageAuthorize, Err: err}
	}
	// The adapter gets the invocation as received; the token holds the same one unless the
	// faulty build authorized a stand-in.
	req, grant := inv, authorized.Grant()
	a, err := s.adapter(req.Tool)
	if err != nil {
		return nil, err
	}
	if a.InvocationSafety() == SafetyUndeclared {
		return nil, &Error{Kind: ErrInvocationSafetyNotDeclared, Tool: req.Tool}
	}
	var payload protocol.ToolPayload
	err = guard(req.Tool, func() (e error) {
		payload, e = a.Invoke(req, grant)
		return e
	})
	if err != nil {
		return nil, adapterFailure(req.Tool, err)
	}
	result, err := protocol.NewToolResult(req.SessionID, req.RequestID, payload)
	if err != nil {
		return nil, &Error{Kind: ErrProtocol, Stage: StageResult, Err: err}
	}
	if err := s.authorizer.ValidateResult(authorized, result); err != nil {
		return nil, &Error{Kind: ErrProtocol, Stage: StageResult, Err: err}
	}
	return s.sealResult(result)
}

func adapterFailure(tool string, err error) error {
	var e *Error
	if errors.As(err, &e) && e.Kind == ErrAdapterPanicked {
		return err
	}
	return &Error{Kind: ErrAdapter, Tool: tool, Err: err}
}

// flowA answers an invocation (flow A), which neither reads nor writes the journal (WRK-031);
// only the faulty build's invokeWritesJournal hook makes it write.
func (s *Session) flowA(ctx context.Context, inv protocol.ToolInvocation, store JournalPersister) ([]byte, error) {
	answer, err := s.invoke(inv)
	if err == nil && store != nil && s.hooks != nil && s.hooks.invokeWritesJournal() {
		if err := s.persist(ctx, store, s.journal.Clone()); err != nil {
			return nil, err
		}
	}
	return answer, err
}

// persist writes the journal; on failure it restores before and poisons (WRK-070, WRK-071).
func (s *Session) persist(ctx context.Context, store JournalPersister, before *journal.Journal) error {
	expected := s.revision
	actual, err := store.Persist(ctx, s.journal, expected, s.lease)
	if err != nil && s.hooks != nil && s.hooks.ignorePersistFailure() {
		return nil
	}
	poison := s.hooks == nil || s.hooks.poisonOnFailedWrite()
	if err != nil {
		s.journal, s.poisoned = before, poison
		return &Error{Kind: ErrJournal, Err: err}
	}
	if actual <= expected {
		s.journal, s.poisoned = before, poison
		return &Error{Kind: ErrInvalidJournalRevision, Expected: expected, Actual: actual}
	}
	s.revision = actual
	return nil
}

// durableRequest is what differs between flow B (dispatch) and flow C (compensation);
// runDurable is the flow they share.
type durableRequest struct {
	tool         string
	grant        protocol.CapabilityGrant
	compensation bool
	// admit admits the request into the in-memory journal.
	admit func() (journal.Admission, error)
	// pending is the refusal of an exact duplicate whose record is still pending.
	pending func() error
	// run calls the adapter.
	run func(Adapter) (protocol.OperationStatus, error)
	// observe records the adapter's status in the in-memory journal.
	observe func(protocol.OperationStatus) error
	// indeterminate builds the flow's indeterminate error from its cause.
	indeterminate func(cause error) error
	// duplicate is set by runDurable when the status comes from the journal (an exact
	// duplicate) rather than from the adapter.
	duplicate bool
}

// checksResult reports whether the answer to d is checked against the live grant; it always
// is, even for an exact duplicate answered from the journal (WRK-041), unless the faulty build
// leaves duplicates unchecked.
func (s *Session) checksResult(d *durableRequest) bool {
	return !d.duplicate || s.hooks == nil || !s.hooks.uncheckedDuplicate()
}

// runDurable runs the journaled part of a durable flow after authorization (WRK-042 to
// WRK-047, WRK-052): the contract check, journal admission, the pending record made durable,
// the adapter, the observed status made durable. An exact duplicate answers its recorded
// status without running the adapter, or is refused while that status is pending.
func (s *Session) runDurable(ctx context.Context, store JournalPersister, d *durableRequest) (protocol.OperationStatus, error) {
	a, err := s.adapter(d.tool)
	if err != nil {
		return protocol.OperationStatus{}, err
	}
	if a.DurableContract() == ContractUndeclared {
		return protocol.OperationStatus{}, &Error{Kind: ErrDurableOperationContractNotDeclared, Tool: d.tool}
	}
	before := s.journal.Clone()
	admission, err := d.admit()
	if err != nil {
		return protocol.OperationStatus{}, &Error{Kind: ErrProtocol, Stage: StageJournal, Err: err}
	}
	if admission.Kind == journal.Existing {
		d.duplicate = true
		if s.hooks != nil {
			if status, handled := s.hooks.duplicate(s, admission.State, d); handled {
				return status, nil
			}
		}
		if admission.State.State == protocol.StatePending {
			return protocol.OperationStatus{}, d.pending()
		}
		return admission.State, nil
	}
	if s.hooks != nil {
		if status, handled, err := s.hooks.journaledCall(ctx, s, store, before, d); handled {
			return status, err
		}
	}
	if err := s.persist(ctx, store, before); err != nil {
		return protocol.OperationStatus{}, err
	}
	var status protocol.OperationStatus
	err = guard(d.tool, func() (e error) {
		status, e = d.run(a)
		return e
	})
	if err != nil {
		return protocol.OperationStatus{}, d.adapterError(err)
	}
	pending := s.journal.Clone()
	if err := d.observe(status); err != nil {
		return protocol.OperationStatus{}, d.indeterminate(&Error{Kind: ErrProtocol, Stage: StageObserve, Err: err})
	}
	if err := s.persist(ctx, store, pending); err != nil {
		return protocol.OperationStatus{}, d.indeterminate(err)
	}
	return status, nil
}

// adapterError classifies an adapter failure of a durable call: an indeterminate adapter
// error makes the outcome indeterminate (WRK-046), any other is an adapter failure.
func (d *durableRequest) adapterError(err error) error {
	var we *Error
	if !errors.As(err, &we) && AdapterKindOf(err) == AdapterIndeterminate {
		return d.indeterminate(err)
	}
	return adapterFailure(d.tool, err)
}

// dispatch is flow B (WRK-040 to WRK-047).
func (s *Session) dispatch(ctx context.Context, in protocol.OperationDispatchRequest, store JournalPersister) ([]byte, error) {
	authorized, err := s.authorizer.AuthorizeOperation(in)
	if err != nil {
		return nil, &Error{Kind: ErrProtocol, Stage: StageAuthorize, Err: err}
	}
	req, grant := authorized.Request(), authorized.Grant()
	admit := func() (journal.Admission, error) { return s.journal.Admit(authorized) }
	if s.hooks != nil {
		admit = s.hooks.admitDispatch(s, authorized, admit)
	}
	d := &durableRequest{
		tool: req.Tool, grant: grant,
		admit: admit,
		pending: func() error {
			return &Error{Kind: ErrPendingOperation, OperationKey: req.OperationKey}
		},
		run: func(a Adapter) (protocol.OperationStatus, error) {
			if f, ok := s.fenced(a); ok {
				return f.DispatchFenced(req, grant, s.lease.Token())
			}
			return a.DispatchOperation(req, grant)
		},
		observe: func(st protocol.OperationStatus) error {
			_, err := s.journal.Observe(authorized, st)
			return err
		},
		indeterminate: func(cause error) error {
			return &Error{Kind: ErrIndeterminateOperation, OperationKey: req.OperationKey, Err: cause}
		},
	}
	status, err := s.runDurable(ctx, store, d)
	if err != nil {
		return nil, err
	}
	result, err := protocol.NewOperationReconcileResult(req.SessionID, req.RequestID, req.Tool, req.OperationKey, status)
	if err != nil {
		return nil, &Error{Kind: ErrProtocol, Stage: StageResult, Err: err}
	}
	if !s.checksResult(d) {
		return s.seal(protocol.OperationResultMessage{Result: result})
	}
	if err := s.authorizer.ValidateOperationResult(authorized, result); err != nil {
		return nil, &Error{Kind: ErrProtocol, Stage: StageResult, Err: err}
	}
	return s.seal(protocol.OperationResultMessage{Result: result})
}

// compensate is flow C (WRK-050 to WRK-052).
func (s *Session) compensate(ctx context.Context, in protocol.OperationCompensationRequest, store JournalPersister) ([]byte, error) {
	authorized, err := s.authorizer.AuthorizeCompensation(in)
	if err != nil {
		return nil, &Error{Kind: ErrProtocol, Stage: StageAuthorize, Err: err}
	}
	req, grant := authorized.Request(), authorized.Grant()
	admit := func() (journal.Admission, error) { return s.journal.AdmitCompensation(authorized) }
	if s.hooks != nil {
		admit = s.hooks.admitCompensation(s, authorized, admit)
	}
	status, err := s.runDurable(ctx, store, &durableRequest{
		tool: req.Tool, grant: grant, compensation: true,
		admit: admit,
		pending: func() error {
			return &Error{Kind: ErrPendingCompensation, OperationKey: req.OperationKey, CompensationKey: req.CompensationKey}
		},
		run: func(a Adapter) (protocol.OperationStatus, error) {
			if f, ok := s.fenced(a); ok {
				return f.CompensateFenced(req, grant, s.lease.Token())
			}
			return a.CompensateOperation(req, grant)
		},
		observe: func(st protocol.OperationStatus) error {
			_, err := s.journal.ObserveCompensation(authorized, st)
			return err
		},
		indeterminate: func(cause error) error {
			return &Error{Kind: ErrIndeterminateCompensation, OperationKey: req.OperationKey,
				CompensationKey: req.CompensationKey, Err: cause}
		},
	})
	if err != nil {
		return nil, err
	}
	// The answer repeats the binding as received; the token holds the same one unless the
	// faulty build authorized a stand-in.
	result, err := protocol.NewOperationCompensationResult(in.SessionID, in.RequestID, in.Binding(), status)
	if err != nil {
		return nil, &Error{Kind: ErrProtocol, Stage: StageResult, Err: err}
	}
	if err := s.authorizer.ValidateCompensationResult(authorized, result); err != nil {
		return nil, &Error{Kind: ErrProtocol, Stage: StageResult, Err: err}
	}
	return s.seal(protocol.CompensationResultMessage{Result: result})
}

// reserveReconciliation spends one reconciliation of tool, session budget first (WRK-061).
func (s *Session) reserveReconciliation(tool string) error {
	if s.recTotal >= s.limits.perSession {
		return &Error{Kind: ErrReconciliationSessionBudgetExhausted, Maximum: s.limits.perSession}
	}
	if s.recByTool[tool] >= s.limits.perTool {
		return &Error{Kind: ErrReconciliationBudgetExhausted, Tool: tool, Maximum: s.limits.perTool}
	}
	s.recByTool[tool]++
	s.recTotal++
	return nil
}

// reconcile is flow D (WRK-060 to WRK-063).
func (s *Session) reconcile(ctx context.Context, in protocol.OperationReconcileRequest, store JournalPersister) ([]byte, error) {
	authorized, err := s.authorizer.AuthorizeReconciliation(in)
	if err != nil {
		return nil, &Error{Kind: ErrProtocol, Stage: StageAuthorize, Err: err}
	}
	req, grant := authorized.Request(), authorized.Grant()
	if err := s.journal.ValidateReconciliation(authorized); err != nil {
		return nil, &Error{Kind: ErrProtocol, Stage: StageJournal, Err: err}
	}
	if err := s.reserveReconciliation(req.Tool); err != nil {
		return nil, err
	}
	a, err := s.adapter(req.Tool)
	if err != nil {
		return nil, err
	}
	var status protocol.OperationStatus
	err = guard(req.Tool, func() (e error) {
		if f, ok := s.fenced(a); ok {
			status, e = f.ReconcileFenced(req, grant, s.lease.Token())
			return e
		}
		status, e = a.ReconcileOperation(req, grant)
		return e
	})
	if err != nil {
		return nil, adapterFailure(req.Tool, err)
	}
	before := s.journal.Clone()
	if _, err := s.journal.ObserveReconciliation(authorized, status); err != nil {
		return nil, &Error{Kind: ErrProtocol, Stage: StageObserve, Err: err}
	}
	if err := s.persist(ctx, store, before); err != nil {
		return nil, err
	}
	result, err := protocol.NewOperationReconcileResult(req.SessionID, req.RequestID, req.Tool, req.OperationKey, status)
	if err != nil {
		return nil, &Error{Kind: ErrProtocol, Stage: StageResult, Err: err}
	}
	if err := s.authorizer.ValidateReconciliationResult(authorized, result); err != nil {
		return nil, &Error{Kind: ErrProtocol, Stage: StageResult, Err: err}
	}
	return s.seal(protocol.ReconciledOperationMessage{Result: result})
}
