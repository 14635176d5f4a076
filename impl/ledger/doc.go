// Package ledger is the host's durable workflow operation ledger (spec chapter 21, RUN-180 to
// RUN-187, and the compensation records of chapter 23): the record of every external operation
// a workflow plan dispatched, under a durable, plan-bound operation key, with at most one
// compensation intent per succeeded operation; its canonical encoding (format 2); Store, which
// keeps it as one authenticated, fenced storage record; and the bridge that binds a queued
// operation of the host runtime to its ledger record before it is claimed, dispatched or
// reconciled (Plan, PrepareNextExternalOperation, ClaimPreparedExternalOperation,
// PrepareClaimedDispatch, ApplyDispatchResult, PrepareClaimedReconciliation,
// ApplyClaimedReconciliation).
//
// The step engine (package workflow) drives it in the required order; the vector replay and
// splash-wire read its format directly. The host runtime does not import it, so a host without
// durable steps links neither the ledger nor storage.
package ledger
