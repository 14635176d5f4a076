package worker

import (
	"strings"

	"github.com/splashv5/conform/impl/protocol"
)

// Point names a place in a durable flow at which a fault can be injected. The points are the
// persistence points of the worker-runtime chapter, seen from just after each one.
type Point uint8

// The fault points.
const (
	// PointAdmissionPersisted: a new dispatch or compensation record is durable as pending and
	// the adapter has not run yet.
	PointAdmissionPersisted Point = iota + 1
	// PointAdapterReturned: the adapter of a dispatch or compensation returned a status that
	// is not yet persisted.
	PointAdapterReturned
	// PointObservationPersisted: the observed status of a dispatch or compensation is durable
	// and the answer is not yet sealed.
	PointObservationPersisted
	// PointReconciliationPersisted: a reconciliation's observation is durable and the answer
	// is not yet sealed.
	PointReconciliationPersisted
)

var pointNames = [...]string{"", "after-admission", "after-adapter", "after-observation", "after-reconciliation"}

// String returns the point's name, such as "after-admission".
func (p Point) String() string {
	if int(p) < len(pointNames) && p > 0 {
		return pointNames[p]
	}
	return "point?"
}

// ParsePoint returns the point with the given name.
func ParsePoint(name string) (Point, bool) {
	for i, n := range pointNames {
		if i > 0 && n == name {
			return Point(i), true
		}
	}
	return 0, false
}

// Points returns every fault point in flow order.
func Points() []Point {
	return []Point{PointAdmissionPersisted, PointAdapterReturned, PointObservationPersisted, PointReconciliationPersisted}
}

// Fault is one deliberate bug of the worker runtime. Faults exist only so that the
// conformance suite's mutation test can show that its checks fail against a worker that has
// the bug (WRK-095); a worker never enables one by default.
type Fault uint8

// The deliberate faults. Each one breaks exactly one rule; FaultInfos describes them.
const (
	// FaultAcceptReplay: frames are opened whatever their sequence number.
	FaultAcceptReplay Fault = iota + 1
	// FaultSkipTagCheck: frames are opened without verifying their tag.
	FaultSkipTagCheck
	// FaultAcceptReflectedRole: a frame tagged with the worker as sender is opened too.
	FaultAcceptReflectedRole
	// FaultReuseOutgoingSequence: every answer is sealed at outgoing sequence 1.
	FaultReuseOutgoingSequence
	// FaultIgnoreInputLimit: an invocation, dispatch or compensation input over
	// max_input_bytes is authorized.
	FaultIgnoreInputLimit
	// FaultIgnoreCallBudget: a call beyond max_calls is authorized.
	FaultIgnoreCallBudget
	// FaultForgetRequestID: a used request or cancellation id, or one beyond the session's
	// 1,024, is authorized again.
	FaultForgetRequestID
	// FaultRerunDuplicateDispatch: an exact duplicate dispatch runs the adapter again.
	FaultRerunDuplicateDispatch
	// FaultPersistAfterEffect: a new durable record is persisted only after its adapter ran.
	FaultPersistAfterEffect
	// FaultPendingAsSuccess: a duplicate of a pending record is answered as succeeded.
	FaultPendingAsSuccess
	// FaultIgnoreFence: the journal is written under the record's current fence and revision
	// instead of the session's lease and revision.
	FaultIgnoreFence
	// FaultResultAfterAck: a cancel is acknowledged at once, and the invocation's result is
	// written when the adapter completes.
	FaultResultAfterAck
	// FaultTooLateBeforeResult: a too_late outcome is written before the result it follows.
	FaultTooLateBeforeResult
	// FaultNoLineCap: frame lines are read up to 8 MiB instead of 1 MiB, and the length is only
	// known once the line feed arrived.
	FaultNoLineCap
	// FaultAcceptVersion4: messages and manifests with protocol_version 4 are opened.
	FaultAcceptVersion4
	// FaultSkipOutputValidation: an invocation's output is sent without checking it against
	// the grant.
	FaultSkipOutputValidation
	// FaultSkipSessionCheck: a frame whose message names another session is opened.
	FaultSkipSessionCheck
	// FaultExitZeroOnReject: the worker process exits with status 0 after a rejected frame.
	FaultExitZeroOnReject
	// FaultContinueAfterReject: a rejected frame is skipped and the session goes on.
	FaultContinueAfterReject
	// FaultLeakKey: the worker process writes the session key into its diagnostic line.
	FaultLeakKey
	// FaultIgnoreGrant: a tool the manifest does not grant is invoked.
	FaultIgnoreGrant
	// FaultNoReconcileBudget: the reconciliation budgets are never exhausted.
	FaultNoReconcileBudget
	// FaultNoCompensationBudget: compensations are authorized under max_compensations 0 and
	// beyond the budget.
	FaultNoCompensationBudget
	// FaultSkipFingerprintCheck: a compensation whose grant fingerprint does not match the
	// live grant is authorized.
	FaultSkipFingerprintCheck
	// FaultSkipScopeCheck: a compensation naming another tenant scope is admitted.
	FaultSkipScopeCheck
	// FaultAcceptSecondCompensationKey: a compensation under a new key replaces the one an
	// operation already has.
	FaultAcceptSecondCompensationKey
	// FaultRerunDuplicateCompensation: an exact duplicate compensation runs the handler again.
	FaultRerunDuplicateCompensation
	// FaultAdmitReplayedSession: admission admits a session id it already admitted.
	FaultAdmitReplayedSession
	// FaultIgnoreCancel: an authorized cancel never sets the cancellation token.
	FaultIgnoreCancel
	// FaultDetachOnFatal: a fatal error ends the driver without waiting for the running
	// adapter.
	FaultDetachOnFatal
	// FaultAcceptScalarJSON: a JSON invocation input that is not an object or array, or nested
	// too deep, is authorized.
	FaultAcceptScalarJSON
	// FaultUndeclaredSafetyOK: an adapter that declares no invocation safety is invoked.
	FaultUndeclaredSafetyOK
	// FaultLimitOffByOne: the input limits and the invocation output limit refuse a size equal
	// to the limit.
	FaultLimitOffByOne
	// FaultCancelInBaseline: a baseline session answers cancel (too_late) and accepts
	// close_session.
	FaultCancelInBaseline
	// FaultWrongBootstrapStatus: the worker process exits with the transport status instead of
	// the bootstrap status when the bootstrap is invalid.
	FaultWrongBootstrapStatus
	// FaultLateBootstrapChecks: the worker process reads the whole bootstrap (42 + L bytes)
	// before it checks any part of it.
	FaultLateBootstrapChecks

	faultEnd
)

// FaultInfo names and describes one fault.
type FaultInfo struct {
	Fault       Fault
	Name        string
	Description string
}

var faultInfos = [...]FaultInfo{
	{FaultAcceptReplay, "accept-replay", "open frames whatever their sequence number: replays and gaps pass"},
	{FaultSkipTagCheck, "skip-tag-check", "open frames without verifying their authentication tag"},
	{FaultAcceptReflectedRole, "accept-reflected-role", "also open frames tagged with the worker role as sender"},
	{FaultReuseOutgoingSequence, "reuse-outgoing-sequence", "seal every answer at outgoing sequence 1"},
	{FaultIgnoreInputLimit, "ignore-input-limit", "authorize invocation, dispatch and compensation inputs over max_input_bytes"},
	{FaultIgnoreCallBudget, "ignore-call-budget", "authorize invocations and dispatches beyond max_calls"},
	{FaultForgetRequestID, "forget-request-id", "authorize request and cancellation ids already used, and beyond 1,024 per session"},
	{FaultRerunDuplicateDispatch, "rerun-duplicate-dispatch", "run the adapter again for an exact duplicate dispatch"},
	{FaultPersistAfterEffect, "persist-after-effect", "run the adapter before the pending record is persisted"},
	{FaultPendingAsSuccess, "pending-as-success", "answer a duplicate of a pending record as succeeded"},
	{FaultIgnoreFence, "ignore-fence", "persist under the record's current fence and revision, not the session's lease"},
	{FaultResultAfterAck, "result-after-ack", "acknowledge a cancel at once and write the result when the adapter completes"},
	{FaultTooLateBeforeResult, "too-late-before-result", "write the too_late outcome before the result it follows"},
	{FaultNoLineCap, "no-line-cap", "read frame lines up to 8 MiB and only stop at the line feed"},
	{FaultAcceptVersion4, "accept-version-4", "open messages and manifests with protocol_version 4"},
	{FaultSkipOutputValidation, "skip-output-validation", "send an invocation's output without checking it against the grant"},
	{FaultSkipSessionCheck, "skip-session-check", "open a frame whose message names another session"},
	{FaultExitZeroOnReject, "exit-zero-on-reject", "exit with status 0 after a rejected frame"},
	{FaultContinueAfterReject, "continue-after-reject", "skip a rejected frame and keep reading (baseline session)"},
	{FaultLeakKey, "leak-key", "write the session key in the diagnostic line"},
	{FaultIgnoreGrant, "ignore-grant", "invoke registered tools the manifest does not grant"},
	{FaultNoReconcileBudget, "no-reconcile-budget", "never exhaust the reconciliation budgets"},
	{FaultNoCompensationBudget, "no-compensation-budget", "authorize compensations under max_compensations 0 or beyond the budget"},
	{FaultSkipFingerprintCheck, "skip-fingerprint-check", "authorize a compensation whose grant fingerprint does not match"},
	{FaultSkipScopeCheck, "skip-scope-check", "admit a compensation for any tenant scope"},
	{FaultAcceptSecondCompensationKey, "accept-second-compensation-key", "replace an operation's compensation by one under a new key"},
	{FaultRerunDuplicateCompensation, "rerun-duplicate-compensation", "run the compensation handler again for an exact duplicate"},
	{FaultAdmitReplayedSession, "admit-replayed-session", "admit a session id already admitted for the journal"},
	{FaultIgnoreCancel, "ignore-cancel", "never set the cancellation token when a cancel is authorized"},
	{FaultDetachOnFatal, "detach-on-fatal", "end the driver after a fatal error without waiting for the running adapter"},
	{FaultAcceptScalarJSON, "accept-scalar-json", "authorize JSON invocation inputs that are scalars or nested deeper than 32"},
	{FaultUndeclaredSafetyOK, "undeclared-safety-ok", "invoke adapters that declare no invocation safety"},
	{FaultLimitOffByOne, "limit-off-by-one", "refuse inputs and invocation outputs whose size equals the byte limit (>= instead of >)"},
	{FaultCancelInBaseline, "cancel-in-baseline", "answer cancel with too_late and accept close_session in a baseline session"},
	{FaultWrongBootstrapStatus, "wrong-bootstrap-status", "exit with status 4 (transport), not 3, when the bootstrap is invalid"},
	{FaultLateBootstrapChecks, "late-bootstrap-checks", "read the whole bootstrap (42 + L bytes) before checking any part of it"},
}

// FaultInfos returns every fault with its name and a one-line description, in a fixed order.
func FaultInfos() []FaultInfo { return faultInfos[:] }

// String returns the fault's name, such as "accept-replay".
func (f Fault) String() string {
	if f > 0 && f < faultEnd {
		return faultInfos[f-1].Name
	}
	return "fault?"
}

// ParseFault returns the fault with the given name.
func ParseFault(name string) (Fault, bool) {
	for _, info := range faultInfos {
		if info.Name == name {
			return info.Fault, true
		}
	}
	return 0, false
}

// FaultSet is a set of faults; the zero value is empty.
type FaultSet uint64

// With returns the set with f added.
func (s FaultSet) With(f Fault) FaultSet { return s | 1<<f }

// Has reports whether f is in the set.
func (s FaultSet) Has(f Fault) bool { return s&(1<<f) != 0 }

// Any reports whether any of the faults is in the set.
func (s FaultSet) Any(faults ...Fault) bool {
	for _, f := range faults {
		if s.Has(f) {
			return true
		}
	}
	return false
}

// String lists the set's fault names, comma-separated.
func (s FaultSet) String() string {
	var names []string
	for f := Fault(1); f < faultEnd; f++ {
		if s.Has(f) {
			names = append(names, f.String())
		}
	}
	return strings.Join(names, ",")
}

// Faults injects deliberate misbehaviour for the crash and mutation tests of the conformance
// suite. A nil *Faults, or the zero value, injects nothing and the runtime behaves exactly as
// without it (WRK-095).
type Faults struct {
	// At, when set, is called each time a flow reaches a point. A crash test blocks here and
	// kills the process.
	At func(Point)
	// Enabled are the deliberate bugs to behave as.
	Enabled FaultSet
	// SessionKey is the session key, needed by the faults that re-implement frame
	// authentication or sealing (NeedsSessionKey). The caller keeps it and closes it.
	SessionKey *protocol.SessionKey
}

// Has reports whether fault x is enabled; a nil *Faults has none.
func (f *Faults) Has(x Fault) bool { return f != nil && f.Enabled.Has(x) }

// frameFaults replace the authenticator's opening of frames.
var frameFaults = []Fault{FaultAcceptReplay, FaultSkipTagCheck, FaultAcceptReflectedRole, FaultSkipSessionCheck, FaultAcceptVersion4}

// NeedsSessionKey reports whether an enabled fault authenticates or seals frames itself and
// so needs SessionKey.
func (f *Faults) NeedsSessionKey() bool {
	return f != nil && (f.Enabled.Any(frameFaults...) || f.Enabled.Has(FaultReuseOutgoingSequence))
}

func (f *Faults) at(p Point) {
	if f != nil && f.At != nil {
		f.At(p)
	}
}
