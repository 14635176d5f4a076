package host

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/splashv5/conform/conformance/conformancetest"
	"github.com/splashv5/conform/impl/bootstrap"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// hostileDriverCommand selects, in the test binary, a hostile driver (HDR-031).
const hostileDriverCommand = "hostile-driver"

// TestMain lets the test binary serve as the fake worker and as the hostile drivers.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case FakeWorkerCommand:
			os.Exit(FakeWorkerMain(os.Args[2:]))
		case hostileDriverCommand:
			os.Exit(hostileDriver(os.Args[2]))
		}
	}
	code := m.Run()
	conformancetest.RemovePrograms()
	os.Exit(code)
}

// referenceDriver builds the bundled driver once per test binary.
func referenceDriver(t testing.TB) string {
	return conformancetest.Program(t, conformancetest.DriverPackage)
}

// fakeWorker is this test binary in fake-worker mode.
func fakeWorkerCommand(t testing.TB) []string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, FakeWorkerCommand}
}

// hostileDriver plays a driver that misbehaves as mode says. Each one records its pid in the
// directory named by HOSTCONF_PIDS, so that the test can tell that the runner killed it.
func hostileDriver(mode string) int {
	if dir := os.Getenv("HOSTCONF_PIDS"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, fmt.Sprint(os.Getpid())), nil, 0o600)
	}
	if mode == "crash" {
		return 3
	}
	return conformancetest.ServeDriver(func(c conformancetest.DriverCommand, out *json.Encoder) (int, bool) {
		switch mode {
		case "hang":
			// Also start a child in the driver's group that outlives nothing the runner does not kill.
			_ = exec.Command("sleep", "3600").Start()
			time.Sleep(time.Hour)
		case "flood":
			return conformancetest.Flood('x'), true
		case "nostart":
			_ = out.Encode(map[string]any{"id": c.ID, "ok": true})
		case "twice", "leak", "leakfile", "fixedkey", "counterkey":
			if c.Op != "start" {
				_ = out.Encode(map[string]any{"id": c.ID, "ok": false, "error": "Unsupported"})
				return 0, false
			}
			n := 1
			if mode == "twice" {
				n = 2
			}
			for range n {
				if err := leakyStart(c.Command, c.Manifest, mode); err != nil {
					fmt.Fprintln(os.Stderr, err)
				}
			}
			_ = out.Encode(map[string]any{"id": c.ID, "ok": true})
		}
		return 0, false
	})
}

// leakyStart is a bad host: it writes the bootstrap and open_session itself and, in mode leak,
// puts the key in the worker's environment (FRM-043), in mode leakfile in a file under TMPDIR
// and another in its working directory (FRM-040).
func leakyStart(command []string, manifest []byte, mode string) error {
	m, err := protocol.DecodeManifest(manifest)
	if err != nil {
		return err
	}
	key, err := hostileKey(mode)
	if err != nil {
		return err
	}
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Env = os.Environ()
	raw, _ := key.ExposeSecret()
	switch mode {
	case "leak":
		cmd.Env = append(cmd.Env, "SPLASH_KEY="+hex.EncodeToString(raw[:]))
	case "leakfile":
		if err := os.WriteFile(filepath.Join(os.TempDir(), "session.key"), []byte(hex.EncodeToString(raw[:])), 0o600); err != nil {
			return err
		}
		if err := os.WriteFile("key.b64", []byte(base64.RawURLEncoding.EncodeToString(raw[:])), 0o600); err != nil {
			return err
		}
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	if err := bootstrap.Write(stdin, m.SessionID, key); err != nil {
		return err
	}
	auth, err := protocol.NewAuthenticator(m.SessionID, key, protocol.RoleHost, canonjson.Preserve)
	if err != nil {
		return err
	}
	_, line, err := auth.Seal(protocol.OpenSessionMessage{Manifest: m})
	if err != nil {
		return err
	}
	_, err = stdin.Write(append(line, '\n'))
	return err
}

// counter is the key counter of the counterkey mode: a random start, then one more per launch.
var counter [protocol.SessionKeyBytes]byte

// hostileKey is a fresh random key, or in mode fixedkey the same key every time, or in mode
// counterkey a random start incremented by one per launch (big-endian).
func hostileKey(mode string) (*protocol.SessionKey, error) {
	switch mode {
	case "fixedkey":
		var b [protocol.SessionKeyBytes]byte
		for i := range b {
			b[i] = byte(i + 1)
		}
		return protocol.NewSessionKey(b[:])
	case "counterkey":
		if counter == ([protocol.SessionKeyBytes]byte{}) {
			if _, err := rand.Read(counter[:]); err != nil {
				return nil, err
			}
		}
		for i := len(counter) - 1; i >= 0; i-- {
			if counter[i]++; counter[i] != 0 {
				break
			}
		}
		return protocol.NewSessionKey(counter[:])
	}
	return protocol.GenerateSessionKey()
}
