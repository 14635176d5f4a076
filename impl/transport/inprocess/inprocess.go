// Package inprocess is the host transport that runs an opened worker session inside the host
// process (spec chapter 22, TRN-030 to TRN-033). It is a package of its own so that a host
// that talks to worker processes links neither the worker runtime, nor its journal, nor its
// storage.
package inprocess

import (
	"context"
	"time"

	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
	"github.com/splashv5/conform/impl/worker"
)

// Transport is a host worker transport.
var _ host.WorkerTransport = (*Transport)(nil)

// Transport runs an opened worker session inside the host process (TRN-030 to
// TRN-033). It is meant for a fixed catalog of adapters that ship with the host, for example
// on mobile or embedded targets: every call still crosses the authenticated frame boundary, so
// session ids, roles, sequences and tags are checked exactly as over a pipe.
//
// It isolates nothing. It is not a sandbox and gives no process, memory, system-call,
// file-system, network or resource isolation: the adapters run with the full authority of the
// host process. Use a contained worker process for any adapter that is not fully trusted.
//
// Errors do not poison the transport by themselves; Discard does (a protocol worker client
// discards after any error). It is not safe for concurrent use.
type Transport struct {
	auth     *protocol.Authenticator
	session  *worker.Session
	store    worker.JournalPersister
	poisoned bool
}

// New returns a transport that speaks for the host authenticator auth to
// session, persisting the session's journal through store. The session must have been opened
// with a frame auth sealed. Checks, in order: auth is the host's
// (transport.ErrRequiresHostAuthenticator); auth names the session's manifest session
// (transport.ErrSessionMismatch).
func New(auth *protocol.Authenticator, session *worker.Session, store worker.JournalPersister) (*Transport, error) {
	if auth.Role() != protocol.RoleHost {
		return nil, &transport.Error{Kind: transport.ErrRequiresHostAuthenticator}
	}
	if id := session.Manifest().SessionID; auth.SessionID() != id {
		return nil, &transport.Error{Kind: transport.ErrSessionMismatch, Expected: id, Actual: auth.SessionID()}
	}
	return &Transport{auth: auth, session: session, store: store}, nil
}

// Poisoned reports whether Discard was called.
func (t *Transport) Poisoned() bool { return t.poisoned }

// Discard poisons the transport.
func (t *Transport) Discard() { t.poisoned = true }

// Dispatch is DispatchContext bounded by deadline (TRN-110): the adapter's context ends at the
// deadline, and when the session has not answered by then Dispatch returns ErrIndeterminate and
// poisons the transport. An adapter that ignores its context keeps running on its own
// goroutine; nothing in one process can stop it. Errors, before anything runs: ErrPoisoned,
// ErrInvalidDeadline.
func (t *Transport) Dispatch(inv protocol.ToolInvocation, deadline time.Duration) (protocol.ToolResult, error) {
	if t.poisoned {
		return protocol.ToolResult{}, &transport.Error{Kind: transport.ErrPoisoned}
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	var res protocol.ToolResult
	err := transport.Within(deadline, nil, func() error {
		var herr error
		res, herr = t.handle(ctx, inv)
		return herr
	})
	if err != nil {
		if e, ok := err.(*transport.Error); ok && e.Kind == transport.ErrIndeterminate {
			t.poisoned = true
		}
		return protocol.ToolResult{}, err
	}
	return res, nil
}

// DispatchContext seals an invoke, hands its line to the worker session, opens the answer and
// requires a result. Errors: ErrPoisoned; ErrProtocol (sealing or opening); ErrWorker, wrapping
// the worker session's error, when the session answers nothing; ErrUnexpectedResponse.
func (t *Transport) DispatchContext(ctx context.Context, inv protocol.ToolInvocation) (protocol.ToolResult, error) {
	if t.poisoned {
		return protocol.ToolResult{}, &transport.Error{Kind: transport.ErrPoisoned}
	}
	return t.handle(ctx, inv)
}

// handle is DispatchContext after the poison check.
func (t *Transport) handle(ctx context.Context, inv protocol.ToolInvocation) (protocol.ToolResult, error) {
	_, line, err := t.auth.Seal(protocol.InvokeMessage{Invocation: inv})
	if err != nil {
		return protocol.ToolResult{}, &transport.Error{Kind: transport.ErrProtocol, Err: err}
	}
	answer, err := t.session.Handle(ctx, line, t.store)
	if err != nil {
		return protocol.ToolResult{}, &transport.Error{Kind: transport.ErrWorker, Err: err}
	}
	f, err := t.auth.Open(answer)
	if err != nil {
		return protocol.ToolResult{}, &transport.Error{Kind: transport.ErrProtocol, Err: err}
	}
	res, ok := f.Message.(protocol.ResultMessage)
	if !ok {
		return protocol.ToolResult{}, &transport.Error{Kind: transport.ErrUnexpectedResponse}
	}
	return res.Result, nil
}
