package interop

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/bootstrap"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// TestRelayPassesTheSessionAndHidesTheKey runs the relay as a host would, with a worker that
// records its input: the worker receives the bootstrap and every line unchanged, the relay
// exits with the worker's status (IOP-001), and no encoding of the key appears in the relay's
// reports, output, standard error or arguments (IOP-004).
func TestRelayPassesTheSessionAndHidesTheKey(t *testing.T) {
	dir, err := os.MkdirTemp("", "iop-relay-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock, record := filepath.Join(dir, "r.sock"), filepath.Join(dir, "input")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{RelayCommand, sock, "baseline", "tenant-a", "--", exe, hostileWorkerCommand, "record"}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "IOP_RECORD="+record)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	reports := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			reports <- nil
			return
		}
		b, _ := io.ReadAll(c)
		reports <- b
	}()

	key, err := protocol.GenerateSessionKey()
	if err != nil {
		t.Fatal(err)
	}
	var sent bytes.Buffer
	if err := bootstrap.Write(&sent, "s-1", key); err != nil {
		t.Fatal(err)
	}
	host, err := protocol.NewAuthenticator("s-1", key, protocol.RoleHost, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	m, err := protocol.NewCapabilityManifest("s-1", []protocol.CapabilityGrant{grant(toolTextEcho, protocol.FormatText)})
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range []protocol.Message{protocol.OpenSessionMessage{Manifest: m}, invoke("r-1")} {
		_, line, err := host.Seal(msg)
		if err != nil {
			t.Fatal(err)
		}
		sent.Write(append(line, '\n'))
	}
	if _, err := stdin.Write(sent.Bytes()); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the relay: %v (%s)", err, stderr.String())
	}
	got, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, sent.Bytes()) {
		t.Errorf("the worker received %q, want the host's bytes %q", got, sent.Bytes())
	}
	rep := string(<-reports)
	if !strings.Contains(rep, `"ended":"host"`) || !strings.Contains(rep, `"type":"invoke"`) || !strings.Contains(rep, `"exit":0`) {
		t.Errorf("reports %s: want the invoke judged, the host's clean end and exit 0", rep)
	}
	raw, err := key.ExposeSecret()
	if err != nil {
		t.Fatal(err)
	}
	for _, enc := range []string{string(raw[:]), hex.EncodeToString(raw[:]), base64.StdEncoding.EncodeToString(raw[:]), base64.RawURLEncoding.EncodeToString(raw[:])} {
		for name, text := range map[string]string{"reports": rep, "output": stdout.String(), "standard error": stderr.String(), "arguments": strings.Join(args, " ")} {
			if strings.Contains(text, enc) {
				t.Errorf("the key is in the relay's %s", name)
			}
		}
	}
}
