package replay

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strings"
	"time"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/schema"
	"github.com/splashv5/conform/impl/script"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

// replayHostScenarios replays host_scenarios.json.
func replayHostScenarios(fsys fs.FS, fr *fileRun) error {
	var f vectorfmt.HostScenarios
	if err := vectorfmt.Load(fsys, vectorfmt.HostScenariosFile, &f); err != nil {
		return err
	}
	return replayGroups(fr, f.TestGroups, func(g *vectorfmt.HostScenarioGroup) ([]vectorfmt.HostScenarioTest, func(*vectorfmt.HostScenarioTest) (*vectorfmt.Case, []string), error) {
		return g.Tests, func(t *vectorfmt.HostScenarioTest) (*vectorfmt.Case, []string) {
			return &t.Case, CheckHostScenario(t)
		}, nil
	})
}

// CheckHostScenario runs one host scenario against impl/host and returns every difference
// between the observed and the declared step outcomes (none when the test passes), and a
// difference between the test's result and error and its first failing step.
func CheckHostScenario(t *vectorfmt.HostScenarioTest) []string {
	got, err := RunHostScenario(t)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	firstErr := ""
	for i := range t.Steps {
		want := t.Steps[i].Expect
		if firstErr == "" && want.Error != "" {
			firstErr = want.Error
		}
		if !reflect.DeepEqual(normalizeExpect(want), normalizeExpect(got[i])) {
			problems = append(problems, fmt.Sprintf("step %d (%s): want %s, got %s", i+1, t.Steps[i].Op, describe(want), describe(got[i])))
		}
	}
	wantResult := vectorfmt.Valid
	if firstErr != "" {
		wantResult = vectorfmt.Invalid
	}
	if t.Result != wantResult || t.Error != firstErr {
		problems = append(problems, fmt.Sprintf("result %s/%s does not match the first failing step %q", t.Result, t.Error, firstErr))
	}
	return problems
}

func normalizeExpect(e vectorfmt.HostExpect) vectorfmt.HostExpect {
	if len(e.Settlements) == 0 {
		e.Settlements = nil
	}
	if len(e.Audit) == 0 {
		e.Audit = nil
	}
	return e
}

func describe(e vectorfmt.HostExpect) string {
	b, err := jsonMarshal(e)
	if err != nil {
		return fmt.Sprintf("%+v", e)
	}
	return string(b)
}

// hostHandlerFailure is the tool error of the "fail" host-pump handler.
const hostHandlerFailure = "handler broke"

// RunHostScenario runs one host scenario against impl/host and returns the observed outcome
// of every step, in the shape of the declared ones. An error means the scenario itself could
// not be set up (a bad configuration or registration).
func RunHostScenario(t *vectorfmt.HostScenarioTest) ([]vectorfmt.HostExpect, error) {
	now := time.UnixMilli(t.Config.ClockStartMillis)
	clock := func() time.Time { return now }
	cfg := host.Config{MaxPendingTools: t.Config.MaxPendingTools, MaxTools: t.Config.MaxTools,
		MaxCatalogBytes: t.Config.MaxCatalogBytes, Clock: clock, SessionID: t.Config.SessionID}
	if t.Config.NoNonce {
		cfg.Entropy = failingEntropy{}
	} else {
		nonceBytes, err := hex.DecodeString(t.Config.NonceHex)
		if err != nil {
			return nil, fmt.Errorf("nonce_hex: %v", err)
		}
		nonce, err := host.NewSessionNonce(nonceBytes)
		if err != nil {
			return nil, fmt.Errorf("nonce: %v", err)
		}
		cfg.SessionNonce = &nonce
	}
	rt, err := host.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("runtime: %v", err)
	}
	advance := func(d time.Duration) { now = now.Add(d) }
	for _, tool := range t.Tools {
		if err := registerHostTool(rt, tool, advance); err != nil {
			return nil, fmt.Errorf("register %s: %v", tool.Name, err)
		}
	}
	var lease *host.Lease
	var session *host.ScriptSession // created by the first eval step
	cursor := uint64(1)
	out := make([]vectorfmt.HostExpect, len(t.Steps))
	for i, s := range t.Steps {
		var e vectorfmt.HostExpect
		id := host.OperationID(s.ID)
		switch s.Op {
		case vectorfmt.HostOpStart, vectorfmt.HostOpStartJSON:
			start := rt.Start
			if s.Op == vectorfmt.HostOpStartJSON {
				start = rt.StartJSON
			}
			got, err := start(s.Tool, deref(s.Input))
			if err != nil {
				setToolErr(&e, err)
			} else {
				id = got
				e.ID = uint64(got)
			}
		case vectorfmt.HostOpCall:
			output, err := rt.Call(s.Tool, deref(s.Input))
			if err != nil {
				setToolErr(&e, err)
			} else {
				e.Output = &output
			}
		case vectorfmt.HostOpClaimNext, vectorfmt.HostOpPeek:
			next := rt.ClaimNextExternal
			if s.Op == vectorfmt.HostOpPeek {
				next = rt.PeekNextExternal
			}
			inv, ok := next()
			e.Found = &ok
			if ok {
				e.Invocation = invocationOf(inv)
				id = inv.ID
			}
		case vectorfmt.HostOpClaim:
			inv, err := rt.ClaimExternal(id)
			if setErr(&e, err) {
				e.Invocation = invocationOf(inv)
			}
		case vectorfmt.HostOpRetry:
			class := host.RetryTransient
			if s.RetryClass == "rate_limited" {
				class = host.RetryRateLimited
			}
			inv, err := rt.RetryExternal(id, class)
			if setErr(&e, err) {
				e.Invocation = invocationOf(inv)
			}
		case vectorfmt.HostOpValidate:
			setErr(&e, rt.ValidateClaimedExternal(id))
		case vectorfmt.HostOpComplete, vectorfmt.HostOpFail:
			res := host.OK(deref(s.Output))
			if s.Op == vectorfmt.HostOpFail {
				res = host.Fail(toolErrorOf(s.Failure))
			}
			st, err := rt.CompleteExternal(id, res)
			if setErr(&e, err) {
				e.Settlements = []vectorfmt.HostSettlement{settlementOf(st)}
				if session != nil {
					ev, err := session.Resume(st)
					if err != nil {
						return nil, fmt.Errorf("step %d: resuming the script: %v", i+1, err)
					}
					if ev != nil {
						e.Evaluation = hostEvaluationOf(*ev)
					}
				}
			}
		case vectorfmt.HostOpPushChunk:
			ch, err := rt.PushExternalChunk(id, deref(s.Chunk))
			if setErr(&e, err) {
				e.Chunk = &vectorfmt.HostChunk{ChunkIndex: ch.ChunkIndex, Text: ch.Text, IdempotencyKey: ch.IdempotencyKey}
			}
		case vectorfmt.HostOpRequestCancellation:
			req, err := rt.RequestExternalCancellation(id)
			if setErr(&e, err) {
				e.Cancellation = &vectorfmt.HostCancellation{ID: uint64(req.ID), Tool: req.Name, CallIndex: req.CallIndex, Attempt: req.Attempt, IdempotencyKey: req.IdempotencyKey}
			}
		case vectorfmt.HostOpConfirmCancellation, vectorfmt.HostOpCancel:
			settle := rt.ConfirmExternalCancellation
			if s.Op == vectorfmt.HostOpCancel {
				settle = rt.CancelExternal
			}
			st, err := settle(id)
			if setErr(&e, err) {
				e.Settlements = []vectorfmt.HostSettlement{settlementOf(st)}
			}
		case vectorfmt.HostOpEval:
			if session == nil {
				// The script's clock stands still: only the scenario's steps move time.
				sess, err := host.NewScriptSession(rt, script.Config{Clock: func() time.Time { return time.Unix(0, 0) }})
				if err != nil {
					return nil, err
				}
				session = sess
			}
			var ev script.Evaluation
			var err error
			if s.WithLease {
				if lease == nil {
					return nil, fmt.Errorf("step %d: no lease was issued", i+1)
				}
				ev, err = session.EvalWithLease(s.Source, lease)
			} else {
				ev, err = session.Eval(s.Source)
			}
			if err != nil {
				e.Error = "Unclassified"
			} else {
				e.Evaluation = hostEvaluationOf(ev)
			}
		case vectorfmt.HostOpSetRedactor:
			redactor := func(chunk string) string { return strings.Repeat("*", len(chunk)) }
			if s.Redactor == "upper" {
				redactor = strings.ToUpper
			}
			setErr(&e, rt.SetExternalStreamRedactor(s.Tool, redactor))
		case vectorfmt.HostOpValidateAuditEvent:
			if s.AuditEvent == nil {
				return nil, fmt.Errorf("step %d: no audit_event", i+1)
			}
			ev, ok := auditEventFrom(*s.AuditEvent)
			if !ok {
				return nil, fmt.Errorf("step %d: unknown outcome or retry class", i+1)
			}
			if err := ev.ValidateForTelemetry(); err != nil {
				e.Error = "Unclassified"
				for kind, sentinel := range auditValidationKinds {
					if errors.Is(err, sentinel) {
						e.Error = kind
					}
				}
			}
		case vectorfmt.HostOpSessionNonce:
			raw, err := hex.DecodeString(deref(s.Input))
			if err != nil {
				return nil, fmt.Errorf("step %d: input is not hex: %v", i+1, err)
			}
			var ne *host.NonceError
			if _, err := host.NewSessionNonce(raw); errors.As(err, &ne) {
				e.Error = ne.KindName()
				actual, limit := ne.Actual, ne.Limit
				e.ActualBytes, e.LimitBytes = &actual, &limit
			} else if err != nil {
				e.Error = "Unclassified"
			}
		case vectorfmt.HostOpNextDeadline:
			at, ok := rt.NextDeadline()
			e.Found = &ok
			if ok {
				ms := uint64(at.UnixMilli() - t.Config.ClockStartMillis)
				e.NextDeadlineMillis = &ms
			}
		case vectorfmt.HostOpAdvanceClock:
			now = now.Add(time.Duration(s.Millis) * time.Millisecond)
		case vectorfmt.HostOpExpire, vectorfmt.HostOpPump:
			var sts []host.Settlement
			switch {
			case s.Op == vectorfmt.HostOpExpire && s.Limit == 0:
				sts = rt.ExpireTimedOut()
			case s.Op == vectorfmt.HostOpExpire:
				sts = rt.ExpireTimedOutUpTo(s.Limit)
			case s.Limit == 0:
				sts = rt.Pump()
			default:
				sts = rt.PumpUpTo(s.Limit)
			}
			for _, st := range sts {
				e.Settlements = append(e.Settlements, settlementOf(st))
			}
		case vectorfmt.HostOpAwait:
			output, ready, err := rt.Await(id)
			var te *host.ToolError
			switch {
			case errors.As(err, &te):
				e.Ready = &ready
				e.ToolError = &vectorfmt.HostToolError{Kind: te.Kind.String(), Message: te.Message}
			case err != nil:
				e.Error = ErrorKindName(err)
			default:
				e.Ready = &ready
				if ready {
					e.Output = &output
				}
			}
		case vectorfmt.HostOpReleasePromise:
			found := rt.ReleasePromise(id)
			e.Found = &found
		case vectorfmt.HostOpCollectGarbage:
			n := rt.CollectGarbage()
			e.Deleted = &n
		case vectorfmt.HostOpReconcileRequest:
			req, err := rt.ExternalReconcileRequest(id, "session-1", "reconcile-1")
			if setErr(&e, err) {
				e.Reconcile = &vectorfmt.HostReconcileRequest{Tool: req.Tool, OperationKey: req.OperationKey}
			}
		case vectorfmt.HostOpReconcile:
			rec, err := reconcile(rt, id, s)
			if setErr(&e, err) {
				running := rec.Running
				e.Running = &running
				if !running {
					e.Settlements = []vectorfmt.HostSettlement{settlementOf(rec.Settlement)}
				}
			}
		case vectorfmt.HostOpRegister:
			if s.Register == nil {
				return nil, fmt.Errorf("step %d: register without a tool", i+1)
			}
			setErr(&e, registerHostTool(rt, *s.Register, advance))
		case vectorfmt.HostOpIssueLease:
			grants := make([]host.LeaseGrant, len(s.Lease))
			for j, g := range s.Lease {
				grants[j] = host.LeaseGrant{Name: g.Tool, MaxCalls: g.MaxCalls}
			}
			l, err := rt.IssueLease(grants, nil)
			if err != nil {
				setErr(&e, err)
			} else {
				lease = l
			}
		case vectorfmt.HostOpActivateLease:
			if lease == nil {
				return nil, fmt.Errorf("step %d: no lease was issued", i+1)
			}
			setErr(&e, rt.ActivateLease(lease))
		case vectorfmt.HostOpDeactivateLease:
			rt.DeactivateLease()
		case vectorfmt.HostOpSetAuditCapacity, vectorfmt.HostOpClearAudit:
			if s.Op == vectorfmt.HostOpClearAudit {
				rt.ClearAudit()
			} else if err := rt.SetMaxAuditEvents(s.Limit); errors.Is(err, host.ErrInvalidLimits) {
				e.Error = "InvalidLimits"
			} else if err != nil {
				return nil, fmt.Errorf("step %d: audit capacity: %w", i+1, err)
			}
			dropped := rt.DroppedAuditEvents()
			e.Dropped = &dropped
		case vectorfmt.HostOpExportAudit:
			batch, err := rt.AuditSince(s.Cursor)
			var ce *host.AuditCursorError
			switch {
			case errors.As(err, &ce):
				e.Error = ce.Kind.String()
				if ce.Kind != host.ErrAuditInvalidCursor {
					available := ce.Available
					e.Available = &available
				}
			case err != nil:
				e.Error = "Unclassified"
			default:
				e.Exported = auditEventsOf(batch.Events)
				next := batch.Next
				e.Next = &next
			}
			dropped := rt.DroppedAuditEvents()
			e.Dropped = &dropped
		default:
			return nil, fmt.Errorf("step %d: unknown op %q", i+1, s.Op)
		}
		// The records the step appended that are still retained: an eviction may already
		// have removed some of them.
		var fresh []host.AuditEvent
		for _, ev := range rt.Audit() {
			if ev.EventSequence >= cursor {
				fresh = append(fresh, ev)
				cursor = ev.EventSequence + 1
			}
		}
		e.Audit = auditEventsOf(fresh)
		if id != 0 {
			if info, ok := rt.Operation(id); ok {
				e.State = info.State.String()
			}
		}
		out[i] = e
	}
	return out, nil
}

// reconcile builds the reconcile request for the operation (by its current invocation when
// one can be built, else for an unclaimed tool and key) and applies the step's status.
func reconcile(rt *host.Runtime, id host.OperationID, s vectorfmt.HostStep) (host.Reconciliation, error) {
	tool, key := "unclaimed", "unclaimed-key"
	if info, ok := rt.Operation(id); ok {
		tool = info.Name
		if info.IdempotencyKey != "" {
			key = info.IdempotencyKey
		}
	}
	req, err := protocol.NewOperationReconcileRequest("session-1", "reconcile-1", tool, key)
	if err != nil {
		return host.Reconciliation{}, err
	}
	var status protocol.OperationStatus
	switch s.Status {
	case "running":
		status = protocol.Running()
	case "succeeded":
		status = protocol.Succeeded(protocol.TextPayload(deref(s.StatusText)))
	case "succeeded_json":
		v, err := canonjson.ParseValue([]byte(deref(s.StatusText)), canonjson.Preserve)
		if err != nil {
			return host.Reconciliation{}, err
		}
		status = protocol.Succeeded(protocol.JSONPayload(v))
	case "failed":
		status = protocol.Failed(deref(s.StatusText))
	case "cancelled":
		status = protocol.Cancelled()
	default:
		return host.Reconciliation{}, fmt.Errorf("unknown reconcile status %q", s.Status)
	}
	res, err := protocol.NewOperationReconcileResult("session-1", "reconcile-1", tool, key, status)
	if err != nil {
		return host.Reconciliation{}, err
	}
	return rt.ReconcileExternal(id, req, res)
}

func registerHostTool(rt *host.Runtime, t vectorfmt.HostTool, advance func(time.Duration)) error {
	p := host.NewPolicy(t.Name)
	if t.Format == "json" {
		p = host.JSONPolicy(t.Name)
	}
	p.MaxCalls, p.MaxAttempts, p.MaxInputBytes, p.MaxOutputBytes = t.MaxCalls, t.MaxAttempts, t.MaxInputBytes, t.MaxOutputBytes
	if t.DeadlineMillis != nil {
		p = p.WithDeadline(time.Duration(*t.DeadlineMillis) * time.Millisecond)
	}
	if t.Stream != nil {
		p = p.WithStream(host.StreamPolicy{MaxChunks: t.Stream.MaxChunks, MaxChunkBytes: t.Stream.MaxChunkBytes,
			MaxTotalBytes: t.Stream.MaxTotalBytes, MaxEmittedBytes: t.Stream.MaxEmittedBytes})
	}
	var contract *schema.Contract
	if t.InputSchema != "" || t.OutputSchema != "" {
		in, err := canonjson.ParseValue([]byte(t.InputSchema), canonjson.Preserve)
		if err != nil {
			return err
		}
		outS, err := canonjson.ParseValue([]byte(t.OutputSchema), canonjson.Preserve)
		if err != nil {
			return err
		}
		c, err := schema.NewContract(in, outS)
		if err != nil {
			return err
		}
		contract = &c
	}
	meta := host.Metadata{Description: t.Description}
	if t.MetadataSchema != "" {
		v, err := canonjson.ParseValue([]byte(t.MetadataSchema), canonjson.Preserve)
		if err != nil {
			return err
		}
		meta.InputSchema = &v
	}
	switch t.Kind {
	case "external":
		if contract != nil {
			return rt.RegisterValidatedExternalJSONTool(p, meta, *contract)
		}
		return rt.RegisterExternalTool(p, meta)
	case "host_pump":
		if contract != nil {
			return errors.New("contracts on host-pump tools are not used by these vectors")
		}
		handler := t.Handler
		return rt.RegisterTool(p, meta, func(req host.ToolRequest) (string, error) {
			advance(time.Duration(t.HandlerAdvanceMillis) * time.Millisecond)
			if handler == "fail" {
				return "", host.Failed(hostHandlerFailure)
			}
			return "echo:" + req.Input, nil
		})
	}
	return fmt.Errorf("unknown tool kind %q", t.Kind)
}

func auditEventsOf(events []host.AuditEvent) []vectorfmt.HostAuditEvent {
	var out []vectorfmt.HostAuditEvent
	for _, ev := range events {
		a := vectorfmt.HostAuditEvent{EventSequence: ev.EventSequence, Sequence: ev.Sequence, Tool: ev.Tool,
			InputBytes: ev.InputBytes, OutputBytes: ev.OutputBytes, Outcome: ev.Outcome.String()}
		if ev.RetryClass != 0 {
			a.RetryClass = ev.RetryClass.String()
		}
		out = append(out, a)
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// setErr records the kind of err, if any, and reports whether the call succeeded.
func setErr(e *vectorfmt.HostExpect, err error) bool {
	if err != nil {
		e.Error = ErrorKindName(err)
	}
	return err == nil
}

func setToolErr(e *vectorfmt.HostExpect, err error) {
	var te *host.ToolError
	if errors.As(err, &te) {
		e.Error = te.Kind.String()
		e.ToolError = &vectorfmt.HostToolError{Kind: te.Kind.String(), Message: te.Message}
		return
	}
	e.Error = "Unclassified"
}

func toolErrorOf(t *vectorfmt.HostToolError) *host.ToolError {
	if t == nil {
		return host.Failed("")
	}
	switch t.Kind {
	case "Denied":
		return host.Denied(t.Message)
	case "Cancelled":
		return host.Cancelled(t.Message)
	case "TimedOut":
		return host.TimedOut(t.Message)
	}
	return host.Failed(t.Message)
}

func invocationOf(inv host.Invocation) *vectorfmt.HostInvocation {
	h := &vectorfmt.HostInvocation{ID: uint64(inv.ID), Tool: inv.Name, Input: inv.Input, CallIndex: inv.CallIndex,
		Attempt: inv.Attempt, MaxAttempts: inv.MaxAttempts, IdempotencyKey: inv.IdempotencyKey,
		Format: inv.Format.String(), MaxOutputBytes: inv.MaxOutputBytes}
	if inv.HasDeadline {
		r := inv.RemainingDeadlineMillis
		h.RemainingDeadlineMillis = &r
	}
	return h
}

func settlementOf(st host.Settlement) vectorfmt.HostSettlement {
	s := vectorfmt.HostSettlement{ID: uint64(st.ID), Awaited: st.Awaited}
	if st.Err != nil {
		s.ToolError = &vectorfmt.HostToolError{Kind: st.Err.Kind.String(), Message: st.Err.Message}
	} else {
		out := st.Output
		s.Output = &out
	}
	return s
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// failingEntropy is an entropy source that always fails, so that a runtime has no nonce.
type failingEntropy struct{}

func (failingEntropy) Read([]byte) (int, error) { return 0, errors.New("entropy unavailable") }

// hostEvaluationOf renders a script evaluation as HostEvaluation; a diagnostic's position is
// left open ("?"), as the script vectors leave a method call's.
func hostEvaluationOf(ev script.Evaluation) *vectorfmt.HostEvaluation {
	kind, text := scriptValue(ev.Value)
	out := &vectorfmt.HostEvaluation{Status: ev.Status().String(), ValueKind: kind, Value: text, Diagnostics: []string{}}
	for _, d := range ev.Diagnostics {
		out.Diagnostics = append(out.Diagnostics, d.File+":?: "+d.Message+" ("+d.Origin+")")
	}
	return out
}

// auditValidationKinds names the errors of AuditEvent.ValidateForTelemetry by the reference's
// validation variants.
var auditValidationKinds = map[string]error{
	"InvalidEventSequence":  host.ErrAuditInvalidEventSequence,
	"InvalidTool":           host.ErrAuditInvalidTool,
	"RetryClassRequired":    host.ErrAuditRetryClassRequired,
	"RetryClassUnexpected":  host.ErrAuditRetryClassUnexpected,
	"UnexpectedOutputBytes": host.ErrAuditUnexpectedOutputBytes,
}

// auditEventFrom reads a HostAuditEvent; it reports false for an unknown outcome or retry class.
func auditEventFrom(a vectorfmt.HostAuditEvent) (host.AuditEvent, bool) {
	ev := host.AuditEvent{EventSequence: a.EventSequence, Sequence: a.Sequence, Tool: a.Tool, InputBytes: a.InputBytes, OutputBytes: a.OutputBytes}
	for o := host.OutcomeAllowed; o <= host.OutcomeStreamDenied; o++ {
		if o.String() == a.Outcome {
			ev.Outcome = o
		}
	}
	switch a.RetryClass {
	case "":
	case host.RetryTransient.String():
		ev.RetryClass = host.RetryTransient
	case host.RetryRateLimited.String():
		ev.RetryClass = host.RetryRateLimited
	default:
		return ev, false
	}
	return ev, ev.Outcome != 0
}
