package main

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/worker/workertest"
)

// binaries builds the worker for this test run: workerBinary is the released build, built
// once in TestMain; faultyWorker builds the faulty one on first use.
var (
	binaries     workertest.Binaries
	workerBinary string
)

func TestMain(m *testing.M) {
	var err error
	// SPLASH_WORKER_TAGS builds the worker under test with build tags, such as
	// splashprofile for profiling it under the benchmarks (docs/performance.md).
	if workerBinary, err = binaries.Worker(strings.Fields(os.Getenv("SPLASH_WORKER_TAGS"))...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	binaries.Remove()
	os.Exit(code)
}

// faultyWorker returns the faulty build of the worker (build tag splashfaults).
func faultyWorker(t testing.TB) string { return binaries.MustWorker(t, "splashfaults") }

// proc is one running worker process with the host side of its session.
type proc struct {
	t      testing.TB
	host   *workertest.Host
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	pipe   io.ReadCloser // the read end of stdout
	stderr *workertest.Output
	waited bool
	code   int
}

// launch starts the worker with args and writes the bootstrap for sessionID.
func launch(t testing.TB, sessionID string, args ...string) *proc {
	t.Helper()
	host, err := workertest.NewHost(sessionID)
	if err != nil {
		t.Fatal(err)
	}
	p := launchRaw(t, host, args...)
	p.writeBootstrap()
	return p
}

// launchFaulty is launch with the faulty build of the worker.
func launchFaulty(t testing.TB, sessionID string, args ...string) *proc {
	t.Helper()
	host, err := workertest.NewHost(sessionID)
	if err != nil {
		t.Fatal(err)
	}
	p := start(t, faultyWorker(t), host, args...)
	p.writeBootstrap()
	return p
}

// launchRaw starts the worker without writing anything to it.
func launchRaw(t testing.TB, host *workertest.Host, args ...string) *proc {
	t.Helper()
	return start(t, workerBinary, host, args...)
}

// start starts binary with args for host's session without writing anything to it.
func start(t testing.TB, binary string, host *workertest.Host, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(binary, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, host: host, cmd: cmd, stdin: stdin, stdout: bufio.NewReader(stdout), pipe: stdout, stderr: &workertest.Output{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !p.waited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		host.Close()
	})
	return p
}

// writeBootstrap writes the session's bootstrap. A worker that refuses its command line exits
// before it reads, so a broken pipe here is left for the test's exit expectation to judge.
func (p *proc) writeBootstrap() {
	p.t.Helper()
	if _, err := p.stdin.Write(p.host.Bootstrap()); err != nil && !errors.Is(err, syscall.EPIPE) {
		p.t.Fatalf("writing the bootstrap: %v (stderr: %s)", err, p.stderr)
	}
}

func (p *proc) write(b []byte) {
	p.t.Helper()
	if _, err := p.stdin.Write(b); err != nil {
		p.t.Fatalf("writing to the worker: %v (stderr: %s)", err, p.stderr)
	}
}

// send seals m at the next host sequence and writes it as one line.
func (p *proc) send(m protocol.Message) { p.write(append(p.host.Seal(m), '\n')) }

// open sends open_session for grants.
func (p *proc) open(grants ...protocol.CapabilityGrant) { p.send(p.host.OpenSession(grants...)) }

// next reads one answer line and describes it.
func (p *proc) next() string {
	p.t.Helper()
	line, err := readLine(p.stdout, 10*time.Second)
	if err != nil {
		p.t.Fatalf("no answer: %v (stderr: %s)", err, p.stderr)
	}
	return p.host.MustOpen(line)
}

func readLine(r *bufio.Reader, timeout time.Duration) ([]byte, error) {
	type result struct {
		line []byte
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		line, err := r.ReadBytes('\n')
		ch <- result{line, err}
	}()
	select {
	case res := <-ch:
		return res.line, res.err
	case <-time.After(timeout):
		return nil, errors.New("timed out")
	}
}

// expect asserts the next answer.
func (p *proc) expect(want string) {
	p.t.Helper()
	if got := p.next(); got != want {
		p.t.Fatalf("answer %q, want %q (stderr: %s)", got, want, p.stderr)
	}
}

// call sends m and expects the answer want.
func (p *proc) call(m protocol.Message, want string) {
	p.t.Helper()
	p.send(m)
	p.expect(want)
}

// end closes stdin (unless done already), waits for the exit and checks that nothing more was
// written to stdout. It returns the exit status and the diagnostics.
func (p *proc) end() (int, string) {
	p.t.Helper()
	_ = p.stdin.Close()
	rest := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(p.stdout)
		rest <- b
	}()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		p.waited = true
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			p.t.Fatalf("wait: %v", err)
		}
		p.code = p.cmd.ProcessState.ExitCode()
	case <-time.After(20 * time.Second):
		p.t.Fatalf("worker did not exit (stderr: %s)", p.stderr)
	}
	if extra := <-rest; len(extra) != 0 {
		p.t.Fatalf("worker wrote %q after its last expected answer", extra)
	}
	p.checkNoKey()
	return p.code, p.stderr.String()
}

// expectExit ends the process and asserts its status and a diagnostic substring.
func (p *proc) expectExit(code int, diagnostic string) {
	p.t.Helper()
	got, stderr := p.end()
	if got != code || !strings.Contains(stderr, diagnostic) {
		p.t.Fatalf("exit %d with %q, want %d with %q", got, stderr, code, diagnostic)
	}
}

// checkNoKey asserts that the session key appears nowhere in the diagnostics (WRK-093).
func (p *proc) checkNoKey() {
	boot := p.host.Bootstrap()
	key := boot[len(boot)-32:]
	stderr := p.stderr.String()
	if strings.Contains(stderr, hex.EncodeToString(key)) || strings.Contains(stderr, string(key)) {
		p.t.Fatalf("diagnostics contain the session key")
	}
}

// waitFor waits until stderr contains s.
func (p *proc) waitFor(s string) {
	p.t.Helper()
	p.stderr.WaitFor(p.t, s)
}

// kill sends SIGKILL and reaps the process.
func (p *proc) kill() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		p.t.Fatal(err)
	}
	_ = p.cmd.Wait()
	p.waited = true
}

func grant(tool string, calls, compensations uint32) protocol.CapabilityGrant {
	return workertest.Grant(tool, profile.Formats[tool], calls, compensations)
}

// effectLines returns the effect log lines of kind for key.
func effectLines(t testing.TB, path, kind, key string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	lines, _, err := profile.ParseEffectLog(data, canonjson.Preserve)
	if err != nil {
		t.Fatalf("effect log: %v", err)
	}
	n := 0
	for _, l := range lines {
		if string(l.Kind) == kind && l.OperationKey == key {
			n++
		}
	}
	return n
}
