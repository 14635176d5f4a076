//go:build linux

package transport_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
	"github.com/splashv5/conform/impl/transport/transporttest"
	"github.com/splashv5/conform/impl/worker"
	"github.com/splashv5/conform/impl/worker/workertest"
)

// workerBinary is the reference worker, built once for the package's tests.
var (
	binaries     workertest.Binaries
	workerBinary string
)

func TestMain(m *testing.M) {
	var err error
	if workerBinary, err = binaries.Worker(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	binaries.Remove()
	os.Exit(code)
}

// startWorker launches the reference worker for session under clock (nil: the system clock)
// and terminates it when the test ends.
func startWorker(t testing.TB, session string, clock transport.Clock) (*transport.Process, *workertest.Output) {
	t.Helper()
	return transporttest.StartWorker(t, workerBinary, session, clock, []string{"SPLASH_TEST=1"})
}

// slowManifest grants the two cancellable slow tools of the profile, so the worker runs its
// cancellable driver.
func slowManifest(t testing.TB, session string, calls uint32) protocol.CapabilityManifest {
	t.Helper()
	m, err := protocol.NewCapabilityManifest(session, []protocol.CapabilityGrant{
		grant(profile.ToolSlowCancellable, protocol.FormatText, calls),
		grant(profile.ToolSlowUncooperative, protocol.FormatText, calls),
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func slowInvocation(t testing.TB, requestID, tool, millis string) protocol.ToolInvocation {
	t.Helper()
	inv, err := protocol.NewToolInvocation(testSession, requestID, tool, protocol.TextPayload(millis))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// Spec: TRN-040, TRN-043, TRN-050, TRN-093
// Against the reference worker: a multiplexed invoke round trip, then a graceful close after
// which the worker exits cleanly.
func TestWorkerMultiplexedRoundTrip(t *testing.T) {
	p, stderr := startWorker(t, testSession, nil)
	mux, err := transport.NewMultiplexed(slowManifest(t, testSession, 4), p.HostAuthenticator(), p.Output(), p.Input())
	if err != nil {
		t.Fatal(err)
	}
	for i, millis := range []string{"0", "007"} {
		inv, err := mux.Start(slowInvocation(t, "request-"+strconv.Itoa(i+1), profile.ToolSlowCancellable, millis))
		if err != nil {
			t.Fatal(err)
		}
		out, err := inv.Wait(waitCtx(t))
		if err != nil || out.Cancelled || out.Result.Payload.Text != "done "+millis {
			t.Fatalf("round trip %d: %+v, %v (worker: %s)", i, out, err, stderr)
		}
	}
	if err := mux.Close(); err != nil {
		t.Fatal(err)
	}
	term := p.Wait()
	if !term.Exited || term.ExitCode != worker.ExitClean || term.Forced {
		t.Fatalf("worker ended with %s (stderr: %s)", term, stderr)
	}
}

// Spec: TRN-052, TRN-072, TRN-074, TRN-082, TRN-084
// Against the reference worker: a supervised external tool on the cancellable slow adapter is
// cancelled cooperatively; the authenticated acknowledgement confirms the runtime's
// cancellation.
func TestWorkerCancellationAcknowledged(t *testing.T) {
	p, stderr := startWorker(t, testSession, transporttest.NewManualClock())
	mux, err := transport.NewMultiplexed(slowManifest(t, testSession, 4), p.HostAuthenticator(), p.Output(), p.Input())
	if err != nil {
		t.Fatal(err)
	}
	s, err := transport.NewSupervisedSession(mux, p, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := host.New(host.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.RegisterExternalTool(host.NewPolicy(profile.ToolSlowCancellable), host.Metadata{}); err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(profile.ToolSlowCancellable, "60000")
	if err != nil {
		t.Fatal(err)
	}
	inv, _ := rt.ClaimNextExternal()
	if err := s.StartExternalTool(inv, "request-1"); err != nil {
		t.Fatal(err)
	}
	req, err := rt.RequestExternalCancellation(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RequestExternalToolCancellation(req, "cancel-1"); err != nil {
		t.Fatal(err)
	}
	var last transport.SupervisedPoll
	for {
		if err := s.Wait(waitCtx(t)); err != nil {
			t.Fatalf("%v (worker: %s)", err, stderr)
		}
		last, err = s.PollExternalTool(rt)
		if err != nil {
			t.Fatalf("%v (worker: %s)", err, stderr)
		}
		if last.Kind != transport.SupervisedWorker || last.Poll.Kind != transport.ExternalPending {
			break
		}
	}
	if last.Kind != transport.SupervisedWorker || last.Poll.Kind != transport.ExternalCancelled {
		t.Fatalf("poll %+v", last)
	}
	info, _ := rt.Operation(id)
	if info.State != host.StateReady || info.Err == nil || info.Err.Kind != host.ToolCancelled {
		t.Fatalf("runtime %+v", info)
	}
	sup, err := s.Close()
	if err != nil {
		t.Fatal(err)
	}
	if term := sup.(*transport.Process).Wait(); !term.Exited || term.ExitCode != worker.ExitClean {
		t.Fatalf("worker ended with %s", term)
	}
}

// Spec: TRN-084, TRN-085, TRN-087, TRN-088, TRN-094, TRN-095
// Against the reference worker: an uncooperative adapter ignores a cancellation; the
// invocation deadline elapses on the injected clock, the supervisor kills the worker's process
// group, and the outcome is indeterminate: the runtime's operation stays pending and is not
// confirmed as cancelled.
func TestWorkerDeadlineKilledIsIndeterminate(t *testing.T) {
	clock := transporttest.NewManualClock()
	p, _ := startWorker(t, testSession, clock)
	mux, err := transport.NewMultiplexed(slowManifest(t, testSession, 4), p.HostAuthenticator(), p.Output(), p.Input())
	if err != nil {
		t.Fatal(err)
	}
	s, err := transport.NewSupervisedSession(mux, p, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	rt, _ := host.New(host.Config{})
	if err := rt.RegisterExternalTool(host.NewPolicy(profile.ToolSlowUncooperative), host.Metadata{}); err != nil {
		t.Fatal(err)
	}
	id, _ := rt.Start(profile.ToolSlowUncooperative, "60000")
	inv, _ := rt.ClaimNextExternal()
	if err := s.StartExternalTool(inv, "request-1"); err != nil {
		t.Fatal(err)
	}
	req, _ := rt.RequestExternalCancellation(id)
	if err := s.RequestExternalToolCancellation(req, "cancel-1"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(4 * time.Second)
	if ev, err := s.PollExternalToolEvent(); err != nil || ev.Event.Kind != transport.ExternalPending {
		t.Fatalf("before the deadline: %+v, %v", ev, err)
	}
	clock.Advance(time.Second)
	_, err = s.WaitExternalToolEvent(waitCtx(t))
	var e *transport.Error
	if !errors.As(err, &e) || e.Kind != transport.ErrIndeterminate || e.Cause != transport.CauseDeadlineElapsed ||
		e.ExternalID != id || e.Termination == nil || !e.Termination.Forced || e.Termination.Signal != "killed" {
		t.Fatalf("outcome %v (%+v)", err, e)
	}
	info, _ := rt.Operation(id)
	if info.State != host.StateCancellationRequested {
		t.Fatalf("runtime state %s, want the cancellation still pending", info.State)
	}
	if !s.Poisoned() {
		t.Fatal("the session is not poisoned")
	}
}

// Spec: TRN-003, TRN-011, TRN-012, TRN-013
// Against the reference worker: synchronous ordinary calls over the JSON-line channel, then the
// worker dies; the next call fails on the broken connection and poisons both the channel and
// the transport.
func TestWorkerBrokenConnectionPoisonsChannel(t *testing.T) {
	p, stderr := startWorker(t, testSession, nil)
	m, err := protocol.NewCapabilityManifest(testSession, []protocol.CapabilityGrant{grant(profile.ToolTextEcho, protocol.FormatText, 8)})
	if err != nil {
		t.Fatal(err)
	}
	auth := p.HostAuthenticator()
	ch := transport.NewChannel(p.Output(), p.Input(), canonjson.Preserve)
	if err := transport.SendOpenSession(auth, ch, m); err != nil {
		t.Fatal(err)
	}
	tr, err := transport.NewFrameTransport(auth, ch)
	if err != nil {
		t.Fatal(err)
	}
	echo, _ := protocol.NewToolInvocation(testSession, "request-1", profile.ToolTextEcho, protocol.TextPayload("ping"))
	res, err := tr.Dispatch(echo, testDeadline)
	if err != nil || res.Payload.Text != "ping" {
		t.Fatalf("echo: %+v, %v (worker: %s)", res, err, stderr)
	}
	if err := syscall.Kill(p.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.Exited()
	echo2, _ := protocol.NewToolInvocation(testSession, "request-2", profile.ToolTextEcho, protocol.TextPayload("ping"))
	_, err = tr.Dispatch(echo2, testDeadline)
	wantKind(t, err, transport.ErrChannel)
	var le *jsonline.Error
	if !errors.As(err, &le) || (le.Kind != jsonline.ErrIO && le.Kind != jsonline.ErrUnexpectedEndOfStream) {
		t.Fatalf("broken connection reported as %v", err)
	}
	if !ch.Poisoned() || !tr.Poisoned() {
		t.Fatalf("channel poisoned %v, transport poisoned %v", ch.Poisoned(), tr.Poisoned())
	}
	_, err = tr.Dispatch(echo2, testDeadline)
	wantKind(t, err, transport.ErrPoisoned)
}

// Spec: TRN-020, TRN-113, TRN-022
// Against the reference worker: one durable dispatch through the one-shot transport.
func TestWorkerOneShotDispatch(t *testing.T) {
	p, stderr := startWorker(t, testSession, nil)
	m, err := protocol.NewCapabilityManifest(testSession, []protocol.CapabilityGrant{grant(profile.ToolDurableRecord, protocol.FormatJSON, 2)})
	if err != nil {
		t.Fatal(err)
	}
	auth := p.HostAuthenticator()
	ch := transport.NewChannel(p.Output(), p.Input(), canonjson.Preserve)
	if err := transport.SendOpenSession(auth, ch, m); err != nil {
		t.Fatal(err)
	}
	tr, err := transport.NewOperationTransport(m, auth, ch)
	if err != nil {
		t.Fatal(err)
	}
	req, err := protocol.NewOperationDispatchRequest(testSession, "request-1", profile.ToolDurableRecord, "op-1", jsonPayload(t, `{"value":7}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := tr.DispatchOperation(req)
	if err != nil {
		t.Fatalf("%v (worker: %s)", err, stderr)
	}
	if got := string(res.Status.Payload.JSON.JSON()); res.Status.State != protocol.StateSucceeded || got != `{"operation_key":"op-1","value":7}` {
		t.Fatalf("status %+v %s", res.Status, got)
	}
	if !tr.Consumed() {
		t.Fatal("not consumed")
	}
}

// Spec: TRN-093
// The key reaches the worker only through the bootstrap: the worker's arguments and
// environment are exactly the configured ones, and two launches get different keys (a frame
// sealed for one worker is rejected by the other).
func TestProcessKeyOnlyThroughBootstrap(t *testing.T) {
	p1, _ := startWorker(t, testSession, nil)
	p2, stderr2 := startWorker(t, testSession, nil)
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p1.Pid()))
	if err != nil {
		t.Skip("no /proc:", err)
	}
	if string(cmdline) != workerBinary+"\x00" {
		t.Fatalf("worker arguments %q", cmdline)
	}
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p1.Pid()))
	if err != nil {
		t.Fatal(err)
	}
	if string(environ) != "SPLASH_TEST=1\x00" {
		t.Fatalf("worker environment %q", environ)
	}
	_, line, err := p1.HostAuthenticator().Seal(protocol.OpenSessionMessage{Manifest: slowManifest(t, testSession, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p2.Input().Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
	term := p2.Wait()
	if !term.Exited || term.ExitCode == worker.ExitClean || term.Forced {
		t.Fatalf("worker 2 accepted a frame sealed with worker 1's key: %s", term)
	}
	if !strings.Contains(stderr2.String(), "InvalidAuthenticationTag") {
		t.Fatalf("worker 2 stderr: %s", stderr2)
	}
}

// Spec: TRN-094, TRN-095, TRN-096
// The deadline kills the whole process group, children included; a verdict after a natural
// exit is a termination; an unused token is refused.
func TestProcessGroupKilledAtDeadline(t *testing.T) {
	clock := transporttest.NewManualClock()
	p, err := transport.StartProcess(transport.ProcessConfig{Path: "/bin/sh", Args: []string{"-c", "sleep 60 & echo $!; exec sleep 60"},
		SessionID: testSession, Clock: clock})
	if err != nil {
		t.Skip("no /bin/sh:", err)
	}
	defer p.Terminate()
	child, err := bufio.NewReader(p.Output()).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	childPid, err := strconv.Atoi(strings.TrimSpace(child))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.FinishInvocation(7)
	if !errors.Is(err, transport.ErrUnknownSupervision) {
		t.Fatalf("finish without arming: %v", err)
	}
	token, err := p.BeginInvocation(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.BeginInvocation(time.Second); !errors.Is(err, transport.ErrSupervisionArmed) {
		t.Fatalf("second arming: %v", err)
	}
	clock.Advance(time.Second)
	fin, err := p.FinishInvocation(token)
	if err != nil || fin.Verdict != transport.FinishDeadlineElapsed || !fin.Termination.Forced || fin.Termination.Signal != "killed" {
		t.Fatalf("finish %+v, %v", fin, err)
	}
	if !processGone(childPid) {
		t.Fatalf("the worker's child %d survived the group kill", childPid)
	}

	// The worker reads the start of its bootstrap before it exits, so that writing the
	// bootstrap cannot race with its exit (a pipe with no reader fails the write).
	q, err := transport.StartProcess(transport.ProcessConfig{Path: "/bin/sh", Args: []string{"-c", "head -c 1 >/dev/null; exit 3"}, SessionID: testSession, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	token, _ = q.BeginInvocation(time.Minute)
	<-q.Exited()
	fin, err = q.FinishInvocation(token)
	if err != nil || fin.Verdict != transport.FinishTerminated || !fin.Termination.Exited || fin.Termination.ExitCode != 3 || fin.Termination.Forced {
		t.Fatalf("finish after exit %+v, %v", fin, err)
	}
	// Terminating an exited worker does not signal anything and reports its exit.
	for range 2 {
		if term, err := q.Terminate(); err != nil || term.Forced || term.ExitCode != 3 {
			t.Fatalf("terminate %+v, %v", term, err)
		}
	}
}

// processGone waits (bounded) until pid no longer runs: it is gone or a zombie.
func processGone(pid int) bool {
	for range 500 {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// BenchmarkWorkerMultiplexedRoundTrip measures one host-to-worker invoke round trip through
// the multiplexed transport against the reference worker (the cancellable slow adapter with a
// zero wait). A session holds at most 1,024 ids, so a fresh worker is started every 1,000
// calls, outside the timed region.
func BenchmarkWorkerMultiplexedRoundTrip(b *testing.B) {
	const perSession = 1000
	var mux *transport.Multiplexed
	var proc *transport.Process
	stop := func() {
		if mux != nil {
			if err := mux.Close(); err != nil {
				b.Fatal(err)
			}
			proc.Wait()
		}
	}
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		if n%perSession == 0 {
			b.StopTimer()
			stop()
			var err error
			proc, err = transport.StartProcess(transport.ProcessConfig{Path: workerBinary, SessionID: testSession})
			if err != nil {
				b.Fatal(err)
			}
			mux, err = transport.NewMultiplexed(slowManifest(b, testSession, perSession), proc.HostAuthenticator(), proc.Output(), proc.Input())
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		n++
		inv, err := mux.Start(slowInvocation(b, "request-"+strconv.Itoa(n), profile.ToolSlowCancellable, "0"))
		if err != nil {
			b.Fatal(err)
		}
		out, err := inv.Wait(b.Context())
		if err != nil || out.Result.Payload.Text != "done 0" {
			b.Fatalf("%+v, %v", out, err)
		}
	}
	b.StopTimer()
	stop()
}

// Spec: TRN-080, TRN-095
// The session deadline bounds the worker's whole life: when it elapses the group is killed
// and the armed invocation is reported SessionDeadlineElapsed.
func TestProcessSessionDeadline(t *testing.T) {
	clock := transporttest.NewManualClock()
	p, err := transport.StartProcess(transport.ProcessConfig{Path: "/bin/sh", Args: []string{"-c", "exec sleep 60"},
		SessionID: testSession, Clock: clock, SessionDeadline: 10 * time.Second})
	if err != nil {
		t.Skip("no /bin/sh:", err)
	}
	defer p.Terminate()
	token, err := p.BeginInvocation(time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(10 * time.Second)
	<-p.Exited()
	fin, err := p.FinishInvocation(token)
	if err != nil || fin.Verdict != transport.FinishSessionDeadlineElapsed || !fin.Termination.Forced || fin.Termination.Signal != "killed" {
		t.Fatalf("finish %+v, %v", fin, err)
	}
}

// Spec: TRN-010, TRN-012
// Against the reference worker: the single-flight transport backs a host protocol worker
// client, which authorizes, dispatches and validates a JSON call.
func TestWorkerProtocolClient(t *testing.T) {
	p, stderr := startWorker(t, testSession, nil)
	m, err := protocol.NewCapabilityManifest(testSession, []protocol.CapabilityGrant{grant(profile.ToolJSONEcho, protocol.FormatJSON, 2)})
	if err != nil {
		t.Fatal(err)
	}
	auth := p.HostAuthenticator()
	ch := transport.NewChannel(p.Output(), p.Input(), canonjson.Preserve)
	if err := transport.SendOpenSession(auth, ch, m); err != nil {
		t.Fatal(err)
	}
	tr, err := transport.NewFrameTransport(auth, ch)
	if err != nil {
		t.Fatal(err)
	}
	client, err := host.NewProtocolWorkerClient(m, tr)
	if err != nil {
		t.Fatal(err)
	}
	in, _ := canonjson.ParseValue([]byte(`{"b":[1,2],"a":"x"}`), canonjson.Preserve)
	out, terr := client.DispatchJSON(host.JSONToolRequest{Name: profile.ToolJSONEcho, Input: in})
	if terr != nil || string(out.JSON()) != `{"a":"x","b":[1,2]}` {
		t.Fatalf("echo %s, %v (worker: %s)", out.JSON(), terr, stderr)
	}
}

// Spec: TRN-097, TRN-022
// A durable session cannot be cancelled or closed with close_session by the one-shot transport:
// closing the worker's standard input after the exchange, at a frame boundary, ends it cleanly.
// CloseInput is idempotent and writing afterwards fails.
func TestProcessCloseInputEndsDurableSession(t *testing.T) {
	p, stderr := startWorker(t, testSession, nil)
	m, err := protocol.NewCapabilityManifest(testSession, []protocol.CapabilityGrant{grant(profile.ToolDurableRecord, protocol.FormatJSON, 2)})
	if err != nil {
		t.Fatal(err)
	}
	auth := p.HostAuthenticator()
	ch := transport.NewChannel(p.Output(), p.Input(), canonjson.Preserve)
	if err := transport.SendOpenSession(auth, ch, m); err != nil {
		t.Fatal(err)
	}
	tr, err := transport.NewOperationTransport(m, auth, ch)
	if err != nil {
		t.Fatal(err)
	}
	req, err := protocol.NewOperationDispatchRequest(testSession, "request-1", profile.ToolDurableRecord, "op-1", jsonPayload(t, `{"value":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.DispatchOperation(req); err != nil {
		t.Fatalf("%v (worker: %s)", err, stderr)
	}
	for i := 0; i < 2; i++ {
		if err := p.CloseInput(); err != nil {
			t.Fatalf("close %d: %v", i+1, err)
		}
	}
	if _, err := p.Input().Write([]byte("\n")); err == nil {
		t.Fatal("writing after CloseInput succeeded")
	}
	term := p.Wait()
	if !term.Exited || term.ExitCode != worker.ExitClean || term.Forced {
		t.Fatalf("worker ended with %s (stderr: %s)", term, stderr)
	}
	if err := p.CloseInput(); err != nil {
		t.Fatalf("close after Wait: %v", err)
	}
}

// Spec: TRN-097
// Closing the input of a worker that has not finished its open_session frame is not a frame
// boundary: the worker fails instead of exiting cleanly.
func TestProcessCloseInputMidFrameIsNotClean(t *testing.T) {
	p, stderr := startWorker(t, testSession, nil)
	if _, err := p.Input().Write([]byte(`{"sequence":0,`)); err != nil {
		t.Fatal(err)
	}
	if err := p.CloseInput(); err != nil {
		t.Fatal(err)
	}
	if term := p.Wait(); !term.Exited || term.ExitCode == worker.ExitClean || term.Forced {
		t.Fatalf("worker ended with %s (stderr: %s)", term, stderr)
	}
}
