package transport_test

import (
	"io"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
)

const toolDurable = "work.durable"

func durableManifest(t *testing.T) protocol.CapabilityManifest {
	t.Helper()
	g := grant(toolDurable, protocol.FormatJSON, 4)
	g.MaxCompensations = 2
	m, err := protocol.NewCapabilityManifest(testSession, []protocol.CapabilityGrant{g})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func jsonPayload(t *testing.T, text string) protocol.ToolPayload {
	t.Helper()
	v, err := canonjson.ParseValue([]byte(text), canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	return protocol.JSONPayload(v)
}

func dispatchRequest(t *testing.T, requestID, tool string) protocol.OperationDispatchRequest {
	t.Helper()
	r, err := protocol.NewOperationDispatchRequest(testSession, requestID, tool, "op-1", jsonPayload(t, `{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func operationResult(t *testing.T, requestID string, status protocol.OperationStatus) protocol.OperationReconcileResult {
	t.Helper()
	r, err := protocol.NewOperationReconcileResult(testSession, requestID, toolDurable, "op-1", status)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func operationFixture(t *testing.T) (*transport.OperationTransport, *fakeChannel, *protocol.Authenticator) {
	t.Helper()
	host, worker := authPair(t, testSession)
	ch := &fakeChannel{}
	m := durableManifest(t)
	if err := transport.SendOpenSession(host, ch, m); err != nil {
		t.Fatal(err)
	}
	if _, err := worker.OpenFrame(ch.sent[0]); err != nil {
		t.Fatal(err)
	}
	ch.sent = nil
	tr, err := transport.NewOperationTransport(m, host, ch)
	if err != nil {
		t.Fatal(err)
	}
	if tr.State() != transport.OperationReady || tr.Consumed() || tr.Poisoned() {
		t.Fatalf("fresh transport in %s", tr.State())
	}
	return tr, ch, worker
}

// Spec: TRN-020
// Construction checks the role, then the session, then the manifest.
func TestOperationTransportConstruction(t *testing.T) {
	host, worker := authPair(t, testSession)
	bad := durableManifest(t)
	bad.Grants = append(bad.Grants, bad.Grants[0]) // a duplicate grant
	_, err := transport.NewOperationTransport(bad, worker, &fakeChannel{})
	wantKind(t, err, transport.ErrRequiresHostAuthenticator)
	other, _ := authPair(t, "session-2")
	_, err = transport.NewOperationTransport(bad, other, &fakeChannel{})
	wantKind(t, err, transport.ErrSessionMismatch)
	_, err = transport.NewOperationTransport(bad, host, &fakeChannel{})
	wantKind(t, err, transport.ErrProtocol)
	wantProtocolKind(t, err, protocol.ErrDuplicateGrant)
}

// Spec: TRN-113, TRN-022
// Ready → Completed: each of the two exchanges the transport seals returns the validated
// answer, after which every exchange is Consumed and sends nothing.
func TestOperationTransportCompletes(t *testing.T) {
	succeeded := protocol.Succeeded(jsonPayload(t, `{"done":true}`))
	exchanges := map[string]func(t *testing.T, tr *transport.OperationTransport, ch *fakeChannel, w *protocol.Authenticator) error{
		"dispatch": func(t *testing.T, tr *transport.OperationTransport, ch *fakeChannel, w *protocol.Authenticator) error {
			f, _ := seal(t, w, protocol.OperationResultMessage{Result: operationResult(t, "r1", succeeded)})
			ch.reply(f)
			res, err := tr.DispatchOperation(dispatchRequest(t, "r1", toolDurable))
			if err == nil && !res.Status.Equal(succeeded) {
				t.Fatalf("status %+v", res.Status)
			}
			return err
		},
		"reconcile": func(t *testing.T, tr *transport.OperationTransport, ch *fakeChannel, w *protocol.Authenticator) error {
			f, _ := seal(t, w, protocol.ReconciledOperationMessage{Result: operationResult(t, "r1", protocol.Running())})
			ch.reply(f)
			req, _ := protocol.NewOperationReconcileRequest(testSession, "r1", toolDurable, "op-1")
			_, err := tr.ReconcileOperation(req)
			return err
		},
	}
	for name, run := range exchanges {
		t.Run(name, func(t *testing.T) {
			tr, ch, worker := operationFixture(t)
			if err := run(t, tr, ch, worker); err != nil {
				t.Fatal(err)
			}
			if len(ch.sent) != 1 {
				t.Fatalf("sent %d frames", len(ch.sent))
			}
			if _, err := worker.OpenFrame(ch.sent[0]); err != nil {
				t.Fatal(err)
			}
			if tr.State() != transport.OperationCompleted || !tr.Consumed() || tr.Poisoned() {
				t.Fatalf("state %s", tr.State())
			}
			_, err := tr.DispatchOperation(dispatchRequest(t, "r2", toolDurable))
			wantKind(t, err, transport.ErrConsumed)
			req, _ := protocol.NewOperationReconcileRequest(testSession, "r3", toolDurable, "op-1")
			_, err = tr.ReconcileOperation(req)
			wantKind(t, err, transport.ErrConsumed)
			if len(ch.sent) != 1 {
				t.Fatal("a consumed transport sent a frame")
			}
		})
	}
}

// Spec: TRN-113, TRN-023
// Ready → Poisoned: host authorization, the channel, an answer of another kind and a failed
// validation each poison; so does Discard. A poisoned transport sends nothing.
func TestOperationTransportPoisoning(t *testing.T) {
	cases := map[string]struct {
		setup   func(t *testing.T, ch *fakeChannel, w *protocol.Authenticator)
		request protocol.OperationDispatchRequest
		kind    transport.ErrorKind
		inner   protocol.ErrorKind
		sent    int
	}{
		"host authorization": {func(*testing.T, *fakeChannel, *protocol.Authenticator) {},
			dispatchRequest(t, "r1", "not.granted"), transport.ErrProtocol, protocol.ErrUnknownTool, 0},
		"channel": {func(_ *testing.T, ch *fakeChannel, _ *protocol.Authenticator) {
			ch.sendErr = &jsonline.Error{Kind: jsonline.ErrIO, Err: io.ErrClosedPipe}
		}, dispatchRequest(t, "r1", toolDurable), transport.ErrChannel, 0, 0},
		"answer kind": {func(t *testing.T, ch *fakeChannel, w *protocol.Authenticator) {
			f, _ := seal(t, w, protocol.ReconciledOperationMessage{Result: operationResult(t, "r1", protocol.Running())})
			ch.reply(f)
		}, dispatchRequest(t, "r1", toolDurable), transport.ErrUnexpectedResponse, 0, 1},
		"validation": {func(t *testing.T, ch *fakeChannel, w *protocol.Authenticator) {
			f, _ := seal(t, w, protocol.OperationResultMessage{Result: operationResult(t, "r9", protocol.Running())})
			ch.reply(f)
		}, dispatchRequest(t, "r1", toolDurable), transport.ErrProtocol, protocol.ErrOperationResultMismatch, 1},
		"open": {func(t *testing.T, ch *fakeChannel, w *protocol.Authenticator) {
			f, _ := seal(t, w, protocol.OperationResultMessage{Result: operationResult(t, "r1", protocol.Running())})
			f.Sequence = 2
			ch.reply(f)
		}, dispatchRequest(t, "r1", toolDurable), transport.ErrProtocol, protocol.ErrInvalidAuthenticationTag, 1},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			tr, ch, worker := operationFixture(t)
			c.setup(t, ch, worker)
			_, err := tr.DispatchOperation(c.request)
			wantKind(t, err, c.kind)
			if c.inner != 0 {
				wantProtocolKind(t, err, c.inner)
			}
			if !tr.Poisoned() || !tr.Consumed() || len(ch.sent) != c.sent {
				t.Fatalf("state %s, sent %d", tr.State(), len(ch.sent))
			}
			ch.sendErr = nil
			_, err = tr.DispatchOperation(dispatchRequest(t, "r2", toolDurable))
			wantKind(t, err, transport.ErrPoisoned)
			if len(ch.sent) != c.sent {
				t.Fatal("a poisoned transport sent a frame")
			}
		})
	}
	t.Run("discard", func(t *testing.T) {
		tr, ch, _ := operationFixture(t)
		tr.Discard()
		_, err := tr.DispatchOperation(dispatchRequest(t, "r1", toolDurable))
		wantKind(t, err, transport.ErrPoisoned)
		if len(ch.sent) != 0 || tr.State() != transport.OperationPoisoned {
			t.Fatal("discard did not poison")
		}
	})
}
