package transport

import (
	"context"
	"io"
	"sync"

	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/protocol"
)

// Multiplexed is the host transport for one cancellable ordinary invocation at a time
// (TRN-040 to TRN-062). Its read and write directions are owned independently: one reader
// goroutine reads, decodes and hands worker frames to the Coordinator, one line per read
// permit, while host commands seal and write their frames from the caller's goroutine. So a
// host can send cancel while the worker's adapter still runs, and a result that wins the race
// against the cancel is buffered until the matching too_late disposition has validated.
//
// Pair it with a worker that runs the cancellable driver, and with a Supervisor: an unsupported
// or unanswered cancellation is no permission to report the work cancelled. A Multiplexed is
// safe for concurrent use.
type Multiplexed struct {
	mu         sync.Mutex
	core       *Coordinator
	w          *jsonline.Writer
	inv        *PendingInvocation
	cancel     *PendingCancellation
	closeWait  chan error
	readerDone chan struct{}
}

// NewMultiplexed validates manifest and auth as NewCoordinator does, writes the open_session
// frame to w, and starts the reader on r. auth must be fresh (its first outgoing frame is
// open_session) and must not be used afterwards. A failure to write open_session is ErrIO.
//
// The reader goroutine ends when the session closes or fails; after Abandon it ends only once
// r returns (close r, or stop the worker, to release it).
func NewMultiplexed(manifest protocol.CapabilityManifest, auth *protocol.Authenticator, r io.Reader, w io.Writer) (*Multiplexed, error) {
	core, line, err := NewCoordinator(manifest, auth)
	if err != nil {
		return nil, err
	}
	jw := jsonline.NewWriter(w)
	if err := jw.WriteLine(line); err != nil {
		return nil, streamError(err)
	}
	m := &Multiplexed{core: core, w: jw, readerDone: make(chan struct{})}
	go m.read(jsonline.NewReader(r))
	return m, nil
}

// SessionID returns the session id.
func (m *Multiplexed) SessionID() string { return m.core.SessionID() }

// Phase returns the coordinator's current phase.
func (m *Multiplexed) Phase() Phase {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.core.Phase()
}

// Failure returns the error that stopped the transport, or nil.
func (m *Multiplexed) Failure() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.core.Failure()
}

// Start authorizes inv on the host, writes its invoke frame and returns its pending handle.
// Errors are those of Coordinator.Start, and the stopping error when writing fails.
func (m *Multiplexed) Start(inv protocol.ToolInvocation) (*PendingInvocation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out, err := m.core.Start(inv)
	m.deliver(out.Events)
	if err != nil {
		return nil, err
	}
	h := &PendingInvocation{m: m, requestID: inv.RequestID, tool: inv.Tool, cancellable: m.core.CancelSlotKept(), done: make(chan struct{})}
	m.inv = h
	if err := m.write(out.Line); err != nil {
		return nil, err
	}
	return h, nil
}

// Close writes close_session while idle and waits until the worker's stream ends, which is
// success (TRN-043). Errors are those of Coordinator.Close, a write failure, or the fatal
// error of any frame or read failure that arrives instead of the end of the stream.
func (m *Multiplexed) Close() error {
	m.mu.Lock()
	out, err := m.core.Close()
	m.deliver(out.Events)
	if err != nil {
		m.mu.Unlock()
		return err
	}
	wait := make(chan error, 1)
	m.closeWait = wait
	if err := m.write(out.Line); err != nil {
		m.mu.Unlock()
		return err
	}
	m.mu.Unlock()
	if err := <-wait; err != nil {
		return err
	}
	<-m.readerDone
	return nil
}

// Abandon stops the transport without closing the session: every pending handle receives
// ErrAbandoned and every later command fails with ErrUnavailable (TRN-044).
func (m *Multiplexed) Abandon() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.deliver(m.core.Abandon().Events)
}

// write writes a command's line; a failure is fatal and returns the stopping error.
func (m *Multiplexed) write(line []byte) error {
	if err := m.w.WriteLine(line); err != nil {
		m.deliver(m.core.WriteFailed(err).Events)
		return m.core.Failure()
	}
	return nil
}

// read is the reader goroutine: one line per permit, the next permit granted by the
// coordinator after it handled the frame.
func (m *Multiplexed) read(r *jsonline.Reader) {
	defer close(m.readerDone)
	mode := m.core.Mode()
	for {
		line, err := r.ReadLine()
		var f protocol.Frame
		if err == nil {
			f, err = protocol.DecodeFrame(line, mode)
		}
		m.mu.Lock()
		var out Output
		if err != nil {
			out = m.core.ReceiveFailed(err)
		} else {
			out = m.core.Receive(f)
		}
		m.deliver(out.Events)
		m.mu.Unlock()
		if !out.ReadNext {
			return
		}
	}
}

// deliver resolves waiters; the caller holds m.mu.
func (m *Multiplexed) deliver(events []Event) {
	for _, e := range events {
		switch e.Target {
		case TargetInvocation:
			if h := m.inv; h != nil {
				m.inv = nil
				h.outcome, h.err = e.Outcome, e.Err
				close(h.done)
			}
		case TargetCancellation:
			if h := m.cancel; h != nil {
				m.cancel = nil
				h.result, h.err = e.Disposition, e.Err
				close(h.done)
			}
		case TargetClose:
			if w := m.closeWait; w != nil {
				m.closeWait = nil
				w <- e.Err
			}
		}
	}
}

// PendingInvocation is the host's handle on one active multiplexed invocation. It resolves
// once, with the invocation's outcome or with the error that stopped the transport.
type PendingInvocation struct {
	m           *Multiplexed
	requestID   string
	tool        string
	cancellable bool
	done        chan struct{}
	outcome     InvocationOutcome
	err         error
}

// RequestID returns the invocation's request id.
func (p *PendingInvocation) RequestID() string { return p.requestID }

// Tool returns the invocation's tool.
func (p *PendingInvocation) Tool() string { return p.tool }

// Cancellable reports whether an identity slot was kept free for the invocation's
// cancellation when it started (TRN-112).
func (p *PendingInvocation) Cancellable() bool { return p.cancellable }

// Done returns a channel that is closed once the handle has resolved.
func (p *PendingInvocation) Done() <-chan struct{} { return p.done }

// Wait blocks until the handle resolves or ctx ends, and returns the outcome or the error (or
// ctx's error).
func (p *PendingInvocation) Wait(ctx context.Context) (InvocationOutcome, error) {
	select {
	case <-p.done:
		return p.outcome, p.err
	case <-ctx.Done():
		return InvocationOutcome{}, ctx.Err()
	}
}

// TryWait returns the outcome or error and true once the handle has resolved, else false.
func (p *PendingInvocation) TryWait() (InvocationOutcome, bool, error) {
	select {
	case <-p.done:
		return p.outcome, true, p.err
	default:
		return InvocationOutcome{}, false, nil
	}
}

// RequestCancellation writes one authenticated cancel for this invocation with the given
// cancellation id and returns the handle on its disposition (TRN-042). Errors are those of
// Coordinator.Cancel, and the stopping error when writing fails.
func (p *PendingInvocation) RequestCancellation(cancellationID string) (*PendingCancellation, error) {
	m := p.m
	m.mu.Lock()
	defer m.mu.Unlock()
	out, err := m.core.Cancel(cancellationID, p.requestID, p.tool)
	m.deliver(out.Events)
	if err != nil {
		return nil, err
	}
	h := &PendingCancellation{cancellationID: cancellationID, done: make(chan struct{})}
	m.cancel = h
	if err := m.write(out.Line); err != nil {
		return nil, err
	}
	return h, nil
}

// PendingCancellation is the host's handle on the disposition of one cancellation request. It
// resolves once, with the authenticated disposition or with the error that stopped the
// transport.
type PendingCancellation struct {
	cancellationID string
	done           chan struct{}
	result         protocol.WorkerCancellationResult
	err            error
}

// CancellationID returns the cancellation id.
func (p *PendingCancellation) CancellationID() string { return p.cancellationID }

// Done returns a channel that is closed once the handle has resolved.
func (p *PendingCancellation) Done() <-chan struct{} { return p.done }

// Wait blocks until the handle resolves or ctx ends.
func (p *PendingCancellation) Wait(ctx context.Context) (protocol.WorkerCancellationResult, error) {
	select {
	case <-p.done:
		return p.result, p.err
	case <-ctx.Done():
		return protocol.WorkerCancellationResult{}, ctx.Err()
	}
}

// TryWait returns the disposition or error and true once the handle has resolved, else false.
func (p *PendingCancellation) TryWait() (protocol.WorkerCancellationResult, bool, error) {
	select {
	case <-p.done:
		return p.result, true, p.err
	default:
		return protocol.WorkerCancellationResult{}, false, nil
	}
}
