package transport_test

import (
	"errors"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
)

// testDeadline bounds a synchronous exchange in tests that do not test deadlines.
const testDeadline = 10 * time.Second

const (
	testSession = "session-1"
	toolText    = "work.run"
	toolJSON    = "work.json"
)

// testKey is a fixed, public test key; it protects nothing.
func testKey(t testing.TB) *protocol.SessionKey {
	t.Helper()
	raw := make([]byte, protocol.SessionKeyBytes)
	for i := range raw {
		raw[i] = 97
	}
	k, err := protocol.NewSessionKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// authPair returns a host and a worker authenticator of one session over one key.
func authPair(t testing.TB, session string) (host, worker *protocol.Authenticator) {
	t.Helper()
	k := testKey(t)
	defer k.Close()
	h, err := protocol.NewAuthenticator(session, k, protocol.RoleHost, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	w, err := protocol.NewAuthenticator(session, k, protocol.RoleWorker, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	return h, w
}

// grant returns a grant of tool in format with calls calls and the default byte limits.
func grant(tool string, format protocol.EnvelopeFormat, calls uint32) protocol.CapabilityGrant {
	g := protocol.TextGrant(tool)
	if format == protocol.FormatJSON {
		g = protocol.JSONGrant(tool)
	}
	g.MaxCalls = calls
	return g
}

// testManifest returns the manifest of testSession granting toolText (text, 8 calls) and
// toolJSON (JSON, 8 calls).
func testManifest(t testing.TB) protocol.CapabilityManifest {
	t.Helper()
	m, err := protocol.NewCapabilityManifest(testSession, []protocol.CapabilityGrant{
		grant(toolText, protocol.FormatText, 8), grant(toolJSON, protocol.FormatJSON, 8),
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func textInvocation(t testing.TB, requestID, text string) protocol.ToolInvocation {
	t.Helper()
	inv, err := protocol.NewToolInvocation(testSession, requestID, toolText, protocol.TextPayload(text))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

func textResult(t testing.TB, requestID, text string) protocol.ResultMessage {
	t.Helper()
	r, err := protocol.NewToolResult(testSession, requestID, protocol.TextPayload(text))
	if err != nil {
		t.Fatal(err)
	}
	return protocol.ResultMessage{Result: r}
}

func cancellationResult(t testing.TB, cancellationID, requestID, tool string, o protocol.WorkerCancellationOutcome) protocol.CancellationResultMessage {
	t.Helper()
	req, err := protocol.NewWorkerCancellationRequest(testSession, cancellationID, requestID, tool)
	if err != nil {
		t.Fatal(err)
	}
	res, err := protocol.NewWorkerCancellationResult(req, o)
	if err != nil {
		t.Fatal(err)
	}
	return protocol.CancellationResultMessage{Result: res}
}

// seal seals m with a (a worker authenticator in most tests).
func seal(t testing.TB, a *protocol.Authenticator, m protocol.Message) (protocol.Frame, []byte) {
	t.Helper()
	f, line, err := a.Seal(m)
	if err != nil {
		t.Fatalf("seal %s: %v", m.Type(), err)
	}
	return f, line
}

// openAs opens a host line with the worker authenticator and requires message kind want.
func openAs(t testing.TB, w *protocol.Authenticator, line []byte, want protocol.MessageType) protocol.Message {
	t.Helper()
	f, err := w.Open(line)
	if err != nil {
		t.Fatalf("worker cannot open host line %q: %v", line, err)
	}
	if f.Message.Type() != want {
		t.Fatalf("host sent %s, want %s", f.Message.Type(), want)
	}
	return f.Message
}

// wantKind fails unless err's chain holds the transport kind k.
func wantKind(t testing.TB, err error, k transport.ErrorKind) {
	t.Helper()
	if !errors.Is(err, k) {
		t.Fatalf("error %v, want kind %s", err, k)
	}
}

// wantProtocolKind fails unless err's chain holds the protocol kind k.
func wantProtocolKind(t testing.TB, err error, k protocol.ErrorKind) {
	t.Helper()
	if !errors.Is(err, k) {
		t.Fatalf("error %v, want protocol kind %s", err, k)
	}
}
