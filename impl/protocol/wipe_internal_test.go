package protocol

import (
	"bytes"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
)

// Spec: FRM-042
// Closing an authenticator wipes both halves' copies of the key, every chaining value derived
// from it and the last tag input, not only refuses later calls.
func TestAuthenticatorCloseWipesTheKey(t *testing.T) {
	raw := bytes.Repeat([]byte{0x5a}, SessionKeyBytes)
	key, err := NewSessionKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	defer key.Close()
	host, err := NewAuthenticator("s", key, RoleHost, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	worker, err := NewAuthenticator("s", key, RoleWorker, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		_, line, err := host.Seal(CloseSessionMessage{ProtocolVersion: ProtocolVersion, Session: "s"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := worker.Open(line); err != nil {
			t.Fatal(err)
		}
	}
	for _, st := range []*tagState{host.sealer.st, worker.opener.st} {
		if st.h.key == [8]uint32{} {
			t.Fatal("the key was not loaded; the test proves nothing")
		}
	}
	host.Close()
	worker.Close()
	for name, st := range map[string]*tagState{"host sealer": host.sealer.st, "host opener": host.opener.st,
		"worker sealer": worker.sealer.st, "worker opener": worker.opener.st} {
		if st.h.key != [8]uint32{} || st.h.stack != [64][8]uint32{} || !allZero(st.h.scratch[:]) || st.buf != nil {
			t.Fatalf("%s: key material left after Close", name)
		}
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
