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
	// Faults injects test faults; nil injects nothing.
	Faults *Faults
}

// Session is an open worker session (chapter 13): a pure state machine that takes frame lines
// and returns answer lines. It is not safe for concurrent use.
type Session struct {
	auth       *protocol.Authenticator
	opener     frameOpener
	sealer     frameSealer
	authorizer sessionAuthorizer
	journal    *journal.Journal
	revision   uint64
	lease      Lease
	registry   *Registry
	limits     Limits
	recByTool  map[string]uint32
	recTotal   uint32
	poisoned   bool
	faults     *Faults
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
	opener, err := cfg.Faults.frameOpener(auth)
	if err != nil {
		return nil, err
	}
	sealer, err := cfg.Faults.frameSealer(auth)
	if err != nil {
		return nil, err
	}
	frame, err := opener.Open(line)
	if err != nil {
		return nil, protocolError(StageOpen, err)
	}
	opening, ok := frame.Message.(protocol.OpenSessionMessage)
	if !ok {
		return nil, &Error{Kind: ErrUnexpectedOpeningMessage, MessageType: string(frame.Message.Type())}
	}
	az, err := authorizer.New(opening.Manifest)
	if err != nil {
		return nil, protocolError(StageManifest, err)
	}
	manifest := az.Manifest()
	for _, g := range manifest.Grants {
		if !cfg.Registry.Contains(g.Tool) {
			return nil, &Error{Kind: ErrMissingAdapter, Tool: g.Tool}
		}
	}
	token, err := cfg.Faults.admission(cfg.Admission).Admit(ctx, manifest, cfg.Journal.Scope())
	if err != nil {
		return nil, &Error{Kind: ErrAdmission, Err: err}
	}
	if token == 0 {
		return nil, &Error{Kind: ErrInvalidJournalLease}
	}
	limits := cfg.Limits
	if limits == (Limits{}) {
		limits = DefaultLimits()
	}
	return &Session{
		auth:       auth,
		opener:     opener,
		sealer:     sealer,
		authorizer: cfg.Faults.sessionAuthorizer(az, cfg.Journal.Scope()),
		journal:    cfg.Journal,
		revision:   cfg.Revision,
		lease:      Lease{token},
		registry:   cfg.Registry,
		limits:     limits,
		recByTool:  map[string]uint32{},
		faults:     cfg.Faults,
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
// answer line (without a newline), or an error and no answer. store persists the journal in
// the durable flows.
func (s *Session) Handle(ctx context.Context, line []byte, store JournalPersister) ([]byte, error) {
	if s.poisoned {
		return nil, &Error{Kind: ErrSessionPoisoned}
	}
	frame, err := s.opener.Open(line)
	if err != nil {
		return nil, protocolError(StageOpen, err)
	}
	switch m := frame.Message.(type) {
	case protocol.InvokeMessage:
		return s.invoke(m.Invocation)
	case protocol.DispatchOperationMessage:
		return s.dispatch(ctx, m.Request, store)
	case protocol.CompensateOperationMessage:
		return s.compensate(ctx, m.Request, store)
	case protocol.ReconcileOperationMessage:
		return s.reconcile(ctx, m.Request, store)
	default:
		if s.faults.Has(FaultCancelInBaseline) {
			return s.cancelInBaseline(m)
		}
		return nil, &Error{Kind: ErrUnexpectedMessage, MessageType: string(m.Type())}
	}
}

// seal seals an answer. An output whose numbers the session may not send (ENC-037: not
// portable, and the peer has not proven that it keeps number text) is a result the adapter
// should not have produced: it is reported at StageResult, in the adapter's exit class, not
// as an internal failure (WRK-048).
func (s *Session) seal(m protocol.Message) ([]byte, error) {
	_, line, err := s.sealer.Seal(m)
	if errors.Is(err, protocol.ErrNonPortableNumber) {
		return nil, protocolError(StageResult, err)
	}
	if err != nil {
		return nil, protocolError(StageSeal, err)
	}
	return line, nil
}

func (s *Session) adapter(tool string) (Adapter, error) {
	a, ok := s.registry.Adapter(tool)
	if !ok {
		return nil, &Error{Kind: ErrMissingAdapter, Tool: tool}
	}
	return a, nil
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
		return nil, protocolError(StageAuthorize, err)
	}
	// The adapter gets the invocation as received; the token holds the same one unless a
	// fault authorized a stand-in.
	req, grant := inv, authorized.Grant()
	a, err := s.adapter(req.Tool)
	if err != nil {
		return nil, err
	}
	if a.InvocationSafety() == SafetyUndeclared && !s.faults.Has(FaultUndeclaredSafetyOK) {
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
		return nil, protocolError(StageResult, err)
	}
	if err := s.authorizer.ValidateResult(authorized, result); err != nil {
		return nil, protocolError(StageResult, err)
	}
	return s.seal(protocol.ResultMessage{Result: result})
}

func adapterFailure(tool string, err error) error {
	var e *Error
	if errors.As(err, &e) && e.Kind == ErrAdapterPanicked {
		return err
	}
	return &Error{Kind: ErrAdapter, Tool: tool, Err: err}
}

// persist writes the journal; on failure it restores before and poisons (WRK-070, WRK-071).
func (s *Session) persist(ctx context.Context, store JournalPersister, before *journal.Journal) error {
	expected, lease := s.revision, s.lease
	if s.faults.Has(FaultIgnoreFence) {
		expected, lease = s.unfencedTarget(ctx, store)
	}
	actual, err := store.Persist(ctx, s.journal, expected, lease)
	if err != nil {
		s.journal, s.poisoned = before, true
		return &Error{Kind: ErrJournal, Err: err}
	}
	if actual <= expected {
		s.journal, s.poisoned = before, true
		return &Error{Kind: ErrInvalidJournalRevision, Expected: expected, Actual: actual}
	}
	s.revision = actual
	return nil
}

// durableOutcome runs a durable adapter call between the two persistence points shared by
// flows B and C (WRK-042 to WRK-046, WRK-052). indeterminate builds the flow's indeterminate
// error from a cause.
func (s *Session) durableOutcome(
	ctx context.Context, store JournalPersister, tool string, before *journal.Journal,
	run func() (protocol.OperationStatus, error),
	observe func(protocol.OperationStatus) error,
	indeterminate func(cause error) error,
) (protocol.OperationStatus, error) {
	if s.faults.Has(FaultPersistAfterEffect) {
		return s.durableOutcomeEffectFirst(ctx, store, tool, before, run, observe, indeterminate)
	}
	if err := s.persist(ctx, store, before); err != nil {
		return protocol.OperationStatus{}, err
	}
	s.faults.at(PointAdmissionPersisted)
	var status protocol.OperationStatus
	err := guard(tool, func() (e error) {
		status, e = run()
		return e
	})
	if err != nil {
		var we *Error
		if !errors.As(err, &we) && AdapterKindOf(err) == AdapterIndeterminate {
			return protocol.OperationStatus{}, indeterminate(err)
		}
		return protocol.OperationStatus{}, adapterFailure(tool, err)
	}
	s.faults.at(PointAdapterReturned)
	pending := s.journal.Clone()
	if err := observe(status); err != nil {
		return protocol.OperationStatus{}, indeterminate(protocolError(StageObserve, err))
	}
	if err := s.persist(ctx, store, pending); err != nil {
		return protocol.OperationStatus{}, indeterminate(err)
	}
	s.faults.at(PointObservationPersisted)
	return status, nil
}

// dispatch is flow B (WRK-040 to WRK-047).
func (s *Session) dispatch(ctx context.Context, in protocol.OperationDispatchRequest, store JournalPersister) ([]byte, error) {
	authorized, err := s.authorizer.AuthorizeOperation(in)
	if err != nil {
		return nil, protocolError(StageAuthorize, err)
	}
	req, grant := authorized.Request(), authorized.Grant()
	a, err := s.adapter(req.Tool)
	if err != nil {
		return nil, err
	}
	if a.DurableContract() == ContractUndeclared {
		return nil, &Error{Kind: ErrDurableOperationContractNotDeclared, Tool: req.Tool}
	}
	before := s.journal.Clone()
	admission, err := s.journal.Admit(authorized)
	if err != nil {
		return nil, protocolError(StageJournal, err)
	}
	var status protocol.OperationStatus
	switch admission.Kind {
	case journal.Existing:
		if admission.State.State == protocol.StatePending && !s.faults.Has(FaultPendingAsSuccess) {
			return nil, &Error{Kind: ErrPendingOperation, OperationKey: req.OperationKey}
		}
		status = admission.State
		if s.faults != nil {
			status = s.faultyDuplicate(status, req.Tool, grant, FaultRerunDuplicateDispatch,
				func() (protocol.OperationStatus, error) { return a.DispatchOperation(req, grant) })
		}
	default:
		status, err = s.durableOutcome(ctx, store, req.Tool, before,
			func() (protocol.OperationStatus, error) { return a.DispatchOperation(req, grant) },
			func(st protocol.OperationStatus) error {
				_, err := s.journal.Observe(authorized, st)
				return err
			},
			func(cause error) error {
				return &Error{Kind: ErrIndeterminateOperation, OperationKey: req.OperationKey, Err: cause}
			})
		if err != nil {
			return nil, err
		}
	}
	result, err := protocol.NewOperationReconcileResult(req.SessionID, req.RequestID, req.Tool, req.OperationKey, status)
	if err != nil {
		return nil, protocolError(StageResult, err)
	}
	if err := s.authorizer.ValidateOperationResult(authorized, result); err != nil {
		return nil, protocolError(StageResult, err)
	}
	return s.seal(protocol.OperationResultMessage{Result: result})
}

// compensate is flow C (WRK-050 to WRK-052).
func (s *Session) compensate(ctx context.Context, in protocol.OperationCompensationRequest, store JournalPersister) ([]byte, error) {
	authorized, err := s.authorizer.AuthorizeCompensation(in)
	if err != nil {
		return nil, protocolError(StageAuthorize, err)
	}
	req, grant := authorized.Request(), authorized.Grant()
	a, err := s.adapter(req.Tool)
	if err != nil {
		return nil, err
	}
	if a.DurableContract() == ContractUndeclared {
		return nil, &Error{Kind: ErrDurableOperationContractNotDeclared, Tool: req.Tool}
	}
	before := s.journal.Clone()
	admission, err := s.journal.AdmitCompensation(authorized)
	if err != nil && s.faults.Has(FaultAcceptSecondCompensationKey) {
		admission, err = s.replaceCompensation(authorized, err)
	}
	if err != nil {
		return nil, protocolError(StageJournal, err)
	}
	var status protocol.OperationStatus
	switch admission.Kind {
	case journal.Existing:
		if admission.State.State == protocol.StatePending && !s.faults.Has(FaultPendingAsSuccess) {
			return nil, &Error{Kind: ErrPendingCompensation, OperationKey: req.OperationKey, CompensationKey: req.CompensationKey}
		}
		status = admission.State
		if s.faults != nil {
			status = s.faultyDuplicate(status, req.Tool, grant, FaultRerunDuplicateCompensation,
				func() (protocol.OperationStatus, error) { return a.CompensateOperation(req, grant) })
		}
	default:
		status, err = s.durableOutcome(ctx, store, req.Tool, before,
			func() (protocol.OperationStatus, error) { return a.CompensateOperation(req, grant) },
			func(st protocol.OperationStatus) error {
				_, err := s.journal.ObserveCompensation(authorized, st)
				return err
			},
			func(cause error) error {
				return &Error{Kind: ErrIndeterminateCompensation, OperationKey: req.OperationKey,
					CompensationKey: req.CompensationKey, Err: cause}
			})
		if err != nil {
			return nil, err
		}
	}
	// The answer repeats the binding as received; the token holds the same one unless a fault
	// authorized a stand-in.
	result, err := protocol.NewOperationCompensationResult(in.SessionID, in.RequestID, in.Binding(), status)
	if err != nil {
		return nil, protocolError(StageResult, err)
	}
	if err := s.authorizer.ValidateCompensationResult(authorized, result); err != nil {
		return nil, protocolError(StageResult, err)
	}
	return s.seal(protocol.CompensationResultMessage{Result: result})
}

// reserveReconciliation spends one reconciliation of tool, session budget first (WRK-061).
func (s *Session) reserveReconciliation(tool string) error {
	if s.recTotal >= s.limits.perSession && !s.faults.Has(FaultNoReconcileBudget) {
		return &Error{Kind: ErrReconciliationSessionBudgetExhausted, Maximum: s.limits.perSession}
	}
	if s.recByTool[tool] >= s.limits.perTool && !s.faults.Has(FaultNoReconcileBudget) {
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
		return nil, protocolError(StageAuthorize, err)
	}
	req, grant := authorized.Request(), authorized.Grant()
	if err := s.journal.ValidateReconciliation(authorized); err != nil {
		return nil, protocolError(StageJournal, err)
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
		status, e = a.ReconcileOperation(req, grant)
		return e
	})
	if err != nil {
		return nil, adapterFailure(req.Tool, err)
	}
	before := s.journal.Clone()
	if _, err := s.journal.ObserveReconciliation(authorized, status); err != nil {
		return nil, protocolError(StageObserve, err)
	}
	if err := s.persist(ctx, store, before); err != nil {
		return nil, err
	}
	s.faults.at(PointReconciliationPersisted)
	result, err := protocol.NewOperationReconcileResult(req.SessionID, req.RequestID, req.Tool, req.OperationKey, status)
	if err != nil {
		return nil, protocolError(StageResult, err)
	}
	if err := s.authorizer.ValidateReconciliationResult(authorized, result); err != nil {
		return nil, protocolError(StageResult, err)
	}
	return s.seal(protocol.ReconciledOperationMessage{Result: result})
}
