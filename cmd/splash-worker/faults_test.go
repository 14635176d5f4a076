package main

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/worker/workertest"
)

// The default build has no fault flags: --fault and --list-faults are unknown flags, a usage
// error (status 2) before standard input is read, and the usage text names no fault.
//
// Spec: WRK-092
func TestDefaultBuildHasNoFaults(t *testing.T) {
	for _, args := range [][]string{{"--fault", "accept-replay"}, {"--fault=leak-key"}, {"--list-faults"}} {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(workerBinary, args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || stdout.Len() != 0 ||
			!strings.Contains(stderr.String(), "usage: flag provided but not defined") {
			t.Errorf("%v: %v, stdout %q, stderr %q; want status 2 for an unknown flag", args, err, stdout.String(), stderr.String())
		}
	}
	var stderr bytes.Buffer
	cmd := exec.Command(workerBinary, "-h")
	cmd.Stderr = &stderr
	_ = cmd.Run()
	usage := stderr.String()
	if !strings.Contains(usage, "usage: splash-worker") {
		t.Fatalf("usage text %q", usage)
	}
	if m := regexp.MustCompile(`(?i)\bfaults?\b|pause-|accept-replay|leak-key`).FindString(usage); m != "" {
		t.Errorf("the usage text shows %q", m)
	}
}

// The faulty build lists its catalog: the crash-test pauses, then one line per fault with its
// name, the requirement it breaks, the checks expected to catch it and a description.
func TestListFaults(t *testing.T) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(faultyWorker(t), "--list-faults")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() != 0 {
		t.Fatalf("--list-faults: %v, stderr %q", err, stderr.String())
	}
	name := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	rule := regexp.MustCompile(`^[A-Z]+-[0-9]{3}$`)
	check := regexp.MustCompile(`^CNF-[A-Z]+-[0-9]{2}$`)
	pauses := []string{"pause-after-admission", "pause-after-adapter", "pause-after-observation", "pause-after-reconciliation"}
	seen := map[string]bool{}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if len(lines) < len(pauses)+30 {
		t.Fatalf("%d lines:\n%s", len(lines), stdout.String())
	}
	for i, line := range lines {
		fields := strings.Split(line, "\t")
		if len(fields) != 4 || !name.MatchString(fields[0]) || seen[fields[0]] || fields[3] == "" {
			t.Errorf("line %d is %q; want a new name, a rule, checks and a description, tab-separated", i+1, line)
			continue
		}
		seen[fields[0]] = true
		if i < len(pauses) {
			if fields[0] != pauses[i] || fields[1] != "-" || fields[2] != "-" {
				t.Errorf("line %d is %q; want the pause %s with no rule and no checks", i+1, line, pauses[i])
			}
			continue
		}
		if !rule.MatchString(fields[1]) {
			t.Errorf("%s breaks %q, not a requirement ID", fields[0], fields[1])
		}
		for _, id := range strings.Split(fields[2], ",") {
			if !check.MatchString(id) {
				t.Errorf("%s names %q, not a check ID", fields[0], id)
			}
		}
	}
}

// --fault may be repeated and may list several faults separated by commas.
//
// Spec: WRK-030, CAN-022
func TestFaultFlagCombinesFaults(t *testing.T) {
	p := launchFaulty(t, "session-1", "--fault", "undeclared-safety-ok, cancel-in-baseline", "--fault", "skip-tag-check")
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

// An unknown fault name is a usage error.
//
// Spec: WRK-092
func TestUnknownFault(t *testing.T) {
	p := launchFaulty(t, "session-1", "--fault", "no-such-fault")
	p.expectExit(2, `usage: unknown fault "no-such-fault"`)
}

// Spec: WRK-093
func TestLeakKeyFault(t *testing.T) {
	p := launchFaulty(t, "session-1", "--fault", "leak-key")
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

// Spec: WRK-092
func TestExitZeroOnRejectFault(t *testing.T) {
	p := launchFaulty(t, "session-1", "--fault", "exit-zero-on-reject")
	p.open(grant(echoTool, 1, 0))
	p.write(append(p.host.Tampered(p.host.Invoke("r1", echoTool, text("x"))), '\n'))
	p.expectExit(0, "splash-worker: transport: worker: Protocol (open): protocol: InvalidAuthenticationTag")
}

// Spec: WRK-092
func TestWrongBootstrapStatusFault(t *testing.T) {
	host, err := workertest.NewHost("session-1")
	if err != nil {
		t.Fatal(err)
	}
	p := start(t, faultyWorker(t), host, "--fault", "wrong-bootstrap-status")
	p.write([]byte("SPLPBOOX......................................................"))
	p.expectExit(4, "transport:")
}
