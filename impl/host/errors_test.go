package host

import (
	"errors"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// Spec: RUN-084, RUN-162
func TestErrorRenderings(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{Denied("x"), "tool call denied: x"},
		{Failed("x"), "tool call failed: x"},
		{Cancelled("x"), "tool call cancelled: x"},
		{TimedOut("x"), "tool call timed out: x"},
		{&ExternalError{Kind: ErrNotClaimed, ID: 4}, "external tool operation has not been claimed (operation 4)"},
		{&ExternalError{Kind: ErrReconciliationRequiresHostAuthenticator}, "external reconciliation requires a host session authenticator"},
		{&RegistrationError{Kind: ErrDuplicateTool, Name: "t"}, "tool already registered: t"},
		{&RegistrationError{Kind: ErrCatalogByteLimitExceeded, Actual: 9, Maximum: 8}, "tool catalog is 9 bytes but its maximum is 8 bytes"},
		{&RegistrationError{Kind: ErrIncompatibleWorkerGrant, Name: "t"}, "worker manifest cannot safely back tool: t"},
		{&RegistrationError{Kind: ErrNonceUnavailable}, "externally dispatched tools require operating-system entropy or a host-supplied capability session nonce"},
		{&StreamConfigError{Kind: ErrStreamAlreadyReserved, Name: "t"}, "stream redactor must be set before the tool is reserved: t"},
		{&LeaseError{Kind: ErrLeaseCallLimitExceedsPolicy, Tool: "t", Requested: 3, Maximum: 2}, "capability lease for t requests 3 calls but policy allows 2"},
		{&AuditCursorError{Kind: ErrAuditCursorEvicted, Requested: 2, Available: 5}, "capability audit cursor 2 was evicted; earliest available is 5"},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("%T: %q, want %q", c.err, got, c.want)
		}
	}
	wrapped := &ExternalError{Kind: ErrProtocol, ID: 3, Err: &protocol.Error{Kind: protocol.ErrUnknownTool, Value: "x"}}
	if !errors.Is(wrapped, ErrProtocol) || !errors.Is(wrapped, protocol.ErrUnknownTool) {
		t.Fatalf("protocol error does not match both kinds: %v", wrapped)
	}
	for k := ErrUnknownOperation; k <= ErrResume; k++ {
		if k.String() == "" || k.Error() == "" || errors.Is(&ExternalError{Kind: k, ID: 1}, k+1) {
			t.Fatalf("kind %d", k)
		}
	}
	if ErrResume.String() != "Runtime" || ErrUnknownOperation.String() != "Unknown" {
		t.Fatal("variant names")
	}
}

// Spec: RUN-186, RUN-161
func TestResolveOperationStatus(t *testing.T) {
	r, _ := lifecycleRuntime(t)
	id := opIn(t, r, StateClaimed)
	rec, err := r.ResolveOperationStatus(id, protocol.Running())
	if err != nil || !rec.Running || stateOf(r, id) != StateClaimed {
		t.Fatalf("running = %+v %v", rec, err)
	}
	_, err = r.ResolveOperationStatus(id, protocol.Succeeded(protocol.JSONPayload(canonjson.Object())))
	wantKind(t, err, protocol.ErrPayloadFormatMismatch)
	rec, err = r.ResolveOperationStatus(id, protocol.Failed("worker failed"))
	wantNoError(t, err)
	wantToolError(t, rec.Settlement.Err, ToolFailed, "worker failed")
	_, err = r.ResolveOperationStatus(id, protocol.Running())
	wantKind(t, err, ErrAlreadyCompleted)
	text := opIn(t, r, StateClaimed)
	rec, err = r.ResolveOperationStatus(text, protocol.Succeeded(protocol.TextPayload("ok")))
	if err != nil || rec.Settlement.Output != "ok" {
		t.Fatalf("succeeded = %+v %v", rec, err)
	}
}
