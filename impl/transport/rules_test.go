package transport_test

import (
	"testing"

	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
)

// Spec: TRN-031
// The in-process transport authenticates the worker's answer with the host authenticator:
// after one dispatch the host has consumed the worker's sequence 1, so the worker's frame 2
// opens and a second copy of frame 1 does not.
func TestInProcessAnswerIsAuthenticated(t *testing.T) {
	host, s := inProcessFixture(t)
	tr, err := transport.NewInProcessTransport(host, s, &memoryPersister{})
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
