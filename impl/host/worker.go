package host

import (
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/schema"
)

// DefaultWorkerDeadline bounds one synchronous worker exchange of a ProtocolWorkerClient whose
// host set no deadline of its own (RUN-200).
const DefaultWorkerDeadline = 30 * time.Second

// ErrInvalidWorkerDeadline rejects a worker deadline that is not positive.
var ErrInvalidWorkerDeadline = errors.New("host runtime: the worker deadline must be positive")

// WorkerTransport carries authorized ordinary invocations to a worker and returns its result.
// Transports own their error detail; the runtime never shows it to scripts.
type WorkerTransport interface {
	// Dispatch sends one invocation and waits at most deadline (positive) for its result.
	// When the deadline elapses first it returns an error, leaves the worker's answer
	// indeterminate and is unusable afterwards (RUN-200).
	Dispatch(inv protocol.ToolInvocation, deadline time.Duration) (protocol.ToolResult, error)
	// Discard marks the worker session unusable after a failure; a contained transport should
	// also stop its worker.
	Discard()
}

// ProtocolWorkerClient is the host side of one capability-attenuated worker session: it
// authorizes every invocation against the session manifest before the transport sees it and
// validates every result before the runtime does.
type ProtocolWorkerClient struct {
	auth      *authorizer.SessionAuthorizer
	transport WorkerTransport
	next      uint64
	deadline  time.Duration
}

// NewProtocolWorkerClient returns a client for manifest (which must validate) over transport.
func NewProtocolWorkerClient(manifest protocol.CapabilityManifest, transport WorkerTransport) (*ProtocolWorkerClient, error) {
	auth, err := authorizer.New(manifest)
	if err != nil {
		return nil, err
	}
	return &ProtocolWorkerClient{auth: auth, transport: transport, next: 1, deadline: DefaultWorkerDeadline}, nil
}

// SetDeadline sets the longest wait for one worker answer (DefaultWorkerDeadline until set).
// Error: ErrInvalidWorkerDeadline when d is not positive.
func (c *ProtocolWorkerClient) SetDeadline(d time.Duration) error {
	if d <= 0 {
		return ErrInvalidWorkerDeadline
	}
	c.deadline = d
	return nil
}

// Deadline returns the longest wait for one worker answer.
func (c *ProtocolWorkerClient) Deadline() time.Duration { return c.deadline }

// exchangeDeadline is the client's deadline, shortened to the operation's remaining deferred
// deadline when it has one.
func (c *ProtocolWorkerClient) exchangeDeadline(remaining time.Duration) time.Duration {
	if remaining > 0 && remaining < c.deadline {
		return remaining
	}
	return c.deadline
}

// Manifest returns the session manifest.
func (c *ProtocolWorkerClient) Manifest() protocol.CapabilityManifest { return c.auth.Manifest() }

// Transport returns the transport.
func (c *ProtocolWorkerClient) Transport() WorkerTransport { return c.transport }

// SupportsJSONPolicy reports whether policy is a JSON policy no wider than the manifest's JSON
// grant for the same tool (calls and both byte limits).
func (c *ProtocolWorkerClient) SupportsJSONPolicy(policy Policy) bool {
	if policy.Format != FormatJSON {
		return false
	}
	for _, g := range c.auth.Manifest().Grants {
		if g.Tool == policy.Name && g.Format == protocol.FormatJSON &&
			policy.MaxCalls <= int(g.MaxCalls) &&
			policy.MaxInputBytes <= int(g.MaxInputBytes) &&
			policy.MaxOutputBytes <= int(g.MaxOutputBytes) {
			return true
		}
	}
	return false
}

// DispatchJSON sends one JSON invocation: request id "request-<n>" (n from 1), host-side
// authorization (a refusal is Denied "worker capability denied: …" and keeps the transport),
// dispatch under the client's deadline, shortened to req.Deadline when that is set and shorter
// (any transport error, an elapsed deadline included, discards the transport and is Failed
// "worker transport failed" with no detail), result validation and a JSON payload check (both
// discard and fail).
func (c *ProtocolWorkerClient) DispatchJSON(req JSONToolRequest) (canonjson.Value, *ToolError) {
	if c.next == math.MaxUint64 {
		return canonjson.Value{}, Failed("worker request sequence exhausted")
	}
	requestID := "request-" + strconv.FormatUint(c.next, 10)
	c.next++
	inv, err := protocol.NewToolInvocation(c.auth.SessionID(), requestID, req.Name, protocol.JSONPayload(req.Input))
	if err != nil {
		return canonjson.Value{}, Failed("worker protocol failed: " + err.Error())
	}
	authorized, err := c.auth.Authorize(inv)
	if err != nil {
		return canonjson.Value{}, Denied("worker capability denied: " + err.Error())
	}
	res, err := c.transport.Dispatch(authorized.Invocation(), c.exchangeDeadline(req.Deadline))
	if err != nil {
		c.transport.Discard()
		return canonjson.Value{}, Failed("worker transport failed")
	}
	if err := c.auth.ValidateResult(authorized, res); err != nil {
		c.transport.Discard()
		return canonjson.Value{}, Failed("worker protocol failed: " + err.Error())
	}
	if res.Payload.Format != protocol.FormatJSON {
		c.transport.Discard()
		return canonjson.Value{}, Failed("worker returned text for a JSON capability")
	}
	return res.Payload.JSON, nil
}

// RegisterProtocolJSONTool registers a host-pump JSON tool backed by client. The policy must be
// an attenuation of the worker's JSON grant for the tool (ErrIncompatibleWorkerGrant, checked
// before every other registration rule). Both budgets are spent: the local policy's at
// reservation and the worker grant's when the client authorizes the invocation.
func (r *Runtime) RegisterProtocolJSONTool(policy Policy, meta Metadata, client *ProtocolWorkerClient) error {
	return r.registerProtocol(policy, meta, nil, client)
}

// RegisterValidatedProtocolJSONTool is RegisterProtocolJSONTool with an executable contract at the
// host boundary.
func (r *Runtime) RegisterValidatedProtocolJSONTool(policy Policy, meta Metadata, contract schema.Contract, client *ProtocolWorkerClient) error {
	return r.registerProtocol(policy, meta, &contract, client)
}

func (r *Runtime) registerProtocol(policy Policy, meta Metadata, contract *schema.Contract, client *ProtocolWorkerClient) error {
	if client == nil || !client.SupportsJSONPolicy(policy) {
		return &RegistrationError{Kind: ErrIncompatibleWorkerGrant, Name: policy.Name}
	}
	return r.registerJSON(policy, meta, contract, func(req JSONToolRequest) (canonjson.Value, error) {
		v, terr := client.DispatchJSON(req)
		if terr != nil {
			return canonjson.Value{}, terr
		}
		return v, nil
	})
}
