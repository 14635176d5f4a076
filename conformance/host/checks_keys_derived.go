package host

import (
	"encoding/binary"
	"encoding/hex"
	"strings"

	"github.com/splashv5/conform/impl/protocol"
	"lukechampine.com/blake3"
)

// planStep is the one step of the plan the runner gives (HDR-049).
const planStep = "publish"

// planCommand is the workflow plan of a start with a state directory (HDR-049): its steps,
// from which the host derives the plan fingerprint itself (WFL-045).
type planCommand struct {
	Steps []planStepCommand `json:"steps"`
}

// planStepCommand is one step of a plan: its ID and its source.
type planStepCommand struct {
	ID     string `json:"id"`
	Source string `json:"source"`
}

// plan returns the check's workflow plan: one step whose source names the check, so that every
// start of the check, in every driver process, names the same plan, and every check its own.
func (t *T) plan() planCommand {
	return planCommand{Steps: []planStepCommand{{ID: planStep, Source: "// splash-conform host check " + t.check.ID + "\nlet out = tool.call(\"conf.durable.record\", input);\n"}}}
}

// planFingerprint is the fingerprint the spec derives from the plan's steps (WFL-045): the
// lowercase hex of BLAKE3("splash-workflow-plan-v1" || u64be(step count) || lp(id) || lp(source)
// ...). It is written out here from the specification, not taken from the implementation.
func (p planCommand) planFingerprint() string {
	b := binary.BigEndian.AppendUint64([]byte("splash-workflow-plan-v1"), uint64(len(p.Steps)))
	for _, st := range p.Steps {
		for _, part := range []string{st.ID, st.Source} {
			b = binary.BigEndian.AppendUint64(b, uint64(len(part)))
			b = append(b, part...)
		}
	}
	sum := blake3.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// operationNonce is the nonce the runner gives a step or compensate command.
func operationNonce(requestID string) string { return "nonce-" + requestID }

// derivedKey is prefix followed by the lowercase hex of BLAKE3(domain || lp(part) ...), lp
// being the part's length as an unsigned 64-bit big-endian integer (WFL-010, chapter 23). It is
// written out here from the specification, not taken from the implementation.
func derivedKey(prefix, domain string, parts ...[]byte) string {
	b := []byte(domain)
	for _, p := range parts {
		b = binary.BigEndian.AppendUint64(b, uint64(len(p)))
		b = append(b, p...)
	}
	sum := blake3.Sum256(b)
	return prefix + hex.EncodeToString(sum[:])
}

// expectedOperationKey is the operation key the spec derives for a step of tool with payload
// p and nonce under the check's plan, whose fingerprint enters as its hex text (WFL-045).
func (t *T) expectedOperationKey(tool string, p protocol.ToolPayload, nonce string) string {
	input, err := protocol.CanonicalOperationInputBytes(p)
	if err != nil {
		t.Internal(err)
	}
	return derivedKey("op-", "splash-workflow-operation-key-v1", []byte(t.plan().planFingerprint()), []byte(planStep), []byte(tool), input, []byte(nonce))
}

// expectedCompensationKey is the compensation key the spec derives for the compensation req
// carries, with the undo payload and nonce, under the check's plan and ledgerGrant.
func (t *T) expectedCompensationKey(req protocol.OperationCompensationRequest, nonce string) string {
	input, err := protocol.CanonicalOperationInputBytes(undoPayload())
	if err != nil {
		t.Internal(err)
	}
	g := ledgerGrant()
	fp, err := g.CompensationFingerprint()
	if err != nil {
		t.Internal(err)
	}
	return derivedKey("cmp-", "splash-workflow-compensation-key-v1", []byte(t.plan().planFingerprint()), []byte(req.OperationKey),
		[]byte(req.Tool), []byte(req.TenantScope), []byte(fp), input, []byte(nonce))
}

func derivationChecks() []*Check {
	return []*Check{
		{ID: "CNF-HCOMP-04", Level: must, Requirements: []string{"WFL-001", "WFL-010", "WFL-045", "HDR-041", "HDR-043", "HDR-049"},
			Features: []string{FeatureInvoke, FeatureRecover, FeatureCompensate},
			Title:    "the keys follow the spec's derivations from the inputs the commands give: the plan fingerprint from the plan's steps; op- from plan, step, tool, input and nonce; cmp- from plan, operation, tool, tenant, grant, input and nonce",
			Run: func(t *T) {
				w := t.ledgerSession()
				key := t.succeededStep(w, "req-1")
				if want := t.expectedOperationKey(durableTool, jsonPayload(`{"value":1}`), operationNonce("req-1")); key != want {
					t.Failf("the operation key "+want+" derived from the plan fingerprint "+t.plan().planFingerprint()+" of the plan's steps, the step, tool, input and nonce given (WFL-001, WFL-045, HDR-049)", key)
				}
				second := t.ledgerSession()
				id := t.compensateCommand("cmp-req-1", key)
				req := recvCompensation(t, second, key, recoverWait)
				fp, err := ledgerGrant().CompensationFingerprint()
				if err != nil {
					t.Internal(err)
				}
				if req.GrantFingerprint != fp || !strings.HasPrefix(req.CompensationKey, "cmp-") {
					t.Failf("the grant fingerprint "+fp+" of the session's grant (WFL-010)", req.GrantFingerprint)
				}
				if want := t.expectedCompensationKey(req, operationNonce("cmp-req-1")); req.CompensationKey != want {
					t.Failf("the compensation key "+want+" derived from the inputs given and the binding sent (WFL-010, HDR-049)", req.CompensationKey)
				}
				finishCompensation(t, second, id, req)
			}},
	}
}
