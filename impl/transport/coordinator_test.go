package transport_test

import (
	"errors"
	"io"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
)

// coord drives a Coordinator with a worker authenticator on the other side: the worker opens
// every line the coordinator emits (so host sequences and kinds are checked) and seals every
// frame fed to it.
type coord struct {
	t      *testing.T
	c      *transport.Coordinator
	worker *protocol.Authenticator
}

func newCoord(t *testing.T) *coord {
	t.Helper()
	host, worker := authPair(t, testSession)
	c, line, err := transport.NewCoordinator(testManifest(t), host)
	if err != nil {
		t.Fatal(err)
	}
	f, err := worker.Open(line)
	if err != nil || f.Sequence != 1 || f.Message.Type() != protocol.TypeOpenSession {
		t.Fatalf("first line %q: %v (sequence %d)", line, err, f.Sequence)
	}
	if c.Phase() != transport.PhaseIdle {
		t.Fatalf("phase %s after construction", c.Phase())
	}
	return &coord{t: t, c: c, worker: worker}
}

func (k *coord) start(requestID string) {
	k.t.Helper()
	out, err := k.c.Start(textInvocation(k.t, requestID, "input"))
	if err != nil {
		k.t.Fatalf("start %s: %v", requestID, err)
	}
	openAs(k.t, k.worker, out.Line, protocol.TypeInvoke)
	if len(out.Events) != 0 {
		k.t.Fatalf("start produced events %+v", out.Events)
	}
}

func (k *coord) cancel(cancellationID, requestID string) {
	k.t.Helper()
	out, err := k.c.Cancel(cancellationID, requestID, toolText)
	if err != nil {
		k.t.Fatalf("cancel %s: %v", cancellationID, err)
	}
	m := openAs(k.t, k.worker, out.Line, protocol.TypeCancel).(protocol.CancelMessage)
	if m.Request.CancellationID != cancellationID || m.Request.RequestID != requestID || m.Request.Tool != toolText {
		k.t.Fatalf("cancel frame %+v", m.Request)
	}
}

func (k *coord) close() {
	k.t.Helper()
	out, err := k.c.Close()
	if err != nil {
		k.t.Fatal(err)
	}
	openAs(k.t, k.worker, out.Line, protocol.TypeCloseSession)
}

// recv seals m as the next worker frame and feeds it.
func (k *coord) recv(m protocol.Message) transport.Output {
	k.t.Helper()
	f, _ := seal(k.t, k.worker, m)
	return k.c.Receive(f)
}

// enter drives a fresh coordinator into one of the table's states, with invocation r1 and
// cancellation c1.
func (k *coord) enter(state string) {
	k.t.Helper()
	switch state {
	case "Idle":
	case "A":
		k.start("r1")
	case "AC":
		k.start("r1")
		k.cancel("c1", "r1")
	case "ACR":
		k.start("r1")
		k.cancel("c1", "r1")
		if out := k.recv(textResult(k.t, "r1", "out")); len(out.Events) != 0 || !out.ReadNext {
			k.t.Fatalf("buffering result: %+v", out)
		}
	case "Closing":
		k.close()
	default:
		k.t.Fatalf("unknown state %s", state)
	}
}

// waiters lists the targets that are pending in a table state.
func waiters(state string) []transport.EventTarget {
	switch state {
	case "A":
		return []transport.EventTarget{transport.TargetInvocation}
	case "AC", "ACR":
		return []transport.EventTarget{transport.TargetInvocation, transport.TargetCancellation}
	case "Closing":
		return []transport.EventTarget{transport.TargetClose}
	}
	return nil
}

// wantFatal checks a fatal step taken in state: every pending waiter gets the one stopping
// error, which satisfies check; the coordinator is stopped and refuses every command with
// Unavailable (TRN-047, TRN-061).
func (k *coord) wantFatal(state string, out transport.Output, check func(error) bool) {
	k.t.Helper()
	if k.c.Phase() != transport.PhaseStopped {
		k.t.Fatalf("phase %s, want Stopped", k.c.Phase())
	}
	failure := k.c.Failure()
	if failure == nil || !check(failure) {
		k.t.Fatalf("stopping error %v does not match", failure)
	}
	if out.ReadNext || out.Line != nil {
		k.t.Fatalf("fatal step asked for more I/O: %+v", out)
	}
	want := waiters(state)
	if len(out.Events) != len(want) {
		k.t.Fatalf("fatal in %s: events %+v, want targets %v", state, out.Events, want)
	}
	for i, e := range out.Events {
		if e.Target != want[i] || e.Err != failure {
			k.t.Fatalf("fatal in %s: event %d = %+v, want target %d with the stopping error", state, i, e, want[i])
		}
	}
	if _, err := k.c.Start(textInvocation(k.t, "r9", "x")); !errors.Is(err, transport.ErrUnavailable) {
		k.t.Fatalf("start after stop: %v", err)
	}
	if _, err := k.c.Cancel("c9", "r1", toolText); !errors.Is(err, transport.ErrUnavailable) {
		k.t.Fatalf("cancel after stop: %v", err)
	}
	if _, err := k.c.Close(); !errors.Is(err, transport.ErrUnavailable) {
		k.t.Fatalf("close after stop: %v", err)
	}
}

func isUnexpected(detail string) func(error) bool {
	return func(err error) bool {
		var e *transport.Error
		return errors.As(err, &e) && e.Kind == transport.ErrUnexpectedMessage && e.Detail == detail
	}
}

func isProtocol(kind protocol.ErrorKind) func(error) bool {
	return func(err error) bool { return errors.Is(err, transport.ErrProtocol) && errors.Is(err, kind) }
}

var allStates = []string{"Idle", "A", "AC", "ACR", "Closing"}

// Spec: TRN-050, TRN-051, TRN-055
// Row "result (valid)": Idle fatal UnexpectedMessage("result"); A delivers Completed and
// returns to Idle; AC validates and buffers (ACR); ACR fatal DuplicateResult; Closing fatal.
func TestCoordinatorRowValidResult(t *testing.T) {
	for _, state := range allStates {
		t.Run(state, func(t *testing.T) {
			k := newCoord(t)
			k.enter(state)
			out := k.recv(textResult(t, "r1", "out"))
			switch state {
			case "A":
				if k.c.Phase() != transport.PhaseIdle || !out.ReadNext || len(out.Events) != 1 {
					t.Fatalf("phase %s, output %+v", k.c.Phase(), out)
				}
				e := out.Events[0]
				if e.Target != transport.TargetInvocation || e.Err != nil || e.Outcome.Cancelled ||
					e.Outcome.Result.RequestID != "r1" || e.Outcome.Result.Payload.Text != "out" {
					t.Fatalf("event %+v", e)
				}
			case "AC":
				if k.c.Phase() != transport.PhaseResultBuffered || !out.ReadNext || len(out.Events) != 0 {
					t.Fatalf("phase %s, output %+v", k.c.Phase(), out)
				}
			case "ACR":
				k.wantFatal(state, out, isProtocol(protocol.ErrDuplicateResult))
			default:
				k.wantFatal(state, out, isUnexpected("result"))
			}
		})
	}
}

// Spec: TRN-055
// Row "result failing validate_result": fatal Protocol in A, AC and ACR (here a result for
// another request id, and a text result over the grant's output limit).
func TestCoordinatorRowInvalidResult(t *testing.T) {
	for _, state := range []string{"A", "AC", "ACR"} {
		t.Run(state+"/request", func(t *testing.T) {
			k := newCoord(t)
			k.enter(state)
			check := isProtocol(protocol.ErrRequestMismatch)
			if state == "ACR" {
				// The request already has an accepted result; the first failing check differs,
				// but it is still a fatal protocol error.
				check = func(err error) bool { return errors.Is(err, transport.ErrProtocol) }
			}
			k.wantFatal(state, k.recv(textResult(t, "r2", "out")), check)
		})
		t.Run(state+"/size", func(t *testing.T) {
			k := newCoord(t)
			k.enter(state)
			big := make([]byte, protocol.TextGrant(toolText).MaxOutputBytes+1)
			for i := range big {
				big[i] = 'x'
			}
			check := isProtocol(protocol.ErrOutputTooLarge)
			if state == "ACR" {
				check = isProtocol(protocol.ErrDuplicateResult)
			}
			k.wantFatal(state, k.recv(textResult(t, "r1", string(big))), check)
		})
	}
}

// Spec: TRN-052, TRN-056, TRN-057, TRN-062
// Row "cancellation_result: acknowledged": Idle fatal; A fatal "unsolicited"; AC resolves the
// cancellation with the acknowledgement, then the invocation as cancelled, and returns to
// Idle; ACR fatal CancellationAcknowledgedAfterResult; Closing fatal.
func TestCoordinatorRowAcknowledged(t *testing.T) {
	for _, state := range allStates {
		t.Run(state, func(t *testing.T) {
			k := newCoord(t)
			k.enter(state)
			out := k.recv(cancellationResult(t, "c1", "r1", toolText, protocol.OutcomeAcknowledged))
			switch state {
			case "AC":
				if k.c.Phase() != transport.PhaseIdle || !out.ReadNext || len(out.Events) != 2 {
					t.Fatalf("phase %s, output %+v", k.c.Phase(), out)
				}
				c, i := out.Events[0], out.Events[1]
				if c.Target != transport.TargetCancellation || c.Err != nil || c.Disposition.Outcome != protocol.OutcomeAcknowledged {
					t.Fatalf("first event %+v", c)
				}
				if i.Target != transport.TargetInvocation || i.Err != nil || !i.Outcome.Cancelled ||
					i.Outcome.Acknowledgement != c.Disposition {
					t.Fatalf("second event %+v", i)
				}
				// No result can follow an acknowledgement.
				k.wantFatal("Idle", k.recv(textResult(t, "r1", "late")), isUnexpected("result"))
			case "A":
				k.wantFatal(state, out, isUnexpected("unsolicited cancellation_result"))
			case "ACR":
				k.wantFatal(state, out, isProtocol(protocol.ErrCancellationAcknowledgedAfterResult))
			default:
				k.wantFatal(state, out, isUnexpected("cancellation_result"))
			}
		})
	}
}

// Spec: TRN-053, TRN-056, TRN-057
// Row "cancellation_result: too_late": Idle fatal; A fatal "unsolicited"; AC fatal
// CancellationTooLateBeforeResult; ACR delivers the buffered result first, then too_late, and
// returns to Idle; Closing fatal.
func TestCoordinatorRowTooLate(t *testing.T) {
	for _, state := range allStates {
		t.Run(state, func(t *testing.T) {
			k := newCoord(t)
			k.enter(state)
			out := k.recv(cancellationResult(t, "c1", "r1", toolText, protocol.OutcomeTooLate))
			switch state {
			case "ACR":
				if k.c.Phase() != transport.PhaseIdle || !out.ReadNext || len(out.Events) != 2 {
					t.Fatalf("phase %s, output %+v", k.c.Phase(), out)
				}
				i, c := out.Events[0], out.Events[1]
				if i.Target != transport.TargetInvocation || i.Err != nil || i.Outcome.Cancelled || i.Outcome.Result.Payload.Text != "out" {
					t.Fatalf("first event %+v, want the buffered result", i)
				}
				if c.Target != transport.TargetCancellation || c.Err != nil || c.Disposition.Outcome != protocol.OutcomeTooLate {
					t.Fatalf("second event %+v", c)
				}
			case "A":
				k.wantFatal(state, out, isUnexpected("unsolicited cancellation_result"))
			case "AC":
				k.wantFatal(state, out, isProtocol(protocol.ErrCancellationTooLateBeforeResult))
			default:
				k.wantFatal(state, out, isUnexpected("cancellation_result"))
			}
		})
	}
}

// Spec: TRN-042, TRN-054, TRN-056, TRN-057
// Row "cancellation_result: unsupported": Idle fatal; A fatal "unsolicited"; AC resolves the
// cancellation with unsupported and the invocation stays active with no further cancel
// possible; ACR fatal CancellationUnsupportedAfterResult; Closing fatal.
func TestCoordinatorRowUnsupported(t *testing.T) {
	for _, state := range allStates {
		t.Run(state, func(t *testing.T) {
			k := newCoord(t)
			k.enter(state)
			out := k.recv(cancellationResult(t, "c1", "r1", toolText, protocol.OutcomeUnsupported))
			switch state {
			case "AC":
				if k.c.Phase() != transport.PhaseActive || !out.ReadNext || len(out.Events) != 1 {
					t.Fatalf("phase %s, output %+v", k.c.Phase(), out)
				}
				if e := out.Events[0]; e.Target != transport.TargetCancellation || e.Err != nil || e.Disposition.Outcome != protocol.OutcomeUnsupported {
					t.Fatalf("event %+v", e)
				}
				// A second cancellation is refused by host authorization; nothing is sent and
				// the transport stays usable.
				out2, err := k.c.Cancel("c2", "r1", toolText)
				wantKind(t, err, transport.ErrProtocol)
				wantProtocolKind(t, err, protocol.ErrCancellationAlreadyRequested)
				if out2.Line != nil || k.c.Phase() != transport.PhaseActive {
					t.Fatalf("refused cancel: %+v, phase %s", out2, k.c.Phase())
				}
				// The result may still arrive and completes the invocation.
				out3 := k.recv(textResult(t, "r1", "after"))
				if len(out3.Events) != 1 || out3.Events[0].Outcome.Result.Payload.Text != "after" || k.c.Phase() != transport.PhaseIdle {
					t.Fatalf("result after unsupported: %+v, phase %s", out3, k.c.Phase())
				}
			case "A":
				k.wantFatal(state, out, isUnexpected("unsolicited cancellation_result"))
			case "ACR":
				k.wantFatal(state, out, isProtocol(protocol.ErrCancellationUnsupportedAfterResult))
			default:
				k.wantFatal(state, out, isUnexpected("cancellation_result"))
			}
		})
	}
}

// Spec: TRN-057
// Row "cancellation_result with a mismatched field": fatal CancellationResultMismatch in AC and
// ACR, for each field that can differ.
func TestCoordinatorRowMismatchedCancellationResult(t *testing.T) {
	cases := map[string]protocol.CancellationResultMessage{
		"cancellation id": cancellationResult(t, "c2", "r1", toolText, protocol.OutcomeAcknowledged),
		"request id":      cancellationResult(t, "c1", "r2", toolText, protocol.OutcomeAcknowledged),
		"tool":            cancellationResult(t, "c1", "r1", toolJSON, protocol.OutcomeAcknowledged),
	}
	for _, state := range []string{"AC", "ACR"} {
		for name, m := range cases {
			t.Run(state+"/"+name, func(t *testing.T) {
				k := newCoord(t)
				k.enter(state)
				k.wantFatal(state, k.recv(m), isProtocol(protocol.ErrCancellationResultMismatch))
			})
		}
	}
}

// Spec: TRN-058
// Row "any other message kind": fatal UnexpectedMessage(kind) in every state.
func TestCoordinatorRowOtherMessage(t *testing.T) {
	m := testManifest(t)
	others := []protocol.Message{
		protocol.OpenSessionMessage{Manifest: m},
		protocol.InvokeMessage{Invocation: textInvocation(t, "r5", "x")},
		protocol.CloseSessionMessage{ProtocolVersion: protocol.ProtocolVersion, Session: testSession},
	}
	for _, state := range allStates {
		for _, msg := range others {
			t.Run(state+"/"+string(msg.Type()), func(t *testing.T) {
				k := newCoord(t)
				k.enter(state)
				k.wantFatal(state, k.recv(msg), isUnexpected(string(msg.Type())))
			})
		}
	}
}

// Spec: TRN-058
// Row "auth failure (tag, reflected frame, sequence, session)": fatal Protocol in every state.
func TestCoordinatorRowAuthenticationFailure(t *testing.T) {
	type forge func(k *coord) protocol.Frame
	cases := map[string]struct {
		forge forge
		kind  protocol.ErrorKind
	}{
		"tag": {func(k *coord) protocol.Frame {
			f, _ := seal(k.t, k.worker, textResult(k.t, "r1", "out"))
			f.Tag[0] ^= 1
			return f
		}, protocol.ErrInvalidAuthenticationTag},
		"reflected": {func(k *coord) protocol.Frame {
			// A host-role frame (as if the host's own frame came back) fails the tag.
			host, _ := authPair(k.t, testSession)
			f, _ := seal(k.t, host, textResult(k.t, "r1", "out"))
			return f
		}, protocol.ErrInvalidAuthenticationTag},
		"sequence gap": {func(k *coord) protocol.Frame {
			seal(k.t, k.worker, textResult(k.t, "r1", "skipped"))
			f, _ := seal(k.t, k.worker, textResult(k.t, "r1", "out"))
			return f
		}, protocol.ErrUnexpectedSequence},
		"session": {func(k *coord) protocol.Frame {
			_, other := authPair(k.t, "session-2")
			r, _ := protocol.NewToolResult("session-2", "r1", protocol.TextPayload("out"))
			f, _ := seal(k.t, other, protocol.ResultMessage{Result: r})
			return f
		}, protocol.ErrInvalidAuthenticationTag},
	}
	for _, state := range allStates {
		for name, c := range cases {
			t.Run(state+"/"+name, func(t *testing.T) {
				k := newCoord(t)
				k.enter(state)
				k.wantFatal(state, k.c.Receive(c.forge(k)), isProtocol(c.kind))
			})
		}
	}
	t.Run("replay", func(t *testing.T) {
		k := newCoord(t)
		k.start("r1")
		f, _ := seal(t, k.worker, textResult(t, "r1", "out"))
		k.c.Receive(f)
		k.start("r2")
		k.wantFatal("A", k.c.Receive(f), isProtocol(protocol.ErrUnexpectedSequence))
	})
}

// Spec: TRN-043, TRN-059
// Row "EOF": fatal "unexpected end of worker stream" in Idle, A, AC and ACR; in Closing the
// close succeeds.
func TestCoordinatorRowEndOfStream(t *testing.T) {
	eof := &jsonline.Error{Kind: jsonline.ErrUnexpectedEndOfStream}
	for _, state := range allStates {
		t.Run(state, func(t *testing.T) {
			k := newCoord(t)
			k.enter(state)
			out := k.c.ReceiveFailed(eof)
			if state != "Closing" {
				k.wantFatal(state, out, isUnexpected("unexpected end of worker stream"))
				return
			}
			if k.c.Phase() != transport.PhaseClosed || k.c.Failure() != nil || out.ReadNext ||
				len(out.Events) != 1 || out.Events[0].Target != transport.TargetClose || out.Events[0].Err != nil {
				t.Fatalf("phase %s, output %+v", k.c.Phase(), out)
			}
			if _, err := k.c.Start(textInvocation(t, "r9", "x")); !errors.Is(err, transport.ErrUnavailable) {
				t.Fatalf("start after close: %v", err)
			}
		})
	}
}

// Spec: TRN-060
// Row "read error, oversize line, bad UTF-8, malformed JSON": fatal in every state, with Io,
// Protocol(WireFrameTooLarge), UnexpectedMessage("non-UTF-8 frame") and Protocol(Serialization).
func TestCoordinatorRowReadFailure(t *testing.T) {
	_, decodeErr := protocol.DecodeFrame([]byte("{"), canonjson.Preserve)
	cases := map[string]struct {
		err   error
		check func(error) bool
	}{
		"io": {&jsonline.Error{Kind: jsonline.ErrIO, Err: io.ErrClosedPipe}, func(err error) bool {
			return errors.Is(err, transport.ErrIO) && errors.Is(err, io.ErrClosedPipe)
		}},
		"oversize": {&jsonline.Error{Kind: jsonline.ErrProtocol, Err: &protocol.Error{Kind: protocol.ErrWireFrameTooLarge}},
			isProtocol(protocol.ErrWireFrameTooLarge)},
		"utf8":      {&jsonline.Error{Kind: jsonline.ErrInvalidUTF8}, isUnexpected("non-UTF-8 frame")},
		"malformed": {decodeErr, isProtocol(protocol.ErrSerialization)},
	}
	if decodeErr == nil {
		t.Fatal("a malformed frame decoded")
	}
	for _, state := range allStates {
		for name, c := range cases {
			t.Run(state+"/"+name, func(t *testing.T) {
				k := newCoord(t)
				k.enter(state)
				k.wantFatal(state, k.c.ReceiveFailed(c.err), c.check)
			})
		}
	}
}

// Spec: TRN-041, TRN-042, TRN-043
// Commands by state: Start is Busy unless Idle and refused by host authorization without
// sending; Cancel checks active, target, pending, then authorization; Close is Busy unless
// Idle. None of these refusals is fatal.
func TestCoordinatorCommandRefusals(t *testing.T) {
	for _, state := range allStates {
		t.Run(state, func(t *testing.T) {
			k := newCoord(t)
			k.enter(state)
			before := k.c.Phase()
			_, err := k.c.Start(textInvocation(t, "r7", "x"))
			if state == "Idle" {
				if err != nil {
					t.Fatalf("start in Idle: %v", err)
				}
				return
			}
			wantKind(t, err, transport.ErrBusy)
			out, err := k.c.Cancel("c7", "r1", toolText)
			switch state {
			case "Closing":
				wantKind(t, err, transport.ErrNoActiveInvocation)
			case "AC", "ACR":
				wantKind(t, err, transport.ErrCancellationPending)
			case "A":
				if err != nil {
					t.Fatalf("cancel in A: %v", err)
				}
				return
			}
			if out.Line != nil {
				t.Fatal("a refused cancel produced a line")
			}
			_, err = k.c.Close()
			wantKind(t, err, transport.ErrBusy)
			if k.c.Phase() != before {
				t.Fatalf("refusals moved the phase from %s to %s", before, k.c.Phase())
			}
		})
	}
	t.Run("Idle cancel", func(t *testing.T) {
		k := newCoord(t)
		_, err := k.c.Cancel("c1", "r1", toolText)
		wantKind(t, err, transport.ErrNoActiveInvocation)
	})
	t.Run("target mismatch", func(t *testing.T) {
		k := newCoord(t)
		k.enter("AC")
		// The target check precedes the pending check.
		_, err := k.c.Cancel("c2", "r0", toolText)
		wantKind(t, err, transport.ErrTargetMismatch)
		_, err = k.c.Cancel("c2", "r1", toolJSON)
		wantKind(t, err, transport.ErrTargetMismatch)
	})
	t.Run("authorization", func(t *testing.T) {
		k := newCoord(t)
		_, err := k.c.Start(protocol.ToolInvocation{ProtocolVersion: protocol.ProtocolVersion, SessionID: testSession,
			RequestID: "bad id", Tool: toolText, Payload: protocol.TextPayload("x")})
		wantKind(t, err, transport.ErrProtocol)
		wantProtocolKind(t, err, protocol.ErrInvalidToken)
		inv, _ := protocol.NewToolInvocation(testSession, "r1", "not.granted", protocol.TextPayload("x"))
		_, err = k.c.Start(inv)
		wantProtocolKind(t, err, protocol.ErrUnknownTool)
		k.start("r1")
		_, err = k.c.Cancel("r1", "r1", toolText) // cancellation id equals the request id
		wantKind(t, err, transport.ErrProtocol)
		_, err = k.c.Cancel("r1x", "r1", toolText)
		if err != nil {
			t.Fatal(err)
		}
		// The worker's sequence stays in step: the refused commands sent nothing.
		if k.c.Phase() != transport.PhaseCancelling {
			t.Fatalf("phase %s", k.c.Phase())
		}
	})
	t.Run("duplicate request id", func(t *testing.T) {
		k := newCoord(t)
		k.start("r1")
		k.recv(textResult(t, "r1", "out"))
		_, err := k.c.Start(textInvocation(t, "r1", "again"))
		wantProtocolKind(t, err, protocol.ErrDuplicateRequest)
	})
}

// Spec: TRN-044, TRN-047
// Abandon gives Abandoned to every pending waiter and stops the coordinator.
func TestCoordinatorAbandon(t *testing.T) {
	for _, state := range allStates {
		t.Run(state, func(t *testing.T) {
			k := newCoord(t)
			k.enter(state)
			out := k.c.Abandon()
			k.wantFatal(state, out, func(err error) bool { return errors.Is(err, transport.ErrAbandoned) })
			if out := k.c.Abandon(); len(out.Events) != 0 {
				t.Fatalf("second abandon: %+v", out)
			}
			// A frame that arrives afterwards is ignored.
			if out := k.recv(textResult(t, "r1", "x")); out.ReadNext || len(out.Events) != 0 {
				t.Fatalf("frame after abandon: %+v", out)
			}
		})
	}
}

// Spec: TRN-040
// Construction checks the manifest, then the role, then the session, and sends open_session
// as sequence 1.
func TestCoordinatorConstruction(t *testing.T) {
	host, worker := authPair(t, testSession)
	bad := testManifest(t)
	bad.SessionID = "Bad Session"
	_, _, err := transport.NewCoordinator(bad, worker)
	wantKind(t, err, transport.ErrProtocol)
	_, _, err = transport.NewCoordinator(testManifest(t), worker)
	wantKind(t, err, transport.ErrRequiresHostAuthenticator)
	other, _ := authPair(t, "session-2")
	_, _, err = transport.NewCoordinator(testManifest(t), other)
	wantKind(t, err, transport.ErrSessionMismatch)
	c, line, err := transport.NewCoordinator(testManifest(t), host)
	if err != nil {
		t.Fatal(err)
	}
	m := openAs(t, worker, line, protocol.TypeOpenSession).(protocol.OpenSessionMessage)
	if !m.Manifest.Equal(testManifest(t)) || c.SessionID() != testSession {
		t.Fatalf("open_session carries %+v", m.Manifest)
	}
}

// Spec: TRN-051, TRN-052, TRN-053, TRN-054, TRN-062
// The accepted worker sequences for one invocation, including the crossing race in which the
// worker's result and the host's cancel pass each other.
func TestCoordinatorAcceptedSequences(t *testing.T) {
	ack := func(t *testing.T, o protocol.WorkerCancellationOutcome) protocol.Message {
		return cancellationResult(t, "c1", "r1", toolText, o)
	}
	t.Run("result, then cancel is NoActiveInvocation", func(t *testing.T) {
		k := newCoord(t)
		k.start("r1")
		k.recv(textResult(t, "r1", "out"))
		_, err := k.c.Cancel("c1", "r1", toolText)
		wantKind(t, err, transport.ErrNoActiveInvocation)
	})
	t.Run("crossing result and cancel", func(t *testing.T) {
		k := newCoord(t)
		k.start("r1")
		// The worker already wrote its result; the host has not read it and cancels.
		k.cancel("c1", "r1")
		if out := k.recv(textResult(t, "r1", "won")); len(out.Events) != 0 {
			t.Fatalf("result delivered before too_late: %+v", out)
		}
		out := k.recv(ack(t, protocol.OutcomeTooLate))
		if len(out.Events) != 2 || out.Events[0].Outcome.Result.Payload.Text != "won" ||
			out.Events[1].Disposition.Outcome != protocol.OutcomeTooLate {
			t.Fatalf("events %+v", out.Events)
		}
	})
	t.Run("unsupported then result then a new invocation", func(t *testing.T) {
		k := newCoord(t)
		k.enter("AC")
		k.recv(ack(t, protocol.OutcomeUnsupported))
		k.recv(textResult(t, "r1", "out"))
		k.start("r2")
		k.cancel("c2", "r2")
		out := k.recv(cancellationResult(t, "c2", "r2", toolText, protocol.OutcomeAcknowledged))
		if len(out.Events) != 2 || !out.Events[1].Outcome.Cancelled {
			t.Fatalf("events %+v", out.Events)
		}
	})
}
