package interop

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/impl/bootstrap"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/internal/childproc"
)

// keyEncodings are the encodings of key a leak would most likely take.
func keyEncodings(t *testing.T, key *protocol.SessionKey) []string {
	t.Helper()
	raw, err := key.ExposeSecret()
	if err != nil {
		t.Fatal(err)
	}
	return []string{string(raw[:]), hex.EncodeToString(raw[:]), strings.ToUpper(hex.EncodeToString(raw[:])),
		base64.StdEncoding.EncodeToString(raw[:]), base64.RawStdEncoding.EncodeToString(raw[:]),
		base64.URLEncoding.EncodeToString(raw[:]), base64.RawURLEncoding.EncodeToString(raw[:])}
}

// expectNoKey fails for every text of texts that holds an encoding of key.
func expectNoKey(t *testing.T, key *protocol.SessionKey, texts map[string]string) {
	t.Helper()
	for _, enc := range keyEncodings(t, key) {
		for name, text := range texts {
			if strings.Contains(text, enc) {
				t.Errorf("the key is in %s", name)
			}
		}
	}
}

// recorded reads the files a tee worker wrote into dir.
func recorded(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range []string{"worker-args", "worker-env", "relay-cmdline", "relay-environ", "input"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if name != "input" && len(data) == 0 {
			t.Fatalf("%s is empty: nothing was observed", name)
		}
		out[name] = string(data)
	}
	return out
}

// TestRelayPassesTheSessionAndHidesTheKey runs the relay as a host would, with a worker that
// records its input, its arguments and environment, and the relay's command line and
// environment as the system shows them: the worker receives the bootstrap and every line
// unchanged, the relay exits with the worker's status (IOP-001), and no encoding of the key
// appears in the relay's reports, output, standard error, real arguments or environment, nor
// in the worker's (IOP-004).
func TestRelayPassesTheSessionAndHidesTheKey(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("no /proc to observe the relay's command line")
	}
	dir, err := os.MkdirTemp("", "iop-relay-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock, record := filepath.Join(dir, "r.sock"), t.TempDir()
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, RelayCommand, sock, "baseline", "tenant-a", "--", exe, hostileWorkerCommand, "tee", "--", "sh", "-c", "cat >/dev/null")
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
	seen := recorded(t, record)
	if got := seen["input"]; got != sent.String() {
		t.Errorf("the worker received %q, want the host's bytes %q", got, sent.Bytes())
	}
	rep := string(<-reports)
	if !strings.Contains(rep, `"ended":"host"`) || !strings.Contains(rep, `"type":"invoke"`) || !strings.Contains(rep, `"exit":0`) {
		t.Errorf("reports %s: want the invoke judged, the host's clean end and exit 0", rep)
	}
	if !strings.Contains(seen["relay-cmdline"], RelayCommand+"\x00"+sock) {
		t.Errorf("the observed relay command line %q is not the relay's", seen["relay-cmdline"])
	}
	expectNoKey(t, key, map[string]string{"relay's reports": rep, "relay's output": stdout.String(), "relay's standard error": stderr.String(),
		"relay's command line": seen["relay-cmdline"], "relay's environment": seen["relay-environ"],
		"worker's arguments": seen["worker-args"], "worker's environment": seen["worker-env"]})
}

// TestKeyStaysInMemoryEndToEnd runs a scenario through the reference host driver with a worker
// that records what it is given and what the relay runs with: the worker learns the host's key
// from its bootstrap, and that key is in no report of the run (transcripts, details, the
// driver's standard error), nor in the relay's or the worker's command line or environment
// (IOP-004, TRN-093).
func TestKeyStaysInMemoryEndToEnd(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("no /proc to observe the relay's command line")
	}
	pair := referencePair(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	record := t.TempDir()
	pair.Worker.Command = slices.Concat([]string{exe, hostileWorkerCommand, "tee", "--"}, pair.Worker.Command)
	report, err := Run(t.Context(), Config{Pair: pair, Relay: relayCommand(t),
		RunConfig: conformance.RunConfig{Run: "^CNF-IOP-ECHO-01$", Verbose: true, Parallel: 1, Env: append(os.Environ(), "IOP_RECORD="+record)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Results) != 1 || report.Results[0].Outcome != conformance.Pass {
		t.Fatalf("the scenario did not pass: %+v", report.Results)
	}
	seen := recorded(t, record)
	boot, err := bootstrap.Read(strings.NewReader(seen["input"]))
	if err != nil {
		t.Fatalf("the worker's input starts with no bootstrap: %v", err)
	}
	defer boot.Key.Close()
	whole, err := json.Marshal(report)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(whole), "relay 1: host #2 invoke") {
		t.Fatalf("the report keeps no relayed frame, so it proves nothing: %s", conformance.Clip(string(whole), 2000))
	}
	expectNoKey(t, boot.Key, map[string]string{"report": string(whole), "relay's command line": seen["relay-cmdline"],
		"relay's environment": seen["relay-environ"], "worker's arguments": seen["worker-args"], "worker's environment": seen["worker-env"]})
}

// relayUnderTest is a relay started as a host starts it, in a process group of its own, with
// the runner's end of its side channel.
type relayUnderTest struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	conn   net.Conn
	events *json.Decoder
}

// startRelay starts the relay for worker (a mode of the hostile worker) with env, writes a
// fresh bootstrap, and accepts its side channel.
func startRelay(t *testing.T, mode string, env ...string) *relayUnderTest {
	t.Helper()
	dir, err := os.MkdirTemp("", "iop-relay-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "r.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, RelayCommand, sock, "baseline", "tenant-a", "--", exe, hostileWorkerCommand, mode)
	cmd.Env = append(os.Environ(), env...)
	childproc.SetGroup(cmd)
	r := &relayUnderTest{cmd: cmd}
	if r.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if r.stdout, err = cmd.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = childproc.KillGroup(cmd.Process.Pid)
		_ = cmd.Wait()
	})
	key, err := protocol.GenerateSessionKey()
	if err != nil {
		t.Fatal(err)
	}
	if err := bootstrap.Write(r.stdin, "s-1", key); err != nil {
		t.Fatal(err)
	}
	if r.conn, err = ln.Accept(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.conn.Close() })
	_ = r.conn.SetDeadline(time.Now().Add(20 * time.Second))
	r.events = json.NewDecoder(r.conn)
	return r
}

// until reads the relay's events until one satisfies cond, and returns it.
func (r *relayUnderTest) until(t *testing.T, what string, cond func(relayEvent) bool) relayEvent {
	t.Helper()
	for {
		var ev relayEvent
		if err := r.events.Decode(&ev); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if cond(ev) {
			return ev
		}
	}
}

// TestRelayReportsTheExitBeforeItsOutputEnds plays a host that kills the relay's process group
// the moment the relay's output ends (TRN-087, TRN-096 allow it): the worker's exit status and
// its diagnostic have reached the runner all the same (IOP-001, IOP-005).
func TestRelayReportsTheExitBeforeItsOutputEnds(t *testing.T) {
	for i := range 20 {
		r := startRelay(t, "diagnose")
		_, _ = io.Copy(io.Discard, r.stdout)
		_ = childproc.KillGroup(r.cmd.Process.Pid) // the host's kill, at once
		ev := r.until(t, "the worker's exit", func(ev relayEvent) bool { return ev.Exit != nil })
		if *ev.Exit != 3 || !strings.Contains(ev.Diagnostic, "worker: cannot go on") {
			t.Fatalf("run %d: exit %d, diagnostic %q; want 3 and the worker's line", i, *ev.Exit, ev.Diagnostic)
		}
	}
}

// TestRelayArmsTheCutBeforeTheAnswer sends the cut order and waits for the relay's
// acknowledgement, as the runner does, before the worker writes its answer: the answer is cut,
// never relayed, however the relay's goroutines are scheduled.
func TestRelayArmsTheCutBeforeTheAnswer(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "go")
	r := startRelay(t, "late-line", "IOP_GO="+gate)
	r.until(t, "the relay's hello", func(ev relayEvent) bool { return ev.Hello != nil })
	if err := json.NewEncoder(r.conn).Encode(relayOrder{Cut: true}); err != nil {
		t.Fatal(err)
	}
	r.until(t, "the acknowledgement of the cut", func(ev relayEvent) bool { return ev.Armed })
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r.until(t, "the cut", func(ev relayEvent) bool {
		if ev.Record != nil {
			t.Fatalf("the answer was relayed: %+v", *ev.Record)
		}
		return ev.Cut
	})
	if out, _ := io.ReadAll(r.stdout); len(out) > 0 {
		t.Fatalf("the relay passed on %q", out)
	}
}
