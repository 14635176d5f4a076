package hostexplore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/driver"
	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/opkey"
	"github.com/splashv5/conform/impl/protocol"
)

// Tools and scope of the explorer's sessions.
const (
	echoTool    = "conf.echo"
	durableTool = "conf.durable.record"
	scope       = "hx-tenant"
	otherScope  = "hx-other"
	// echoMaxCalls and echoMaxInput are the echo grant's call budget and input limit.
	echoMaxCalls = 4
	echoMaxInput = 32
	// patientMS is the exchange deadline of start:patient.
	patientMS = 3000
)

// Violation is a broken invariant: the step at which it was seen, what the invariant expected
// and what came.
type Violation struct {
	Invariant string
	Step      int
	Expected  string
	Observed  string
}

// Error describes the violation.
func (v *Violation) Error() string {
	return fmt.Sprintf("step %d: %s: expected %s; observed %s", v.Step+1, v.Invariant, v.Expected, v.Observed)
}

// Sequence is the outcome of running one command sequence: the abstract output of every
// step run, and the first violation (nil when every invariant held).
type Sequence struct {
	Outputs    []string
	Violation  *Violation
	Transcript []string
	Stderr     string
}

// machine is what one run of a sequence shares: the driver, the side channel its fake
// workers report on, and what the runner knows of the host's ledger from the frames.
type machine struct {
	cfg      *Config
	dir      string
	side     *conformance.SideChannel
	drv      *driver.Process
	features []string
	w        *worker
	workers  []*worker
	sessions int
	reqs     int
	ops      int
	step     int
	// scope and deadlineMS are those the last start gave.
	scope      string
	deadlineMS int

	// dispatched counts the dispatch_operation frames of each operation key, refusals the
	// refused reconciliations of a recover (each allows one more dispatch, HDR-055), and
	// refused the keys whose refusal is not yet spent.
	dispatched map[string]int
	refusals   map[string]int
	refused    map[string]bool
	// compensation is each operation's compensation key, and answered the compensation keys
	// whose answer the host reported.
	compensation map[string]string
	answered     map[string]bool
	// cmpScope is the tenant each compensation key was first sent under.
	cmpScope map[string]string
	// inv is the invocation of the last begin on a cancellable session.
	inv struct {
		id                            string
		at                            time.Time
		cancelled, resulted, finished bool
	}
	// succeeded are the keys of the steps the host reported succeeded, oldest first.
	succeeded []string
	// uncertain are the operation and compensation keys whose frame reached a worker and whose
	// answer the host did not report; lost those whose input the runner removed (HDR-056).
	uncertain map[string]bool
	lost      map[string]bool

	mu         sync.Mutex
	transcript []string
}

func (m *machine) logf(format string, args ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.transcript) < 2000 {
		m.transcript = append(m.transcript, fmt.Sprintf(format, args...))
	}
}

// Run runs one command sequence against a fresh driver on a fresh state directory and judges
// it. A non-nil error means the run could not be made (no scratch directory, no driver).
func Run(cfg *Config, syms []Symbol) (Sequence, error) {
	m := &machine{cfg: cfg, dispatched: map[string]int{}, refusals: map[string]int{}, refused: map[string]bool{},
		compensation: map[string]string{}, answered: map[string]bool{}, cmpScope: map[string]string{},
		scope: scope, deadlineMS: cfg.deadlineMS(),
		uncertain: map[string]bool{}, lost: map[string]bool{}}
	var err error
	if m.side, err = conformance.OpenSideChannel(cfg.tempDir(), "hx-", "w.sock", 8); err != nil {
		return Sequence{}, err
	}
	m.dir = m.side.Dir
	defer m.teardown()
	if v := m.startDriver(); v != nil {
		return Sequence{Violation: v, Transcript: m.transcript}, nil
	}
	var seq Sequence
	for i, s := range syms {
		m.step = i
		out, v := m.run(s)
		m.logf("step %d %s: %s", i+1, s, out)
		seq.Outputs = append(seq.Outputs, out)
		if v != nil {
			v.Step = i
			seq.Violation = v
			break
		}
	}
	m.mu.Lock()
	seq.Transcript = slices.Clone(m.transcript)
	m.mu.Unlock()
	if m.drv != nil {
		seq.Stderr, _ = m.drv.Texts()
	}
	return seq, nil
}

// teardown kills every fake worker and the driver and removes the scratch directory. A worker
// that connected but was never taken (a run that ended first) is read for its process group
// and killed too.
func (m *machine) teardown() {
	if m.drv != nil {
		m.drv.Kill()
	}
	for {
		select {
		case conn := <-m.side.Conns:
			w, _ := accept(conn, 0, time.Now().Add(time.Second))
			m.workers = append(m.workers, w)
			continue
		default:
		}
		break
	}
	for _, w := range m.workers {
		w.stop()
	}
	m.side.Close()
}

// violation returns a violation of invariant name.
func violation(name, expected, observed string) *Violation {
	return &Violation{Invariant: name, Expected: expected, Observed: observed}
}

// startDriver starts the driver and says hello (HDR-010).
func (m *machine) startDriver() *Violation {
	d, err := driver.Start(m.cfg.Driver, m.cfg.env(), "")
	if err != nil {
		return violation("driver-lines", "the driver starts", err.Error())
	}
	m.drv = d
	id, err := d.Send(map[string]any{"op": "hello"})
	if err != nil {
		return violation("driver-lines", "the driver reads hello", err.Error())
	}
	o, err := d.Await(id, time.Now().Add(m.cfg.limit()))
	if err != nil || !o.OK {
		return violation("driver-lines", `{"ok":true,"features":[...]} for hello`, fmt.Sprintf("%s %v", conformance.Clip(string(o.Raw()), 200), err))
	}
	m.features = o.Features
	return nil
}

// run runs one symbol and returns its abstract output.
func (m *machine) run(s Symbol) (string, *Violation) {
	if !slices.Contains(m.features, needOf(s.Op)) {
		return "skipped", nil
	}
	switch s.Op {
	case "restart":
		return m.restart(s.How == howLose)
	case "start":
		return m.start(s.How)
	case "bogus":
		// An unknown op: answered Unsupported, and the driver keeps running (HDR-012).
		return m.exchange(s, map[string]any{"op": "explore_unknown_op"}, "", want{})
	}
	if m.w == nil {
		// A command of a session before any start: the driver refuses it; nothing is judged
		// but the outcome line.
		cmd := map[string]any{"op": s.Op}
		if s.Op == "close" || s.Op == "wait" {
			return m.exchange(s, cmd, "", want{})
		}
		return "skipped", nil
	}
	m.reqs++
	req := fmt.Sprintf("hx-r%d", m.reqs)
	switch s.Op {
	case "invoke", "begin":
		if s.How == howFlood {
			return m.flood(s, req)
		}
	}
	switch s.Op {
	case "invoke":
		tool, payload := echoTool, invokePayload
		switch s.How {
		case howDenied:
			tool = deniedTool
		case howTooBig:
			payload = protocol.TextPayload(strings.Repeat("x", echoMaxInput+1))
		}
		p := payload.AppendJSON(nil)
		return m.exchange(s, map[string]any{"op": "invoke", "request_id": req, "tool": tool, "payload": rawJSON(p)}, req,
			want{tool: tool, payload: p, admit: m.admit(req, tool, payload)})
	case "dispatch":
		m.ops++
		key, p := fmt.Sprintf("op-hx-%d", m.ops), operationInput(m.ops, s.How)
		return m.exchange(s, map[string]any{"op": "dispatch", "request_id": req, "tool": durableTool, "key": key, "payload": rawJSON(p)}, req,
			want{tool: durableTool, key: key, payload: p})
	case "reconcile":
		key := fmt.Sprintf("op-hx-%d", max(m.ops, 1))
		return m.exchange(s, map[string]any{"op": "reconcile", "request_id": req, "tool": durableTool, "key": key}, req, want{tool: durableTool, key: key})
	case "step":
		m.ops++
		p := stepInput(m.ops, s.How)
		nonce := "nonce-" + req
		return m.exchange(s, map[string]any{"op": "step", "request_id": req, "tool": durableTool, "payload": rawJSON(p), "nonce": nonce}, req,
			want{tool: durableTool, payload: p, derived: operationKey(durableTool, p, nonce)})
	case "recover":
		return m.exchange(s, map[string]any{"op": "recover", "request_id": req}, req, want{})
	case "compensate":
		if len(m.succeeded) == 0 {
			return "skipped", nil
		}
		key, p := m.succeeded[len(m.succeeded)-1], jsonValue(compensateInput)
		// Every compensate gives the same input, which the host may keep again before it
		// refuses anything (HDR-056): a lost compensation input is lost no longer.
		for k := range m.lost {
			if strings.HasPrefix(k, protocol.CompensationKeyPrefix) {
				delete(m.lost, k)
			}
		}
		return m.exchange(s, map[string]any{"op": "compensate", "request_id": req, "key": key, "payload": rawJSON(p), "nonce": "nonce-" + req}, req,
			want{key: key, payload: p, nonce: "nonce-" + req})
	case "close", "wait":
		return m.exchange(s, map[string]any{"op": s.Op}, "", want{})
	case "begin":
		p := invokePayload.AppendJSON(nil)
		return m.exchange(s, map[string]any{"op": "begin", "request_id": req, "tool": echoTool, "payload": rawJSON(p)}, req, want{tool: echoTool, payload: p})
	case "cancel":
		target := m.inv.id
		if target == "" {
			target = "hx-never-begun"
		}
		cid := "hx-c" + req
		return m.exchange(s, map[string]any{"op": "cancel", "request_id": target, "cancellation_id": cid}, target, want{key: cid})
	case "finish":
		if m.inv.id == "" || m.inv.finished {
			return "skipped", nil
		}
		// The time between begin and finish is the runner's (HDR-051): more than a deadline.
		time.Sleep(time.Until(m.inv.at.Add(m.deadline() + 100*time.Millisecond)))
		return m.exchange(s, map[string]any{"op": "finish", "request_id": m.inv.id}, m.inv.id, want{})
	}
	return "skipped", nil
}

// Payloads of the commands: a text with a control character, which canonical JSON escapes
// with lower-case hexadecimal, and a non-ASCII one; JSON with numbers a float-based reader
// rewrites (HDR-047).
var invokePayload = protocol.TextPayload("ping\x1f \u00e9")

// The one step of the explorer's plan: its ID and source.
const (
	exploreStep   = "explore"
	exploreSource = "// splash-conform explore host\nlet out = tool.call(\"" + durableTool + "\", input);\n"
)

// explorePlan is the workflow plan every start with a state directory gives (HDR-049): one
// step that calls the durable tool with its input.
var explorePlan = map[string]any{"steps": []map[string]string{{"id": exploreStep, "source": exploreSource}}}

// deniedTool is a tool no manifest of the explorer grants.
const deniedTool = "conf.not.granted"

// operationInput is the input of dispatch n: a portable number that a binary64 reader rewrites
// (1.0 as 1, HDR-047), and no other, so that a host that rewrites it still sends it; under howBigNum it holds 2^64 and under howHugeNum 1e400,
// numbers the other number model reads differently, which a host refuses or never sends
// (ENC-034, ENC-037).
func operationInput(n int, how string) []byte {
	switch how {
	case howBigNum:
		return jsonValue(fmt.Sprintf(`{"value":%d,"big":18446744073709551616}`, n))
	case howHugeNum:
		return jsonValue(fmt.Sprintf(`{"value":%d,"huge":1e400}`, n))
	}
	return jsonValue(fmt.Sprintf(`{"value":%d,"ratio":1.0}`, n))
}

// stepInput is the input of step n: an object of integers, the inputs of the plan's step
// (EXP-015); under howBigNum it holds 2^64.
func stepInput(n int, how string) []byte {
	if how == howBigNum {
		return jsonValue(fmt.Sprintf(`{"value":%d,"big":18446744073709551616}`, n))
	}
	return jsonValue(fmt.Sprintf(`{"value":%d}`, n))
}

// compensateInput is the inverse input of every compensate: a portable number a binary64
// reader rewrites (HDR-047).
const compensateInput = `{"ratio":1.0,"undo":true}`

// planFingerprint is the fingerprint of explorePlan (WFL-045), by the derivation the host's
// step engine uses.
var planFingerprint = opkey.PlanFingerprint([]opkey.Step{{ID: exploreStep, Source: exploreSource}})

// operationKey is the operation key of a step of tool with input p and nonce under
// explorePlan (WFL-001, HDR-049), by the ledger's derivation.
func operationKey(tool string, p []byte, nonce string) string {
	payload, err := protocol.DecodeToolPayload(p, canonjson.Preserve)
	if err != nil {
		return ""
	}
	input, err := protocol.CanonicalOperationInputBytes(payload)
	if err != nil {
		return ""
	}
	return opkey.OperationKey(planFingerprint, exploreStep, tool, input, []byte(nonce))
}

// compensationKey is the compensation key of the compensation req binds, with the input p and
// nonce, under explorePlan and the session's durable grant (WFL-010, HDR-049), by the
// ledger's derivation.
func compensationKey(req protocol.OperationCompensationRequest, p []byte, nonce string) string {
	payload, err := protocol.DecodeToolPayload(p, canonjson.Preserve)
	if err != nil {
		return ""
	}
	input, err := protocol.CanonicalOperationInputBytes(payload)
	if err != nil {
		return ""
	}
	return opkey.CompensationKey(planFingerprint, req.OperationKey, req.Tool, req.TenantScope, req.GrantFingerprint, input, []byte(nonce))
}

// admit is what the session's authorizer decides for the invocation an invoke command asks
// for on a healthy ordinary session (AUZ-005 to AUZ-011): the host must send it when the
// authorizer admits it and must not when it refuses. The runner's authorizer is the host
// library's, fed the same manifest and every invocation the host's own authorizer sees. A
// cancellable session's invocations are charged as their frames come (see authorizeFrame).
func (m *machine) admit(requestID, tool string, p protocol.ToolPayload) *admission {
	w := m.w
	if w == nil || w.authz == nil || w.state.Kind != protocol.BaselineSession || w.poisoned != "" || w.ended || w.inputEnded {
		return nil
	}
	inv, err := protocol.NewToolInvocation(w.boot.SessionID, requestID, tool, p)
	if err == nil {
		_, err = w.authz.Authorize(inv)
	}
	return &admission{err: err}
}

// admission is the runner's authorizer's decision on an invoke command's invocation.
type admission struct{ err error }

// authorizeFrame charges an invoke frame no command decision covers (a cancellable session's)
// to the session's authorizer: a frame it refuses is one the host had to refuse unsent.
func (ex *exchangeState) authorizeFrame(w *worker, inv protocol.ToolInvocation) *Violation {
	if ex.want.admit != nil || w.authz == nil {
		return nil
	}
	// The slot rule of TRN-112: the invocation keeps an identity for its cancellation when one
	// is left after its own.
	w.slotKept = w.authz.ReservedRequestIDs()+1 < protocol.MaxSessionRequestIDs
	a, err := w.authz.Authorize(inv)
	if err != nil {
		return violation("authorized", "no frame: the session's authorizer refuses the invocation ("+err.Error()+")", "invoke of "+inv.RequestID)
	}
	w.keepToken(a)
	return nil
}

// want is what the request frame of a command must carry, as the command gave it (zero: not
// judged).
type want struct {
	tool, key string
	payload   []byte
	// nonce is a compensate's nonce, from which its compensation key is derived; admit the
	// authorizer's decision on an invocation.
	nonce string
	admit *admission
	// derived is the operation key a step's dispatch must carry (HDR-049).
	derived string
}

// needOf returns the feature a command needs.
func needOf(op string) string {
	for _, e := range entries {
		if e.op == op {
			return e.need
		}
	}
	return "?"
}

// manifest returns the manifest of a fresh session.
func (m *machine) manifest() (protocol.CapabilityManifest, error) {
	m.sessions++
	echo := protocol.TextGrant(echoTool)
	echo.MaxCalls, echo.MaxInputBytes, echo.MaxOutputBytes = echoMaxCalls, echoMaxInput, 64
	grants := []protocol.CapabilityGrant{echo, floodGrant()}
	if slices.Contains(m.features, featDurable) || slices.Contains(m.features, featRecover) {
		d := protocol.JSONGrant(durableTool)
		d.MaxCalls, d.MaxCompensations = 8, 2
		grants = append(grants, d)
	}
	return protocol.NewCapabilityManifest(fmt.Sprintf("hx-s%d", m.sessions), grants)
}

// start starts a fresh worker; the one it replaces must be gone when the outcome comes
// (HDR-053).
func (m *machine) start(how string) (string, *Violation) {
	man, err := m.manifest()
	if err != nil {
		return "", violation("start", "a manifest", err.Error())
	}
	argv := append(slices.Clone(m.cfg.fake()), m.side.Sock, "--child")
	sc, ms := scope, m.cfg.deadlineMS()
	switch how {
	case howOther:
		sc = otherScope
	case howPatient:
		ms = patientMS
	}
	cmd := map[string]any{"op": "start", "command": argv, "manifest": rawJSON(man.AppendJSON(nil)), "deadline_ms": ms, "scope": sc}
	if slices.Contains(m.features, featRecover) {
		cmd["state"], cmd["inputs"] = filepath.Join(m.dir, "state"), filepath.Join(m.dir, "inputs")
		cmd["plan"] = explorePlan
	}
	old := m.w
	sym := Symbol{Op: "start", How: how}
	if how == howCancel {
		cmd["cancellable"] = true
	}
	badScope := how == howBadScope
	if badScope {
		cmd["scope"] = "Not A Token"
	}
	out, v := m.exchange(sym, cmd, "", want{payload: man.AppendJSON(nil)})
	if badScope && v == nil {
		// Whether a refused start stopped the running worker is the driver's: the runner
		// judges no session until the next start.
		m.w, m.inv.id = nil, ""
	}
	if v != nil || badScope {
		return out, v
	}
	m.inv.id = ""
	if m.w != old && m.w != nil {
		m.scope, m.deadlineMS = sc, ms
		if m.w.authz, err = authorizer.New(man); err != nil {
			return out, violation("start", "a manifest the authorizer takes", err.Error())
		}
	}
	if m.w != old && m.w != nil && !slices.Equal(m.w.hello.Argv[1:], argv[1:]) {
		return out, violation("start", fmt.Sprintf("the worker command line %q as given", argv[1:]), fmt.Sprintf("%q", m.w.hello.Argv[1:]))
	}
	if m.w == old || m.w == nil || !m.w.opened {
		return out, violation("start", "the given worker started and sent open_session before the ok outcome", out)
	}
	// A worker that exited by itself may leave its child; only a running one must be stopped.
	if old != nil && !old.ended && !old.gone(m.cfg.grace()) {
		return out, violation("contained", "the replaced worker's process group gone when start answers", fmt.Sprintf("worker %d still runs", old.index))
	}
	return out, nil
}

// restart kills the driver's process group, as a host crash would, and the workers, then
// starts a new driver process on the same state directory (HDR-040).
func (m *machine) restart(lose bool) (string, *Violation) {
	m.drv.KillGroup(time.Now().Add(m.cfg.limit()))
	for _, w := range m.workers {
		w.stop()
	}
	<-m.drv.Exited()
	m.w, m.inv.id = nil, ""
	if lose {
		// Every input kept so far is lost: what it names must never be sent again (HDR-050,
		// HDR-056).
		inputs := filepath.Join(m.dir, "inputs")
		if err := os.RemoveAll(inputs); err == nil {
			_ = os.Mkdir(inputs, 0o700)
		}
		for k := range m.uncertain {
			m.lost[k] = true
		}
	}
	if v := m.startDriver(); v != nil {
		return "restart failed", v
	}
	return "restarted", nil
}

// exchange sends cmd, plays the fake worker by s.How for the frames the host sends meanwhile,
// and judges the frames and the outcome. requestID is the command's request id ("" for
// commands without one).
func (m *machine) exchange(s Symbol, cmd map[string]any, requestID string, wt want) (string, *Violation) {
	began := time.Now()
	id, err := m.drv.Send(cmd)
	if err != nil {
		return "", violation("driver-lines", "the driver reads the command", err.Error())
	}
	m.logf("driver: command %s", conformance.CommandTranscript(cmd, 200))
	ex := &exchangeState{m: m, sym: s, requestID: requestID, began: began, want: wt}
	ex.wasHealthy = ex.healthy()
	if s.Op == "finish" {
		ex.finish()
	}
	limit := time.NewTimer(m.cfg.limit())
	defer limit.Stop()
	var o driver.Outcome
	for done := false; !done; {
		var lines chan lineEvent
		if m.w != nil && !m.w.inputEnded {
			lines = m.w.lines
		}
		select {
		case conn := <-m.side.Conns:
			if v := ex.accept(conn); v != nil {
				return ex.text(""), v
			}
		case ev := <-lines:
			if v := ex.line(ev); v != nil {
				return ex.text(""), v
			}
		case ev := <-m.drv.Lines():
			if o, err = ev.Outcome(id); err != nil {
				return ex.text(""), violation("driver-lines", fmt.Sprintf("the outcome of command %d", id), err.Error())
			}
			ex.outcomeAt, ex.outcomeOK = time.Now(), o.OK
			done = true
		case <-limit.C:
			if ex.waits() || s.Op == "wait" {
				return ex.text("none"), violation("deadline", fmt.Sprintf("an outcome within the exchange deadline (%d ms)", m.deadlineMS),
					fmt.Sprintf("none after %v", m.cfg.limit()))
			}
			return ex.text("none"), violation("driver-lines", "an outcome for "+s.Op, fmt.Sprintf("none after %v", m.cfg.limit()))
		}
	}
	m.logf("driver: outcome %s", conformance.OutcomeTranscript(o.Raw(), 200))
	// The worker a start launched reports on the side channel, which may come after the
	// outcome; frames the host wrote just before answering are judged with the command.
	if s.Op == "start" && o.OK && !ex.accepted {
		select {
		case conn := <-m.side.Conns:
			if v := ex.accept(conn); v != nil {
				return ex.text(outcomeText(o)), v
			}
		case <-time.After(m.cfg.limit()):
		}
	}
	ex.drain()
	if ex.v != nil {
		return ex.text(outcomeText(o)), ex.v
	}
	return ex.text(outcomeText(o)), ex.judge(o, time.Since(began))
}

// outcomeText is an outcome's abstract text: ok or error, the error's kind left out
// (HDR-022: a runner requires no kind but Denied and Indeterminate).
func outcomeText(o driver.Outcome) string {
	if o.OK {
		return "ok"
	}
	return "error"
}

// exchangeState is what one command's exchange saw.
type exchangeState struct {
	m         *machine
	sym       Symbol
	requestID string
	want      want
	began     time.Time
	frames    []string
	accepted  bool
	// request is the request frame the behaviour answered, answer what was sent for it,
	// answeredAt when.
	request    protocol.Message
	answer     protocol.Message
	answeredAt time.Time
	hostileDid bool
	refusedKey string
	// outcomeAt is when the outcome came, outputClosed when the worker's output ended after
	// close_session.
	outcomeAt, outputClosed time.Time
	outcomeOK               bool
	v                       *Violation
	// hung says that the worker withheld the end of its output after close_session, overlong
	// that it wrote an answer line past 1 MiB; wasHealthy that the session could carry an
	// exchange when the command was sent.
	hung, overlong, wasHealthy bool
}

// text is the abstract output of the exchange: the frames' kinds, then the outcome.
func (ex *exchangeState) text(outcome string) string {
	f := "-"
	if len(ex.frames) > 0 {
		f = strings.Join(ex.frames, "+")
	}
	if outcome == "" {
		return f
	}
	return f + " " + outcome
}

// waits says whether the behaviour leaves the host waiting for its deadline.
func (ex *exchangeState) waits() bool {
	return ex.request != nil && (ex.sym.How == howSilent || ex.sym.How == howLate)
}

// accept takes a fake worker that connected: the driver started it.
func (ex *exchangeState) accept(conn net.Conn) *Violation {
	m := ex.m
	w, err := accept(conn, len(m.workers)+1, time.Now().Add(m.cfg.limit()))
	m.workers = append(m.workers, w)
	if err != nil {
		return violation("start", "the fake worker's report and a valid bootstrap", err.Error())
	}
	if ex.sym.Op != "start" {
		return violation("start", "a worker started only by start", fmt.Sprintf("worker %d started during %s", w.index, ex.sym.Op))
	}
	if ex.accepted {
		return violation("start", "one worker per start", fmt.Sprintf("worker %d started as well", w.index))
	}
	ex.accepted = true
	if ex.sym.How == howCancel {
		w.state.Kind = protocol.CancellableSession
	}
	m.logf("worker %d: started, pid %d, session %s", w.index, w.hello.Pid, w.boot.SessionID)
	m.w = w
	return nil
}

// drain judges the lines the host wrote until a short quiet.
func (ex *exchangeState) drain() {
	m := ex.m
	for ex.v == nil && m.w != nil && !m.w.inputEnded {
		wait := 20 * time.Millisecond
		// A begin answers before its invoke frame is relayed, a start may before its
		// open_session is: wait for them.
		if ex.sym.Op == "start" && !m.w.opened || ex.sym.Op == "begin" && ex.request == nil && ex.outcomeOK {
			wait = m.cfg.grace()
		}
		select {
		case ev := <-m.w.lines:
			ex.v = ex.line(ev)
		case <-time.After(wait):
			return
		}
	}
}

// line judges one line the host wrote to the current worker, or the end of its input, and
// answers it by the symbol's behaviour.
func (ex *exchangeState) line(ev lineEvent) *Violation {
	m, w := ex.m, ex.m.w
	if ev.err != nil {
		m.logf("worker %d: input ended", w.index)
		w.inputEnded = true
		switch {
		case w.ended:
		case w.dying(50 * time.Millisecond):
			// The host killed it: its relay ended with it.
			w.ended = true
		default:
			// A worker whose input ends exits 0 (WRK-092): the host closed it at a frame
			// boundary, since every line it wrote was judged whole. Only a close ends it so
			// that the worker's status is its own; elsewhere the end of the input may be the
			// first act of the host stopping it, which may then report -1.
			w.exit(0, ex.sym.Op == "close")
		}
		return nil
	}
	if w.poisoned != "" {
		return violation("poisoned-silent", "no frame after the failed "+w.poisoned, "host frame: "+conformance.Clip(string(ev.line), 120))
	}
	f, fe := w.open(ev.line)
	if fe != nil {
		return violation(fe.name, "a frame a worker accepts", fe.observed)
	}
	if bad, ok := canonjson.FirstNonPortableNumber(string(ev.line)); ok {
		return violation("portable-numbers", "no frame with a number the other number model reads differently", fmt.Sprintf("%s in a %s frame", bad, f.Message.Type()))
	}
	typ := f.Message.Type()
	ex.frames = append(ex.frames, string(typ))
	m.logf("worker %d: received #%d %s", w.index, f.Sequence, typ)
	if v := ex.asGiven(f.Message); v != nil {
		return v
	}
	if v := ex.durable(w, f.Message); v != nil {
		return v
	}
	if typ == protocol.TypeInvoke && w.state.Kind == protocol.CancellableSession {
		w.state.Active = true
	}
	return ex.respond(w, f.Message)
}

// requestType is the frame each command sends (recover chooses its own).
var requestType = map[string]protocol.MessageType{
	"invoke": protocol.TypeInvoke, "begin": protocol.TypeInvoke, "cancel": protocol.TypeCancel, "dispatch": protocol.TypeDispatchOperation, "step": protocol.TypeDispatchOperation,
	"reconcile": protocol.TypeReconcileOperation, "compensate": protocol.TypeCompensateOperation, "start": protocol.TypeOpenSession,
}

// asGiven judges a frame against the command that made the host send it: its kind, and the
// request id, tool, key and payload the command gave (HDR-020, HDR-021, HDR-026, HDR-027,
// HDR-041, HDR-043, HDR-047); an invocation the manifest does not grant is never sent.
func (ex *exchangeState) asGiven(msg protocol.Message) *Violation {
	op, typ := ex.sym.Op, msg.Type()
	if op == "recover" || typ == protocol.TypeCloseSession && op == "close" {
		return nil
	}
	if ex.sym.How == howDenied {
		return violation("authorized", "no frame: the manifest grants no "+deniedTool, string(typ))
	}
	if a := ex.want.admit; a != nil && a.err != nil && typ == protocol.TypeInvoke {
		return violation("authorized", "no frame: the session's authorizer refuses the invocation ("+a.err.Error()+")", string(typ))
	}
	if want, ok := requestType[op]; !ok || want != typ {
		return violation("request-as-given", fmt.Sprintf("%s sends %s", op, requestType[op]), fmt.Sprintf("%s during %s", typ, op))
	}
	var reqID, tool, key string
	var payload []byte
	switch r := msg.(type) {
	case protocol.OpenSessionMessage:
		if got := r.Manifest.AppendJSON(nil); !bytes.Equal(got, ex.want.payload) {
			return violation("start", "open_session with the manifest given: "+conformance.Clip(string(ex.want.payload), 200), conformance.Clip(string(got), 200))
		}
		return nil
	case protocol.CancelMessage:
		reqID, key = r.Request.RequestID, r.Request.CancellationID
		if t, ok := ex.m.w.tokens[reqID]; ok {
			// The cancellation reserves its id, as the host's authorizer does (AUZ-015).
			_, _ = ex.m.w.authz.AuthorizeCancellation(r.Request, t)
		}
	case protocol.InvokeMessage:
		reqID, tool, payload = r.Invocation.RequestID, r.Invocation.Tool, r.Invocation.Payload.AppendJSON(nil)
		if v := ex.authorizeFrame(ex.m.w, r.Invocation); v != nil {
			return v
		}
	case protocol.DispatchOperationMessage:
		reqID, tool, key, payload = r.Request.RequestID, r.Request.Tool, r.Request.OperationKey, r.Request.Payload.AppendJSON(nil)
	case protocol.ReconcileOperationMessage:
		reqID, tool, key = r.Request.RequestID, r.Request.Tool, r.Request.OperationKey
	case protocol.CompensateOperationMessage:
		reqID, key, payload = r.Request.RequestID, r.Request.OperationKey, r.Request.Payload.AppendJSON(nil)
	}
	w := ex.want
	switch {
	case reqID != ex.requestID:
		return violation("request-as-given", fmt.Sprintf("%s with the request id %q given", typ, ex.requestID), fmt.Sprintf("request id %q", reqID))
	case w.tool != "" && tool != w.tool:
		return violation("request-as-given", fmt.Sprintf("%s of tool %q given", typ, w.tool), fmt.Sprintf("tool %q", tool))
	case w.key != "" && key != w.key:
		return violation("request-as-given", fmt.Sprintf("%s of operation key %q given", typ, w.key), fmt.Sprintf("operation key %q", key))
	case w.payload != nil && payload != nil && !bytes.Equal(payload, w.payload):
		return violation("request-as-given", fmt.Sprintf("%s with the payload as given: %s", typ, w.payload), "payload "+conformance.Clip(string(payload), 200))
	}
	if w.derived != "" && key != w.derived {
		return violation("keys-derived", fmt.Sprintf("%s under the operation key %s, derived from the plan's fingerprint %s, the step, tool, input and nonce given", typ, w.derived, planFingerprint),
			"operation key "+key)
	}
	if r, ok := msg.(protocol.CompensateOperationMessage); ok {
		return ex.compensationDerived(r.Request)
	}
	return nil
}

// compensationDerived judges the compensation key of a compensate command's frame: the
// derivation from the plan, the operation, tool, the session's scope and grant, the input and
// the nonce given (WFL-010, HDR-049).
func (ex *exchangeState) compensationDerived(req protocol.OperationCompensationRequest) *Violation {
	m := ex.m
	if _, again := m.compensation[req.OperationKey]; again || ex.want.nonce == "" || m.w == nil || m.w.authz == nil {
		// A second compensation of an operation is judged by compensate-once.
		return nil
	}
	var fp string
	for _, g := range m.w.authz.Manifest().Grants {
		if g.Tool == req.Tool {
			fp, _ = g.CompensationFingerprint()
		}
	}
	if req.TenantScope != m.scope {
		return nil // the tenant invariant judges the scope; the key follows from it
	}
	expected := req
	expected.GrantFingerprint = fp
	if want := compensationKey(expected, ex.want.payload, ex.want.nonce); req.CompensationKey != want {
		return violation("keys-derived", "the compensation key "+want+" derived from the plan, operation, tool, scope, grant, input and nonce given", "compensation key "+req.CompensationKey)
	}
	return nil
}

// durable judges a durable frame against the runner's knowledge of the ledger.
func (ex *exchangeState) durable(w *worker, msg protocol.Message) *Violation {
	m := ex.m
	var reqID, key string
	switch r := msg.(type) {
	case protocol.DispatchOperationMessage:
		reqID, key = r.Request.RequestID, r.Request.OperationKey
		if ex.sym.Op == "recover" && !m.refused[key] {
			return violation("refusal-honoured", "a recover dispatches only an operation whose reconciliation a worker refused, under its recorded key",
				"dispatch_operation of "+key)
		}
		m.dispatched[key]++
		if n, allowed := m.dispatched[key], 1+m.refusals[key]; n > allowed {
			return violation("dispatch-once", fmt.Sprintf("at most %d dispatch_operation of %s (%d refused reconciliations)", allowed, key, m.refusals[key]),
				fmt.Sprintf("dispatch_operation number %d during %s", n, ex.sym.Op))
		}
		delete(m.refused, key)
	case protocol.ReconcileOperationMessage:
		reqID, key = r.Request.RequestID, r.Request.OperationKey
		if ex.sym.Op == "recover" && m.refused[key] {
			return violation("refusal-honoured", "the recorded dispatch_operation of "+key+", whose reconciliation a worker refused",
				"reconcile_operation of "+key+" again")
		}
	case protocol.CompensateOperationMessage:
		reqID, key = r.Request.RequestID, r.Request.OperationKey
		cmp := r.Request.CompensationKey
		tenant, recorded := m.scope, ""
		if ex.sym.Op == "recover" {
			// A recovered compensation keeps the tenant it was first sent under (WFL-026).
			if tenant, recorded = m.cmpScope[cmp], " it was first sent under"; tenant == "" {
				tenant = r.Request.TenantScope
			}
		}
		if r.Request.TenantScope != tenant {
			return violation("tenant", "tenant_scope "+tenant+", the scope given in start"+recorded, "tenant_scope "+r.Request.TenantScope)
		}
		if m.cmpScope[cmp] == "" {
			m.cmpScope[cmp] = tenant
		}
		switch prev, ok := m.compensation[key]; {
		case ok && prev != cmp:
			return violation("compensate-once", "no second compensation of "+key+" (its compensation is "+prev+")", "compensate_operation under "+cmp)
		case ok && m.answered[cmp]:
			return violation("compensate-once", "no compensation frame for "+cmp+", whose answer the host reported", "compensate_operation during "+ex.sym.Op)
		}
		m.compensation[key] = cmp
		if ex.sym.Op == "recover" && m.lost[cmp] {
			return violation("lost-input", "no frame for "+cmp+", whose input was lost", "compensate_operation of "+cmp)
		}
		m.uncertain[cmp] = true
	default:
		return nil
	}
	if _, isCmp := msg.(protocol.CompensateOperationMessage); !isCmp {
		if ex.sym.Op == "recover" && m.lost[key] {
			return violation("lost-input", "no frame for "+key+", whose input was lost", string(msg.Type())+" of "+key)
		}
		if ex.sym.Op == "step" || ex.sym.Op == "recover" {
			m.uncertain[key] = true
		}
	}
	if w.durable {
		return violation("one-durable-exchange", "no second durable frame on the session", fmt.Sprintf("%s during %s", msg.Type(), ex.sym.Op))
	}
	w.durable = true
	if ex.sym.Op == "recover" && reqID != ex.requestID {
		return violation("request-as-given", fmt.Sprintf("%s with request id %q of the %s command", msg.Type(), ex.requestID, ex.sym.Op), fmt.Sprintf("request id %q", reqID))
	}
	return nil
}

// respond answers a request frame by the symbol's behaviour.
func (ex *exchangeState) respond(w *worker, msg protocol.Message) *Violation {
	m := ex.m
	sid := w.boot.SessionID
	var answer protocol.Message
	switch r := msg.(type) {
	case protocol.InvokeMessage:
		answer = protocol.ResultMessage{Result: protocol.ToolResult{ProtocolVersion: protocol.ProtocolVersion, SessionID: sid,
			RequestID: r.Invocation.RequestID, Payload: protocol.TextPayload("pong")}}
	case protocol.DispatchOperationMessage:
		q := r.Request
		answer = protocol.OperationResultMessage{Result: protocol.OperationReconcileResult{ProtocolVersion: protocol.ProtocolVersion, SessionID: sid,
			RequestID: q.RequestID, Tool: q.Tool, OperationKey: q.OperationKey, Status: protocol.Succeeded(jsonPayload(`{"done":1}`))}}
	case protocol.ReconcileOperationMessage:
		q := r.Request
		answer = protocol.ReconciledOperationMessage{Result: protocol.OperationReconcileResult{ProtocolVersion: protocol.ProtocolVersion, SessionID: sid,
			RequestID: q.RequestID, Tool: q.Tool, OperationKey: q.OperationKey, Status: protocol.Succeeded(jsonPayload(`{"done":2}`))}}
		if ex.sym.How == howRefuse && ex.sym.Op == "recover" {
			ex.refusedKey = q.OperationKey
		}
	case protocol.CancelMessage:
		return ex.cancel(w, r.Request)
	case protocol.CloseSessionMessage:
		if ex.sym.How == howHang {
			// The worker never ends its output: the host contains it at the deadline (HDR-052).
			ex.hung = true
			return nil
		}
		// The worker ends its output a little later (CAN-009): close answers only then (HDR-052).
		ex.outputClosed = time.Now().Add(closeDelay)
		time.AfterFunc(closeDelay, func() { w.closeOutput() })
		return nil
	case protocol.CompensateOperationMessage:
		q := r.Request
		answer = protocol.CompensationResultMessage{Result: protocol.OperationCompensationResult{ProtocolVersion: protocol.ProtocolVersion, SessionID: sid,
			RequestID: q.RequestID, Tool: q.Tool, OperationKey: q.OperationKey, CompensationKey: q.CompensationKey, TenantScope: q.TenantScope,
			GrantFingerprint: q.GrantFingerprint, Status: protocol.Succeeded(jsonPayload(`{"undone":1}`))}}
	default:
		return nil
	}
	if ex.request != nil {
		return nil // one request per command; a second is judged by the durable rules
	}
	ex.request = msg
	if ex.sym.Op == "begin" {
		// The invocation runs until a cancel or a finish.
		m.inv.id, m.inv.at, m.inv.cancelled, m.inv.resulted, m.inv.finished = msg.(protocol.InvokeMessage).Invocation.RequestID, time.Now(), false, false, false
		return nil
	}
	how := ex.sym.How
	if how == howRefuse && msg.Type() != protocol.TypeReconcileOperation {
		how = howAnswer // a refusal is a reconciliation's only
	}
	switch how {
	case howAnswer, "", howBigNum, howHugeNum, howTooBig, howDenied:
		ex.answer, ex.answeredAt = answer, time.Now()
		w.write(w.seal(answer))
	case howIndex:
		// The state tag given as its variant index, the tag over the canonical form: a
		// well-formed answer a host must read as the same status (ENC-051).
		ex.answer, ex.answeredAt = answer, time.Now()
		w.write(indexState(w.seal(answer)))
	case howOverlong:
		// An answer line that passes 1 MiB in bytes, a third of it in characters, and never
		// ends: the host must refuse it at the bound (FRM-003).
		w.write(bytes.Repeat([]byte("\u20ac"), (jsonline.MaxLineBytes+64<<10)/3))
		ex.hostileDid, ex.overlong = true, true
	case howLate:
		line := w.seal(answer)
		delay := m.deadline() + lateBy
		time.AfterFunc(delay, func() { w.write(line) })
		ex.hostileDid = true
	case howSilent:
		ex.hostileDid = true
	case howInvalid:
		w.write(w.seal(invalidAnswer(answer)))
		ex.hostileDid = true
	case howExit:
		w.exit(3, true)
		ex.hostileDid = true
	case howRefuse:
		w.exit(5, true)
		ex.hostileDid = true
	case howCrash:
		line := w.seal(answer)
		w.write(line[:len(line)/2])
		w.exit(1, false)
		ex.hostileDid = true
	case howForged:
		line := w.seal(answer)
		i := len(line) - 3 // the tag's last hex digit, before `"}` and the line feed
		if line[i] == 'a' {
			line[i] = 'b'
		} else {
			line[i] = 'a'
		}
		w.write(line)
		ex.hostileDid = true
	case howWrongSeq:
		_ = w.seal(answer) // spent: the answer goes out one sequence number ahead
		w.write(w.seal(answer))
		ex.hostileDid = true
	}
	m.logf("worker %d: %s", w.index, how)
	return nil
}

// indexState returns a sealed answer line with its state tag replaced by the variant index
// (running 0, succeeded 1, as vectors/messages.json pins them).
func indexState(line []byte) []byte {
	for name, index := range map[string]string{"running": "0", "succeeded": "1"} {
		from := []byte(`"state":"` + name + `"`)
		if bytes.Count(line, from) == 1 {
			return bytes.Replace(line, from, []byte(`"state":`+index), 1)
		}
	}
	return line
}

// invalidAnswer is answer made invalid for its request while well sealed: a result larger
// than the grant's 64 output bytes (66 UTF-8 bytes, 33 UTF-16 units, HDR-048), an operation
// result for another operation key.
func invalidAnswer(answer protocol.Message) protocol.Message {
	switch a := answer.(type) {
	case protocol.ResultMessage:
		a.Result.Payload = protocol.TextPayload(strings.Repeat("\u00e9", 33))
		return a
	case protocol.OperationResultMessage:
		a.Result.OperationKey += "-other"
		return a
	case protocol.ReconciledOperationMessage:
		a.Result.OperationKey += "-other"
		return a
	case protocol.CompensationResultMessage:
		a.Result.CompensationKey += "-other"
		return a
	}
	return answer
}

// lateBy is how long after the exchange deadline a late answer is written.
const lateBy = 600 * time.Millisecond

// judge judges the outcome of an exchange.
func (ex *exchangeState) judge(o driver.Outcome, took time.Duration) *Violation {
	m, w := ex.m, ex.m.w
	deadline := m.deadline()
	switch {
	case ex.sym.Op == "start" && ex.sym.How == howBadScope:
		if o.OK || ex.accepted {
			return violation("start", "an error outcome (BadCommand) and no worker for a scope that is not an identifier token",
				fmt.Sprintf("%s, worker started: %v", conformance.Clip(string(o.Raw()), 200), ex.accepted))
		}
		return nil
	case ex.sym.Op == "start":
		if !o.OK {
			return violation("start", `{"ok":true} for start`, string(o.Raw()))
		}
		return nil
	case ex.sym.Op == "wait":
		return ex.judgeWait(o)
	case ex.sym.How == howDenied:
		if o.OK {
			return violation("authorized", "an error outcome (Denied) for a tool the manifest does not grant", string(o.Raw()))
		}
		return nil
	case ex.sym.Op == "bogus":
		if o.OK {
			return violation("driver-lines", `{"ok":false,"error":"Unsupported"} for an unknown op`, string(o.Raw()))
		}
		return nil
	case ex.sym.Op == "finish":
		return ex.judgeFinish(o, took)
	case ex.sym.Op == "close" && w != nil && w.state.Kind == protocol.CancellableSession:
		return ex.judgeClose(o, took)
	case ex.sym.Op == "recover" && ex.request == nil:
		return ex.judgeSettled(o)
	case ex.sym.Op == "cancel" && ex.request == nil:
		return ex.judgeRefusedCancel(o)
	case ex.request == nil:
		return ex.judgeUnsent(o)
	case ex.hostileDid:
		return ex.judgeHostile(o, took)
	case ex.answer != nil:
		if !o.OK {
			if took >= deadline {
				// The answer may have come after the host's deadline, under load: the exchange
				// failed, and the session with it.
				if w != nil {
					w.poisoned = ex.sym.String()
				}
				return nil
			}
			return violation("effect-reported", "the worker's answer as an ok outcome", string(o.Raw()))
		}
		return ex.reported(o)
	}
	return nil
}

// judgeUnsent checks a command that sent no request frame: an invocation the session's
// authorizer admits on a healthy ordinary session must have been sent (AUZ-007, AUZ-008,
// HDR-021).
func (ex *exchangeState) judgeUnsent(o driver.Outcome) *Violation {
	if a := ex.want.admit; a == nil || a.err != nil || ex.sym.Op != "invoke" {
		return nil
	}
	return violation("authorized", "the invoke frame: the session's authorizer admits the invocation (a refused call spends nothing, AUZ-007, AUZ-008)",
		"no frame; "+conformance.Clip(string(o.Raw()), 200))
}

// judgeRefusedCancel checks a cancel the host refused without a frame on a healthy cancellable
// session: a refusal with an identity slot kept stops nothing, the worker keeps running
// (AUZ-016, HDR-045).
func (ex *exchangeState) judgeRefusedCancel(o driver.Outcome) *Violation {
	m, w := ex.m, ex.m.w
	if o.OK || !ex.wasHealthy || w == nil || w.state.Kind != protocol.CancellableSession || w.authz == nil {
		return nil
	}
	if !w.slotKept && w.state.Active && m.inv.id == ex.requestID && !m.inv.cancelled && !m.inv.resulted {
		// No identity was kept for this cancellation (TRN-112): the host must contain the
		// worker instead, its whole group (HDR-045).
		w.poisoned = ex.sym.String()
		if !w.gone(m.cfg.grace()) {
			return violation("contained", "the worker's process group gone after a cancel refused for want of a kept identity slot (TRN-112, HDR-045)",
				fmt.Sprintf("worker %d still runs", w.index))
		}
		return nil
	}
	if w.dying(150 * time.Millisecond) {
		return violation("cancel", "the worker still running after a cancel refused without a frame (AUZ-016, HDR-045)", "the worker ended; "+string(o.Raw()))
	}
	return nil
}

// judgeHostile checks the outcome of an exchange the worker failed: an error, within the
// deadline when the worker never answered, and its process group gone then.
func (ex *exchangeState) judgeHostile(o driver.Outcome, took time.Duration) *Violation {
	m, w := ex.m, ex.m.w
	deadline := m.deadline()
	if o.OK {
		return violation("hostile-refused", "an error outcome after the worker's "+ex.sym.How, "ok "+conformance.Clip(string(o.Raw()), 200))
	}
	if ex.overlong && took > deadline/2 {
		return violation("line-bound", fmt.Sprintf("the answer line refused once it passed %d bytes, long before the deadline (%v)", jsonline.MaxLineBytes, deadline),
			fmt.Sprintf("the error after %v", took.Round(time.Millisecond)))
	}
	if ex.refusedKey != "" {
		m.refusals[ex.refusedKey]++
		m.refused[ex.refusedKey] = true
	}
	if w != nil {
		w.poisoned = ex.sym.String()
	}
	if ex.waits() {
		if took > deadline+m.cfg.grace() {
			return violation("deadline", fmt.Sprintf("an outcome within the exchange deadline (%v)", deadline), fmt.Sprintf("after %v", took.Round(time.Millisecond)))
		}
		if w != nil && !w.gone(m.cfg.grace()) {
			return violation("contained", "the worker's process group gone once the deadline passed", fmt.Sprintf("worker %d still runs", w.index))
		}
	}
	return nil
}

// reported checks that the outcome carries the answer the worker gave.
func (ex *exchangeState) reported(o driver.Outcome) *Violation {
	m := ex.m
	switch a := ex.answer.(type) {
	case protocol.ResultMessage:
		if want := a.Result.Payload.AppendJSON(nil); !bytes.Equal(o.Payload, want) {
			return violation("effect-reported", "payload "+string(want), "payload "+string(o.Payload))
		}
	case protocol.OperationResultMessage:
		if v := statusIs(o, a.Result.Status); v != nil {
			return v
		}
		if ex.sym.Op == "step" {
			var k struct {
				Key string `json:"key"`
			}
			_ = json.Unmarshal(o.Raw(), &k)
			if k.Key != a.Result.OperationKey {
				return violation("effect-reported", "key "+a.Result.OperationKey+", the one dispatched", "key "+k.Key)
			}
			m.succeeded = append(m.succeeded, k.Key)
		}
		delete(m.uncertain, a.Result.OperationKey)
	case protocol.CancellationResultMessage:
		if want := a.Result.Outcome.String(); !o.OK || o.Disposition != want {
			return violation("cancel", `{"ok":true,"disposition":"`+want+`"}, the worker's answer`, string(o.Raw()))
		}
	case protocol.ReconciledOperationMessage:
		if v := statusIs(o, a.Result.Status); v != nil {
			return v
		}
		delete(m.uncertain, a.Result.OperationKey)
	case protocol.CompensationResultMessage:
		if v := statusIs(o, a.Result.Status); v != nil {
			return v
		}
		m.answered[a.Result.CompensationKey] = true
		delete(m.uncertain, a.Result.CompensationKey)
	}
	return nil
}

func statusIs(o driver.Outcome, want protocol.OperationStatus) *Violation {
	if w := want.AppendJSON(nil); !bytes.Equal(o.Status, w) {
		return violation("effect-reported", "status "+string(w), "status "+string(o.Status))
	}
	return nil
}

// judgeSettled checks a recover that sent nothing: on a fresh session, with an operation or
// compensation whose answer the host never reported and whose input is kept, the host must
// send its recovery (HDR-042); an ok outcome without a frame says the ledger forgot it.
func (ex *exchangeState) judgeSettled(o driver.Outcome) *Violation {
	m, w := ex.m, ex.m.w
	if !o.OK || len(m.lost) > 0 || len(m.uncertain) == 0 || w == nil || w.durable || w.poisoned != "" || w.inputEnded || w.ended {
		return nil
	}
	var keys []string
	for k := range m.uncertain {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return violation("recover-settles", "a recovery frame for the uncertain "+strings.Join(keys, ", "), "ok without a frame")
}

// judgeWait checks wait's exit code: the status of a worker that exited by itself, else -1
// with its process group gone (HDR-024).
func (ex *exchangeState) judgeWait(o driver.Outcome) *Violation {
	w := ex.m.w
	if w == nil || !o.OK {
		return nil
	}
	got := "none"
	if o.ExitCode != nil {
		got = fmt.Sprint(*o.ExitCode)
	}
	if w.waited || w.ended && w.selfExit == nil {
		return nil
	}
	w.waited = true
	if w.selfExit != nil {
		if want := fmt.Sprint(*w.selfExit); got != want {
			return violation("exit-reported", "exit_code "+want+", the worker's own status", "exit_code "+got)
		}
		return nil
	}
	if got != "-1" {
		return violation("exit-reported", "exit_code -1 for a worker that did not exit by itself", "exit_code "+got)
	}
	if !w.gone(ex.m.cfg.grace()) {
		return violation("contained", "the worker's process group gone once wait's deadline passed", fmt.Sprintf("worker %d still runs", w.index))
	}
	return nil
}

// deadline is the exchange deadline of the current session.
func (m *machine) deadline() time.Duration { return time.Duration(m.deadlineMS) * time.Millisecond }

// rawJSON marks bytes as JSON for encoding/json.
type rawJSON []byte

// MarshalJSON returns the bytes.
func (r rawJSON) MarshalJSON() ([]byte, error) { return r, nil }

// jsonPayload is the JSON payload of canonical text s.
func jsonPayload(s string) protocol.ToolPayload {
	v, err := canonjson.ParseValue([]byte(s), canonjson.Preserve)
	if err != nil {
		panic(err) // the explorer's own constants
	}
	return protocol.JSONPayload(v)
}

// jsonValue is the encoding of the JSON payload of s, as a command carries it (HDR-047).
func jsonValue(s string) []byte { return jsonPayload(s).AppendJSON(nil) }

// tempDir is the parent of the run's scratch directories.
func (c *Config) tempDir() string {
	if c.TempDir != "" {
		return c.TempDir
	}
	return os.TempDir()
}
