package protocol_test

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// invokeWith returns an invoke of the vector session whose JSON payload is value.
func invokeWith(t *testing.T, value string) protocol.Message {
	return decode(t, `{"type":"invoke","invocation":{"protocol_version":5,"session_id":"`+vectorSession+
		`","request_id":"r-1","tool":"t","payload":{"format":"json","value":`+value+`}}}`, canonjson.Preserve)
}

// resultWith returns a result of the vector session whose JSON payload is value.
func resultWith(t *testing.T, value string) protocol.Message {
	return decode(t, `{"type":"result","result":{"protocol_version":5,"session_id":"`+vectorSession+
		`","request_id":"r-1","payload":{"format":"json","value":`+value+`}}}`, canonjson.Preserve)
}

// peerFrame seals m as a peer that keeps number text (the reference's host build) would.
func peerFrame(t *testing.T, role protocol.Role, m protocol.Message) []byte {
	t.Helper()
	_, line, err := newAuth(t, role, canonjson.Preserve, protocol.AllowNonPortableNumbers()).Seal(m)
	if err != nil {
		t.Fatal(err)
	}
	return line
}

// A verified frame whose canonical payload holds a number no Lossy writer writes proves
// that the peer keeps number text; from then on the session seals non-portable numbers,
// and the peer, reading in Preserve mode, verifies them. Before that proof the same seal
// is refused.
//
// Spec: ENC-053, ENC-037
func TestPeerProofLiftsThePortabilityRefusal(t *testing.T) {
	for _, tok := range []string{"0.10", "1e2", "2.5e-3", "99999999999999999999", "18446744073709551616", "1e400", "0.0000000001"} {
		worker := newAuth(t, protocol.RoleWorker, canonjson.Preserve)
		echo := resultWith(t, `{"x":`+tok+`}`)
		if _, _, err := worker.Seal(echo); !errors.Is(err, protocol.ErrNonPortableNumber) {
			t.Fatalf("%s: sealing before any proof: %v, want NonPortableNumber", tok, err)
		}
		if _, err := worker.Open(peerFrame(t, protocol.RoleHost, invokeWith(t, `{"x":`+tok+`}`))); err != nil {
			t.Fatalf("%s: open: %v", tok, err)
		}
		if !worker.PeerKeepsNumberText() {
			t.Fatalf("%s: an authenticated %s did not prove a text-keeping peer", tok, tok)
		}
		_, line, err := worker.Seal(echo)
		if err != nil {
			t.Fatalf("%s: sealing after the proof: %v", tok, err)
		}
		host := newAuth(t, protocol.RoleHost, canonjson.Preserve, protocol.AllowNonPortableNumbers())
		if _, _, err := host.Seal(invokeWith(t, `{"x":`+tok+`}`)); err != nil {
			t.Fatal(err)
		}
		f, err := host.Open(line)
		if err != nil {
			t.Fatalf("%s: the text-keeping peer cannot verify the answer: %v", tok, err)
		}
		if got := f.Message.AppendJSON(nil); !bytes.Equal(got, echo.AppendJSON(nil)) {
			t.Fatalf("%s: the peer read %s", tok, got)
		}
	}
}

// Only a number that no Lossy writer writes is a proof: portable numbers, numbers inside
// strings, Lossy outputs that the reference's Lossy parser does not read back, frames that
// fail authentication, and every frame opened in Lossy mode prove nothing.
//
// Spec: ENC-053
func TestPeerProofNeedsAPreserveOnlyNumberInAVerifiedFrame(t *testing.T) {
	notProofs := []string{`{"x":0.1,"y":100.0,"z":1e+16,"w":18446744073709551615,"v":-0.0}`, `{"x":"0.10"}`, `[1.4651248189898814e+246]`}
	for _, value := range notProofs {
		worker := newAuth(t, protocol.RoleWorker, canonjson.Preserve)
		if _, err := worker.Open(peerFrame(t, protocol.RoleHost, invokeWith(t, value))); err != nil {
			t.Fatalf("%s: %v", value, err)
		}
		if worker.PeerKeepsNumberText() {
			t.Fatalf("%s proved a text-keeping peer", value)
		}
	}
	worker := newAuth(t, protocol.RoleWorker, canonjson.Preserve)
	forged := peerFrame(t, protocol.RoleHost, invokeWith(t, `{"x":0.10}`))
	forged = bytes.Replace(forged, []byte(`"auth_tag":"`), []byte(`"auth_tag":"0`), 1)
	forged = append(forged[:len(forged)-3], forged[len(forged)-2:]...)
	if _, err := worker.Open(forged); !errors.Is(err, protocol.ErrInvalidAuthenticationTag) {
		t.Fatalf("forged frame: %v", err)
	}
	if worker.PeerKeepsNumberText() {
		t.Fatal("a frame that failed authentication proved a text-keeping peer")
	}
	lossy := newAuth(t, protocol.RoleWorker, canonjson.Lossy)
	if _, err := lossy.Open(peerFrame(t, protocol.RoleHost, invokeWith(t, `{"x":1.0}`))); err != nil {
		t.Fatal(err)
	}
	if _, err := lossy.Open(peerFrame(t, protocol.RoleHost, invokeWith(t, `{"x":0.10}`))); err == nil {
		t.Fatal("a Lossy reader verified a Preserve-only spelling")
	}
	if lossy.PeerKeepsNumberText() {
		t.Fatal("a Lossy reader recorded a proof")
	}
}

// The wire may spell the number as a "$serde_json::private::Number" object: the Preserve
// reader takes it for the number, so a verified frame proves the peer just the same.
//
// Spec: ENC-053, ENC-026
func TestPeerProofThroughThePrivateNumberObject(t *testing.T) {
	line := peerFrame(t, protocol.RoleHost, invokeWith(t, `{"x":0.10}`))
	wire := bytes.Replace(line, []byte(`0.10`), []byte(`{"$serde_json::private::Number":"0.10"}`), 1)
	worker := newAuth(t, protocol.RoleWorker, canonjson.Preserve)
	if _, err := worker.Open(wire); err != nil {
		t.Fatal(err)
	}
	if !worker.PeerKeepsNumberText() {
		t.Fatal("no proof")
	}
}

// The proof is shared by the halves of a split authenticator, which run on two goroutines.
//
// Spec: ENC-053
func TestPeerProofCrossesSplitHalves(t *testing.T) {
	sealer, opener := newAuth(t, protocol.RoleWorker, canonjson.Preserve).Split()
	line := peerFrame(t, protocol.RoleHost, invokeWith(t, `{"x":0.10}`))
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := opener.Open(line); err != nil {
			t.Error(err)
		}
	})
	wg.Wait()
	if !opener.PeerKeepsNumberText() {
		t.Fatal("no proof")
	}
	if _, _, err := sealer.Seal(resultWith(t, `{"x":0.10}`)); err != nil {
		t.Fatalf("the sealing half did not see the proof: %v", err)
	}
}

// Durable outcomes are sealed whatever their numbers, before any proof (ENC-054); the
// other kinds still are refused.
//
// Spec: ENC-054, ENC-037
func TestDurableOutcomesSealWithoutProof(t *testing.T) {
	for _, tmpl := range protocol.PayloadMessageTemplates {
		m := decode(t, strings.Replace(strings.ReplaceAll(tmpl, "session-1", vectorSession), "PAYLOAD", `{"format":"json","value":{"x":0.10}}`, 1), canonjson.Preserve)
		_, line, err := newAuth(t, protocol.RoleWorker, canonjson.Preserve).Seal(m)
		durable := strings.Contains(tmpl, `"status"`)
		switch {
		case durable && err != nil:
			t.Fatalf("%s: %v", m.Type(), err)
		case durable && !bytes.Contains(line, []byte(`{"x":0.10}`)):
			t.Fatalf("%s: the number was rewritten: %s", m.Type(), line)
		case !durable && !errors.Is(err, protocol.ErrNonPortableNumber):
			t.Fatalf("%s: %v, want NonPortableNumber", m.Type(), err)
		}
	}
}

// Every message kind that carries a payload can carry the proof, wherever the payload sits.
//
// Spec: ENC-053
func TestPeerProofFromEveryPayloadKind(t *testing.T) {
	for _, tmpl := range protocol.PayloadMessageTemplates {
		m := decode(t, strings.Replace(strings.ReplaceAll(tmpl, "session-1", vectorSession), "PAYLOAD", `{"format":"json","value":[{"x":0.10}]}`, 1), canonjson.Preserve)
		host := newAuth(t, protocol.RoleHost, canonjson.Preserve)
		if _, err := host.Open(peerFrame(t, protocol.RoleWorker, m)); err != nil {
			t.Fatalf("%s: %v", m.Type(), err)
		}
		if !host.PeerKeepsNumberText() {
			t.Errorf("%s with 0.10 proved nothing", m.Type())
		}
	}
}
