package profile_test

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lukechampine.com/blake3"

	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/worker"
)

// signGrant is the grant of conf.secret.sign with the given selectors.
func signGrant(rs ...protocol.ResourceSelector) protocol.CapabilityGrant {
	g := protocol.TextGrant(profile.ToolSecretSign)
	g.Resources = rs
	return g
}

// Spec: PRF-028, PRF-029, PRF-030, SEC-003, SEC-008
func TestSecretTool(t *testing.T) {
	if len(profile.StubSecret) != 32 {
		t.Fatalf("the stub secret has %d bytes", len(profile.StubSecret))
	}
	effects := profile.NewEffectLog(nil, nil)
	a := adapter(t, registry(t, profile.Options{Effects: effects}), profile.ToolSecretSign)
	stub := protocol.ResourceSelector{Kind: protocol.ResourceSecret, ID: profile.StubSecretID}
	sign := func(g protocol.CapabilityGrant, in protocol.ToolPayload) (protocol.ToolPayload, error) {
		return a.Invoke(protocol.ToolInvocation{SessionID: "s", RequestID: "r", Tool: profile.ToolSecretSign, Payload: in}, g)
	}
	// Sign is keyed BLAKE3-256: the official BLAKE3 test vector of the empty input under the
	// key "whats the Elvish word for friend".
	if got := profile.Sign([]byte("whats the Elvish word for friend"), ""); got != "92b2b75604ed3c761f9d6f62392c8a9227ad0ea3f09573e783f1498a4ed60d26" {
		t.Fatalf("Sign of the official vector = %s", got)
	}
	out, err := sign(signGrant(stub), protocol.TextPayload("hello"))
	if err != nil || out.Format != protocol.FormatText || out.Text != profile.Sign([]byte(profile.StubSecret), "hello") {
		t.Fatalf("signing under the stub selector: %+v %v", out, err)
	}
	for _, c := range []struct {
		what  string
		grant protocol.CapabilityGrant
		kind  string
	}{
		{"no selector", signGrant(), "SecretNotGranted"},
		{"a file_root selector", signGrant(protocol.ResourceSelector{Kind: protocol.ResourceFileRoot, ID: profile.StubSecretID}), "SecretNotGranted"},
		{"another secret", signGrant(protocol.ResourceSelector{Kind: protocol.ResourceSecret, ID: "conf.secret.other"}), "SecretNotGranted"},
		{"another tool's grant", func() protocol.CapabilityGrant { g := signGrant(stub); g.Tool = profile.ToolTextEcho; return g }(), "ToolNotGranted"},
	} {
		_, err := sign(c.grant, protocol.TextPayload("hello"))
		if worker.AdapterKindOf(err) != worker.AdapterFailed || !strings.Contains(err.Error(), c.kind) {
			t.Errorf("%s: %v; want Failed naming %s", c.what, err, c.kind)
		}
		if strings.Contains(err.Error(), profile.StubSecret) || strings.Contains(err.Error(), profile.StubSecretID) {
			t.Errorf("%s: the error %q names the secret", c.what, err)
		}
	}
	if _, err := sign(signGrant(stub), protocol.TextPayload("")); err != nil {
		t.Errorf("the empty input: %v", err)
	}
	if len(effects.Lines()) != 0 {
		t.Errorf("the tool wrote effect lines: %v", effects.Lines())
	}
}

// Spec: PRF-033, PRF-029, SEC-005, SEC-007
func TestSecretSource(t *testing.T) {
	source := filepath.Join(t.TempDir(), "secret-source")
	a := adapter(t, registry(t, profile.Options{SecretSource: source}), profile.ToolSecretSign)
	stub := protocol.ResourceSelector{Kind: protocol.ResourceSecret, ID: profile.StubSecretID}
	sign := func() (string, error) {
		out, err := a.Invoke(protocol.ToolInvocation{SessionID: "s", RequestID: "r", Tool: profile.ToolSecretSign, Payload: protocol.TextPayload("hello")}, signGrant(stub))
		return out.Text, err
	}
	set := func(content []byte) {
		if err := os.WriteFile(source, content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Without the file, the stub secret (the answer of PRF-029's example).
	if got, err := sign(); err != nil || got != "1bd13804ba7064e56c5626ece6475ae92294d5751692d579f656f5a1f105ee53" {
		t.Fatalf("without a source: %q %v", got, err)
	}
	// A value that is not 32 bytes long keys the hash with its BLAKE3-256 hash.
	for _, n := range []int{1, worker.MaxSecretBytes} {
		value := bytes.Repeat([]byte{'v'}, n)
		set(append([]byte("value:"), value...))
		sum := blake3.Sum256(value)
		h := blake3.New(32, sum[:])
		h.Write([]byte("hello"))
		if got, err := sign(); err != nil || got != hex.EncodeToString(h.Sum(nil)) {
			t.Errorf("a value of %d bytes: %q %v", n, got, err)
		}
	}
	// The broker, not the provider, refuses a value out of bounds.
	for n, kind := range map[int]string{0: "EmptyValue", worker.MaxSecretBytes + 1: "ValueTooLarge", worker.MaxSecretBytes + 100: "ValueTooLarge"} {
		set(append([]byte("value:"), bytes.Repeat([]byte{'v'}, n)...))
		if _, err := sign(); worker.AdapterKindOf(err) != worker.AdapterFailed || !strings.Contains(err.Error(), kind) {
			t.Errorf("a value of %d bytes: %v; want Failed naming %s", n, err, kind)
		}
	}
	// A failing provider: its detail never reaches the adapter's error.
	for _, content := range []string{"fail:marker-1234", "marker-1234"} {
		set([]byte(content))
		_, err := sign()
		if worker.AdapterKindOf(err) != worker.AdapterFailed || !strings.Contains(err.Error(), "Provider") || strings.Contains(err.Error(), "marker-1234") {
			t.Errorf("source %q: %v; want Failed naming Provider without the detail", content, err)
		}
	}
}
