// Package profile implements the conformance adapter profile: a fixed set of test adapters
// with exactly specified behaviour that a worker registers in a test mode, so that a
// conformance runner can drive every worker flow and judge the outcome from the frames, the
// exit status and the effect log.
//
// The profile is a test fixture. Its durable tool "performs an effect" by appending a line to
// the effect log, and its reconciliation answers from that log.
package profile

import (
	"errors"
	"time"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/worker"
)

// Tool names of the profile (PRF-001).
const (
	ToolTextEcho          = "conf.text.echo"
	ToolJSONEcho          = "conf.json.echo"
	ToolTextFail          = "conf.text.fail"
	ToolTextUndeclared    = "conf.text.undeclared"
	ToolDurableRecord     = "conf.durable.record"
	ToolSlowCancellable   = "conf.slow.cancellable"
	ToolSlowUncooperative = "conf.slow.uncooperative"
	ToolJSONTyped         = "conf.json.typed"
)

// Tools lists the profile's tools in the order of the profile chapter.
var Tools = [...]string{
	ToolTextEcho, ToolJSONEcho, ToolTextFail, ToolTextUndeclared, ToolDurableRecord,
	ToolSlowCancellable, ToolSlowUncooperative, ToolJSONTyped, ToolSecretSign,
}

// Formats gives the format a runner grants for each profile tool.
var Formats = map[string]protocol.EnvelopeFormat{
	ToolTextEcho:          protocol.FormatText,
	ToolJSONEcho:          protocol.FormatJSON,
	ToolTextFail:          protocol.FormatText,
	ToolTextUndeclared:    protocol.FormatText,
	ToolDurableRecord:     protocol.FormatJSON,
	ToolSlowCancellable:   protocol.FormatText,
	ToolSlowUncooperative: protocol.FormatText,
	ToolJSONTyped:         protocol.FormatJSON,
	ToolSecretSign:        protocol.FormatText,
}

// AbsenceMessage is the failure message of the durable tool when it has no effect for a key.
const AbsenceMessage = "conformance: no effect recorded"

// MaxSlowMillis is the longest wait a slow tool accepts, in milliseconds.
const MaxSlowMillis = 60000

// Durable tool modes (PRF-007).
const (
	ModeSucceed       = "succeed"
	ModeRunning       = "running"
	ModeFail          = "fail"
	ModeIndeterminate = "indeterminate"
	ModeError         = "error"
)

// Options configure the profile's adapters.
type Options struct {
	// Effects is the effect record; nil gives a fresh in-memory record.
	Effects *EffectLog
	// Wait waits for d or until cancel is closed, and reports whether it was cancelled. Nil
	// uses a real timer. A nil cancel channel never closes.
	Wait func(d time.Duration, cancel <-chan struct{}) bool
	// SecretSource is the path of the secret tool's secret source (PRF-033); empty means
	// none, and the provider always returns the stub secret.
	SecretSource string

	faults profileFaults // set only by the faulty build
}

// profileFaults is how the faulty build (faults.go) changes the profile's tools for the
// conformance suite's mutation test; nil in the default build.
type profileFaults interface {
	// secretBroker may replace the secret tool's broker.
	secretBroker(b *worker.SecretBroker) *worker.SecretBroker
	// secretLeaks may make the secret tool leak its secret.
	secretLeaks() secretLeaks
	// textEchoSuffix is what the text echo appends to its answers; empty for nothing.
	textEchoSuffix() string
}

// Register registers the nine profile tools in reg (PRF-001). Call it only in a test mode.
func Register(reg *worker.Registry, opts Options) error {
	if opts.Effects == nil {
		opts.Effects = NewEffectLog(nil, nil)
	}
	if opts.Wait == nil {
		opts.Wait = realWait
	}
	broker, binding, err := newStubBroker(opts.SecretSource)
	if err != nil {
		return err
	}
	signer := &secretSigner{broker: broker, binding: binding, effects: opts.Effects}
	if opts.faults != nil {
		signer.broker, signer.leaks = opts.faults.secretBroker(broker), opts.faults.secretLeaks()
	}
	steps := []func() error{
		func() error {
			return reg.Register(ToolTextEcho, echo{safety: worker.ReadOnly, suffix: textEchoSuffix(opts)})
		},
		func() error { return reg.Register(ToolJSONEcho, echo{safety: worker.ReadOnly}) },
		func() error { return reg.Register(ToolTextFail, failing{}) },
		func() error { return reg.Register(ToolTextUndeclared, echo{safety: worker.SafetyUndeclared}) },
		func() error {
			return reg.Register(ToolDurableRecord, &recorder{effects: opts.Effects, wait: opts.Wait})
		},
		func() error {
			return reg.RegisterCancellable(ToolSlowCancellable, &slow{cooperative: true, wait: opts.Wait})
		},
		func() error {
			return reg.RegisterCancellable(ToolSlowUncooperative, &slow{cooperative: false, wait: opts.Wait})
		},
		func() error { return reg.Register(ToolJSONTyped, newTyped()) },
		func() error { return reg.Register(ToolSecretSign, signer) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

func realWait(d time.Duration, cancel <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return false
	case <-cancel:
		return true
	}
}

// echo returns its input unchanged (PRF-003, PRF-004, PRF-006).
type echo struct {
	worker.Unimplemented
	safety worker.InvocationSafety
	suffix string // appended to a text answer; set only by the faulty build
}

func (e echo) InvocationSafety() worker.InvocationSafety { return e.safety }

func (e echo) Invoke(req protocol.ToolInvocation, _ protocol.CapabilityGrant) (protocol.ToolPayload, error) {
	if e.suffix != "" && req.Payload.Format == protocol.FormatText {
		return protocol.TextPayload(req.Payload.Text + e.suffix), nil
	}
	return req.Payload, nil
}

// textEchoSuffix is what the faulty build makes the text echo append; empty by default.
func textEchoSuffix(opts Options) string {
	if opts.faults == nil {
		return ""
	}
	return opts.faults.textEchoSuffix()
}

// failing fails every invocation (PRF-005).
type failing struct{ worker.Unimplemented }

func (failing) InvocationSafety() worker.InvocationSafety { return worker.ReadOnly }

func (failing) Invoke(protocol.ToolInvocation, protocol.CapabilityGrant) (protocol.ToolPayload, error) {
	return protocol.ToolPayload{}, &worker.AdapterError{Kind: worker.AdapterFailed, Reason: "conformance failure requested"}
}

// recorder is the durable tool (PRF-007 to PRF-015, PRF-034, PRF-035). It implements
// worker.FencedOperations, so the runtime gives it the session's fencing token, which it
// shows to the effect log with every call.
type recorder struct {
	worker.Unimplemented
	effects *EffectLog
	wait    func(time.Duration, <-chan struct{}) bool
}

func (*recorder) DurableContract() worker.DurableContract { return worker.Reconciliation }

// parseWait reads the optional wait_ms member of a durable input (PRF-034).
func parseWait(p protocol.ToolPayload) (time.Duration, error) {
	w, ok := p.JSON.Get("wait_ms")
	if !ok {
		return 0, nil
	}
	n, isUint := w.Uint64()
	if !isUint || n > MaxSlowMillis {
		return 0, &worker.AdapterError{Kind: worker.AdapterInvalidJSONInput, Reason: "wait_ms is not an integer from 0 to 60000"}
	}
	return time.Duration(n) * time.Millisecond, nil
}

// parseInput reads the mode and value of a durable input (PRF-007).
func parseInput(p protocol.ToolPayload) (mode string, value canonjson.Value, err error) {
	bad := func(reason string) error {
		return &worker.AdapterError{Kind: worker.AdapterInvalidJSONInput, Reason: reason}
	}
	if p.Format != protocol.FormatJSON || p.JSON.Kind() != canonjson.KindObject {
		return "", canonjson.Value{}, bad("input is not a JSON object")
	}
	mode = ModeSucceed
	if m, ok := p.JSON.Get("mode"); ok {
		if m.Kind() != canonjson.KindString {
			return "", canonjson.Value{}, bad("mode is not a string")
		}
		switch mode = m.StringValue(); mode {
		case ModeSucceed, ModeRunning, ModeFail, ModeIndeterminate, ModeError:
		default:
			return "", canonjson.Value{}, bad("unknown mode")
		}
	}
	value, _ = p.JSON.Get("value")
	return mode, value, nil
}

func successPayload(key string, value canonjson.Value) protocol.ToolPayload {
	return protocol.JSONPayload(canonjson.Object(
		canonjson.Entry{Key: "operation_key", Value: canonjson.String(key)},
		canonjson.Entry{Key: "value", Value: value},
	))
}

// unfenced marks a call made without a fencing token: it shows none to the effect log.
const unfenced = 0

// act appends line, if any, to the effect log for the operation key of tool, under token
// unless the call has none; a refusal of a superseded token performs nothing and fails with
// Failed (PRF-035).
func (r *recorder) act(line *EffectLine, tool, operationKey string, token uint64) error {
	var err error
	switch {
	case token != unfenced && line != nil:
		err = r.effects.Fenced(tool, operationKey, token, *line)
	case token != unfenced:
		err = r.effects.Fenced(tool, operationKey, token)
	case line != nil:
		err = r.effects.Append(*line)
	}
	if errors.Is(err, ErrSuperseded) {
		return &worker.AdapterError{Kind: worker.AdapterFailed, Reason: "superseded: a newer worker holds this operation key"}
	}
	if err != nil {
		// The effect may or may not have reached the log.
		return &worker.AdapterError{Kind: worker.AdapterIndeterminate, Reason: "effect log write failed"}
	}
	return nil
}

func (r *recorder) DispatchOperation(req protocol.OperationDispatchRequest, _ protocol.CapabilityGrant) (protocol.OperationStatus, error) {
	return r.dispatch(req, unfenced)
}

// DispatchFenced is DispatchOperation under the session's fencing token (PRF-035).
func (r *recorder) DispatchFenced(req protocol.OperationDispatchRequest, _ protocol.CapabilityGrant, token uint64) (protocol.OperationStatus, error) {
	return r.dispatch(req, max(token, 1))
}

func (r *recorder) dispatch(req protocol.OperationDispatchRequest, token uint64) (protocol.OperationStatus, error) {
	mode, value, err := parseInput(req.Payload)
	if err != nil {
		return protocol.OperationStatus{}, err
	}
	wait, err := parseWait(req.Payload)
	if err != nil {
		return protocol.OperationStatus{}, err
	}
	if wait > 0 {
		// A held call shows its token first, so a runner sees from the fence line that the
		// adapter runs (PRF-034); it shows it again when it acts.
		if token != unfenced {
			if err := r.act(nil, req.Tool, req.OperationKey, token); err != nil {
				return protocol.OperationStatus{}, err
			}
		}
		r.wait(wait, nil)
	}
	switch mode {
	case ModeFail:
		return protocol.Failed(AbsenceMessage), nil
	case ModeError:
		return protocol.OperationStatus{}, &worker.AdapterError{Kind: worker.AdapterFailed, Reason: "conformance error requested"}
	}
	line := EffectLine{Kind: KindEffect, Tool: req.Tool, OperationKey: req.OperationKey, Value: value}
	if err := r.act(&line, req.Tool, req.OperationKey, token); err != nil {
		return protocol.OperationStatus{}, err
	}
	switch mode {
	case ModeRunning:
		return protocol.Running(), nil
	case ModeIndeterminate:
		return protocol.OperationStatus{}, &worker.AdapterError{Kind: worker.AdapterIndeterminate, Reason: "conformance indeterminate requested"}
	}
	return protocol.Succeeded(successPayload(req.OperationKey, value)), nil
}

func (r *recorder) CompensateOperation(req protocol.OperationCompensationRequest, _ protocol.CapabilityGrant) (protocol.OperationStatus, error) {
	return r.compensate(req, unfenced)
}

// CompensateFenced is CompensateOperation under the session's fencing token (PRF-035).
func (r *recorder) CompensateFenced(req protocol.OperationCompensationRequest, _ protocol.CapabilityGrant, token uint64) (protocol.OperationStatus, error) {
	return r.compensate(req, max(token, 1))
}

func (r *recorder) compensate(req protocol.OperationCompensationRequest, token uint64) (protocol.OperationStatus, error) {
	mode, value, err := parseInput(req.Payload)
	if err != nil {
		return protocol.OperationStatus{}, err
	}
	switch mode {
	case ModeFail:
		return protocol.Failed(AbsenceMessage), nil
	case ModeError:
		return protocol.OperationStatus{}, &worker.AdapterError{Kind: worker.AdapterFailed, Reason: "conformance error requested"}
	}
	line := EffectLine{Kind: KindCompensation, Tool: req.Tool, OperationKey: req.OperationKey,
		CompensationKey: req.CompensationKey, Value: value}
	if err := r.act(&line, req.Tool, req.OperationKey, token); err != nil {
		return protocol.OperationStatus{}, err
	}
	if mode == ModeIndeterminate {
		return protocol.OperationStatus{}, &worker.AdapterError{Kind: worker.AdapterIndeterminate, Reason: "conformance indeterminate requested"}
	}
	return protocol.Succeeded(protocol.JSONPayload(canonjson.Object(
		canonjson.Entry{Key: "compensation_key", Value: canonjson.String(req.CompensationKey)},
		canonjson.Entry{Key: "operation_key", Value: canonjson.String(req.OperationKey)},
		canonjson.Entry{Key: "value", Value: value},
	))), nil
}

func (r *recorder) ReconcileOperation(req protocol.OperationReconcileRequest, _ protocol.CapabilityGrant) (protocol.OperationStatus, error) {
	return r.reconcile(req)
}

// ReconcileFenced is ReconcileOperation under the session's fencing token: the token is
// recorded before the effect record is read (PRF-035, STO-073).
func (r *recorder) ReconcileFenced(req protocol.OperationReconcileRequest, _ protocol.CapabilityGrant, token uint64) (protocol.OperationStatus, error) {
	if err := r.effects.Fenced(req.Tool, req.OperationKey, max(token, 1)); err != nil {
		if errors.Is(err, ErrSuperseded) {
			return protocol.OperationStatus{}, &worker.AdapterError{Kind: worker.AdapterFailed, Reason: "superseded: a newer worker holds this operation key"}
		}
		return protocol.OperationStatus{}, &worker.AdapterError{Kind: worker.AdapterFailed, Reason: "effect log unreadable"}
	}
	return r.reconcile(req)
}

func (r *recorder) reconcile(req protocol.OperationReconcileRequest) (protocol.OperationStatus, error) {
	if value, ok := r.effects.Effect(req.Tool, req.OperationKey); ok {
		return protocol.Succeeded(successPayload(req.OperationKey, value)), nil
	}
	return protocol.Failed(AbsenceMessage), nil
}

// slow waits N milliseconds, cooperatively or not (PRF-016, PRF-017).
type slow struct {
	worker.Unimplemented
	cooperative bool
	wait        func(time.Duration, <-chan struct{}) bool
}

func (*slow) InvocationSafety() worker.InvocationSafety { return worker.ReadOnly }

// parseMillis reads the decimal wait time of a slow tool.
func parseMillis(p protocol.ToolPayload) (time.Duration, error) {
	s := p.Text
	bad := &worker.AdapterError{Kind: worker.AdapterFailed, Reason: "input is not a wait time in milliseconds"}
	if p.Format != protocol.FormatText || len(s) == 0 || len(s) > 5 {
		return 0, bad
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, bad
		}
		n = n*10 + int(s[i]-'0')
	}
	if n > MaxSlowMillis {
		return 0, bad
	}
	return time.Duration(n) * time.Millisecond, nil
}

func (s *slow) Invoke(req protocol.ToolInvocation, _ protocol.CapabilityGrant) (protocol.ToolPayload, error) {
	d, err := parseMillis(req.Payload)
	if err != nil {
		return protocol.ToolPayload{}, err
	}
	s.wait(d, nil)
	return protocol.TextPayload("done " + req.Payload.Text), nil
}

func (s *slow) InvokeCancellable(req protocol.ToolInvocation, _ protocol.CapabilityGrant, token *worker.CancelToken) (worker.Completion, error) {
	d, err := parseMillis(req.Payload)
	if err != nil {
		return worker.Completion{}, err
	}
	if s.cooperative {
		if s.wait(d, token.Done()) {
			return worker.Acknowledged(), nil
		}
	} else {
		s.wait(d, nil)
	}
	return worker.Completed(protocol.TextPayload("done " + req.Payload.Text)), nil
}
