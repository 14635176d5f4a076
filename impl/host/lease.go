package host

import (
	"strconv"

	"github.com/splashv5/conform/impl/errkind"
)

// LeaseGrant is one tool and the calls a lease allows it.
type LeaseGrant struct {
	Name     string
	MaxCalls int
}

// CallAuthorizer is a trusted hook a lease consults right before it admits a call. It can only
// refuse a call the lease already allows: return a *ToolError to refuse with that kind (the audit
// outcome follows it); any other error refuses with Failed "<name> authorizer failed".
type CallAuthorizer func(req ToolRequest, d Descriptor) error

// LeaseErrorKind classifies a lease rejection.
type LeaseErrorKind = errkind.Kind[leaseKinds]

type leaseKinds struct{}

// Table describes the lease error kinds.
func (leaseKinds) Table() *errkind.Table { return &leaseKindTable }

// The lease error kinds.
const (
	ErrLeaseUnknownTool LeaseErrorKind = iota + 1
	ErrLeaseDuplicateTool
	ErrLeaseZeroCallLimit
	ErrLeaseCallLimitExceedsPolicy
	ErrLeaseRuntimeMismatch
	ErrLeaseCatalogChanged
	ErrLeaseAlreadyActive
)

var leaseKindTable = errkind.Table{Type: "LeaseErrorKind", Prefix: "capability lease: ", Kinds: []errkind.Entry{
	ErrLeaseUnknownTool:            {Name: "UnknownTool", Detail: "unknown capability lease tool: {tool}"},
	ErrLeaseDuplicateTool:          {Name: "DuplicateTool", Detail: "duplicate capability lease tool: {tool}"},
	ErrLeaseZeroCallLimit:          {Name: "ZeroCallLimit", Detail: "capability lease call limit must be greater than zero: {tool}"},
	ErrLeaseCallLimitExceedsPolicy: {Name: "CallLimitExceedsPolicy", Detail: "capability lease for {tool} requests {requested} calls but policy allows {maximum}"},
	ErrLeaseRuntimeMismatch:        {Name: "RuntimeMismatch", Detail: "capability lease belongs to a different runtime"},
	ErrLeaseCatalogChanged:         {Name: "CatalogChanged", Detail: "capability catalog changed after the lease was issued"},
	ErrLeaseAlreadyActive:          {Name: "LeaseAlreadyActive", Detail: "a capability lease is already active"},
}}

// LeaseError rejects a lease issue or activation.
type LeaseError struct {
	errkind.Kind[leaseKinds]
	Tool      string
	Requested int
	Maximum   int
}

// Error describes the rejection.
func (e *LeaseError) Error() string {
	return e.Kind.Expand("tool", e.Tool, "requested", e.Requested, "maximum", e.Maximum)
}

// Lease is an attenuated, process-local capability policy with its own call accounting: while
// it is active, only its tools may be reserved, each at most its granted number of times, and
// the catalog cannot change.
type Lease struct {
	runtime     *Runtime
	fingerprint string
	grants      map[string]int
	calls       map[string]int
	authorizer  CallAuthorizer
}

// IssueLease issues a lease for grants, each a registered tool with a call limit between 1 and
// its policy's. authorizer may be nil.
func (r *Runtime) IssueLease(grants []LeaseGrant, authorizer CallAuthorizer) (*Lease, error) {
	if r.lease != nil {
		return nil, &LeaseError{Kind: ErrLeaseAlreadyActive}
	}
	l := &Lease{runtime: r, grants: map[string]int{}, calls: map[string]int{}, authorizer: authorizer}
	for _, g := range grants {
		if g.MaxCalls <= 0 {
			return nil, &LeaseError{Kind: ErrLeaseZeroCallLimit, Tool: g.Name}
		}
		t, ok := r.tools[g.Name]
		if !ok {
			return nil, &LeaseError{Kind: ErrLeaseUnknownTool, Tool: g.Name}
		}
		if g.MaxCalls > t.policy.MaxCalls {
			return nil, &LeaseError{Kind: ErrLeaseCallLimitExceedsPolicy, Tool: g.Name, Requested: g.MaxCalls, Maximum: t.policy.MaxCalls}
		}
		if _, dup := l.grants[g.Name]; dup {
			return nil, &LeaseError{Kind: ErrLeaseDuplicateTool, Tool: g.Name}
		}
		l.grants[g.Name] = g.MaxCalls
	}
	l.fingerprint = r.CatalogFingerprint()
	return l, nil
}

// ActivateLease makes l the active lease. It must come from this runtime and the catalog must
// not have changed since it was issued.
func (r *Runtime) ActivateLease(l *Lease) error {
	if r.lease != nil {
		return &LeaseError{Kind: ErrLeaseAlreadyActive}
	}
	if l == nil || l.runtime != r {
		return &LeaseError{Kind: ErrLeaseRuntimeMismatch}
	}
	if l.fingerprint != r.CatalogFingerprint() {
		return &LeaseError{Kind: ErrLeaseCatalogChanged}
	}
	r.lease = l
	return nil
}

// DeactivateLease clears the active lease; its call counts are kept in the Lease value.
func (r *Runtime) DeactivateLease() { r.lease = nil }

// ActiveLease returns the active lease, or nil.
func (r *Runtime) ActiveLease() *Lease { return r.lease }

// Calls returns the calls the lease has admitted for name.
func (l *Lease) Calls(name string) int { return l.calls[name] }

func (l *Lease) authorize(req ToolRequest, d Descriptor) *ToolError {
	maximum, ok := l.grants[req.Name]
	if !ok {
		return Denied(req.Name + " is not granted by the active capability lease")
	}
	calls := l.calls[req.Name]
	if calls >= maximum {
		return Denied(req.Name + " exhausted its capability lease call budget of " + strconv.Itoa(maximum))
	}
	if l.authorizer != nil {
		if err := l.authorizer(req, d); err != nil {
			if te, ok := toolErrorOf(err); ok {
				return te
			}
			return Failed(req.Name + " authorizer failed")
		}
	}
	l.calls[req.Name] = calls + 1
	return nil
}
