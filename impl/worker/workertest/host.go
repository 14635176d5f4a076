// Package workertest provides a scripted host for testing worker implementations: it seals
// host frames (also out of order or tampered), opens worker answers, and builds the messages
// of the conformance profile. It also builds the reference worker once per test binary
// (Binaries) and collects a worker process's output (Output), for every package whose tests
// run worker processes. It is test support, not a host runtime: it keeps no authorization
// state of its own.
package workertest

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/splashv5/conform/impl/bootstrap"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// Host is the host side of one test session.
type Host struct {
	// SessionID is the session id of the bootstrap and of every message.
	SessionID string
	key       *protocol.SessionKey
	opener    *protocol.Authenticator // host role: opens worker frames
	next      uint64                  // next host sequence
}

// NewHost returns a host for sessionID with a fresh random session key.
func NewHost(sessionID string) (*Host, error) {
	key, err := protocol.GenerateSessionKey()
	if err != nil {
		return nil, err
	}
	opener, err := protocol.NewAuthenticator(sessionID, key, protocol.RoleHost, canonjson.Preserve)
	if err != nil {
		return nil, err
	}
	return &Host{SessionID: sessionID, key: key, opener: opener, next: 1}, nil
}

// Close wipes the host's key copies.
func (h *Host) Close() {
	h.key.Close()
	h.opener.Close()
}

// Bootstrap returns the private-pipe bootstrap bytes for the session.
func (h *Host) Bootstrap() []byte {
	var b bytes.Buffer
	if err := bootstrap.Write(&b, h.SessionID, h.key); err != nil {
		panic(err) // the id and key were validated by NewHost
	}
	return b.Bytes()
}

// WorkerAuthenticator returns a worker-role authenticator for the same session and key.
func (h *Host) WorkerAuthenticator(mode canonjson.Mode) (*protocol.Authenticator, error) {
	return h.Authenticator(protocol.RoleWorker, mode)
}

// Authenticator returns an authenticator of the given role for the same session and key.
func (h *Host) Authenticator(role protocol.Role, mode canonjson.Mode) (*protocol.Authenticator, error) {
	return protocol.NewAuthenticator(h.SessionID, h.key, role, mode)
}

// NextSequence returns the sequence the next Seal uses.
func (h *Host) NextSequence() uint64 { return h.next }

// Seal returns the frame line of m at the next host sequence and advances it. m is not
// validated, so invalid messages can be sent on purpose.
func (h *Host) Seal(m protocol.Message) []byte {
	line := h.SealAt(h.next, m)
	h.next++
	return line
}

// SealAt returns the frame line of m at sequence seq without advancing the host sequence.
func (h *Host) SealAt(seq uint64, m protocol.Message) []byte {
	tag, err := protocol.ComputeTag(h.key, h.SessionID, protocol.RoleHost, seq, m)
	if err != nil {
		panic(err)
	}
	return protocol.Frame{Sequence: seq, Message: m, Tag: tag}.AppendJSON(nil)
}

// Tampered returns the frame line of m at the next host sequence with a wrong tag, without
// advancing the sequence.
func (h *Host) Tampered(m protocol.Message) []byte {
	tag, err := protocol.ComputeTag(h.key, h.SessionID, protocol.RoleHost, h.next, m)
	if err != nil {
		panic(err)
	}
	tag[0] ^= 1
	return protocol.Frame{Sequence: h.next, Message: m, Tag: tag}.AppendJSON(nil)
}

// Open authenticates one worker answer line and returns its message.
func (h *Host) Open(line []byte) (protocol.Message, error) {
	f, err := h.opener.Open(bytes.TrimSuffix(line, []byte("\n")))
	if err != nil {
		return nil, err
	}
	return f.Message, nil
}

// Grant returns a grant for tool with the given format, calls and compensations, and 16 KiB
// input and 64 KiB output limits.
func Grant(tool string, format protocol.EnvelopeFormat, calls, compensations uint32) protocol.CapabilityGrant {
	g := protocol.TextGrant(tool)
	g.Format = format
	g.MaxCalls = calls
	g.MaxCompensations = compensations
	return g
}

// OpenSession returns the open_session message for grants.
func (h *Host) OpenSession(grants ...protocol.CapabilityGrant) protocol.Message {
	return protocol.OpenSessionMessage{Manifest: protocol.CapabilityManifest{
		ProtocolVersion: protocol.ProtocolVersion, SessionID: h.SessionID, Grants: grants}}
}

// Invoke returns an invoke message.
func (h *Host) Invoke(requestID, tool string, p protocol.ToolPayload) protocol.Message {
	return protocol.InvokeMessage{Invocation: protocol.ToolInvocation{
		ProtocolVersion: protocol.ProtocolVersion, SessionID: h.SessionID, RequestID: requestID, Tool: tool, Payload: p}}
}

// Dispatch returns a dispatch_operation message.
func (h *Host) Dispatch(requestID, tool, key string, p protocol.ToolPayload) protocol.Message {
	return protocol.DispatchOperationMessage{Request: protocol.OperationDispatchRequest{
		ProtocolVersion: protocol.ProtocolVersion, SessionID: h.SessionID, RequestID: requestID, Tool: tool,
		OperationKey: key, Payload: p}}
}

// Reconcile returns a reconcile_operation message.
func (h *Host) Reconcile(requestID, tool, key string) protocol.Message {
	return protocol.ReconcileOperationMessage{Request: protocol.OperationReconcileRequest{
		ProtocolVersion: protocol.ProtocolVersion, SessionID: h.SessionID, RequestID: requestID, Tool: tool,
		OperationKey: key}}
}

// Compensate returns a compensate_operation message bound to grant's fingerprint.
func (h *Host) Compensate(requestID, tool, key, cmpKey, tenant string, grant protocol.CapabilityGrant, p protocol.ToolPayload) protocol.Message {
	fp, err := grant.CompensationFingerprint()
	if err != nil {
		panic(err)
	}
	return h.CompensateWithFingerprint(requestID, tool, key, cmpKey, tenant, fp, p)
}

// CompensateWithFingerprint returns a compensate_operation message with an explicit grant
// fingerprint.
func (h *Host) CompensateWithFingerprint(requestID, tool, key, cmpKey, tenant, fp string, p protocol.ToolPayload) protocol.Message {
	return protocol.CompensateOperationMessage{Request: protocol.OperationCompensationRequest{
		ProtocolVersion: protocol.ProtocolVersion, SessionID: h.SessionID, RequestID: requestID, Tool: tool,
		OperationKey: key, CompensationKey: cmpKey, TenantScope: tenant, GrantFingerprint: fp, Payload: p}}
}

// Cancel returns a cancel message.
func (h *Host) Cancel(cancellationID, requestID, tool string) protocol.Message {
	return protocol.CancelMessage{Request: protocol.WorkerCancellationRequest{
		ProtocolVersion: protocol.ProtocolVersion, SessionID: h.SessionID, CancellationID: cancellationID,
		RequestID: requestID, Tool: tool}}
}

// CloseSession returns a close_session message.
func (h *Host) CloseSession() protocol.Message {
	return protocol.CloseSessionMessage{ProtocolVersion: protocol.ProtocolVersion, Session: h.SessionID}
}

// JSON parses canonical JSON text into a payload; it panics on invalid input (test data).
func JSON(text string) protocol.ToolPayload {
	v, err := canonjson.ParseValue([]byte(text), canonjson.Preserve)
	if err != nil {
		panic(err)
	}
	return protocol.JSONPayload(v)
}

// Record returns the durable tool's input {"mode":mode,"value":<value JSON>}.
func Record(mode, value string) protocol.ToolPayload {
	return JSON(`{"mode":"` + mode + `","value":` + value + `}`)
}

// Describe renders an answer message for test failure messages and assertions:
// "result text:hi", "operation_result succeeded json:{...}", "cancellation_result too_late".
func Describe(m protocol.Message) string {
	switch m := m.(type) {
	case protocol.ResultMessage:
		return "result " + payload(m.Result.Payload)
	case protocol.OperationResultMessage:
		return "operation_result " + status(m.Result.Status)
	case protocol.ReconciledOperationMessage:
		return "reconciled_operation " + status(m.Result.Status)
	case protocol.CompensationResultMessage:
		return "compensation_result " + status(m.Result.Status)
	case protocol.CancellationResultMessage:
		return "cancellation_result " + m.Result.Outcome.String()
	case nil:
		return "<nil>"
	}
	return string(m.Type())
}

func payload(p protocol.ToolPayload) string {
	if p.Format == protocol.FormatJSON {
		return "json:" + string(p.JSON.JSON())
	}
	return "text:" + p.Text
}

func status(s protocol.OperationStatus) string {
	switch s.State {
	case protocol.StateSucceeded:
		return "succeeded " + payload(s.Payload)
	case protocol.StateFailed:
		return "failed " + s.Message
	}
	return s.State.WireName()
}

// ErrNoAnswer is returned by helpers that expected an answer line and got none.
var ErrNoAnswer = errors.New("workertest: no answer")

// MustOpen opens an answer and describes it, or returns a description of the failure.
func (h *Host) MustOpen(line []byte) string {
	if len(line) == 0 {
		return "<no answer>"
	}
	m, err := h.Open(line)
	if err != nil {
		return fmt.Sprintf("<open failed: %v>", err)
	}
	return Describe(m)
}
