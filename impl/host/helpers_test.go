package host

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeClock is a manual clock for deadlines.
type fakeClock struct{ now time.Time }

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time          { return c.now }
func (c *fakeClock) Advance(d time.Duration) { c.now = c.now.Add(d) }

// testNonce is a fixed 16-byte host nonce: "0123456789abcdef".
var testNonceBytes = []byte("0123456789abcdef")

// newTestRuntime returns a runtime with a pinned session (S = 7), the fixed nonce and a fake
// clock.
func newTestRuntime(t testing.TB, cfg Config) (*Runtime, *fakeClock) {
	t.Helper()
	clock := newFakeClock()
	if cfg.Clock == nil {
		cfg.Clock = clock.Now
	}
	if cfg.SessionNonce == nil && cfg.Entropy == nil {
		n, err := NewSessionNonce(testNonceBytes)
		if err != nil {
			t.Fatal(err)
		}
		cfg.SessionNonce = &n
	}
	if cfg.SessionID == 0 {
		cfg.SessionID = 7
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r, clock
}

// echo is a host-pump text handler that returns "echo:" + input.
func echo(req ToolRequest) (string, error) { return "echo:" + req.Input, nil }

func mustRegister(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("register: %v", err)
	}
}

// lifecycleRuntime registers "local" (host-pump text, 100 calls), "remote" (external text, 100
// calls, 3 attempts, streaming) and "remote.json" (external JSON, 100 calls).
func lifecycleRuntime(t testing.TB) (*Runtime, *fakeClock) {
	t.Helper()
	r, clock := newTestRuntime(t, Config{})
	local := NewPolicy("local")
	local.MaxCalls = 100
	mustRegister(t, r.RegisterTool(local, Metadata{}, echo))
	remote := NewPolicy("remote").WithStream(StreamPolicy{MaxChunks: 4, MaxChunkBytes: 8, MaxTotalBytes: 16, MaxEmittedBytes: 16})
	remote.MaxCalls, remote.MaxAttempts = 100, 3
	mustRegister(t, r.RegisterExternalTool(remote, Metadata{}))
	rj := JSONPolicy("remote.json")
	rj.MaxCalls = 100
	mustRegister(t, r.RegisterExternalJSONTool(rj, Metadata{}))
	return r, clock
}

// lifecycle states a test can build, plus "unknown" for an ID that was never issued.
const stateUnknown State = 0

// opIn brings one operation to state s (HP on "local", the others on "remote") and returns its
// ID. stateUnknown returns an ID that was never issued.
func opIn(t testing.TB, r *Runtime, s State) OperationID {
	t.Helper()
	switch s {
	case stateUnknown:
		return 999_999
	case StateHostPump:
		id, err := r.Start("local", "in")
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	id, err := r.Start("remote", "in")
	if err != nil {
		t.Fatal(err)
	}
	if s == StateQueued {
		return id
	}
	if _, err := r.ClaimExternal(id); err != nil {
		t.Fatal(err)
	}
	switch s {
	case StateCancellationRequested:
		if _, err := r.RequestExternalCancellation(id); err != nil {
			t.Fatal(err)
		}
	case StateReady:
		if _, err := r.CompleteExternal(id, OK("done")); err != nil {
			t.Fatal(err)
		}
	}
	return id
}

func stateOf(r *Runtime, id OperationID) State {
	info, ok := r.Operation(id)
	if !ok {
		return stateUnknown
	}
	return info.State
}

func wantKind(t testing.TB, err error, kind error) {
	t.Helper()
	if err == nil {
		t.Fatalf("error = nil, want %v", kind)
	}
	if !errors.Is(err, kind) {
		t.Fatalf("error = %v, want kind %v", err, kind)
	}
}

func wantNoError(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

// ev is a compact audit expectation: sequence, tool, input bytes, output bytes, outcome.
type ev struct {
	Seq     uint64
	Tool    string
	In, Out int
	Outcome string
	Class   string
}

func evs(events []AuditEvent) []ev {
	out := make([]ev, len(events))
	for i, e := range events {
		out[i] = ev{e.Sequence, e.Tool, e.InputBytes, e.OutputBytes, e.Outcome.String(), ""}
		if e.RetryClass != 0 {
			out[i].Class = e.RetryClass.String()
		}
	}
	return out
}

// auditAfter returns the audit records written after the first n.
func auditAfter(r *Runtime, n int) []ev {
	all := evs(r.Audit())
	if n > len(all) {
		return nil
	}
	return all[n:]
}

func wantAudit(t testing.TB, got, want []ev) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("audit mismatch (-want +got):\n%s", d)
	}
}

func wantToolError(t testing.TB, err error, kind ToolErrorKind, msg string) {
	t.Helper()
	var te *ToolError
	if !errors.As(err, &te) {
		t.Fatalf("error = %v (%T), want *ToolError", err, err)
	}
	if te.Kind != kind || te.Message != msg {
		t.Fatalf("tool error = %v/%q, want %v/%q", te.Kind, te.Message, kind, msg)
	}
}
