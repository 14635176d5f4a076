package main

import (
	"strings"

	"github.com/splashv5/conform/vectors/vectorfmt"
)

// ---- tools ----

func u64p(v uint64) *uint64 { return &v }
func sp(s string) *string   { return &s }
func bp(b bool) *bool       { return &b }
func ip(i int) *int         { return &i }

// hostTools are the registrations the scenarios draw from, by name.
var hostTools = map[string]vectorfmt.HostTool{
	"local":  {Name: "local", Kind: "host_pump", Format: "text", MaxCalls: 10, MaxAttempts: 1, MaxInputBytes: 64, MaxOutputBytes: 64, Handler: "echo"},
	"broken": {Name: "broken", Kind: "host_pump", Format: "text", MaxCalls: 10, MaxAttempts: 1, MaxInputBytes: 64, MaxOutputBytes: 64, Handler: "fail"},
	"slow": {Name: "slow", Kind: "host_pump", Format: "text", MaxCalls: 10, MaxAttempts: 1, MaxInputBytes: 64, MaxOutputBytes: 64,
		Handler: "echo", HandlerAdvanceMillis: 150, DeadlineMillis: u64p(100)},
	"remote": {Name: "remote", Kind: "external", Format: "text", MaxCalls: 10, MaxAttempts: 3, MaxInputBytes: 64, MaxOutputBytes: 16,
		Stream: &vectorfmt.HostStream{MaxChunks: 3, MaxChunkBytes: 8, MaxTotalBytes: 12, MaxEmittedBytes: 10}},
	"timed": {Name: "timed", Kind: "external", Format: "text", MaxCalls: 10, MaxAttempts: 2, MaxInputBytes: 64, MaxOutputBytes: 64, DeadlineMillis: u64p(1000)},
	"once":  {Name: "once", Kind: "external", Format: "text", MaxCalls: 1, MaxAttempts: 1, MaxInputBytes: 4, MaxOutputBytes: 64},
	"doc": {Name: "doc", Kind: "external", Format: "json", MaxCalls: 10, MaxAttempts: 1, MaxInputBytes: 64, MaxOutputBytes: 64,
		InputSchema: `{"type":"object","required":["n"]}`, OutputSchema: `{"type":"object","required":["ok"]}`},
	"bounded": {Name: "bounded", Kind: "external", Format: "json", MaxCalls: 10, MaxAttempts: 1, MaxInputBytes: 64, MaxOutputBytes: 64,
		InputSchema:  `{"type":"object","properties":{"n":{"type":"integer","maximum":9007199254740992},"x":{"type":"number","minimum":0.1}}}`,
		OutputSchema: `{"type":"object"}`},
}

// ---- steps ----

type hs vectorfmt.HostStep

func step(op string) hs { return hs{Op: op} }

func startS(tool, input string, id uint64) hs {
	s := hs{Op: vectorfmt.HostOpStart, Tool: tool, Input: sp(input)}
	s.Expect.ID = id
	return s
}
func startJSONS(tool, input string, id uint64) hs {
	s := startS(tool, input, id)
	s.Op = vectorfmt.HostOpStartJSON
	return s
}
func startDenied(tool, input, kind, message string) hs {
	s := hs{Op: vectorfmt.HostOpStart, Tool: tool, Input: sp(input)}
	s.Expect.Error, s.Expect.ToolError = kind, &vectorfmt.HostToolError{Kind: kind, Message: message}
	return s
}
func callS(tool, input string) hs { return hs{Op: vectorfmt.HostOpCall, Tool: tool, Input: sp(input)} }
func on(op string, id uint64) hs  { return hs{Op: op, ID: id} }
func claimS(id uint64, inv *vectorfmt.HostInvocation) hs {
	s := on(vectorfmt.HostOpClaim, id)
	s.Expect.Invocation = inv
	return s.st("claimed")
}
func claimNextS(inv *vectorfmt.HostInvocation) hs {
	s := step(vectorfmt.HostOpClaimNext)
	s.Expect.Found = bp(inv != nil)
	s.Expect.Invocation = inv
	if inv != nil {
		s.Expect.State = "claimed"
	}
	return s
}
func peekS(inv *vectorfmt.HostInvocation) hs {
	s := step(vectorfmt.HostOpPeek)
	s.Expect.Found = bp(inv != nil)
	s.Expect.Invocation = inv
	if inv != nil {
		s.Expect.State = "queued"
	}
	return s
}
func completeS(id uint64, output string) hs {
	s := on(vectorfmt.HostOpComplete, id)
	s.Output = sp(output)
	return s
}
func failS(id uint64, message string) hs {
	s := on(vectorfmt.HostOpFail, id)
	s.Failure = &vectorfmt.HostToolError{Kind: "Failed", Message: message}
	return s
}
func retryS(id uint64, class string) hs {
	s := on(vectorfmt.HostOpRetry, id)
	s.RetryClass = class
	return s
}
func chunkS(id uint64, text string) hs {
	s := on(vectorfmt.HostOpPushChunk, id)
	s.Chunk = sp(text)
	return s
}
func advanceS(ms uint64) hs { s := step(vectorfmt.HostOpAdvanceClock); s.Millis = ms; return s }
func expireS(limit int) hs  { s := step(vectorfmt.HostOpExpire); s.Limit = limit; return s }
func pumpS(limit int) hs    { s := step(vectorfmt.HostOpPump); s.Limit = limit; return s }
func reconcileS(id uint64, status, text string) hs {
	s := on(vectorfmt.HostOpReconcile, id)
	s.Status = status
	if text != "" || status == "succeeded" {
		s.StatusText = sp(text)
	}
	return s
}
func gcS(deleted int) hs {
	s := step(vectorfmt.HostOpCollectGarbage)
	s.Expect.Deleted = ip(deleted)
	return s
}
func releaseS(id uint64, found bool) hs {
	s := on(vectorfmt.HostOpReleasePromise, id)
	s.Expect.Found = bp(found)
	return s
}

// Expectation modifiers.
func (s hs) st(state string) hs { s.Expect.State = state; return s }
func (s hs) err(kind string) hs { s.Expect.Error = kind; return s }
func (s hs) au(ev ...vectorfmt.HostAuditEvent) hs {
	s.Expect.Audit = append(s.Expect.Audit, ev...)
	return s
}
func (s hs) settles(st ...vectorfmt.HostSettlement) hs {
	s.Expect.Settlements = append(s.Expect.Settlements, st...)
	return s
}
func (s hs) output(o string) hs { s.Expect.Output = sp(o); return s }
func (s hs) toolErr(kind, message string) hs {
	s.Expect.ToolError = &vectorfmt.HostToolError{Kind: kind, Message: message}
	return s
}
func (s hs) ready(r bool) hs                    { s.Expect.Ready = bp(r); return s }
func (s hs) running(r bool) hs                  { s.Expect.Running = bp(r); return s }
func (s hs) inv(i *vectorfmt.HostInvocation) hs { s.Expect.Invocation = i; return s }
func (s hs) chunk(index int, text string, q uint64) hs {
	s.Expect.Chunk = &vectorfmt.HostChunk{ChunkIndex: index, Text: text, IdempotencyKey: indIdempotencyKey(q)}
	return s
}
func (s hs) cancellation(id uint64, tool string, callIndex int, attempt uint32, q uint64) hs {
	s.Expect.Cancellation = &vectorfmt.HostCancellation{ID: id, Tool: tool, CallIndex: callIndex, Attempt: attempt, IdempotencyKey: indIdempotencyKey(q)}
	return s
}
func (s hs) reconcileReq(tool string, q uint64) hs {
	s.Expect.Reconcile = &vectorfmt.HostReconcileRequest{Tool: tool, OperationKey: indIdempotencyKey(q)}
	return s
}

// ev is one expected audit record.
func ev(seq, q uint64, tool string, in, out int, outcome string) vectorfmt.HostAuditEvent {
	return vectorfmt.HostAuditEvent{EventSequence: seq, Sequence: q, Tool: tool, InputBytes: in, OutputBytes: out, Outcome: outcome}
}
func evRetry(seq, q uint64, tool string, in int, class string) vectorfmt.HostAuditEvent {
	e := ev(seq, q, tool, in, 0, "retry_scheduled")
	e.RetryClass = class
	return e
}

// okSettle and errSettle are expected settlements.
func okSettle(id uint64, awaited bool, output string) vectorfmt.HostSettlement {
	return vectorfmt.HostSettlement{ID: id, Awaited: awaited, Output: sp(output)}
}
func errSettle(id uint64, awaited bool, kind, message string) vectorfmt.HostSettlement {
	return vectorfmt.HostSettlement{ID: id, Awaited: awaited, ToolError: &vectorfmt.HostToolError{Kind: kind, Message: message}}
}

// invOf is the expected invocation of the operation id of tool (its policy gives the
// maximum attempts, format and output limit), reserved with sequence q.
func invOf(id uint64, tool, input string, callIndex int, attempt uint32, q uint64) *vectorfmt.HostInvocation {
	t := hostTools[tool]
	return &vectorfmt.HostInvocation{ID: id, Tool: tool, Input: input, CallIndex: callIndex, Attempt: attempt,
		MaxAttempts: t.MaxAttempts, IdempotencyKey: indIdempotencyKey(q), Format: t.Format, MaxOutputBytes: t.MaxOutputBytes}
}
func (s hs) remaining(ms uint64) hs {
	if s.Expect.Invocation != nil {
		inv := *s.Expect.Invocation
		inv.RemainingDeadlineMillis = u64p(ms)
		s.Expect.Invocation = &inv
	}
	return s
}

// Messages the runtime writes.
const (
	msgCancelled = "external operation was reported cancelled"
)

func deadlineMsg(tool string) string { return tool + " exceeded its deferred deadline" }

// ---- state prefixes for the lifecycle table ----

// hostState is a lifecycle state a prefix builds for operation 1 (HP on "local", the others
// on "remote" with input "abc", sequence 0), with the next audit event sequence.
type hostState struct {
	name, state string
	prefix      []hs
	nextEvent   uint64
	id          uint64
}

func lifecycleStates() []hostState {
	q := []hs{startS("remote", "abc", 1).st("queued")}
	c := append(append([]hs{}, q...), claimS(1, invOf(1, "remote", "abc", 1, 1, 0)))
	cr := append(append([]hs{}, c...), on(vectorfmt.HostOpRequestCancellation, 1).cancellation(1, "remote", 1, 1, 0).
		au(ev(1, 0, "remote", 3, 0, "cancellation_requested")).st("cancellation_requested"))
	r := append(append([]hs{}, c...), completeS(1, "ok").settles(okSettle(1, false, "ok")).
		au(ev(1, 0, "remote", 3, 2, "allowed")).st("ready"))
	hp := []hs{startS("local", "abc", 1).st("host_pump")}
	return []hostState{
		{"Q", "queued", q, 1, 1},
		{"C", "claimed", c, 1, 1},
		{"CR", "cancellation_requested", cr, 2, 1},
		{"R", "ready", r, 2, 1},
		{"HP", "host_pump", hp, 1, 1},
		{"Unknown", "", nil, 1, 9},
	}
}

// lifecycleRefusals is the refusal half of the host-call × state table (RUN-072 to RUN-081,
// RUN-084), written out: the error each host call gets in each state, "" where the call is
// allowed (those cells have their own scenarios below).
var lifecycleRefusals = []struct {
	op    string
	req   string
	cells map[string]string
}{
	{vectorfmt.HostOpClaim, "RUN-072", map[string]string{"C": "AlreadyClaimed", "CR": "AlreadyClaimed", "HP": "NotExternal", "R": "AlreadyCompleted"}},
	{vectorfmt.HostOpValidate, "RUN-073", map[string]string{"Q": "NotClaimed", "CR": "CancellationRequested", "HP": "NotExternal", "R": "AlreadyCompleted"}},
	{vectorfmt.HostOpRetry, "RUN-074", map[string]string{"Q": "NotClaimed", "CR": "CancellationRequested", "HP": "NotExternal", "R": "AlreadyCompleted"}},
	{vectorfmt.HostOpRequestCancellation, "RUN-075", map[string]string{"Q": "NotClaimed", "HP": "NotExternal", "R": "AlreadyCompleted"}},
	{vectorfmt.HostOpConfirmCancellation, "RUN-076", map[string]string{"Q": "NotClaimed", "C": "CancellationNotRequested", "HP": "NotExternal", "R": "AlreadyCompleted"}},
	{vectorfmt.HostOpCancel, "RUN-077", map[string]string{"Q": "NotClaimed", "HP": "NotExternal", "R": "AlreadyCompleted"}},
	{vectorfmt.HostOpComplete, "RUN-078", map[string]string{"Q": "NotClaimed", "HP": "NotExternal", "R": "AlreadyCompleted"}},
	{vectorfmt.HostOpPushChunk, "RUN-079", map[string]string{"Q": "NotClaimed", "CR": "CancellationRequested", "HP": "NotExternal", "R": "AlreadyCompleted"}},
	{vectorfmt.HostOpReconcileRequest, "RUN-080", map[string]string{"Q": "NotClaimed", "HP": "NotExternal", "R": "AlreadyCompleted"}},
	{vectorfmt.HostOpReconcile, "RUN-081", map[string]string{"Q": "NotClaimed", "HP": "NotExternal", "R": "AlreadyCompleted"}},
}

// hostCase is one scenario row.
type hostCase struct {
	meta
	tools      []string
	maxPending int
	steps      []hs
}

func hostCases() []hostCase {
	var cases []hostCase
	// 1. Refusal cells of the lifecycle table, one scenario each, plus Unknown for every call.
	for _, row := range lifecycleRefusals {
		for _, s := range lifecycleStates() {
			kind, refused := row.cells[s.name]
			if s.name == "Unknown" {
				kind, refused = "Unknown", true
			}
			if !refused {
				continue
			}
			last := on(row.op, s.id).err(kind).st(s.state)
			if row.op == vectorfmt.HostOpPushChunk {
				last.Chunk = sp("x")
			}
			if row.op == vectorfmt.HostOpComplete {
				last.Output = sp("late")
			}
			if row.op == vectorfmt.HostOpRetry {
				last.RetryClass = "transient"
			}
			if row.op == vectorfmt.HostOpReconcile {
				last.Status, last.StatusText = "succeeded", sp("x")
			}
			reqs := []string{row.req}
			flags := []string{"LifecycleRefusal"}
			if s.name == "Unknown" {
				reqs = append(reqs, "RUN-084")
				flags = []string{"UnknownOperation"}
			}
			cases = append(cases, hostCase{
				meta:  meta{comment: row.op + " in state " + s.name + " is refused with " + kind + " and writes nothing", flags: flags, reqs: reqs},
				tools: []string{"local", "remote"},
				steps: append(append([]hs{}, s.prefix...), last),
			})
		}
	}
	cases = append(cases, hostScenarioCases()...)
	return cases
}

// cancelReq is the expected request_cancellation step for operation 1 of "remote" (q 0).
func cancelReq(seq uint64) hs {
	return on(vectorfmt.HostOpRequestCancellation, 1).cancellation(1, "remote", 1, 1, 0).
		au(ev(seq, 0, "remote", 3, 0, "cancellation_requested")).st("cancellation_requested")
}

// claimedRemote is the prefix that starts "remote" with input "abc" and claims it.
func claimedRemote() []hs {
	return []hs{startS("remote", "abc", 1).st("queued"), claimS(1, invOf(1, "remote", "abc", 1, 1, 0))}
}

func with(prefix []hs, more ...hs) []hs { return append(append([]hs{}, prefix...), more...) }

func hostScenarioCases() []hostCase {
	rem := []string{"remote"}
	lr := []string{"local", "remote"}
	tm := []string{"timed"}
	return []hostCase{
		// ---- allowed lifecycle cells ----
		{meta{"claiming a queued operation moves it to claimed and returns its invocation with the derived key", []string{"Lifecycle", "IdempotencyKey"}, []string{"RUN-072", "RUN-085", "RUN-005", "RUN-003", "RUN-050"}}, rem, 0,
			claimedRemote()},
		{meta{"claim-next claims queued operations in ID order, skipping host-pump and claimed ones, then reports nothing", []string{"Lifecycle"}, []string{"RUN-071", "RUN-052", "RUN-004", "RUN-005"}}, lr, 0,
			[]hs{startS("local", "h", 1).st("host_pump"), startS("remote", "a", 2).st("queued"), startS("remote", "b", 3).st("queued"),
				claimNextS(invOf(2, "remote", "a", 1, 1, 1)), claimNextS(invOf(3, "remote", "b", 2, 1, 2)), claimNextS(nil)}},
		{meta{"peek returns the first queued operation twice without claiming it and nothing once it is claimed", []string{"Lifecycle"}, []string{"RUN-070", "RUN-052"}}, lr, 0,
			[]hs{startS("local", "h", 1).st("host_pump"), startS("remote", "a", 2).st("queued"),
				peekS(invOf(2, "remote", "a", 1, 1, 1)), peekS(invOf(2, "remote", "a", 1, 1, 1)),
				claimS(2, invOf(2, "remote", "a", 1, 1, 1)), peekS(nil)}},
		{meta{"validating a claimed operation within its deadline succeeds and changes nothing", []string{"Lifecycle"}, []string{"RUN-073"}}, rem, 0,
			with(claimedRemote(), on(vectorfmt.HostOpValidate, 1).st("claimed"), on(vectorfmt.HostOpValidate, 1).st("claimed"))},
		{meta{"retries keep the key and call index, advance the attempt, audit the class, and stop at the attempt limit", []string{"Retry", "IdempotencyKey"}, []string{"RUN-100", "RUN-101", "RUN-033", "RUN-005"}}, rem, 0,
			with(claimedRemote(),
				retryS(1, "transient").inv(invOf(1, "remote", "abc", 1, 2, 0)).au(evRetry(1, 0, "remote", 3, "transient")).st("claimed"),
				retryS(1, "rate_limited").inv(invOf(1, "remote", "abc", 1, 3, 0)).au(evRetry(2, 0, "remote", 3, "rate_limited")).st("claimed"),
				claimNextS(nil),
				retryS(1, "transient").err("RetryLimitReached").st("claimed"))},
		{meta{"the default single attempt refuses any retry", []string{"Retry"}, []string{"RUN-100", "RUN-010"}}, []string{"once"}, 0,
			[]hs{startS("once", "ab", 1).st("queued"), claimS(1, invOf(1, "once", "ab", 1, 1, 0)),
				retryS(1, "transient").err("RetryLimitReached").st("claimed")}},
		{meta{"a cancellation request moves claimed to cancellation-requested; repeating it returns the same request and writes nothing", []string{"Cancellation"}, []string{"RUN-130", "RUN-075"}}, rem, 0,
			with(claimedRemote(), cancelReq(1),
				on(vectorfmt.HostOpRequestCancellation, 1).cancellation(1, "remote", 1, 1, 0).st("cancellation_requested"))},
		{meta{"confirming a requested cancellation settles it as cancelled; a later result is refused", []string{"Cancellation"}, []string{"RUN-132", "RUN-076"}}, rem, 0,
			with(claimedRemote(), cancelReq(1),
				on(vectorfmt.HostOpConfirmCancellation, 1).settles(errSettle(1, false, "Cancelled", msgCancelled)).au(ev(2, 0, "remote", 3, 0, "cancelled")).st("ready"),
				completeS(1, "late").err("AlreadyCompleted").st("ready"))},
		{meta{"a direct cancel settles a claimed operation without a prior request", []string{"Cancellation"}, []string{"RUN-133", "RUN-077"}}, rem, 0,
			with(claimedRemote(),
				on(vectorfmt.HostOpCancel, 1).settles(errSettle(1, false, "Cancelled", msgCancelled)).au(ev(1, 0, "remote", 3, 0, "cancelled")).st("ready"))},
		{meta{"a direct cancel settles a cancellation-requested operation", []string{"Cancellation"}, []string{"RUN-133", "RUN-077"}}, rem, 0,
			with(claimedRemote(), cancelReq(1),
				on(vectorfmt.HostOpCancel, 1).settles(errSettle(1, false, "Cancelled", msgCancelled)).au(ev(2, 0, "remote", 3, 0, "cancelled")).st("ready"))},
		{meta{"cancellation race: a successful result after the request wins and the confirmation is refused", []string{"CancellationRace"}, []string{"RUN-131", "RUN-078", "RUN-132"}}, rem, 0,
			with(claimedRemote(), cancelReq(1),
				completeS(1, "done").settles(okSettle(1, false, "done")).au(ev(2, 0, "remote", 3, 4, "allowed")).st("ready"),
				on(vectorfmt.HostOpConfirmCancellation, 1).err("AlreadyCompleted").st("ready"))},
		{meta{"cancellation race: a failure after the request wins with its own message", []string{"CancellationRace"}, []string{"RUN-131", "RUN-078"}}, rem, 0,
			with(claimedRemote(), cancelReq(1),
				failS(1, "worker broke").settles(errSettle(1, false, "Failed", "worker broke")).au(ev(2, 0, "remote", 3, 0, "failed")).st("ready"),
				on(vectorfmt.HostOpCancel, 1).err("AlreadyCompleted").st("ready"))},
		{meta{"completing a claimed operation with a successful output audits its length", []string{"Lifecycle"}, []string{"RUN-078", "RUN-140", "RUN-151", "RUN-150"}}, rem, 0,
			with(claimedRemote(), completeS(1, "0123456789abcdef").settles(okSettle(1, false, "0123456789abcdef")).au(ev(1, 0, "remote", 3, 16, "allowed")).st("ready"))},
		{meta{"an output one byte over the output limit is denied", []string{"OutputRules"}, []string{"RUN-140", "RUN-078"}}, rem, 0,
			with(claimedRemote(), completeS(1, "0123456789abcdefX").settles(errSettle(1, false, "Denied", "remote output exceeds 16 bytes")).au(ev(1, 0, "remote", 3, 0, "denied")).st("ready"))},
		{meta{"a JSON tool with a contract accepts a matching input and output", []string{"OutputRules"}, []string{"RUN-140", "RUN-016", "RUN-085"}}, []string{"doc"}, 0,
			[]hs{startJSONS("doc", `{"n":1}`, 1).st("queued"), claimS(1, invOf(1, "doc", `{"n":1}`, 1, 1, 0)),
				completeS(1, `{"ok":true}`).settles(okSettle(1, false, `{"ok":true}`)).au(ev(1, 0, "doc", 7, 11, "allowed")).st("ready")}},
		{meta{"a JSON tool's output that is not JSON is denied", []string{"OutputRules"}, []string{"RUN-140"}}, []string{"doc"}, 0,
			[]hs{startJSONS("doc", `{"n":1}`, 1).st("queued"), claimS(1, invOf(1, "doc", `{"n":1}`, 1, 1, 0)),
				completeS(1, `nope`).settles(errSettle(1, false, "Denied", "doc output is not valid JSON")).au(ev(1, 0, "doc", 7, 0, "denied")).st("ready")}},
		{meta{"a JSON tool's scalar output is denied", []string{"OutputRules"}, []string{"RUN-140"}}, []string{"doc"}, 0,
			[]hs{startJSONS("doc", `{"n":1}`, 1).st("queued"), claimS(1, invOf(1, "doc", `{"n":1}`, 1, 1, 0)),
				completeS(1, `1`).settles(errSettle(1, false, "Denied", "doc output must be a JSON object or array")).au(ev(1, 0, "doc", 7, 0, "denied")).st("ready")}},
		{meta{"a host failure passes unchanged and is audited as failed", []string{"OutputRules"}, []string{"RUN-140", "RUN-078", "RUN-151"}}, rem, 0,
			with(claimedRemote(), failS(1, "boom").settles(errSettle(1, false, "Failed", "boom")).au(ev(1, 0, "remote", 3, 0, "failed")).st("ready"))},

		// ---- streaming ----
		{meta{"chunks are checked against the per-chunk, emitted and count limits; refused chunks change no counter", []string{"Streaming"}, []string{"RUN-121", "RUN-122", "RUN-079"}}, rem, 0,
			with(claimedRemote(),
				chunkS(1, "123456789").err("StreamLimitExceeded").au(ev(1, 0, "remote", 9, 0, "stream_denied")).st("claimed"),
				chunkS(1, "aaaa").chunk(1, "aaaa", 0).au(ev(2, 0, "remote", 4, 4, "streamed")).st("claimed"),
				chunkS(1, "bbbb").chunk(2, "bbbb", 0).au(ev(3, 0, "remote", 4, 4, "streamed")).st("claimed"),
				chunkS(1, "ccc").err("StreamLimitExceeded").au(ev(4, 0, "remote", 3, 0, "stream_denied")).st("claimed"),
				chunkS(1, "cc").chunk(3, "cc", 0).au(ev(5, 0, "remote", 2, 2, "streamed")).st("claimed"),
				chunkS(1, "").err("StreamLimitExceeded").au(ev(6, 0, "remote", 0, 0, "stream_denied")).st("claimed"))},
		{meta{"a chunk over the remaining aggregate source allowance is refused", []string{"Streaming"}, []string{"RUN-121"}}, []string{"remote"}, 0,
			with(claimedRemote(),
				chunkS(1, "aaaaaaa").chunk(1, "aaaaaaa", 0).au(ev(1, 0, "remote", 7, 7, "streamed")).st("claimed"),
				chunkS(1, "bbbbbb").err("StreamLimitExceeded").au(ev(2, 0, "remote", 6, 0, "stream_denied")).st("claimed"))},
		{meta{"an empty chunk is a chunk", []string{"Streaming"}, []string{"RUN-122"}}, rem, 0,
			with(claimedRemote(), chunkS(1, "").chunk(1, "", 0).au(ev(1, 0, "remote", 0, 0, "streamed")).st("claimed"))},
		{meta{"stream counters span attempts", []string{"Streaming", "Retry"}, []string{"RUN-120", "RUN-122", "RUN-101"}}, rem, 0,
			with(claimedRemote(),
				chunkS(1, "aaaa").chunk(1, "aaaa", 0).au(ev(1, 0, "remote", 4, 4, "streamed")).st("claimed"),
				retryS(1, "transient").inv(invOf(1, "remote", "abc", 1, 2, 0)).au(evRetry(2, 0, "remote", 3, "transient")).st("claimed"),
				chunkS(1, "bbbb").chunk(2, "bbbb", 0).au(ev(3, 0, "remote", 4, 4, "streamed")).st("claimed"))},
		{meta{"a chunk for a tool without a stream policy is refused and audited", []string{"Streaming"}, []string{"RUN-121"}}, tm, 0,
			[]hs{startS("timed", "t", 1).st("queued"), claimS(1, invOf(1, "timed", "t", 1, 1, 0)).remaining(1000),
				chunkS(1, "x").err("StreamingDisabled").au(ev(1, 0, "timed", 1, 0, "stream_denied")).st("claimed")}},

		// ---- reconciliation ----
		{meta{"a reconcile request names the tool and the idempotency key, for claimed and cancellation-requested operations", []string{"Reconcile"}, []string{"RUN-080", "RUN-160"}}, rem, 0,
			with(claimedRemote(), on(vectorfmt.HostOpReconcileRequest, 1).reconcileReq("remote", 0).st("claimed"), cancelReq(1),
				on(vectorfmt.HostOpReconcileRequest, 1).reconcileReq("remote", 0).st("cancellation_requested"))},
		{meta{"a running reconciliation changes nothing; a succeeded one completes through the output rules", []string{"Reconcile"}, []string{"RUN-081", "RUN-161"}}, rem, 0,
			with(claimedRemote(), reconcileS(1, "running", "").running(true).st("claimed"),
				reconcileS(1, "succeeded", "done").running(false).settles(okSettle(1, false, "done")).au(ev(1, 0, "remote", 3, 4, "allowed")).st("ready"))},
		{meta{"a failed reconciliation completes as Failed with the worker's message", []string{"Reconcile"}, []string{"RUN-081", "RUN-161"}}, rem, 0,
			with(claimedRemote(), reconcileS(1, "failed", "worker broke").running(false).settles(errSettle(1, false, "Failed", "worker broke")).au(ev(1, 0, "remote", 3, 0, "failed")).st("ready"))},
		{meta{"a cancelled reconciliation of a cancellation-requested operation takes the cancel path", []string{"Reconcile", "Cancellation"}, []string{"RUN-081", "RUN-161", "RUN-133"}}, rem, 0,
			with(claimedRemote(), cancelReq(1), reconcileS(1, "cancelled", "").running(false).settles(errSettle(1, false, "Cancelled", msgCancelled)).au(ev(2, 0, "remote", 3, 0, "cancelled")).st("ready"))},
		{meta{"a succeeded reconciliation with a JSON payload for a text tool is a protocol error and changes nothing", []string{"Reconcile"}, []string{"RUN-161"}}, rem, 0,
			with(claimedRemote(), reconcileS(1, "succeeded_json", `{"a":1}`).err("Protocol").st("claimed"))},

		// ---- deadlines ----
		{meta{"the remaining deadline shrinks with the clock and the operation expires exactly at its maximum", []string{"Deadline"}, []string{"RUN-114", "RUN-110", "RUN-073", "RUN-034"}}, tm, 0,
			[]hs{startS("timed", "t", 1).st("queued"), advanceS(300), claimS(1, invOf(1, "timed", "t", 1, 1, 0)).remaining(700),
				advanceS(699), on(vectorfmt.HostOpValidate, 1).st("claimed"), advanceS(1), on(vectorfmt.HostOpValidate, 1).err("DeadlineElapsed").st("claimed")}},
		{meta{"a completion after the deadline is converted into a timeout", []string{"Deadline"}, []string{"RUN-111", "RUN-140"}}, tm, 0,
			[]hs{startS("timed", "t", 1).st("queued"), claimS(1, invOf(1, "timed", "t", 1, 1, 0)).remaining(1000), advanceS(1000),
				completeS(1, "ok").settles(errSettle(1, false, "TimedOut", deadlineMsg("timed"))).au(ev(1, 0, "timed", 1, 0, "timed_out")).st("ready")}},
		{meta{"on an expired claimed operation, retry, chunk, reconcile request and a running reconciliation fail without settling it; a cancellation request still works and confirmation times out", []string{"Deadline", "Cancellation"}, []string{"RUN-113", "RUN-132", "RUN-111"}}, tm, 0,
			[]hs{startS("timed", "t", 1).st("queued"), claimS(1, invOf(1, "timed", "t", 1, 1, 0)).remaining(1000), advanceS(1500),
				retryS(1, "transient").err("DeadlineElapsed").st("claimed"),
				chunkS(1, "x").err("DeadlineElapsed").st("claimed"),
				on(vectorfmt.HostOpReconcileRequest, 1).err("DeadlineElapsed").st("claimed"),
				reconcileS(1, "running", "").err("DeadlineElapsed").st("claimed"),
				on(vectorfmt.HostOpRequestCancellation, 1).cancellation(1, "timed", 1, 1, 0).au(ev(1, 0, "timed", 1, 0, "cancellation_requested")).st("cancellation_requested"),
				on(vectorfmt.HostOpConfirmCancellation, 1).settles(errSettle(1, false, "TimedOut", deadlineMsg("timed"))).au(ev(2, 0, "timed", 1, 0, "timed_out")).st("ready")}},
		{meta{"expiry settles only expired operations, in ID order, up to its batch size", []string{"Deadline"}, []string{"RUN-083", "RUN-112", "RUN-110"}}, tm, 0,
			[]hs{startS("timed", "a", 1).st("queued"), startS("timed", "b", 2).st("queued"), claimS(2, invOf(2, "timed", "b", 2, 1, 1)).remaining(1000),
				advanceS(999), expireS(0), advanceS(1),
				expireS(1).settles(errSettle(1, false, "TimedOut", deadlineMsg("timed"))).au(ev(1, 0, "timed", 1, 0, "timed_out")),
				expireS(0).settles(errSettle(2, false, "TimedOut", deadlineMsg("timed"))).au(ev(2, 1, "timed", 1, 0, "timed_out")),
				expireS(0)}},
		{meta{"claiming a queued operation does not check its deadline", []string{"Deadline"}, []string{"RUN-072", "RUN-113", "RUN-114"}}, tm, 0,
			[]hs{startS("timed", "t", 1).st("queued"), advanceS(5000), claimS(1, invOf(1, "timed", "t", 1, 1, 0)).remaining(0)}},
		{meta{"a direct cancel after the deadline is a timeout", []string{"Deadline", "Cancellation"}, []string{"RUN-111", "RUN-133"}}, tm, 0,
			[]hs{startS("timed", "t", 1).st("queued"), claimS(1, invOf(1, "timed", "t", 1, 1, 0)).remaining(1000), advanceS(1000),
				on(vectorfmt.HostOpCancel, 1).settles(errSettle(1, false, "TimedOut", deadlineMsg("timed"))).au(ev(1, 0, "timed", 1, 0, "timed_out")).st("ready")}},
		{meta{"a host-pump handler that finishes after the deadline is a timeout", []string{"Deadline", "Pump"}, []string{"RUN-111", "RUN-082"}}, []string{"slow"}, 0,
			[]hs{startS("slow", "s", 1).st("host_pump"),
				pumpS(0).settles(errSettle(1, false, "TimedOut", deadlineMsg("slow"))).au(ev(1, 0, "slow", 1, 0, "timed_out"))}},
		{meta{"expiry settles an expired host-pump operation", []string{"Deadline"}, []string{"RUN-083"}}, []string{"slow"}, 0,
			[]hs{startS("slow", "s", 1).st("host_pump"), advanceS(100),
				expireS(0).settles(errSettle(1, false, "TimedOut", deadlineMsg("slow"))).au(ev(1, 0, "slow", 1, 0, "timed_out")), pumpS(0)}},
		{meta{"a synchronous call never times out", []string{"Deadline"}, []string{"RUN-034"}}, []string{"slow"}, 0,
			[]hs{callS("slow", "x").output("echo:x").au(ev(1, 0, "slow", 1, 6, "allowed"))}},

		// ---- pump ----
		{meta{"pump settles host-pump operations in ID order and never touches external ones", []string{"Pump"}, []string{"RUN-082", "RUN-052", "RUN-141"}}, lr, 0,
			[]hs{startS("local", "a", 1).st("host_pump"), startS("remote", "b", 2).st("queued"), startS("local", "c", 3).st("host_pump"),
				pumpS(0).settles(okSettle(1, false, "echo:a")).au(ev(1, 0, "local", 1, 6, "allowed")),
				pumpS(5).settles(okSettle(3, false, "echo:c")).au(ev(2, 2, "local", 1, 6, "allowed")),
				pumpS(5), peekS(invOf(2, "remote", "b", 1, 1, 1))}},
		{meta{"a host-pump handler's tool error is audited as failed", []string{"Pump"}, []string{"RUN-082", "RUN-140"}}, []string{"broken"}, 0,
			[]hs{startS("broken", "x", 1).st("host_pump"),
				pumpS(0).settles(errSettle(1, false, "Failed", "handler broke")).au(ev(1, 0, "broken", 1, 0, "failed"))}},

		// ---- await ----
		{meta{"awaiting a pending operation suspends once; the settlement reports the waiter; a settled one yields its output every time", []string{"Await"}, []string{"RUN-053", "RUN-055"}}, rem, 0,
			[]hs{startS("remote", "abc", 1).st("queued"), on(vectorfmt.HostOpAwait, 1).ready(false).st("queued"),
				on(vectorfmt.HostOpAwait, 1).err("PromiseAlreadyAwaited").st("queued"),
				claimS(1, invOf(1, "remote", "abc", 1, 1, 0)),
				completeS(1, "ok").settles(okSettle(1, true, "ok")).au(ev(1, 0, "remote", 3, 2, "allowed")).st("ready"),
				on(vectorfmt.HostOpAwait, 1).ready(true).output("ok").st("ready"),
				on(vectorfmt.HostOpAwait, 1).ready(true).output("ok").st("ready")}},
		{meta{"awaiting a failed operation raises its tool error every time; an unknown promise is refused", []string{"Await"}, []string{"RUN-053"}}, rem, 0,
			with(claimedRemote(), failS(1, "boom").settles(errSettle(1, false, "Failed", "boom")).au(ev(1, 0, "remote", 3, 0, "failed")).st("ready"),
				on(vectorfmt.HostOpAwait, 1).ready(true).toolErr("Failed", "boom").st("ready"),
				on(vectorfmt.HostOpAwait, 1).ready(true).toolErr("Failed", "boom").st("ready"),
				on(vectorfmt.HostOpAwait, 9).err("UnknownPromise"))},

		// ---- garbage collection and pending budget ----
		{meta{"the pending budget counts queued operations; a collected queued operation frees its slot without an audit record", []string{"GarbageCollection", "Reservation"}, []string{"RUN-030", "RUN-051", "RUN-054", "RUN-053", "RUN-004", "RUN-084"}}, rem, 2,
			[]hs{startS("remote", "a", 1).st("queued"), startS("remote", "b", 2).st("queued"),
				startDenied("remote", "c", "Denied", "pending tool budget of 2 exhausted").au(ev(1, 2, "remote", 1, 0, "denied")),
				releaseS(1, true).st("queued"), gcS(1),
				on(vectorfmt.HostOpAwait, 1).err("UnknownPromise"),
				on(vectorfmt.HostOpClaim, 1).err("Unknown"),
				startS("remote", "d", 3).st("queued"),
				claimNextS(invOf(2, "remote", "b", 2, 1, 1)), claimNextS(invOf(3, "remote", "d", 3, 1, 3))}},
		{meta{"a collected claimed operation is kept as an orphan and deleted once it settles, after its audit record", []string{"GarbageCollection"}, []string{"RUN-054"}}, rem, 0,
			with(claimedRemote(), releaseS(1, true).st("claimed"), gcS(0),
				completeS(1, "ok").settles(okSettle(1, false, "ok")).au(ev(1, 0, "remote", 3, 2, "allowed")),
				on(vectorfmt.HostOpClaim, 1).err("Unknown"))},
		{meta{"collection deletes released host-pump and settled operations; releasing an unknown ID reports nothing", []string{"GarbageCollection"}, []string{"RUN-054", "RUN-051"}}, lr, 0,
			[]hs{startS("local", "a", 1).st("host_pump"), startS("remote", "b", 2).st("queued"), claimS(2, invOf(2, "remote", "b", 1, 1, 1)),
				completeS(2, "ok").settles(okSettle(2, false, "ok")).au(ev(1, 1, "remote", 1, 2, "allowed")).st("ready"),
				releaseS(1, true).st("host_pump"), releaseS(2, true).st("ready"), gcS(2), releaseS(9, false), pumpS(0)}},
		{meta{"a collected promise keeps its call spent", []string{"GarbageCollection", "Reservation"}, []string{"RUN-033", "RUN-054", "RUN-031"}}, []string{"once"}, 0,
			[]hs{startS("once", "ab", 1).st("queued"), releaseS(1, true).st("queued"), gcS(1),
				startDenied("once", "ab", "Denied", "once exhausted its 1 call budget").au(ev(1, 1, "once", 2, 0, "denied"))}},

		// ---- reservation and keys ----
		{meta{"every reservation attempt, denied ones included, advances the sequence that names the idempotency key", []string{"Reservation", "IdempotencyKey"}, []string{"RUN-004", "RUN-005", "RUN-030", "RUN-031", "RUN-032", "RUN-007"}}, []string{"remote", "once"}, 0,
			[]hs{callS("remote", "x").err("Denied").toolErr("Denied", "remote is available only through tool.start").au(ev(1, 0, "remote", 1, 0, "denied")),
				startDenied("nope", "x", "Denied", "no capability grants nope").au(ev(2, 1, "nope", 1, 0, "denied")),
				startDenied("once", "toolong", "Denied", "once input exceeds 4 bytes").au(ev(3, 2, "once", 7, 0, "denied")),
				// The two denied starts passed the pending budget, so each allocated an ID (RUN-030).
				startS("remote", "a", 3).st("queued"),
				claimS(3, invOf(3, "remote", "a", 1, 1, 3))}},
		{meta{"start_json of a text tool is denied", []string{"Reservation"}, []string{"RUN-031"}}, rem, 0,
			[]hs{func() hs {
				s := startDenied("remote", `{"a":1}`, "Denied", "remote is not registered for JSON envelopes").au(ev(1, 0, "remote", 7, 0, "denied"))
				s.Op = vectorfmt.HostOpStartJSON
				return s
			}()}},
		{meta{"a JSON tool's input that is not JSON, or not an object or array, is denied", []string{"Reservation"}, []string{"RUN-031"}}, []string{"doc"}, 0,
			[]hs{startDenied("doc", "{", "Denied", "doc input is not valid JSON").au(ev(1, 0, "doc", 1, 0, "denied")),
				startDenied("doc", "5", "Denied", "doc input must be a JSON object or array").au(ev(2, 1, "doc", 1, 0, "denied"))}},
		{meta{"a synchronous host-pump call returns the handler output and spends a call and a sequence number", []string{"Reservation"}, []string{"RUN-031", "RUN-033", "RUN-004"}}, []string{"local"}, 0,
			[]hs{callS("local", "hi").output("echo:hi").au(ev(1, 0, "local", 2, 7, "allowed")),
				startS("local", "x", 1).st("host_pump"),
				pumpS(0).settles(okSettle(1, false, "echo:x")).au(ev(2, 1, "local", 1, 6, "allowed"))}},
	}
}

// ---- registration, audit ring and leases ----

// hostRow is a scenario row with the catalog limits of its runtime (0 = the defaults).
type hostRow struct {
	hostCase
	maxTools, maxCatalogBytes int
	noNonce                   bool
}

// hostRows is every scenario in tcId order: the earlier rows first, then the registration,
// audit ring and lease rows (the file is append-only).
func hostRows() []hostRow {
	var rows []hostRow
	for _, c := range hostCases() {
		rows = append(rows, hostRow{hostCase: c})
	}
	rows = append(rows, registrationRows()...)
	rows = append(rows, auditRingRows()...)
	rows = append(rows, leaseRows()...)
	rows = append(rows, nextDeadlineRows()...)
	rows = append(rows, scriptRows()...)
	rows = append(rows, telemetryRows()...)
	rows = append(rows, nonceRows()...)
	rows = append(rows, contractBoundRows()...)
	rows = append(rows, hostRow{hostCase: hostCase{meta: meta{"installing a stream redactor is refused for an unknown, a host-pump, a non-streaming and an already reserved tool; before the first reservation it may be replaced",
		[]string{"Streaming"}, []string{"RUN-019", "RUN-121", "RUN-122"}}, tools: []string{"local", "remote", "timed"},
		steps: []hs{
			redactS("nope", "mask").err("UnknownTool"), redactS("local", "mask").err("NotExternal"), redactS("timed", "mask").err("StreamingDisabled"),
			redactS("remote", "mask"), redactS("remote", "upper"),
			startS("remote", "abc", 1).st("queued"), redactS("remote", "mask").err("AlreadyReserved"),
			claimS(1, invOf(1, "remote", "abc", 1, 1, 0)),
			chunkS(1, "ab").chunk(1, "AB", 0).au(ev(1, 0, "remote", 2, 2, "streamed")).st("claimed"),
		}}})
	rows = append(rows, hostRow{hostCase: hostCase{meta: meta{"without a session nonce an external tool cannot be registered, and host-pump tools keep working",
		[]string{"Registration"}, []string{"RUN-006"}}, tools: []string{"local"},
		steps: []hs{registerS(extTool("remote")).err("ExternalIdempotencyNonceUnavailable"),
			startS("local", "a", 1).st("host_pump"),
			pumpS(0).settles(okSettle(1, false, "echo:a")).au(ev(1, 0, "local", 1, 6, "allowed"))}}, noNonce: true})
	return append(rows, entryPointRows()...)
}

// contractTool is extTool in format with a JSON contract: registering it goes through the
// validated external JSON entry point, which requires a JSON policy (RUN-015).
func contractTool(name, format string) vectorfmt.HostTool {
	t := extTool(name)
	t.Format, t.InputSchema, t.OutputSchema = format, `{"type":"object"}`, `{"type":"object"}`
	return t
}

// entryPointRows register through the validated external JSON entry point with a text policy
// and a second defect (the same registration with a JSON policy shows that defect's refusal),
// and through the plain external entry point with either format (RUN-015).
func entryPointRows() []hostRow {
	return []hostRow{
		{hostCase: hostCase{meta: meta{"the validated external JSON entry point refuses a text policy with InvalidPolicy before an active lease, a schema on a text tool and the registration checks that follow",
			[]string{"Registration", "Lease"}, []string{"RUN-015", "RUN-011", "RUN-013", "RUN-036"}}, tools: []string{"local"},
			steps: []hs{
				issueLeaseS(grant("local", 1)), step(vectorfmt.HostOpActivateLease),
				registerS(contractTool("checked", "text")).err("InvalidPolicy"),
				registerS(contractTool("checked", "json")).err("ActiveCapabilityLease"),
				step(vectorfmt.HostOpDeactivateLease),
				registerS(contractTool("checked", "text")).err("InvalidPolicy"),
				registerS(contractTool("checked", "json")),
			}}},
		{hostCase: hostCase{meta: meta{"the validated external JSON entry point refuses a text policy with InvalidPolicy before an invalid name, a duplicate name and the catalog tool limit",
			[]string{"Registration"}, []string{"RUN-015", "RUN-011", "RUN-012", "RUN-014"}}, tools: []string{"doc"},
			steps: []hs{
				registerS(contractTool("bad name", "text")).err("InvalidPolicy"),
				registerS(contractTool("bad name", "json")).err("InvalidName"),
				registerS(contractTool("doc", "text")).err("InvalidPolicy"),
				registerS(contractTool("doc", "json")).err("Duplicate"),
				registerS(contractTool("extra", "text")).err("InvalidPolicy"),
				registerS(contractTool("extra", "json")).err("CatalogToolLimitExceeded"),
			}}, maxTools: 1},
		{hostCase: hostCase{meta: meta{"without a session nonce the validated external JSON entry point still refuses a text policy with InvalidPolicy first",
			[]string{"Registration"}, []string{"RUN-015", "RUN-011", "RUN-006"}}, tools: []string{},
			steps: []hs{
				registerS(contractTool("checked", "text")).err("InvalidPolicy"),
				registerS(contractTool("checked", "json")).err("ExternalIdempotencyNonceUnavailable"),
			}}, noNonce: true},
		{hostCase: hostCase{meta: meta{"the plain external entry point accepts a text and a JSON policy; a duplicate of either is Duplicate, not InvalidPolicy",
			[]string{"Registration"}, []string{"RUN-015", "RUN-011", "RUN-018"}}, tools: []string{},
			steps: []hs{
				registerS(extTool("notes")),
				registerS(withTool(extTool("data"), func(t *vectorfmt.HostTool) { t.Format = "json" })),
				registerS(withTool(extTool("notes"), func(t *vectorfmt.HostTool) { t.Format = "json" })).err("Duplicate"),
				registerS(extTool("data")).err("Duplicate"),
			}}},
	}
}

// nextS reads the runtime's next deferred deadline: none, or at ms after the clock start.
func nextS(ms ...uint64) hs {
	s := step(vectorfmt.HostOpNextDeadline)
	s.Expect.Found = bp(len(ms) > 0)
	if len(ms) > 0 {
		s.Expect.NextDeadlineMillis = u64p(ms[0])
	}
	return s
}

// nextDeadlineRows read the next deferred deadline as operations are started, settled and
// expired (RUN-201).
func nextDeadlineRows() []hostRow {
	return []hostRow{{hostCase: hostCase{meta: meta{"the next deadline is the earliest reservation plus maximum among unsettled operations with a deadline; the runtime expires nothing by itself",
		[]string{"Deadline"}, []string{"RUN-201", "RUN-112"}}, tools: []string{"remote", "timed"},
		steps: []hs{
			nextS(), startS("remote", "r", 1).st("queued"), nextS(),
			startS("timed", "a", 2).st("queued"), nextS(1000),
			advanceS(300), startS("timed", "b", 3).st("queued"), nextS(1000),
			claimS(2, invOf(2, "timed", "a", 1, 1, 1)).remaining(700),
			completeS(2, "ok").settles(okSettle(2, false, "ok")).au(ev(1, 1, "timed", 1, 2, "allowed")).st("ready"), nextS(1300),
			advanceS(1000), nextS(1300),
			expireS(0).settles(errSettle(3, false, "TimedOut", deadlineMsg("timed"))).au(ev(2, 2, "timed", 1, 0, "timed_out")), nextS(),
		}}}}
}

// extTool is a valid external text tool with small limits; hpTool is a host-pump one.
func extTool(name string) vectorfmt.HostTool {
	return vectorfmt.HostTool{Name: name, Kind: "external", Format: "text", MaxCalls: 1, MaxAttempts: 1, MaxInputBytes: 8, MaxOutputBytes: 8}
}
func hpTool(name string) vectorfmt.HostTool {
	t := extTool(name)
	t.Kind, t.Handler = "host_pump", "echo"
	return t
}
func withTool(t vectorfmt.HostTool, change func(*vectorfmt.HostTool)) vectorfmt.HostTool {
	change(&t)
	return t
}

func registerS(t vectorfmt.HostTool) hs {
	s := step(vectorfmt.HostOpRegister)
	s.Register = &t
	return s
}
func issueLeaseS(grants ...vectorfmt.HostLeaseGrant) hs {
	s := step(vectorfmt.HostOpIssueLease)
	s.Lease = grants
	return s
}
func grant(tool string, calls int) vectorfmt.HostLeaseGrant {
	return vectorfmt.HostLeaseGrant{Tool: tool, MaxCalls: calls}
}
func auditCapS(n int, dropped uint64) hs {
	s := step(vectorfmt.HostOpSetAuditCapacity)
	s.Limit = n
	s.Expect.Dropped = u64p(dropped)
	return s
}
func clearAuditS() hs {
	s := step(vectorfmt.HostOpClearAudit)
	s.Expect.Dropped = u64p(0)
	return s
}

// exportS is an export from cursor that returns events and the next sequence.
func exportS(cursor, next, dropped uint64, events ...vectorfmt.HostAuditEvent) hs {
	s := step(vectorfmt.HostOpExportAudit)
	s.Cursor = cursor
	s.Expect.Exported, s.Expect.Next, s.Expect.Dropped = events, u64p(next), u64p(dropped)
	return s
}

// exportRefusedS is an export from cursor refused with kind; available is the earliest
// (Evicted) or next (Ahead) sequence, unused for InvalidCursor.
func exportRefusedS(cursor uint64, kind string, available, dropped uint64) hs {
	s := step(vectorfmt.HostOpExportAudit)
	s.Cursor = cursor
	s.Expect.Error, s.Expect.Dropped = kind, u64p(dropped)
	if kind != "InvalidCursor" {
		s.Expect.Available = u64p(available)
	}
	return s
}

// allowedEcho is the allowed record of the "local" echo handler for a one-byte input.
func allowedEcho(seq, q uint64) vectorfmt.HostAuditEvent { return ev(seq, q, "local", 1, 6, "allowed") }

func registrationRows() []hostRow {
	stream := &vectorfmt.HostStream{MaxChunks: 3, MaxChunkBytes: 8, MaxTotalBytes: 12, MaxEmittedBytes: 10}
	long := make([]byte, 4097)
	for i := range long {
		long[i] = 'd'
	}
	reg := func(m meta, tools []string, steps ...hs) hostRow {
		return hostRow{hostCase: hostCase{meta: m, tools: tools, steps: steps}}
	}
	return []hostRow{
		reg(meta{"a stream policy on a host-pump tool is InvalidPolicy, checked before the duplicate name", []string{"Registration"}, []string{"RUN-011", "RUN-120"}}, []string{"local"},
			registerS(withTool(hpTool("local"), func(t *vectorfmt.HostTool) { t.Stream = stream })).err("InvalidPolicy")),
		reg(meta{"zero calls, attempts, input bytes or output bytes are InvalidPolicy, checked before the duplicate name", []string{"Registration"}, []string{"RUN-011", "RUN-012"}}, []string{"remote"},
			registerS(withTool(extTool("remote"), func(t *vectorfmt.HostTool) { t.MaxCalls = 0 })).err("InvalidPolicy"),
			registerS(withTool(extTool("remote"), func(t *vectorfmt.HostTool) { t.MaxAttempts = 0 })).err("InvalidPolicy"),
			registerS(withTool(extTool("remote"), func(t *vectorfmt.HostTool) { t.MaxInputBytes = 0 })).err("InvalidPolicy"),
			registerS(withTool(extTool("remote"), func(t *vectorfmt.HostTool) { t.MaxOutputBytes = 0 })).err("InvalidPolicy"),
			registerS(extTool("remote")).err("Duplicate")),
		reg(meta{"a stream policy with a zero limit or a per-chunk limit above the aggregate is InvalidPolicy; a failed registration leaves the name free", []string{"Registration"}, []string{"RUN-012", "RUN-018"}}, []string{"local"},
			registerS(withTool(extTool("feed"), func(t *vectorfmt.HostTool) {
				t.Stream = &vectorfmt.HostStream{MaxChunks: 0, MaxChunkBytes: 8, MaxTotalBytes: 12, MaxEmittedBytes: 10}
			})).err("InvalidPolicy"),
			registerS(withTool(extTool("feed"), func(t *vectorfmt.HostTool) {
				t.Stream = &vectorfmt.HostStream{MaxChunks: 3, MaxChunkBytes: 13, MaxTotalBytes: 12, MaxEmittedBytes: 10}
			})).err("InvalidPolicy"),
			registerS(withTool(extTool("feed"), func(t *vectorfmt.HostTool) {
				t.Stream = &vectorfmt.HostStream{MaxChunks: 3, MaxChunkBytes: 12, MaxTotalBytes: 12, MaxEmittedBytes: 10}
			})),
			registerS(extTool("feed")).err("Duplicate")),
		reg(meta{"a description over 4,096 bytes is InvalidMetadata before the duplicate name and after the policy; 4,096 bytes are accepted", []string{"Registration"}, []string{"RUN-011", "RUN-013", "RUN-018"}}, []string{"remote"},
			registerS(withTool(extTool("remote"), func(t *vectorfmt.HostTool) { t.Description = string(long) })).err("InvalidMetadata"),
			registerS(withTool(extTool("remote"), func(t *vectorfmt.HostTool) { t.Description, t.MaxCalls = string(long), 0 })).err("InvalidPolicy"),
			registerS(withTool(extTool("notes"), func(t *vectorfmt.HostTool) { t.Description = string(long[:4096]) }))),
		reg(meta{"a schema on a text tool or a schema that is not an object is InvalidMetadata; a descriptive schema on a JSON tool is accepted", []string{"Registration"}, []string{"RUN-013", "RUN-016", "RUN-018"}}, []string{"local"},
			registerS(withTool(extTool("plain"), func(t *vectorfmt.HostTool) { t.MetadataSchema = `{"type":"object"}` })).err("InvalidMetadata"),
			registerS(withTool(extTool("listed"), func(t *vectorfmt.HostTool) { t.Format, t.MetadataSchema = "json", `[1]` })).err("InvalidMetadata"),
			registerS(withTool(extTool("plain"), func(t *vectorfmt.HostTool) { t.Format, t.MetadataSchema = "json", `{"type":"object"}` }))),
		{hostCase: hostCase{meta: meta{"an invalid name and a duplicate name are reported before the catalog tool limit", []string{"Registration"}, []string{"RUN-011", "RUN-012", "RUN-014"}}, tools: []string{"local"},
			steps: []hs{registerS(extTool("bad name")).err("InvalidName"), registerS(hpTool("local")).err("Duplicate"),
				registerS(extTool("extra")).err("CatalogToolLimitExceeded"), registerS(hpTool("extra")).err("CatalogToolLimitExceeded")}}, maxTools: 1},
		// Two descriptors of extTool with two-letter names serialize to a 335-byte catalog
		// (166 bytes each, a comma and the brackets); a third would exceed it.
		{hostCase: hostCase{meta: meta{"a catalog that reaches the byte limit exactly is accepted; one that would exceed it is refused, repeatedly", []string{"Registration"}, []string{"RUN-014", "RUN-017", "RUN-018"}}, tools: []string{},
			steps: []hs{registerS(extTool("aa")), registerS(extTool("bb")), registerS(extTool("cc")).err("CatalogByteLimitExceeded"),
				registerS(extTool("cc")).err("CatalogByteLimitExceeded"), registerS(extTool("aa")).err("Duplicate")}}, maxCatalogBytes: 335},
		reg(meta{"while a lease is active every registration is ActiveCapabilityLease, before the policy checks; after deactivation registration works again", []string{"Registration", "Lease"}, []string{"RUN-011", "RUN-036"}}, []string{"local"},
			issueLeaseS(grant("local", 1)), step(vectorfmt.HostOpActivateLease),
			registerS(withTool(hpTool("local"), func(t *vectorfmt.HostTool) { t.Stream = stream })).err("ActiveCapabilityLease"),
			registerS(extTool("later")).err("ActiveCapabilityLease"),
			step(vectorfmt.HostOpDeactivateLease),
			registerS(withTool(hpTool("local"), func(t *vectorfmt.HostTool) { t.Stream = stream })).err("InvalidPolicy"),
			registerS(extTool("later"))),
	}
}

func auditRingRows() []hostRow {
	row := func(m meta, steps ...hs) hostRow {
		return hostRow{hostCase: hostCase{meta: m, tools: []string{"local"}, steps: steps}}
	}
	return []hostRow{
		row(meta{"a full ring evicts its oldest record and counts it; export refuses cursor 0, an evicted cursor and one past the next sequence", []string{"AuditRing"}, []string{"RUN-153", "RUN-154", "RUN-152"}},
			auditCapS(2, 0),
			startS("local", "a", 1).st("host_pump"), startS("local", "b", 2).st("host_pump"), startS("local", "c", 3).st("host_pump"),
			// Record 1 is evicted as soon as record 3 is written.
			pumpS(5).settles(okSettle(1, false, "echo:a"), okSettle(2, false, "echo:b"), okSettle(3, false, "echo:c")).au(allowedEcho(2, 1), allowedEcho(3, 2)),
			exportRefusedS(0, "InvalidCursor", 0, 1),
			exportRefusedS(1, "Evicted", 2, 1),
			exportS(2, 4, 1, allowedEcho(2, 1), allowedEcho(3, 2)),
			exportS(3, 4, 1, allowedEcho(3, 2)),
			exportS(4, 4, 1),
			exportRefusedS(5, "Ahead", 4, 1)),
		row(meta{"shrinking the capacity evicts at once; growing it keeps the retained records", []string{"AuditRing"}, []string{"RUN-153", "RUN-154"}},
			startS("local", "a", 1).st("host_pump"), startS("local", "b", 2).st("host_pump"), startS("local", "c", 3).st("host_pump"),
			pumpS(5).settles(okSettle(1, false, "echo:a"), okSettle(2, false, "echo:b"), okSettle(3, false, "echo:c")).au(allowedEcho(1, 0), allowedEcho(2, 1), allowedEcho(3, 2)),
			auditCapS(1, 2),
			exportS(3, 4, 2, allowedEcho(3, 2)),
			exportRefusedS(2, "Evicted", 3, 2),
			auditCapS(8192, 2),
			startS("local", "d", 4).st("host_pump"),
			pumpS(5).settles(okSettle(4, false, "echo:d")).au(allowedEcho(4, 3)),
			exportS(3, 5, 2, allowedEcho(3, 2), allowedEcho(4, 3))),
		row(meta{"a capacity of 0 or above 8,192 is refused; clearing empties the ring, resets the dropped count and moves the first cursor to the next sequence", []string{"AuditRing"}, []string{"RUN-153", "RUN-154", "RUN-152"}},
			auditCapS(0, 0).err("InvalidLimits"),
			auditCapS(8193, 0).err("InvalidLimits"),
			auditCapS(1, 0),
			startS("local", "a", 1).st("host_pump"), startS("local", "b", 2).st("host_pump"),
			pumpS(5).settles(okSettle(1, false, "echo:a"), okSettle(2, false, "echo:b")).au(allowedEcho(2, 1)),
			exportS(2, 3, 1, allowedEcho(2, 1)),
			clearAuditS(),
			exportS(3, 3, 0),
			exportRefusedS(2, "Evicted", 3, 0),
			startS("local", "c", 3).st("host_pump"),
			pumpS(5).settles(okSettle(3, false, "echo:c")).au(allowedEcho(3, 2)),
			exportS(3, 4, 0, allowedEcho(3, 2))),
	}
}

func leaseRows() []hostRow {
	row := func(m meta, tools []string, steps ...hs) hostRow {
		return hostRow{hostCase: hostCase{meta: m, tools: tools, steps: steps}}
	}
	return []hostRow{
		row(meta{"under an active lease a tool outside it is denied and the lease's call budget is enforced; only admitted calls count; deactivation lifts it", []string{"Lease", "Reservation"}, []string{"RUN-035", "RUN-030", "RUN-033", "RUN-004"}}, []string{"remote", "timed"},
			issueLeaseS(grant("remote", 2)), step(vectorfmt.HostOpActivateLease),
			startDenied("timed", "x", "Denied", "timed is not granted by the active capability lease").au(ev(1, 0, "timed", 1, 0, "denied")),
			startS("remote", "a", 2).st("queued"), startS("remote", "b", 3).st("queued"),
			startDenied("remote", "c", "Denied", "remote exhausted its capability lease call budget of 2").au(ev(2, 3, "remote", 1, 0, "denied")),
			step(vectorfmt.HostOpDeactivateLease),
			startS("remote", "d", 5).st("queued"),
			claimNextS(invOf(2, "remote", "a", 1, 1, 1)),
			claimNextS(invOf(3, "remote", "b", 2, 1, 2)),
			claimNextS(invOf(5, "remote", "d", 3, 1, 4))),
		row(meta{"a reservation denied before the lease check does not count against the lease, and the policy's call budget is checked before the lease's", []string{"Lease", "Reservation"}, []string{"RUN-035", "RUN-031"}}, []string{"once"},
			issueLeaseS(grant("once", 1)), step(vectorfmt.HostOpActivateLease),
			startDenied("once", "toolong", "Denied", "once input exceeds 4 bytes").au(ev(1, 0, "once", 7, 0, "denied")),
			startS("once", "ab", 2).st("queued"),
			startDenied("once", "ab", "Denied", "once exhausted its 1 call budget").au(ev(2, 2, "once", 2, 0, "denied"))),
		row(meta{"a lease is issued only for registered tools, each once, with a call limit between 1 and the policy's, and only while no lease is active", []string{"Lease"}, []string{"RUN-036"}}, []string{"once", "remote"},
			issueLeaseS(grant("nope", 1)).err("UnknownTool"),
			issueLeaseS(grant("remote", 1), grant("remote", 1)).err("DuplicateTool"),
			issueLeaseS(grant("remote", 0)).err("ZeroCallLimit"),
			issueLeaseS(grant("once", 2)).err("CallLimitExceedsPolicy"),
			issueLeaseS(grant("once", 1), grant("remote", 10)),
			step(vectorfmt.HostOpActivateLease),
			issueLeaseS(grant("remote", 1)).err("LeaseAlreadyActive")),
		row(meta{"a lease issued before the catalog changed cannot be activated; one issued afterwards can", []string{"Lease", "Registration"}, []string{"RUN-036", "RUN-035"}}, []string{"remote"},
			issueLeaseS(grant("remote", 1)),
			registerS(extTool("extra")),
			step(vectorfmt.HostOpActivateLease).err("CatalogChanged"),
			issueLeaseS(grant("remote", 1)),
			step(vectorfmt.HostOpActivateLease),
			startDenied("extra", "x", "Denied", "extra is not granted by the active capability lease").au(ev(1, 0, "extra", 1, 0, "denied"))),
	}
}

// evalS evaluates source in the scenario's script session.
func evalS(source string) hs { return hs{Op: vectorfmt.HostOpEval, Source: source} }

// evaluated sets the outcome of the run a step ran or resumed; diagnostics leave the position
// open.
func (s hs) evaluated(status, kind, value string, diags ...string) hs {
	if diags == nil {
		diags = []string{}
	}
	s.Expect.Evaluation = &vectorfmt.HostEvaluation{Status: status, ValueKind: kind, Value: value, Diagnostics: diags}
	return s
}

// scriptRows drive the runtime from script source through the script adapter (RUN-190,
// RUN-055).
func scriptRows() []hostRow {
	return []hostRow{
		{hostCase: hostCase{meta: meta{"script methods reach the runtime: a synchronous call, a refusal raised with the tool error's rendering, and a deferred start whose settlement resumes the awaiting evaluation",
			[]string{"Await"}, []string{"RUN-190", "RUN-055", "RUN-031", "RUN-032"}}, tools: []string{"local", "remote"},
			steps: []hs{
				evalS("use mod.tool\ntool.call(\"local\", \"hi\")").evaluated("completed", "string", `"echo:hi"`).au(ev(1, 0, "local", 2, 7, "allowed")),
				evalS("use mod.tool\ntool.call(\"remote\", \"x\")").evaluated("failed", "error", "",
					"inline.splash:?: tool call denied: remote is available only through tool.start (mod.tool)").au(ev(2, 1, "remote", 1, 0, "denied")),
				evalS("use mod.tool\nlet p = tool.start(\"remote\", \"in\")\np.await() + \"!\"").evaluated("suspended", "nil", "null"),
				claimS(1, invOf(1, "remote", "in", 1, 1, 2)).st("claimed"),
				completeS(1, "ok").settles(okSettle(1, true, "ok")).au(ev(3, 2, "remote", 2, 2, "allowed")).evaluated("completed", "string", `"ok!"`).st("ready"),
			}}},
		{hostCase: hostCase{meta: meta{"a lease activated for an evaluation stays active while it is suspended and is cleared when it ends, and its promises are released for collection",
			[]string{"Await", "Lease", "GarbageCollection"}, []string{"RUN-191", "RUN-054"}}, tools: []string{"local", "remote"},
			steps: []hs{
				issueLeaseS(grant("remote", 1)),
				withLease(evalS("use mod.tool\nlet p = tool.start(\"remote\", \"in\")\np.await()")).evaluated("suspended", "nil", "null"),
				registerS(extTool("later")).err("ActiveCapabilityLease"),
				gcS(0),
				claimS(1, invOf(1, "remote", "in", 1, 1, 0)),
				completeS(1, "ok").settles(okSettle(1, true, "ok")).au(ev(1, 0, "remote", 2, 2, "allowed")).evaluated("completed", "string", `"ok"`).st("ready"),
				registerS(extTool("later")),
				gcS(1),
			}}},
	}
}

// withLease makes an eval step run under the last issued lease.
func withLease(s hs) hs { s.WithLease = true; return s }

// redactS installs a stream redactor ("mask" or "upper") on tool.
func redactS(tool, redactor string) hs {
	return hs{Op: vectorfmt.HostOpSetRedactor, Tool: tool, Redactor: redactor}
}

// auditS checks one audit record for durable telemetry.
func auditS(e vectorfmt.HostAuditEvent) hs {
	return hs{Op: vectorfmt.HostOpValidateAuditEvent, AuditEvent: &e}
}

// telemetryRows check the shape durable telemetry accepts (RUN-155): each scenario's first
// refusal is its error, so each refusal has its own scenario after the accepted forms.
func telemetryRows() []hostRow {
	row := func(comment string, steps ...hs) hostRow {
		return hostRow{hostCase: hostCase{meta: meta{comment, []string{"AuditRing"}, []string{"RUN-155"}}, tools: []string{}, steps: steps}}
	}
	maxSeq := uint64(18446744073709551615)
	digest := strings.Repeat("ab", 32)
	return []hostRow{
		row("durable telemetry accepts records of every outcome in their shape",
			auditS(ev(1, 0, "remote", 3, 2, "allowed")), auditS(ev(2, 0, "remote", 3, 0, "denied")),
			auditS(ev(3, 1, "remote", 3, 4, "streamed")), auditS(evRetry(4, 1, "remote", 3, "rate_limited")),
			auditS(ev(maxSeq-1, 2, "unrecognized:"+digest, 0, 0, "failed"))),
		row("event sequence 0 is refused", auditS(ev(0, 0, "remote", 1, 0, "denied")).err("InvalidEventSequence")),
		row("event sequence 2^64-1 is refused", auditS(ev(maxSeq, 0, "remote", 1, 0, "denied")).err("InvalidEventSequence")),
		row("a tool label that is neither a name nor unrecognized: and 64 hex digits is refused",
			auditS(ev(1, 0, "Bad Tool", 1, 0, "denied")).err("InvalidTool"),
			auditS(ev(1, 0, "unrecognized:"+digest[:62], 1, 0, "denied")).err("InvalidTool")),
		row("retry_scheduled without a retry class is refused", auditS(ev(1, 0, "remote", 1, 0, "retry_scheduled")).err("RetryClassRequired")),
		row("a retry class on another outcome is refused",
			auditS(vectorfmt.HostAuditEvent{EventSequence: 1, Tool: "remote", InputBytes: 1, Outcome: "failed", RetryClass: "transient"}).err("RetryClassUnexpected")),
		row("output bytes on an outcome other than allowed and streamed are refused", auditS(ev(1, 0, "remote", 1, 5, "denied")).err("UnexpectedOutputBytes")),
	}
}

// nonceS makes a host-supplied session nonce of n bytes; refused, it names the bound broken.
func nonceS(n int) hs {
	return hs{Op: vectorfmt.HostOpSessionNonce, Input: sp(strings.Repeat("5a", n))}
}

func (s hs) nonceRefused(kind string, actual, limit int) hs {
	s.Expect.Error, s.Expect.ActualBytes, s.Expect.LimitBytes = kind, ip(actual), ip(limit)
	return s
}

// nonceRows check the bounds of a host-supplied session nonce (RUN-002).
func nonceRows() []hostRow {
	row := func(comment string, steps ...hs) hostRow {
		return hostRow{hostCase: hostCase{meta: meta{comment, []string{"IdempotencyKey", "Boundary"}, []string{"RUN-002"}}, tools: []string{}, steps: steps}}
	}
	return []hostRow{
		row("host nonces of 16 and 64 bytes are accepted", nonceS(16), nonceS(64)),
		row("a host nonce of 15 bytes is too short, naming its length and the minimum", nonceS(15).nonceRefused("TooShort", 15, 16)),
		row("a host nonce of 65 bytes is too long, naming its length and the maximum", nonceS(65).nonceRefused("TooLong", 65, 64)),
	}
}

// contractBoundRows judge a contract's numeric bounds on the decimal digits (RUN-022) through
// script starts that are admitted or denied; the tool "bounded" takes an integer n of at most
// 2^53 and a number x of at least 0.1.
func contractBoundRows() []hostRow {
	try := func(input string) string {
		return "use mod.tool\ntry { tool.start(\"bounded\", \"" + strings.ReplaceAll(input, `"`, `\"`) + "\"); \"admitted\"; } catch \"denied\""
	}
	admitted := func(input string) hs { return evalS(try(input)).evaluated("completed", "string", `"admitted"`) }
	denied := func(input string, seq, q uint64) hs {
		return evalS(try(input)).evaluated("completed", "string", `"denied"`).au(ev(seq, q, "bounded", len(input), 0, "denied"))
	}
	return []hostRow{{hostCase: hostCase{meta: meta{"numeric bounds compare the decimal digits, never binary64 values, and an integer schema takes 1.0",
		[]string{"Reservation"}, []string{"RUN-022", "RUN-190"}}, tools: []string{"bounded"},
		steps: []hs{
			admitted(`{"n":9007199254740992}`),
			denied(`{"n":9007199254740993}`, 1, 1),
			admitted(`{"n":1.0}`),
			denied(`{"n":1.5}`, 2, 3),
			admitted(`{"x":0.1}`),
			denied(`{"x":0.0999999999999999999}`, 3, 5),
			admitted(`{"x":0.10000000000000001}`),
		}}}}
}
