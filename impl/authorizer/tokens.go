package authorizer

import "github.com/splashv5/conform/impl/protocol"

// AuthorizedInvocation is the proof that an ordinary invocation was authorized. Only the
// authorizer that issued it accepts it; the zero value is accepted by none.
type AuthorizedInvocation struct {
	issuer     *issuer
	invocation protocol.ToolInvocation
	grant      protocol.CapabilityGrant
}

// Invocation returns the authorized invocation.
func (a AuthorizedInvocation) Invocation() protocol.ToolInvocation { return a.invocation }

// Grant returns a copy of the grant the invocation was authorized under.
func (a AuthorizedInvocation) Grant() protocol.CapabilityGrant { return cloneGrant(a.grant) }

// AuthorizedWorkerCancellation is the proof that a cancellation of one authorized invocation was
// authorized.
type AuthorizedWorkerCancellation struct {
	issuer  *issuer
	request protocol.WorkerCancellationRequest
	target  protocol.ToolInvocation
}

// Request returns the authorized cancellation request.
func (a AuthorizedWorkerCancellation) Request() protocol.WorkerCancellationRequest {
	return a.request
}

// Target returns the invocation the cancellation targets.
func (a AuthorizedWorkerCancellation) Target() protocol.ToolInvocation { return a.target }

// AuthorizedOperationInvocation is the proof that a durable dispatch was authorized.
type AuthorizedOperationInvocation struct {
	issuer  *issuer
	request protocol.OperationDispatchRequest
	grant   protocol.CapabilityGrant
}

// Request returns the authorized dispatch request.
func (a AuthorizedOperationInvocation) Request() protocol.OperationDispatchRequest {
	return a.request
}

// Grant returns a copy of the grant the dispatch was authorized under.
func (a AuthorizedOperationInvocation) Grant() protocol.CapabilityGrant {
	return cloneGrant(a.grant)
}

// AuthorizedOperationReconciliation is the proof that a reconciliation was authorized.
type AuthorizedOperationReconciliation struct {
	issuer  *issuer
	request protocol.OperationReconcileRequest
	grant   protocol.CapabilityGrant
}

// Request returns the authorized reconciliation request.
func (a AuthorizedOperationReconciliation) Request() protocol.OperationReconcileRequest {
	return a.request
}

// Grant returns a copy of the grant the reconciliation was authorized under.
func (a AuthorizedOperationReconciliation) Grant() protocol.CapabilityGrant {
	return cloneGrant(a.grant)
}

// AuthorizedOperationCompensation is the proof that a compensation was authorized.
type AuthorizedOperationCompensation struct {
	issuer  *issuer
	request protocol.OperationCompensationRequest
	grant   protocol.CapabilityGrant
}

// Request returns the authorized compensation request.
func (a AuthorizedOperationCompensation) Request() protocol.OperationCompensationRequest {
	return a.request
}

// Grant returns a copy of the grant the compensation was authorized under.
func (a AuthorizedOperationCompensation) Grant() protocol.CapabilityGrant {
	return cloneGrant(a.grant)
}
