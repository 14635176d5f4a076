package alphabet_test

import (
	"bytes"
	"testing"

	"github.com/splashv5/conform/conformance/explore/alphabet"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// Spec: EXP-011 — retagging a sealed frame without changing its message gives the sealed line
// back, and a changed message gets a tag a worker-role opener verifies over the new text.
func TestRetag(t *testing.T) {
	key, err := protocol.GenerateSessionKey()
	if err != nil {
		t.Fatal(err)
	}
	defer key.Close()
	s, err := alphabet.NewSession("retag-session", key, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Concretize(alphabet.OpenBaseline)
	if err != nil {
		t.Fatal(err)
	}
	same, err := s.Retag(a.Line, func(m []byte) []byte { return m })
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(same, a.Line) {
		t.Fatalf("identity retag:\n got %s\nwant %s", same, a.Line)
	}
	worker, err := protocol.NewAuthenticator("retag-session", key, protocol.RoleWorker, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := worker.Open(same); err != nil {
		t.Fatalf("the worker cannot open the retagged frame: %v", err)
	}
	b, _ := s.Concretize(alphabet.Invoke)
	changed, err := s.Retag(b.Line, func(m []byte) []byte {
		return bytes.Replace(m, []byte(`"protocol_version":5`), []byte(`"protocol_version":4`), 1)
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = worker.Open(changed)
	if k, ok := protocol.KindOf(err); !ok || k == protocol.ErrInvalidAuthenticationTag {
		t.Fatalf("a retagged version-4 invoke: want a refusal of the version, not of the tag; got %v", err)
	}
}
