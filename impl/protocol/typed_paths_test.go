package protocol

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
)

// workerPair returns the host of testAuthPair and two worker authenticators on the same key,
// so that one opens (or seals) the general way and the other the typed way, frame for frame.
func workerPair(t *testing.T) (host, general, typed *Authenticator) {
	t.Helper()
	host, general = testAuthPair(t)
	_, typed = testAuthPair(t)
	return host, general, typed
}

// OpenInvoke opens every frame as Open does: the same invocation for an invoke (in the fast
// layout or not), the same message otherwise, the same error for a forged frame, and the same
// incoming sequence afterwards (a failed open changes nothing).
//
// Spec: FRM-014, MSG-002
func TestOpenInvokeAgreesWithOpen(t *testing.T) {
	host, general, typed := workerPair(t)
	jsonValue, err := canonjson.ParseValue([]byte(`{"a":[1,2.5,"x"]}`), canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	invoke := func(id string, p ToolPayload) Message {
		inv, err := NewToolInvocation("session-1", id, "echo", p)
		if err != nil {
			t.Fatal(err)
		}
		return InvokeMessage{Invocation: inv}
	}
	messages := []Message{
		invoke("r1", TextPayload("plain text")),       // the fast layout
		invoke("r2", TextPayload("line\nfeed \"q\"")), // escapes: the general decoder
		invoke("r3", JSONPayload(jsonValue)),
		CloseSessionMessage{ProtocolVersion: ProtocolVersion, Session: "session-1"},
	}
	for i, m := range messages {
		_, line, err := host.Seal(m)
		if err != nil {
			t.Fatal(err)
		}
		forged := bytes.Clone(line)
		forged[len(forged)-3] ^= 1 // a tag digit
		_, wantErr := general.Open(forged)
		inv, got, gotErr := typed.OpenInvoke(forged)
		if wantErr == nil || gotErr == nil || gotErr.Error() != wantErr.Error() || got != nil || inv != (ToolInvocation{}) {
			t.Fatalf("frame %d forged: OpenInvoke = %v, %v, %v; Open's error %v", i, inv, got, gotErr, wantErr)
		}
		want, err := general.Open(line)
		if err != nil {
			t.Fatal(err)
		}
		inv, got, err = typed.OpenInvoke(line)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if w, ok := want.Message.(InvokeMessage); ok {
			same := string(inv.AppendJSON(nil)) == string(w.Invocation.AppendJSON(nil)) &&
				inv.Payload.Equal(w.Invocation.Payload) && inv.Payload.JSON.IsDeferred() == w.Invocation.Payload.JSON.IsDeferred()
			if got != nil || !same {
				t.Fatalf("frame %d: OpenInvoke gave %+v and %v, Open %+v", i, inv, got, w.Invocation)
			}
		} else if inv != (ToolInvocation{}) || !reflect.DeepEqual(got, want.Message) {
			t.Fatalf("frame %d: OpenInvoke gave %+v and %#v, Open %#v", i, inv, got, want.Message)
		}
		if typed.NextIncoming() != general.NextIncoming() {
			t.Fatalf("frame %d: next incoming %d, Open's %d", i, typed.NextIncoming(), general.NextIncoming())
		}
	}
	if typed.opener.invoke != (InvokeMessage{}) {
		t.Fatal("the opener's invoke box still holds the last invocation")
	}
}

// SealResultAppend seals what SealAppend seals for the same result: the same line, the same
// refusal of a payload with a non-portable number (ENC-037) with dst returned unchanged, and
// the same outgoing sequence afterwards.
//
// Spec: FRM-014, ENC-037
func TestSealResultAppendAgreesWithSealAppend(t *testing.T) {
	_, general, typed := workerPair(t)
	portable, err := canonjson.ParseValue([]byte(`{"n":[1,2.5]}`), canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	private, err := canonjson.ParseValue([]byte(`{"n":12345678901234567890}`), canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range []ToolPayload{TextPayload("hi"), JSONPayload(portable), JSONPayload(private), TextPayload("again")} {
		r, err := NewToolResult("session-1", "r", p)
		if err != nil {
			t.Fatal(err)
		}
		_, want, wantErr := general.SealAppend([]byte("x"), ResultMessage{Result: r})
		got, gotErr := typed.SealResultAppend([]byte("x"), r)
		if !bytes.Equal(got, want) || (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("result %d: SealResultAppend = %q, %v; SealAppend %q, %v", i, got, gotErr, want, wantErr)
		}
		if wantErr != nil && (!errors.Is(gotErr, ErrNonPortableNumber) || gotErr.Error() != wantErr.Error()) {
			t.Fatalf("result %d: SealResultAppend failed with %v, SealAppend with %v", i, gotErr, wantErr)
		}
		if typed.NextOutgoing() != general.NextOutgoing() {
			t.Fatalf("result %d: next outgoing %d, SealAppend's %d", i, typed.NextOutgoing(), general.NextOutgoing())
		}
	}
	if typed.sealer.result != (ResultMessage{}) {
		t.Fatal("the sealer's result box still holds the last result")
	}
}
