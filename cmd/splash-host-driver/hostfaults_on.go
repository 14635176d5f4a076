//go:build splashfaults

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/big"
	"regexp"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf16"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/ledger"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
	"github.com/splashv5/conform/impl/workflow"
)

// The deliberate faults of this file emulate host ports that count, parse, encode or remember
// differently from the libraries the reference driver calls; each is a small stand-in for such
// a port (build tag splashfaults).

// utf16Units is the payload's size as a port that counts UTF-16 code units measures it.
func utf16Units(p protocol.ToolPayload) int {
	if p.Format != protocol.FormatText {
		return len(p.AppendJSON(nil))
	}
	return len(utf16.Encode([]rune(p.Text)))
}

// fitsInUnits is the utf16 fault: a size refusal (input or output) is ignored when the payload
// fits the limit counted in UTF-16 code units.
func fitsInUnits(p protocol.ToolPayload, err error) bool {
	var e *protocol.Error
	if fault != "utf16" || !errors.As(err, &e) || (e.Kind != protocol.ErrInputTooLarge && e.Kind != protocol.ErrOutputTooLarge) {
		return false
	}
	return uint64(utf16Units(p)) <= e.Maximum
}

// integerToken matches an integer token (no fraction, no exponent) inside a JSON value.
var integerToken = regexp.MustCompile(`[:\[,]-?[0-9]+[,\]}]`)

// outOfRange reports whether raw holds an integer outside both 64-bit ranges.
func outOfRange(raw []byte) bool {
	low, high := new(big.Int).Lsh(big.NewInt(-1), 63), new(big.Int).SetUint64(math.MaxUint64)
	for _, m := range integerToken.FindAll(raw, -1) {
		n, ok := new(big.Int).SetString(string(m[1:len(m)-1]), 10)
		if ok && (n.Cmp(low) < 0 || n.Cmp(high) > 0) {
			return true
		}
	}
	return false
}

// commandPayload returns the payload of a command of op as a port reads it (nil: refused).
// Under lossy-compensate a port reads only compensate's payload so. Under
// lossycmd the port reads commands with a JSON library that holds numbers in binary64 floats
// and writes them back (1e2 becomes 100, 18446744073709551615 becomes 18446744073709552000);
// under intsonly it sends numbers unchecked (start) and refuses only integers out of the 64-bit
// ranges.
func commandPayload(op string, raw json.RawMessage) json.RawMessage {
	switch {
	case fault == "lossycmd", fault == "lossy-compensate" && op == "compensate":
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return nil
		}
		out, _ := json.Marshal(v)
		return out
	case fault == "intsonly":
		if outOfRange(raw) {
			return nil
		}
	}
	return raw
}

// reported is a payload or status the driver reports for a command of op. Under normalize the
// port writes what it received back through the Lossy number model (0.10 becomes 0.1, 1e+2
// becomes 100.0); under normalize-compensate only compensate's status.
func reported(op string, p json.RawMessage) json.RawMessage {
	if fault != "normalize" && (fault != "normalize-compensate" || op != "compensate") || p == nil {
		return p
	}
	v, err := canonjson.ParseValue(p, canonjson.Lossy)
	if err != nil {
		return p
	}
	return v.AppendJSON(nil)
}

// upperEscape matches a lower-case \u00XX escape.
var upperEscape = regexp.MustCompile(`\\u00[0-9a-f][0-9a-f]`)

// workerInput returns the worker's standard input as the host writes it. Under noncanon the
// port writes its \u00XX escapes in upper case, which is not the canonical encoding.
func workerInput(w io.Writer) io.Writer {
	if fault != "noncanon" {
		return w
	}
	return upperWriter{w}
}

type upperWriter struct{ w io.Writer }

func (u upperWriter) Write(p []byte) (int, error) {
	out := upperEscape.ReplaceAllFunc(bytes.Clone(p), bytes.ToUpper)
	if _, err := u.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// compensatedHere holds the operations this process compensated, for the memonce fault.
var compensatedHere = map[string]bool{}

// recompensates reports whether a port sends a compensation although its intent is already
// recorded (WFL-011): under recompensate always, under memonce when this process did not
// compensate the operation itself (the one-approval rule kept in memory only).
func recompensates(key string, err error) bool {
	already := errors.Is(err, ledger.ErrCompensationAlreadyRecorded)
	switch {
	case !already:
		return false
	case fault == "recompensate":
		return true
	case fault == "memonce":
		return !compensatedHere[key]
	}
	return false
}

// compensated notes that this process recorded the compensation of key (memonce).
func compensated(key string) { compensatedHere[key] = true }

// begun holds when each invocation began, for the deadline-from-begin fault.
var begun = map[string]time.Time{}

// began notes that the invocation requestID began now.
func began(requestID string) { begun[requestID] = time.Now() }

// finishWait is how long finish waits for the invocation: the deadline (HDR-051), or under
// deadline-from-begin what is left of it since the invocation began.
func finishWait(requestID string, d time.Duration) time.Duration {
	if fault != "deadline-from-begin" {
		return d
	}
	return time.Until(begun[requestID].Add(d))
}

// pace is the slow switch: a driver ten times slower than this one, taking nine times longer
// again than each command took before it answers. It is no fault: a correct slow host.
func pace(start time.Time) {
	if fault == "slow" {
		time.Sleep(9 * time.Since(start))
	}
}

// lastStep is the request id of the last step this process ran, for the recover-reqid fault.
var lastStep string

// stepped notes the request id of a step.
func stepped(requestID string) { lastStep = requestID }

// recoverID is the request id a recovery is sent under: the recover's own (HDR-042), or under
// recover-reqid the request id of the last step this process ran, as a port that resends the
// recorded request would.
func recoverID(requestID string) string {
	if fault == "recover-reqid" && lastStep != "" {
		return lastStep
	}
	return requestID
}

// resealed is the pre-sealed line a port sends: the line as sealed (TRN-101), or under reseal
// the same message sealed again by the host's authenticator, as a port whose one-shot transport
// seals whatever it is handed; the second seal takes the next sequence number.
func resealed(auth *protocol.Authenticator, line []byte) []byte {
	if fault != "reseal" {
		return line
	}
	f, err := protocol.DecodeFrame(line, canonjson.Preserve)
	if err != nil {
		return line
	}
	_, again, err := auth.Seal(f.Message)
	if err != nil {
		return line
	}
	return again
}

// stop is the containment of a cancellable session after the command op (HDR-045, HDR-051):
// the worker's whole process group stopped. Under contain-pid a port kills the worker's process
// only, leaving what it started; under nocontain-OP (cancel, finish or close) it stops nothing
// after a wait of that command passed the deadline, and only reports Indeterminate.
func (s *session) stop(op string) {
	switch fault {
	case "contain-pid":
		_ = syscall.Kill(s.proc.Pid(), syscall.SIGKILL)
	case "nocontain-" + op:
	default:
		_, _ = s.proc.Terminate()
	}
}

// inputDir is the input store's directory a start names (HDR-056), or under inputs-here none: a
// port that keeps its inputs in the state directory whatever the start says.
func inputDir(dir string) string {
	if fault == "inputs-here" {
		return ""
	}
	return dir
}

// lostInput is what a port does with a recorded compensation whose input is lost: refuse it
// (HDR-050), or under lostinput-send deliver it anyway with an empty JSON object for its input,
// as a port that does not check what it loaded against the recorded fingerprint.
func (s *session) lostInput(e *workflow.Engine, tg workflow.Target, requestID string, err error) (json.RawMessage, error) {
	if fault != "lostinput-send" {
		return nil, err
	}
	p, perr := protocol.DecodeToolPayload([]byte(`{"format":"json","value":{}}`), canonjson.Preserve)
	if perr != nil {
		return nil, err
	}
	input, perr := protocol.CanonicalOperationInputBytes(p)
	if perr != nil {
		return nil, err
	}
	return s.unrecorded(e, tg, p, input, requestID, false)
}

// planFault is the plan-fixed fault: a port that keys its plan by a fixed fingerprint of its
// own instead of the one WFL-045 derives from the steps.
func planFault(p ledger.Plan) ledger.Plan {
	if fault == "plan-fixed" {
		p.Fingerprint = "5f1a5e0000000000000000000000000000000000000000000000000000000030"
	}
	return p
}

// spared is the refusal-spare fault: a port that refuses a durable request for a tool the
// manifest does not grant in its own code, before its one-shot transport sees it, so that the
// refusal spends nothing and a later exchange still goes out on the session (TRN-023).
func (s *session) spared(tool string) bool {
	if fault != "refusal-spare" {
		return false
	}
	for _, g := range s.auth.Manifest().Grants {
		if g.Tool == tool {
			return false
		}
	}
	return true
}

// retried is the exchange-retry fault: after a durable exchange that failed once its request
// was sealed (sealed is the host's next outgoing sequence before it), a port builds a fresh
// channel and one-shot transport on the same worker, as if the failure had not spent the
// session's exchange (TRN-023).
func (s *session) retried(sealed uint64) {
	if fault != "exchange-retry" || s.proc.HostAuthenticator().NextOutgoing() == sealed {
		return
	}
	s.ch = transport.NewChannel(s.proc.Output(), s.proc.Input(), canonjson.Preserve)
	s.ops = nil
}

// beginRefused is what a port does when its multiplexed transport refuses a begin: nothing
// (TRN-041), or under busy-send it writes the invoke anyway while another invocation is
// active, and under refusal-stops it stops the session, as a port that takes any refusal for
// a fatal failure does.
func (s *session) beginRefused(inv protocol.ToolInvocation, err error) {
	switch k, _ := transport.KindOf(err); {
	case fault == "busy-send" && k == transport.ErrBusy:
		if _, line, serr := s.proc.HostAuthenticator().Seal(protocol.InvokeMessage{Invocation: inv}); serr == nil {
			_, _ = s.proc.Input().Write(append(line, '\n'))
		}
	case fault == "refusal-stops":
		s.mux.Abandon()
	}
}

// closeWhileActive is the close-active fault: a port that writes close_session although an
// invocation is still active, instead of refusing the close (TRN-043, TRN-086); and the
// close-stopped fault: one that writes it although a fatal failure stopped the session (TRN-047).
func (s *session) closeWhileActive() {
	switch phase := s.mux.Phase(); {
	case fault == "close-active" && phase != transport.PhaseIdle && phase != transport.PhaseStopped:
	case fault == "close-stopped" && phase == transport.PhaseStopped:
	default:
		return
	}
	if _, line, err := s.proc.HostAuthenticator().Seal(protocol.CloseSessionMessage{ProtocolVersion: protocol.ProtocolVersion,
		Session: s.auth.SessionID()}); err == nil {
		_, _ = s.proc.Input().Write(append(line, '\n'))
	}
}

// awaitingDisposition says that a cancel command waits for its disposition (unsolicited-ignore).
var awaitingDisposition atomic.Bool

// cancelling notes that a cancel command began (true) or ended (false).
func cancelling(on bool) { awaitingDisposition.Store(on) }

// muxOutput returns the worker's output as a cancellable session reads it. Under
// unsolicited-ignore a port drops every cancellation_result that arrives while no cancel command
// waits for one, instead of ending the session (TRN-056); under kind-ignore it drops every frame
// of a kind other than result and cancellation_result (TRN-058); under swap-frames it hands on a
// result that arrives while a cancel waits for its disposition only after the next frame, as a
// port whose reader takes a frame before the previous one was handled does (TRN-045).
func muxOutput(r io.Reader) io.Reader {
	if fault != "unsolicited-ignore" && fault != "kind-ignore" && fault != "swap-frames" {
		return r
	}
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReader(r)
		var held []byte
		for {
			line, err := br.ReadBytes('\n')
			f, derr := protocol.DecodeFrame(bytes.TrimSuffix(line, []byte("\n")), canonjson.Preserve)
			dropped := derr == nil && (fault == "unsolicited-ignore" && f.Message.Type() == protocol.TypeCancellationResult && !awaitingDisposition.Load() ||
				fault == "kind-ignore" && f.Message.Type() != protocol.TypeResult && f.Message.Type() != protocol.TypeCancellationResult)
			if fault == "swap-frames" && held == nil && err == nil && derr == nil && f.Message.Type() == protocol.TypeResult && awaitingDisposition.Load() {
				held, dropped = line, true
			}
			if !dropped {
				if _, werr := pw.Write(line); werr != nil {
					return
				}
				if held != nil && len(line) > 0 {
					if _, werr := pw.Write(held); werr != nil {
						return
					}
					held = nil
				}
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}

// cancelLost holds, per session, the invocations whose cancel passed the deadline, for
// contained-cancelled.
var cancelLost = map[*session]map[string]bool{}

// cancelContained notes, when its wait failed with err past the deadline, that the cancel of
// requestID passed the deadline and the worker was contained.
func (s *session) cancelContained(requestID string, err error) {
	if errors.Is(err, context.DeadlineExceeded) {
		if cancelLost[s] == nil {
			cancelLost[s] = map[string]bool{}
		}
		cancelLost[s][requestID] = true
	}
}

// endTakenForCancel is the eof-cancelled fault: a port that reports an invocation cancelled when
// the worker's stream ended while it ran (TRN-059, TRN-062); and the contained-cancelled fault:
// one that reports it cancelled once its cancel passed the deadline and the worker was
// stopped (TRN-088).
func (s *session) endTakenForCancel(requestID string, err error) bool {
	var e *transport.Error
	if fault == "contained-cancelled" {
		return cancelLost[s][requestID]
	}
	return fault == "eof-cancelled" && errors.As(err, &e) && e.Kind == transport.ErrUnexpectedMessage &&
		e.Detail == "unexpected end of worker stream"
}

// resultTaken holds the sessions on which an invocation completed with a result, for
// result-active.
var resultTaken = map[*session]bool{}

// resulted notes that an invocation of s completed with a result.
func (s *session) resulted() { resultTaken[s] = true }

// stillActive is the result-active fault: a port whose session stays active after a result
// instead of returning to Idle (TRN-050), so that every later begin is refused as Busy.
func (s *session) stillActive() bool { return fault == "result-active" && resultTaken[s] }

// unapplied is the answer-unapplied fault (op step) and the compensation-unapplied fault (op
// compensate): a port that reports the status a durable answer carries without having the step
// engine open it, check its kind and record it (RUN-186, WFL-004, WFL-025).
func unapplied(op string, f protocol.Frame) (json.RawMessage, bool) {
	if !(fault == "answer-unapplied" && op == "step" || fault == "compensation-unapplied" && op == "compensate") {
		return nil, false
	}
	status, ok := carriedStatus(f.Message)
	return status.AppendJSON(nil), ok
}

// carriedStatus returns the operation status m carries, whatever its kind.
func carriedStatus(m protocol.Message) (protocol.OperationStatus, bool) {
	switch m := m.(type) {
	case protocol.OperationResultMessage:
		return m.Result.Status, true
	case protocol.ReconciledOperationMessage:
		return m.Result.Status, true
	case protocol.CompensationResultMessage:
		return m.Result.Status, true
	}
	return protocol.OperationStatus{}, false
}

// reconcileExchange is the reconcile-unopened fault: a port that seals the reconciliation itself
// and takes the status of any answer line that decodes, unopened and of whatever kind, as the
// reconciled status (RUN-162).
func (s *session) reconcileExchange(ops *transport.OperationTransport, req protocol.OperationReconcileRequest) (protocol.OperationReconcileResult, error) {
	if fault != "reconcile-unopened" {
		return ops.ReconcileOperation(req)
	}
	_, line, err := s.proc.HostAuthenticator().Seal(protocol.ReconcileOperationMessage{Request: req})
	if err != nil {
		return protocol.OperationReconcileResult{}, err
	}
	answer, err := ops.ExchangeSealed(line)
	if err != nil {
		return protocol.OperationReconcileResult{}, err
	}
	f, err := protocol.DecodeFrame(answer, canonjson.Preserve)
	if err != nil {
		return protocol.OperationReconcileResult{}, err
	}
	status, ok := carriedStatus(f.Message)
	if !ok {
		return protocol.OperationReconcileResult{}, errors.New("no status")
	}
	return protocol.OperationReconcileResult{ProtocolVersion: protocol.ProtocolVersion, SessionID: req.SessionID, RequestID: req.RequestID,
		Tool: req.Tool, OperationKey: req.OperationKey, Status: status}, nil
}

// inputClosed holds the sessions whose worker's input a close already ended, for reclose-kills.
var inputClosed = map[*session]bool{}

// closeKilling is the close-kills fault: a port that ends an ordinary session by killing its
// worker instead of closing its input; and the reclose-kills fault: one whose repeated close,
// once the input is closed, kills the worker instead of doing nothing (TRN-097).
func (s *session) closeKilling() error {
	if fault == "close-kills" || inputClosed[s] {
		_, _ = s.proc.Terminate()
		return nil
	}
	inputClosed[s] = true
	return s.proc.CloseInput()
}

// advance is the advance fault: a port whose engine takes an authenticated succeeded for the
// approval of its step (WFL-005), so that, restored, it has moved past one step of the plan per
// succeeded operation of its ledger.
func advance(e *workflow.Engine) {
	if fault != "advance" {
		return
	}
	for _, op := range e.Ledger().Operations() {
		if op.State == ledger.Succeeded && e.CurrentStep() != "" {
			_ = e.ApproveStep(e.CurrentStep())
		}
	}
}
