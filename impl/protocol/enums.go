package protocol

import "strconv"

// EnvelopeFormat is the payload format a grant accepts: text or JSON. The zero value is
// FormatText, the first variant, as in the reference's declaration order.
type EnvelopeFormat uint8

// The envelope formats.
const (
	FormatText EnvelopeFormat = iota
	FormatJSON
)

var formatNames = [...]string{FormatText: "text", FormatJSON: "json"}

// String returns the wire name, "text" or "json".
func (f EnvelopeFormat) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return "EnvelopeFormat(" + strconv.Itoa(int(f)) + ")"
}

// Valid reports whether f is one of the two formats.
func (f EnvelopeFormat) Valid() bool { return int(f) < len(formatNames) }

// ResourceKind is the kind of an opaque resource selector. The constants are in the
// reference's order, which is also the order selectors sort in.
type ResourceKind uint8

// The resource kinds, in sort order.
const (
	ResourceFileRoot ResourceKind = iota
	ResourceExecutable
	ResourceNetworkOrigin
	ResourceSecret
)

var resourceKindNames = [...]string{
	ResourceFileRoot:      "file_root",
	ResourceExecutable:    "executable",
	ResourceNetworkOrigin: "network_origin",
	ResourceSecret:        "secret",
}

// String returns the wire name, such as "file_root".
func (k ResourceKind) String() string {
	if int(k) < len(resourceKindNames) {
		return resourceKindNames[k]
	}
	return "ResourceKind(" + strconv.Itoa(int(k)) + ")"
}

// Valid reports whether k is one of the four kinds.
func (k ResourceKind) Valid() bool { return int(k) < len(resourceKindNames) }

// WorkerCancellationOutcome is a worker's answer to a cancellation request.
type WorkerCancellationOutcome uint8

// The cancellation outcomes.
const (
	// OutcomeAcknowledged: the adapter stopped the target; no result will follow.
	OutcomeAcknowledged WorkerCancellationOutcome = iota
	// OutcomeTooLate: the result won the race.
	OutcomeTooLate
	// OutcomeUnsupported: the adapter cannot cancel cooperatively.
	OutcomeUnsupported
)

var outcomeNames = [...]string{
	OutcomeAcknowledged: "acknowledged",
	OutcomeTooLate:      "too_late",
	OutcomeUnsupported:  "unsupported",
}

// String returns the wire name, such as "too_late".
func (o WorkerCancellationOutcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "WorkerCancellationOutcome(" + strconv.Itoa(int(o)) + ")"
}

// Valid reports whether o is one of the three outcomes.
func (o WorkerCancellationOutcome) Valid() bool { return int(o) < len(outcomeNames) }

// WorkerOperationStateKind is the payload-free kind of an operation status or journal state.
// The zero value is not a state.
type WorkerOperationStateKind uint8

// The state kinds. Pending exists only in the journal; it is never a wire status.
const (
	StatePending WorkerOperationStateKind = iota + 1
	StateRunning
	StateSucceeded
	StateFailed
	StateCancelled
)

var stateKindNames = [...]string{
	StatePending:   "Pending",
	StateRunning:   "Running",
	StateSucceeded: "Succeeded",
	StateFailed:    "Failed",
	StateCancelled: "Cancelled",
}

var stateWireNames = [...]string{
	StatePending:   "pending",
	StateRunning:   "running",
	StateSucceeded: "succeeded",
	StateFailed:    "failed",
	StateCancelled: "cancelled",
}

// String returns the reference's variant name, such as "Succeeded", as used in errors.
func (k WorkerOperationStateKind) String() string {
	if k.Valid() {
		return stateKindNames[k]
	}
	return "WorkerOperationStateKind(" + strconv.Itoa(int(k)) + ")"
}

// WireName returns the JSON tag value, such as "succeeded".
func (k WorkerOperationStateKind) WireName() string {
	if k.Valid() {
		return stateWireNames[k]
	}
	return k.String()
}

// Valid reports whether k is one of the five kinds.
func (k WorkerOperationStateKind) Valid() bool { return k >= StatePending && k <= StateCancelled }

// MessageType is the "type" tag of a worker message.
type MessageType string

// The twelve message types.
const (
	TypeOpenSession         MessageType = "open_session"
	TypeInvoke              MessageType = "invoke"
	TypeResult              MessageType = "result"
	TypeDispatchOperation   MessageType = "dispatch_operation"
	TypeOperationResult     MessageType = "operation_result"
	TypeCompensateOperation MessageType = "compensate_operation"
	TypeCompensationResult  MessageType = "compensation_result"
	TypeReconcileOperation  MessageType = "reconcile_operation"
	TypeReconciledOperation MessageType = "reconciled_operation"
	TypeCancel              MessageType = "cancel"
	TypeCancellationResult  MessageType = "cancellation_result"
	TypeCloseSession        MessageType = "close_session"
)

// MessageTypes lists the message types in the reference's declaration order.
var MessageTypes = [...]MessageType{
	TypeOpenSession, TypeInvoke, TypeResult, TypeDispatchOperation, TypeOperationResult,
	TypeCompensateOperation, TypeCompensationResult, TypeReconcileOperation,
	TypeReconciledOperation, TypeCancel, TypeCancellationResult, TypeCloseSession,
}
