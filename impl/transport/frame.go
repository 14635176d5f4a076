package transport

import (
	"time"

	"github.com/splashv5/conform/impl/protocol"
)

// SendOpenSession seals the open_session frame for manifest with the host authenticator auth
// and sends it over ch (TRN-011). A host does this once, before it hands the same authenticator
// and channel to a FrameTransport or an OperationTransport. The authenticator must be the
// host's and name the manifest's session.
func SendOpenSession(auth *protocol.Authenticator, ch FrameChannel, manifest protocol.CapabilityManifest) error {
	if auth.Role() != protocol.RoleHost {
		return &Error{Kind: ErrRequiresHostAuthenticator}
	}
	if auth.SessionID() != manifest.SessionID {
		return &Error{Kind: ErrSessionMismatch, Expected: manifest.SessionID, Actual: auth.SessionID()}
	}
	f, _, err := auth.Seal(protocol.OpenSessionMessage{Manifest: manifest})
	if err != nil {
		return &Error{Kind: ErrProtocol, Err: err}
	}
	if err := ch.Send(f); err != nil {
		return &Error{Kind: ErrChannel, Err: err}
	}
	return nil
}

// FrameTransport is the single-flight transport for ordinary invocations (TRN-010 to
// TRN-015): each Dispatch seals one invoke, sends it, then blocks until it has received and
// opened the one answer, which must be a result. It cannot send a cancel while it waits. It
// performs no host-side authorization; the caller (a protocol worker client) authorizes every
// invocation and validates every result.
//
// Every exchange is bounded by a deadline (TRN-110): with a Supervisor (NewSupervisedFrameTransport)
// the worker is stopped when it elapses, without one the call returns then and the host must
// stop the worker itself. Either way the outcome is ErrIndeterminate, never a cancellation.
//
// Health is Healthy or Poisoned. A failure after the invoke was sealed poisons the transport,
// as does Discard; a poisoned transport refuses every later call with ErrPoisoned. It is not
// safe for concurrent use.
type FrameTransport struct {
	auth     *protocol.Authenticator
	ch       FrameChannel
	sup      Supervisor
	poisoned bool
}

// NewFrameTransport returns a transport that speaks for the host authenticator auth over ch.
// The host must already have sent open_session over ch with auth (SendOpenSession).
func NewFrameTransport(auth *protocol.Authenticator, ch FrameChannel) (*FrameTransport, error) {
	if auth.Role() != protocol.RoleHost {
		return nil, &Error{Kind: ErrRequiresHostAuthenticator}
	}
	return &FrameTransport{auth: auth, ch: ch}, nil
}

// NewSupervisedFrameTransport is NewFrameTransport with a Supervisor of the same worker, which
// stops the worker when an exchange's deadline elapses (TRN-110). Checks, in order: the
// authenticator is the host's (ErrRequiresHostAuthenticator); the supervisor names its session
// (ErrSessionMismatch).
func NewSupervisedFrameTransport(auth *protocol.Authenticator, ch FrameChannel, sup Supervisor) (*FrameTransport, error) {
	t, err := NewFrameTransport(auth, ch)
	if err != nil {
		return nil, err
	}
	if err := checkSupervisor(auth.SessionID(), sup); err != nil {
		return nil, err
	}
	t.sup = sup
	return t, nil
}

// Poisoned reports whether the transport refuses further calls.
func (t *FrameTransport) Poisoned() bool { return t.poisoned }

// Discard poisons the transport without sending anything.
func (t *FrameTransport) Discard() { t.poisoned = true }

// Dispatch runs one ordinary invocation and returns the worker's authenticated result, waiting
// at most deadline.
//
// Errors: ErrPoisoned; ErrInvalidDeadline for a deadline that is not positive and ErrProtocol
// for a seal failure, neither of which poisons (nothing was sent and the outgoing sequence did
// not advance); then, all poisoning: ErrIndeterminate when the deadline elapsed or the
// supervisor reports the worker stopped, ErrSupervisor when supervision failed, ErrChannel for
// a send or receive failure, ErrProtocol for an answer that does not open,
// ErrUnexpectedResponse for an answer that is not a result.
func (t *FrameTransport) Dispatch(inv protocol.ToolInvocation, deadline time.Duration) (protocol.ToolResult, error) {
	if t.poisoned {
		return protocol.ToolResult{}, &Error{Kind: ErrPoisoned}
	}
	if deadline <= 0 {
		return protocol.ToolResult{}, &Error{Kind: ErrInvalidDeadline}
	}
	f, _, err := t.auth.Seal(protocol.InvokeMessage{Invocation: inv})
	if err != nil {
		return protocol.ToolResult{}, &Error{Kind: ErrProtocol, Err: err}
	}
	var m protocol.Message
	err = within(deadline, t.sup, func() error {
		var xerr error
		m, xerr = exchange(t.auth, t.ch, f)
		return xerr
	})
	if err != nil {
		t.poisoned = true
		return protocol.ToolResult{}, err
	}
	res, ok := m.(protocol.ResultMessage)
	if !ok {
		t.poisoned = true
		return protocol.ToolResult{}, &Error{Kind: ErrUnexpectedResponse}
	}
	return res.Result, nil
}

// exchange sends a sealed frame, receives one answer and opens it.
func exchange(auth *protocol.Authenticator, ch FrameChannel, f protocol.Frame) (protocol.Message, error) {
	if err := ch.Send(f); err != nil {
		return nil, &Error{Kind: ErrChannel, Err: err}
	}
	answer, err := ch.Receive()
	if err != nil {
		return nil, &Error{Kind: ErrChannel, Err: err}
	}
	m, err := auth.OpenFrame(answer)
	if err != nil {
		return nil, &Error{Kind: ErrProtocol, Err: err}
	}
	return m, nil
}
