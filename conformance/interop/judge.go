package interop

import (
	"bytes"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// Side names the peer that sent a line.
type Side string

// The two sides of a session.
const (
	HostSide   Side = "host"
	WorkerSide Side = "worker"
)

// Deviation is one rule a line broke, blamed on the side that sent it (IOP-002, IOP-003).
type Deviation struct {
	// Side sent the line.
	Side Side `json:"side"`
	// Line is the 1-based index of the line among the lines of that side.
	Line int `json:"line"`
	// Rule is the requirement ID the line broke.
	Rule string `json:"rule"`
	// Detail says what was wrong.
	Detail string `json:"detail"`
	// Hazard marks a deviation from a SHOULD rule of the number models (ENC-037, ENC-039): a
	// line another build of the reference reads differently, which some pairs survive.
	Hazard bool `json:"hazard,omitempty"`
}

// String is the deviation in one line.
func (d Deviation) String() string {
	if d.Line == 0 { // a deviation of the stream, not of one line
		return fmt.Sprintf("%s stream breaks %s: %s", d.Side, d.Rule, d.Detail)
	}
	return fmt.Sprintf("%s line %d breaks %s: %s", d.Side, d.Line, d.Rule, d.Detail)
}

// Record is one relayed line as the transcript keeps it.
type Record struct {
	Side Side `json:"side"`
	// Index is the 1-based index of the line among the lines of its side.
	Index int `json:"index"`
	// Seq and Type are the frame's sequence and message type, when it decoded.
	Seq  uint64 `json:"seq,omitempty"`
	Type string `json:"type,omitempty"`
	// Line is the line, clipped to maxRecordedLine bytes.
	Line string `json:"line"`
	// Deviations are the rules the line broke.
	Deviations []Deviation `json:"deviations,omitempty"`
	// Unanswered counts the host's requests still awaiting an answer once the line is judged.
	Unanswered int `json:"unanswered,omitempty"`
	// Key is the key a host's durable request names: the operation key of a dispatch or a
	// reconciliation, the compensation key of a compensation.
	Key string `json:"key,omitempty"`
}

// maxRecordedLine bounds the part of a line a record keeps.
const maxRecordedLine = 512

// judge verifies every frame of one session in both directions with the wire core: it decodes
// and authenticates each line under its sender's role, requires the canonical form, and judges
// the message by the worker's own rules (protocol.WorkerState), the manifest and the requests
// still unanswered. It is a pure state machine: lines in, records out. It never exposes the key.
type judge struct {
	key        *protocol.SessionKey
	sid        string
	scope      string
	fromHost   *protocol.Authenticator // worker role: opens the host's frames
	fromWorker *protocol.Authenticator // host role: opens the worker's frames
	state      protocol.WorkerState
	opened     bool
	manifest   protocol.CapabilityManifest
	// auth is the host's authorizer of the manifest: an invocation or dispatch it refuses is
	// one the host must not have sent (AUZ-005, AUZ-006, AUZ-008).
	auth *authorizer.SessionAuthorizer
	// durable counts the durable exchanges the host began: at most one a session (TRN-113).
	durable int
	// pending maps a request id the host sent to the message type that answers it.
	pending map[string]protocol.MessageType
	// cancels maps a pending cancellation id to the request id it targets.
	cancels        map[string]string
	hostN, workerN int
}

// newJudge returns the judge of session sid with key (which it copies), for a worker whose
// journal scope is scope and whose session is of kind.
func newJudge(sid string, key *protocol.SessionKey, scope string, kind protocol.SessionKind) (*judge, error) {
	fromHost, err := protocol.NewAuthenticator(sid, key, protocol.RoleWorker, canonjson.Preserve)
	if err != nil {
		return nil, err
	}
	fromWorker, err := protocol.NewAuthenticator(sid, key, protocol.RoleHost, canonjson.Preserve)
	if err != nil {
		return nil, err
	}
	return &judge{key: key, sid: sid, scope: scope, fromHost: fromHost, fromWorker: fromWorker,
		state: protocol.WorkerState{Kind: kind}, pending: map[string]protocol.MessageType{}, cancels: map[string]string{}}, nil
}

// close wipes the judge's keys.
func (j *judge) close() {
	_ = j.fromHost.Close()
	_ = j.fromWorker.Close()
	_ = j.key.Close()
}

// answers maps each host request to the worker message that answers it.
var answers = map[protocol.MessageType]protocol.MessageType{
	protocol.TypeInvoke:              protocol.TypeResult,
	protocol.TypeDispatchOperation:   protocol.TypeOperationResult,
	protocol.TypeReconcileOperation:  protocol.TypeReconciledOperation,
	protocol.TypeCompensateOperation: protocol.TypeCompensationResult,
	protocol.TypeCancel:              protocol.TypeCancellationResult,
}

// answerRules names the requirement an answer breaks when it answers nothing pending.
var answerRules = map[protocol.MessageType]string{
	protocol.TypeResult:              "AUZ-021",
	protocol.TypeOperationResult:     "AUZ-022",
	protocol.TypeReconciledOperation: "AUZ-022",
	protocol.TypeCompensationResult:  "AUZ-022",
	protocol.TypeCancellationResult:  "AUZ-018",
}

// durableRequests are the host messages of a durable exchange (TRN-113).
var durableRequests = map[protocol.MessageType]bool{
	protocol.TypeDispatchOperation:   true,
	protocol.TypeReconcileOperation:  true,
	protocol.TypeCompensateOperation: true,
}

// refusalRules names the requirement behind each refusal of the worker's rules.
var refusalRules = map[protocol.Refusal]string{
	protocol.RefusedUnexpected:       "WRK-022",
	protocol.RefusedCloseWhileActive: "CAN-010",
	protocol.RefusedNoCancelTarget:   "CAN-008",
}

// line judges one line of side and returns its record.
func (j *judge) line(side Side, line []byte) Record {
	opener, index := j.fromHost, &j.hostN
	if side == WorkerSide {
		opener, index = j.fromWorker, &j.workerN
	}
	*index++
	rec := Record{Side: side, Index: *index, Line: conformance.Clip(string(line), maxRecordedLine)}
	dev := func(rule, format string, args ...any) {
		rec.Deviations = append(rec.Deviations, Deviation{Side: side, Line: rec.Index, Rule: rule, Detail: fmt.Sprintf(format, args...)})
	}
	f, err := opener.Open(line)
	if err != nil {
		rule, detail := j.openFailure(side, line, err)
		dev(rule, "%s", detail)
		return rec
	}
	rec.Seq, rec.Type = f.Sequence, string(f.Message.Type())
	if canon := f.AppendJSON(nil); !bytes.Equal(canon, line) {
		dev("FRM-005", "the frame is not in canonical form; canonical: %s", conformance.Clip(string(canon), 200))
	}
	if side == HostSide {
		rec.Key = durableKey(f.Message)
		j.hostMessage(f.Message, dev)
		if tok, bad := canonjson.FirstNonPortableNumber(string(line)); bad {
			dev("ENC-039", "the number %s is not portable: a worker that reads numbers lossily computes another tag (ENC-034, ENC-055)", tok)
			rec.Deviations[len(rec.Deviations)-1].Hazard = true
		}
	} else {
		j.workerMessage(f.Message, dev)
	}
	rec.Unanswered = len(j.pending)
	return rec
}

// redact replaces every common encoding of the session key in s (raw, hex, base64) with
// "[key]": a worker's diagnostic is reported to the runner, which never sees the key (IOP-004).
func (j *judge) redact(s string) string {
	raw, err := j.key.ExposeSecret()
	if err != nil {
		return s
	}
	defer clear(raw[:])
	for _, enc := range []string{string(raw[:]), hex.EncodeToString(raw[:]), strings.ToUpper(hex.EncodeToString(raw[:])),
		base64.StdEncoding.EncodeToString(raw[:]), base64.RawStdEncoding.EncodeToString(raw[:]),
		base64.URLEncoding.EncodeToString(raw[:]), base64.RawURLEncoding.EncodeToString(raw[:])} {
		s = strings.ReplaceAll(s, enc, "[key]")
	}
	return s
}

// durableKey is the key a durable request names, or "".
func durableKey(m protocol.Message) string {
	switch m := m.(type) {
	case protocol.DispatchOperationMessage:
		return m.Request.OperationKey
	case protocol.ReconcileOperationMessage:
		return m.Request.OperationKey
	case protocol.CompensateOperationMessage:
		return m.Request.CompensationKey
	}
	return ""
}

// openFailure names the rule a line that fails to open breaks.
func (j *judge) openFailure(side Side, line []byte, err error) (rule, detail string) {
	kind, _ := protocol.KindOf(err)
	switch kind {
	case protocol.ErrInvalidAuthenticationTag:
		if f, derr := protocol.DecodeFrame(line, canonjson.Preserve); derr == nil {
			other := protocol.RoleWorker
			if side == WorkerSide {
				other = protocol.RoleHost
			}
			if tag, terr := protocol.ComputeTag(j.key, j.sid, other, f.Sequence, f.Message); terr == nil && subtle.ConstantTimeCompare(tag[:], f.Tag[:]) == 1 {
				return "FRM-008", "the frame is tagged under the other side's role"
			}
		}
		return "FRM-025", "the tag does not verify under the session key: " + err.Error()
	case protocol.ErrUnexpectedSequence, protocol.ErrInvalidSequence, protocol.ErrSequenceExhausted:
		return "FRM-026", err.Error()
	case protocol.ErrUnknownSession:
		return "FRM-027", err.Error()
	}
	return "FRM-002", "the line is not a valid frame: " + err.Error()
}

// hostMessage judges a verified host message by the worker's rules and the manifest.
func (j *judge) hostMessage(m protocol.Message, dev func(rule, format string, args ...any)) {
	typ := m.Type()
	if !j.opened {
		open, ok := m.(protocol.OpenSessionMessage)
		if !ok {
			dev("TRN-011", "the first frame is %s, not open_session", typ)
			return
		}
		j.opened, j.manifest = true, open.Manifest
		var err error
		if j.auth, err = authorizer.New(open.Manifest); err != nil {
			dev("MAN-006", "the manifest of open_session does not validate: %v", err)
		}
		return
	}
	if r := j.state.Admit(typ); r != protocol.Accepted {
		dev(refusalRules[r], "a %s worker rejects %s (%s) and ends the session", j.state.Kind, typ, r)
		return
	}
	if durableRequests[typ] {
		if j.durable++; j.durable > 1 {
			dev("TRN-113", "a second durable exchange on the session: the operation transport is one-shot")
		}
	}
	switch m := m.(type) {
	case protocol.InvokeMessage:
		inv := m.Invocation
		j.request(inv.RequestID, typ, dev)
		if j.auth != nil {
			_, err := j.auth.Authorize(inv)
			j.authorized(err, dev)
		}
		j.state.Active = j.state.Kind == protocol.CancellableSession
	case protocol.DispatchOperationMessage:
		j.request(m.Request.RequestID, typ, dev)
		if j.auth != nil {
			_, err := j.auth.AuthorizeOperation(m.Request)
			j.authorized(err, dev)
		}
	case protocol.ReconcileOperationMessage:
		j.request(m.Request.RequestID, typ, dev)
		j.granted(m.Request.Tool, "AUZ-012", dev)
	case protocol.CompensateOperationMessage:
		j.request(m.Request.RequestID, typ, dev)
		j.granted(m.Request.Tool, "AUZ-013", dev)
		if err := protocol.ValidateJournalScope(m.Request.TenantScope, j.scope); err != nil {
			dev("HDR-043", "the binding's tenant is not the worker's journal scope %q (JRN-008): %v", j.scope, err)
		}
	case protocol.CancelMessage:
		j.cancels[m.Request.CancellationID] = m.Request.RequestID
		j.pending[m.Request.CancellationID] = protocol.TypeCancellationResult
	}
}

// request records a request id the host sent, which must be fresh (AUZ-005).
func (j *judge) request(id string, typ protocol.MessageType, dev func(rule, format string, args ...any)) {
	if _, dup := j.pending[id]; dup {
		dev("AUZ-005", "the request id %s is still pending", id)
	}
	j.pending[id] = answers[typ]
}

// authorizeRules names the requirement behind each refusal of the host's authorizer.
var authorizeRules = map[protocol.ErrorKind]string{
	protocol.ErrDuplicateRequest:            "AUZ-005",
	protocol.ErrSessionRequestLimitExceeded: "AUZ-006",
}

// authorized turns a refusal of the host's authorizer into a deviation: the host sent what it
// had to refuse before a frame (AUZ-008, HDR-022).
func (j *judge) authorized(err error, dev func(rule, format string, args ...any)) {
	if err == nil {
		return
	}
	kind, _ := protocol.KindOf(err)
	rule, ok := authorizeRules[kind]
	if !ok {
		rule = "AUZ-008"
	}
	dev(rule, "the host's authorizer refuses this request: %v", err)
}

// granted requires the manifest to grant tool.
func (j *judge) granted(tool, rule string, dev func(rule, format string, args ...any)) {
	if _, ok := j.manifest.Grant(tool); !ok {
		dev(rule, "the manifest does not grant %s", tool)
	}
}

// workerMessage judges a verified worker message: it must answer a pending request of its kind.
func (j *judge) workerMessage(m protocol.Message, dev func(rule, format string, args ...any)) {
	typ := m.Type()
	rule, isAnswer := answerRules[typ]
	if !isAnswer {
		dev("WRK-023", "a worker sends only answers, not %s", typ)
		return
	}
	var id string
	switch m := m.(type) {
	case protocol.ResultMessage:
		id = m.Result.RequestID
	case protocol.OperationResultMessage:
		id = m.Result.RequestID
	case protocol.ReconciledOperationMessage:
		id = m.Result.RequestID
	case protocol.CompensationResultMessage:
		id = m.Result.RequestID
	case protocol.CancellationResultMessage:
		id = m.Result.CancellationID
	}
	if j.pending[id] != typ {
		dev(rule, "a %s for %s, which no pending request of the host awaits", typ, id)
		return
	}
	delete(j.pending, id)
	switch m := m.(type) {
	case protocol.ResultMessage:
		j.state.Active, j.state.Target = false, true
	case protocol.CancellationResultMessage:
		target := j.cancels[id]
		delete(j.cancels, id)
		if _, running := j.pending[target]; running && m.Result.Outcome == protocol.OutcomeTooLate {
			// too_late follows the result it lost to, never precedes it (CAN-015).
			dev("CAN-015", "a too_late cancellation_result for %s, whose result the worker has not sent", target)
		}
		if m.Result.Outcome == protocol.OutcomeAcknowledged {
			// No result follows an acknowledgement (CAN-016, AUZ-020).
			delete(j.pending, target)
			j.state.Active, j.state.Target = false, false
		}
	}
}
