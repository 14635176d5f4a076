package replay

import (
	"context"
	"errors"
	"fmt"

	"github.com/splashv5/conform/impl/errkind"
	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/ledger"
	"github.com/splashv5/conform/impl/workflow"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

// recoveryStore serves one stored ledger document to a restored step engine; recovery
// writes nothing.
type recoveryStore struct{ doc []byte }

func (recoveryStore) ReserveFence(context.Context) (uint64, error) { return 1, nil }

func (s recoveryStore) Load(_ context.Context, _ ledger.Plan) (*ledger.Ledger, uint64, error) {
	l, err := ledger.Decode(s.doc)
	if err != nil {
		return nil, 0, err
	}
	return l, l.Revision(), nil
}

func (recoveryStore) Persist(context.Context, *ledger.Ledger, uint64, uint64) (uint64, error) {
	return 0, errors.New("recovery writes no ledger")
}

var recoveryDecisions = map[string]workflow.Decision{
	"accept":     workflow.DecisionAccept,
	"compensate": workflow.DecisionCompensate,
	"fail":       workflow.DecisionFail,
	"redispatch": workflow.DecisionRedispatch,
}

// checkLedgerRecovery restores a step engine from the test's ledger and resumes it under the
// test's policy.
func checkLedgerRecovery(t *vectorfmt.LedgerTest) []string {
	if t.PlanFingerprint == nil || t.Ledger == nil || t.CompletedSteps == nil {
		return []string{"the test lacks plan_fingerprint, ledger or completed_steps"}
	}
	decisions := map[string]workflow.Decision{}
	for _, d := range t.Decisions {
		dec, ok := recoveryDecisions[d.Decision]
		if !ok {
			return []string{fmt.Sprintf("unknown decision %q", d.Decision)}
		}
		decisions[d.OperationKey] = dec
	}
	nonce, err := host.NewSessionNonce([]byte("0123456789abcdef"))
	if err != nil {
		return []string{err.Error()}
	}
	rt, err := host.New(host.Config{SessionID: 1, SessionNonce: &nonce})
	if err != nil {
		return []string{err.Error()}
	}
	ctx := context.Background()
	plan := ledger.Plan{Fingerprint: *t.PlanFingerprint, Steps: t.PlanSteps}
	e, err := workflow.Restore(ctx, workflow.Config{Runtime: rt, Plan: plan, Store: recoveryStore{doc: []byte(*t.Ledger)}})
	if err != nil {
		return []string{"restoring the engine: " + err.Error()}
	}
	err = e.Resume(workflow.RecoveryPolicy{CompletedSteps: *t.CompletedSteps, Decide: func(op ledger.Operation) workflow.Decision {
		return decisions[op.OperationKey]
	}})
	var problems []string
	switch {
	case t.Result == vectorfmt.Invalid && err == nil:
		problems = append(problems, fmt.Sprintf("expected error %s, got success", t.Error))
	case t.Result == vectorfmt.Invalid:
		problems = append(problems, compare("error", t.Error, recoveryKindName(err))...)
	case err != nil:
		problems = append(problems, fmt.Sprintf("expected success, got %s (%v)", recoveryKindName(err), err))
	}
	return append(problems, compare("phase", t.Phase, e.Phase().String())...)
}

// recoveryKindName names a step-engine or ledger error by its kind.
func recoveryKindName(err error) string {
	name, _ := errkind.Name(err)
	return name
}
