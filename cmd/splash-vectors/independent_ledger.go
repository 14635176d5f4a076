package main

import (
	"encoding/binary"
	"encoding/hex"

	"lukechampine.com/blake3"
)

// This file derives the durable ledger's input fingerprints and operation keys from the byte
// layouts of RUN-181 with the general-purpose BLAKE3 package, never through impl/host.

// indLP is lp(x): the length of x as a u64 big-endian followed by x.
func indLP(dst, x []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(len(x)))
	return append(dst, x...)
}

// indLedgerInputFingerprint is hex(BLAKE3("splash-workflow-operation-input-v1" || lp(input))).
func indLedgerInputFingerprint(input []byte) string {
	data := indLP([]byte("splash-workflow-operation-input-v1"), input)
	sum := blake3.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// indLedgerOperationKey is "op-" || hex(BLAKE3("splash-workflow-operation-key-v1" ||
// lp(plan fingerprint) || lp(step) || lp(tool) || lp(input) || lp(nonce))).
func indLedgerOperationKey(planFingerprint, step, tool string, input, nonce []byte) string {
	data := []byte("splash-workflow-operation-key-v1")
	for _, part := range [][]byte{[]byte(planFingerprint), []byte(step), []byte(tool), input, nonce} {
		data = indLP(data, part)
	}
	sum := blake3.Sum256(data)
	return "op-" + hex.EncodeToString(sum[:])
}

// indCompensationKey is "cmp-" || hex(BLAKE3("splash-workflow-compensation-key-v1" ||
// lp(plan fingerprint) || lp(operation key) || lp(tool) || lp(tenant scope) ||
// lp(grant fingerprint) || lp(input) || lp(nonce))) (WFL-010).
func indCompensationKey(planFingerprint, operationKey, tool, tenantScope, grantFingerprint string, input, nonce []byte) string {
	data := []byte("splash-workflow-compensation-key-v1")
	for _, part := range [][]byte{[]byte(planFingerprint), []byte(operationKey), []byte(tool),
		[]byte(tenantScope), []byte(grantFingerprint), input, nonce} {
		data = indLP(data, part)
	}
	sum := blake3.Sum256(data)
	return "cmp-" + hex.EncodeToString(sum[:])
}

// indPlanFingerprint is hex(BLAKE3("splash-workflow-plan-v1" || u64be(step count) || for each
// step lp(id) || lp(source))) (WFL-045).
func indPlanFingerprint(ids, sources []string) string {
	data := binary.BigEndian.AppendUint64([]byte("splash-workflow-plan-v1"), uint64(len(ids)))
	for i := range ids {
		data = indLP(indLP(data, []byte(ids[i])), []byte(sources[i]))
	}
	sum := blake3.Sum256(data)
	return hex.EncodeToString(sum[:])
}
