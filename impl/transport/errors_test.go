package transport_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
)

// Spec: TRN-061
// Errors match their kind and their wrapped causes; KindOf finds the outermost transport kind;
// every kind has a reference name.
func TestErrorKinds(t *testing.T) {
	inner := &protocol.Error{Kind: protocol.ErrDuplicateResult}
	e := &transport.Error{Kind: transport.ErrTransport, Err: &transport.Error{Kind: transport.ErrProtocol, Err: inner}}
	wrapped := fmt.Errorf("context: %w", e)
	if !errors.Is(wrapped, transport.ErrTransport) || !errors.Is(wrapped, transport.ErrProtocol) ||
		!errors.Is(wrapped, protocol.ErrDuplicateResult) || errors.Is(wrapped, transport.ErrBusy) {
		t.Fatalf("errors.Is on %v", wrapped)
	}
	if k, ok := transport.KindOf(wrapped); !ok || k != transport.ErrTransport {
		t.Fatalf("KindOf = %v, %v", k, ok)
	}
	if _, ok := transport.KindOf(errors.New("plain")); ok {
		t.Fatal("KindOf found a kind in a plain error")
	}
	u := &transport.Error{Kind: transport.ErrUnexpectedMessage, Detail: "unsolicited cancellation_result"}
	if !strings.HasSuffix(u.Error(), ": unsolicited cancellation_result") {
		t.Fatalf("message %q", u.Error())
	}
	names := map[string]bool{}
	for k := transport.ErrorKind(1); k < 80; k++ {
		if s := k.String(); !strings.HasPrefix(s, "ErrorKind(") {
			if names[s] {
				t.Fatalf("duplicate kind name %s", s)
			}
			names[s] = true
		}
	}
	if len(names) != 31 { // 27 reference kinds, the two pre-sealed exchange kinds (TRN-099), CancelSlotUnavailable (TRN-112) and CancellationNotRequested (TRN-072)
		t.Fatalf("%d named kinds", len(names))
	}
}
