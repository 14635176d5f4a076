// Package opkey derives the identities a host gives a workflow's durable work: the plan
// fingerprint (WFL-045), an operation key (WFL-001) and a compensation key (WFL-010). They are
// pure functions of their inputs, so that a judge (the host explorer, a vector replay) computes
// the keys a host must send with the host's own code and nothing else of its runtime.
package opkey

import (
	"encoding/binary"
	"encoding/hex"

	"lukechampine.com/blake3"

	"github.com/splashv5/conform/impl/protocol"
)

// The BLAKE3 domains of the three derivations.
const (
	planDomain            = "splash-workflow-plan-v1"
	operationKeyDomain    = "splash-workflow-operation-key-v1"
	compensationKeyDomain = "splash-workflow-compensation-key-v1"
)

// Step is one step of a workflow plan: its ID and its source text, exactly as the host holds
// them.
type Step struct {
	ID     string
	Source string
}

// PlanFingerprint returns the plan fingerprint of steps (WFL-045): the lowercase hex of BLAKE3
// over "splash-workflow-plan-v1", the number of steps as a big-endian u64, then for each step in
// order its ID and its source, each prefixed by its byte length as a big-endian u64.
func PlanFingerprint(steps []Step) string {
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

// OperationKey returns "op-" + hex(BLAKE3("splash-workflow-operation-key-v1" ||
// lp(plan fingerprint) || lp(step) || lp(tool) || lp(input) || lp(nonce))), lp prefixing its
// bytes with their length as a big-endian u64 (WFL-001). It checks nothing; the ledger checks
// the operation it prepares.
func OperationKey(planFingerprint, stepID, tool string, input, nonce []byte) string {
	b := make([]byte, 0, len(operationKeyDomain)+40+len(planFingerprint)+len(stepID)+len(tool)+len(input)+len(nonce))
	b = append(b, operationKeyDomain...)
	for _, part := range [][]byte{[]byte(planFingerprint), []byte(stepID), []byte(tool), input, nonce} {
		b = appendLP(b, part)
	}
	sum := blake3.Sum256(b)
	return "op-" + hex.EncodeToString(sum[:])
}

// CompensationKey returns the durable compensation key of the inverse of an operation: "cmp-"
// and the lowercase hex of BLAKE3 over "splash-workflow-compensation-key-v1" followed by the
// length-prefixed plan fingerprint, original operation key, tool, tenant scope, grant
// fingerprint, canonical compensation input and host nonce (WFL-010). It checks nothing; the
// ledger checks the compensation it records.
func CompensationKey(planFingerprint, operationKey, tool, tenantScope, grantFingerprint string, input, nonce []byte) string {
	b := append(make([]byte, 0, 512+len(input)+len(nonce)), compensationKeyDomain...)
	for _, part := range [][]byte{[]byte(planFingerprint), []byte(operationKey), []byte(tool),
		[]byte(tenantScope), []byte(grantFingerprint), input, nonce} {
		b = appendLP(b, part)
	}
	sum := blake3.Sum256(b)
	return protocol.CompensationKeyPrefix + hex.EncodeToString(sum[:])
}

// appendLP appends part to b, prefixed by its length as a big-endian u64.
func appendLP(b []byte, part []byte) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(len(part)))
	return append(b, part...)
}
