//go:build !splashfaults

package main

import (
	"encoding/json"
	"io"
	"time"

	"github.com/splashv5/conform/impl/ledger"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
	"github.com/splashv5/conform/impl/workflow"
)

// fitsInUnits is false; the test build may count sizes in UTF-16 code units.
func fitsInUnits(protocol.ToolPayload, error) bool { return false }

// commandPayload returns raw; the test build may read it through a lossy JSON parser.
func commandPayload(_ string, raw json.RawMessage) json.RawMessage { return raw }

// reported returns p, a payload or status; the test build may normalize its numbers.
func reported(_ string, p json.RawMessage) json.RawMessage { return p }

// workerInput returns w; the test build may write non-canonical escapes.
func workerInput(w io.Writer) io.Writer { return w }

// recompensates is false; the test build may send a recorded compensation again.
func recompensates(string, error) bool { return false }

// compensated does nothing; the test build may remember compensations in memory.
func compensated(string) {}

// began does nothing; the test build may note when an invocation began.
func began(string) {}

// finishWait returns d; the test build may count the deadline from the invocation's begin.
func finishWait(_ string, d time.Duration) time.Duration { return d }

// pace does nothing; the test build may slow the driver down.
func pace(time.Time) {}

// stepped does nothing; the test build may remember the last step's request id.
func stepped(string) {}

// recoverID returns requestID; the test build may reuse the last step's.
func recoverID(requestID string) string { return requestID }

// resealed returns line; the test build may seal it again.
func resealed(_ *protocol.Authenticator, line []byte) []byte { return line }

// stop stops the worker's process group (containment, HDR-045, HDR-051) after the command op;
// the test build may stop less.
func (s *session) stop(string) { _, _ = s.proc.Terminate() }

// inputDir returns dir, the input store's directory a start names; the test build may ignore it.
func inputDir(dir string) string { return dir }

// lostInput returns err: a recorded compensation whose input is lost is never sent (HDR-050);
// the test build may send it anyway.
func (s *session) lostInput(_ *workflow.Engine, _ workflow.Target, _ string, err error) (json.RawMessage, error) {
	return nil, err
}

// planFault returns p; the test build may fix the plan fingerprint instead of deriving it.
func planFault(p ledger.Plan) ledger.Plan { return p }

// spared is false: a refused durable request spends the session's exchange (TRN-023); the test
// build may refuse it before the transport.
func (s *session) spared(string) bool { return false }

// retried does nothing: a failed durable exchange spends the session's exchange (TRN-023); the
// test build may start a fresh one.
func (s *session) retried(uint64) {}

// beginRefused does nothing: a refused begin changes nothing (TRN-041); the test build may send
// it anyway or stop the session.
func (s *session) beginRefused(protocol.ToolInvocation, error) {}

// closeWhileActive does nothing; the test build may write close_session while an invocation is
// active or after the session stopped.
func (s *session) closeWhileActive() {}

// cancelling does nothing; the test build notes when a cancel waits for its disposition.
func cancelling(bool) {}

// muxOutput returns r, the worker's output; the test build may drop unsolicited dispositions.
func muxOutput(r io.Reader) io.Reader { return r }

// endTakenForCancel is false; the test build may take the end of the stream for a cancellation.
func (s *session) endTakenForCancel(string, error) bool { return false }

// cancelContained does nothing; the test build notes a cancel whose wait passed the deadline.
func (s *session) cancelContained(string, error) {}

// stillActive is false: a result returns a cancellable session to Idle (TRN-050); the test build
// may keep it active.
func (s *session) stillActive() bool { return false }

// resulted does nothing; the test build notes that an invocation completed with a result.
func (s *session) resulted() {}

// unapplied is false: a durable answer (of the command op) is opened and recorded by the step
// engine before it is reported (RUN-186, WFL-004, WFL-025); the test build may report it as is.
func unapplied(string, protocol.Frame) (json.RawMessage, bool) { return nil, false }

// reconcileExchange sends the reconciliation req on ops and returns the opened answer (RUN-162);
// the test build may take an answer that does not open.
func (s *session) reconcileExchange(ops *transport.OperationTransport, req protocol.OperationReconcileRequest) (protocol.OperationReconcileResult, error) {
	return ops.ReconcileOperation(req)
}

// closeKilling closes the worker's input; the test build may kill the worker instead.
func (s *session) closeKilling() error { return s.proc.CloseInput() }

// advance does nothing: only the host's explicit approval moves the engine to the next step,
// never a succeeded operation (WFL-005); the test build may take one for an approval.
func advance(*workflow.Engine) {}
