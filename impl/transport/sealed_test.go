package transport_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
)

// sealedFixture opens the durable manifest's session over a Channel whose worker side answers
// with answer, and returns the transport, the bytes the host wrote after open_session, and the
// host authenticator.
func sealedFixture(t *testing.T, answer []byte) (*transport.OperationTransport, *bytes.Buffer, *protocol.Authenticator) {
	t.Helper()
	host, _ := authPair(t, testSession)
	sent := &bytes.Buffer{}
	ch := transport.NewChannel(bytes.NewReader(answer), sent, canonjson.Preserve)
	m := durableManifest(t)
	if err := transport.SendOpenSession(host, ch, m); err != nil {
		t.Fatal(err)
	}
	sent.Reset()
	tr, err := transport.NewOperationTransport(m, host, ch)
	if err != nil {
		t.Fatal(err)
	}
	return tr, sent, host
}

// Spec: TRN-098, TRN-099
// A pre-sealed dispatch line goes out byte for byte, the worker's answer line comes back as it
// was received, and the host opens it itself. The transport is then consumed.
func TestOperationTransportExchangeSealed(t *testing.T) {
	_, worker := authPair(t, testSession)
	_, answer := seal(t, worker, protocol.OperationResultMessage{Result: operationResult(t, "request-1", protocol.Running())})
	tr, sent, host := sealedFixture(t, append(append([]byte(nil), answer...), '\n'))
	_, line := seal(t, host, protocol.DispatchOperationMessage{Request: dispatchRequest(t, "request-1", toolDurable)})
	got, err := tr.ExchangeSealed(line)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, answer) {
		t.Fatalf("answer line %q, want %q", got, answer)
	}
	if want := string(line) + "\n"; sent.String() != want {
		t.Fatalf("sent %q, want %q", sent.String(), want)
	}
	f, err := host.Open(got)
	if err != nil {
		t.Fatal(err)
	}
	if res, ok := f.Message.(protocol.OperationResultMessage); !ok || res.Result.RequestID != "request-1" {
		t.Fatalf("opened %+v", f.Message)
	}
	if tr.State() != transport.OperationCompleted || tr.Poisoned() {
		t.Fatalf("after the exchange: %s", tr.State())
	}
	_, err = tr.ExchangeSealed(line)
	wantKind(t, err, transport.ErrConsumed)
	if tr.State() != transport.OperationCompleted {
		t.Fatalf("a refused second exchange changed the state to %s", tr.State())
	}
}

// Spec: TRN-099, TRN-100
// A line that is not an authorized durable request of the transport's session is refused
// before anything is sent, and poisons the transport.
func TestOperationTransportExchangeSealedRefusals(t *testing.T) {
	other, _ := authPair(t, "session-2")
	otherReq, err := protocol.NewOperationDispatchRequest("session-2", "request-1", toolDurable, "op-1", jsonPayload(t, `{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	_, foreign := seal(t, other, protocol.DispatchOperationMessage{Request: otherReq})
	cases := []struct {
		name string
		line func(host *protocol.Authenticator) []byte
		kind transport.ErrorKind
	}{
		{"not-a-frame", func(*protocol.Authenticator) []byte { return []byte(`{"sequence":0}`) }, transport.ErrProtocol},
		{"other-session", func(*protocol.Authenticator) []byte { return foreign }, transport.ErrSessionMismatch},
		{"invoke", func(h *protocol.Authenticator) []byte {
			inv, err := protocol.NewToolInvocation(testSession, "request-1", toolDurable, jsonPayload(t, `{}`))
			if err != nil {
				t.Fatal(err)
			}
			_, l := seal(t, h, protocol.InvokeMessage{Invocation: inv})
			return l
		}, transport.ErrNotOperationRequest},
		{"tool-not-granted", func(h *protocol.Authenticator) []byte {
			_, l := seal(t, h, protocol.DispatchOperationMessage{Request: dispatchRequest(t, "request-1", "work.other")})
			return l
		}, transport.ErrProtocol},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, sent, host := sealedFixture(t, nil)
			_, err := tr.ExchangeSealed(c.line(host))
			wantKind(t, err, c.kind)
			if sent.Len() != 0 {
				t.Fatalf("a refused line was sent: %q", sent.String())
			}
			if !tr.Poisoned() {
				t.Fatal("a refused line did not poison the transport")
			}
			_, err = tr.ExchangeSealed(nil)
			wantKind(t, err, transport.ErrPoisoned)
		})
	}
	var e *transport.Error
	tr, _, host := sealedFixture(t, nil)
	inv, _ := protocol.NewToolInvocation(testSession, "request-1", toolDurable, jsonPayload(t, `{}`))
	_, l := seal(t, host, protocol.InvokeMessage{Invocation: inv})
	if _, err := tr.ExchangeSealed(l); !errors.As(err, &e) || e.Detail != string(protocol.TypeInvoke) ||
		!strings.HasSuffix(err.Error(), ": invoke") {
		t.Fatalf("error %v", err)
	}
}

// Spec: TRN-098, TRN-100
// An answer line over 1 MiB is refused by the channel before it is decoded, an answer that
// ends early is a channel failure, and a channel that cannot move lines is refused; each
// poisons the transport.
func TestOperationTransportExchangeSealedChannelFailures(t *testing.T) {
	for _, c := range []struct {
		name   string
		answer []byte
		want   jsonline.ErrorKind
	}{
		{"oversized", bytes.Repeat([]byte("a"), protocol.MaxWireFrameBytes+1), jsonline.ErrProtocol},
		{"end-of-stream", []byte(`{"sequence":0`), jsonline.ErrUnexpectedEndOfStream},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, _, host := sealedFixture(t, c.answer)
			_, line := seal(t, host, protocol.DispatchOperationMessage{Request: dispatchRequest(t, "request-1", toolDurable)})
			_, err := tr.ExchangeSealed(line)
			var le *jsonline.Error
			if !errors.Is(err, transport.ErrChannel) || !errors.As(err, &le) || le.Kind != c.want {
				t.Fatalf("error %v, want channel failure %v", err, c.want)
			}
			if c.want == jsonline.ErrProtocol {
				wantProtocolKind(t, err, protocol.ErrWireFrameTooLarge)
			}
			if !tr.Poisoned() {
				t.Fatal("not poisoned")
			}
		})
	}
	tr, ch, _ := operationFixture(t)
	_, err := tr.ExchangeSealed([]byte("{}"))
	wantKind(t, err, transport.ErrLineChannelRequired)
	if len(ch.sent) != 0 || !tr.Poisoned() {
		t.Fatalf("sent %d frames, poisoned %v", len(ch.sent), tr.Poisoned())
	}
}
