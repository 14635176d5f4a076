package model

// This file models the host's step engine for durable external steps (spec chapter 23): the
// durable ledger as the store holds it, the prepare → persist → claim order, the answer that is
// persisted before its promise resolves, the host's explicit step approval, compensation intent,
// one-use session-bound approval and sealing, ledger write failures that poison the engine,
// restart into recovery, reconciliation and the explicit recovery policy. Outcomes are the
// reference's (or the chapter's) variant names; "" is success.

// WorkflowOp is one durable ledger record: its step, the worker mode of its input ("succeed",
// "fail" or "running"), its state and its compensation state ("" without an intent).
type WorkflowOp struct {
	Step         int
	Mode         string
	State        string
	Compensation string
}

// WorkflowApproval is one issued compensation approval.
type WorkflowApproval struct {
	Op, Revision, Session int
	Used                  bool
}

// Workflow is the model state.
type Workflow struct {
	Steps     int
	Phase     string // "running", "recovering", "failed", "poisoned"
	Completed int
	Step      string // "idle", "suspended", "failed"
	Queue     []string
	Ops       []WorkflowOp
	Retained  int // index into Ops, -1 for none
	Approvals []WorkflowApproval
	Revision  int
	Session   int
}

// NewWorkflow returns a fresh execution of a plan with steps steps.
func NewWorkflow(steps int) *Workflow {
	return &Workflow{Steps: steps, Phase: "running", Step: "idle", Retained: -1, Session: 1}
}

func (w *Workflow) usable(recovery bool) string {
	switch w.Phase {
	case "poisoned":
		return "Poisoned"
	case "failed":
		return "WorkflowFailed"
	case "recovering":
		if !recovery {
			return "Recovering"
		}
	}
	return ""
}

func (w *Workflow) stepReady() string {
	switch {
	case w.Completed >= w.Steps:
		return "PlanComplete"
	case w.Step == "suspended":
		return "ExecutionInProgress"
	case w.Step == "failed":
		return "StepFailed"
	}
	return ""
}

// write is a ledger write: a failure poisons and changes nothing durable.
func (w *Workflow) write(fail bool) string {
	if fail {
		w.Phase = "poisoned"
		return "LedgerWrite"
	}
	w.Revision++
	return ""
}

func ledgerTerminal(s string) bool { return s == "succeeded" || s == "failed" || s == "cancelled" }

// ledgerAccepts is the ledger's transition rule: pending and running accept any observation, a
// terminal state only itself.
func ledgerAccepts(current, observed string) bool {
	if current == "pending" || current == "running" {
		return observed != "pending"
	}
	return current == observed
}

// Start queues one external call whose worker answers in mode.
func (w *Workflow) Start(mode string) { w.Queue = append(w.Queue, mode) }

// Prepare prepares, persists and claims the next queued call. It returns the outcome and
// whether an operation was claimed.
func (w *Workflow) Prepare(fail bool) (string, bool) {
	if e := w.usable(false); e != "" {
		return e, false
	}
	if e := w.stepReady(); e != "" {
		return e, false
	}
	if len(w.Queue) == 0 {
		return "", false
	}
	if e := w.write(fail); e != "" {
		return e, false
	}
	w.Ops = append(w.Ops, WorkflowOp{Step: w.Completed, Mode: w.Queue[0], State: "pending"})
	w.Queue = w.Queue[1:]
	w.Retained, w.Step = len(w.Ops)-1, "suspended"
	return "", true
}

// Dispatch sends the retained operation and applies the worker's answer.
func (w *Workflow) Dispatch(fail bool) string {
	if e := w.usable(false); e != "" {
		return e
	}
	if w.Retained < 0 {
		return "NoSuspendedExecution"
	}
	op := &w.Ops[w.Retained]
	if ledgerTerminal(op.State) {
		// A reconciliation settled the record while it was retained: no frame is sealed for it.
		return "OperationAlreadyTerminal"
	}
	observed := map[string]string{"succeed": "succeeded", "fail": "failed", "running": "running"}[op.Mode]
	if !ledgerAccepts(op.State, observed) {
		return "InvalidStateTransition"
	}
	if observed != op.State {
		if e := w.write(fail); e != "" {
			return e
		}
		op.State = observed
	}
	if ledgerTerminal(observed) {
		w.Retained, w.Step = -1, "idle"
	}
	return ""
}

// ApproveStep approves the current step, or another one when current is false.
func (w *Workflow) ApproveStep(current bool) string {
	if e := w.usable(false); e != "" {
		return e
	}
	if e := w.stepReady(); e != "" {
		return e
	}
	if !current {
		return "StepMismatch"
	}
	w.Completed++
	return ""
}

// RecordCompensation records the intent of operation op.
func (w *Workflow) RecordCompensation(op int, fail, revoked bool) string {
	if e := w.usable(true); e != "" {
		return e
	}
	if revoked {
		return "CompensationGrantDenied"
	}
	if w.Ops[op].State != "succeeded" {
		return "CompensationRequiresSucceededOperation"
	}
	if w.Ops[op].Compensation != "" {
		return "CompensationAlreadyRecorded"
	}
	if e := w.write(fail); e != "" {
		return e
	}
	w.Ops[op].Compensation = "pending"
	return ""
}

// Approve issues an approval for the intent of op under the current session.
func (w *Workflow) Approve(op int, revoked bool) string {
	if e := w.usable(true); e != "" {
		return e
	}
	if revoked {
		return "CompensationGrantDenied"
	}
	if w.Ops[op].State != "succeeded" {
		return "CompensationRequiresSucceededOperation"
	}
	if w.Ops[op].Compensation == "" {
		return "UnknownCompensation"
	}
	w.Approvals = append(w.Approvals, WorkflowApproval{Op: op, Revision: w.Revision, Session: w.Session})
	return ""
}

// Seal spends approval a to seal the compensation of op under the current session.
func (w *Workflow) Seal(a, op int, revoked bool) string {
	if e := w.usable(true); e != "" {
		return e
	}
	if revoked {
		return "CompensationGrantDenied"
	}
	ap := &w.Approvals[a]
	if ap.Used {
		return "ApprovalMismatch"
	}
	ap.Used = true
	if ap.Revision != w.Revision || ap.Op != op || ap.Session != w.Session {
		return "ApprovalMismatch"
	}
	return ""
}

// CompensationAnswer applies the worker's succeeded answer to the sealed compensation of op.
func (w *Workflow) CompensationAnswer(op int, fail bool) string {
	if e := w.usable(true); e != "" {
		return e
	}
	c := &w.Ops[op].Compensation
	if *c == "succeeded" {
		return ""
	}
	if e := w.write(fail); e != "" {
		return e
	}
	*c = "succeeded"
	return ""
}

// LoseAnswer drops a worker answer; the host moves to a fresh worker session.
func (w *Workflow) LoseAnswer() { w.Session++ }

// Restart restores a fresh engine and runtime from the durable ledger, in recovery, and
// opens a fresh worker session. Approvals of the old engine are gone.
func (w *Workflow) Restart() {
	w.Phase, w.Completed, w.Step, w.Retained = "recovering", 0, "idle", -1
	w.Queue, w.Approvals = nil, nil
	w.Session++
}

// Reconcile applies an authenticated failed observation of op.
func (w *Workflow) Reconcile(op int, fail bool) string {
	if e := w.usable(true); e != "" {
		return e
	}
	o := &w.Ops[op]
	if !ledgerAccepts(o.State, "failed") {
		return "InvalidStateTransition"
	}
	if o.State != "failed" {
		if e := w.write(fail); e != "" {
			return e
		}
		o.State = "failed"
	}
	return ""
}

// Resume ends recovery with one decision ("none", "accept", "redispatch" or "fail") for every
// operation and the empty step prefix.
func (w *Workflow) Resume(decision string) string {
	if w.Phase != "recovering" {
		if e := w.usable(false); e != "" {
			return e
		}
		return "Recovering"
	}
	failed := false
	for _, op := range w.Ops {
		switch decision {
		case "accept":
			if !ledgerTerminal(op.State) {
				return "UnreconciledOperation"
			}
		case "redispatch":
			if ledgerTerminal(op.State) {
				return "OperationAlreadyTerminal"
			}
		case "fail":
			failed = true
		default:
			return "RecoveryPolicyRequired"
		}
	}
	if failed {
		w.Phase = "failed"
		return "WorkflowFailed"
	}
	w.Phase, w.Completed, w.Step = "running", 0, "idle"
	return ""
}
