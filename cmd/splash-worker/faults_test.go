package main

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/worker"
	"github.com/splashv5/conform/impl/worker/workertest"
)

// Spec: WRK-095
func TestListFaults(t *testing.T) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(workerBinary, "--list-faults")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() != 0 {
		t.Fatalf("--list-faults: %v, stderr %q", err, stderr.String())
	}
	var want []string
	for _, p := range worker.Points() {
		want = append(want, "pause-"+p.String())
	}
	for _, info := range worker.FaultInfos() {
		want = append(want, info.Name)
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), stdout.String())
	}
	for i, line := range lines {
		name, description, ok := strings.Cut(line, "\t")
		if !ok || name != want[i] || description == "" || strings.Contains(description, "\t") {
			t.Errorf("line %d is %q, want %q, a tab and a description", i+1, line, want[i])
		}
	}
}

// The usage text mentions that faults exist and names none of them.
//
// Spec: WRK-095
func TestUsageHidesFaults(t *testing.T) {
	var stderr bytes.Buffer
	cmd := exec.Command(workerBinary, "-h")
	cmd.Stderr = &stderr
	_ = cmd.Run()
	usage := stderr.String()
	if !strings.Contains(usage, "usage: splash-worker") || !strings.Contains(usage, "Deliberate faults") {
		t.Fatalf("usage text %q", usage)
	}
	for _, hidden := range []string{"--fault", "--list-faults", "pause-", "accept-replay", "leak-key"} {
		if strings.Contains(usage, hidden) {
			t.Errorf("the usage text shows %q", hidden)
		}
	}
}

// --fault may be repeated and may list several faults separated by commas.
//
// Spec: WRK-095, WRK-030, CAN-022
func TestFaultFlagCombinesFaults(t *testing.T) {
	p := launch(t, "session-1", "--fault", "undeclared-safety-ok, cancel-in-baseline", "--fault", "skip-tag-check")
	p.open(grant(undeclTool, 2, 0))
	p.call(p.host.Invoke("r1", undeclTool, text("x")), "result text:x")
	p.call(p.host.Cancel("c1", "r1", undeclTool), "cancellation_result too_late")
	// skip-tag-check needs the session key, which the process hands to the fault.
	p.write(append(p.host.Tampered(p.host.Invoke("r2", undeclTool, text("forged"))), '\n'))
	p.expect("result text:forged")
	p.host.Seal(p.host.CloseSession()) // the tampered frame used sequence 4
	p.send(p.host.CloseSession())
	p.expectExit(0, "")
}

// Spec: WRK-095, WRK-093
func TestLeakKeyFault(t *testing.T) {
	p := launch(t, "session-1", "--fault", "leak-key")
	p.write(append(p.host.Tampered(p.host.OpenSession(grant(echoTool, 1, 0))), '\n'))
	_ = p.stdin.Close()
	err := p.cmd.Wait()
	p.waited = true
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	boot := p.host.Bootstrap()
	key := hex.EncodeToString(boot[len(boot)-32:])
	stderr := p.stderr.String()
	if p.cmd.ProcessState.ExitCode() != 4 || !strings.Contains(stderr, "transport:") || !strings.Contains(stderr, key) {
		t.Fatalf("exit %d, stderr %q: want status 4 and the key in the diagnostic", p.cmd.ProcessState.ExitCode(), stderr)
	}
}

// Spec: WRK-095, WRK-092
func TestExitZeroOnRejectFault(t *testing.T) {
	p := launch(t, "session-1", "--fault", "exit-zero-on-reject")
	p.open(grant(echoTool, 1, 0))
	p.write(append(p.host.Tampered(p.host.Invoke("r1", echoTool, text("x"))), '\n'))
	p.expectExit(0, "splash-worker: transport: worker: Protocol (open): protocol: InvalidAuthenticationTag")
}

// Spec: WRK-095, WRK-092
func TestWrongBootstrapStatusFault(t *testing.T) {
	host, err := workertest.NewHost("session-1")
	if err != nil {
		t.Fatal(err)
	}
	p := launchRaw(t, host, "--fault", "wrong-bootstrap-status")
	p.write([]byte("SPLPBOOX......................................................"))
	p.expectExit(4, "transport:")
}

// The late-bootstrap-checks fault takes exactly one bootstrap's bytes, whatever they hold.
//
// Spec: WRK-095, WRK-090
func TestReadWholeBootstrap(t *testing.T) {
	key := bytes.Repeat([]byte{0}, 32) // all zero: not checked here
	in := bytes.NewReader(append(append([]byte("SPLPBOOX\x09\x05abcde"), key...), "after"...))
	got := readWholeBootstrap(in)
	if len(got) != 10+5+32 || !bytes.HasPrefix(got, []byte("SPLPBOOX\x09\x05abcde")) {
		t.Fatalf("read %q", got)
	}
	if rest, _ := io.ReadAll(in); string(rest) != "after" {
		t.Fatalf("left %q after the bootstrap", rest)
	}
	for _, short := range []string{"", "SPLPBOOT\x02", "SPLPBOOT\x01\x09sess"} {
		if got := readWholeBootstrap(strings.NewReader(short)); string(got) != short {
			t.Fatalf("short input %q read as %q", short, got)
		}
	}
}
