package transport

import (
	"time"

	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/protocol"
)

// OperationState is the state of an OperationTransport.
type OperationState uint8

// The operation transport states.
const (
	// OperationReady: the one exchange has not been attempted.
	OperationReady OperationState = iota + 1
	// OperationCompleted: the exchange succeeded; the transport is consumed.
	OperationCompleted
	// OperationPoisoned: the exchange failed or the transport was discarded.
	OperationPoisoned
)

// String returns the state's name.
func (s OperationState) String() string {
	switch s {
	case OperationReady:
		return "Ready"
	case OperationCompleted:
		return "Completed"
	case OperationPoisoned:
		return "Poisoned"
	}
	return "OperationState(?)"
}

// OperationTransport performs exactly one durable exchange and is then consumed (TRN-020,
// TRN-022, TRN-023, TRN-113): a dispatch or a reconciliation it seals itself, or one pre-sealed
// dispatch, reconciliation or compensation (ExchangeSealed). It never seals a compensation: only
// the step engine does, under a one-use approval for a recorded intent (package workflow). A durable effect can be left
// ambiguous when a worker stops, so an interrupted stream is never reused: recovery opens a
// fresh session from the worker's durable journal and reconciles there.
//
// The transport keeps its own fresh session authorizer for the manifest, so each request is
// authorized on the host before it is sealed and each answer is validated against it. The
// exchange waits at most its deadline (DefaultExchangeDeadline until SetDeadline; TRN-110); with
// a Supervisor the worker is stopped when it elapses. It is not safe for concurrent use.
type OperationTransport struct {
	auth     *protocol.Authenticator
	authz    *authorizer.SessionAuthorizer
	ch       FrameChannel
	sup      Supervisor
	deadline time.Duration
	state    OperationState
}

// NewOperationTransport returns a one-shot transport for manifest's session over ch. The host
// must already have sent open_session for manifest over ch with auth.
//
// Checks, in order: the authenticator is the host's (ErrRequiresHostAuthenticator); it names
// the manifest's session (ErrSessionMismatch); the manifest is valid (ErrProtocol).
func NewOperationTransport(manifest protocol.CapabilityManifest, auth *protocol.Authenticator, ch FrameChannel) (*OperationTransport, error) {
	if auth.Role() != protocol.RoleHost {
		return nil, &Error{Kind: ErrRequiresHostAuthenticator}
	}
	if auth.SessionID() != manifest.SessionID {
		return nil, &Error{Kind: ErrSessionMismatch, Expected: manifest.SessionID, Actual: auth.SessionID()}
	}
	authz, err := authorizer.New(manifest)
	if err != nil {
		return nil, &Error{Kind: ErrProtocol, Err: err}
	}
	return &OperationTransport{auth: auth, authz: authz, ch: ch, deadline: DefaultExchangeDeadline, state: OperationReady}, nil
}

// NewSupervisedOperationTransport is NewOperationTransport with a Supervisor of the same
// worker, which stops the worker when the exchange's deadline elapses (TRN-110). Its checks are
// NewOperationTransport's, then the supervisor names the session (ErrSessionMismatch).
func NewSupervisedOperationTransport(manifest protocol.CapabilityManifest, auth *protocol.Authenticator, ch FrameChannel, sup Supervisor) (*OperationTransport, error) {
	t, err := NewOperationTransport(manifest, auth, ch)
	if err != nil {
		return nil, err
	}
	if err := checkSupervisor(manifest.SessionID, sup); err != nil {
		return nil, err
	}
	t.sup = sup
	return t, nil
}

// SetDeadline sets the longest wait for the worker's answer, for example the remaining
// deadline of the claimed operation (TRN-111). Error: ErrInvalidDeadline when d is not
// positive; the transport is unchanged.
func (t *OperationTransport) SetDeadline(d time.Duration) error {
	if d <= 0 {
		return &Error{Kind: ErrInvalidDeadline}
	}
	t.deadline = d
	return nil
}

// Deadline returns the longest wait for the worker's answer.
func (t *OperationTransport) Deadline() time.Duration { return t.deadline }

// State returns the transport's state.
func (t *OperationTransport) State() OperationState { return t.state }

// Poisoned reports whether the exchange failed or the transport was discarded.
func (t *OperationTransport) Poisoned() bool { return t.state == OperationPoisoned }

// Consumed reports whether the one exchange was already attempted (or the transport
// discarded).
func (t *OperationTransport) Consumed() bool { return t.state != OperationReady }

// Discard poisons the transport without sending anything.
func (t *OperationTransport) Discard() { t.state = OperationPoisoned }

// DispatchOperation dispatches one durable operation and returns the worker's validated
// operation_result.
//
// Errors: ErrConsumed or ErrPoisoned without any effect; then, each poisoning the transport:
// ErrProtocol when host authorization or sealing fails (nothing is sent), ErrChannel when
// sending or receiving fails, ErrIndeterminate when the deadline elapsed (ErrSupervisor when
// supervision failed), ErrProtocol when the answer does not open, ErrUnexpectedResponse when it
// is not an operation_result, and ErrProtocol when the result fails validation.
func (t *OperationTransport) DispatchOperation(req protocol.OperationDispatchRequest) (protocol.OperationReconcileResult, error) {
	if err := t.ready(); err != nil {
		return protocol.OperationReconcileResult{}, err
	}
	res, err := func() (protocol.OperationReconcileResult, error) {
		authorized, err := t.authz.AuthorizeOperation(req)
		if err != nil {
			return protocol.OperationReconcileResult{}, &Error{Kind: ErrProtocol, Err: err}
		}
		m, err := t.exchange(protocol.DispatchOperationMessage{Request: authorized.Request()})
		if err != nil {
			return protocol.OperationReconcileResult{}, err
		}
		answer, ok := m.(protocol.OperationResultMessage)
		if !ok {
			return protocol.OperationReconcileResult{}, &Error{Kind: ErrUnexpectedResponse}
		}
		if err := t.authz.ValidateOperationResult(authorized, answer.Result); err != nil {
			return protocol.OperationReconcileResult{}, &Error{Kind: ErrProtocol, Err: err}
		}
		return answer.Result, nil
	}()
	return res, t.finish(err)
}

// ReconcileOperation asks for the status of one existing durable operation and returns the
// worker's validated reconciled_operation. Its errors are those of DispatchOperation, with
// reconciled_operation as the expected answer.
func (t *OperationTransport) ReconcileOperation(req protocol.OperationReconcileRequest) (protocol.OperationReconcileResult, error) {
	if err := t.ready(); err != nil {
		return protocol.OperationReconcileResult{}, err
	}
	res, err := func() (protocol.OperationReconcileResult, error) {
		authorized, err := t.authz.AuthorizeReconciliation(req)
		if err != nil {
			return protocol.OperationReconcileResult{}, &Error{Kind: ErrProtocol, Err: err}
		}
		m, err := t.exchange(protocol.ReconcileOperationMessage{Request: authorized.Request()})
		if err != nil {
			return protocol.OperationReconcileResult{}, err
		}
		answer, ok := m.(protocol.ReconciledOperationMessage)
		if !ok {
			return protocol.OperationReconcileResult{}, &Error{Kind: ErrUnexpectedResponse}
		}
		if err := t.authz.ValidateReconciliationResult(authorized, answer.Result); err != nil {
			return protocol.OperationReconcileResult{}, &Error{Kind: ErrProtocol, Err: err}
		}
		return answer.Result, nil
	}()
	return res, t.finish(err)
}

// ready refuses a consumed (ErrConsumed) or poisoned (ErrPoisoned) transport.
func (t *OperationTransport) ready() error {
	switch t.state {
	case OperationCompleted:
		return &Error{Kind: ErrConsumed}
	case OperationPoisoned:
		return &Error{Kind: ErrPoisoned}
	}
	return nil
}

// exchange seals m, sends it and opens the one answer within the deadline. Errors:
// ErrProtocol (seal or open), ErrChannel, and within's ErrIndeterminate and ErrSupervisor.
func (t *OperationTransport) exchange(m protocol.Message) (protocol.Message, error) {
	f, _, err := t.auth.Seal(m)
	if err != nil {
		return nil, &Error{Kind: ErrProtocol, Err: err}
	}
	var answer protocol.Message
	err = within(t.deadline, t.sup, func() error {
		var xerr error
		answer, xerr = exchange(t.auth, t.ch, f)
		return xerr
	})
	return answer, err
}

// finish moves to Completed after a success and to Poisoned after any failure, a host-side
// authorization failure included (TRN-023).
func (t *OperationTransport) finish(err error) error {
	if err != nil {
		t.state = OperationPoisoned
		return err
	}
	t.state = OperationCompleted
	return nil
}

// ExchangeSealed sends one pre-sealed durable request line and returns the worker's answer line
// as it was received, unopened (TRN-098 to TRN-100). It is the one exchange of the transport,
// for a host that seals its own request and opens the answer itself, such as the ledger path
// (ledger.PrepareClaimedDispatch with ledger.ApplyDispatchResult, or
// host.Runtime.PrepareAuthenticatedReconciliation with host.Runtime.ReconcileAuthenticated).
// The line must have been sealed by the transport's own host authenticator, after every frame
// the transport's channel already carried; decode the answer with protocol.DecodeFrame and hand
// it to the function that opens it.
//
// Before sending, the line is decoded (never re-encoded: the sent bytes are the sealed ones)
// and its request is authorized on the host, as DispatchOperation and ReconcileOperation
// authorize theirs. A compensation travels only this way, sealed by
// workflow.Engine.SealCompensation (TRN-113). The answer is bounded by the channel's 1 MiB line
// cap and is not authenticated or validated here.
//
// Errors: ErrConsumed or ErrPoisoned without any effect; then, each poisoning the transport:
// ErrLineChannelRequired when the channel is not a LineChannel; ErrProtocol when the line does
// not decode as a frame; ErrSessionMismatch when its message names another session;
// ErrNotOperationRequest when it is not a dispatch_operation, reconcile_operation or
// compensate_operation; ErrProtocol when host authorization refuses it (nothing is sent);
// ErrChannel when sending or receiving fails; and ErrIndeterminate when the deadline elapsed.
func (t *OperationTransport) ExchangeSealed(line []byte) ([]byte, error) {
	if err := t.ready(); err != nil {
		return nil, err
	}
	answer, err := func() ([]byte, error) {
		ch, ok := t.ch.(LineChannel)
		if !ok {
			return nil, &Error{Kind: ErrLineChannelRequired}
		}
		f, err := protocol.DecodeFrame(line, t.auth.Mode())
		if err != nil {
			return nil, &Error{Kind: ErrProtocol, Err: err}
		}
		if got := f.Message.SessionID(); got != t.auth.SessionID() {
			return nil, &Error{Kind: ErrSessionMismatch, Expected: t.auth.SessionID(), Actual: got}
		}
		if err := t.authorizeSealed(f.Message); err != nil {
			return nil, err
		}
		var answer []byte
		err = within(t.deadline, t.sup, func() error {
			if err := ch.SendLine(line); err != nil {
				return &Error{Kind: ErrChannel, Err: err}
			}
			var rerr error
			if answer, rerr = ch.ReceiveLine(); rerr != nil {
				return &Error{Kind: ErrChannel, Err: rerr}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		return answer, nil
	}()
	return answer, t.finish(err)
}

// authorizeSealed authorizes the durable request a pre-sealed line carries. Errors:
// ErrNotOperationRequest, ErrProtocol.
func (t *OperationTransport) authorizeSealed(m protocol.Message) error {
	var err error
	switch m := m.(type) {
	case protocol.DispatchOperationMessage:
		_, err = t.authz.AuthorizeOperation(m.Request)
	case protocol.ReconcileOperationMessage:
		_, err = t.authz.AuthorizeReconciliation(m.Request)
	case protocol.CompensateOperationMessage:
		_, err = t.authz.AuthorizeCompensation(m.Request)
	default:
		return &Error{Kind: ErrNotOperationRequest, Detail: string(m.Type())}
	}
	if err != nil {
		return &Error{Kind: ErrProtocol, Err: err}
	}
	return nil
}
