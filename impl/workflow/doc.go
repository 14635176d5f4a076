// Package workflow is the host's step engine for durable external steps: the integration
// contract between a Splash workflow plan, the host capability runtime and contained workers,
// not a workflow language (spec chapter 23).
//
// An Engine owns the workflow's operation ledger. Every ledger change is made on a copy and
// written through the injected Store, a fenced compare-and-swap on an fsynced record, before the
// engine acts on it:
//
//   - prepare → persist → claim: an external operation is bound to its plan-bound key in the
//     ledger, the ledger is persisted, and only then is the runtime operation claimed and its
//     dispatch frame sealed;
//   - a worker's authenticated answer updates the ledger, which is persisted before the
//     runtime's promise is resolved; a succeeded step is never approval to run the next one;
//   - compensation: intent recorded and persisted → one-use, session-bound approval → sealing,
//     with tenant policy and grant revocation checked again before approval and before sealing
//     → the worker's answer recorded and persisted;
//   - after a restart the engine is rebuilt from the trusted plan, loads and validates the
//     ledger, lets the host reconcile, and resumes only under an explicit recovery policy;
//   - events of a supervised multiplexed worker are applied through the engine.
//
// A failed ledger write poisons the engine: nothing is claimed, sent, resolved or approved
// afterwards until the host restores a fresh engine from the store. The engine performs no
// I/O of its own apart from the Store; frames are sealed for the host to send.
package workflow
