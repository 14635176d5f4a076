package protocol

import (
	"bytes"
	"errors"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/derive"
)

// Opening a frame uses the received payload text as the payload's canonical bytes when it
// verifies as canonical, and decodes everything else in full. These tests hold both paths
// to the same results.

func invokeWith(t *testing.T, payload string) InvokeMessage {
	t.Helper()
	v, err := canonjson.ParseValue([]byte(payload), canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := NewToolInvocation("session-1", "request-1", "json.tool", JSONPayload(v))
	if err != nil {
		t.Fatal(err)
	}
	return InvokeMessage{Invocation: inv}
}

func testAuthPair(t testing.TB) (*Authenticator, *Authenticator) {
	t.Helper()
	key, err := NewSessionKey(bytes.Repeat([]byte{9}, SessionKeyBytes))
	if err != nil {
		t.Fatal(err)
	}
	host, err := NewAuthenticator("session-1", key, RoleHost, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	worker, err := NewAuthenticator("session-1", key, RoleWorker, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	return host, worker
}

// Spec: ENC-052, FRM-014
func TestOpenDefersCanonicalPayload(t *testing.T) {
	host, worker := testAuthPair(t)
	const payload = `{"items":[{"id":1,"name":"a\nb","score":12.5},{"id":-2,"tags":["x",null,true]}],"total":1.5}`
	msg := invokeWith(t, payload)
	_, line, err := host.Seal(msg)
	if err != nil {
		t.Fatal(err)
	}
	f, err := worker.Open(line)
	if err != nil {
		t.Fatal(err)
	}
	got := f.Message.(InvokeMessage).Invocation.Payload
	if !got.JSON.IsDeferred() {
		t.Fatal("a canonical payload was decoded in full; the received-text path was not taken")
	}
	if !got.Equal(msg.Invocation.Payload) || string(got.JSON.JSON()) != payload {
		t.Fatalf("opened payload %s, sealed %s", got.JSON.JSON(), payload)
	}
	n, err := got.ValidateFor(FormatJSON)
	if err != nil || n != len(payload) {
		t.Fatalf("ValidateFor = %d, %v; want %d", n, err, len(payload))
	}
	fp1, err1 := OperationInputFingerprint(got)
	fp2, err2 := OperationInputFingerprint(msg.Invocation.Payload)
	if err1 != nil || err2 != nil || fp1 != fp2 {
		t.Fatalf("fingerprints %s / %s (%v, %v)", fp1, fp2, err1, err2)
	}
	// Reading inside builds the tree.
	items, ok := got.JSON.Get("items")
	if !ok || len(items.Elems()) != 2 {
		t.Fatalf("items = %s", items.JSON())
	}
}

// Equivalent but non-canonical spellings of the payload carry the same tag (the tag covers
// the canonical form) and must open through the full decode; a spelling of a different
// value must not open.
//
// Spec: ENC-052, FRM-014
func TestOpenNonCanonicalPayloadText(t *testing.T) {
	const payload = `{"a":[1,"/"],"b":{"c":"\u0001"}}`
	for _, c := range []struct {
		name, text string
		ok         bool
	}{
		{"canonical", payload, true},
		{"unsorted keys", `{"b":{"c":"\u0001"},"a":[1,"/"]}`, true},
		{"whitespace", `{"a": [1, "/"], "b": {"c": "\u0001"}}`, true},
		{"escaped slash", `{"a":[1,"\/"],"b":{"c":"\u0001"}}`, true},
		{"escaped letter", `{"a":[1,"\u002f"],"b":{"c":"\u0001"}}`, true},
		{"duplicate key, last wins", `{"a":0,"a":[1,"/"],"b":{"c":"\u0001"}}`, true},
		{"different value", `{"a":[2,"/"],"b":{"c":"\u0001"}}`, false},
		{"different key order of a list", `{"a":["/",1],"b":{"c":"\u0001"}}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			host, worker := testAuthPair(t)
			_, line, err := host.Seal(invokeWith(t, payload))
			if err != nil {
				t.Fatal(err)
			}
			edited := bytes.Replace(line, []byte(payload), []byte(c.text), 1)
			if !bytes.Contains(edited, []byte(c.text)) {
				t.Fatal("payload text not found in the line")
			}
			f, err := worker.Open(edited)
			if !c.ok {
				if !errors.Is(err, ErrInvalidAuthenticationTag) {
					t.Fatalf("Open = %v, want InvalidAuthenticationTag", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			got := f.Message.(InvokeMessage).Invocation.Payload.JSON
			if got.IsDeferred() != (c.text == payload) {
				t.Fatalf("deferred = %v for %s", got.IsDeferred(), c.text)
			}
			if string(got.JSON()) != payload {
				t.Fatalf("canonical form %s, want %s", got.JSON(), payload)
			}
		})
	}
}

// decodeBoth decodes data as a message twice, once keeping canonical payload text
// deferred and once parsing everything, and returns both outcomes.
func decodeBoth(data []byte, mode canonjson.Mode) (lazy, eager Message, lazyErr, eagerErr error) {
	var full canonjson.Parser
	n, err := full.Parse(data)
	if err != nil {
		eagerErr = SerializationError(err)
	} else if eager, eagerErr = DecodeMessageNode(n, derive.Context{Mode: mode}); eagerErr != nil {
		eagerErr = SerializationError(eagerErr)
	}
	var deferring canonjson.Parser
	n, err = deferring.ParseDeferring(data, payloadEnum.Content, mode)
	if err != nil {
		lazyErr = SerializationError(err)
	} else if lazy, lazyErr = DecodeMessageNode(n, derive.Context{Mode: mode}); lazyErr != nil {
		lazyErr = SerializationError(lazyErr)
	}
	return lazy, eager, lazyErr, eagerErr
}

// FuzzDeferredDecode holds the message decoders to the same outcome whether or not
// canonical payload text is kept deferred: the same error text, or messages that write the
// same canonical bytes and hold equal payloads. Raw nodes can land anywhere a member is
// named "value" (a grant of that name, a payload whose content comes first, unknown
// members), and every serde rule must see through them.
//
// Spec: ENC-052
func FuzzDeferredDecode(f *testing.F) {
	for _, s := range []string{
		`{"type":"invoke","invocation":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","payload":{"format":"json","value":{"a":[1,2.5,"x"]}}}}`,
		`{"type":"invoke","invocation":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","payload":{"value":[1,1e2],"format":"json"}}}`,
		`{"type":"invoke","invocation":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","payload":{"format":"text","value":["x"]}}}`,
		`{"type":"invoke","invocation":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","payload":["json",{"value":{"b":1}}]}}`,
		`{"type":"open_session","manifest":{"protocol_version":5,"session_id":"s","grants":{"value":{"format":"json","max_calls":1,"max_input_bytes":10,"max_output_bytes":10,"tool":"value"}}}}`,
		`{"type":"open_session","manifest":{"protocol_version":5,"session_id":"s","grants":{"value":{"tool":"value","format":"json","max_calls":1,"max_input_bytes":10,"max_output_bytes":10}}}}`,
		`{"type":"operation_result","result":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","operation_key":"k","status":{"state":"succeeded","payload":{"format":"json","value":{"x":[]}}}}}`,
		`{"type":"result","result":{"protocol_version":5,"session_id":"s","request_id":"r","payload":{"format":"json","value":{"value":{"z":1},"a":0}},"value":[1]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, mode := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
			lazy, eager, lazyErr, eagerErr := decodeBoth(data, mode)
			if (lazyErr == nil) != (eagerErr == nil) || lazyErr != nil && lazyErr.Error() != eagerErr.Error() {
				t.Fatalf("%v: deferring decode error %v, full decode error %v", mode, lazyErr, eagerErr)
			}
			if eagerErr != nil {
				continue
			}
			if got, want := lazy.AppendJSON(nil), eager.AppendJSON(nil); !bytes.Equal(got, want) {
				t.Fatalf("%v: deferring decode writes %s, full decode %s", mode, got, want)
			}
			if (lazy.Validate() == nil) != (eager.Validate() == nil) {
				t.Fatalf("%v: validation differs", mode)
			}
			if p, ok := PayloadOf(lazy); ok {
				q, _ := PayloadOf(eager)
				if !p.Equal(q) {
					t.Fatalf("%v: payloads differ", mode)
				}
				n1, e1 := p.ValidateFor(p.Format)
				n2, e2 := q.ValidateFor(q.Format)
				if n1 != n2 || (e1 == nil) != (e2 == nil) {
					t.Fatalf("%v: ValidateFor %d, %v vs %d, %v", mode, n1, e1, n2, e2)
				}
			}
		}
	})
}
