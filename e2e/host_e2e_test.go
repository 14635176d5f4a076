package e2e_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lukechampine.com/blake3"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/schema"
	"github.com/splashv5/conform/impl/script"
	"github.com/splashv5/conform/impl/transport"
	"github.com/splashv5/conform/impl/transport/transporttest"
	"github.com/splashv5/conform/impl/worker"
	"github.com/splashv5/conform/impl/worker/workertest"
	"github.com/splashv5/conform/internal/childproc"
)

// scriptSession returns a runtime configured by cfg and a script session over it.
func scriptSession(t testing.TB, cfg host.Config) (*host.Runtime, *host.ScriptSession) {
	t.Helper()
	rt, err := host.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := host.NewScriptSession(rt, script.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return rt, sess
}

// evalSuspended evaluates src and requires it to suspend on a promise; it returns the promise's
// operation.
func evalSuspended(t testing.TB, sess *host.ScriptSession, src string) host.OperationID {
	t.Helper()
	ev, err := sess.Eval(src)
	if err != nil {
		t.Fatal(err)
	}
	if !ev.Suspended || len(ev.Diagnostics) != 0 {
		t.Fatalf("the script did not suspend cleanly: %+v", ev)
	}
	return host.OperationID(ev.Awaiting)
}

// supervised starts the reference worker on the two cancellable slow tools, so that it runs its
// cancellable driver, and couples a multiplexed transport on its pipes to its process
// supervisor.
func supervised(t testing.TB, session string, clock transport.Clock, deadline time.Duration) (*transport.SupervisedSession, *transport.Process, *workertest.Output) {
	t.Helper()
	p, stderr := startWorker(t, session, clock)
	m := manifest(t, session, 4, protocol.TextGrant(profile.ToolSlowCancellable), protocol.TextGrant(profile.ToolSlowUncooperative))
	mux, err := transport.NewMultiplexed(m, p.HostAuthenticator(), p.Output(), p.Input())
	if err != nil {
		t.Fatal(err)
	}
	s, err := transport.NewSupervisedSession(mux, p, deadline)
	if err != nil {
		t.Fatal(err)
	}
	return s, p, stderr
}

// pollTerminal waits and polls the supervised session, applying each worker event to rt, until
// a poll is not a pending worker event.
func pollTerminal(t testing.TB, s *transport.SupervisedSession, rt *host.Runtime, stderr *workertest.Output) transport.SupervisedPoll {
	t.Helper()
	for {
		if err := s.Wait(waitCtx(t)); err != nil {
			t.Fatalf("waiting for the worker: %v (worker: %s)", err, stderr)
		}
		p, err := s.PollExternalTool(rt)
		if err != nil {
			t.Fatalf("polling: %v (worker: %s)", err, stderr)
		}
		if p.Kind != transport.SupervisedWorker || p.Poll.Kind != transport.ExternalPending {
			return p
		}
	}
}

// closeGracefully closes an idle supervised session and requires the worker to exit 0.
func closeGracefully(t testing.TB, s *transport.SupervisedSession, stderr *workertest.Output) {
	t.Helper()
	sup, err := s.Close()
	if err != nil {
		t.Fatalf("close: %v (worker: %s)", err, stderr)
	}
	term := sup.(*transport.Process).Wait()
	if !term.Exited || term.ExitCode != worker.ExitClean || term.Forced {
		t.Fatalf("the worker ended with %s after close_session (stderr: %q)", term, stderr)
	}
}

// auditRow is the part of an audit event the tests compare.
type auditRow struct {
	Sequence    uint64
	Tool        string
	InputBytes  int
	OutputBytes int
	Outcome     host.AuditOutcome
}

// wantAudit compares the runtime's audit ring with want, event sequences counted from 1.
func wantAudit(t testing.TB, rt *host.Runtime, want ...auditRow) {
	t.Helper()
	got := rt.Audit()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		g := got[i]
		ok = g.EventSequence == uint64(i+1) && g.Sequence == want[i].Sequence && g.Tool == want[i].Tool &&
			g.InputBytes == want[i].InputBytes && g.OutputBytes == want[i].OutputBytes && g.Outcome == want[i].Outcome
	}
	if !ok {
		var b strings.Builder
		for _, e := range got {
			b.WriteString("\n  ")
			b.Write(e.AppendJSON(nil))
		}
		t.Fatalf("audit:%s\nwant %+v", b.String(), want)
	}
}

// The full path of one external call: a script refuses to call an external tool synchronously,
// starts it and suspends on its promise; the host claims the operation, dispatches it to the
// reference worker over the supervised multiplexed transport, streams two progress chunks into
// the runtime (a third one meets the stream policy's limit), applies the worker's authenticated
// result, and resumes the script, which checks the answer and returns it.
//
// Spec: RUN-004, RUN-005, RUN-032, RUN-033, RUN-050, RUN-053, RUN-055, RUN-071, RUN-078, RUN-079, RUN-085
// Spec: RUN-121, RUN-122, RUN-140, RUN-151, RUN-190, RUN-191
// Spec: TRN-040, TRN-043, TRN-050, TRN-070, TRN-074, TRN-082, TRN-084, TRN-086, TRN-093
// Spec: SCR-040, SCR-060, SCR-062, SCR-067, SCR-068, PRF-016, WRK-090
func TestScriptExternalToolCompletesThroughSupervisedWorker(t *testing.T) {
	rt, sess := scriptSession(t, host.Config{})
	stream := host.StreamPolicy{MaxChunks: 2, MaxChunkBytes: 64, MaxTotalBytes: 128, MaxEmittedBytes: 128}
	if err := rt.RegisterExternalTool(host.NewPolicy(profile.ToolSlowCancellable).WithStream(stream), host.Metadata{}); err != nil {
		t.Fatal(err)
	}
	const src = `use mod.tool
use mod.std.assert
let direct = try tool.call("conf.slow.cancellable", "5") catch "refused"
let pending = tool.start("conf.slow.cancellable", "25")
let answer = pending.await()
assert(answer == "done 25")
[direct, answer]
`
	id := evalSuspended(t, sess, src)

	inv, ok := rt.ClaimNextExternal()
	if !ok || inv.ID != id || inv.Name != profile.ToolSlowCancellable || inv.Input != "25" || inv.CallIndex != 1 ||
		inv.Attempt != 1 || inv.Stream == nil || *inv.Stream != stream {
		t.Fatalf("claimed %+v, %v", inv, ok)
	}
	// The refused synchronous call consumed reservation sequence 0, so the start is sequence 1.
	if !strings.HasPrefix(inv.IdempotencyKey, "splash-") || !strings.HasSuffix(inv.IdempotencyKey, "-1") {
		t.Fatalf("idempotency key %q", inv.IdempotencyKey)
	}

	s, _, stderr := supervised(t, "e2e-complete", nil, 30*time.Second)
	if err := s.StartExternalTool(inv, "request-1"); err != nil {
		t.Fatal(err)
	}
	if got, ok := s.ActiveExternalID(); !ok || got != id {
		t.Fatalf("active operation %v, %v", got, ok)
	}
	// Between claim and completion the host streams its own progress into the runtime: protocol
	// v5 carries no chunk frames, so these are host observations, released to the host only.
	for i, text := range []string{"invoke sent as request-1", "worker e2e-complete running"} {
		c, err := rt.PushExternalChunk(id, text)
		if err != nil || c.ChunkIndex != i+1 || c.Text != text || c.ID != id {
			t.Fatalf("chunk %d: %+v, %v", i+1, c, err)
		}
	}
	if _, err := rt.PushExternalChunk(id, "one too many"); !errors.Is(err, host.ErrStreamLimitExceeded) {
		t.Fatalf("third chunk: %v", err)
	}
	if info, _ := rt.Operation(id); info.State != host.StateClaimed || info.Chunks != 2 {
		t.Fatalf("after streaming: %+v", info)
	}

	p := pollTerminal(t, s, rt, stderr)
	if p.Kind != transport.SupervisedWorker || p.Poll.Kind != transport.ExternalCompleted ||
		p.Poll.Settlement.ID != id || !p.Poll.Settlement.Awaited || p.Poll.Settlement.Output != "done 25" {
		t.Fatalf("poll %+v", p)
	}
	ev, err := sess.Resume(p.Poll.Settlement)
	if err != nil || ev == nil {
		t.Fatalf("resume: %v, %v", ev, err)
	}
	want := script.Array(script.String("refused"), script.String("done 25"))
	if !ev.Completed() || !ev.Succeeded() || len(ev.Diagnostics) != 0 || !script.Equal(ev.Value, want) {
		t.Fatalf("script ended with %s, diagnostics %v", ev.Value, ev.Diagnostics)
	}
	if _, err := rt.PushExternalChunk(id, "late"); !errors.Is(err, host.ErrAlreadyCompleted) {
		t.Fatalf("chunk after completion: %v", err)
	}
	tool := profile.ToolSlowCancellable
	wantAudit(t, rt,
		auditRow{Sequence: 0, Tool: tool, InputBytes: 1, Outcome: host.OutcomeDenied},
		auditRow{Sequence: 1, Tool: tool, InputBytes: 24, OutputBytes: 24, Outcome: host.OutcomeStreamed},
		auditRow{Sequence: 1, Tool: tool, InputBytes: 27, OutputBytes: 27, Outcome: host.OutcomeStreamed},
		auditRow{Sequence: 1, Tool: tool, InputBytes: 12, Outcome: host.OutcomeStreamDenied},
		auditRow{Sequence: 1, Tool: tool, InputBytes: 2, OutputBytes: 7, Outcome: host.OutcomeAllowed},
	)
	closeGracefully(t, s, stderr)
}

// A script awaits a long slow call; the host asks the runtime for a cancellation and sends it
// to the worker, whose cancellable adapter acknowledges it. Only that authenticated
// acknowledgement confirms the cancellation in the runtime, and the script's await raises the
// cancelled tool error. The worker session stays healthy and closes cleanly.
//
// Spec: RUN-055, RUN-130, RUN-131, RUN-132, RUN-151, RUN-191
// Spec: TRN-052, TRN-072, TRN-073, TRN-074, TRN-083, TRN-084, TRN-086
// Spec: SCR-042, SCR-044, SCR-065, SCR-068, PRF-016, CAN-016, CAN-024
func TestScriptExternalToolCancellationAcknowledgedByWorker(t *testing.T) {
	rt, sess := scriptSession(t, host.Config{})
	if err := rt.RegisterExternalTool(host.NewPolicy(profile.ToolSlowCancellable), host.Metadata{}); err != nil {
		t.Fatal(err)
	}
	id := evalSuspended(t, sess, "use mod.tool\nlet p = tool.start(\"conf.slow.cancellable\", \"60000\")\np.await()\n")
	inv, ok := rt.ClaimNextExternal()
	if !ok || inv.ID != id {
		t.Fatalf("claimed %+v, %v", inv, ok)
	}
	s, _, stderr := supervised(t, "e2e-cancel", transporttest.NewManualClock(), time.Minute)
	if err := s.StartExternalTool(inv, "request-1"); err != nil {
		t.Fatal(err)
	}
	req, err := rt.RequestExternalCancellation(id)
	if err != nil || req.ID != id || req.Name != inv.Name || req.IdempotencyKey != inv.IdempotencyKey {
		t.Fatalf("cancellation request %+v, %v", req, err)
	}
	// Requested is not cancelled: the operation stays pending for the script.
	if info, _ := rt.Operation(id); info.State != host.StateCancellationRequested || info.Err != nil {
		t.Fatalf("after the request: %+v", info)
	}
	if err := s.RequestExternalToolCancellation(req, "cancel-1"); err != nil {
		t.Fatal(err)
	}
	p := pollTerminal(t, s, rt, stderr)
	if p.Kind != transport.SupervisedWorker || p.Poll.Kind != transport.ExternalCancelled || !p.Poll.Settlement.Awaited ||
		p.Poll.Settlement.Err == nil || p.Poll.Settlement.Err.Kind != host.ToolCancelled {
		t.Fatalf("poll %+v", p)
	}
	ev, err := sess.Resume(p.Poll.Settlement)
	if err != nil || ev == nil {
		t.Fatalf("resume: %v, %v", ev, err)
	}
	if ev.Status() != script.StatusFailed || len(ev.Diagnostics) != 1 ||
		ev.Diagnostics[0].Message != "tool call cancelled: external operation was reported cancelled" ||
		ev.Diagnostics[0].Origin != "mod.tool" {
		t.Fatalf("script ended with %s, diagnostics %v", ev.Value, ev.Diagnostics)
	}
	if _, err := rt.CompleteExternal(id, host.OK("done 60000")); !errors.Is(err, host.ErrAlreadyCompleted) {
		t.Fatalf("a result after the confirmation: %v", err)
	}
	tool := profile.ToolSlowCancellable
	wantAudit(t, rt,
		auditRow{Sequence: 0, Tool: tool, InputBytes: 5, Outcome: host.OutcomeCancellationRequested},
		auditRow{Sequence: 0, Tool: tool, InputBytes: 5, Outcome: host.OutcomeCancelled},
	)
	closeGracefully(t, s, stderr)
}

// A script awaits the uncooperative adapter, which ignores the host's cancellation. The
// invocation deadline elapses on the injected clock: the supervisor kills the worker's process
// group and the supervised session reports the invocation indeterminate. The runtime's
// operation stays pending (the cancellation is still only requested, never confirmed) until
// the runtime's own deferred deadline, on the same clock, settles it as timed out; the script
// sees the timeout, and the audit holds no cancellation.
//
// Spec: RUN-034, RUN-083, RUN-110, RUN-111, RUN-112, RUN-130, RUN-151
// Spec: TRN-062, TRN-084, TRN-085, TRN-087, TRN-088, TRN-094, TRN-095
// Spec: SCR-065, SCR-068
func TestScriptExternalToolDeadlineKillIsIndeterminate(t *testing.T) {
	clock := transporttest.NewManualClock()
	rt, sess := scriptSession(t, host.Config{Clock: clock.Now})
	const deadline = 5 * time.Second
	if err := rt.RegisterExternalTool(host.NewPolicy(profile.ToolSlowUncooperative).WithDeadline(deadline), host.Metadata{}); err != nil {
		t.Fatal(err)
	}
	id := evalSuspended(t, sess, "use mod.tool\nlet p = tool.start(\"conf.slow.uncooperative\", \"60000\")\np.await()\n")
	inv, _ := rt.ClaimNextExternal()
	if !inv.HasDeadline || inv.RemainingDeadlineMillis != 5000 {
		t.Fatalf("claimed %+v", inv)
	}
	s, proc, _ := supervised(t, "e2e-deadline", clock, deadline)
	if err := s.StartExternalTool(inv, "request-1"); err != nil {
		t.Fatal(err)
	}
	req, _ := rt.RequestExternalCancellation(id)
	if err := s.RequestExternalToolCancellation(req, "cancel-1"); err != nil {
		t.Fatal(err)
	}

	clock.Advance(deadline - time.Second)
	if ev, err := s.PollExternalToolEvent(); err != nil || ev.Kind != transport.SupervisedWorker || ev.Event.Kind != transport.ExternalPending {
		t.Fatalf("before the deadline: %+v, %v", ev, err)
	}
	if n, _, err := sess.ExpireTimedOutUpTo(8); n != 0 || err != nil {
		t.Fatalf("expiry before the deadline settled %d (%v)", n, err)
	}

	clock.Advance(time.Second)
	// The killed worker's stream ends, which the session resolves with its supervisor: the
	// deadline won, so the outcome is indeterminate (as an event or as the transport error).
	ev, err := s.WaitExternalToolEvent(waitCtx(t))
	var cause transport.IndeterminateCause
	var term *transport.Termination
	var te *transport.Error
	switch {
	case err == nil && ev.Kind == transport.SupervisedIndeterminate && ev.ExternalID == id:
		cause, term = ev.Cause, &ev.Termination
	case errors.As(err, &te) && te.Kind == transport.ErrIndeterminate && te.ExternalID == id:
		cause, term = te.Cause, te.Termination
	default:
		t.Fatalf("after the deadline: %+v, %v", ev, err)
	}
	if cause != transport.CauseDeadlineElapsed || term == nil || !term.Forced || term.Signal != "killed" {
		t.Fatalf("cause %s, termination %v", cause, term)
	}
	if !s.Poisoned() {
		t.Fatal("the session is still usable after the kill")
	}
	if childproc.GroupExists(proc.Pid()) {
		t.Fatalf("the worker's process group %d is still there", proc.Pid())
	}
	// Indeterminate is not cancelled: nothing was applied to the runtime.
	if info, _ := rt.Operation(id); info.State != host.StateCancellationRequested || info.Err != nil {
		t.Fatalf("after the kill: %+v", info)
	}

	n, resumed, err := sess.ExpireTimedOutUpTo(8)
	if err != nil || n != 1 || len(resumed) != 1 {
		t.Fatalf("expiry: %d, %v, %v", n, resumed, err)
	}
	got := resumed[0]
	if got.Status() != script.StatusFailed || len(got.Diagnostics) != 1 ||
		got.Diagnostics[0].Message != "tool call timed out: conf.slow.uncooperative exceeded its deferred deadline" {
		t.Fatalf("script ended with %s, diagnostics %v", got.Value, got.Diagnostics)
	}
	tool := profile.ToolSlowUncooperative
	wantAudit(t, rt,
		auditRow{Sequence: 0, Tool: tool, InputBytes: 5, Outcome: host.OutcomeCancellationRequested},
		auditRow{Sequence: 0, Tool: tool, InputBytes: 5, Outcome: host.OutcomeTimedOut},
	)
}

// nonceLabel computes the runtime's nonce label independently of package host (RUN-003).
func nonceLabel(session uint64, nonce []byte) string {
	h := blake3.New(32, nil)
	h.Write([]byte("splash-capability-session-nonce-v1"))
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], session)
	h.Write(n[:])
	binary.BigEndian.PutUint64(n[:], uint64(len(nonce)))
	h.Write(n[:])
	h.Write(nonce)
	return hex.EncodeToString(h.Sum(nil))
}

// durableContract is the executable contract the host registers for the durable profile tool;
// valueType is the JSON type its output schema requires of the recorded value's member n.
func durableContract(t testing.TB, valueType string) schema.Contract {
	t.Helper()
	in, err := canonjson.ParseValue([]byte(`{"type":"object","required":["value"],"properties":{
		"value":{"type":"object"},"mode":{"type":"string","enum":["succeed","fail"]}}}`), canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	out, err := canonjson.ParseValue([]byte(`{"type":"object","required":["operation_key","value"],
		"additionalProperties":false,"properties":{"operation_key":{"type":"string","minLength":1},
		"value":{"type":"object","required":["n"],"properties":{"n":{"type":"`+valueType+`"}}}}}`), canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	c, err := schema.NewContract(in, out)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// operationChannel opens session on a started worker for the durable profile tool and returns
// a one-shot operation transport over its pipes.
func operationChannel(t testing.TB, p *transport.Process, session string) *transport.OperationTransport {
	t.Helper()
	m := manifest(t, session, 2, protocol.JSONGrant(profile.ToolDurableRecord))
	auth := p.HostAuthenticator()
	ch := transport.NewChannel(p.Output(), p.Input(), canonjson.Preserve)
	if err := transport.SendOpenSession(auth, ch, m); err != nil {
		t.Fatal(err)
	}
	tr, err := transport.NewOperationTransport(m, auth, ch)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// durableCase is one run of the durable flow.
type durableCase struct {
	name       string
	pause      string // the persistence point at which the first worker is killed; "" reads the answer
	effect     bool   // whether the effect happens
	valueType  string // the type the output contract requires of the value's member n
	wantValue  float64
	wantOutput string          // the settled output, KEY standing for the operation key
	wantError  *host.ToolError // or the settled tool error
	wantAudit  host.AuditOutcome
	// authenticated reconciles through the runtime's authenticated bridge: the runtime seals the
	// request, the one-shot transport carries the pre-sealed line, and the runtime opens the raw
	// answer (RUN-162, TRN-099).
	authenticated bool
}

// A script starts the durable profile tool and suspends. The host dispatches the claimed
// operation, under its idempotency key, through the one-shot operation transport to a worker
// with a SQLite journal and an effect log. When the answer is read, the host resolves the
// operation with the worker's status. When the worker is killed while paused at a persistence
// point, before the answer is read, the dispatch fails and poisons the transport; a fresh worker
// session on the same journal and effect log then reconciles the key, and the runtime's
// reconciliation path settles the operation with the truthful state: succeeded when the effect
// was performed (the output passes the host's contract and the script reads it, unless the
// contract refuses it), failed when it was not. The authenticated variants let the runtime seal
// the reconciliation and open the worker's raw answer itself, over the same one-shot transport.
//
// Spec: RUN-003, RUN-005, RUN-016, RUN-021, RUN-080, RUN-140, RUN-160, RUN-161, RUN-190
// Spec: RUN-162
// Spec: TRN-001, TRN-011, TRN-020, TRN-113, TRN-022, TRN-023, TRN-093, TRN-097, TRN-098, TRN-099
// Spec: WRK-042, WRK-060, WRK-081, WRK-094, PRF-002, PRF-008, PRF-013, PRF-014, PRF-018, PRF-020
// Spec: SCR-062, SCR-063, SCR-065, SCR-068, SCR-082
func TestScriptDurableToolDispatchAndReconciliation(t *testing.T) {
	succeeded := `{"operation_key":"KEY","value":{"n":7}}`
	cases := []durableCase{
		{name: "answer-read", effect: true, valueType: "integer", wantValue: 7, wantOutput: succeeded, wantAudit: host.OutcomeAllowed},
		{name: "killed-after-effect", pause: "after-adapter", effect: true, valueType: "integer", wantValue: 7,
			wantOutput: succeeded, wantAudit: host.OutcomeAllowed},
		{name: "killed-after-effect-authenticated", pause: "after-adapter", effect: true, valueType: "integer", wantValue: 7,
			wantOutput: succeeded, wantAudit: host.OutcomeAllowed, authenticated: true},
		{name: "killed-before-effect-authenticated", pause: "after-admission", valueType: "integer",
			wantError: host.Failed(profile.AbsenceMessage), wantAudit: host.OutcomeFailed, authenticated: true},
		{name: "killed-before-effect", pause: "after-admission", valueType: "integer",
			wantError: host.Failed(profile.AbsenceMessage), wantAudit: host.OutcomeFailed},
		{name: "killed-after-effect-output-refused", pause: "after-adapter", effect: true, valueType: "string",
			wantError: host.Denied(`output does not match its schema: $["value"]["n"]: expected string`), wantAudit: host.OutcomeDenied},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runDurableCase(t, tc) })
	}
}

func runDurableCase(t *testing.T, tc durableCase) {
	dir := t.TempDir()
	effects := filepath.Join(dir, "effects.log")
	args := []string{"--journal", filepath.Join(dir, "journal.db"), "--effect-log", effects}

	nonce := []byte("e2e-session-nonce-of-32-bytes!!!")
	sn, err := host.NewSessionNonce(nonce)
	if err != nil {
		t.Fatal(err)
	}
	rt, sess := scriptSession(t, host.Config{SessionID: 7, SessionNonce: &sn})
	policy := host.JSONPolicy(profile.ToolDurableRecord)
	if err := rt.RegisterValidatedExternalJSONTool(policy, host.Metadata{}, durableContract(t, tc.valueType)); err != nil {
		t.Fatal(err)
	}
	const src = `use mod.tool
let receipt = tool.start_json("conf.durable.record", {value: {n: 7}, mode: "succeed"})
let record = receipt.await().parse_json()
record.value.n
`
	id := evalSuspended(t, sess, src)
	inv, _ := rt.ClaimNextExternal()
	key := "splash-" + nonceLabel(7, nonce) + "-0"
	if inv.ID != id || inv.IdempotencyKey != key || inv.Input != `{"value":{"n":7},"mode":"succeed"}` {
		t.Fatalf("claimed %+v, want key %s", inv, key)
	}
	payload, err := inv.WorkerPayload()
	if err != nil {
		t.Fatal(err)
	}
	dispatch, err := protocol.NewOperationDispatchRequest("e2e-durable-1", "dispatch-1", inv.Name, inv.IdempotencyKey, payload)
	if err != nil {
		t.Fatal(err)
	}
	effectLine := `{"kind":"effect","tool":"conf.durable.record","operation_key":"` + key + `","value":{"n":7}}` + "\n"

	var ev *script.Evaluation
	if tc.pause == "" {
		ev = dispatchAnswered(t, rt, sess, id, dispatch, args)
	} else {
		ev = dispatchBrokenThenReconciled(t, rt, sess, id, dispatch, args, tc.pause, tc.authenticated)
		// The fresh session found the effect of the killed one in the log and performed none.
		wantEffects(t, effects, tc.effect, effectLine)
	}

	info, _ := rt.Operation(id)
	if tc.wantError == nil {
		wantOut := strings.Replace(tc.wantOutput, "KEY", key, 1)
		if info.Err != nil || info.Output != wantOut {
			t.Fatalf("settled %+v, want output %s", info, wantOut)
		}
		if !ev.Completed() || len(ev.Diagnostics) != 0 || !script.Equal(ev.Value, script.Number(tc.wantValue)) {
			t.Fatalf("script ended with %s, diagnostics %v", ev.Value, ev.Diagnostics)
		}
	} else {
		if info.Err == nil || *info.Err != *tc.wantError || info.Output != "" {
			t.Fatalf("settled %+v, want %v", info, tc.wantError)
		}
		if ev.Status() != script.StatusFailed || len(ev.Diagnostics) != 1 || ev.Diagnostics[0].Message != tc.wantError.Error() {
			t.Fatalf("script ended with %s, diagnostics %v", ev.Value, ev.Diagnostics)
		}
	}
	audit := auditRow{Tool: inv.Name, InputBytes: len(inv.Input), Outcome: tc.wantAudit}
	if tc.wantAudit == host.OutcomeAllowed {
		audit.OutputBytes = len(info.Output)
	}
	wantAudit(t, rt, audit)
	wantEffects(t, effects, tc.effect, effectLine)
}

// dispatchAnswered dispatches through a worker that answers, resolves the operation with the
// worker's status and resumes the script.
func dispatchAnswered(t *testing.T, rt *host.Runtime, sess *host.ScriptSession, id host.OperationID,
	dispatch protocol.OperationDispatchRequest, args []string) *script.Evaluation {
	t.Helper()
	p, stderr := startWorker(t, dispatch.SessionID, nil, args...)
	tr := operationChannel(t, p, dispatch.SessionID)
	res, err := tr.DispatchOperation(dispatch)
	if err != nil || res.Status.State != protocol.StateSucceeded || res.OperationKey != dispatch.OperationKey || !tr.Consumed() {
		t.Fatalf("dispatch: %+v, %v (worker: %s)", res, err, stderr)
	}
	rec, err := rt.ResolveOperationStatus(id, res.Status)
	if err != nil || rec.Running || !rec.Settlement.Awaited {
		t.Fatalf("resolve: %+v, %v", rec, err)
	}
	ev, err := sess.Resume(rec.Settlement)
	if err != nil || ev == nil {
		t.Fatalf("resume: %v, %v", ev, err)
	}
	endBaselineSession(t, p, stderr)
	return ev
}

// dispatchBrokenThenReconciled dispatches through a worker that pauses at the persistence point
// pause and is killed there, then reconciles the operation key through a fresh worker session on
// the same journal and settles the operation through the runtime's reconciliation path.
func dispatchBrokenThenReconciled(t *testing.T, rt *host.Runtime, sess *host.ScriptSession, id host.OperationID,
	dispatch protocol.OperationDispatchRequest, args []string, pause string, authenticated bool) *script.Evaluation {
	t.Helper()
	p1, stderr1 := pausedWorker(t, dispatch.SessionID, pause, args...)
	tr1 := operationChannel(t, p1, dispatch.SessionID)
	done := make(chan error, 1)
	go func() {
		_, err := tr1.DispatchOperation(dispatch)
		done <- err
	}()
	stderr1.WaitFor(t, "fault: paused "+pause)
	if err := childproc.KillGroup(p1.Pid()); err != nil {
		t.Fatal(err)
	}
	err := <-done
	var le *jsonline.Error
	if !errors.Is(err, transport.ErrChannel) || !errors.As(err, &le) ||
		(le.Kind != jsonline.ErrUnexpectedEndOfStream && le.Kind != jsonline.ErrIO) {
		t.Fatalf("dispatch on a killed worker: %v", err)
	}
	if _, err := tr1.ReconcileOperation(protocol.OperationReconcileRequest{}); !errors.Is(err, transport.ErrPoisoned) {
		t.Fatalf("the broken transport was reused: %v", err)
	}
	if term, _ := p1.Terminate(); term.Signal != "killed" {
		t.Fatalf("first worker ended with %s", term)
	}
	// Nothing reached the runtime: the operation is still claimed, the script suspended.
	if info, _ := rt.Operation(id); info.State != host.StateClaimed {
		t.Fatalf("after the broken connection: %+v", info)
	}

	const session2 = "e2e-durable-2"
	p2, stderr2 := startWorker(t, session2, nil, args...)
	tr2 := operationChannel(t, p2, session2)
	if authenticated {
		ev := reconcileAuthenticated(t, rt, sess, id, p2, tr2, dispatch)
		endBaselineSession(t, p2, stderr2)
		return ev
	}
	req, err := rt.ExternalReconcileRequest(id, session2, "reconcile-1")
	if err != nil || req.Tool != dispatch.Tool || req.OperationKey != dispatch.OperationKey {
		t.Fatalf("reconcile request %+v, %v", req, err)
	}
	res, err := tr2.ReconcileOperation(req)
	if err != nil || !tr2.Consumed() {
		t.Fatalf("reconcile: %v (worker: %s)", err, stderr2)
	}
	running, ev, err := sess.ReconcileExternal(id, req, res)
	if err != nil || running || ev == nil {
		t.Fatalf("reconciliation: running %v, %v, %v", running, ev, err)
	}
	endBaselineSession(t, p2, stderr2)
	return ev
}

// reconcileAuthenticated has the runtime seal the reconciliation with the fresh worker's host
// authenticator, carries that line through the one-shot transport, and lets the script session
// open the raw answer (ReconcileAuthenticated) and resume the script.
func reconcileAuthenticated(t *testing.T, rt *host.Runtime, sess *host.ScriptSession, id host.OperationID,
	p *transport.Process, tr *transport.OperationTransport, dispatch protocol.OperationDispatchRequest) *script.Evaluation {
	t.Helper()
	auth := p.HostAuthenticator()
	rec, err := rt.PrepareAuthenticatedReconciliation(id, "reconcile-1", auth)
	if err != nil || rec.Request.SessionID != p.SessionID() || rec.Request.OperationKey != dispatch.OperationKey ||
		rec.Request.Tool != dispatch.Tool {
		t.Fatalf("authenticated reconcile request %+v, %v", rec.Request, err)
	}
	answer, err := tr.ExchangeSealed(rec.Line)
	if err != nil || !tr.Consumed() {
		t.Fatalf("exchange: %v", err)
	}
	frame, err := protocol.DecodeFrame(answer, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	running, ev, err := sess.ReconcileAuthenticated(id, rec.Request, auth, frame)
	if err != nil || running || ev == nil {
		t.Fatalf("authenticated reconciliation: running %v, %v, %v", running, ev, err)
	}
	// The opened answer consumed its sequence: replaying it fails to open.
	if _, err := rt.ReconcileAuthenticated(id, rec.Request, auth, frame); !errors.Is(err, protocol.ErrUnexpectedSequence) {
		t.Fatalf("a replayed answer: %v", err)
	}
	return ev
}

// endBaselineSession closes the worker's standard input at a frame boundary, which ends a
// baseline session cleanly, and requires exit status 0.
func endBaselineSession(t *testing.T, p *transport.Process, stderr *workertest.Output) {
	t.Helper()
	if err := p.CloseInput(); err != nil {
		t.Fatal(err)
	}
	if term := p.Wait(); !term.Exited || term.ExitCode != worker.ExitClean {
		t.Fatalf("worker ended with %s (stderr: %q)", term, stderr)
	}
}

// wantEffects requires the effect log to hold exactly line when effect is set, and nothing
// otherwise, besides the fence lines that record the fencing tokens shown to it (PRF-035).
func wantEffects(t testing.TB, path string, effect bool, line string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var data []byte
	for _, l := range bytes.SplitAfter(raw, []byte("\n")) {
		if !bytes.HasPrefix(l, []byte(`{"kind":"fence",`)) {
			data = append(data, l...)
		}
	}
	want := ""
	if effect {
		want = line
	}
	if string(data) != want {
		t.Fatalf("effect log %q, want %q", data, want)
	}
}
