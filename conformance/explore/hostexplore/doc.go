// Package hostexplore is the host side of the generative explorer (spec chapter 32, 32.5):
// it drives a host driver (spec chapter 30) through seeded random command sequences, its
// fake worker answering each request correctly, late, never, by exiting, by crashing in the
// middle of a line or with a forged or out-of-sequence frame, with driver restarts between
// them, and judges the whole run by the invariants of the host's ledger and transport over
// what reached the fake worker. Sequences mix single commands with chains (spec EXP-020) that
// reach deep states on purpose. Each session's invocations are judged by the host library's
// own authorizer fed the same manifest, and its keys by the ledger's own derivations. A
// failing sequence is shrunk (package shrink) and written as a replay file (package replay)
// that `splash-conform explore host -replay FILE` runs again.
//
// The fake worker is the host suite's process (conformance/fakeworker); the frames it relays
// are judged by the wire core's worker rules (protocol.WorkerState), never by a copy.
package hostexplore
