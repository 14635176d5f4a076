//go:build linux

package transport_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
	"github.com/splashv5/conform/impl/transport/inprocess"
	"github.com/splashv5/conform/impl/worker"
)

// deadlineSlack is how much later than its deadline a timed-out exchange may return: enough
// for the kill, the reap and a loaded machine, far below the worker's own wait.
const deadlineSlack = 3 * time.Second

// startSilentWorker starts a worker process group that reads nothing and never answers: a
// shell leader with a sleeping child, so the group has more than one member.
func startSilentWorker(t *testing.T) *transport.Process {
	t.Helper()
	p, err := transport.StartProcess(transport.ProcessConfig{Path: "/bin/sh", Args: []string{"-c", "sleep 600 & sleep 600; wait"},
		SessionID: testSession})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = p.Terminate() })
	return p
}

// liveGroupMembers lists the processes of group pgid that are not zombies.
func liveGroupMembers(pgid int) []string {
	var live []string
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		// The fields after the parenthesised command: state ppid pgrp ...
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 3 || f[0] == "Z" || f[2] != strconv.Itoa(pgid) {
			continue
		}
		live = append(live, d.Name())
	}
	return live
}

// wantGroupGone fails unless the worker's whole process group has ended.
func wantGroupGone(t *testing.T, p *transport.Process) {
	t.Helper()
	for end := time.Now().Add(deadlineSlack); ; {
		live := liveGroupMembers(p.Pid())
		if len(live) == 0 {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("process group %d still has live members %v", p.Pid(), live)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// wantTimeout checks a timed-out exchange: ErrIndeterminate after DeadlineElapsed, returned no
// earlier than the deadline and no later than the deadline plus the slack.
func wantTimeout(t *testing.T, err error, began time.Time, deadline time.Duration) {
	t.Helper()
	took := time.Since(began)
	var e *transport.Error
	if !errors.As(err, &e) || e.Kind != transport.ErrIndeterminate || e.Cause != transport.CauseDeadlineElapsed {
		t.Fatalf("err = %v, want an indeterminate outcome after DeadlineElapsed", err)
	}
	if took < deadline || took > deadline+deadlineSlack {
		t.Fatalf("returned after %v for a deadline of %v", took, deadline)
	}
}

// boundedExchange runs exchange and fails the test, instead of hanging, when it has not
// returned by the deadline plus the slack: a transport that misses its deadline is then
// stopped by terminating the worker, so that the exchange returns and the test ends.
func boundedExchange(t *testing.T, p *transport.Process, deadline time.Duration, exchange func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- exchange() }()
	select {
	case err := <-done:
		return err
	case <-time.After(deadline + deadlineSlack):
	}
	if _, err := p.Terminate(); err != nil {
		t.Logf("terminate: %v", err)
	}
	select {
	case <-done:
	case <-time.After(deadlineSlack):
	}
	t.Fatalf("the exchange did not return within its deadline of %v (plus %v)", deadline, deadlineSlack)
	return nil
}

func silentManifest(t *testing.T, tool string, format protocol.EnvelopeFormat) protocol.CapabilityManifest {
	t.Helper()
	m, err := protocol.NewCapabilityManifest(testSession, []protocol.CapabilityGrant{grant(tool, format, 4)})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// openSilent starts a silent worker and sends it open_session.
func openSilent(t *testing.T, m protocol.CapabilityManifest) (*transport.Process, *transport.Channel) {
	t.Helper()
	p := startSilentWorker(t)
	ch := transport.NewChannel(p.Output(), p.Input(), canonjson.Preserve)
	if err := transport.SendOpenSession(p.HostAuthenticator(), ch, m); err != nil {
		t.Fatal(err)
	}
	return p, ch
}

// Spec: TRN-110
// The single-flight transport, supervised by the worker's process, returns a timeout at its
// deadline against a worker that never answers, and the worker's process group is gone; the
// transport is poisoned.
func TestDeadlineFrameTransportSilentWorker(t *testing.T) {
	m := silentManifest(t, toolText, protocol.FormatText)
	p, ch := openSilent(t, m)
	tr, err := transport.NewSupervisedFrameTransport(p.HostAuthenticator(), ch, p)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tr.Dispatch(textInvocation(t, "r1", "x"), 0)
	wantKind(t, err, transport.ErrInvalidDeadline)
	const d = 300 * time.Millisecond
	began := time.Now()
	_, err = tr.Dispatch(textInvocation(t, "r1", "x"), d)
	wantTimeout(t, err, began, d)
	wantGroupGone(t, p)
	if !tr.Poisoned() {
		t.Fatal("a timed-out transport is still usable")
	}
}

// Spec: TRN-110
// Without a supervisor the single-flight transport still returns at its deadline; stopping
// the worker is then the host's part, and the transport is poisoned.
func TestDeadlineFrameTransportUnsupervised(t *testing.T) {
	m := silentManifest(t, toolText, protocol.FormatText)
	p, ch := openSilent(t, m)
	tr, err := transport.NewFrameTransport(p.HostAuthenticator(), ch)
	if err != nil {
		t.Fatal(err)
	}
	const d = 200 * time.Millisecond
	began := time.Now()
	err = boundedExchange(t, p, d, func() error {
		_, err := tr.Dispatch(textInvocation(t, "r1", "x"), d)
		return err
	})
	wantTimeout(t, err, began, d)
	if !tr.Poisoned() {
		t.Fatal("a timed-out transport is still usable")
	}
	if _, err := p.Terminate(); err != nil {
		t.Fatal(err)
	}
	wantGroupGone(t, p)
}

// Spec: TRN-110, RUN-200
// A protocol-backed tool over a supervised single-flight transport: the client's deadline
// reaches the transport, the call fails without detail at the deadline, the transport is
// discarded and the worker's process group is gone.
func TestDeadlineProtocolWorkerClientSilentWorker(t *testing.T) {
	m := silentManifest(t, toolJSON, protocol.FormatJSON)
	p, ch := openSilent(t, m)
	tr, err := transport.NewSupervisedFrameTransport(p.HostAuthenticator(), ch, p)
	if err != nil {
		t.Fatal(err)
	}
	client, err := host.NewProtocolWorkerClient(m, tr)
	if err != nil {
		t.Fatal(err)
	}
	const d = 300 * time.Millisecond
	if err := client.SetDeadline(d); err != nil {
		t.Fatal(err)
	}
	rt, err := host.New(host.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.RegisterProtocolJSONTool(host.JSONPolicy(toolJSON), host.Metadata{}, client); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_, err = rt.CallJSON(toolJSON, `{"n":1}`)
	took := time.Since(began)
	var te *host.ToolError
	if !errors.As(err, &te) || te.Kind != host.ToolFailed || te.Message != "worker transport failed" {
		t.Fatalf("call: %v", err)
	}
	if took < d || took > d+deadlineSlack {
		t.Fatalf("returned after %v for a deadline of %v", took, d)
	}
	if !tr.Poisoned() {
		t.Fatal("the client did not discard the timed-out transport")
	}
	wantGroupGone(t, p)
}

// Spec: TRN-110, TRN-111
// The one-shot durable transport, both its own exchange and a pre-sealed one, returns a
// timeout at the deadline it was given and the worker's process group is gone.
func TestDeadlineOperationTransportSilentWorker(t *testing.T) {
	const d = 300 * time.Millisecond
	for _, sealed := range []bool{false, true} {
		t.Run("sealed="+strconv.FormatBool(sealed), func(t *testing.T) {
			m := silentManifest(t, profile.ToolDurableRecord, protocol.FormatJSON)
			p, ch := openSilent(t, m)
			tr, err := transport.NewSupervisedOperationTransport(m, p.HostAuthenticator(), ch, p)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Deadline() != transport.DefaultExchangeDeadline {
				t.Fatalf("default deadline %v", tr.Deadline())
			}
			wantKind(t, tr.SetDeadline(0), transport.ErrInvalidDeadline)
			if err := tr.SetDeadline(d); err != nil {
				t.Fatal(err)
			}
			payload := protocol.JSONPayload(canonjson.Object(canonjson.Entry{Key: "n", Value: canonjson.Uint(1)}))
			req, err := protocol.NewOperationDispatchRequest(testSession, "d1", profile.ToolDurableRecord, "op-1", payload)
			if err != nil {
				t.Fatal(err)
			}
			var line []byte
			if sealed {
				_, sealedLine, serr := p.HostAuthenticator().Seal(protocol.DispatchOperationMessage{Request: req})
				if serr != nil {
					t.Fatal(serr)
				}
				line = sealedLine
			}
			began := time.Now()
			err = boundedExchange(t, p, d, func() error {
				if sealed {
					_, err := tr.ExchangeSealed(line)
					return err
				}
				_, err := tr.DispatchOperation(req)
				return err
			})
			wantTimeout(t, err, began, d)
			wantGroupGone(t, p)
			if !tr.Poisoned() {
				t.Fatal("a timed-out transport is still usable")
			}
		})
	}
}

// Spec: TRN-111, RUN-200
// The supervised multiplexed session arms the claim's remaining deferred deadline when it is
// shorter than the session's: against a worker that never answers, the invocation is
// indeterminate at the claim's deadline, the runtime's operation stays claimed, and the process
// group is gone.
func TestDeadlineSupervisedSessionUsesClaimDeadline(t *testing.T) {
	p, stderr := startWorker(t, testSession, nil)
	m := slowManifest(t, testSession, 4)
	mux, err := transport.NewMultiplexed(m, p.HostAuthenticator(), p.Output(), p.Input())
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
	const d = 400 * time.Millisecond
	if err := rt.RegisterExternalTool(host.NewPolicy(profile.ToolSlowUncooperative).WithDeadline(d), host.Metadata{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Start(profile.ToolSlowUncooperative, "60000"); err != nil {
		t.Fatal(err)
	}
	inv, _ := rt.ClaimNextExternal()
	began := time.Now()
	if err := s.StartExternalTool(inv, "request-1"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d+deadlineSlack)
	defer cancel()
	ev, err := s.WaitExternalToolEvent(ctx)
	took := time.Since(began)
	// The kill ends the worker's stream, so the deadline is reported either as an event or as
	// the indeterminate transport failure; both name DeadlineElapsed.
	var e *transport.Error
	switch {
	case err == nil && ev.Kind == transport.SupervisedIndeterminate && ev.Cause == transport.CauseDeadlineElapsed:
	case errors.As(err, &e) && e.Kind == transport.ErrIndeterminate && e.Cause == transport.CauseDeadlineElapsed:
	default:
		t.Fatalf("event %+v, %v (worker: %s)", ev, err, stderr)
	}
	if took < d-10*time.Millisecond || took > d+deadlineSlack {
		t.Fatalf("indeterminate after %v for a claim deadline of %v", took, d)
	}
	if info, ok := rt.Operation(inv.ID); !ok || info.State != host.StateClaimed {
		t.Fatalf("operation = %+v", info)
	}
	wantGroupGone(t, p)
}

// blockingAdapter never answers an invocation, whatever its context says.
type blockingAdapter struct {
	worker.Unimplemented
	release chan struct{}
}

func (blockingAdapter) InvocationSafety() worker.InvocationSafety { return worker.ReadOnly }

func (a blockingAdapter) Invoke(protocol.ToolInvocation, protocol.CapabilityGrant) (protocol.ToolPayload, error) {
	<-a.release
	return protocol.TextPayload("late"), nil
}

// Spec: TRN-110
// The in-process transport returns a timeout at its deadline even when the adapter never
// answers, and is poisoned; there is no process to stop.
func TestDeadlineInProcessSilentAdapter(t *testing.T) {
	hostAuth, workerAuth := authPair(t, testSession)
	m := silentManifest(t, toolText, protocol.FormatText)
	reg := worker.NewRegistry()
	a := blockingAdapter{release: make(chan struct{})}
	defer close(a.release)
	if err := reg.Register(toolText, a); err != nil {
		t.Fatal(err)
	}
	s := openInProcess(t, hostAuth, workerAuth, m, reg)
	tr, err := inprocess.New(hostAuth, s, &memoryPersister{})
	if err != nil {
		t.Fatal(err)
	}
	const d = 200 * time.Millisecond
	began := time.Now()
	_, err = tr.Dispatch(textInvocation(t, "r1", "x"), d)
	wantTimeout(t, err, began, d)
	if !tr.Poisoned() {
		t.Fatal("a timed-out transport is still usable")
	}
	_, err = tr.Dispatch(textInvocation(t, "r2", "x"), d)
	wantKind(t, err, transport.ErrPoisoned)
}
