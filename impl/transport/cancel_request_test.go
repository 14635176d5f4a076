package transport_test

import (
	"testing"

	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
)

// Spec: TRN-072
// The runtime's cancellation request is a precondition of the send: a request with every
// field of the bound operation that the runtime did not issue is refused before any frame,
// and the runtime's operation stays claimed; the issued request then sends the one cancel.
func TestBindingRefusesACancellationTheRuntimeWasNotAskedFor(t *testing.T) {
	rt, inv := claimed(t, toolText, "release")
	mux, w := newMultiplexedPair(t, nil)
	b, err := transport.StartExternalBinding(mux, inv, "request-1")
	if err != nil {
		t.Fatal(err)
	}
	w.expect(protocol.TypeInvoke)
	forged := host.CancellationRequest{ID: inv.ID, Name: inv.Name, CallIndex: inv.CallIndex, Attempt: inv.Attempt,
		IdempotencyKey: inv.IdempotencyKey}
	if forged.Issued() {
		t.Fatal("a request built from its fields counts as issued")
	}
	wantKind(t, b.RequestCancellation(forged, "c-forged"), transport.ErrCancellationNotRequested)
	if info, _ := rt.Operation(inv.ID); info.State != host.StateClaimed {
		t.Fatalf("state %v after the refused cancellation", info.State)
	}
	req, err := rt.RequestExternalCancellation(inv.ID)
	if err != nil || !req.Issued() {
		t.Fatalf("issued %v, %v", req.Issued(), err)
	}
	if err := b.RequestCancellation(req, "c-issued"); err != nil {
		t.Fatal(err)
	}
	// The first frame after the invoke is the issued request's cancel: the refusal wrote none.
	c := w.expect(protocol.TypeCancel).(protocol.CancelMessage)
	if c.Request.CancellationID != "c-issued" {
		t.Fatalf("cancel %+v", c.Request)
	}
}
