package model

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// This file models the host capability runtime's pending-operation lifecycle (spec chapter 21):
// reservation and its budgets, the operation states and every host call on them, retries,
// deadlines on an abstract millisecond clock, streaming, cancellation, reconciliation, promise
// release and garbage collection, and the audit trail. It is written straight from the
// specification with plain maps and strings; outcomes are reference variant names and messages.

// LifecycleStream is a tool's stream policy.
type LifecycleStream struct {
	MaxChunks, MaxChunkBytes, MaxTotalBytes, MaxEmittedBytes int
}

// LifecycleTool is one registered tool. Host-pump tools answer "ok:" + input; streaming tools
// redact by doubling every "x".
type LifecycleTool struct {
	Name        string
	External    bool
	JSON        bool
	MaxCalls    int
	MaxAttempts int
	MaxInput    int
	MaxOutput   int
	DeadlineMs  int // < 0: no deadline
	Stream      *LifecycleStream
}

// LifecycleEvent is one audit record.
type LifecycleEvent struct {
	EventSequence uint64
	Sequence      uint64
	Tool          string
	InputBytes    int
	OutputBytes   int
	Outcome       string
	RetryClass    string
}

// LifecycleOp is the observable state of one retained operation.
type LifecycleOp struct {
	ID        uint64
	Name      string
	State     string // host_pump, queued, claimed, cancellation_requested, ready
	Sequence  uint64
	CallIndex int
	Attempt   int
	Key       string
	Chunks    int
	Source    int
	Emitted   int
	Awaited   bool
	Released  bool
	Orphaned  bool
	Output    string
	Err       string // "Kind: message" when settled with a tool error
}

// LifecycleInvocation is a claim, peek or retry snapshot.
type LifecycleInvocation struct {
	ID          uint64
	Name        string
	Input       string
	CallIndex   int
	Attempt     int
	MaxAttempts int
	Key         string
	RemainingMs int64 // -1 without a deadline
}

// LifecycleSettlement is one operation settled by a call.
type LifecycleSettlement struct {
	ID      uint64
	Awaited bool
	Output  string
	Err     string
}

// LifecycleResult is the outcome of one host call. Err is an external error variant ("Unknown",
// "NotClaimed", …, "Protocol"); ToolErr a refused call or start ("Denied: …"); AwaitErr an
// await edge case message.
type LifecycleResult struct {
	Err        string
	ToolErr    string
	AwaitErr   string
	ID         uint64
	HasInv     bool
	Inv        LifecycleInvocation
	Settled    []LifecycleSettlement
	Text       string
	ChunkIndex int
	Ready      bool
	Running    bool
}

type lifecycleOp struct {
	LifecycleOp
	input string
	start int64
	sync  bool // a synchronous call: it never expires
}

// Lifecycle is the runtime model.
type Lifecycle struct {
	tools      map[string]*LifecycleTool
	calls      map[string]int
	maxPending int
	auditCap   int
	nonceLabel string
	now        int64
	nextSeq    uint64
	nextID     uint64
	ops        map[uint64]*lifecycleOp
	events     []LifecycleEvent
}

// NewLifecycle returns a model with the given tools, pending limit, audit capacity and nonce
// label (the hex label idempotency keys embed).
func NewLifecycle(tools []LifecycleTool, maxPending, auditCap int, nonceLabel string) *Lifecycle {
	m := &Lifecycle{tools: map[string]*LifecycleTool{}, calls: map[string]int{}, maxPending: maxPending,
		auditCap: auditCap, nonceLabel: nonceLabel, ops: map[uint64]*lifecycleOp{}}
	for i := range tools {
		t := tools[i]
		m.tools[t.Name] = &t
	}
	return m
}

// Advance moves the clock forward.
func (m *Lifecycle) Advance(ms int64) { m.now += ms }

// NextID returns the next operation ID the model would issue.
func (m *Lifecycle) NextID() uint64 { return m.nextID + 1 }

// Ops returns the retained operations in ID order.
func (m *Lifecycle) Ops() []LifecycleOp {
	ids := m.sortedIDs()
	out := make([]LifecycleOp, 0, len(ids))
	for _, id := range ids {
		out = append(out, m.ops[id].LifecycleOp)
	}
	return out
}

// Audit returns the retained audit records (the last auditCap ones) and the dropped count.
func (m *Lifecycle) Audit() ([]LifecycleEvent, uint64) {
	if len(m.events) <= m.auditCap {
		return append([]LifecycleEvent(nil), m.events...), 0
	}
	drop := len(m.events) - m.auditCap
	return append([]LifecycleEvent(nil), m.events[drop:]...), uint64(drop)
}

func (m *Lifecycle) sortedIDs() []uint64 {
	ids := make([]uint64, 0, len(m.ops))
	for id := range m.ops {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

func (m *Lifecycle) audit(seq uint64, tool string, in, out int, outcome, class string) {
	m.events = append(m.events, LifecycleEvent{
		EventSequence: uint64(len(m.events) + 1), Sequence: seq, Tool: tool,
		InputBytes: in, OutputBytes: out, Outcome: outcome, RetryClass: class,
	})
}

var outcomeByKind = map[string]string{"Denied": "denied", "Failed": "failed", "Cancelled": "cancelled", "TimedOut": "timed_out"}

func kindOf(err string) string { return err[:strings.Index(err, ":")] }

func (m *Lifecycle) expired(op *lifecycleOp) bool {
	t := m.tools[op.Name]
	return !op.sync && t.DeadlineMs >= 0 && m.now-op.start >= int64(t.DeadlineMs)
}

func (m *Lifecycle) invocation(op *lifecycleOp) LifecycleInvocation {
	t := m.tools[op.Name]
	rem := int64(-1)
	if t.DeadlineMs >= 0 {
		rem = int64(t.DeadlineMs) - (m.now - op.start)
		if rem < 0 {
			rem = 0
		}
	}
	return LifecycleInvocation{ID: op.ID, Name: op.Name, Input: op.input, CallIndex: op.CallIndex,
		Attempt: op.Attempt, MaxAttempts: t.MaxAttempts, Key: op.Key, RemainingMs: rem}
}

// jsonEnvelopeError is "" for a JSON object or array, else the denial's ending.
func jsonEnvelopeError(text string) string {
	if !json.Valid([]byte(text)) {
		return "is not valid JSON"
	}
	s := strings.TrimLeft(text, " \t\r\n")
	if s[0] != '{' && s[0] != '[' {
		return "must be a JSON object or array"
	}
	return ""
}

// reserve returns the sequence and an error ("Denied: …") or "".
func (m *Lifecycle) reserve(name, input string, jsonMethod, deferred bool) (uint64, string) {
	q := m.nextSeq
	m.nextSeq++
	denied := ""
	t := m.tools[name]
	switch {
	case t == nil:
		denied = "no capability grants " + name
	case jsonMethod && !t.JSON:
		denied = name + " is not registered for JSON envelopes"
	case !deferred && t.External:
		denied = name + " is available only through tool.start"
	case len(input) > t.MaxInput:
		denied = name + " input exceeds " + strconv.Itoa(t.MaxInput) + " bytes"
	case t.JSON && jsonEnvelopeError(input) != "":
		denied = name + " input " + jsonEnvelopeError(input)
	case m.calls[name] >= t.MaxCalls:
		denied = name + " exhausted its " + strconv.Itoa(t.MaxCalls) + " call budget"
	}
	if denied != "" {
		m.audit(q, name, len(input), 0, "denied", "")
		return q, "Denied: " + denied
	}
	m.calls[name]++
	return q, ""
}

// finish applies the output rules and audits; it returns output and error.
func (m *Lifecycle) finish(op *lifecycleOp, output, err string) (string, string) {
	t := m.tools[op.Name]
	switch {
	case m.expired(op):
		output, err = "", "TimedOut: "+op.Name+" exceeded its deferred deadline"
	case err != "":
		output = ""
	case len(output) > t.MaxOutput:
		output, err = "", "Denied: "+op.Name+" output exceeds "+strconv.Itoa(t.MaxOutput)+" bytes"
	case t.JSON && jsonEnvelopeError(output) != "":
		output, err = "", "Denied: "+op.Name+" output "+jsonEnvelopeError(output)
	}
	if err != "" {
		m.audit(op.Sequence, op.Name, len(op.input), 0, outcomeByKind[kindOf(err)], "")
	} else {
		m.audit(op.Sequence, op.Name, len(op.input), len(output), "allowed", "")
	}
	return output, err
}

func (m *Lifecycle) settle(op *lifecycleOp, output, err string) LifecycleSettlement {
	output, err = m.finish(op, output, err)
	op.State, op.Output, op.Err = "ready", output, err
	s := LifecycleSettlement{ID: op.ID, Awaited: op.Awaited, Output: output, Err: err}
	op.Awaited = false
	if op.Orphaned {
		delete(m.ops, op.ID)
	}
	return s
}

// Call is tool.call (jsonMethod false) or tool.call_json.
func (m *Lifecycle) Call(name, input string, jsonMethod bool) LifecycleResult {
	q, denied := m.reserve(name, input, jsonMethod, false)
	if denied != "" {
		return LifecycleResult{ToolErr: denied}
	}
	sync := &lifecycleOp{LifecycleOp: LifecycleOp{Name: name, Sequence: q}, input: input, sync: true}
	out, err := m.finish(sync, "ok:"+input, "")
	if err != "" {
		return LifecycleResult{ToolErr: err}
	}
	return LifecycleResult{Text: out}
}

// Start is tool.start (jsonMethod false) or tool.start_json.
func (m *Lifecycle) Start(name, input string, jsonMethod bool) LifecycleResult {
	if len(m.ops) >= m.maxPending {
		q := m.nextSeq
		m.nextSeq++
		m.audit(q, name, len(input), 0, "denied", "")
		return LifecycleResult{ToolErr: "Denied: pending tool budget of " + strconv.Itoa(m.maxPending) + " exhausted"}
	}
	m.nextID++
	id := m.nextID
	q, denied := m.reserve(name, input, jsonMethod, true)
	if denied != "" {
		return LifecycleResult{ToolErr: denied}
	}
	t := m.tools[name]
	op := &lifecycleOp{LifecycleOp: LifecycleOp{ID: id, Name: name, State: "host_pump", Sequence: q,
		CallIndex: m.calls[name], Attempt: 1}, input: input, start: m.now}
	if t.External {
		op.State = "queued"
		op.Key = "splash-" + m.nonceLabel + "-" + strconv.FormatUint(q, 10)
	}
	m.ops[id] = op
	return LifecycleResult{ID: id}
}

// stateError is the table's error for an operation outside claimed and
// cancellation-requested; "" when it is in one of them.
func stateError(op *lifecycleOp) string {
	switch {
	case op == nil:
		return "Unknown"
	case op.State == "queued":
		return "NotClaimed"
	case op.State == "host_pump":
		return "NotExternal"
	case op.State == "ready":
		return "AlreadyCompleted"
	}
	return ""
}

func (m *Lifecycle) firstIn(state string) *lifecycleOp {
	for _, id := range m.sortedIDs() {
		if m.ops[id].State == state {
			return m.ops[id]
		}
	}
	return nil
}

// Peek returns the first queued operation.
func (m *Lifecycle) Peek() LifecycleResult {
	op := m.firstIn("queued")
	if op == nil {
		return LifecycleResult{}
	}
	return LifecycleResult{HasInv: true, Inv: m.invocation(op)}
}

// ClaimNext claims the first queued operation.
func (m *Lifecycle) ClaimNext() LifecycleResult {
	op := m.firstIn("queued")
	if op == nil {
		return LifecycleResult{}
	}
	return m.Claim(op.ID)
}

// Claim claims one queued operation.
func (m *Lifecycle) Claim(id uint64) LifecycleResult {
	op := m.ops[id]
	switch {
	case op == nil:
		return LifecycleResult{Err: "Unknown"}
	case op.State == "claimed" || op.State == "cancellation_requested":
		return LifecycleResult{Err: "AlreadyClaimed"}
	case op.State != "queued":
		return LifecycleResult{Err: stateError(op)}
	}
	inv := m.invocation(op)
	op.State = "claimed"
	return LifecycleResult{HasInv: true, Inv: inv}
}

// Validate checks a claim.
func (m *Lifecycle) Validate(id uint64) LifecycleResult {
	op := m.ops[id]
	switch {
	case stateError(op) != "":
		return LifecycleResult{Err: stateError(op)}
	case op.State == "cancellation_requested":
		return LifecycleResult{Err: "CancellationRequested"}
	case m.expired(op):
		return LifecycleResult{Err: "DeadlineElapsed"}
	}
	return LifecycleResult{}
}

// Retry schedules the next attempt with class "transient" or "rate_limited".
func (m *Lifecycle) Retry(id uint64, class string) LifecycleResult {
	op := m.ops[id]
	switch {
	case stateError(op) != "":
		return LifecycleResult{Err: stateError(op)}
	case op.State == "cancellation_requested":
		return LifecycleResult{Err: "CancellationRequested"}
	case m.expired(op):
		return LifecycleResult{Err: "DeadlineElapsed"}
	case op.Attempt >= m.tools[op.Name].MaxAttempts:
		return LifecycleResult{Err: "RetryLimitReached"}
	}
	op.Attempt++
	m.audit(op.Sequence, op.Name, len(op.input), 0, "retry_scheduled", class)
	return LifecycleResult{HasInv: true, Inv: m.invocation(op)}
}

// RequestCancel asks for cancellation; the invocation fields carry the request.
func (m *Lifecycle) RequestCancel(id uint64) LifecycleResult {
	op := m.ops[id]
	if e := stateError(op); e != "" {
		return LifecycleResult{Err: e}
	}
	if op.State == "claimed" {
		op.State = "cancellation_requested"
		m.audit(op.Sequence, op.Name, len(op.input), 0, "cancellation_requested", "")
	}
	return LifecycleResult{HasInv: true, Inv: LifecycleInvocation{ID: op.ID, Name: op.Name, CallIndex: op.CallIndex, Attempt: op.Attempt, Key: op.Key}}
}

const cancelledErr = "Cancelled: external operation was reported cancelled"

// Confirm confirms a requested cancellation.
func (m *Lifecycle) Confirm(id uint64) LifecycleResult {
	op := m.ops[id]
	if e := stateError(op); e != "" {
		return LifecycleResult{Err: e}
	}
	if op.State == "claimed" {
		return LifecycleResult{Err: "CancellationNotRequested"}
	}
	return LifecycleResult{Settled: []LifecycleSettlement{m.settle(op, "", cancelledErr)}}
}

// Cancel is the direct terminal cancel.
func (m *Lifecycle) Cancel(id uint64) LifecycleResult {
	op := m.ops[id]
	if e := stateError(op); e != "" {
		return LifecycleResult{Err: e}
	}
	return LifecycleResult{Settled: []LifecycleSettlement{m.settle(op, "", cancelledErr)}}
}

// Complete settles with output, or with err ("Kind: message") when it is not empty.
func (m *Lifecycle) Complete(id uint64, output, err string) LifecycleResult {
	op := m.ops[id]
	if e := stateError(op); e != "" {
		return LifecycleResult{Err: e}
	}
	return LifecycleResult{Settled: []LifecycleSettlement{m.settle(op, output, err)}}
}

// Push offers one stream chunk.
func (m *Lifecycle) Push(id uint64, text string) LifecycleResult {
	op := m.ops[id]
	switch {
	case stateError(op) != "":
		return LifecycleResult{Err: stateError(op)}
	case op.State == "cancellation_requested":
		return LifecycleResult{Err: "CancellationRequested"}
	case m.expired(op):
		return LifecycleResult{Err: "DeadlineElapsed"}
	}
	s := m.tools[op.Name].Stream
	deny := func(e string) LifecycleResult {
		m.audit(op.Sequence, op.Name, len(text), 0, "stream_denied", "")
		return LifecycleResult{Err: e}
	}
	if s == nil {
		return deny("StreamingDisabled")
	}
	if op.Chunks >= s.MaxChunks || len(text) > s.MaxChunkBytes || op.Source+len(text) > s.MaxTotalBytes {
		return deny("StreamLimitExceeded")
	}
	released := strings.ReplaceAll(text, "x", "xx")
	if op.Emitted+len(released) > s.MaxEmittedBytes {
		return deny("StreamLimitExceeded")
	}
	op.Chunks++
	op.Source += len(text)
	op.Emitted += len(released)
	m.audit(op.Sequence, op.Name, len(text), len(released), "streamed", "")
	return LifecycleResult{Text: released, ChunkIndex: op.Chunks}
}

// Pump runs up to n host-pump operations.
func (m *Lifecycle) Pump(n int) LifecycleResult {
	var out []LifecycleSettlement
	for len(out) < n {
		op := m.firstIn("host_pump")
		if op == nil {
			break
		}
		output := "ok:" + op.input
		if m.expired(op) {
			output = ""
		}
		out = append(out, m.settle(op, output, ""))
	}
	return LifecycleResult{Settled: out}
}

// Expire settles up to n expired pending operations.
func (m *Lifecycle) Expire(n int) LifecycleResult {
	var due []*lifecycleOp
	for _, id := range m.sortedIDs() {
		if op := m.ops[id]; len(due) < n && op.State != "ready" && m.expired(op) {
			due = append(due, op)
		}
	}
	var out []LifecycleSettlement
	for _, op := range due {
		out = append(out, m.settle(op, "", ""))
	}
	return LifecycleResult{Settled: out}
}

// Await is promise.await() from the host's side.
func (m *Lifecycle) Await(id uint64) LifecycleResult {
	op := m.ops[id]
	switch {
	case op == nil || op.Released:
		return LifecycleResult{AwaitErr: "unknown tool promise"}
	case op.State == "ready":
		return LifecycleResult{Ready: true, Text: op.Output, ToolErr: op.Err}
	case op.Awaited:
		return LifecycleResult{AwaitErr: "tool promise is already awaited"}
	}
	op.Awaited = true
	return LifecycleResult{}
}

// Release drops the script's reference to an operation.
func (m *Lifecycle) Release(id uint64) LifecycleResult {
	if op := m.ops[id]; op != nil {
		op.Released, op.Awaited = true, false
		return LifecycleResult{Ready: true}
	}
	return LifecycleResult{}
}

// Collect runs garbage collection and reports the number of deleted records in ID.
func (m *Lifecycle) Collect() LifecycleResult {
	removed := 0
	for _, id := range m.sortedIDs() {
		op := m.ops[id]
		if !op.Released {
			continue
		}
		if op.State == "claimed" || op.State == "cancellation_requested" {
			op.Orphaned = true
		} else {
			delete(m.ops, id)
			removed++
		}
	}
	return LifecycleResult{ID: uint64(removed)}
}

// Reconcile applies a matching worker status: "running", "succeeded" (with payload text and
// whether it is JSON), "failed" (message) or "cancelled".
func (m *Lifecycle) Reconcile(id uint64, state, payload string, payloadJSON bool) LifecycleResult {
	op := m.ops[id]
	if e := stateError(op); e != "" {
		return LifecycleResult{Err: e}
	}
	switch state {
	case "running":
		if m.expired(op) {
			return LifecycleResult{Err: "DeadlineElapsed"}
		}
		return LifecycleResult{Running: true}
	case "succeeded":
		if payloadJSON != m.tools[op.Name].JSON {
			return LifecycleResult{Err: "Protocol"}
		}
		return LifecycleResult{Settled: []LifecycleSettlement{m.settle(op, payload, "")}}
	case "failed":
		return LifecycleResult{Settled: []LifecycleSettlement{m.settle(op, "", "Failed: "+payload)}}
	}
	return LifecycleResult{Settled: []LifecycleSettlement{m.settle(op, "", cancelledErr)}}
}

// MaxPending returns the pending limit.
func (m *Lifecycle) MaxPending() int { return m.maxPending }
