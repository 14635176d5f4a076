package workflow

import (
	"strconv"

	"github.com/splashv5/conform/impl/errkind"
	"github.com/splashv5/conform/impl/ledger"
)

// ErrorKind names one rule of the step engine. It is an error, so a kind is a valid
// errors.Is target. Where the reference has a variant for the rule, String returns its name.
type ErrorKind = errkind.Kind[kinds]

// kinds is the space of the step engine's error kinds.
type kinds struct{}

// Table describes the step engine's error kinds.
func (kinds) Table() *errkind.Table { return &kindTable }

// The step engine's error kinds.
const (
	// ErrPoisoned: an earlier ledger write failed; restore a fresh engine from the store.
	ErrPoisoned ErrorKind = iota + 1
	// ErrLedgerWrite: persisting the ledger failed (Err holds the store's error). The engine
	// is poisoned and nothing that needed the write happened.
	ErrLedgerWrite
	// ErrExecutionInProgress: the current step is suspended on an operation.
	ErrExecutionInProgress
	// ErrNoSuspendedExecution: no operation is retained for the current step.
	ErrNoSuspendedExecution
	// ErrStepFailed: the current step failed (an acknowledged cancellation); the host must
	// decide how the workflow goes on.
	ErrStepFailed
	// ErrStepMismatch: the approval names another step than the current one.
	ErrStepMismatch
	// ErrPlanComplete: every step of the plan has been approved.
	ErrPlanComplete
	// ErrApprovalMismatch: the compensation approval is used, from another engine, or bound
	// to another ledger revision, operation, compensation, tenant, grant or session.
	ErrApprovalMismatch
	// ErrCompensationTargetRequired: a compensation target without both verifiers.
	ErrCompensationTargetRequired
	// ErrBindingMismatch: the worker event or cancellation names another operation than the
	// retained one.
	ErrBindingMismatch
	// ErrRecovering: the engine was restored and waits for Resume.
	ErrRecovering
	// ErrRecoveryPolicyRequired: Resume without an explicit decision for every operation.
	ErrRecoveryPolicyRequired
	// ErrUnreconciledOperation: Resume would continue past an operation that is still pending
	// or running in the ledger.
	ErrUnreconciledOperation
	// ErrWorkflowFailed: the recovery policy failed the workflow.
	ErrWorkflowFailed
	// ErrWorker: the supervised worker session failed (Err holds its error).
	ErrWorker
	// ErrInvalidConfig: the engine's configuration is incomplete.
	ErrInvalidConfig
	// ErrOperationObserved: a redispatch of an operation that a worker has already observed
	// (its ledger state is not pending), or that has a compensation. A worker that refuses to
	// reconcile such an operation has lost a key its journal held (WFL-044); the reference
	// has no variant for it.
	ErrOperationObserved
)

var kindTable = errkind.Table{Type: "ErrorKind", Prefix: "workflow: ", Kinds: []errkind.Entry{
	ErrPoisoned:                   {Name: "Poisoned"},
	ErrLedgerWrite:                {Name: "LedgerWrite"},
	ErrExecutionInProgress:        {Name: "ExecutionInProgress"},
	ErrNoSuspendedExecution:       {Name: "NoSuspendedExecution"},
	ErrStepFailed:                 {Name: "StepFailed"},
	ErrStepMismatch:               {Name: "StepMismatch"},
	ErrPlanComplete:               {Name: "PlanComplete"},
	ErrApprovalMismatch:           {Name: "ApprovalMismatch"},
	ErrCompensationTargetRequired: {Name: "CompensationTargetRequired"},
	ErrBindingMismatch:            {Name: "BindingMismatch"},
	ErrRecovering:                 {Name: "Recovering"},
	ErrRecoveryPolicyRequired:     {Name: "RecoveryPolicyRequired"},
	ErrUnreconciledOperation:      {Name: "UnreconciledOperation"},
	ErrWorkflowFailed:             {Name: "WorkflowFailed"},
	ErrWorker:                     {Name: "Worker"},
	ErrInvalidConfig:              {Name: "InvalidConfig"},
	ErrOperationObserved:          {Name: "OperationObserved"},
}}

// Error is a step engine refusal. Value names the step or operation key concerned; Err wraps
// the store's, the runtime's or the worker session's error. Ledger rules are reported as the
// ledger's *ledger.Error instead.
type Error struct {
	errkind.Kind[kinds]
	Value string
	Err   error
}

func newError(kind ErrorKind, value string) *Error { return &Error{Kind: kind, Value: value} }

// Error describes the refusal.
func (e *Error) Error() string {
	msg := e.Kind.Error()
	if e.Value != "" {
		msg += ": " + strconv.Quote(e.Value)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the wrapped error.
func (e *Error) Unwrap() error { return e.Err }

// ledgerErr returns a ledger rule refusal with the reference's variant.
func ledgerErr(kind ledger.ErrorKind, value string) error {
	return &ledger.Error{Kind: kind, Value: value}
}
