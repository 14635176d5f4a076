package host

import (
	"time"

	"github.com/splashv5/conform/impl/protocol"
)

// otherPlan is the check's plan with its step's source edited: the same step ID, another plan
// fingerprint (WFL-045).
func (t *T) otherPlan() planCommand {
	p := t.plan()
	p.Steps[0].Source += "// edited\n"
	return p
}

// nextStep is the second step of twoStepPlan.
const nextStep = "notify"

// twoStepPlan is the check's plan with a second step after planStep.
func (t *T) twoStepPlan() planCommand {
	p := t.plan()
	p.Steps = append(p.Steps, planStepCommand{ID: nextStep, Source: "// the step after " + planStep + "\nlet sent = tool.call(\"conf.durable.record\", input);\n"})
	return p
}

// stepKey is the operation key the spec derives (HDR-049) for an operation of the durable tool
// with payload and nonce in step of plan p.
func stepKey(t *T, p planCommand, step string, payload protocol.ToolPayload, nonce string) string {
	input, err := protocol.CanonicalOperationInputBytes(payload)
	if err != nil {
		t.Internal(err)
	}
	return derivedKey("op-", "splash-workflow-operation-key-v1", []byte(p.planFingerprint()), []byte(step), []byte(durableTool), input, []byte(nonce))
}

func planChecks() []*Check {
	return []*Check{
		{ID: "CNF-HPLAN-01", Level: must, Requirements: []string{"WFL-040", "WFL-045", "HDR-049"}, Features: []string{FeatureInvoke, FeatureRecover},
			Title: "the plan is the host's trusted input: after its step's source is edited, a start on the same ledger answers ok but no step runs and no frame is sent, until the original plan is given again",
			Run: func(t *T) {
				w := t.ledgerSession()
				t.succeededStep(w, "req-1")
				edited := t.ledgerSessionWith(map[string]any{"plan": t.otherPlan()})
				id := t.stepCommand("req-2", jsonPayload(`{"value":2}`))
				edited.expectSilence(150*time.Millisecond, "the ledger was written under another plan: its fingerprint, derived from the steps' sources, differs (WFL-040, WFL-045)")
				t.expectError(id, "a step under a plan other than the ledger's is refused (HDR-049)")
				again := t.ledgerSession()
				t.succeededStep(again, "req-3")
			}},
		{ID: "CNF-HPLAN-03", Level: must, Requirements: []string{"WFL-005", "HDR-041", "HDR-049"}, Features: []string{FeatureInvoke, FeatureRecover},
			Title: "a succeeded step is no approval of the next: under a plan of two steps, every step, also after others succeeded, is an operation of the first step, its key derived from the first step's ID",
			Run: func(t *T) {
				plan := t.twoStepPlan()
				for _, requestID := range []string{"req-1", "req-2", "req-3"} {
					t.RenewDeadline()
					key := t.succeededStep(t.ledgerSessionWith(map[string]any{"plan": plan}), requestID)
					want := stepKey(t, plan, planStep, jsonPayload(`{"value":1}`), operationNonce(requestID))
					if key == want {
						continue
					}
					got := key
					if key == stepKey(t, plan, nextStep, jsonPayload(`{"value":1}`), operationNonce(requestID)) {
						got += ", derived from the second step " + nextStep + ": a succeeded operation was taken for the approval of " + planStep +
							"; stay on the current step until the host approves it, which the driver never does"
					}
					t.Failf("the operation key "+want+" of the first step "+planStep+" for "+requestID+t.Cite("WFL-005", "HDR-049"), got)
				}
			}},
		{ID: "CNF-HPLAN-02", Level: must, Requirements: []string{"HDR-020", "WFL-020"}, Features: []string{FeatureInvoke},
			Title: "a start whose scope is not an identifier token is refused, and no worker is started",
			Run: func(t *T) {
				c := t.startCommand(t.manifest(durableGrant()), map[string]any{"scope": "Tenant A"})
				if o := t.call(c); o.OK {
					t.Failf(`an error for the scope "Tenant A", which is not a token`+t.Cite("HDR-020", "MSG-002"), string(o.Raw()))
				}
				select {
				case <-t.side.Conns:
					t.Failf("no worker started for a refused start (HDR-020)", "the driver started the worker")
				case <-time.After(150 * time.Millisecond):
				}
			}},
	}
}

// otherScope is a journal scope other than the fake worker's (workerScope).
const otherScope = "hconf-other-tenant"

func tenantChecks() []*Check {
	return []*Check{
		{ID: "CNF-HTENANT-01", Level: must, Requirements: []string{"HDR-043", "WFL-026"}, Features: []string{FeatureInvoke, FeatureRecover, FeatureCompensate},
			Title: "a compensation whose answer was lost is resent under the tenant its intent recorded: a session of another scope sends nothing, a session of the recorded scope gets the same cmp- key",
			Run: func(t *T) {
				key, req := t.lostCompensation()
				other := t.ledgerSessionWith(map[string]any{"scope": otherScope})
				id := t.recoverCommand("rec-1")
				other.expectSilence(150*time.Millisecond, "the intent was recorded for tenant "+workerScope+", not "+otherScope+": it is never rebound (HDR-043)")
				t.expectError(id, "a compensation of another tenant than the session's scope is refused without a frame (HDR-043)")
				again := t.ledgerSession()
				id = t.recoverCommand("rec-2")
				resent := recvCompensation(t, again, key, recoverWait)
				if resent.CompensationKey != req.CompensationKey || resent.TenantScope != req.TenantScope {
					t.Failf("the recorded compensation "+req.CompensationKey+" for "+req.TenantScope+" again (WFL-026)", resent.CompensationKey+" for "+resent.TenantScope)
				}
				finishCompensation(t, again, id, resent)
			}},
	}
}
