//go:build splashfaults

package worker

// The faulty build: deliberate bugs of the worker runtime and process, for the conformance
// suite's mutation test and the crash tests. Nothing here exists in the default build; see
// docs/conformance.md.

import (
	"context"
	"errors"
	"strings"

	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/protocol"
)

// Point names a persistence point of a durable flow, seen from just after it. A crash test
// pauses the worker there and kills it.
type Point uint8

// The persistence points, in flow order.
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

// Points returns every persistence point in flow order.
func Points() []Point {
	return []Point{PointAdmissionPersisted, PointAdapterReturned, PointObservationPersisted, PointReconciliationPersisted}
}

// Fault is one deliberate bug of the worker runtime or process.
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
	// FaultRefuseNonPortableAnswers: every answer holding a non-portable payload number is
	// refused, as before ENC-053 and ENC-054: an echo of the host's own numbers fails, and a
	// durable outcome with such numbers is never answered although its effect happened.
	FaultRefuseNonPortableAnswers
	// FaultUncheckedDuplicate: an exact duplicate dispatch is answered from the journal without
	// checking the stored status against the live grant.
	FaultUncheckedDuplicate
	// FaultIgnorePersistFailure: a failed journal write is ignored; the flow goes on and
	// answers as if the journal had been persisted.
	FaultIgnorePersistFailure
	// FaultTypedIgnoreDecodeError: the typed JSON adapter helper runs its handler with what
	// the decoder returned, ignoring the decoder's error.
	FaultTypedIgnoreDecodeError
	// FaultTypedUncheckedOutput: the typed JSON adapter helper returns an output that is not
	// a JSON object or array instead of refusing it.
	FaultTypedUncheckedOutput
	// FaultTypedServesDispatch: the typed JSON adapter helper declares a durable contract and
	// serves dispatch_operation by running its handler.
	FaultTypedServesDispatch
	// FaultSecretIgnoreSelector: the secret broker resolves whatever selectors the grant
	// carries.
	FaultSecretIgnoreSelector
	// FaultSecretAnyKind: the secret broker accepts a selector of any kind with the secret's
	// id.
	FaultSecretAnyKind
	// FaultSecretAnySecret: the secret broker accepts any secret selector, whatever its id.
	FaultSecretAnySecret
	// FaultSecretManifestSelectors: the runtime gives an adapter its grant with every selector
	// of the manifest added.
	FaultSecretManifestSelectors
	// FaultSecretInDiagnostic: the secret broker resolves before its checks and quotes the
	// secret in its refusal, which reaches the worker's diagnostic line.
	FaultSecretInDiagnostic
	// FaultSecretInResult: the secret tool appends the secret, in hexadecimal, to its answer.
	FaultSecretInResult
	// FaultSecretInEffectLog: the secret tool logs the secret, in base64, in the effect log.
	FaultSecretInEffectLog
	// FaultAnswerUnpersistedCompensation: a compensation whose observation write fails is
	// answered as if it had been persisted.
	FaultAnswerUnpersistedCompensation
	// FaultSurviveFailedWrite: a failed journal write neither poisons the session nor ends the
	// process; the next frame is served.
	FaultSurviveFailedWrite
	// FaultRerunPendingCompensation: an exact duplicate of a compensation whose record is
	// still pending runs the handler again and answers its outcome.
	FaultRerunPendingCompensation
	// FaultNonPortableIsProof: any non-portable number in a verified host frame counts as the
	// peer's proof that it keeps number text, not only a Preserve-only one.
	FaultNonPortableIsProof
	// FaultWithheldResultInternal: an invoke result withheld for a non-portable number is
	// reported as a sealing failure (internal status) instead of in the adapter class.
	FaultWithheldResultInternal
	// FaultSecretValueUnbounded: the secret broker takes a provider's bytes as the value
	// whatever their length, also none or more than 65,536.
	FaultSecretValueUnbounded
	// FaultSecretProviderDetail: the secret broker keeps its provider's error, detail and all,
	// as the cause of its own.
	FaultSecretProviderDetail
	// FaultSecretIDInError: the secret broker names the secret's identifier in its refusals.
	FaultSecretIDInError
	// FaultLeakStorageKey: the worker process writes the storage key, as a Go byte list, into
	// its diagnostic line.
	FaultLeakStorageKey
	// FaultStorageKeyInEffectLog: the worker process appends an effect line holding the
	// storage key, base64 encoded after one other byte, to the profile's effect log.
	FaultStorageKeyInEffectLog
	// FaultUnfencedEffects: the runtime calls adapters without the session's fencing token, so
	// an effect system cannot refuse a superseded worker.
	FaultUnfencedEffects
	// FaultStorageKeyInFrame: the profile's text echo appends the storage key, base32 encoded
	// after two other bytes, to its answers.
	FaultStorageKeyInFrame
	// FaultStorageKeyInJournal: the worker process takes the storage key, in hexadecimal, as
	// the namespace of its journal record, so the key lands in the journal file.
	FaultStorageKeyInJournal
	// FaultInvokeWritesJournal: every answered invoke also writes the session's journal, at a
	// new revision, as a durable request would.
	FaultInvokeWritesJournal

	faultEnd
)

// FaultInfo is one entry of the fault catalog.
type FaultInfo struct {
	Fault Fault
	// Name is the fault's name for --fault, such as "accept-replay".
	Name string
	// Rule is the requirement ID of the rule the fault breaks.
	Rule string
	// Checks are the conformance checks of which at least one must fail while the fault is
	// active.
	Checks []string
	// Description says in one line what the faulty worker does.
	Description string
}

// faultInfos is the fault catalog: the one list of the deliberate faults.
var faultInfos = [...]FaultInfo{
	{FaultAcceptReplay, "accept-replay", "FRM-025", []string{"CNF-FRAME-06", "CNF-FRAME-07", "CNF-OPEN-04"},
		"open frames whatever their sequence number: replays and gaps pass"},
	{FaultSkipTagCheck, "skip-tag-check", "FRM-014", []string{"CNF-FRAME-01", "CNF-FRAME-02", "CNF-FRAME-03", "CNF-OPEN-03", "CNF-FRAME-09", "CNF-CANCEL-22"},
		"open frames without verifying their authentication tag"},
	{FaultAcceptReflectedRole, "accept-reflected-role", "FRM-028", []string{"CNF-FRAME-04", "CNF-FRAME-05"},
		"also open frames tagged with the worker role as sender"},
	{FaultReuseOutgoingSequence, "reuse-outgoing-sequence", "WRK-023", []string{"CNF-FRAME-22", "CNF-PROFILE-11", "CNF-PROC-03"},
		"seal every answer at outgoing sequence 1"},
	{FaultIgnoreInputLimit, "ignore-input-limit", "AUZ-008", []string{"CNF-AUTHZ-03", "CNF-AUTHZ-05", "CNF-AUTHZ-16", "CNF-COMP-16"},
		"authorize invocation, dispatch and compensation inputs over max_input_bytes"},
	{FaultIgnoreCallBudget, "ignore-call-budget", "AUZ-008", []string{"CNF-AUTHZ-06", "CNF-AUTHZ-13"},
		"authorize invocations and dispatches beyond max_calls"},
	{FaultForgetRequestID, "forget-request-id", "AUZ-005", []string{"CNF-AUTHZ-07", "CNF-AUTHZ-08", "CNF-CANCEL-18", "CNF-AUTHZ-09", "CNF-AUTHZ-17", "CNF-CANCEL-21"},
		"authorize request and cancellation ids already used, and beyond 1,024 per session"},
	{FaultRerunDuplicateDispatch, "rerun-duplicate-dispatch", "WRK-041", []string{"CNF-DURABLE-04", "CNF-DURABLE-15"},
		"run the adapter again for an exact duplicate dispatch"},
	{FaultPersistAfterEffect, "persist-after-effect", "WRK-042", []string{"CNF-DURABLE-19", "CNF-DURABLE-28", "CNF-COMP-18"},
		"run the adapter before the pending record is persisted"},
	{FaultPendingAsSuccess, "pending-as-success", "WRK-041", []string{"CNF-DURABLE-16", "CNF-DURABLE-17"},
		"answer a duplicate of a pending record as succeeded"},
	{FaultIgnoreFence, "ignore-fence", "WRK-070", []string{"CNF-DURABLE-19", "CNF-DURABLE-33"},
		"persist under the record's current fence and revision, not the session's lease"},
	{FaultResultAfterAck, "result-after-ack", "CAN-016", []string{"CNF-CANCEL-01"},
		"acknowledge a cancel at once and write the result when the adapter completes"},
	{FaultTooLateBeforeResult, "too-late-before-result", "CAN-015", []string{"CNF-CANCEL-02"},
		"write the too_late outcome before the result it follows"},
	{FaultNoLineCap, "no-line-cap", "FRM-032", []string{"CNF-FRAME-12", "CNF-FRAME-11"},
		"read frame lines up to 8 MiB and only stop at the line feed"},
	{FaultAcceptVersion4, "accept-version-4", "MSG-001", []string{"CNF-FRAME-17", "CNF-OPEN-15"},
		"open messages and manifests with protocol_version 4"},
	{FaultSkipOutputValidation, "skip-output-validation", "AUZ-021", []string{"CNF-OUTPUT-01", "CNF-OUTPUT-03", "CNF-CANCEL-17"},
		"send an invocation's output without checking it against the grant"},
	{FaultSkipSessionCheck, "skip-session-check", "FRM-027", []string{"CNF-FRAME-10", "CNF-OPEN-05"},
		"open a frame whose message names another session"},
	{FaultExitZeroOnReject, "exit-zero-on-reject", "WRK-092", []string{"CNF-FRAME-02", "CNF-AUTHZ-01", "CNF-OUTPUT-04"},
		"exit with status 0 after a rejected frame"},
	{FaultContinueAfterReject, "continue-after-reject", "WRK-091", []string{"CNF-FRAME-14", "CNF-AUTHZ-07"},
		"skip a rejected frame and keep reading (baseline session)"},
	{FaultLeakKey, "leak-key", "WRK-093", []string{"CNF-PROC-02", "CNF-PROC-01"},
		"write the session key in the diagnostic line"},
	{FaultIgnoreGrant, "ignore-grant", "AUZ-008", []string{"CNF-AUTHZ-01"},
		"invoke registered tools the manifest does not grant"},
	{FaultNoReconcileBudget, "no-reconcile-budget", "WRK-061", []string{"CNF-DURABLE-13"},
		"never exhaust the reconciliation budgets"},
	{FaultNoCompensationBudget, "no-compensation-budget", "AUZ-013", []string{"CNF-COMP-03", "CNF-COMP-04"},
		"authorize compensations under max_compensations 0 or beyond the budget"},
	{FaultSkipFingerprintCheck, "skip-fingerprint-check", "AUZ-013", []string{"CNF-COMP-05"},
		"authorize a compensation whose grant fingerprint does not match"},
	{FaultSkipScopeCheck, "skip-scope-check", "JRN-008", []string{"CNF-COMP-11"},
		"admit a compensation for any tenant scope"},
	{FaultAcceptSecondCompensationKey, "accept-second-compensation-key", "JRN-021", []string{"CNF-COMP-08", "CNF-COMP-21"},
		"replace an operation's compensation by one under a new key"},
	{FaultRerunDuplicateCompensation, "rerun-duplicate-compensation", "WRK-051", []string{"CNF-COMP-10"},
		"run the compensation handler again for an exact duplicate"},
	{FaultAdmitReplayedSession, "admit-replayed-session", "WRK-094", []string{"CNF-DURABLE-18"},
		"admit a session id already admitted for the journal"},
	{FaultIgnoreCancel, "ignore-cancel", "CAN-006", []string{"CNF-CANCEL-01"},
		"never set the cancellation token when a cancel is authorized"},
	{FaultDetachOnFatal, "detach-on-fatal", "CAN-019", []string{"CNF-CANCEL-12"},
		"end the driver after a fatal error without waiting for the running adapter"},
	{FaultAcceptScalarJSON, "accept-scalar-json", "MSG-035", []string{"CNF-AUTHZ-10", "CNF-AUTHZ-11"},
		"authorize JSON invocation inputs that are scalars or nested deeper than 32"},
	{FaultUndeclaredSafetyOK, "undeclared-safety-ok", "WRK-030", []string{"CNF-AUTHZ-12"},
		"invoke adapters that declare no invocation safety"},
	{FaultLimitOffByOne, "limit-off-by-one", "AUZ-010", []string{"CNF-AUTHZ-04", "CNF-OUTPUT-02", "CNF-OUTPUT-05"},
		"refuse inputs and invocation outputs whose size equals the byte limit (>= instead of >)"},
	{FaultCancelInBaseline, "cancel-in-baseline", "CAN-022", []string{"CNF-CANCEL-06", "CNF-CANCEL-11"},
		"answer cancel with too_late and accept close_session in a baseline session"},
	{FaultWrongBootstrapStatus, "wrong-bootstrap-status", "WRK-092", []string{"CNF-BOOT-01", "CNF-BOOT-02", "CNF-BOOT-03", "CNF-BOOT-04", "CNF-BOOT-05", "CNF-BOOT-06", "CNF-BOOT-07", "CNF-BOOT-08", "CNF-BOOT-09", "CNF-BOOT-10"},
		"exit with status 4 (transport), not 3, when the bootstrap is invalid"},
	{FaultLateBootstrapChecks, "late-bootstrap-checks", "BOOT-006", []string{"CNF-BOOT-02", "CNF-BOOT-03", "CNF-BOOT-04", "CNF-BOOT-06"},
		"read the whole bootstrap (42 + L bytes) before checking any part of it"},
	{FaultRefuseNonPortableAnswers, "refuse-non-portable-answers", "WRK-048", []string{"CNF-DURABLE-26", "CNF-NUMBER-04"},
		"refuse every answer holding a non-portable number: durable effects with such numbers are stranded"},
	{FaultUncheckedDuplicate, "unchecked-duplicate", "WRK-049", []string{"CNF-DURABLE-27"},
		"answer an exact duplicate from the journal without checking it against the live grant"},
	{FaultIgnorePersistFailure, "ignore-persist-failure", "WRK-071", []string{"CNF-DURABLE-28", "CNF-DURABLE-29", "CNF-DURABLE-30", "CNF-COMP-18", "CNF-COMP-19"},
		"ignore a failed journal write: no restore, no poisoning, the effect runs and the answer is sent"},
	{FaultTypedIgnoreDecodeError, "typed-ignore-decode-error", "WRK-005", []string{"CNF-PROFILE-18", "CNF-PROFILE-14", "CNF-PROFILE-19"},
		"the typed JSON helper runs its handler on what a failed decoding returned (wrong arrays, wrong types, unknown members)"},
	{FaultTypedUncheckedOutput, "typed-unchecked-output", "WRK-005", []string{"CNF-PROFILE-16"},
		"the typed JSON helper passes on an output that is not an object or array"},
	{FaultTypedServesDispatch, "typed-serves-dispatch", "WRK-005", []string{"CNF-PROFILE-17"},
		"the typed JSON helper declares a durable contract and answers dispatch_operation"},
	{FaultSecretIgnoreSelector, "secret-ignore-selector", "SEC-003", []string{"CNF-SECRET-02"},
		"the secret broker resolves a secret under a grant without its selector"},
	{FaultSecretAnyKind, "secret-any-kind", "SEC-003", []string{"CNF-SECRET-03"},
		"the secret broker accepts a selector of another kind that has the secret's id"},
	{FaultSecretAnySecret, "secret-any-secret", "SEC-003", []string{"CNF-SECRET-04"},
		"the secret broker accepts any secret selector, whatever its id"},
	{FaultSecretManifestSelectors, "secret-manifest-selectors", "SEC-008", []string{"CNF-SECRET-05"},
		"adapters get their grant with the selectors of every grant of the manifest added"},
	{FaultSecretInDiagnostic, "secret-in-diagnostic", "SEC-010", []string{"CNF-SECRET-02"},
		"the secret broker resolves before its checks and quotes the secret in its refusal"},
	{FaultSecretInResult, "secret-in-result", "SEC-009", []string{"CNF-SECRET-01"},
		"the secret tool appends the secret in hexadecimal to its answer"},
	{FaultSecretInEffectLog, "secret-in-effect-log", "SEC-010", []string{"CNF-SECRET-06"},
		"the secret tool logs the secret in base64 in the effect log"},
	{FaultAnswerUnpersistedCompensation, "answer-unpersisted-compensation", "WRK-052", []string{"CNF-COMP-19"},
		"answer a compensation whose observation write failed"},
	{FaultSurviveFailedWrite, "survive-failed-write", "WRK-071", []string{"CNF-COMP-20"},
		"a failed journal write neither poisons the session nor ends the process"},
	{FaultRerunPendingCompensation, "rerun-pending-compensation", "WRK-051", []string{"CNF-COMP-21"},
		"run the handler again for a duplicate of a compensation still pending"},
	{FaultNonPortableIsProof, "non-portable-is-proof", "ENC-053", []string{"CNF-NUMBER-05"},
		"take any non-portable number of a verified host frame as proof that the host keeps number text"},
	{FaultWithheldResultInternal, "withheld-result-internal", "WRK-048", []string{"CNF-NUMBER-05"},
		"report an invoke result withheld for its numbers as a sealing failure (status 8)"},
	{FaultSecretValueUnbounded, "secret-value-unbounded", "SEC-005", []string{"CNF-SECRET-07"},
		"the secret broker takes a provider's bytes of any length, none or over 65,536, as the value"},
	{FaultSecretProviderDetail, "secret-provider-detail", "SEC-007", []string{"CNF-SECRET-08"},
		"the secret broker keeps its provider's error, detail and all, as the cause of its own"},
	{FaultSecretIDInError, "secret-id-in-error", "SEC-007", []string{"CNF-SECRET-02", "CNF-SECRET-03", "CNF-SECRET-04", "CNF-SECRET-05"},
		"the secret broker names the secret's identifier in its refusals"},
	{FaultLeakStorageKey, "leak-storage-key", "WRK-093", []string{"CNF-PROC-02"},
		"write the storage key as a Go byte list into the diagnostic line"},
	{FaultStorageKeyInEffectLog, "storage-key-in-effect-log", "WRK-093", []string{"CNF-PROC-02"},
		"append an effect line holding the storage key in base64, after one other byte, to the effect log"},
	{FaultUnfencedEffects, "unfenced-effects", "STO-072", []string{"CNF-DURABLE-32"},
		"call adapters without the session's fencing token: a superseded worker's effect lands after a newer one reconciled"},
	{FaultStorageKeyInFrame, "storage-key-in-frame", "WRK-093", []string{"CNF-PROC-02"},
		"the text echo appends the storage key in base32, after two other bytes, to its answers"},
	{FaultStorageKeyInJournal, "storage-key-in-journal", "WRK-093", []string{"CNF-PROC-02"},
		"take the storage key in hexadecimal as the journal's record namespace, so it lands in the journal file"},
	{FaultInvokeWritesJournal, "invoke-writes-journal", "WRK-031", []string{"CNF-DURABLE-34"},
		"write the journal again, unchanged, at a new revision after every answered invoke"},
}

// FaultInfos returns the fault catalog in a fixed order.
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

// FaultSet is a set of faults; the zero value is empty. It has room for every value of
// Fault.
type FaultSet [4]uint64

// With returns the set with f added.
func (s FaultSet) With(f Fault) FaultSet {
	s[f/64] |= 1 << (f % 64)
	return s
}

// Has reports whether f is in the set.
func (s FaultSet) Has(f Fault) bool { return s[f/64]&(1<<(f%64)) != 0 }

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

// Faults are the deliberate faults of one session or process. The zero value injects
// nothing: the runtime then behaves exactly as the default build.
type Faults struct {
	// At, when set, is called each time a flow reaches a persistence point. A crash test
	// blocks here and kills the process. The points are seen through the adapters' durable
	// calls and the journal store's writes, so At applies to a session run by Serve with
	// WithServeFaults.
	At func(Point)
	// Enabled are the deliberate bugs to behave as.
	Enabled FaultSet
	// SessionKey is the session key, needed by the faults that re-implement frame
	// authentication or sealing (NeedsSessionKey). The caller keeps it and closes it.
	SessionKey *protocol.SessionKey

	paused *pauses // where the session stands for At
	// manifest is the session's manifest once it is opened (FaultSecretManifestSelectors).
	manifest *protocol.CapabilityManifest
}

// Has reports whether fault x is enabled; a nil *Faults has none.
func (f *Faults) Has(x Fault) bool { return f != nil && f.Enabled.Has(x) }

// frameFaults replace the authenticator's opening of frames.
var frameFaults = []Fault{FaultAcceptReplay, FaultSkipTagCheck, FaultAcceptReflectedRole, FaultSkipSessionCheck, FaultAcceptVersion4}

// NeedsSessionKey reports whether an enabled fault authenticates or seals frames itself and
// so needs SessionKey.
func (f *Faults) NeedsSessionKey() bool {
	return f != nil && (f.Enabled.Any(frameFaults...) || f.Enabled.Any(FaultReuseOutgoingSequence, FaultNonPortableIsProof))
}

// WithFaults returns cfg with the faults f; a nil f leaves cfg as it is.
func WithFaults(cfg Config, f *Faults) Config {
	if f != nil {
		cfg.hooks = f
	}
	return cfg
}

// WithServeFaults returns cfg with the faults f (with FaultIgnoreFence its store then writes
// as f.Persister does); a nil f leaves cfg as it is.
func WithServeFaults(cfg ServeConfig, f *Faults) ServeConfig {
	if f != nil {
		cfg.hooks = f
		if f.Has(FaultIgnoreFence) {
			cfg.Store = unfencedStore{cfg.Store}
		}
		if f.At != nil {
			cfg.Store = pausingStore{cfg.Store, f.pauses()}
		}
	}
	return cfg
}

// Persister returns store, or with FaultIgnoreFence a store that writes under the record's
// current fence and revision instead of those it is given.
func (f *Faults) Persister(store JournalPersister) JournalPersister {
	if !f.Has(FaultIgnoreFence) {
		return store
	}
	return unfencedPersister{store}
}

// The hooks of the runtime (testOnlyHooks). A hook whose faults are not enabled reports
// ok == false, or returns what it was given, so that the runtime goes its own way.

func (f *Faults) open(auth *protocol.Authenticator, p *sessionParts) error {
	opener, err := f.frameOpener(auth)
	if err != nil {
		return err
	}
	sealer, err := f.frameSealer(auth)
	if err != nil {
		return err
	}
	p.opener, p.sealer = opener, sealer
	f.numberFaults(auth, p)
	p.admission = f.admission(p.admission)
	p.registry = f.registry(p.registry)
	if f.Has(FaultNoReconcileBudget) {
		p.limits = Limits{^uint32(0), ^uint32(0)}
	}
	return nil
}

func (f *Faults) skipRejected(err error) bool {
	if f.Has(FaultSurviveFailedWrite) && (errors.Is(err, ErrJournal) || errors.Is(err, ErrInvalidJournalRevision)) {
		return true
	}
	return f.Has(FaultContinueAfterReject) && !errors.Is(err, ErrEndOfInput)
}

func (f *Faults) poisonOnFailedWrite() bool { return !f.Has(FaultSurviveFailedWrite) }

func (f *Faults) detachOnFatal() bool { return f.Has(FaultDetachOnFatal) }

func (f *Faults) uncheckedDuplicate() bool { return f.Has(FaultUncheckedDuplicate) }

func (f *Faults) ignorePersistFailure() bool { return f.Has(FaultIgnorePersistFailure) }

// invokeWritesJournal makes flow A write the journal (FaultInvokeWritesJournal).
func (f *Faults) invokeWritesJournal() bool { return f.Has(FaultInvokeWritesJournal) }

// unfencedEffects withholds the session's fencing token from adapters (FaultUnfencedEffects).
func (f *Faults) unfencedEffects() bool { return f.Has(FaultUnfencedEffects) }

// admitDispatch admits, with FaultUncheckedDuplicate, an exact duplicate whose stored status
// the live grant rejects: the journal's refusal is replaced by the stored status.
func (f *Faults) admitDispatch(s *Session, auth authorizer.AuthorizedOperationInvocation, admit func() (journal.Admission, error)) func() (journal.Admission, error) {
	if !f.Has(FaultUncheckedDuplicate) {
		return admit
	}
	return func() (journal.Admission, error) {
		admission, err := admit()
		if err == nil {
			return admission, nil
		}
		req := auth.Request()
		r, ok := s.journal.Operation(req.OperationKey)
		fp, fpErr := protocol.OperationInputFingerprint(req.Payload)
		if ok && fpErr == nil && r.Tool == req.Tool && r.InputFingerprint == fp && r.State.State != protocol.StatePending {
			return journal.Admission{Kind: journal.Existing, State: r.State}, nil
		}
		return admission, err
	}
}

// otherMessage answers cancel and close_session in a baseline session (FaultCancelInBaseline).
func (f *Faults) otherMessage(s *Session, m protocol.Message) ([]byte, bool, error) {
	if !f.Has(FaultCancelInBaseline) {
		return nil, false, nil
	}
	answer, err := s.cancelInBaseline(m)
	return answer, true, err
}

// admitCompensation admits, with FaultAcceptSecondCompensationKey, a compensation under a
// new key in place of the one its operation already has.
func (f *Faults) admitCompensation(s *Session, c authorizer.AuthorizedOperationCompensation, admit func() (journal.Admission, error)) func() (journal.Admission, error) {
	if !f.Has(FaultAcceptSecondCompensationKey) {
		return admit
	}
	return func() (journal.Admission, error) {
		admission, err := admit()
		if err != nil {
			return s.replaceCompensation(c, err)
		}
		return admission, nil
	}
}

// duplicate answers an exact duplicate found in the journal under the enabled faults: a
// stored pending state becomes succeeded (FaultPendingAsSuccess), and with the rerun fault of
// the flow the adapter runs again, its effect happening a second time; its outcome is
// ignored and the answer is still the stored state.
func (f *Faults) duplicate(s *Session, stored protocol.OperationStatus, d *durableRequest) (protocol.OperationStatus, bool) {
	if stored.State == protocol.StatePending && d.compensation && f.Has(FaultRerunPendingCompensation) {
		return s.rerunPending(d)
	}
	if stored.State == protocol.StatePending {
		if !f.Has(FaultPendingAsSuccess) {
			return protocol.OperationStatus{}, false
		}
		stored = protocol.Succeeded(emptyPayload(d.grant.Format))
	}
	rerun := FaultRerunDuplicateDispatch
	if d.compensation {
		rerun = FaultRerunDuplicateCompensation
	}
	if f.Has(rerun) {
		if a, err := s.adapter(d.tool); err == nil {
			_ = guard(d.tool, func() error { _, e := d.run(a); return e })
		}
	}
	return stored, true
}

// journaledCall runs the adapter before the pending record is persisted
// (FaultPersistAfterEffect): an effect can happen that the journal never knew about.
func (f *Faults) journaledCall(ctx context.Context, s *Session, store JournalPersister, before *journal.Journal, d *durableRequest) (protocol.OperationStatus, bool, error) {
	switch {
	case f.Has(FaultPersistAfterEffect):
		status, err := s.effectFirst(ctx, store, before, d)
		return status, true, err
	case d.compensation && f.Has(FaultAnswerUnpersistedCompensation):
		status, err := s.observationUnchecked(ctx, store, before, d)
		return status, true, err
	}
	return protocol.OperationStatus{}, false, nil
}
