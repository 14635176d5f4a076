package workflow

import (
	"strconv"

	"github.com/splashv5/conform/impl/errkind"
)

// ErrorKind names one rule of the step engine.
type ErrorKind = errkind.Kind[kinds]

type kinds struct{}

// Table describes the step engine's error kinds.
func (kinds) Table() *errkind.Table { return &kindTable }

// The step engine's error kinds. Each kind's meaning is its entry's Doc in kindTable.
const (
	ErrPoisoned ErrorKind = iota + 1
	ErrLedgerWrite
	ErrExecutionInProgress
	ErrNoSuspendedExecution
	ErrStepFailed
	ErrStepMismatch
	ErrPlanComplete
	ErrApprovalMismatch
	ErrCompensationTargetRequired
	ErrBindingMismatch
	ErrRecovering
	ErrRecoveryPolicyRequired
	ErrUnreconciledOperation
	ErrWorkflowFailed
	ErrWorker
	ErrInvalidConfig
	ErrOperationObserved
)

var kindTable = errkind.Table{Type: "ErrorKind", Prefix: "workflow: ", Kinds: []errkind.Entry{
	ErrPoisoned:                   {Name: "Poisoned", Doc: "an earlier ledger write failed; restore a fresh engine from the store"},
	ErrLedgerWrite:                {Name: "LedgerWrite", Doc: "persisting the ledger failed (Err holds the store's error); poisons the engine, and nothing that needed the write happened"},
	ErrExecutionInProgress:        {Name: "ExecutionInProgress", Doc: "the current step is suspended on an operation"},
	ErrNoSuspendedExecution:       {Name: "NoSuspendedExecution", Doc: "no operation is retained for the current step"},
	ErrStepFailed:                 {Name: "StepFailed", Doc: "the current step failed (an acknowledged cancellation); the host decides how the workflow goes on"},
	ErrStepMismatch:               {Name: "StepMismatch", Doc: "the approval names another step than the current one"},
	ErrPlanComplete:               {Name: "PlanComplete", Doc: "every step of the plan has been approved"},
	ErrApprovalMismatch:           {Name: "ApprovalMismatch", Doc: "the compensation approval is used, from another engine, or bound to another ledger revision, operation, compensation, tenant, grant or session"},
	ErrCompensationTargetRequired: {Name: "CompensationTargetRequired", Doc: "a compensation target without both verifiers"},
	ErrBindingMismatch:            {Name: "BindingMismatch", Doc: "the worker event or cancellation names another operation than the retained one"},
	ErrRecovering:                 {Name: "Recovering", Doc: "the engine was restored and waits for Resume"},
	ErrRecoveryPolicyRequired:     {Name: "RecoveryPolicyRequired", Doc: "Resume without an explicit decision for every operation"},
	ErrUnreconciledOperation:      {Name: "UnreconciledOperation", Doc: "Resume would pass an operation still pending or running in the ledger"},
	ErrWorkflowFailed:             {Name: "WorkflowFailed", Doc: "the recovery policy failed the workflow"},
	ErrWorker:                     {Name: "Worker", Doc: "the supervised worker session failed (Err holds its error)"},
	ErrInvalidConfig:              {Name: "InvalidConfig", Doc: "the engine's configuration is incomplete"},
	ErrOperationObserved:          {Name: "OperationObserved", Doc: "a redispatch of an operation a worker already observed (not pending in the ledger) or that has a compensation; a worker refusing to reconcile it lost a key its journal held (WFL-044); the reference has no such variant"},
}}

// Error is a step engine refusal. Its Detail is the quoted step or operation key concerned; Err
// wraps the store's, the runtime's or the worker session's error. Ledger rules are reported as
// the ledger's *ledger.Error instead.
type Error = errkind.Error[kinds]

// newError returns a refusal of kind naming value ("" names nothing).
func newError(kind ErrorKind, value string) *Error {
	if value == "" {
		return &Error{Kind: kind}
	}
	return &Error{Kind: kind, Detail: strconv.Quote(value)}
}
