package ledger

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/protocol"
	"lukechampine.com/blake3"
)

func hashParts(parts ...[]byte) string {
	h := blake3.New(32, nil)
	for _, p := range parts {
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func be64(x uint64) []byte { return binary.BigEndian.AppendUint64(nil, x) }

func lp(b []byte) []byte { return append(be64(uint64(len(b))), b...) }

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

func mustRegister(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("register: %v", err)
	}
}

// ledgerRuntime returns a runtime on a fixed clock with the tools the ledger tests use: the
// text tool "remote" and the JSON tool "remote.json", both external.
func ledgerRuntime(t testing.TB) *host.Runtime {
	t.Helper()
	nonce, err := host.NewSessionNonce([]byte("0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Unix(1_700_000_000, 0)
	r, err := host.New(host.Config{Clock: func() time.Time { return start }, SessionNonce: &nonce, SessionID: 7})
	if err != nil {
		t.Fatal(err)
	}
	local := host.NewPolicy("local")
	local.MaxCalls = 100
	mustRegister(t, r.RegisterTool(local, host.Metadata{}, func(req host.ToolRequest) (string, error) { return "echo:" + req.Input, nil }))
	remote := host.NewPolicy("remote").WithStream(host.StreamPolicy{MaxChunks: 4, MaxChunkBytes: 8, MaxTotalBytes: 16, MaxEmittedBytes: 16})
	remote.MaxCalls, remote.MaxAttempts = 100, 3
	mustRegister(t, r.RegisterExternalTool(remote, host.Metadata{}))
	rj := host.JSONPolicy("remote.json")
	rj.MaxCalls = 100
	mustRegister(t, r.RegisterExternalJSONTool(rj, host.Metadata{}))
	return r
}

// stateOf returns the runtime state of operation id (0 for an ID never issued).
func stateOf(r *host.Runtime, id host.OperationID) host.State {
	info, ok := r.Operation(id)
	if !ok {
		return 0
	}
	return info.State
}

func wantToolError(t testing.TB, err error, kind host.ToolErrorKind, msg string) {
	t.Helper()
	var te *host.ToolError
	if !errors.As(err, &te) {
		t.Fatalf("error = %v (%T), want *ToolError", err, err)
	}
	if te.Kind != kind || te.Message != msg {
		t.Fatalf("tool error = %v/%q, want %v/%q", te.Kind, te.Message, kind, msg)
	}
}

func authPair(t testing.TB, session string) (hostAuth, workerAuth *protocol.Authenticator) {
	t.Helper()
	key, err := protocol.NewSessionKey(bytes.Repeat([]byte{7}, 32))
	wantNoError(t, err)
	hostAuth, err = protocol.NewAuthenticator(session, key, protocol.RoleHost, canonjson.Preserve)
	wantNoError(t, err)
	workerAuth, err = protocol.NewAuthenticator(session, key, protocol.RoleWorker, canonjson.Preserve)
	wantNoError(t, err)
	return hostAuth, workerAuth
}

func jv(t testing.TB, s string) canonjson.Value {
	t.Helper()
	v, err := canonjson.ParseValue([]byte(s), canonjson.Preserve)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}
