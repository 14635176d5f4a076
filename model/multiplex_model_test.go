package model_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
	"github.com/splashv5/conform/model"
	"pgregory.net/rapid"
)

const (
	muxSession  = "session-1"
	fatalerool  = "work.run"
	muxOther    = "work.other"
	muxMaxCalls = 8
)

// muxImpl is the implementation under test: the multiplexed transport's pure coordinator,
// with a worker authenticator that opens every line the host writes and seals every worker
// frame.
type muxImpl struct {
	c      *transport.Coordinator
	worker *protocol.Authenticator
}

func newMuxImpl(t fataler) *muxImpl {
	raw := make([]byte, protocol.SessionKeyBytes)
	for i := range raw {
		raw[i] = byte(i + 1)
	}
	key, err := protocol.NewSessionKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	defer key.Close()
	host, err := protocol.NewAuthenticator(muxSession, key, protocol.RoleHost, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	worker, err := protocol.NewAuthenticator(muxSession, key, protocol.RoleWorker, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	g, o := protocol.TextGrant(fatalerool), protocol.TextGrant(muxOther)
	g.MaxCalls, o.MaxCalls = muxMaxCalls, muxMaxCalls
	m, err := protocol.NewCapabilityManifest(muxSession, []protocol.CapabilityGrant{g, o})
	if err != nil {
		t.Fatal(err)
	}
	c, line, err := transport.NewCoordinator(m, host)
	if err != nil {
		t.Fatal(err)
	}
	if f, err := worker.Open(line); err != nil || f.Message.Type() != protocol.TypeOpenSession {
		t.Fatalf("opening line: %v", err)
	}
	return &muxImpl{c: c, worker: worker}
}

// step applies one abstract step to the coordinator and describes the result in the model's
// vocabulary.
func (w *muxImpl) step(t fataler, s model.MuxStep) model.MuxOutcome {
	var out transport.Output
	var err error
	switch s.Kind {
	case model.MuxStepStart:
		inv, e := protocol.NewToolInvocation(muxSession, s.RequestID, fatalerool, protocol.TextPayload("in"))
		if e != nil {
			t.Fatal(e)
		}
		out, err = w.c.Start(inv)
	case model.MuxStepCancel:
		out, err = w.c.Cancel(s.CancellationID, s.RequestID, fatalerool)
	case model.MuxStepClose:
		out, err = w.c.Close()
	case model.MuxStepAbandon:
		out = w.c.Abandon()
	case model.MuxStepEnd:
		out = w.c.ReceiveFailed(&jsonline.Error{Kind: jsonline.ErrUnexpectedEndOfStream})
	default:
		out = w.c.Receive(w.frame(t, s))
	}
	o := model.MuxOutcome{}
	if err != nil {
		o.Err = errName(err)
	}
	if out.Line != nil {
		f, e := w.worker.Open(out.Line)
		if e != nil {
			t.Fatalf("the worker cannot open the host's line: %v", e)
		}
		o.Sent = string(f.Message.Type())
	}
	for _, e := range out.Events {
		o.Events = append(o.Events, eventName(e))
	}
	return o
}

// frame seals the worker frame of an abstract worker step.
func (w *muxImpl) frame(t fataler, s model.MuxStep) protocol.Frame {
	var m protocol.Message
	switch s.Kind {
	case model.MuxStepResult, model.MuxStepTampered:
		r, err := protocol.NewToolResult(muxSession, s.RequestID, protocol.TextPayload("out"))
		if err != nil {
			t.Fatal(err)
		}
		m = protocol.ResultMessage{Result: r}
	case model.MuxStepCancellationResult:
		req, err := protocol.NewWorkerCancellationRequest(muxSession, s.CancellationID, s.RequestID, s.Tool)
		if err != nil {
			t.Fatal(err)
		}
		outcome := map[string]protocol.WorkerCancellationOutcome{model.MuxAcknowledged: protocol.OutcomeAcknowledged,
			model.MuxTooLate: protocol.OutcomeTooLate, model.MuxUnsupported: protocol.OutcomeUnsupported}[s.Outcome]
		res, err := protocol.NewWorkerCancellationResult(req, outcome)
		if err != nil {
			t.Fatal(err)
		}
		m = protocol.CancellationResultMessage{Result: res}
	case model.MuxStepOther:
		switch s.Message {
		case "invoke":
			inv, _ := protocol.NewToolInvocation(muxSession, "r9", fatalerool, protocol.TextPayload("x"))
			m = protocol.InvokeMessage{Invocation: inv}
		case "cancel":
			req, _ := protocol.NewWorkerCancellationRequest(muxSession, "c9", "r9", fatalerool)
			m = protocol.CancelMessage{Request: req}
		default:
			m = protocol.CloseSessionMessage{ProtocolVersion: protocol.ProtocolVersion, Session: muxSession}
		}
	default:
		t.Fatalf("no frame for step %s", s.Kind)
	}
	f, _, err := w.worker.Seal(m)
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind == model.MuxStepTampered {
		f.Tag[0] ^= 0x80
	}
	return f
}

func errName(err error) string {
	var e *transport.Error
	if !errors.As(err, &e) {
		return "untyped:" + err.Error()
	}
	switch e.Kind {
	case transport.ErrUnexpectedMessage:
		return "UnexpectedMessage:" + e.Detail
	case transport.ErrProtocol:
		if k, ok := protocol.KindOf(e.Err); ok {
			return "Protocol:" + k.String()
		}
	}
	return e.Kind.String()
}

func eventName(e transport.Event) string {
	target := map[transport.EventTarget]string{transport.TargetInvocation: "invocation",
		transport.TargetCancellation: "cancellation", transport.TargetClose: "close"}[e.Target]
	switch {
	case e.Err != nil:
		return target + ":error:" + errName(e.Err)
	case e.Target == transport.TargetInvocation && e.Outcome.Cancelled:
		if e.Outcome.Acknowledgement.Outcome != protocol.OutcomeAcknowledged {
			return "invocation:cancelled-without-acknowledgement"
		}
		return "invocation:cancelled:" + e.Outcome.Acknowledgement.RequestID
	case e.Target == transport.TargetInvocation:
		return "invocation:completed:" + e.Outcome.Result.RequestID
	case e.Target == transport.TargetCancellation:
		return "cancellation:" + e.Disposition.Outcome.String()
	}
	return "close:ok"
}

var muxPhases = map[transport.Phase]string{
	transport.PhaseIdle: model.MuxIdle, transport.PhaseActive: model.MuxActive,
	transport.PhaseCancelling: model.MuxCancel, transport.PhaseResultBuffered: model.MuxBuffer,
	transport.PhaseClosing: model.MuxClosing, transport.PhaseClosed: model.MuxClosed,
	transport.PhaseStopped: model.MuxStopped,
}

// run drives the model and the implementation through steps and fails at the first
// difference; it returns the model's outcomes.
func runMux(t fataler, steps []model.MuxStep) []model.MuxOutcome {
	m := model.NewMultiplex(fatalerool, muxMaxCalls)
	impl := newMuxImpl(t)
	var outcomes []model.MuxOutcome
	for i, s := range steps {
		want := m.Step(s)
		got := impl.step(t, s)
		if got.Err != want.Err || got.Sent != want.Sent || !slices.Equal(got.Events, want.Events) {
			t.Fatalf("step %d %+v (after %v): implementation %+v, model %+v", i, s, steps[:i], got, want)
		}
		if p := muxPhases[impl.c.Phase()]; p != m.Phase {
			t.Fatalf("step %d %+v: implementation phase %s, model phase %s", i, s, p, m.Phase)
		}
		outcomes = append(outcomes, want)
	}
	return outcomes
}

// Spec: TRN-041, TRN-042, TRN-043, TRN-044, TRN-047, TRN-050, TRN-051, TRN-052, TRN-053,
// TRN-054, TRN-055, TRN-056, TRN-057, TRN-058, TRN-059, TRN-061, TRN-062
// The coordinator and the model agree on every random interleaving of host commands and
// worker frames: result-wins races, acknowledgements, too_late, unsupported, duplicate and
// mismatched frames, budget and id refusals, close and abandon.
func TestMultiplexMatchesModel(t *testing.T) {
	// Step kinds are weighted by the model's phase, so that most runs get deep into the
	// cancellation orderings before a fatal step stops the transport; every kind stays
	// possible in every phase.
	type weighted struct {
		kind   string
		weight int
	}
	rare := []weighted{{model.MuxStepAbandon, 1}, {model.MuxStepOther, 1}, {model.MuxStepTampered, 1}, {model.MuxStepEnd, 1}}
	byPhase := map[string][]weighted{
		model.MuxIdle: {{model.MuxStepStart, 60}, {model.MuxStepClose, 4}, {model.MuxStepCancel, 4},
			{model.MuxStepResult, 2}, {model.MuxStepCancellationResult, 2}},
		model.MuxActive: {{model.MuxStepResult, 30}, {model.MuxStepCancel, 40}, {model.MuxStepStart, 4},
			{model.MuxStepClose, 2}, {model.MuxStepCancellationResult, 3}},
		model.MuxCancel: {{model.MuxStepResult, 35}, {model.MuxStepCancellationResult, 45}, {model.MuxStepCancel, 4},
			{model.MuxStepStart, 2}, {model.MuxStepClose, 2}},
		model.MuxBuffer: {{model.MuxStepCancellationResult, 60}, {model.MuxStepResult, 4}, {model.MuxStepCancel, 4},
			{model.MuxStepStart, 2}, {model.MuxStepClose, 2}},
		model.MuxClosing: {{model.MuxStepEnd, 20}, {model.MuxStepStart, 2}, {model.MuxStepCancel, 2},
			{model.MuxStepClose, 2}, {model.MuxStepResult, 1}, {model.MuxStepCancellationResult, 1}},
	}
	drawKind := func(t *rapid.T, phase, label string) string {
		choices := append(slices.Clone(byPhase[phase]), rare...)
		total := 0
		for _, w := range choices {
			total += w.weight
		}
		n := rapid.IntRange(0, total-1).Draw(t, label)
		for _, w := range choices {
			if n < w.weight {
				return w.kind
			}
			n -= w.weight
		}
		panic("unreachable")
	}
	outcomesByPhase := map[string][]string{
		model.MuxCancel: {model.MuxAcknowledged, model.MuxAcknowledged, model.MuxAcknowledged, model.MuxAcknowledged,
			model.MuxUnsupported, model.MuxUnsupported, model.MuxUnsupported, model.MuxUnsupported, model.MuxTooLate},
		model.MuxBuffer: {model.MuxTooLate, model.MuxTooLate, model.MuxTooLate, model.MuxTooLate,
			model.MuxTooLate, model.MuxAcknowledged, model.MuxUnsupported},
	}
	requestIDs := []string{"r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9"}
	property := func(t *rapid.T) {
		m := model.NewMultiplex(fatalerool, muxMaxCalls)
		impl := newMuxImpl(t)
		// The model tracks the live ids; the generator leans towards them so that the
		// interesting orderings are common, and still draws stale and foreign ids.
		var active, cancelID string
		used := map[string]bool{}
		n := rapid.IntRange(1, 60).Draw(t, "steps")
		for i := range n {
			kind := drawKind(t, m.Phase, fmt.Sprintf("kind%d", i))
			s := model.MuxStep{Kind: kind}
			near := func(live string, pool []string, label string) string {
				if live != "" {
					pool = append(slices.Repeat([]string{live}, 4*len(pool)), pool...)
				}
				return rapid.SampledFrom(pool).Draw(t, label)
			}
			switch kind {
			case model.MuxStepStart:
				// Mostly a fresh id; sometimes a reused one (DuplicateRequest).
				var fresh []string
				for _, id := range requestIDs {
					if !used[id] {
						fresh = append(fresh, id)
					}
				}
				pool := requestIDs
				if len(fresh) > 0 && rapid.IntRange(0, 9).Draw(t, fmt.Sprintf("fresh%d", i)) > 0 {
					pool = fresh
				}
				s.RequestID = rapid.SampledFrom(pool).Draw(t, fmt.Sprintf("request%d", i))
				used[s.RequestID] = true
			case model.MuxStepCancel:
				s.RequestID = near(active, requestIDs, fmt.Sprintf("target%d", i))
				s.CancellationID = rapid.SampledFrom([]string{"c1", "c2", "c3", "r1"}).Draw(t, fmt.Sprintf("cancellation%d", i))
			case model.MuxStepResult, model.MuxStepTampered:
				s.RequestID = near(active, requestIDs, fmt.Sprintf("result%d", i))
			case model.MuxStepCancellationResult:
				// Mostly the disposition of the live cancellation; sometimes a stale or
				// foreign one (CancellationResultMismatch).
				s.CancellationID, s.RequestID, s.Tool = cancelID, active, fatalerool
				if cancelID == "" || active == "" || rapid.IntRange(0, 9).Draw(t, fmt.Sprintf("faithful%d", i)) == 0 {
					s.CancellationID = near(cancelID, []string{"c1", "c2", "c3"}, fmt.Sprintf("disposition%d", i))
					s.RequestID = near(active, requestIDs, fmt.Sprintf("dtarget%d", i))
					s.Tool = rapid.SampledFrom([]string{fatalerool, fatalerool, muxOther}).Draw(t, fmt.Sprintf("dtool%d", i))
				}
				outcomes, ok := outcomesByPhase[m.Phase]
				if !ok {
					outcomes = []string{model.MuxAcknowledged, model.MuxTooLate, model.MuxUnsupported}
				}
				s.Outcome = rapid.SampledFrom(outcomes).Draw(t, fmt.Sprintf("outcome%d", i))
			case model.MuxStepOther:
				s.Message = rapid.SampledFrom([]string{"invoke", "cancel", "close_session"}).Draw(t, fmt.Sprintf("message%d", i))
			}
			if s.Kind == model.MuxStepCancellationResult && s.CancellationID == s.RequestID {
				s.CancellationID = "c1" // a disposition cannot be built with equal ids
			}
			want := m.Step(s)
			got := impl.step(t, s)
			if got.Err != want.Err || got.Sent != want.Sent || !slices.Equal(got.Events, want.Events) {
				t.Fatalf("step %d %+v: implementation %+v, model %+v", i, s, got, want)
			}
			if p := muxPhases[impl.c.Phase()]; p != m.Phase {
				t.Fatalf("step %d %+v: implementation phase %s, model phase %s", i, s, p, m.Phase)
			}
			switch {
			case s.Kind == model.MuxStepStart && want.Sent != "":
				active = s.RequestID
			case s.Kind == model.MuxStepCancel && want.Sent != "":
				cancelID = s.CancellationID
			}
			if m.Phase == model.MuxIdle {
				active = ""
			}
			if m.Phase == model.MuxStopped || m.Phase == model.MuxClosed {
				break // everything after the end is ignored by both
			}
		}
	}
	// Several rounds of the default number of checks: each run is short and cheap.
	for round := range 5 {
		t.Run(fmt.Sprintf("round%d", round), func(t *testing.T) { rapid.Check(t, property) })
	}
}

// Spec: TRN-051, TRN-052, TRN-053, TRN-054, TRN-055, TRN-057, TRN-062
// The worker sequences of the reference's ordering table, with their expected outcomes
// written out: both the model and the coordinator must produce exactly these.
func TestMultiplexOrderings(t *testing.T) {
	start := model.MuxStep{Kind: model.MuxStepStart, RequestID: "r1"}
	cancel := model.MuxStep{Kind: model.MuxStepCancel, RequestID: "r1", CancellationID: "c1"}
	result := model.MuxStep{Kind: model.MuxStepResult, RequestID: "r1"}
	disposition := func(o string) model.MuxStep {
		return model.MuxStep{Kind: model.MuxStepCancellationResult, CancellationID: "c1", RequestID: "r1", Tool: fatalerool, Outcome: o}
	}
	cases := []struct {
		name  string
		steps []model.MuxStep
		last  model.MuxOutcome
	}{
		{"result", []model.MuxStep{start, result},
			model.MuxOutcome{Events: []string{"invocation:completed:r1"}}},
		{"acknowledged", []model.MuxStep{start, cancel, disposition(model.MuxAcknowledged)},
			model.MuxOutcome{Events: []string{"cancellation:acknowledged", "invocation:cancelled:r1"}}},
		{"result wins", []model.MuxStep{start, cancel, result, disposition(model.MuxTooLate)},
			model.MuxOutcome{Events: []string{"invocation:completed:r1", "cancellation:too_late"}}},
		{"unsupported then result", []model.MuxStep{start, cancel, disposition(model.MuxUnsupported), result},
			model.MuxOutcome{Events: []string{"invocation:completed:r1"}}},
		{"cancel after delivered result", []model.MuxStep{start, result, cancel},
			model.MuxOutcome{Err: "NoActiveInvocation"}},
		{"second cancel after unsupported", []model.MuxStep{start, cancel, disposition(model.MuxUnsupported),
			{Kind: model.MuxStepCancel, RequestID: "r1", CancellationID: "c2"}},
			model.MuxOutcome{Err: "Protocol:CancellationAlreadyRequested"}},
		{"acknowledged after result", []model.MuxStep{start, cancel, result, disposition(model.MuxAcknowledged)},
			model.MuxOutcome{Events: []string{"invocation:error:Protocol:CancellationAcknowledgedAfterResult",
				"cancellation:error:Protocol:CancellationAcknowledgedAfterResult"}}},
		{"too_late before result", []model.MuxStep{start, cancel, disposition(model.MuxTooLate)},
			model.MuxOutcome{Events: []string{"invocation:error:Protocol:CancellationTooLateBeforeResult",
				"cancellation:error:Protocol:CancellationTooLateBeforeResult"}}},
		{"unsupported after result", []model.MuxStep{start, cancel, result, disposition(model.MuxUnsupported)},
			model.MuxOutcome{Events: []string{"invocation:error:Protocol:CancellationUnsupportedAfterResult",
				"cancellation:error:Protocol:CancellationUnsupportedAfterResult"}}},
		{"duplicate result, delivered", []model.MuxStep{start, result, result},
			model.MuxOutcome{}}, // Idle: fatal with no waiter
		{"duplicate result, buffered", []model.MuxStep{start, cancel, result, result},
			model.MuxOutcome{Events: []string{"invocation:error:Protocol:DuplicateResult", "cancellation:error:Protocol:DuplicateResult"}}},
		{"result after acknowledgement", []model.MuxStep{start, cancel, disposition(model.MuxAcknowledged), result},
			model.MuxOutcome{}},
		{"duplicate disposition after unsupported", []model.MuxStep{start, cancel, disposition(model.MuxUnsupported), disposition(model.MuxUnsupported)},
			model.MuxOutcome{Events: []string{"invocation:error:UnexpectedMessage:unsolicited cancellation_result"}}},
		{"unsolicited disposition", []model.MuxStep{start, disposition(model.MuxTooLate)},
			model.MuxOutcome{Events: []string{"invocation:error:UnexpectedMessage:unsolicited cancellation_result"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			outcomes := runMux(t, c.steps)
			got := outcomes[len(outcomes)-1]
			if got.Err != c.last.Err || got.Sent != c.last.Sent || !slices.Equal(got.Events, c.last.Events) {
				t.Fatalf("last outcome %+v, want %+v", got, c.last)
			}
		})
	}
	// After a fatal frame in Idle the transport is stopped even though nobody waited.
	m := model.NewMultiplex(fatalerool, muxMaxCalls)
	for _, s := range []model.MuxStep{start, result, result} {
		m.Step(s)
	}
	if m.Phase != model.MuxStopped {
		t.Fatalf("phase %s after a result in Idle", m.Phase)
	}
}
