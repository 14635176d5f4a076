package workflow

import (
	"encoding/binary"
	"encoding/hex"

	"github.com/splashv5/conform/impl/ledger"
	"lukechampine.com/blake3"
)

// PlanStep is one step of a workflow plan: its ID and its source text, exactly as the host
// holds them.
type PlanStep struct {
	ID     string
	Source string
}

// planDomain is the domain of the plan fingerprint (WFL-045).
const planDomain = "splash-workflow-plan-v1"

// PlanFingerprint returns the plan fingerprint of steps (WFL-045): the lowercase hex of BLAKE3
// over "splash-workflow-plan-v1", the number of steps as a big-endian u64, then for each step in
// order its ID and its source, each prefixed by its byte length as a big-endian u64.
func PlanFingerprint(steps []PlanStep) string {
	h := blake3.New(32, nil)
	var n [8]byte
	_, _ = h.Write([]byte(planDomain))
	binary.BigEndian.PutUint64(n[:], uint64(len(steps)))
	_, _ = h.Write(n[:])
	for _, s := range steps {
		for _, part := range []string{s.ID, s.Source} {
			binary.BigEndian.PutUint64(n[:], uint64(len(part)))
			_, _ = h.Write(n[:])
			_, _ = h.Write([]byte(part))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// NewPlan returns the trusted plan of steps: their IDs in order and the fingerprint
// PlanFingerprint derives from them (WFL-045). The plan's ID checks are the ledger's.
func NewPlan(steps []PlanStep) ledger.Plan {
	p := ledger.Plan{Fingerprint: PlanFingerprint(steps)}
	for _, s := range steps {
		p.Steps = append(p.Steps, s.ID)
	}
	return p
}
