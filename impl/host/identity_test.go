package host

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/protocol"
	"lukechampine.com/blake3"
)

// hashParts hashes the concatenation of parts with an incremental hasher (independent of the
// single-buffer code path of the implementation).
func hashParts(parts ...[]byte) string {
	h := blake3.New(32, nil)
	for _, p := range parts {
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func be64(x uint64) []byte { return binary.BigEndian.AppendUint64(nil, x) }

func lp(b []byte) []byte { return append(be64(uint64(len(b))), b...) }

// expectedNonceLabel is RUN-003 written out from the specification.
func expectedNonceLabel(session uint64, nonce []byte) string {
	return hashParts([]byte("splash-capability-session-nonce-v1"), be64(session), be64(uint64(len(nonce))), nonce)
}

// Spec: RUN-001
func TestSessionCounterGivesEachRuntimeTheNextValue(t *testing.T) {
	a, err := New(Config{})
	wantNoError(t, err)
	b, err := New(Config{})
	wantNoError(t, err)
	if a.SessionID() == 0 || b.SessionID() != a.SessionID()+1 {
		t.Fatalf("sessions %d then %d, want consecutive from at least 1", a.SessionID(), b.SessionID())
	}
	pinned, _ := newTestRuntime(t, Config{SessionID: 42})
	if pinned.SessionID() != 42 {
		t.Fatalf("pinned session = %d", pinned.SessionID())
	}
}

// Spec: RUN-002
func TestSessionNonceBounds(t *testing.T) {
	for _, n := range []int{0, 15, 65, 100} {
		_, err := NewSessionNonce(make([]byte, n))
		var ne *NonceError
		if !errors.As(err, &ne) || ne.Actual != n {
			t.Fatalf("%d bytes: error = %v", n, err)
		}
		if n < 16 {
			wantKind(t, err, ErrNonceTooShort)
			if err.Error() != fmt.Sprintf("capability session nonce is %d bytes; minimum is 16 bytes", n) {
				t.Fatalf("message = %q", err)
			}
		} else {
			wantKind(t, err, ErrNonceTooLong)
			if err.Error() != fmt.Sprintf("capability session nonce is %d bytes; maximum is 64 bytes", n) {
				t.Fatalf("message = %q", err)
			}
		}
	}
	for _, n := range []int{16, 32, 64} {
		if _, err := NewSessionNonce(bytes.Repeat([]byte{'z'}, n)); err != nil {
			t.Fatalf("%d bytes rejected: %v", n, err)
		}
	}
	secret := []byte("secret-nonce-bytes-0123")
	nonce, err := NewSessionNonce(secret)
	wantNoError(t, err)
	for _, s := range []string{fmt.Sprint(nonce), fmt.Sprintf("%+v", nonce), fmt.Sprintf("%#v", nonce), fmt.Sprintf("%v", &nonce)} {
		if strings.Contains(s, "secret") || strings.Contains(s, hex.EncodeToString(secret)) {
			t.Fatalf("formatted nonce leaks its bytes: %q", s)
		}
	}
	// Mutating the caller's slice afterwards does not change the nonce.
	secret[0] = 'X'
	r, _ := newTestRuntime(t, Config{SessionNonce: &nonce, SessionID: 9})
	if r.nonceHex != expectedNonceLabel(9, []byte("secret-nonce-bytes-0123")) {
		t.Fatal("the nonce aliases the caller's slice")
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("no entropy") }

// Spec: RUN-002, RUN-003
func TestEntropyNonceIs32BytesFromTheSource(t *testing.T) {
	src := bytes.Repeat([]byte{0xA5}, 40)
	r, _ := newTestRuntime(t, Config{Entropy: bytes.NewReader(src), SessionID: 11})
	if want := expectedNonceLabel(11, src[:32]); r.nonceHex != want {
		t.Fatalf("label = %s, want %s", r.nonceHex, want)
	}
	short := bytes.NewReader(make([]byte, 31))
	r2, _ := newTestRuntime(t, Config{Entropy: short})
	if r2.HasSessionNonce() {
		t.Fatal("a 31-byte entropy source produced a nonce")
	}
}

// Spec: RUN-003, RUN-005
func TestIdempotencyKeyDerivation(t *testing.T) {
	r, _ := lifecycleRuntime(t)
	label := expectedNonceLabel(7, testNonceBytes)
	// q = 0: a denied synchronous call; q = 1: the start.
	if _, err := r.Call("remote", "x"); err == nil {
		t.Fatal("synchronous call of an external tool succeeded")
	}
	id, err := r.Start("remote", "x")
	wantNoError(t, err)
	inv, err := r.ClaimExternal(id)
	wantNoError(t, err)
	want := "splash-" + label + "-1"
	if inv.IdempotencyKey != want {
		t.Fatalf("key = %s, want %s", inv.IdempotencyKey, want)
	}
	if !protocol.IsToken(inv.IdempotencyKey) || len(inv.IdempotencyKey) != 7+64+2 {
		t.Fatalf("key %q is not a token of the expected length", inv.IdempotencyKey)
	}
	retry, err := r.RetryExternal(id, RetryRateLimited)
	wantNoError(t, err)
	if retry.IdempotencyKey != want {
		t.Fatalf("retry key = %s", retry.IdempotencyKey)
	}
}

// Spec: RUN-004
func TestReservationSequenceCountsEveryAttempt(t *testing.T) {
	r, _ := newTestRuntime(t, Config{MaxPendingTools: 1})
	remote := NewPolicy("remote")
	remote.MaxCalls = 5
	mustRegister(t, r.RegisterExternalTool(remote, Metadata{}))
	_, _ = r.Call("missing", "a")       // q0 denied: unknown tool
	_, _ = r.Call("remote", "bb")       // q1 denied: external through call
	id, err := r.Start("remote", "ccc") // q2 allowed
	wantNoError(t, err)
	_, _ = r.Start("remote", "dddd") // q3 denied: pending budget of 1
	if _, err := r.ClaimExternal(id); err != nil {
		t.Fatal(err)
	}
	_, _ = r.CompleteExternal(id, OK("out")) // writes q2 allowed
	r.ReleasePromise(id)
	r.CollectGarbage()
	r.nextID = ^uint64(0)
	_, _ = r.Start("remote", "eeeee") // q4 failed: ID space exhausted
	r.nextID = 10
	id2, err := r.Start("remote", "ffffff") // q5
	wantNoError(t, err)
	inv, _ := r.ClaimExternal(id2)
	if !strings.HasSuffix(inv.IdempotencyKey, "-5") {
		t.Fatalf("key = %s, want suffix -5", inv.IdempotencyKey)
	}
	wantAudit(t, evs(r.Audit()), []ev{
		{0, "missing", 1, 0, "denied", ""},
		{1, "remote", 2, 0, "denied", ""},
		{3, "remote", 4, 0, "denied", ""},
		{2, "remote", 3, 3, "allowed", ""},
		{4, "remote", 5, 0, "failed", ""},
	})
}

// Spec: RUN-006
func TestNoNonceRefusesExternalToolsOnly(t *testing.T) {
	r, _ := newTestRuntime(t, Config{Entropy: failingReader{}})
	if r.HasSessionNonce() {
		t.Fatal("a failing entropy source produced a nonce")
	}
	err := r.RegisterExternalTool(NewPolicy("remote"), Metadata{})
	wantKind(t, err, ErrNonceUnavailable)
	wantKind(t, r.RegisterExternalJSONTool(JSONPolicy("remote.json"), Metadata{}), ErrNonceUnavailable)
	mustRegister(t, r.RegisterTool(NewPolicy("local"), Metadata{}, echo))
	out, err := r.Call("local", "x")
	if err != nil || out != "echo:x" {
		t.Fatalf("local call = %q, %v", out, err)
	}
	// The local fallback key exists only inside host-pump records, which expose none.
	id, err := r.Start("local", "y")
	if err == nil {
		if info, _ := r.Operation(id); info.IdempotencyKey != "" {
			t.Fatalf("a host-pump operation exposes key %q", info.IdempotencyKey)
		}
	}
}

// Spec: RUN-007
func TestAuditLabels(t *testing.T) {
	r, _ := newTestRuntime(t, Config{})
	label := expectedNonceLabel(7, testNonceBytes)
	bad := "Bad Name"
	_, _ = r.Call(bad, "")
	_, _ = r.Call("not.registered", "")
	_, _ = r.Call(strings.Repeat("a", 129), "")
	want1 := "unrecognized:" + hashParts([]byte("splash-capability-audit-label-v1"), be64(7), []byte{1}, lp([]byte(label)), lp([]byte(bad)))
	want3 := "unrecognized:" + hashParts([]byte("splash-capability-audit-label-v1"), be64(7), []byte{1}, lp([]byte(label)), lp([]byte(strings.Repeat("a", 129))))
	got := r.Audit()
	if got[0].Tool != want1 || got[1].Tool != "not.registered" || got[2].Tool != want3 {
		t.Fatalf("labels = %q %q %q", got[0].Tool, got[1].Tool, got[2].Tool)
	}
	noNonce, _ := newTestRuntime(t, Config{Entropy: failingReader{}, SessionID: 8})
	_, _ = noNonce.Call(bad, "")
	want0 := "unrecognized:" + hashParts([]byte("splash-capability-audit-label-v1"), be64(8), []byte{0}, lp([]byte(bad)))
	if l := noNonce.Audit()[0].Tool; l != want0 {
		t.Fatalf("label without nonce = %q, want %q", l, want0)
	}
	for _, e := range append(got, noNonce.Audit()...) {
		if err := e.ValidateForTelemetry(); err != nil {
			t.Fatalf("%+v: %v", e, err)
		}
	}
}
