package worker

import (
	"sort"
	"sync"

	"github.com/splashv5/conform/impl/protocol"
)

// InvocationSafety is an adapter's declaration that its ordinary invoke is safe to run without
// a journal. The runtime only checks that one is declared (WRK-003).
type InvocationSafety uint8

// The invocation safety declarations.
const (
	// SafetyUndeclared: the adapter makes no claim; invoke is refused.
	SafetyUndeclared InvocationSafety = iota
	// ReadOnly: invoke only reads state or transforms data.
	ReadOnly
	// IndependentlyIdempotent: the external operation behind invoke is idempotent on its own.
	IndependentlyIdempotent
)

// DurableContract is an adapter's declaration of how its durable effects are recovered. The
// runtime only checks that one is declared before dispatch and compensation (WRK-003).
type DurableContract uint8

// The durable-operation contracts.
const (
	// ContractUndeclared: the adapter makes no claim; dispatch and compensation are refused.
	ContractUndeclared DurableContract = iota
	// Reconciliation: the adapter can report an operation's status by its operation key.
	Reconciliation
	// ProviderIdempotencyAndReconciliation: the adapter also passes the operation key to its
	// provider as an idempotency key.
	ProviderIdempotencyAndReconciliation
)

// Adapter is the trusted worker-side implementation of one tool. Every method receives the
// live grant of the session's manifest. Embed Unimplemented to get the defaults: no
// declarations and Unsupported for every operation.
type Adapter interface {
	// InvocationSafety declares whether Invoke may run (WRK-030).
	InvocationSafety() InvocationSafety
	// DurableContract declares whether DispatchOperation and CompensateOperation may run.
	DurableContract() DurableContract
	// Invoke runs an ordinary invocation and returns its output payload.
	Invoke(req protocol.ToolInvocation, grant protocol.CapabilityGrant) (protocol.ToolPayload, error)
	// DispatchOperation performs a durable effect once and reports its status. It must
	// return an AdapterIndeterminate error when it cannot tell whether the effect happened,
	// and a failed status (not an error) when it knows the effect did not happen.
	DispatchOperation(req protocol.OperationDispatchRequest, grant protocol.CapabilityGrant) (protocol.OperationStatus, error)
	// CompensateOperation performs the inverse effect of a succeeded operation.
	CompensateOperation(req protocol.OperationCompensationRequest, grant protocol.CapabilityGrant) (protocol.OperationStatus, error)
	// ReconcileOperation reports the current status of an operation by its key.
	ReconcileOperation(req protocol.OperationReconcileRequest, grant protocol.CapabilityGrant) (protocol.OperationStatus, error)
}

// FencedOperations is an optional interface of an adapter whose effect system takes the
// session's fencing token (STO-072). When an adapter implements it, the runtime calls these
// methods instead of DispatchOperation, CompensateOperation and ReconcileOperation, with the
// same request and grant and the token of the session's journal lease (WRK-082), so the
// adapter can pass the token and the operation key to its effect system, which refuses a
// token lower than the highest it was shown for the key (STO-073).
type FencedOperations interface {
	// DispatchFenced is DispatchOperation under the session's fencing token.
	DispatchFenced(req protocol.OperationDispatchRequest, grant protocol.CapabilityGrant, token uint64) (protocol.OperationStatus, error)
	// CompensateFenced is CompensateOperation under the session's fencing token.
	CompensateFenced(req protocol.OperationCompensationRequest, grant protocol.CapabilityGrant, token uint64) (protocol.OperationStatus, error)
	// ReconcileFenced is ReconcileOperation under the session's fencing token; the adapter
	// shows the token to the effect system before it reads the status.
	ReconcileFenced(req protocol.OperationReconcileRequest, grant protocol.CapabilityGrant, token uint64) (protocol.OperationStatus, error)
}

// Unimplemented is embedded by adapters to inherit the default behaviour of every Adapter
// method: no declarations, and an Unsupported error naming the operation (WRK-004).
type Unimplemented struct{}

// InvocationSafety returns SafetyUndeclared.
func (Unimplemented) InvocationSafety() InvocationSafety { return SafetyUndeclared }

// DurableContract returns ContractUndeclared.
func (Unimplemented) DurableContract() DurableContract { return ContractUndeclared }

// Invoke fails with Unsupported("invoke").
func (Unimplemented) Invoke(protocol.ToolInvocation, protocol.CapabilityGrant) (protocol.ToolPayload, error) {
	return protocol.ToolPayload{}, Unsupported("invoke")
}

// DispatchOperation fails with Unsupported("dispatch_operation").
func (Unimplemented) DispatchOperation(protocol.OperationDispatchRequest, protocol.CapabilityGrant) (protocol.OperationStatus, error) {
	return protocol.OperationStatus{}, Unsupported("dispatch_operation")
}

// CompensateOperation fails with Unsupported("compensate_operation").
func (Unimplemented) CompensateOperation(protocol.OperationCompensationRequest, protocol.CapabilityGrant) (protocol.OperationStatus, error) {
	return protocol.OperationStatus{}, Unsupported("compensate_operation")
}

// ReconcileOperation fails with Unsupported("reconcile_operation").
func (Unimplemented) ReconcileOperation(protocol.OperationReconcileRequest, protocol.CapabilityGrant) (protocol.OperationStatus, error) {
	return protocol.OperationStatus{}, Unsupported("reconcile_operation")
}

// CancelToken is the cancellation signal shared with one running cancellable invocation. The
// driver sets it only after a cancel frame authenticated and was authorized (CAN-006).
// Observing it is not an acknowledgement (CAN-020).
type CancelToken struct {
	once sync.Once
	done chan struct{}
}

// NewCancelToken returns a token that is not set.
func NewCancelToken() *CancelToken { return &CancelToken{done: make(chan struct{})} }

// Requested reports whether cancellation was requested.
func (t *CancelToken) Requested() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// Done returns a channel that is closed once cancellation is requested.
func (t *CancelToken) Done() <-chan struct{} { return t.done }

// NewCancelTokenForTest returns an unset token and the function that sets it, so that a
// cancellable adapter can be tested without a driver. Workers never need it: the driver sets
// the token itself.
func NewCancelTokenForTest() (*CancelToken, func()) {
	t := NewCancelToken()
	return t, t.request
}

// request sets the token; setting it again has no effect.
func (t *CancelToken) request() { t.once.Do(func() { close(t.done) }) }

// Completion is what a cancellable invocation returns: a payload, or an acknowledgement that
// the requested cancellation won and no result will follow.
type Completion struct {
	// Acknowledged is true for a cancellation acknowledgement; Payload is then unused.
	Acknowledged bool
	// Payload is the output of a completed invocation.
	Payload protocol.ToolPayload
}

// Completed returns the completion of an invocation that produced p.
func Completed(p protocol.ToolPayload) Completion { return Completion{Payload: p} }

// Acknowledged returns a cancellation acknowledgement. An adapter returns it only after its
// effect and downstream I/O have stopped.
func Acknowledged() Completion { return Completion{Acknowledged: true} }

// CancellableAdapter is an adapter that can run an ordinary invocation outside the frame loop
// and acknowledge a cooperative cancellation (chapter 14). It also serves every Adapter
// operation, so a baseline session can use it too (WRK-002).
type CancellableAdapter interface {
	Adapter
	// InvokeCancellable runs one invocation while watching token.
	InvokeCancellable(req protocol.ToolInvocation, grant protocol.CapabilityGrant, token *CancelToken) (Completion, error)
}

type registryEntry struct {
	adapter     Adapter
	cancellable CancellableAdapter // nil for a standard adapter
}

// Registry maps tool names to adapters. It is not safe for concurrent registration; a session
// reads it from one goroutine at a time.
type Registry struct {
	entries map[string]registryEntry
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{entries: map[string]registryEntry{}} }

func (r *Registry) check(tool string) error {
	if !protocol.IsToken(tool) {
		return &Error{Kind: ErrInvalidTool, Tool: tool}
	}
	if _, ok := r.entries[tool]; ok {
		return &Error{Kind: ErrDuplicateTool, Tool: tool}
	}
	return nil
}

// Register adds a standard adapter for tool. It fails with ErrInvalidTool for a name that is
// not a token and ErrDuplicateTool for a name already registered; the registry is then
// unchanged (WRK-001).
func (r *Registry) Register(tool string, a Adapter) error {
	if err := r.check(tool); err != nil {
		return err
	}
	r.entries[tool] = registryEntry{adapter: a}
	return nil
}

// RegisterCancellable adds a cancellable adapter for tool, with the checks of Register.
func (r *Registry) RegisterCancellable(tool string, a CancellableAdapter) error {
	if err := r.check(tool); err != nil {
		return err
	}
	r.entries[tool] = registryEntry{adapter: a, cancellable: a}
	return nil
}

// Contains reports whether an adapter is registered for tool.
func (r *Registry) Contains(tool string) bool {
	_, ok := r.entries[tool]
	return ok
}

// IsCancellable reports whether tool's adapter was registered as cancellable.
func (r *Registry) IsCancellable(tool string) bool {
	return r.entries[tool].cancellable != nil
}

// Adapter returns tool's adapter (a cancellable adapter serves as a standard one too).
func (r *Registry) Adapter(tool string) (Adapter, bool) {
	e, ok := r.entries[tool]
	return e.adapter, ok
}

// Cancellable returns tool's cancellable adapter, if it was registered as one.
func (r *Registry) Cancellable(tool string) (CancellableAdapter, bool) {
	e := r.entries[tool]
	return e.cancellable, e.cancellable != nil
}

// Tools returns the registered tool names in byte order.
func (r *Registry) Tools() []string {
	tools := make([]string, 0, len(r.entries))
	for t := range r.entries {
		tools = append(tools, t)
	}
	sort.Strings(tools)
	return tools
}
