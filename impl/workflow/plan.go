package workflow

import (
	"github.com/splashv5/conform/impl/ledger"
	"github.com/splashv5/conform/impl/opkey"
)

// PlanStep is one step of a workflow plan: its ID and its source text.
type PlanStep = opkey.Step

// NewPlan returns the trusted plan of steps: their IDs in order and the fingerprint
// PlanFingerprint derives from them (WFL-045). The plan's ID checks are the ledger's.
func NewPlan(steps []PlanStep) ledger.Plan {
	p := ledger.Plan{Fingerprint: opkey.PlanFingerprint(steps)}
	for _, s := range steps {
		p.Steps = append(p.Steps, s.ID)
	}
	return p
}
