package transport_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
	"github.com/splashv5/conform/impl/transport/inprocess"
)

// Spec: TRN-031
// The in-process transport authenticates the worker's answer with the host authenticator:
// after one dispatch the host has consumed the worker's sequence 1, so the worker's frame 2
// opens and a second copy of frame 1 does not.
func TestInProcessAnswerIsAuthenticated(t *testing.T) {
	host, s := inProcessFixture(t)
	tr, err := inprocess.New(host, s, &memoryPersister{})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := tr.Dispatch(profileInvocation(t, "r1", profile.ToolTextEcho, "hello"), testDeadline); err != nil || res.Payload.Text != "hello" {
		t.Fatalf("dispatch: %+v %v", res, err)
	}
	_, twin := authPair(t, testSession) // the same key, speaking as the worker
	msg := protocol.CloseSessionMessage{ProtocolVersion: protocol.ProtocolVersion, Session: testSession}
	_, first := seal(t, twin, msg)
	_, second := seal(t, twin, msg)
	if _, err := host.Open(first); err == nil {
		t.Fatal("the host still expected the worker's first frame: the answer was not opened")
	}
	if _, err := host.Open(second); err != nil {
		t.Fatalf("the worker's second frame: %v", err)
	}
}

// Spec: TRN-113
// A compensation crosses the one-shot transport only as a pre-sealed line: one the host
// authorizer accepts is sent byte for byte, one bound to another grant is refused before
// anything is sent.
func TestOperationTransportCarriesOnlyPreSealedCompensations(t *testing.T) {
	fp, err := durableManifest(t).Grants[0].CompensationFingerprint()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		fp   string
		sent bool
	}{{"granted", fp, true}, {"other-grant", strings.Repeat("0", 64), false}} {
		t.Run(c.name, func(t *testing.T) {
			b, err := protocol.NewOperationCompensationBinding(toolDurable, "op-1", "cmp-1", "tenant-a", c.fp)
			if err != nil {
				t.Fatal(err)
			}
			req, err := protocol.NewOperationCompensationRequest(testSession, "c1", b, jsonPayload(t, `{}`))
			if err != nil {
				t.Fatal(err)
			}
			_, worker := authPair(t, testSession)
			res, _ := protocol.NewOperationCompensationResult(testSession, "c1", b, protocol.Failed("no effect"))
			_, answer := seal(t, worker, protocol.CompensationResultMessage{Result: res})
			tr, sent, host := sealedFixture(t, append(answer, '\n'))
			_, line := seal(t, host, protocol.CompensateOperationMessage{Request: req})
			got, err := tr.ExchangeSealed(line)
			if c.sent {
				if err != nil || !bytes.Equal(got, answer) || sent.String() != string(line)+"\n" {
					t.Fatalf("exchange: %v, sent %q", err, sent.String())
				}
				return
			}
			wantKind(t, err, transport.ErrProtocol)
			if sent.Len() != 0 {
				t.Fatalf("a refused compensation was sent: %q", sent.String())
			}
		})
	}
}
