package protocol_test

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
	"lukechampine.com/blake3"
)

// Spec: FRM-007, FRM-014, FRM-015
// The worked tag example of the framing chapter holds: its tag input is what the
// implementation builds for the message, its tag is the BLAKE3 keyed hash of those bytes
// (computed here independently) and the implementation's, and its frame is the sealed line.
func TestSpecTagExample(t *testing.T) {
	text, err := os.ReadFile("../../spec/03-framing.md")
	if err != nil {
		t.Fatal(err)
	}
	ex := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		for _, label := range []string{"key", "session", "sender", "sequence", "message", "tag input", "tag", "frame"} {
			if v, ok := strings.CutPrefix(sc.Text(), label+":"); ok {
				ex[label] = strings.TrimSpace(v)
			}
		}
	}
	if len(ex) != 8 || ex["sender"] != "host" || ex["sequence"] != "2" {
		t.Fatalf("the example is incomplete: %q", ex)
	}
	raw, err := hex.DecodeString(ex["key"])
	if err != nil {
		t.Fatal(err)
	}
	key, err := protocol.NewSessionKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	m, err := protocol.DecodeMessage([]byte(ex["message"]), canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(protocol.AppendTagInput(nil, ex["session"], protocol.RoleHost, 2, m)); got != ex["tag input"] {
		t.Fatalf("tag input\n%s\nwant\n%s", got, ex["tag input"])
	}
	sum := blake3.New(32, raw)
	sum.Write([]byte(ex["tag input"]))
	if got := hex.EncodeToString(sum.Sum(nil)); got != ex["tag"] {
		t.Fatalf("keyed BLAKE3 of the tag input %s, the example says %s", got, ex["tag"])
	}
	tag, err := protocol.ComputeTag(key, ex["session"], protocol.RoleHost, 2, m)
	if err != nil || hex.EncodeToString(tag[:]) != ex["tag"] {
		t.Fatalf("ComputeTag %x, %v", tag, err)
	}
	// Sealed as the host's second frame: the first is open_session.
	h, err := protocol.NewAuthenticator(ex["session"], key, protocol.RoleHost, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := protocol.NewCapabilityManifest(ex["session"], []protocol.CapabilityGrant{protocol.TextGrant("conf.echo")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.Seal(protocol.OpenSessionMessage{Manifest: manifest}); err != nil {
		t.Fatal(err)
	}
	if _, line, err := h.Seal(m); err != nil || string(line) != ex["frame"] {
		t.Fatalf("sealed %s, %v", line, err)
	}
}
