package workflow_test

import (
	"errors"
	"testing"

	"github.com/splashv5/conform/impl/ledger"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/workflow"
)

// anyTenant is a grant and action verifier that accepts every tenant, grant and input, so that
// only the engine's own bindings can refuse a drifted target.
type anyTenant struct{}

func (anyTenant) VerifyCompensationGrant(string, protocol.CapabilityGrant) error { return nil }
func (anyTenant) VerifyCompensationAction(workflow.Action) error                 { return nil }

// driftTarget is a target for key under tenant and grant g, with anyTenant as both verifiers.
func driftTarget(t *testing.T, key, tenant string, g protocol.CapabilityGrant) workflow.Target {
	t.Helper()
	p, err := workflow.NewCompensationPolicy(tenant, g)
	if err != nil {
		t.Fatal(err)
	}
	return workflow.Target{OperationKey: key, Policy: p, Grant: g, GrantVerifier: anyTenant{}, ActionVerifier: anyTenant{}}
}

// Spec: WFL-023, WFL-024
// An approval binds the ledger revision, the operation, the tenant and the grant it was issued
// for: sealing under any other is ApprovalMismatch (never a later, more general refusal), and
// the refused approval is spent. The revision case: an approval issued before the ledger moved
// (another operation was recorded) cannot seal, although the intent itself did not change.
func TestApprovalRefusedAfterDrift(t *testing.T) {
	f := newFixture(t)
	first := f.succeeded()
	f.start("succeed", "2")
	c, res := f.dispatch("n1")
	if res.State != ledger.Succeeded {
		t.Fatalf("state %v", res.State)
	}
	second := c.OperationKey()
	p, in := undo(t)
	g := recordGrant()
	for _, key := range []string{first, second} {
		if _, err := f.e.RecordCompensation(f.ctx, driftTarget(t, key, tenant, g), in, []byte("nonce-"+key)); err != nil {
			t.Fatal(err)
		}
	}
	other := recordGrant()
	other.MaxInputBytes--
	for _, d := range []struct {
		name  string
		seal  workflow.Target
		drift func()
	}{
		{"operation", driftTarget(t, second, tenant, g), nil},
		{"tenant", driftTarget(t, first, "tenant-b", g), nil},
		{"grant", driftTarget(t, first, tenant, other), nil},
		{"revision", driftTarget(t, first, tenant, g), func() {
			f.start("succeed", "3")
			if _, res := f.dispatch("n2"); res.State != ledger.Succeeded {
				t.Fatalf("state %v", res.State)
			}
		}},
	} {
		approved := driftTarget(t, first, tenant, g)
		a, err := f.e.ApproveCompensation(approved, in, f.host)
		if err != nil {
			t.Fatal(err)
		}
		if d.drift != nil {
			d.drift()
		}
		_, err = f.e.SealCompensation(d.seal, "c-"+d.name, p, a, f.host)
		if !errors.Is(err, workflow.ErrApprovalMismatch) {
			t.Fatalf("%s drift: %v, want ApprovalMismatch", d.name, err)
		}
		_, err = f.e.SealCompensation(approved, "c-"+d.name+"-again", p, a, f.host)
		if !errors.Is(err, workflow.ErrApprovalMismatch) {
			t.Fatalf("%s drift: the refused approval sealed afterwards: %v", d.name, err)
		}
	}
	// Without drift, a fresh approval seals.
	a, err := f.e.ApproveCompensation(driftTarget(t, first, tenant, g), in, f.host)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.SealCompensation(driftTarget(t, first, tenant, g), "c-ok", p, a, f.host); err != nil {
		t.Fatal(err)
	}
}
