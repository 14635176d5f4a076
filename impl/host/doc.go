// Package host is the host-side capability runtime of Splash worker protocol v5: the trusted
// component that registers tools, reserves their calls, and drives every deferred operation from
// its reservation to its terminal result.
//
// The Runtime is a pure state machine. It performs no I/O, starts no goroutine and reads time and
// entropy only through the injected Config.Clock and Config.Entropy. A host drives it from one
// event loop:
//
//   - A script (through ScriptSession, the adapter over package script) or the host itself calls
//     Call, CallJSON, Start or StartJSON. Start reserves the call budget and one pending slot and
//     returns an OperationID.
//   - Host-pump operations are run by Pump; external operations are claimed with
//     ClaimNextExternal or ClaimExternal, dispatched by the host, and settled with
//     CompleteExternal, CancelExternal, the cancellation pair RequestExternalCancellation /
//     ConfirmExternalCancellation, or ReconcileExternal.
//   - Deadlines are enforced when the host calls ExpireTimedOut, which NextDeadline schedules; a
//     result that arrives late is converted into a timeout. A handler that waits on a worker gets
//     the remaining deadline (ToolRequest.Deadline), and ProtocolWorkerClient never waits longer
//     than its own deadline.
//   - Every outcome the reference records is appended to a bounded audit ring that can be
//     exported with a cursor (AuditSince).
//
// Methods that settle an operation return a Settlement, which says whether a suspended script
// was awaiting it; ScriptSession uses it to resume the evaluation.
//
// The package is the runtime alone: the durable workflow ledger that binds an external
// operation to a plan-bound operation key is package ledger (which package workflow drives),
// the JSON-schema subset of a tool's contract is package schema, and the transports to
// worker processes are package transport.
//
// The check orders, messages and audit records follow the Rust reference
// (crates/splash-capabilities and the ledger part of crates/splash-workflow); spec chapter 21
// states them as requirements.
package host
