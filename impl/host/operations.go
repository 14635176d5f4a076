package host

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/script"
)

// State is the lifecycle state of a retained operation record.
type State uint8

// The record states of the pending-operation state machine.
const (
	// StateHostPump is a deferred host-pump operation waiting for Pump.
	StateHostPump State = iota + 1
	// StateQueued is an external operation reserved but not yet claimed.
	StateQueued
	// StateClaimed is an external operation the host claimed and dispatched.
	StateClaimed
	// StateCancellationRequested is a claimed operation whose adapter was asked to stop.
	StateCancellationRequested
	// StateReady is a settled operation; it stays until garbage collection removes it.
	StateReady
)

var stateNames = [...]string{
	StateHostPump:              "host_pump",
	StateQueued:                "queued",
	StateClaimed:               "claimed",
	StateCancellationRequested: "cancellation_requested",
	StateReady:                 "ready",
}

// String returns the state's snake_case name.
func (s State) String() string {
	if int(s) < len(stateNames) && stateNames[s] != "" {
		return stateNames[s]
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// Errors of Await for the promise edge cases: the script's kinds, whose text a script's error
// carries.
const (
	ErrUnknownPromise        = script.ErrUnknownPromise
	ErrPromiseAlreadyAwaited = script.ErrPromiseAlreadyAwaited
)

// ErrInvalidRetryClass rejects a RetryClass outside the two defined values.
var ErrInvalidRetryClass = errors.New("retry class must be transient or rate_limited")

// Result is a terminal result supplied by the host: an output, or a failure when Err is set.
type Result struct {
	Output string
	Err    *ToolError
}

// OK returns a successful result.
func OK(output string) Result { return Result{Output: output} }

// Fail returns a failed result.
func Fail(err *ToolError) Result { return Result{Err: err} }

// Settlement reports an operation that reached its terminal result through the call that
// returned it. Awaited is true when a suspended evaluation was waiting on the operation and must
// now be resumed with Output or Err.
type Settlement struct {
	ID      OperationID
	Awaited bool
	Output  string
	Err     *ToolError
}

type ticket struct {
	sequence    uint64
	name        string
	input       string
	callIndex   int
	maxOutput   int
	maxAttempts uint32
	stream      *StreamPolicy
	format      DataFormat
	dispatch    Dispatch
	hasDeadline bool
	start       time.Time
	maxDeferred time.Duration
}

func (t *ticket) elapsed(now time.Time) time.Duration {
	d := now.Sub(t.start)
	if d < 0 {
		return 0
	}
	return d
}

// expired is the deadline rule: elapsed >= maximum, so a zero maximum is expired at once.
func (t *ticket) expired(now time.Time) bool {
	return t.hasDeadline && t.elapsed(now) >= t.maxDeferred
}

func (t *ticket) remainingMillis(now time.Time) uint64 {
	rem := t.maxDeferred - t.elapsed(now)
	return durationMillis(rem)
}

type record struct {
	id       OperationID
	t        ticket
	attempt  uint32
	key      string
	chunks   int
	source   int
	emitted  int
	state    State
	output   string
	err      *ToolError
	waiting  bool
	released bool
	orphaned bool
}

// OperationInfo is a read-only snapshot of one retained record.
type OperationInfo struct {
	ID             OperationID
	Name           string
	State          State
	Sequence       uint64
	CallIndex      int
	Attempt        uint32
	IdempotencyKey string // external operations only
	Chunks         int
	SourceBytes    int
	EmittedBytes   int
	Awaited        bool // a suspended evaluation waits on it
	Released       bool // the script no longer references it
	Orphaned       bool // released and collected while claimed: removed when it settles
	Output         string
	Err            *ToolError
}

func (rec *record) info() OperationInfo {
	return OperationInfo{
		ID: rec.id, Name: rec.t.name, State: rec.state, Sequence: rec.t.sequence,
		CallIndex: rec.t.callIndex, Attempt: rec.attempt, IdempotencyKey: rec.key,
		Chunks: rec.chunks, SourceBytes: rec.source, EmittedBytes: rec.emitted,
		Awaited: rec.waiting, Released: rec.released, Orphaned: rec.orphaned,
		Output: rec.output, Err: rec.err,
	}
}

// Operation returns a snapshot of a retained record.
func (r *Runtime) Operation(id OperationID) (OperationInfo, bool) {
	rec, ok := r.records[id]
	if !ok {
		return OperationInfo{}, false
	}
	return rec.info(), true
}

// Operations returns snapshots of every retained record in scan order.
func (r *Runtime) Operations() []OperationInfo {
	out := make([]OperationInfo, 0, len(r.order))
	for _, id := range r.order {
		out = append(out, r.records[id].info())
	}
	return out
}

// Call performs tool.call: a synchronous call of a host-pump tool, text or JSON (a JSON tool
// needs JSON text). The error is always a *ToolError.
func (r *Runtime) Call(name, input string) (string, error) { return r.call(name, input, false) }

// CallJSON performs tool.call_json: a synchronous call of a host-pump JSON tool with JSON text.
func (r *Runtime) CallJSON(name, input string) (string, error) { return r.call(name, input, true) }

func (r *Runtime) call(name, input string, wantJSON bool) (string, error) {
	t, terr := r.reserve(name, input, wantJSON, false)
	if terr != nil {
		return "", terr
	}
	res := r.execute(&t)
	if res.Err != nil {
		return "", res.Err
	}
	return res.Output, nil
}

// Start performs tool.start: it reserves a deferred call of a host-pump or external tool and
// returns the operation's ID. The error is always a *ToolError; a denied start creates nothing.
func (r *Runtime) Start(name, input string) (OperationID, error) { return r.start(name, input, false) }

// StartJSON performs tool.start_json: Start for a JSON tool with JSON text.
func (r *Runtime) StartJSON(name, input string) (OperationID, error) {
	return r.start(name, input, true)
}

func (r *Runtime) start(name, input string, wantJSON bool) (OperationID, error) {
	if len(r.records) >= r.maxPending {
		q := r.takeSequence()
		r.recordAudit(q, name, len(input), 0, OutcomeDenied, 0)
		return 0, Denied("pending tool budget of " + strconv.Itoa(r.maxPending) + " exhausted")
	}
	if r.nextID == math.MaxUint64 {
		q := r.takeSequence()
		r.recordAudit(q, name, len(input), 0, OutcomeFailed, 0)
		return 0, Failed("deferred tool identifier space exhausted")
	}
	r.nextID++
	id := OperationID(r.nextID)
	t, terr := r.reserve(name, input, wantJSON, true)
	if terr != nil {
		return 0, terr
	}
	rec := &record{id: id, t: t, attempt: 1, state: StateHostPump}
	if t.dispatch == DispatchExternal {
		rec.state = StateQueued
		rec.key = r.idempotencyKey(t.sequence)
	}
	r.records[id] = rec
	r.order = append(r.order, id) // IDs only grow, so the order stays sorted
	return id, nil
}

// reserve runs the reservation checks in the reference's order and audits a denial once.
func (r *Runtime) reserve(name, input string, wantJSON, deferred bool) (ticket, *ToolError) {
	q := r.takeSequence()
	t, err := r.reserveChecked(q, name, input, wantJSON, deferred)
	if err != nil {
		r.recordAudit(q, name, len(input), 0, outcomeOf(err), 0)
	}
	return t, err
}

func (r *Runtime) reserveChecked(q uint64, name, input string, wantJSON, deferred bool) (ticket, *ToolError) {
	tl, ok := r.tools[name]
	switch {
	case !ok:
		return ticket{}, Denied("no capability grants " + name)
	case wantJSON && tl.policy.Format != FormatJSON:
		return ticket{}, Denied(name + " is not registered for JSON envelopes")
	case !deferred && tl.dispatch == DispatchExternal:
		return ticket{}, Denied(name + " is available only through tool.start")
	case len(input) > tl.policy.MaxInputBytes:
		return ticket{}, Denied(name + " input exceeds " + strconv.Itoa(tl.policy.MaxInputBytes) + " bytes")
	}
	if tl.policy.Format == FormatJSON {
		v, err := jsonEnvelope(input, name, "input")
		if err != nil {
			return ticket{}, err
		}
		if tl.inputSchema != nil {
			if verr := tl.inputSchema.Validate(v); verr != nil {
				return ticket{}, Denied("input does not match its schema: " + verr.Error())
			}
		}
	}
	if tl.calls >= tl.policy.MaxCalls {
		return ticket{}, Denied(name + " exhausted its " + strconv.Itoa(tl.policy.MaxCalls) + " call budget")
	}
	callIndex := tl.calls + 1
	if r.lease != nil {
		if err := r.lease.authorize(ToolRequest{Name: name, Input: input, CallIndex: callIndex}, tl.descriptor()); err != nil {
			return ticket{}, err
		}
	}
	tl.calls = callIndex
	t := ticket{
		sequence:    q,
		name:        tl.policy.Name,
		input:       input,
		callIndex:   callIndex,
		maxOutput:   tl.policy.MaxOutputBytes,
		maxAttempts: tl.policy.MaxAttempts,
		stream:      tl.policy.Stream,
		format:      tl.policy.Format,
		dispatch:    tl.dispatch,
	}
	if deferred && tl.policy.HasDeadline {
		t.hasDeadline, t.maxDeferred, t.start = true, tl.policy.MaxDeferred, r.clock()
	}
	return t, nil
}

// jsonEnvelope parses text as serde_json does in the host (text-preserving numbers, 128 levels)
// and requires an object or array.
func jsonEnvelope(text, name, direction string) (canonjson.Value, *ToolError) {
	v, err := canonjson.ParseValue([]byte(text), canonjson.Preserve)
	if err != nil {
		return canonjson.Value{}, Denied(name + " " + direction + " is not valid JSON")
	}
	if k := v.Kind(); k != canonjson.KindObject && k != canonjson.KindArray {
		return canonjson.Value{}, Denied(name + " " + direction + " must be a JSON object or array")
	}
	return v, nil
}

// execute runs a host-pump handler and completes the ticket.
func (r *Runtime) execute(t *ticket) Result {
	tl := r.tools[t.name]
	var res Result
	switch {
	case tl == nil:
		res = Fail(Failed("registered capability disappeared: " + t.name))
	case tl.handler == nil:
		res = Fail(Failed(t.name + " is registered for external completion"))
	default:
		req := ToolRequest{Name: t.name, Input: t.input, CallIndex: t.callIndex}
		if t.hasDeadline {
			req.Deadline = t.maxDeferred - t.elapsed(r.clock())
		}
		out, err := tl.handler(req)
		if err != nil {
			res = Fail(err)
		} else {
			res = OK(out)
		}
	}
	return r.completeTicket(t, res)
}

// completeTicket applies the output rules (deadline first, then the host's failure, then size,
// envelope and contract) and records the outcome.
func (r *Runtime) completeTicket(t *ticket, res Result) Result {
	switch {
	case t.expired(r.clock()):
		res = Fail(script.TimedOut(t.name))
	case res.Err != nil:
		if res.Err.Kind < ToolDenied || res.Err.Kind > ToolTimedOut {
			res = Fail(Failed(res.Err.Message))
		}
	default:
		if err := r.validateOutput(t, res.Output); err != nil {
			res = Fail(err)
		}
	}
	if res.Err != nil {
		r.recordAudit(t.sequence, t.name, len(t.input), 0, outcomeOf(res.Err), 0)
	} else {
		r.recordAudit(t.sequence, t.name, len(t.input), len(res.Output), OutcomeAllowed, 0)
	}
	return res
}

func (r *Runtime) validateOutput(t *ticket, output string) *ToolError {
	if len(output) > t.maxOutput {
		return Denied(t.name + " output exceeds " + strconv.Itoa(t.maxOutput) + " bytes")
	}
	if t.format != FormatJSON {
		return nil
	}
	v, err := jsonEnvelope(output, t.name, "output")
	if err != nil {
		return err
	}
	tl := r.tools[t.name]
	if tl == nil {
		return Failed("registered capability disappeared: " + t.name)
	}
	if tl.outputSchema != nil {
		if verr := tl.outputSchema.Validate(v); verr != nil {
			return Denied("output does not match its schema: " + verr.Error())
		}
	}
	return nil
}

// settle completes a record with res, makes it Ready and removes it when it is an orphan.
func (r *Runtime) settle(rec *record, res Result) Settlement {
	res = r.completeTicket(&rec.t, res)
	rec.state, rec.output, rec.err = StateReady, res.Output, res.Err
	s := Settlement{ID: rec.id, Awaited: rec.waiting, Output: res.Output, Err: res.Err}
	rec.waiting = false
	if rec.orphaned {
		r.remove(rec.id)
	}
	return s
}

func (r *Runtime) remove(id OperationID) {
	delete(r.records, id)
	if i, ok := slices.BinarySearch(r.order, id); ok {
		r.order = slices.Delete(r.order, i, i+1)
	}
}

// Await reports an operation to the script that awaits it: a settled operation returns
// ready=true with its output or its *ToolError (every time it is awaited); a pending one records
// the waiter and returns ready=false. ErrUnknownPromise and ErrPromiseAlreadyAwaited cover the
// edge cases.
func (r *Runtime) Await(id OperationID) (output string, ready bool, err error) {
	rec, ok := r.records[id]
	switch {
	case !ok || rec.released:
		return "", false, ErrUnknownPromise
	case rec.state == StateReady:
		if rec.err != nil {
			return "", true, rec.err
		}
		return rec.output, true, nil
	case rec.waiting:
		return "", false, ErrPromiseAlreadyAwaited
	}
	rec.waiting = true
	return "", false, nil
}

// ReleasePromise records that no script references the operation's promise any more (it was
// dropped, or its evaluation ended). The record is only affected by the next CollectGarbage.
// It reports whether the record exists.
func (r *Runtime) ReleasePromise(id OperationID) bool {
	rec, ok := r.records[id]
	if !ok {
		return false
	}
	rec.released, rec.waiting = true, false
	return true
}

// CollectGarbage applies garbage collection to released promises: a queued or host-pump record
// is deleted (its work never runs and the call stays spent, without an audit event), a settled
// record is deleted, and a claimed or cancellation-requested record is kept as an orphan until it
// settles. It returns the number of records deleted.
func (r *Runtime) CollectGarbage() int {
	removed := 0
	for i := 0; i < len(r.order); {
		rec := r.records[r.order[i]]
		if rec.released {
			if rec.state == StateClaimed || rec.state == StateCancellationRequested {
				rec.orphaned = true
			} else {
				delete(r.records, rec.id)
				r.order = slices.Delete(r.order, i, i+1)
				removed++
				continue
			}
		}
		i++
	}
	return removed
}

// Pump runs the first host-pump operation (PumpUpTo(1)).
func (r *Runtime) Pump() []Settlement { return r.PumpUpTo(1) }

// PumpUpTo runs at most n host-pump operations in scan order. An operation whose deadline has
// passed is settled as timed out without running its handler; a handler that finishes late is
// also a timeout. Pump never touches external operations.
func (r *Runtime) PumpUpTo(n int) []Settlement {
	var out []Settlement
	for len(out) < n {
		var rec *record
		for _, id := range r.order {
			if c := r.records[id]; c.state == StateHostPump {
				rec = c
				break
			}
		}
		if rec == nil {
			break
		}
		var res Result
		if rec.t.expired(r.clock()) {
			res = r.completeTicket(&rec.t, Fail(script.TimedOut(rec.t.name)))
		} else {
			res = r.execute(&rec.t)
		}
		rec.state, rec.output, rec.err = StateReady, res.Output, res.Err
		out = append(out, Settlement{ID: rec.id, Awaited: rec.waiting, Output: res.Output, Err: res.Err})
		rec.waiting = false
		if rec.orphaned {
			r.remove(rec.id)
		}
	}
	return out
}

// ExpireTimedOut settles every pending operation whose deadline has passed, up to
// MaxPendingTools of them.
func (r *Runtime) ExpireTimedOut() []Settlement { return r.ExpireTimedOutUpTo(r.maxPending) }

// ExpireTimedOutUpTo settles at most n expired pending operations (any state but Ready) in scan
// order as timed out.
func (r *Runtime) ExpireTimedOutUpTo(n int) []Settlement {
	now := r.clock()
	var due []*record
	for _, id := range r.order {
		if len(due) >= n {
			break
		}
		if rec := r.records[id]; rec.state != StateReady && rec.t.expired(now) {
			due = append(due, rec)
		}
	}
	out := make([]Settlement, 0, len(due))
	for _, rec := range due {
		out = append(out, r.settle(rec, Fail(script.TimedOut(rec.t.name))))
	}
	return out
}

// NextDeadline returns the earliest deferred deadline among the operations that are not yet
// settled, so that the host can schedule ExpireTimedOut for then (RUN-201). ok is false when
// no pending operation has a deadline. The instant is on the runtime's clock.
func (r *Runtime) NextDeadline() (at time.Time, ok bool) {
	for _, id := range r.order {
		rec := r.records[id]
		if rec.state == StateReady || !rec.t.hasDeadline {
			continue
		}
		due := rec.t.start.Add(rec.t.maxDeferred)
		if !ok || due.Before(at) {
			at, ok = due, true
		}
	}
	return at, ok
}

// Invocation is the host's view of a claimed (or peeked) external operation.
type Invocation struct {
	ID             OperationID
	Name           string
	Input          string // the input text as reserved (JSON keys in script order, not canonical)
	CallIndex      int
	Attempt        uint32
	MaxAttempts    uint32
	IdempotencyKey string
	Stream         *StreamPolicy
	Format         DataFormat
	MaxOutputBytes int
	// HasDeadline says whether RemainingDeadlineMillis applies: the time left when the snapshot
	// was taken, in whole milliseconds, 0 once expired.
	HasDeadline             bool
	RemainingDeadlineMillis uint64
}

// RemainingDeadline returns the time left of the operation's deferred deadline when the
// snapshot was taken, and whether it has one. A transport that carries the invocation arms no
// longer a deadline than this (RUN-200).
func (inv Invocation) RemainingDeadline() (time.Duration, bool) {
	if !inv.HasDeadline {
		return 0, false
	}
	return time.Duration(inv.RemainingDeadlineMillis) * time.Millisecond, true
}

// WorkerPayload converts the input to the exact worker payload: text as is, or the parsed JSON
// value, which must be an object or array within the protocol depth limit (else
// ErrInvalidPayload).
func (inv Invocation) WorkerPayload() (protocol.ToolPayload, error) {
	if inv.Format != FormatJSON {
		return protocol.TextPayload(inv.Input), nil
	}
	v, err := canonjson.ParseValue([]byte(inv.Input), canonjson.Preserve)
	if err != nil {
		return protocol.ToolPayload{}, &ExternalError{Kind: ErrInvalidPayload, ID: inv.ID}
	}
	p := protocol.JSONPayload(v)
	if _, err := p.ValidateFor(protocol.FormatJSON); err != nil {
		return protocol.ToolPayload{}, &ExternalError{Kind: ErrInvalidPayload, ID: inv.ID}
	}
	return p, nil
}

// CanonicalInputBytes returns the canonical operation input bytes of WorkerPayload.
func (inv Invocation) CanonicalInputBytes() ([]byte, error) {
	p, err := inv.WorkerPayload()
	if err != nil {
		return nil, err
	}
	b, err := protocol.CanonicalOperationInputBytes(p)
	if err != nil {
		return nil, &ExternalError{Kind: ErrProtocol, ID: inv.ID, Err: err}
	}
	return b, nil
}

func (r *Runtime) invocation(rec *record, now time.Time) Invocation {
	inv := Invocation{
		ID: rec.id, Name: rec.t.name, Input: rec.t.input, CallIndex: rec.t.callIndex,
		Attempt: rec.attempt, MaxAttempts: rec.t.maxAttempts, IdempotencyKey: rec.key,
		Format: rec.t.format, MaxOutputBytes: rec.t.maxOutput, HasDeadline: rec.t.hasDeadline,
	}
	if rec.t.stream != nil {
		s := *rec.t.stream
		inv.Stream = &s
	}
	if rec.t.hasDeadline {
		inv.RemainingDeadlineMillis = rec.t.remainingMillis(now)
	}
	return inv
}

// CancellationRequest identifies a claimed operation whose adapter the host must ask to stop.
// It carries no input. Only Runtime.RequestExternalCancellation issues one (Issued); a value
// built from its fields is not issued, so that an adapter can refuse to send a cancellation the
// runtime was never asked for.
type CancellationRequest struct {
	ID             OperationID
	Name           string
	CallIndex      int
	Attempt        uint32
	IdempotencyKey string
	issued         bool
}

// Issued reports whether the runtime issued the request, which it does only after it recorded
// the operation as cancellation-requested.
func (r CancellationRequest) Issued() bool { return r.issued }

// StreamChunk is one accepted, redacted chunk of an external operation, for the host only.
type StreamChunk struct {
	ID             OperationID
	Name           string
	CallIndex      int
	Attempt        uint32
	ChunkIndex     int // 1-based count of accepted chunks, this one included
	IdempotencyKey string
	Text           string
}

func (r *Runtime) lookup(id OperationID) (*record, *ExternalError) {
	rec, ok := r.records[id]
	if !ok {
		return nil, &ExternalError{Kind: ErrUnknownOperation, ID: id}
	}
	return rec, nil
}

// stateError maps a state that an operation does not accept to the table's error; claimed and
// cancellation-requested are handled by each caller.
func stateError(rec *record) *ExternalError {
	switch rec.state {
	case StateQueued:
		return &ExternalError{Kind: ErrNotClaimed, ID: rec.id}
	case StateHostPump:
		return &ExternalError{Kind: ErrNotExternal, ID: rec.id}
	case StateReady:
		return &ExternalError{Kind: ErrAlreadyCompleted, ID: rec.id}
	case StateClaimed, StateCancellationRequested:
		return &ExternalError{Kind: ErrAlreadyClaimed, ID: rec.id}
	}
	return &ExternalError{Kind: ErrUnknownOperation, ID: rec.id}
}

// claimed finds a claimed or cancellation-requested record.
func (r *Runtime) claimed(id OperationID) (*record, *ExternalError) {
	rec, err := r.lookup(id)
	if err != nil {
		return nil, err
	}
	if rec.state != StateClaimed && rec.state != StateCancellationRequested {
		return nil, stateError(rec)
	}
	return rec, nil
}

// CheckClaimed returns nil when operation id is claimed or cancellation-requested, and
// otherwise the *ExternalError that says why it is not (unknown, not external, not claimed,
// already completed).
func (r *Runtime) CheckClaimed(id OperationID) error {
	if _, err := r.claimed(id); err != nil {
		return err
	}
	return nil
}

// PeekNextExternal returns a snapshot of the first queued external operation without claiming
// it.
func (r *Runtime) PeekNextExternal() (Invocation, bool) {
	rec := r.firstQueued()
	if rec == nil {
		return Invocation{}, false
	}
	return r.invocation(rec, r.clock()), true
}

func (r *Runtime) firstQueued() *record {
	for _, id := range r.order {
		if rec := r.records[id]; rec.state == StateQueued {
			return rec
		}
	}
	return nil
}

// ClaimNextExternal claims the first queued external operation.
func (r *Runtime) ClaimNextExternal() (Invocation, bool) {
	rec := r.firstQueued()
	if rec == nil {
		return Invocation{}, false
	}
	inv, err := r.ClaimExternal(rec.id)
	return inv, err == nil
}

// ClaimExternal claims exactly one queued external operation. A stale, local or already claimed
// ID fails without claiming anything else. The deadline is not checked.
func (r *Runtime) ClaimExternal(id OperationID) (Invocation, error) {
	rec, err := r.lookup(id)
	if err != nil {
		return Invocation{}, err
	}
	if rec.state != StateQueued {
		return Invocation{}, stateError(rec)
	}
	inv := r.invocation(rec, r.clock())
	rec.state = StateClaimed
	return inv, nil
}

// ValidateClaimedExternal checks, without changing anything, that an operation is claimed, has
// no cancellation request and is within its deadline.
func (r *Runtime) ValidateClaimedExternal(id OperationID) error {
	rec, err := r.claimed(id)
	if err != nil {
		return err
	}
	if rec.state == StateCancellationRequested {
		return &ExternalError{Kind: ErrCancellationRequested, ID: id}
	}
	if rec.t.expired(r.clock()) {
		return &ExternalError{Kind: ErrDeadlineElapsed, ID: id}
	}
	return nil
}

// RetryExternal schedules the next attempt of a claimed operation and returns its invocation:
// same ID, key, call index and input, attempt+1, no new call budget. It is audited as
// retry_scheduled with class.
func (r *Runtime) RetryExternal(id OperationID, class RetryClass) (Invocation, error) {
	if class != RetryTransient && class != RetryRateLimited {
		return Invocation{}, ErrInvalidRetryClass
	}
	rec, err := r.claimed(id)
	if err != nil {
		return Invocation{}, err
	}
	if rec.state == StateCancellationRequested {
		return Invocation{}, &ExternalError{Kind: ErrCancellationRequested, ID: id}
	}
	now := r.clock()
	if rec.t.expired(now) {
		return Invocation{}, &ExternalError{Kind: ErrDeadlineElapsed, ID: id}
	}
	if rec.attempt >= rec.t.maxAttempts {
		return Invocation{}, &ExternalError{Kind: ErrRetryLimitReached, ID: id}
	}
	rec.attempt++
	inv := r.invocation(rec, now)
	r.recordAudit(rec.t.sequence, rec.t.name, len(rec.t.input), 0, OutcomeRetryScheduled, class)
	return inv, nil
}

// RequestExternalCancellation moves a claimed operation to cancellation-requested and returns
// the identity to pass to its adapter; repeating it returns the same request and changes nothing.
// Only the first request is audited. The deadline is not checked.
func (r *Runtime) RequestExternalCancellation(id OperationID) (CancellationRequest, error) {
	rec, err := r.claimed(id)
	if err != nil {
		return CancellationRequest{}, err
	}
	req := CancellationRequest{ID: rec.id, Name: rec.t.name, CallIndex: rec.t.callIndex, Attempt: rec.attempt, IdempotencyKey: rec.key, issued: true}
	if rec.state == StateClaimed {
		rec.state = StateCancellationRequested
		r.recordAudit(rec.t.sequence, rec.t.name, len(rec.t.input), 0, OutcomeCancellationRequested, 0)
	}
	return req, nil
}

// ConfirmExternalCancellation settles a cancellation-requested operation as cancelled (or timed
// out past its deadline), after its adapter acknowledged the request.
func (r *Runtime) ConfirmExternalCancellation(id OperationID) (Settlement, error) {
	rec, err := r.claimed(id)
	if err != nil {
		return Settlement{}, err
	}
	if rec.state == StateClaimed {
		return Settlement{}, &ExternalError{Kind: ErrCancellationNotRequested, ID: id}
	}
	return r.settle(rec, Fail(script.Cancelled())), nil
}

// CancelExternal is the trusted host's direct terminal assertion that a claimed operation is
// cancelled; it needs no prior request.
func (r *Runtime) CancelExternal(id OperationID) (Settlement, error) {
	rec, err := r.claimed(id)
	if err != nil {
		return Settlement{}, err
	}
	return r.settle(rec, Fail(script.Cancelled())), nil
}

// CompleteExternal settles a claimed (or cancellation-requested) operation with res. A
// successful output passes the same size, envelope and contract checks as a local handler's; a
// result after the deadline becomes a timeout.
func (r *Runtime) CompleteExternal(id OperationID, res Result) (Settlement, error) {
	rec, err := r.claimed(id)
	if err != nil {
		return Settlement{}, err
	}
	return r.settle(rec, res), nil
}

// PushExternalChunk accepts one chunk of a claimed streaming operation, redacts it and returns
// it to the host. Limits are checked on the source text first and on the redacted text after;
// StreamLimitExceeded is backpressure. A rejected chunk changes no counter.
func (r *Runtime) PushExternalChunk(id OperationID, text string) (StreamChunk, error) {
	rec, err := r.claimed(id)
	if err != nil {
		return StreamChunk{}, err
	}
	if rec.state == StateCancellationRequested {
		return StreamChunk{}, &ExternalError{Kind: ErrCancellationRequested, ID: id}
	}
	if rec.t.expired(r.clock()) {
		return StreamChunk{}, &ExternalError{Kind: ErrDeadlineElapsed, ID: id}
	}
	source := len(text)
	deny := func(kind ExternalErrorKind) (StreamChunk, error) {
		r.recordAudit(rec.t.sequence, rec.t.name, source, 0, OutcomeStreamDenied, 0)
		return StreamChunk{}, &ExternalError{Kind: kind, ID: id}
	}
	sp := rec.t.stream
	if sp == nil {
		return deny(ErrStreamingDisabled)
	}
	if rec.chunks >= sp.MaxChunks || source > sp.MaxChunkBytes || source > satSub(sp.MaxTotalBytes, rec.source) {
		return deny(ErrStreamLimitExceeded)
	}
	tl := r.tools[rec.t.name]
	if tl == nil {
		return deny(ErrToolUnavailable)
	}
	released := text
	if tl.redactor != nil {
		released = tl.redactor(text)
	}
	if len(released) > satSub(sp.MaxEmittedBytes, rec.emitted) {
		return deny(ErrStreamLimitExceeded)
	}
	// The redactor is host code; check the record again before accepting.
	if rec2, ok := r.records[id]; !ok || rec2 != rec {
		return StreamChunk{}, &ExternalError{Kind: ErrUnknownOperation, ID: id}
	}
	if rec.state != StateClaimed {
		if rec.state == StateCancellationRequested {
			return StreamChunk{}, &ExternalError{Kind: ErrCancellationRequested, ID: id}
		}
		return StreamChunk{}, stateError(rec)
	}
	if rec.t.expired(r.clock()) {
		return StreamChunk{}, &ExternalError{Kind: ErrDeadlineElapsed, ID: id}
	}
	rec.chunks++
	rec.source += source
	rec.emitted += len(released)
	r.recordAudit(rec.t.sequence, rec.t.name, source, len(released), OutcomeStreamed, 0)
	return StreamChunk{
		ID: id, Name: rec.t.name, CallIndex: rec.t.callIndex, Attempt: rec.attempt,
		ChunkIndex: rec.chunks, IdempotencyKey: rec.key, Text: released,
	}, nil
}

func satSub(a, b int) int {
	if b >= a {
		return 0
	}
	return a - b
}
