package interop

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// session is a host and a worker authenticator of one session, and a judge of it.
type session struct {
	host, worker *protocol.Authenticator
	key          *protocol.SessionKey
	j            *judge
}

func newSession(t *testing.T, kind protocol.SessionKind) *session {
	t.Helper()
	key, err := protocol.GenerateSessionKey()
	if err != nil {
		t.Fatal(err)
	}
	s := &session{key: key}
	if s.host, err = protocol.NewAuthenticator("s-1", key, protocol.RoleHost, canonjson.Preserve); err != nil {
		t.Fatal(err)
	}
	if s.worker, err = protocol.NewAuthenticator("s-1", key, protocol.RoleWorker, canonjson.Preserve); err != nil {
		t.Fatal(err)
	}
	if s.j, err = newJudge("s-1", key, "tenant-a", kind); err != nil {
		t.Fatal(err)
	}
	m, err := protocol.NewCapabilityManifest("s-1", []protocol.CapabilityGrant{
		{Tool: toolTextEcho, Format: protocol.FormatText, MaxCalls: 8, MaxInputBytes: 64, MaxOutputBytes: 64},
		{Tool: toolCancellable, Format: protocol.FormatText, MaxCalls: 8, MaxInputBytes: 64, MaxOutputBytes: 64},
		durableGrant(),
	})
	if err != nil {
		t.Fatal(err)
	}
	s.expectClean(t, HostSide, s.seal(t, s.host, protocol.OpenSessionMessage{Manifest: m}))
	return s
}

func (s *session) seal(t *testing.T, a *protocol.Authenticator, m protocol.Message) []byte {
	t.Helper()
	_, line, err := a.Seal(m)
	if err != nil {
		t.Fatal(err)
	}
	return line
}

func (s *session) expectClean(t *testing.T, side Side, line []byte) {
	t.Helper()
	if rec := s.j.line(side, line); len(rec.Deviations) > 0 {
		t.Fatalf("%s line: unexpected deviations %v", side, rec.Deviations)
	}
}

// expectBlame judges line and requires one deviation of rule blamed on side.
func (s *session) expectBlame(t *testing.T, side Side, line []byte, rule string) {
	t.Helper()
	rec := s.j.line(side, line)
	for _, d := range rec.Deviations {
		if d.Side == side && d.Rule == rule {
			return
		}
	}
	t.Fatalf("%s line %s: deviations %v, want %s blamed on %s", side, conformance.Clip(string(line), 80), rec.Deviations, rule, side)
}

func invoke(id string) protocol.Message {
	return protocol.InvokeMessage{Invocation: protocol.ToolInvocation{ProtocolVersion: protocol.ProtocolVersion, SessionID: "s-1",
		RequestID: id, Tool: toolTextEcho, Payload: protocol.TextPayload("ping")}}
}

func result(id string) protocol.Message {
	return protocol.ResultMessage{Result: protocol.ToolResult{ProtocolVersion: protocol.ProtocolVersion, SessionID: "s-1",
		RequestID: id, Payload: protocol.TextPayload("ping")}}
}

// TestJudgeBlamesTheSender: each broken framing rule is attributed to the side that sent the
// line (IOP-002).
func TestJudgeBlamesTheSender(t *testing.T) {
	t.Run("tampered tag", func(t *testing.T) {
		s := newSession(t, protocol.BaselineSession)
		line := s.seal(t, s.host, invoke("r-1"))
		i := bytes.LastIndexByte(line, '"') - 1
		line[i] = map[bool]byte{true: '1', false: '0'}[line[i] == '0']
		s.expectBlame(t, HostSide, line, "FRM-025")
	})
	t.Run("other role", func(t *testing.T) {
		s := newSession(t, protocol.BaselineSession)
		s.expectClean(t, HostSide, s.seal(t, s.host, invoke("r-1")))
		// The worker's answer tagged as if the host had sent it.
		tag, err := protocol.ComputeTag(s.key, "s-1", protocol.RoleHost, 1, result("r-1"))
		if err != nil {
			t.Fatal(err)
		}
		s.expectBlame(t, WorkerSide, protocol.Frame{Sequence: 1, Message: result("r-1"), Tag: tag}.AppendJSON(nil), "FRM-008")
	})
	t.Run("sequence", func(t *testing.T) {
		s := newSession(t, protocol.BaselineSession)
		line := s.seal(t, s.host, invoke("r-1"))
		s.expectClean(t, HostSide, line)
		s.expectBlame(t, HostSide, line, "FRM-026") // a replay
	})
	t.Run("not canonical", func(t *testing.T) {
		s := newSession(t, protocol.BaselineSession)
		line := s.seal(t, s.host, invoke("r-1"))
		spaced := bytes.Replace(line, []byte(`{"sequence":`), []byte(`{ "sequence":`), 1)
		s.expectBlame(t, HostSide, spaced, "FRM-005")
	})
	t.Run("garbage", func(t *testing.T) {
		s := newSession(t, protocol.BaselineSession)
		s.expectBlame(t, WorkerSide, []byte("not a frame"), "FRM-002")
	})
}

// TestJudgeAppliesTheWorkerRules: a host frame a real worker rejects, and a worker answer no
// request awaits, are blamed on their sender (IOP-003).
func TestJudgeAppliesTheWorkerRules(t *testing.T) {
	closeSession := protocol.CloseSessionMessage{ProtocolVersion: protocol.ProtocolVersion, Session: "s-1"}
	t.Run("close_session in a baseline session", func(t *testing.T) {
		s := newSession(t, protocol.BaselineSession)
		s.expectBlame(t, HostSide, s.seal(t, s.host, closeSession), "WRK-022")
	})
	t.Run("close_session while an invocation runs", func(t *testing.T) {
		s := newSession(t, protocol.CancellableSession)
		s.expectClean(t, HostSide, s.seal(t, s.host, invoke("r-1")))
		s.expectBlame(t, HostSide, s.seal(t, s.host, closeSession), "CAN-010")
	})
	t.Run("close_session of an idle cancellable session", func(t *testing.T) {
		s := newSession(t, protocol.CancellableSession)
		s.expectClean(t, HostSide, s.seal(t, s.host, invoke("r-1")))
		s.expectClean(t, WorkerSide, s.seal(t, s.worker, result("r-1")))
		s.expectClean(t, HostSide, s.seal(t, s.host, closeSession))
	})
	t.Run("ungranted tool", func(t *testing.T) {
		s := newSession(t, protocol.BaselineSession)
		m := invoke("r-1").(protocol.InvokeMessage)
		m.Invocation.Tool = "conf.other"
		s.expectBlame(t, HostSide, s.seal(t, s.host, m), "AUZ-008")
	})
	t.Run("input over max_input_bytes", func(t *testing.T) {
		s := newSession(t, protocol.BaselineSession)
		m := invoke("r-1").(protocol.InvokeMessage)
		m.Invocation.Payload = protocol.TextPayload(strings.Repeat("x", 65))
		s.expectBlame(t, HostSide, s.seal(t, s.host, m), "AUZ-008")
	})
	t.Run("call over max_calls", func(t *testing.T) {
		s := newSession(t, protocol.BaselineSession)
		for i := range 8 {
			id := fmt.Sprintf("r-%d", i)
			s.expectClean(t, HostSide, s.seal(t, s.host, invoke(id)))
			s.expectClean(t, WorkerSide, s.seal(t, s.worker, result(id)))
		}
		s.expectBlame(t, HostSide, s.seal(t, s.host, invoke("r-9")), "AUZ-008")
	})
	t.Run("request id used before", func(t *testing.T) {
		s := newSession(t, protocol.BaselineSession)
		s.expectClean(t, HostSide, s.seal(t, s.host, invoke("r-1")))
		s.expectClean(t, WorkerSide, s.seal(t, s.worker, result("r-1")))
		s.expectBlame(t, HostSide, s.seal(t, s.host, invoke("r-1")), "AUZ-005")
	})
	t.Run("second durable exchange", func(t *testing.T) {
		s := newSession(t, protocol.BaselineSession)
		reconcile := func(id string) protocol.Message {
			req, err := protocol.NewOperationReconcileRequest("s-1", id, toolDurable, "op-1")
			if err != nil {
				t.Fatal(err)
			}
			return protocol.ReconcileOperationMessage{Request: req}
		}
		s.expectClean(t, HostSide, s.seal(t, s.host, reconcile("r-1")))
		s.expectBlame(t, HostSide, s.seal(t, s.host, reconcile("r-2")), "TRN-113")
	})
	t.Run("compensation for another tenant", func(t *testing.T) {
		s := newSession(t, protocol.BaselineSession)
		g := durableGrant()
		fp, err := g.CompensationFingerprint()
		if err != nil {
			t.Fatal(err)
		}
		b, err := protocol.NewOperationCompensationBinding(toolDurable, "op-1", "cmp-1", "tenant-b", fp)
		if err != nil {
			t.Fatal(err)
		}
		req, err := protocol.NewOperationCompensationRequest("s-1", "c-1", b, protocol.JSONPayload(jsonValue(`{}`)))
		if err != nil {
			t.Fatal(err)
		}
		s.expectBlame(t, HostSide, s.seal(t, s.host, protocol.CompensateOperationMessage{Request: req}), "HDR-043")
	})
	t.Run("unsolicited result", func(t *testing.T) {
		s := newSession(t, protocol.BaselineSession)
		s.expectBlame(t, WorkerSide, s.seal(t, s.worker, result("r-9")), "AUZ-021")
	})
	t.Run("result after an acknowledgement", func(t *testing.T) {
		s := newSession(t, protocol.CancellableSession)
		s.expectClean(t, HostSide, s.seal(t, s.host, invoke("r-1")))
		cancel := protocol.WorkerCancellationRequest{ProtocolVersion: protocol.ProtocolVersion, SessionID: "s-1", CancellationID: "c-1", RequestID: "r-1", Tool: toolTextEcho}
		s.expectClean(t, HostSide, s.seal(t, s.host, protocol.CancelMessage{Request: cancel}))
		ack := protocol.CancellationResultMessage{Result: protocol.WorkerCancellationResult{ProtocolVersion: protocol.ProtocolVersion,
			SessionID: "s-1", CancellationID: "c-1", RequestID: "r-1", Tool: toolTextEcho, Outcome: protocol.OutcomeAcknowledged}}
		s.expectClean(t, WorkerSide, s.seal(t, s.worker, ack))
		s.expectBlame(t, WorkerSide, s.seal(t, s.worker, result("r-1")), "AUZ-021")
	})
}

// TestJudgeKeepsNoKey: no record of the judge holds an encoding of the session key (IOP-004).
func TestJudgeKeepsNoKey(t *testing.T) {
	s := newSession(t, protocol.BaselineSession)
	raw, err := s.key.ExposeSecret()
	if err != nil {
		t.Fatal(err)
	}
	rec := s.j.line(HostSide, s.seal(t, s.host, invoke("r-1")))
	text := rec.Line + rec.Type
	for _, d := range rec.Deviations {
		text += d.String()
	}
	if strings.Contains(text, hex.EncodeToString(raw[:])) || strings.Contains(text, string(raw[:])) {
		t.Fatal("a record holds the key")
	}
}
