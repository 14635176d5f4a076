package main

import (
	"strings"

	"github.com/splashv5/conform/vectors/vectorfmt"
)

// recoveryPlan is the fingerprint of the two-step plan (fetch, publish) the recovery rows
// restore; ledger decoding compares it, nothing derives it here.
const recoveryPlan = "7d2c9f0e4b8a1536d0e7f2a94c3b5e8106a9d4c7e2f1b8350c6e9a7d2f4b1c08"

// recoveryRow is one recovery of a restored step engine (WFL-042): the stored ledger, the
// policy's decisions and completed prefix, and the phase afterwards or the refusal, written
// from the rule.
type recoveryRow struct {
	meta
	ledger     string
	decisions  []vectorfmt.LedgerRecoveryDecision
	completed  int
	phase, err string
}

// recoveryLedger is a stored ledger whose fetch operation op-1 is in state fetch and whose
// publish operation op-2 is in state publish.
func recoveryLedger(fetch, publish string) string {
	op := func(step, key, state string) string {
		return `{"step_id":"` + step + `","tool":"remote","operation_key":"` + key + `","input_fingerprint":"` + strings.Repeat("0f", 32) +
			`","state":"` + state + `","compensation":null}`
	}
	return `{"format_version":2,"revision":4,"plan_fingerprint":"` + recoveryPlan + `","operations":[` +
		op("fetch", "op-1", fetch) + "," + op("publish", "op-2", publish) + `]}`
}

func decide(pairs ...string) []vectorfmt.LedgerRecoveryDecision {
	var out []vectorfmt.LedgerRecoveryDecision
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, vectorfmt.LedgerRecoveryDecision{OperationKey: pairs[i], Decision: pairs[i+1]})
	}
	return out
}

func ledgerRecoveryCases() []recoveryRow {
	f, r := flags("LedgerRecovery"), reqs("WFL-042")
	l := recoveryLedger("succeeded", "running")
	return []recoveryRow{
		{meta{"a decision for every operation resumes the engine from the approved prefix", f, r}, l, decide("op-1", "accept", "op-2", "redispatch"), 1, "Running", ""},
		{meta{"compensating a terminal operation and redispatching a running one, from the first step", f, r}, l, decide("op-1", "compensate", "op-2", "redispatch"), 0, "Running", ""},
		{meta{"an operation without a decision refuses the policy, and the engine stays recovering", f, r}, l, decide("op-1", "accept"), 1, "Recovering", "RecoveryPolicyRequired"},
		{meta{"accepting a running operation is refused", f, r}, l, decide("op-1", "accept", "op-2", "accept"), 1, "Recovering", "UnreconciledOperation"},
		{meta{"compensating a pending operation is refused", f, r}, recoveryLedger("succeeded", "pending"), decide("op-1", "accept", "op-2", "compensate"), 1, "Recovering", "UnreconciledOperation"},
		{meta{"redispatching a terminal operation is refused", f, r}, l, decide("op-1", "redispatch", "op-2", "redispatch"), 1, "Recovering", "OperationAlreadyTerminal"},
		{meta{"every operation terminal and accepted: the engine runs again from the approved prefix", f, r}, recoveryLedger("succeeded", "failed"), decide("op-1", "accept", "op-2", "accept"), 0, "Running", ""},
	}
}
