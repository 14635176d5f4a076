package workflow

import (
	"context"

	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/ledger"
	"github.com/splashv5/conform/impl/protocol"
)

// Store is the durable home of the engine's ledger: one authenticated record, written by a
// fenced compare-and-swap that is fsynced before it returns, so a crash leaves the old or the
// new ledger and a stale writer fails. ledger.Store implements it.
type Store interface {
	// ReserveFence atomically reserves the next fencing token for the record.
	ReserveFence(ctx context.Context) (uint64, error)
	// Load returns the stored ledger validated against plan and its record revision; an
	// absent record gives an empty ledger and revision 0.
	Load(ctx context.Context, plan ledger.Plan) (*ledger.Ledger, uint64, error)
	// Persist writes l if the record is still at expectedRevision (0: absent), under fence,
	// and returns the new record revision.
	Persist(ctx context.Context, l *ledger.Ledger, expectedRevision, fence uint64) (uint64, error)
}

// Config assembles an engine.
type Config struct {
	// Runtime is the host capability runtime whose external operations the steps await.
	Runtime *host.Runtime
	// Plan is the trusted plan, rebuilt by the host (never read from the ledger).
	Plan ledger.Plan
	// Store holds the ledger.
	Store Store
	// MinimumRevision is the host's authenticated watermark of the ledger revision; a loaded
	// ledger below it is a rollback (StaleRevision). 0 accepts any.
	MinimumRevision uint64
}

// Phase is the engine's lifecycle phase.
type Phase uint8

// The engine phases.
const (
	// PhaseRunning: steps run and operations are dispatched.
	PhaseRunning Phase = iota + 1
	// PhaseRecovering: restored after a restart; only reconciliation and compensation run
	// until Resume.
	PhaseRecovering
	// PhaseFailed: the recovery policy failed the workflow.
	PhaseFailed
	// PhasePoisoned: a ledger write failed.
	PhasePoisoned
)

// String returns the phase name.
func (p Phase) String() string {
	switch p {
	case PhaseRunning:
		return "Running"
	case PhaseRecovering:
		return "Recovering"
	case PhaseFailed:
		return "Failed"
	case PhasePoisoned:
		return "Poisoned"
	}
	return "Phase(?)"
}

// StepStatus is the state of the current step.
type StepStatus uint8

// The step states.
const (
	// StepIdle: the step awaits nothing; it may start an operation or be approved.
	StepIdle StepStatus = iota + 1
	// StepSuspended: the step awaits its retained operation.
	StepSuspended
	// StepFailed: the retained operation's cancellation was acknowledged; the step failed.
	StepFailed
)

// String returns the status name.
func (s StepStatus) String() string {
	switch s {
	case StepIdle:
		return "Idle"
	case StepSuspended:
		return "Suspended"
	case StepFailed:
		return "Failed"
	}
	return "StepStatus(?)"
}

// Engine drives one workflow plan's durable external steps. It is not safe for concurrent use.
type Engine struct {
	rt        *host.Runtime
	plan      ledger.Plan
	store     Store
	ledger    *ledger.Ledger // always the last durable ledger
	record    uint64         // the store's record revision of ledger
	fence     uint64
	phase     Phase
	completed int
	step      StepStatus
	claimed   *ledger.ClaimedOperation // the retained durable operation
	ordinary  host.OperationID         // the retained ordinary operation (multiplexed worker)
	hasOrd    bool
}

func (c Config) validate() error {
	if c.Runtime == nil || c.Store == nil || len(c.Plan.Steps) == 0 {
		return newError(ErrInvalidConfig, "")
	}
	return nil
}

// New starts a fresh workflow execution: it reserves a fence, loads the ledger (which must be
// empty: a stored ledger means an earlier execution, to be continued with Restore) and runs
// from the plan's first step.
func New(ctx context.Context, cfg Config) (*Engine, error) {
	e, err := open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if len(e.ledger.Operations()) != 0 {
		return nil, newError(ErrRecovering, "the store holds an earlier execution")
	}
	e.phase = PhaseRunning
	return e, nil
}

// Restore rebuilds an engine after a restart (WFL-040): with the trusted plan and a fresh
// runtime from cfg, it reserves a new fence (fencing out the crashed writer), loads the ledger,
// validates it against the plan and the watermark, and enters PhaseRecovering. Nothing is
// skipped or resumed on the ledger's states: the host reconciles unsettled operations and then
// calls Resume with an explicit policy.
func Restore(ctx context.Context, cfg Config) (*Engine, error) {
	e, err := open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	e.phase = PhaseRecovering
	return e, nil
}

func open(ctx context.Context, cfg Config) (*Engine, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	fence, err := cfg.Store.ReserveFence(ctx)
	if err != nil {
		return nil, &Error{Kind: ErrLedgerWrite, Err: err}
	}
	l, rev, err := cfg.Store.Load(ctx, cfg.Plan)
	if err != nil {
		return nil, err
	}
	if err := cfg.Plan.ValidateLedgerAtOrAfter(l, cfg.MinimumRevision); err != nil {
		return nil, err
	}
	return &Engine{rt: cfg.Runtime, plan: cfg.Plan, store: cfg.Store, ledger: l, record: rev, fence: fence,
		step: StepIdle}, nil
}

// Phase returns the engine's phase.
func (e *Engine) Phase() Phase { return e.phase }

// CompletedSteps returns the number of steps the host has approved as complete.
func (e *Engine) CompletedSteps() int { return e.completed }

// CurrentStep returns the ID of the step that runs now, or "" when the plan is complete.
func (e *Engine) CurrentStep() string {
	if e.completed >= len(e.plan.Steps) {
		return ""
	}
	return e.plan.Steps[e.completed]
}

// Step returns the state of the current step.
func (e *Engine) Step() StepStatus { return e.step }

// Ledger returns a copy of the last durable ledger.
func (e *Engine) Ledger() *ledger.Ledger { return e.ledger.Clone() }

// RecordRevision returns the store's record revision of the durable ledger.
func (e *Engine) RecordRevision() uint64 { return e.record }

// Retained returns the durable operation the current step awaits, if any.
func (e *Engine) Retained() (*ledger.ClaimedOperation, bool) { return e.claimed, e.claimed != nil }

// usable refuses a poisoned engine, and unless recovery is allowed, a recovering or failed one.
func (e *Engine) usable(recovery bool) error {
	switch e.phase {
	case PhasePoisoned:
		return newError(ErrPoisoned, "")
	case PhaseFailed:
		return newError(ErrWorkflowFailed, "")
	case PhaseRecovering:
		if !recovery {
			return newError(ErrRecovering, "")
		}
	}
	return nil
}

// commit persists next, a changed copy of the ledger, and makes it the durable ledger. A
// failure poisons the engine and leaves the durable ledger as it was (WFL-002).
func (e *Engine) commit(ctx context.Context, next *ledger.Ledger) error {
	if next.Revision() == e.ledger.Revision() {
		return nil
	}
	rev, err := e.store.Persist(ctx, next, e.record, e.fence)
	if err != nil {
		e.phase = PhasePoisoned
		return &Error{Kind: ErrLedgerWrite, Err: err}
	}
	e.ledger, e.record = next, rev
	return nil
}

// Prepare binds the next queued external operation of the current step to its durable key,
// persists the ledger, and only then claims the operation and retains it as the step's
// suspension (WFL-001, WFL-002). The nonce is the host's durable, unique identity of this
// logical effect (for example a persisted run id and an operation ordinal), never the runtime's
// idempotency key. It returns nil when nothing is queued. When the ledger write fails nothing is
// claimed and the engine is poisoned.
func (e *Engine) Prepare(ctx context.Context, nonce []byte) (*ledger.ClaimedOperation, error) {
	if err := e.usable(false); err != nil {
		return nil, err
	}
	if err := e.stepReady(); err != nil {
		return nil, err
	}
	next := e.ledger.Clone()
	p, err := ledger.PrepareNextExternalOperation(e.rt, e.plan, e.completed, next, nonce)
	if err != nil || p == nil {
		return nil, err
	}
	if err := e.commit(ctx, next); err != nil {
		return nil, err
	}
	c, err := ledger.ClaimPreparedExternalOperation(e.rt, e.plan, e.completed, e.ledger, p)
	if err != nil {
		return nil, err
	}
	e.claimed, e.step = c, StepSuspended
	return c, nil
}

// stepReady refuses to start an operation while the step is suspended or failed, or after the
// last step.
func (e *Engine) stepReady() error {
	switch {
	case e.completed >= len(e.plan.Steps):
		return newError(ErrPlanComplete, "")
	case e.step == StepSuspended:
		return newError(ErrExecutionInProgress, e.CurrentStep())
	case e.step == StepFailed:
		return newError(ErrStepFailed, e.CurrentStep())
	}
	return nil
}

// SealDispatch seals the dispatch_operation request of the retained operation with the host
// authenticator of a worker session. The ledger record it names is already durable: the frame
// may be sent as soon as it is returned (WFL-003).
func (e *Engine) SealDispatch(requestID string, auth *protocol.Authenticator) (ledger.AuthenticatedDispatch, error) {
	if err := e.usable(false); err != nil {
		return ledger.AuthenticatedDispatch{}, err
	}
	if e.claimed == nil {
		return ledger.AuthenticatedDispatch{}, newError(ErrNoSuspendedExecution, "")
	}
	return ledger.PrepareClaimedDispatch(e.rt, e.plan, e.completed, e.ledger, e.claimed, requestID, auth)
}

// Resolution is what applying a worker's answer did.
type Resolution struct {
	// State is the operation's ledger state after the answer.
	State ledger.State
	// Settled is the runtime's settlement when the answer was terminal; the step's promise
	// resolved with it and the step is idle again.
	Settled *host.Settlement
}

// ApplyDispatchAnswer opens the worker's operation_result frame for the dispatched request,
// records the observation in a copy of the ledger, persists it, and only then resolves the
// runtime operation (WFL-004): running leaves the step suspended; a terminal state settles the
// promise and the step becomes idle. An authenticated succeeded does not complete or approve the
// step (WFL-005). When the write fails the promise is not resolved and the engine is poisoned.
func (e *Engine) ApplyDispatchAnswer(ctx context.Context, req protocol.OperationDispatchRequest, auth *protocol.Authenticator, frame protocol.Frame) (Resolution, error) {
	if err := e.retainedFor(req.OperationKey); err != nil {
		return Resolution{}, err
	}
	next := e.ledger.Clone()
	state, res, err := ledger.ApplyDispatchResult(e.plan, next, req, auth, frame)
	if err != nil {
		return Resolution{}, err
	}
	if err := e.commit(ctx, next); err != nil {
		return Resolution{}, err
	}
	rec, err := e.rt.ResolveOperationStatus(e.claimed.Invocation().ID, res.Status)
	if err != nil {
		return Resolution{State: state}, err
	}
	return e.resolved(state, rec), nil
}

// retainedFor refuses an unusable engine and an operation key that is not the retained one.
func (e *Engine) retainedFor(key string) error {
	if err := e.usable(false); err != nil {
		return err
	}
	if e.claimed == nil || e.claimed.OperationKey() != key {
		return newError(ErrBindingMismatch, key)
	}
	return nil
}

// resolved reports the runtime's answer for the retained operation; a terminal one settled its
// promise, so the step no longer awaits it.
func (e *Engine) resolved(state ledger.State, rec host.Reconciliation) Resolution {
	if rec.Running {
		return Resolution{State: state}
	}
	s := rec.Settlement
	e.claimed, e.step = nil, StepIdle
	return Resolution{State: state, Settled: &s}
}

// SealRetainedReconciliation seals a reconcile_operation request for the retained operation
// under its persisted ledger key, for a fresh worker session after a dispatch whose answer was
// lost (WFL-007). The claim is revalidated as ledger.PrepareClaimedReconciliation does.
func (e *Engine) SealRetainedReconciliation(requestID string, auth *protocol.Authenticator) (host.AuthenticatedReconciliation, error) {
	if err := e.usable(false); err != nil {
		return host.AuthenticatedReconciliation{}, err
	}
	if e.claimed == nil {
		return host.AuthenticatedReconciliation{}, newError(ErrNoSuspendedExecution, "")
	}
	return ledger.PrepareClaimedReconciliation(e.rt, e.plan, e.completed, e.ledger, e.claimed, requestID, auth)
}

// ApplyRetainedReconciliation opens the worker's reconciled_operation frame for the retained
// operation, records the observation in a copy of the ledger, persists it and only then resolves
// the runtime operation, exactly as ApplyDispatchAnswer does for a dispatch (WFL-007).
func (e *Engine) ApplyRetainedReconciliation(ctx context.Context, req protocol.OperationReconcileRequest, auth *protocol.Authenticator, frame protocol.Frame) (Resolution, error) {
	if err := e.retainedFor(req.OperationKey); err != nil {
		return Resolution{}, err
	}
	next := e.ledger.Clone()
	state, rec, err := ledger.ApplyClaimedReconciliation(e.rt, e.plan, e.completed, next, e.claimed, req, auth, frame,
		func(l *ledger.Ledger) error { return e.commit(ctx, l) })
	if err != nil {
		return Resolution{State: state}, err
	}
	return e.resolved(state, rec), nil
}

// ApproveStep is the host's explicit approval that stepID, the current step, is complete, after
// it validated whatever the step produced (WFL-005). Only then does the engine move to the next
// step. Errors: the engine's phase; ErrStepMismatch; ErrExecutionInProgress while the step
// awaits an operation; ErrStepFailed; ErrPlanComplete.
func (e *Engine) ApproveStep(stepID string) error {
	if err := e.usable(false); err != nil {
		return err
	}
	if err := e.stepReady(); err != nil {
		return err
	}
	if stepID != e.CurrentStep() {
		return newError(ErrStepMismatch, stepID)
	}
	e.completed++
	return nil
}
