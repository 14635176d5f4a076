package worker

import (
	"errors"
	"fmt"
	"io"

	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/protocol"
)

// Driver runs a session restricted to cancellable ordinary invocations (chapter 14): the
// adapter runs on its own goroutine while the frame loop keeps reading, authenticating and
// authorizing cancel frames.
type Driver struct {
	session *Session
	lines   LineReader
	out     *jsonline.Writer
}

// NewDriver returns a driver for an open session that reads frame lines from lines and writes
// answer lines to w (CAN-001). It fails with ErrSessionPoisoned for a poisoned session, and,
// for the first grant in manifest order whose adapter is not registered as cancellable or
// declares no invocation safety, with ErrAdapterNotCancellable or
// ErrInvocationSafetyNotDeclared.
func NewDriver(s *Session, lines LineReader, w io.Writer) (*Driver, error) {
	if s.poisoned {
		return nil, &Error{Kind: ErrSessionPoisoned}
	}
	if err := checkCancellable(s); err != nil {
		return nil, err
	}
	return &Driver{session: s, lines: lines, out: jsonline.NewWriter(w)}, nil
}

func checkCancellable(s *Session) error {
	for _, g := range s.Manifest().Grants {
		a, ok := s.registry.Cancellable(g.Tool)
		if !ok {
			return &Error{Kind: ErrAdapterNotCancellable, Tool: g.Tool}
		}
		if a.InvocationSafety() == SafetyUndeclared {
			return &Error{Kind: ErrInvocationSafetyNotDeclared, Tool: g.Tool}
		}
	}
	return nil
}

// AllCancellable reports whether every tool of the session's manifest has a cancellable
// adapter that declares invocation safety, so the cancellable driver can run it (CAN-023).
func AllCancellable(s *Session) bool { return checkCancellable(s) == nil }

// Session returns the driven session.
func (d *Driver) Session() *Session { return d.session }

// running is the one active invocation.
type running struct {
	authorized   authorizer.AuthorizedInvocation
	token        *CancelToken
	cancellation *authorizer.AuthorizedWorkerCancellation
	ackedEarly   bool          // FaultResultAfterAck acknowledged the cancellation already
	done         chan struct{} // closed when the adapter has returned
	completion   Completion
	err          error
}

type driverEvent struct {
	line     []byte   // a frame line, when frame is true
	readErr  error    // the read error, when frame is true
	frame    bool     // a frame event; otherwise an adapter completion
	finished *running // the completed invocation
}

// Run drives the session until the host closes it or a fatal error stops it. It returns nil
// after an accepted close_session (CAN-009), having written nothing for it; the caller then
// closes the writer so the host sees end of file. Any other return is fatal, and, if an
// adapter was running, happens only after the adapter has been cancelled and has returned
// (CAN-019). After a fatal error the reader goroutine may stay blocked in a read until the
// input is closed; it then exits without delivering anything.
func (d *Driver) Run() error {
	s := d.session
	events := make(chan driverEvent)
	permits := make(chan struct{}, 4)
	stop := make(chan struct{})
	readerDone := make(chan struct{})

	go func() {
		defer close(readerDone)
		for {
			select {
			case <-permits:
			case <-stop:
				return
			}
			line, err := d.lines.ReadLine()
			ev := driverEvent{frame: true, readErr: err}
			if err == nil {
				ev.line = append([]byte(nil), line...)
			}
			select {
			case events <- ev:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	permit := func() { permits <- struct{}{} }
	permit()

	var active *running
	var last *authorizer.AuthorizedInvocation
	fail := func(err error) error {
		if active != nil {
			active.token.request()
			if !s.faults.Has(FaultDetachOnFatal) {
				<-active.done
			}
		}
		close(stop)
		return err
	}
	send := func(m protocol.Message) error {
		line, err := s.seal(m)
		if err != nil {
			return err
		}
		if err := d.out.WriteLine(line); err != nil {
			return &Error{Kind: ErrWrite, Err: err}
		}
		return nil
	}
	sendOutcome := func(c authorizer.AuthorizedWorkerCancellation, outcome protocol.WorkerCancellationOutcome) error {
		res, err := protocol.NewWorkerCancellationResult(c.Request(), outcome)
		if err != nil {
			return protocolError(StageResult, err)
		}
		if err := s.authorizer.ValidateCancellationResult(c, res); err != nil {
			return protocolError(StageResult, err)
		}
		return send(protocol.CancellationResultMessage{Result: res})
	}

	for {
		ev := <-events
		if ev.frame {
			if ev.readErr != nil {
				var we *Error
				if errors.As(ev.readErr, &we) {
					copied := *we
					copied.Active = active != nil
					return fail(&copied)
				}
				return fail(&Error{Kind: ErrFrame, Active: active != nil, Err: ev.readErr})
			}
			frame, err := s.opener.Open(ev.line)
			if err != nil {
				return fail(protocolError(StageOpen, err))
			}
			switch m := frame.Message.(type) {
			case protocol.InvokeMessage:
				if active != nil {
					return fail(&Error{Kind: ErrUnexpectedMessage, MessageType: string(m.Type())})
				}
				inv := m.Invocation
				tool := inv.Tool
				adapter, ok := s.registry.Cancellable(tool)
				if !ok {
					return fail(&Error{Kind: ErrAdapterNotCancellable, Tool: tool})
				}
				if adapter.InvocationSafety() == SafetyUndeclared {
					return fail(&Error{Kind: ErrInvocationSafetyNotDeclared, Tool: tool})
				}
				authorized, err := s.authorizer.Authorize(inv)
				if err != nil {
					return fail(protocolError(StageAuthorize, err))
				}
				r := &running{authorized: authorized, token: NewCancelToken(), done: make(chan struct{})}
				active = r
				go func() {
					r.err = guard(tool, func() (e error) {
						// The invocation as received; the token holds the same one unless a
						// fault authorized a stand-in.
						r.completion, e = adapter.InvokeCancellable(inv, authorized.Grant(), r.token)
						return e
					})
					close(r.done)
					select {
					case events <- driverEvent{finished: r}:
					case <-stop:
					}
				}()
				permit()
			case protocol.CancelMessage:
				switch {
				case active != nil:
					c, err := s.authorizer.AuthorizeCancellation(m.Request, active.authorized)
					if err != nil {
						return fail(protocolError(StageAuthorize, err))
					}
					// Only now, after the frame authenticated and was authorized.
					if s.faults == nil {
						active.token.request()
					} else if err := d.cancelUnderFaults(active, c, sendOutcome); err != nil {
						return fail(err)
					}
					active.cancellation = &c
					// No permit: reading pauses until the adapter returns (CAN-006).
				case last != nil:
					c, err := s.authorizer.AuthorizeCancellation(m.Request, *last)
					if err != nil {
						return fail(protocolError(StageAuthorize, err))
					}
					if err := sendOutcome(c, protocol.OutcomeTooLate); err != nil {
						return fail(err)
					}
					permit()
				default:
					return fail(&Error{Kind: ErrCancellationWithoutTarget})
				}
			case protocol.CloseSessionMessage:
				if active != nil {
					return fail(&Error{Kind: ErrCloseWhileInvocationActive})
				}
				close(stop)
				<-readerDone
				return nil
			default:
				return fail(&Error{Kind: ErrUnexpectedMessage, MessageType: string(m.Type())})
			}
			continue
		}

		r := ev.finished
		if r == nil || r != active {
			return fail(errors.New("worker: adapter completion without an active invocation"))
		}
		<-r.done
		active = nil
		tool := r.authorized.Invocation().Tool
		if r.err != nil {
			var we *Error
			if errors.As(r.err, &we) && we.Kind == ErrAdapterPanicked {
				return fail(r.err)
			}
			return fail(&Error{Kind: ErrAdapter, Tool: tool, Err: r.err})
		}
		if r.ackedEarly {
			if err := d.completeAfterEarlyAck(r, send); err != nil {
				return fail(err)
			}
			permit()
			last = nil
			continue
		}
		if r.completion.Acknowledged {
			if r.cancellation == nil || !r.token.Requested() {
				return fail(&Error{Kind: ErrUnrequestedAcknowledgement, Tool: tool})
			}
			if err := sendOutcome(*r.cancellation, protocol.OutcomeAcknowledged); err != nil {
				return fail(err)
			}
			permit()
			last = nil
			continue
		}
		inv := r.authorized.Invocation()
		result, err := protocol.NewToolResult(inv.SessionID, inv.RequestID, r.completion.Payload)
		if err != nil {
			return fail(protocolError(StageResult, err))
		}
		if err := s.authorizer.ValidateResult(r.authorized, result); err != nil {
			return fail(protocolError(StageResult, err))
		}
		if r.cancellation != nil && s.faults.Has(FaultTooLateBeforeResult) {
			if err := sendOutcome(*r.cancellation, protocol.OutcomeTooLate); err != nil {
				return fail(err)
			}
			r.cancellation = nil
			permit()
		}
		if err := send(protocol.ResultMessage{Result: result}); err != nil {
			return fail(err)
		}
		if r.cancellation != nil {
			if err := sendOutcome(*r.cancellation, protocol.OutcomeTooLate); err != nil {
				return fail(err)
			}
			permit()
		}
		authorized := r.authorized
		last = &authorized
	}
}

// String describes the driver without key material.
func (d *Driver) String() string {
	return fmt.Sprintf("worker.Driver(session=%s)", d.session.auth.SessionID())
}
