package host

import (
	"time"
)

// otherPlan is the check's plan with its step's source edited: the same step ID, another plan
// fingerprint (WFL-045).
func (t *T) otherPlan() planCommand {
	p := t.plan()
	p.Steps[0].Source += "// edited\n"
	return p
}

func planChecks() []*Check {
	return []*Check{
		{ID: "CNF-HPLAN-01", Level: must, Requirements: []string{"WFL-040", "WFL-045", "HDR-049"}, Needs: []string{FeatureInvoke, FeatureRecover},
			Title: "the plan is the host's trusted input: after its step's source is edited, a start on the same ledger answers ok but no step runs and no frame is sent, until the original plan is given again",
			run: func(t *T) {
				w := t.ledgerSession()
				t.succeededStep(w, "req-1")
				edited := t.ledgerSessionWith(map[string]any{"plan": t.otherPlan()})
				id := t.stepCommand("req-2", jsonPayload(`{"value":2}`))
				edited.expectSilence(150*time.Millisecond, "the ledger was written under another plan: its fingerprint, derived from the steps' sources, differs (WFL-040, WFL-045)")
				t.expectError(id, "a step under a plan other than the ledger's is refused (HDR-049)")
				again := t.ledgerSession()
				t.succeededStep(again, "req-3")
			}},
		{ID: "CNF-HPLAN-02", Level: must, Requirements: []string{"HDR-020", "WFL-020"}, Needs: []string{FeatureInvoke},
			Title: "a start whose scope is not an identifier token is refused, and no worker is started",
			run: func(t *T) {
				c := t.startCommand(t.manifest(durableGrant()), map[string]any{"scope": "Tenant A"})
				if o := t.call(c); o.OK {
					t.failf(`an error for the scope "Tenant A", which is not a token (HDR-020, MSG-002)`, string(o.raw))
				}
				select {
				case <-t.side.Conns:
					t.failf("no worker started for a refused start (HDR-020)", "the driver started the worker")
				case <-time.After(150 * time.Millisecond):
				}
			}},
	}
}
