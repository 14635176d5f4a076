package alphabet

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// The tools of the conformance adapter profile (chapter 15) the alphabet uses.
const (
	toolTextEcho    = "conf.text.echo"
	toolDurable     = "conf.durable.record"
	toolCancellable = "conf.slow.cancellable"
)

// Limits of the grants the alphabet's manifests carry.
const (
	grantCalls    = 1000
	grantInput    = 4 << 10 // invoke_over_limit sends one byte more
	grantOutput   = 64 << 10
	slowMillis    = "60000" // the longest wait a slow tool accepts (PRF-016)
	wrongScope    = "explore-wrong-scope"
	forgedSession = "explore-forged-session"
)

// ErrConcretize is returned (wrapped) when an abstract input cannot be made concrete.
var ErrConcretize = errors.New("alphabet: cannot concretize")

// Action is what a driver does for one abstract input: write Line (followed by "\n") to the
// worker, or close its input, or apply a fault the driver stages (a store fault, a restart).
type Action struct {
	// Line is the frame line to write, without its newline; nil when the action writes none.
	Line []byte
	// EndInput says to close the worker's standard input.
	EndInput bool
	// Fault names the fault to stage ("store_fault" or "restart"); empty for none.
	Fault Name
	// Write, when set, is a file the driver writes before the step (a probe's store fault
	// count or secret source); a driver that cannot write it skips the word.
	Write *FileWrite
	// NoNewline says to write Line without the line feed that ends a frame.
	NoNewline bool
	// Pause is how long the step waits for output when it writes nothing, or, with
	// Supersede, for the older worker after the newer one acted.
	Pause time.Duration
	// Supersede, when set, are the symbols a newer worker process on the same journal runs,
	// in a session of its own, while the session's process keeps running.
	Supersede []Name
}

// Session is the host side of one explored worker session: it remembers what the concretizer
// needs (the session's id and key, the next sequences, the request ids used, the running and
// the last completed invocation, the last operation key) and updates it from the worker's
// answers. The key never leaves it but through WriteBootstrap, which a driver writes to the
// worker's standard input.
type Session struct {
	id    string
	key   *protocol.SessionKey
	host  *protocol.Authenticator
	needs []Need
	kind  protocol.SessionKind // 0 before an open symbol

	requests  int
	lastID    string
	current   string // running invocation, "" when none
	finished  string // last invocation that completed with a result
	operation string // last operation key dispatched
	opened    bool

	scope            string                     // the journal scope compensations name
	granted          []protocol.CapabilityGrant // the grants of the open session
	currentTool      string                     // the tool of the running invocation
	lastDispatch     *protocol.OperationDispatchRequest
	lastCompensation *protocol.OperationCompensationRequest
	boot             Name // the bootstrap variant of the next process: a restart probe's
}

// NewSession returns a session with the given id and key (the session takes no copy of the
// key: the caller keeps and closes it), for a worker with the given needs, opening the
// worker's frames in mode.
func NewSession(id string, key *protocol.SessionKey, mode canonjson.Mode, needs ...Need) (*Session, error) {
	host, err := newHost(id, key, mode)
	if err != nil {
		return nil, err
	}
	return &Session{id: id, key: key, host: host, needs: needs}, nil
}

// newHost returns the host's authenticator of a session. In the preserve number model the host
// is one that keeps number text, as the Rust host build is: it seals the numbers only such a
// host writes, which the number probes send.
func newHost(id string, key *protocol.SessionKey, mode canonjson.Mode) (*protocol.Authenticator, error) {
	if mode == canonjson.Preserve {
		return protocol.NewAuthenticator(id, key, protocol.RoleHost, mode, protocol.AllowNonPortableNumbers())
	}
	return protocol.NewAuthenticator(id, key, protocol.RoleHost, mode)
}

// WriteBootstrap writes the private-pipe bootstrap of the session to w (a bad one when a
// restart probe asked for it).
func (s *Session) WriteBootstrap(w io.Writer) error { return s.writeBootstrap(w) }

// String describes the session without its key.
func (s *Session) String() string { return "alphabet.Session(" + s.id + ")" }

func (s *Session) has(n Need) bool {
	for _, x := range s.needs {
		if x == n {
			return true
		}
	}
	return false
}

func (s *Session) nextID() string {
	s.requests++
	s.lastID = "x-" + strconv.Itoa(s.requests)
	return s.lastID
}

// grants returns the grants of an opening of the given kind: the baseline session grants the
// text echo and, with the durable need, the durable tool (one compensation with the
// compensation need); the cancellable session grants only the slow tool.
func (s *Session) grants(kind protocol.SessionKind) []protocol.CapabilityGrant {
	if kind == protocol.CancellableSession {
		return []protocol.CapabilityGrant{grant(toolCancellable, protocol.FormatText)}
	}
	out := []protocol.CapabilityGrant{grant(toolTextEcho, protocol.FormatText)}
	if s.has(NeedDurable) {
		out = append(out, s.durableGrant(s.has(NeedCompensation)))
	}
	return out
}

// grant returns a grant of the alphabet's limits.
func grant(tool string, f protocol.EnvelopeFormat) protocol.CapabilityGrant {
	return protocol.CapabilityGrant{Tool: tool, Format: f, MaxCalls: grantCalls, MaxInputBytes: grantInput, MaxOutputBytes: grantOutput}
}

// durableGrant returns the grant of the durable tool, with one compensation or none.
func (s *Session) durableGrant(compensation bool) protocol.CapabilityGrant {
	d := grant(toolDurable, protocol.FormatJSON)
	if compensation {
		d.MaxCompensations = 1
	}
	return d
}

func (s *Session) manifest(kind protocol.SessionKind) protocol.CapabilityManifest {
	return protocol.CapabilityManifest{ProtocolVersion: protocol.ProtocolVersion, SessionID: s.id, Grants: s.grants(kind)}
}

// quickTool is the tool and payload of a quick invocation in the session's kind.
func (s *Session) quickTool() (string, protocol.ToolPayload) {
	if s.kind == protocol.CancellableSession {
		return toolCancellable, protocol.TextPayload("0")
	}
	return toolTextEcho, protocol.TextPayload("explore")
}

func (s *Session) invocation(id, tool string, p protocol.ToolPayload) protocol.InvokeMessage {
	return protocol.InvokeMessage{Invocation: protocol.ToolInvocation{
		ProtocolVersion: protocol.ProtocolVersion, SessionID: s.id, RequestID: id, Tool: tool, Payload: p}}
}

// seal seals m at the next host sequence.
func (s *Session) seal(m protocol.Message) ([]byte, error) {
	_, line, err := s.host.Seal(m)
	if err != nil {
		return nil, fmt.Errorf("%w: sealing %s: %w", ErrConcretize, m.Type(), err)
	}
	return line, nil
}

// forge returns a frame line for m at sequence seq with a tag computed over the host role and
// this session's id, without advancing the host's sequence: frames a sealer refuses to make.
func (s *Session) forge(seq uint64, m protocol.Message) ([]byte, error) {
	tag, err := protocol.ComputeTag(s.key, s.id, protocol.RoleHost, seq, m)
	if err != nil {
		return nil, fmt.Errorf("%w: tagging %s: %w", ErrConcretize, m.Type(), err)
	}
	return protocol.Frame{Sequence: seq, Message: m, Tag: tag}.AppendJSON(nil), nil
}

// cancel builds a cancel naming target under a fresh cancellation id.
func (s *Session) cancel(target string) protocol.CancelMessage {
	id := s.nextID()
	tool := toolCancellable
	if target == s.current && s.currentTool != "" {
		tool = s.currentTool
	}
	return protocol.CancelMessage{Request: protocol.WorkerCancellationRequest{
		ProtocolVersion: protocol.ProtocolVersion, SessionID: s.id, CancellationID: id, RequestID: target, Tool: tool}}
}

// Concretize returns the action for the abstract input n in the session's current state.
// Well-formed frames are sealed by the session's authenticator; malformed ones are built from
// a well-formed message and the wire core's tag function, so that each departs from the
// well-formed frame in exactly the way its symbol names.
func (s *Session) Concretize(n Name) (Action, error) {
	sym, ok := Lookup(n)
	if !ok {
		if p, isProbe := LookupProbe(n); isProbe {
			return s.concretizeProbe(p)
		}
		return Action{}, fmt.Errorf("%w: unknown symbol %q", ErrConcretize, n)
	}
	var line []byte
	var err error
	switch sym.Name {
	case OpenBaseline, OpenCancellable, OpenAgain:
		// The first opening decides the session's kind; open_again repeats the kind in force
		// (or opens a baseline session when it comes first).
		kind := protocol.BaselineSession
		if sym.Name == OpenCancellable {
			kind = protocol.CancellableSession
		}
		if s.opened && sym.Name == OpenAgain {
			kind = s.kind
		}
		line, err = s.seal(protocol.OpenSessionMessage{Manifest: s.manifest(kind)})
		if !s.opened {
			s.kind, s.opened, s.granted = kind, true, s.grants(kind)
		}
	case Invoke:
		tool, p := s.quickTool()
		line, err = s.seal(s.invocation(s.nextID(), tool, p))
	case InvokeSlow:
		line, err = s.seal(s.invocation(s.nextID(), toolCancellable, protocol.TextPayload(slowMillis)))
	case InvokeReusedID:
		id := s.lastID
		if id == "" {
			id = s.nextID()
		}
		tool, p := s.quickTool()
		line, err = s.seal(s.invocation(id, tool, p))
	case InvokeOverLimit:
		line, err = s.seal(s.invocation(s.nextID(), toolTextEcho, protocol.TextPayload(strings.Repeat("x", grantInput+1))))
	case InvokeBadTag:
		tool, p := s.quickTool()
		line, err = s.forge(s.host.NextOutgoing(), s.invocation(s.nextID(), tool, p))
		if err == nil {
			// Flip the last hex digit of the tag: the line stays canonical, the tag is wrong.
			k := len(line) - 3
			if line[k] == '0' {
				line[k] = '1'
			} else {
				line[k] = '0'
			}
		}
	case InvokeWrongSeq:
		tool, p := s.quickTool()
		line, err = s.forge(s.host.NextOutgoing()+1, s.invocation(s.nextID(), tool, p))
	case InvokeForged:
		tool, p := s.quickTool()
		m := s.invocation(s.nextID(), tool, p)
		m.Invocation.SessionID = forgedSession
		line, err = s.forge(s.host.NextOutgoing(), m)
	case ResultFromHost:
		line, err = s.seal(protocol.ResultMessage{Result: protocol.ToolResult{
			ProtocolVersion: protocol.ProtocolVersion, SessionID: s.id, RequestID: s.nextID(), Payload: protocol.TextPayload("explore")}})
	case CancelCurrent:
		target := s.current
		if target == "" {
			target = s.lastID
		}
		if target == "" {
			target = "x-none"
		}
		line, err = s.seal(s.cancel(target))
	case CancelFinished:
		target := s.finished
		if target == "" {
			target = "x-none"
		}
		line, err = s.seal(s.cancel(target))
	case CancelUnknown:
		line, err = s.seal(s.cancel("x-unknown"))
	case CloseSession:
		line, err = s.seal(protocol.CloseSessionMessage{ProtocolVersion: protocol.ProtocolVersion, Session: s.id})
	case EndOfInput:
		return Action{EndInput: true}, nil
	case Dispatch:
		return s.concretizeDispatch(recordInput())
	case Reconcile:
		key := s.operation
		if key == "" {
			key = "op-none"
		}
		line, err = s.seal(protocol.ReconcileOperationMessage{Request: protocol.OperationReconcileRequest{
			ProtocolVersion: protocol.ProtocolVersion, SessionID: s.id, RequestID: s.nextID(), Tool: toolDurable, OperationKey: key}})
	case CompensateScope:
		// The fingerprint of the durable grant with one compensation: the one a baseline
		// opening grants when the worker declares both needs, so that only the scope is wrong.
		fp, ferr := s.durableGrant(true).CompensationFingerprint()
		if ferr != nil {
			return Action{}, fmt.Errorf("%w: %w", ErrConcretize, ferr)
		}
		key := s.operation
		if key == "" {
			key = "op-none"
		}
		line, err = s.seal(protocol.CompensateOperationMessage{Request: protocol.OperationCompensationRequest{
			ProtocolVersion: protocol.ProtocolVersion, SessionID: s.id, RequestID: s.nextID(), Tool: toolDurable,
			OperationKey: key, CompensationKey: "cmp-" + strconv.Itoa(s.requests), TenantScope: wrongScope,
			GrantFingerprint: fp, Payload: recordInput()}})
	case StoreFault, Restart:
		return Action{Fault: sym.Name}, nil
	default:
		return Action{}, fmt.Errorf("%w: no rule for symbol %q", ErrConcretize, n)
	}
	if err != nil {
		return Action{}, err
	}
	if sym.Name == InvokeSlow && s.current == "" {
		s.current = s.lastID
	}
	return Action{Line: line}, nil
}

// recordInput is the durable tool's input {"value":"explore"}: mode succeed (PRF-008).
func recordInput() protocol.ToolPayload {
	return protocol.JSONPayload(canonjson.Object(canonjson.Entry{Key: "value", Value: canonjson.String("explore")}))
}

// Observation is what a driver saw after one action: the lines the worker wrote (without
// their newlines), whether its output ended, and how the process ended.
type Observation struct {
	Lines [][]byte
	// Exit is Running while the process runs, its status when it ended during the step, Gone
	// when it had ended before the step, Killed or Hung.
	Exit Exit
}

// Abstract opens each line with the session's authenticator, updates the session from the
// answers (the running and the last completed invocation), and returns the abstract output.
// A line that does not open makes the answer "invalid:<kind>"; lines after it are not opened
// (the worker's sequence is lost).
func (s *Session) Abstract(o Observation) Output {
	var answers []string
	for _, line := range o.Lines {
		f, err := s.host.Open(line)
		if err != nil {
			answers = append(answers, "invalid:"+errorKind(err))
			break
		}
		answers = append(answers, s.answer(f.Message))
	}
	return Output{Answers: strings.Join(answers, "+"), Exit: o.Exit}
}

// answer abstracts one worker message and updates the session.
func (s *Session) answer(m protocol.Message) string {
	switch m := m.(type) {
	case protocol.ResultMessage:
		if m.Result.RequestID == s.current {
			s.current, s.currentTool = "", ""
		}
		s.finished = m.Result.RequestID
		return string(m.Type())
	case protocol.CancellationResultMessage:
		if m.Result.Outcome == protocol.OutcomeAcknowledged && m.Result.RequestID == s.current {
			s.current, s.currentTool = "", ""
		}
		return string(m.Type()) + ":" + m.Result.Outcome.String()
	case protocol.OperationResultMessage:
		return string(m.Type()) + ":" + m.Result.Status.State.String()
	case protocol.ReconciledOperationMessage:
		return string(m.Type()) + ":" + m.Result.Status.State.String()
	case protocol.CompensationResultMessage:
		return string(m.Type()) + ":" + m.Result.Status.State.String()
	}
	return string(m.Type())
}

// errorKind names the protocol error kind of err, or "error".
func errorKind(err error) string {
	if k, ok := protocol.KindOf(err); ok {
		return k.String()
	}
	return "error"
}

// Restart moves the session to a fresh worker process on the same journal (the restart
// symbol): the new process gets a new session id and key, so the session is no longer open
// and the host's sequences start again, while the operation key and the request ids used stay,
// so reconcile still names the operation dispatched before the restart. The caller keeps and
// closes key.
func (s *Session) Restart(id string, key *protocol.SessionKey, mode canonjson.Mode) error {
	if s.boot == Restart {
		// restart_same_session: the fresh process is given the session id and key again.
		id, key, s.boot = s.id, s.key, ""
	}
	host, err := newHost(id, key, mode)
	if err != nil {
		return err
	}
	s.id, s.key, s.host = id, key, host
	s.kind, s.opened, s.current, s.finished = 0, false, "", ""
	s.granted, s.currentTool = nil, ""
	return nil
}
