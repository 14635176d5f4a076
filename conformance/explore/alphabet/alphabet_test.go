package alphabet_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance/explore/alphabet"
	"github.com/splashv5/conform/conformance/explore/learn"
	"github.com/splashv5/conform/conformance/explore/mealy"
	"github.com/splashv5/conform/impl/bootstrap"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/spec"
)

const sessionID = "explore-session"

func key(t *testing.T) *protocol.SessionKey {
	t.Helper()
	k, err := protocol.NewSessionKey(bytes.Repeat([]byte{7}, protocol.SessionKeyBytes))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// worker returns the worker-role authenticator that opens what the session sends.
func worker(t *testing.T, k *protocol.SessionKey) *protocol.Authenticator {
	t.Helper()
	a, err := protocol.NewAuthenticator(sessionID, k, protocol.RoleWorker, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func newSession(t *testing.T, k *protocol.SessionKey, needs ...alphabet.Need) *alphabet.Session {
	t.Helper()
	s, err := alphabet.NewSession(sessionID, k, canonjson.Preserve, needs...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSymbolsCiteExistingRequirements(t *testing.T) {
	for _, s := range alphabet.Symbols {
		if len(s.Spec) == 0 {
			t.Errorf("symbol %s cites no requirement", s.Name)
		}
		for _, id := range s.Spec {
			if _, ok := spec.Find(id); !ok {
				t.Errorf("symbol %s cites %s, which is not a requirement", s.Name, id)
			}
		}
	}
	if err := alphabet.Check([]alphabet.Name{alphabet.Invoke, alphabet.Invoke}); err == nil {
		t.Error("a repeated symbol passes Check")
	}
	if err := alphabet.Check([]alphabet.Name{"nope"}); err == nil {
		t.Error("an unknown symbol passes Check")
	}
}

// Spec: EXP-001 — a worker is queried only on the symbols its declared needs admit.
func TestNeedsSelectTheAlphabet(t *testing.T) {
	bare := alphabet.For()
	for _, n := range bare {
		s, _ := alphabet.Lookup(n)
		if len(s.Needs) != 0 {
			t.Errorf("a worker without needs gets %s, which needs %v", n, s.Needs)
		}
	}
	if slices.Contains(bare, alphabet.CancelCurrent) || slices.Contains(bare, alphabet.Dispatch) {
		t.Error("a worker without needs gets a cancel or a dispatch")
	}
	all := alphabet.For(alphabet.NeedDurable, alphabet.NeedCancel, alphabet.NeedCompensation, alphabet.NeedStoreFault)
	if len(all) != len(alphabet.Symbols) {
		t.Errorf("every need gives %d of %d symbols", len(all), len(alphabet.Symbols))
	}
	if got := alphabet.For(alphabet.NeedCompensation); slices.Contains(got, alphabet.CompensateScope) {
		t.Error("compensation without durable admits compensate_wrong_scope")
	}
}

// Spec: EXP-002 — frames are sealed by the wire core from the session's state, and each
// malformed variant departs from the well-formed frame in exactly its own way.
func TestConcretizedFramesOpenAsTheirSymbolSays(t *testing.T) {
	k := key(t)
	s := newSession(t, k, alphabet.NeedCancel)
	w := worker(t, k)
	open := func(n alphabet.Name) protocol.Message {
		t.Helper()
		a, err := s.Concretize(n)
		if err != nil {
			t.Fatal(err)
		}
		f, err := w.Open(a.Line)
		if err != nil {
			t.Fatalf("%s: the worker cannot open %s: %v", n, a.Line, err)
		}
		return f.Message
	}
	m := open(alphabet.OpenCancellable)
	om, ok := m.(protocol.OpenSessionMessage)
	if !ok || len(om.Manifest.Grants) != 1 || om.Manifest.Grants[0].Tool != "conf.slow.cancellable" {
		t.Fatalf("open_cancellable sent %#v", m)
	}
	slow := open(alphabet.InvokeSlow).(protocol.InvokeMessage)
	if slow.Invocation.Payload.Text != "60000" || slow.Invocation.Tool != "conf.slow.cancellable" {
		t.Fatalf("invoke_slow sent %+v", slow.Invocation)
	}
	c := open(alphabet.CancelCurrent).(protocol.CancelMessage)
	if c.Request.RequestID != slow.Invocation.RequestID || c.Request.CancellationID == slow.Invocation.RequestID {
		t.Fatalf("cancel_current names %q (cancellation %q), the running invocation is %q",
			c.Request.RequestID, c.Request.CancellationID, slow.Invocation.RequestID)
	}
	reused := open(alphabet.InvokeReusedID).(protocol.InvokeMessage)
	if reused.Invocation.RequestID != c.Request.CancellationID {
		t.Fatalf("invoke_reused_id uses %q, the last id used is %q", reused.Invocation.RequestID, c.Request.CancellationID)
	}
	unknown := open(alphabet.CancelUnknown).(protocol.CancelMessage)
	if strings.HasPrefix(unknown.Request.RequestID, "x-") && unknown.Request.RequestID != "x-unknown" {
		t.Fatalf("cancel_unknown names %q", unknown.Request.RequestID)
	}
	if cl := open(alphabet.CloseSession); cl.Type() != protocol.TypeCloseSession {
		t.Fatalf("close_session sent %s", cl.Type())
	}
	if r := open(alphabet.ResultFromHost); r.Type() != protocol.TypeResult {
		t.Fatalf("result_from_host sent %s", r.Type())
	}

	// The malformed variants: each fails with its own error kind and leaves the worker's
	// incoming sequence where it was, so the next well-formed frame still opens.
	for _, c := range []struct {
		n    alphabet.Name
		kind protocol.ErrorKind
	}{
		{alphabet.InvokeBadTag, protocol.ErrInvalidAuthenticationTag},
		{alphabet.InvokeWrongSeq, protocol.ErrUnexpectedSequence},
		{alphabet.InvokeForged, protocol.ErrUnknownSession},
	} {
		a, err := s.Concretize(c.n)
		if err != nil {
			t.Fatal(err)
		}
		_, err = w.Open(a.Line)
		if got, _ := protocol.KindOf(err); got != c.kind {
			t.Errorf("%s: the worker's error is %v, want %s", c.n, err, c.kind)
		}
		if _, err := protocol.DecodeFrame(a.Line, canonjson.Preserve); err != nil {
			t.Errorf("%s: the line is not a well-formed frame: %v", c.n, err)
		}
	}
	if m := open(alphabet.Invoke); m.Type() != protocol.TypeInvoke {
		t.Fatal("a well-formed frame after the malformed ones does not open")
	}
	if a, _ := s.Concretize(alphabet.EndOfInput); !a.EndInput || a.Line != nil {
		t.Fatalf("end_of_input gives %+v", a)
	}
}

func TestOverLimitAndDurableFrames(t *testing.T) {
	k := key(t)
	s := newSession(t, k, alphabet.NeedDurable, alphabet.NeedCompensation)
	w := worker(t, k)
	var grant protocol.CapabilityGrant
	for _, n := range []alphabet.Name{alphabet.OpenBaseline, alphabet.InvokeOverLimit, alphabet.Dispatch, alphabet.CompensateScope, alphabet.Reconcile} {
		a, err := s.Concretize(n)
		if err != nil {
			t.Fatal(err)
		}
		f, err := w.Open(a.Line)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		switch m := f.Message.(type) {
		case protocol.OpenSessionMessage:
			for _, g := range m.Manifest.Grants {
				if g.Tool == "conf.durable.record" {
					grant = g
				}
			}
			if grant.MaxCompensations != 1 {
				t.Fatalf("durable grant %+v, want one compensation", grant)
			}
		case protocol.InvokeMessage:
			if got := len(m.Invocation.Payload.Text); got != 4<<10+1 {
				t.Fatalf("over-limit input has %d bytes, want 4097", got)
			}
		case protocol.CompensateOperationMessage:
			fp, _ := grant.CompensationFingerprint()
			if m.Request.GrantFingerprint != fp || m.Request.TenantScope != "explore-wrong-scope" {
				t.Fatalf("compensation %+v: only the scope may be wrong", m.Request)
			}
		case protocol.ReconcileOperationMessage:
			if m.Request.OperationKey == "" || m.Request.OperationKey == "op-none" {
				t.Fatalf("reconcile names %q, not the dispatched key", m.Request.OperationKey)
			}
		}
	}
	if a, _ := s.Concretize(alphabet.StoreFault); a.Fault != alphabet.StoreFault || a.Line != nil {
		t.Fatalf("store_fault gives %+v", a)
	}
}

// Spec: EXP-003 — outputs are abstracted to answer kinds and outcomes, and the exit.
func TestAbstractOpensAnswersAndTracksInvocations(t *testing.T) {
	k := key(t)
	s := newSession(t, k, alphabet.NeedCancel)
	w := worker(t, k)
	for _, n := range []alphabet.Name{alphabet.OpenCancellable, alphabet.Invoke} {
		a, _ := s.Concretize(n)
		if _, err := w.Open(a.Line); err != nil {
			t.Fatal(err)
		}
	}
	seal := func(m protocol.Message) []byte {
		_, line, err := w.Seal(m)
		if err != nil {
			t.Fatal(err)
		}
		return line
	}
	res := protocol.ResultMessage{Result: protocol.ToolResult{ProtocolVersion: 5, SessionID: sessionID, RequestID: "x-1", Payload: protocol.TextPayload("done 0")}}
	out := s.Abstract(alphabet.Observation{Lines: [][]byte{seal(res)}, Exit: alphabet.Running})
	if out != (alphabet.Output{Answers: "result", Exit: alphabet.Running}) || out.String() != "result" {
		t.Fatalf("result abstracted to %+v (%s)", out, out)
	}
	// cancel_finished now names x-1.
	a, _ := s.Concretize(alphabet.CancelFinished)
	f, err := w.Open(a.Line)
	if err != nil {
		t.Fatal(err)
	}
	req := f.Message.(protocol.CancelMessage).Request
	if req.RequestID != "x-1" {
		t.Fatalf("cancel_finished names %q, want x-1", req.RequestID)
	}
	cr := protocol.CancellationResultMessage{Result: protocol.WorkerCancellationResult{ProtocolVersion: 5, SessionID: sessionID,
		CancellationID: req.CancellationID, RequestID: req.RequestID, Tool: req.Tool, Outcome: protocol.OutcomeTooLate}}
	out = s.Abstract(alphabet.Observation{Lines: [][]byte{seal(cr), []byte(`{"garbage":1}`)}, Exit: alphabet.ExitRejected})
	if out.Answers != "cancellation_result:too_late+invalid:Serialization" || out.Exit != alphabet.ExitRejected {
		t.Fatalf("got %+v", out)
	}
	if out.String() != "cancellation_result:too_late+invalid:Serialization exit 5" {
		t.Fatalf("label %q", out.String())
	}
	if alphabet.Silent.String() != "-" || (alphabet.Output{Exit: alphabet.Gone}).String() != "gone" {
		t.Fatal("silence and gone labels")
	}
}

func TestBootstrapAndNoKeyInText(t *testing.T) {
	k := key(t)
	s := newSession(t, k)
	var b bytes.Buffer
	if err := s.WriteBootstrap(&b); err != nil {
		t.Fatal(err)
	}
	got, err := bootstrap.Read(bytes.NewReader(b.Bytes()))
	if err != nil || got.SessionID != sessionID || !got.Key.Equal(k) {
		t.Fatalf("bootstrap reads back as %v, %v", got, err)
	}
	raw, _ := k.ExposeSecret()
	for _, text := range []string{fmt.Sprint(s), fmt.Sprintf("%v %+v %#v", s, s, s)} {
		if strings.Contains(text, fmt.Sprintf("%x", raw[:8])) || strings.Contains(text, string(raw[:8])) {
			t.Fatalf("the key shows in %q", text)
		}
	}
}

// Spec: EXP-005 — a failure class difference is SHOULD, anything else a MUST.
func TestCompareLevels(t *testing.T) {
	r := alphabet.Output{Answers: "result", Exit: alphabet.Running}
	cases := []struct {
		exp, obs alphabet.Output
		want     alphabet.Verdict
	}{
		{r, r, alphabet.Same},
		{alphabet.Output{Exit: 5}, alphabet.Output{Exit: 1}, alphabet.Advice},
		{alphabet.Output{Exit: 4}, alphabet.Output{Exit: 5}, alphabet.Advice},
		{alphabet.Output{Exit: 5}, alphabet.Output{Exit: 0}, alphabet.Violation},
		{alphabet.Output{Exit: 0}, alphabet.Output{Exit: alphabet.Killed}, alphabet.Violation},
		{alphabet.Output{Exit: 5}, alphabet.Output{Exit: alphabet.Killed}, alphabet.Violation},
		{alphabet.Output{Exit: 5}, alphabet.Silent, alphabet.Violation},
		{alphabet.Output{Exit: 5}, alphabet.Output{Exit: alphabet.Hung}, alphabet.Violation},
		{r, alphabet.Output{Answers: "result", Exit: 0}, alphabet.Violation},
		{r, alphabet.Output{Answers: "cancellation_result:too_late", Exit: alphabet.Running}, alphabet.Violation},
		{alphabet.Output{Answers: "result", Exit: 5}, alphabet.Output{Exit: 5}, alphabet.Violation},
	}
	for _, c := range cases {
		if got := alphabet.Compare(c.exp, c.obs); got != c.want {
			t.Errorf("Compare(%s, %s) = %s, want %s", c.exp, c.obs, got, c.want)
		}
	}
}

func run(t *testing.T, m *mealy.Machine[alphabet.Name, alphabet.Output], word ...alphabet.Name) string {
	t.Helper()
	out, ok := m.Run(word)
	if !ok {
		t.Fatalf("word %v leaves the alphabet", word)
	}
	var parts []string
	for _, o := range out {
		parts = append(parts, o.String())
	}
	return strings.Join(parts, " | ")
}

// Spec: EXP-014 — the expected machine follows the worker rules; each expectation below is
// read off chapters 13 and 14, not off the simulation.
func TestExpectedMachineFollowsTheChapters(t *testing.T) {
	small, err := alphabet.Expected([]alphabet.Name{alphabet.OpenBaseline, alphabet.Invoke, alphabet.EndOfInput})
	if err != nil {
		t.Fatal(err)
	}
	// fresh, opened, ended.
	if small.States() != 3 {
		t.Fatalf("baseline machine has %d states, want 3", small.States())
	}
	m, err := alphabet.Expected(alphabet.For(alphabet.NeedCancel, alphabet.NeedCompensation, alphabet.NeedDurable)[:0:0])
	if err == nil && m != nil {
		t.Fatal("an empty alphabet gave a machine")
	}
	var names []alphabet.Name
	for _, s := range alphabet.Symbols {
		if s.Simulated {
			names = append(names, s.Name)
		}
	}
	m, err = alphabet.Expected(names)
	if err != nil {
		t.Fatal(err)
	}
	A := alphabet.OpenBaseline
	C := alphabet.OpenCancellable
	cases := []struct {
		word []alphabet.Name
		want string
	}{
		// WRK-012: the first frame must be open_session.
		{[]alphabet.Name{alphabet.Invoke, alphabet.Invoke}, "exit 5 | gone"},
		// WRK-092: end of input before the opening frame is a transport failure.
		{[]alphabet.Name{alphabet.EndOfInput}, "exit 4"},
		// WRK-022, WRK-023: an invoke is answered by one result; end of input ends cleanly.
		{[]alphabet.Name{A, alphabet.Invoke, alphabet.Invoke, alphabet.EndOfInput}, "- | result | result | exit 0"},
		// AUZ-005: a reused request id is a duplicate.
		{[]alphabet.Name{A, alphabet.Invoke, alphabet.InvokeReusedID}, "- | result | exit 5"},
		{[]alphabet.Name{A, alphabet.InvokeReusedID}, "- | result"},
		// CAN-022: the baseline session rejects cancel and close_session.
		{[]alphabet.Name{A, alphabet.CloseSession}, "- | exit 5"},
		{[]alphabet.Name{A, alphabet.Invoke, alphabet.CancelFinished}, "- | result | exit 5"},
		// FRM-025..027 via WRK-021: an unauthenticated frame is a transport failure.
		{[]alphabet.Name{A, alphabet.InvokeBadTag}, "- | exit 4"},
		{[]alphabet.Name{C, alphabet.InvokeWrongSeq}, "- | exit 4"},
		{[]alphabet.Name{alphabet.InvokeForged}, "exit 4"},
		// WRK-022: open_session after the opening, and worker-only kinds, are unexpected.
		{[]alphabet.Name{A, alphabet.OpenAgain}, "- | exit 5"},
		{[]alphabet.Name{C, alphabet.ResultFromHost}, "- | exit 5"},
		// CAN-004, CAN-006, CAN-016: a running slow invocation acknowledges a cancel.
		{[]alphabet.Name{C, alphabet.InvokeSlow, alphabet.CancelCurrent, alphabet.CloseSession}, "- | - | cancellation_result:acknowledged | exit 0"},
		// CAN-008: after an acknowledgement nothing can be cancelled.
		{[]alphabet.Name{C, alphabet.InvokeSlow, alphabet.CancelCurrent, alphabet.CancelCurrent}, "- | - | cancellation_result:acknowledged | exit 5"},
		// CAN-005, CAN-010, WRK-092: while active, invoke and close are fatal, end of input too.
		{[]alphabet.Name{C, alphabet.InvokeSlow, alphabet.Invoke}, "- | - | exit 5"},
		{[]alphabet.Name{C, alphabet.InvokeSlow, alphabet.CloseSession}, "- | - | exit 5"},
		{[]alphabet.Name{C, alphabet.InvokeSlow, alphabet.EndOfInput}, "- | - | exit 4"},
		// CAN-006: a cancel naming another invocation than the running one.
		{[]alphabet.Name{C, alphabet.InvokeSlow, alphabet.CancelUnknown}, "- | - | exit 5"},
		// CAN-007, CAN-012: a finished invocation is too_late, once.
		{[]alphabet.Name{C, alphabet.Invoke, alphabet.CancelFinished, alphabet.CancelFinished}, "- | result | cancellation_result:too_late | exit 5"},
		{[]alphabet.Name{C, alphabet.Invoke, alphabet.CancelCurrent, alphabet.Invoke, alphabet.CancelCurrent}, "- | result | cancellation_result:too_late | result | cancellation_result:too_late"},
		// CAN-008: Idle(none).
		{[]alphabet.Name{C, alphabet.CancelCurrent}, "- | exit 5"},
		// CAN-009, CAN-024: close in Idle ends cleanly; the process is gone after.
		{[]alphabet.Name{C, alphabet.CloseSession, alphabet.Invoke}, "- | exit 0 | gone"},
		// CAN-023: the slow tool is not granted in a baseline session.
		{[]alphabet.Name{A, alphabet.InvokeSlow}, "- | exit 5"},
		// CAN-023: a cancellable session rejects a compensation; a baseline one refuses the scope.
		{[]alphabet.Name{C, alphabet.CompensateScope}, "- | exit 5"},
		{[]alphabet.Name{A, alphabet.CompensateScope}, "- | exit 5"},
		{[]alphabet.Name{A, alphabet.InvokeOverLimit}, "- | exit 5"},
	}
	for _, c := range cases {
		if got := run(t, m, c.word...); got != c.want {
			t.Errorf("%v: expected machine answers %q, the chapters say %q", c.word, got, c.want)
		}
	}
	if _, err := alphabet.Expected([]alphabet.Name{alphabet.OpenBaseline, alphabet.Dispatch}); err == nil {
		t.Error("an alphabet with dispatch (a durable outcome) gave a machine")
	}
	again, _ := alphabet.Expected(names)
	if !mealy.Equal(m, again) {
		t.Error("the expected machine is not deterministic")
	}
	t.Logf("expected machine over %d simulated symbols: %d states", len(names), m.States())
}

// Spec: EXP-011 — a mutated frame: refuse what the reference refuses, never crash, hang,
// exceed the frame limit or leak a secret.
func TestJudgeMutated(t *testing.T) {
	secret := bytes.Repeat([]byte{0xab, 0x01}, 16)
	refused := alphabet.Output{Exit: alphabet.ExitTransport}
	ok := alphabet.Output{Answers: "result", Exit: alphabet.Running}
	cases := []struct {
		name string
		step alphabet.MutatedStep
		want []string // substrings, one per problem
	}{
		{"both refuse", alphabet.MutatedStep{Reference: refused, Port: alphabet.Output{Exit: 1}, PortOutput: []byte("bad frame\n")}, nil},
		{"both answer", alphabet.MutatedStep{Reference: ok, Port: ok}, nil},
		{"port accepts", alphabet.MutatedStep{Reference: refused, Port: ok}, []string{"the reference refuses"}},
		{"port clean exit", alphabet.MutatedStep{Reference: refused, Port: alphabet.Output{Exit: 0}}, []string{"the reference refuses"}},
		{"crash", alphabet.MutatedStep{Reference: refused, Port: alphabet.Output{Exit: alphabet.Killed}}, []string{"the reference refuses", "crash"}},
		{"hang", alphabet.MutatedStep{Reference: ok, Port: alphabet.Output{Exit: alphabet.Hung}}, []string{"within the step's bound"}},
		{"long line", alphabet.MutatedStep{Reference: ok, Port: ok, PortOutput: bytes.Repeat([]byte("a"), protocol.MaxWireFrameBytes+1)}, []string{"frame limit"}},
		{"hex leak", alphabet.MutatedStep{Reference: refused, Port: refused, PortOutput: []byte("key=" + strings.ToUpper(fmt.Sprintf("%x", secret)))}, []string{"secret 1 appears in the port's output (hex)"}},
		{"raw leak", alphabet.MutatedStep{Reference: refused, Port: refused, PortOutput: append([]byte("x"), secret...)}, []string{"(raw)"}},
	}
	for _, c := range cases {
		got := alphabet.JudgeMutated(c.step, secret)
		if len(got) != len(c.want) {
			t.Errorf("%s: problems %q, want %d", c.name, got, len(c.want))
			continue
		}
		for i, w := range c.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: problem %q, want it to say %q", c.name, got[i], w)
			}
			if strings.Contains(strings.ToLower(got[i]), fmt.Sprintf("%x", secret[:4])) {
				t.Errorf("%s: a problem quotes the secret", c.name)
			}
		}
	}
}

// Spec: EXP-004, EXP-007 — learning over the worker alphabet recovers the expected machine
// exactly; the log shows how many fresh processes it would take.
func TestLearnerRecoversTheExpectedMachine(t *testing.T) {
	var names []alphabet.Name
	for _, s := range alphabet.Symbols {
		if s.Simulated {
			names = append(names, s.Name)
		}
	}
	want, err := alphabet.Expected(names)
	if err != nil {
		t.Fatal(err)
	}
	oracle := learn.Parallel(2, func(_ context.Context, w []alphabet.Name) ([]alphabet.Output, error) {
		out, _ := want.Run(w)
		return out, nil
	})
	got, stats, err := learn.Learn(context.Background(), oracle, learn.Config[alphabet.Name, alphabet.Output]{
		Inputs: names, Sink: alphabet.Sink,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !mealy.Equal(got, want) {
		w, _, _ := mealy.Distinguish(want, got)
		t.Fatalf("learned machine (%d states) differs from the expected one (%d states) on %v", got.States(), want.States(), w)
	}
	t.Logf("L*: %d symbols, %d states: %d queries (%d symbols sent; %d for equivalence), %d rounds",
		len(names), got.States(), stats.Queries, stats.Symbols, stats.EquivalenceQueries, stats.Rounds)
	got, stats, err = learn.LearnLSharp(context.Background(), oracle, learn.Config[alphabet.Name, alphabet.Output]{
		Inputs: names, Sink: alphabet.Sink,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !mealy.Equal(got, want) {
		t.Fatalf("L# learned a machine (%d states) that differs from the expected one", got.States())
	}
	t.Logf("L#: %d symbols, %d states: %d queries (%d symbols sent; %d for equivalence), %d rounds",
		len(names), got.States(), stats.Queries, stats.Symbols, stats.EquivalenceQueries, stats.Rounds)

	// A port whose close_session in an active cancellable session is accepted shows a MUST
	// difference on the shortest word that reaches it.
	port := want.Clone()
	active := port.StateAfter([]alphabet.Name{alphabet.OpenCancellable, alphabet.InvokeSlow})
	ci := port.Index(alphabet.CloseSession)
	port.Out[active][ci] = alphabet.Output{Exit: alphabet.ExitClean}
	diffs, err := mealy.Differences(want, port, 0)
	if err != nil || len(diffs) != 1 {
		t.Fatalf("%d differences (%v), want 1", len(diffs), err)
	}
	d := diffs[0]
	if !slices.Equal(d.Word, []alphabet.Name{alphabet.OpenCancellable, alphabet.InvokeSlow, alphabet.CloseSession}) {
		t.Fatalf("difference shown by %v", d.Word)
	}
	if v := alphabet.Compare(d.Expected[2], d.Observed[2]); v != alphabet.Violation {
		t.Fatalf("verdict %s, want MUST", v)
	}
}
