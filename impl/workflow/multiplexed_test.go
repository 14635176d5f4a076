package workflow_test

import (
	"io"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
	"github.com/splashv5/conform/impl/workflow"
)

// Spec: WFL-030, WFL-032
// A completion of the retained ordinary invocation settles its promise through the engine and
// the step goes on; events for another operation are refused; non-terminal events change
// nothing.
func TestWorkerCompletionAdvancesTheRetainedStep(t *testing.T) {
	f := newFixture(t)
	id := f.start("succeed", "1")
	inv, ok, err := f.e.ClaimOrdinary()
	if err != nil || !ok || inv.ID != id || f.e.Step() != workflow.StepSuspended {
		t.Fatalf("claim %+v %v %v, step %v", inv, ok, err, f.e.Step())
	}
	for _, k := range []transport.ExternalEventKind{transport.ExternalPending, transport.ExternalCancellationTooLate, transport.ExternalCancellationUnsupported} {
		if p, err := f.e.ApplyWorkerEvent(transport.ExternalEvent{Kind: k}); err != nil || p.Kind != k || f.e.Step() != workflow.StepSuspended {
			t.Fatalf("%v: %+v %v", k, p, err)
		}
	}
	_, err = f.e.ApplyWorkerEvent(transport.ExternalEvent{Kind: transport.ExternalCompleted, ID: id + 1, Output: `{}`})
	wantKind(t, err, workflow.ErrBindingMismatch)
	p, err := f.e.ApplyWorkerEvent(transport.ExternalEvent{Kind: transport.ExternalCompleted, ID: id, Output: `{"ok":true}`})
	if err != nil || p.Settlement.Output != `{"ok":true}` || f.state(id) != host.StateReady || f.e.Step() != workflow.StepIdle {
		t.Fatalf("completion %+v %v, state %v, step %v", p, err, f.state(id), f.e.Step())
	}
	if err := f.e.ApproveStep("publish"); err != nil {
		t.Fatal(err)
	}
}

// Spec: WFL-032
// An acknowledged cancellation is confirmed to the runtime and fails the step: no further
// operation starts in it and it cannot be approved.
func TestWorkerAcknowledgedCancellationFailsTheStep(t *testing.T) {
	f := newFixture(t)
	id := f.start("succeed", "1")
	if _, _, err := f.e.ClaimOrdinary(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.rt.RequestExternalCancellation(id); err != nil {
		t.Fatal(err)
	}
	ack := protocol.WorkerCancellationResult{Outcome: protocol.OutcomeAcknowledged}
	p, err := f.e.ApplyWorkerEvent(transport.ExternalEvent{Kind: transport.ExternalCancelled, ID: id, Acknowledgement: ack})
	if err != nil || p.Settlement.Err == nil || p.Settlement.Err.Kind != host.ToolCancelled {
		t.Fatalf("cancelled %+v %v", p, err)
	}
	if f.e.Step() != workflow.StepFailed {
		t.Fatalf("step %v", f.e.Step())
	}
	f.start("succeed", "2")
	_, err = f.e.Prepare(f.ctx, []byte("n"))
	wantKind(t, err, workflow.ErrStepFailed)
	wantKind(t, f.e.ApproveStep("publish"), workflow.ErrStepFailed)
}

// idleSupervisor supervises nothing; the test never starts an invocation on it.
type idleSupervisor struct{}

func (idleSupervisor) SessionID() string { return session }
func (idleSupervisor) BeginInvocation(time.Duration) (transport.SupervisionToken, error) {
	return 1, nil
}
func (idleSupervisor) FinishInvocation(transport.SupervisionToken) (transport.Finish, error) {
	return transport.Finish{Verdict: transport.FinishCompleted}, nil
}
func (idleSupervisor) Terminate() (transport.Termination, error) { return transport.Termination{}, nil }

// Spec: WFL-031
// A cancellation through the engine must target the worker session's active invocation: when
// the session's binding is another (here: none), nothing changes in the runtime.
func TestCancellationChecksTheBindingFirst(t *testing.T) {
	f := newFixture(t)
	id := f.start("succeed", "1")
	if _, _, err := f.e.ClaimOrdinary(); err != nil {
		t.Fatal(err)
	}
	r, w := io.Pipe()
	t.Cleanup(func() { w.Close() })
	m, err := protocol.NewCapabilityManifest(session, []protocol.CapabilityGrant{recordGrant()})
	if err != nil {
		t.Fatal(err)
	}
	mux, err := transport.NewMultiplexed(m, f.host, r, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mux.Abandon)
	s, err := transport.NewSupervisedSession(mux, idleSupervisor{}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.e.RequestCancellation(s, "cancel-1")
	wantKind(t, err, workflow.ErrBindingMismatch)
	if f.state(id) != host.StateClaimed {
		t.Fatalf("state %v", f.state(id))
	}
}
