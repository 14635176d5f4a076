package worker_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/worker"
	"github.com/splashv5/conform/impl/worker/workertest"
)

const ruleTool = "t.rule"

// ruleRevisions is a journal persister that only counts revisions.
type ruleRevisions struct{}

func (ruleRevisions) Persist(_ context.Context, _ *journal.Journal, expected uint64, _ worker.Lease) (uint64, error) {
	return expected + 1, nil
}

// ruleDurable is a durable adapter of ruleTool whose contract is chosen by the test; it counts
// the effects it runs.
type ruleDurable struct {
	worker.Unimplemented
	contract worker.DurableContract
	effects  atomic.Int32
}

func (a *ruleDurable) DurableContract() worker.DurableContract { return a.contract }

func (a *ruleDurable) DispatchOperation(protocol.OperationDispatchRequest, protocol.CapabilityGrant) (protocol.OperationStatus, error) {
	a.effects.Add(1)
	return protocol.Succeeded(protocol.TextPayload("done")), nil
}

func (a *ruleDurable) CompensateOperation(protocol.OperationCompensationRequest, protocol.CapabilityGrant) (protocol.OperationStatus, error) {
	a.effects.Add(1)
	return protocol.Succeeded(protocol.TextPayload("undone")), nil
}

// ruleSession opens a session of a fresh host over j with a as the adapter of ruleTool.
func ruleSession(t *testing.T, id string, a worker.Adapter, j *journal.Journal, rev uint64, adjust configure) (*worker.Session, *workertest.Host, protocol.CapabilityGrant) {
	t.Helper()
	h, err := workertest.NewHost(id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	auth, err := h.WorkerAuthenticator(canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	reg := worker.NewRegistry()
	if ca, ok := a.(worker.CancellableAdapter); ok {
		err = reg.RegisterCancellable(ruleTool, ca)
	} else {
		err = reg.Register(ruleTool, a)
	}
	if err != nil {
		t.Fatal(err)
	}
	g := workertest.Grant(ruleTool, protocol.FormatText, 4, 1)
	cfg := worker.Config{Journal: j, Revision: rev, Registry: reg,
		Admission: worker.AdmissionFunc(func(context.Context, protocol.CapabilityManifest, string) (uint64, error) { return 1, nil })}
	if adjust != nil {
		cfg = adjust(cfg, h)
	}
	s, err := worker.Open(context.Background(), auth, h.Seal(h.OpenSession(g)), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, h, g
}

// Spec: WRK-003
// A compensation is refused before the journal admits it when the adapter declares no durable
// contract, even for a succeeded original that another adapter recorded: the inverse effect
// does not run and the journal gains no compensation.
func TestCompensationRequiresADurableContract(t *testing.T) {
	j, err := journal.New("tenant-a")
	if err != nil {
		t.Fatal(err)
	}
	declared := &ruleDurable{contract: worker.Reconciliation}
	s, h, _ := ruleSession(t, "session-1", declared, j, 0, nil)
	answer, err := s.Handle(context.Background(), h.Seal(h.Dispatch("d1", ruleTool, "op-1", protocol.TextPayload("x"))), ruleRevisions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.MustOpen(answer); got != "operation_result succeeded text:done" {
		t.Fatalf("dispatch: %s", got)
	}

	undeclared := &ruleDurable{contract: worker.ContractUndeclared}
	s2, h2, g := ruleSession(t, "session-2", undeclared, s.Journal(), s.Revision(), nil)
	_, err = s2.Handle(context.Background(),
		h2.Seal(h2.Compensate("c1", ruleTool, "op-1", "cmp-1", "tenant-a", g, protocol.TextPayload("undo"))), ruleRevisions{})
	if !errors.Is(err, worker.ErrDurableOperationContractNotDeclared) {
		t.Fatalf("compensation without a contract: %v", err)
	}
	if n := undeclared.effects.Load(); n != 0 {
		t.Fatalf("the inverse effect ran %d times", n)
	}
	if rec, ok := s2.Journal().Operation("op-1"); !ok || rec.Compensation != nil {
		t.Fatalf("journal record %+v", rec)
	}
}
