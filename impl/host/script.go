package host

import (
	"errors"

	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/script"
)

// ScriptSession runs scripts against a Runtime: it is the script evaluator's host (tool.call,
// tool.call_json, tool.start, tool.start_json and promise.await reach the runtime through it)
// and it resumes the suspended evaluation when an awaited operation settles.
//
// Promises created by an evaluation are released (ReleasePromise) when the evaluation ends or is
// discarded: the script can no longer reference them. They are deleted or orphaned by the next
// CollectGarbage.
type ScriptSession struct {
	rt     *Runtime
	m      *script.Machine
	issued []OperationID
	leased bool
}

// NewScriptSession returns a session that evaluates scripts with cfg against rt.
func NewScriptSession(rt *Runtime, cfg script.Config) (*ScriptSession, error) {
	if rt == nil {
		return nil, errors.New("host: nil runtime")
	}
	s := &ScriptSession{rt: rt}
	m, err := script.New(scriptHost{s}, cfg)
	if err != nil {
		return nil, err
	}
	s.m = m
	return s, nil
}

// Runtime returns the session's runtime.
func (s *ScriptSession) Runtime() *Runtime { return s.rt }

// Machine returns the session's evaluator.
func (s *ScriptSession) Machine() *script.Machine { return s.m }

// Eval starts evaluating source.
func (s *ScriptSession) Eval(source string) (script.Evaluation, error) {
	ev, err := s.m.Eval(source)
	s.afterRun(ev, err)
	return ev, err
}

// EvalWithLease activates l for the evaluation of source; the lease stays active while the
// evaluation is suspended and is cleared when it ends.
func (s *ScriptSession) EvalWithLease(source string, l *Lease) (script.Evaluation, error) {
	if _, suspended := s.m.Suspended(); suspended {
		return script.Evaluation{}, script.ErrEvaluationInProgress
	}
	if err := s.rt.ActivateLease(l); err != nil {
		return script.Evaluation{}, err
	}
	s.leased = true
	return s.Eval(source)
}

// Discard abandons a suspended evaluation and releases its promises.
func (s *ScriptSession) Discard() {
	s.m.Discard()
	s.finish()
}

func (s *ScriptSession) afterRun(ev script.Evaluation, err error) {
	if err != nil && errors.Is(err, script.ErrEvaluationInProgress) {
		return
	}
	if err != nil || !ev.Suspended {
		s.finish()
	}
}

func (s *ScriptSession) finish() {
	for _, id := range s.issued {
		s.rt.ReleasePromise(id)
	}
	s.issued = s.issued[:0]
	if s.leased {
		s.rt.DeactivateLease()
		s.leased = false
	}
}

// Resume hands a settlement to the suspended evaluation when it was awaited, and returns the
// resumed evaluation (nil when nothing waited).
func (s *ScriptSession) Resume(st Settlement) (*script.Evaluation, error) {
	if !st.Awaited {
		return nil, nil
	}
	out := script.Outcome{Output: st.Output}
	if st.Err != nil {
		out = script.Outcome{Err: st.Err}
	}
	ev, err := s.m.Resume(script.PromiseID(st.ID), out)
	if err != nil {
		s.finish()
		return nil, &ExternalError{Kind: ErrResume, ID: st.ID, Err: err}
	}
	s.afterRun(ev, nil)
	return &ev, nil
}

func (s *ScriptSession) resumeAfter(st Settlement, err error) (*script.Evaluation, error) {
	if err != nil {
		return nil, err
	}
	return s.Resume(st)
}

// CompleteExternal is Runtime.CompleteExternal followed by Resume.
func (s *ScriptSession) CompleteExternal(id OperationID, res Result) (*script.Evaluation, error) {
	return s.resumeAfter(s.rt.CompleteExternal(id, res))
}

// ConfirmExternalCancellation is Runtime.ConfirmExternalCancellation followed by Resume.
func (s *ScriptSession) ConfirmExternalCancellation(id OperationID) (*script.Evaluation, error) {
	return s.resumeAfter(s.rt.ConfirmExternalCancellation(id))
}

// CancelExternal is Runtime.CancelExternal followed by Resume.
func (s *ScriptSession) CancelExternal(id OperationID) (*script.Evaluation, error) {
	return s.resumeAfter(s.rt.CancelExternal(id))
}

// ReconcileExternal is Runtime.ReconcileExternal followed by Resume of a terminal result. Running
// reports a worker that is still running (nothing changed).
func (s *ScriptSession) ReconcileExternal(id OperationID, req protocol.OperationReconcileRequest, res protocol.OperationReconcileResult) (running bool, ev *script.Evaluation, err error) {
	return s.resumeReconciliation(s.rt.ReconcileExternal(id, req, res))
}

// ReconcileAuthenticated is Runtime.ReconcileAuthenticated followed by Resume of a terminal
// result.
func (s *ScriptSession) ReconcileAuthenticated(id OperationID, req protocol.OperationReconcileRequest, auth *protocol.Authenticator, frame protocol.Frame) (running bool, ev *script.Evaluation, err error) {
	return s.resumeReconciliation(s.rt.ReconcileAuthenticated(id, req, auth, frame))
}

func (s *ScriptSession) resumeReconciliation(rec Reconciliation, err error) (bool, *script.Evaluation, error) {
	if err != nil || rec.Running {
		return rec.Running, nil, err
	}
	ev, err := s.Resume(rec.Settlement)
	return false, ev, err
}

// PumpUpTo is Runtime.PumpUpTo followed by Resume of each awaited settlement. It returns the
// number of operations settled and the evaluations resumed; a resume failure stops the batch
// (operations already settled stay settled).
func (s *ScriptSession) PumpUpTo(n int) (int, []script.Evaluation, error) {
	return s.resumeAll(s.rt.PumpUpTo(n))
}

// ExpireTimedOutUpTo is Runtime.ExpireTimedOutUpTo followed by Resume of each awaited settlement.
func (s *ScriptSession) ExpireTimedOutUpTo(n int) (int, []script.Evaluation, error) {
	return s.resumeAll(s.rt.ExpireTimedOutUpTo(n))
}

func (s *ScriptSession) resumeAll(sts []Settlement) (int, []script.Evaluation, error) {
	var resumed []script.Evaluation
	for _, st := range sts {
		ev, err := s.Resume(st)
		if err != nil {
			return len(sts), resumed, err
		}
		if ev != nil {
			resumed = append(resumed, *ev)
		}
	}
	return len(sts), resumed, nil
}

// scriptHost is the evaluator's view of the runtime.
type scriptHost struct{ s *ScriptSession }

func (h scriptHost) convert(err error) error {
	var te *ToolError
	if errors.As(err, &te) {
		return te
	}
	switch {
	case errors.Is(err, ErrUnknownPromise):
		return script.ErrUnknownPromise
	case errors.Is(err, ErrPromiseAlreadyAwaited):
		return script.ErrPromiseAlreadyAwaited
	}
	return err
}

// CallTool performs tool.call and tool.call_json.
func (h scriptHost) CallTool(name, input string, format script.Format) (string, error) {
	var out string
	var err error
	if format == script.FormatJSON {
		out, err = h.s.rt.CallJSON(name, input)
	} else {
		out, err = h.s.rt.Call(name, input)
	}
	if err != nil {
		return "", h.convert(err)
	}
	return out, nil
}

// StartTool performs tool.start and tool.start_json.
func (h scriptHost) StartTool(name, input string, format script.Format) (script.PromiseID, error) {
	var id OperationID
	var err error
	if format == script.FormatJSON {
		id, err = h.s.rt.StartJSON(name, input)
	} else {
		id, err = h.s.rt.Start(name, input)
	}
	if err != nil {
		return 0, h.convert(err)
	}
	h.s.issued = append(h.s.issued, id)
	return script.PromiseID(id), nil
}

// AwaitTool performs promise.await().
func (h scriptHost) AwaitTool(id script.PromiseID) (string, bool, error) {
	out, ready, err := h.s.rt.Await(OperationID(id))
	if err != nil {
		return "", ready, h.convert(err)
	}
	return out, ready, nil
}
