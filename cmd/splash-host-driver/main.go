// Command splash-host-driver is the reference host driver of the host conformance suite
// (spec/30-host-driver.md, docs/conformance-host.md): it reads driver commands as JSON lines on
// standard input and answers each with one outcome line on standard output, playing the host
// with impl/host's authorizer and impl/transport's supervised worker process.
//
//	splash-conform host -- splash-host-driver
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
)

// session is the one worker the driver runs at a time.
type session struct {
	proc        *transport.Process
	ch          *transport.Channel
	frames      *transport.FrameTransport
	ops         *transport.OperationTransport // one-shot: one durable exchange per session
	mux         *transport.Multiplexed        // a cancellable session (feature cancel)
	pending     map[string]*transport.PendingInvocation
	auth        *authorizer.SessionAuthorizer
	deadline    time.Duration
	scope       string // the worker's journal scope, the tenant of compensation bindings
	ledgerState        // features recover and compensate
}

func main() {
	runShim()
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 4<<20)
	out := json.NewEncoder(os.Stdout)
	var s *session
	for in.Scan() {
		began := time.Now()
		var c command
		if err := json.Unmarshal(in.Bytes(), &c); err != nil {
			fmt.Fprintln(os.Stderr, "splash-host-driver: bad command:", err)
			os.Exit(2)
		}
		c.Payload = commandPayload(c.Op, runnerPayload(c.Payload))
		o := outcome{ID: c.ID, OK: true}
		var err error
		switch c.Op {
		case "hello":
			o.Features = []string{"invoke", "durable", "cancel", "recover", "compensate"}
			if fault == "feature-extra" {
				o.Features = append(o.Features, "stream") // no feature of this revision (HDR-010)
			}
		case "start":
			s.retire()
			s, err = start(c)
		case "invoke":
			o.Payload, err = s.invoke(c)
		case "dispatch", "reconcile":
			o.Status, err = s.operation(c)
		case "begin":
			err = s.begin(c)
		case "cancel":
			o.Disposition, err = s.cancel(c)
		case "finish":
			o.Payload, o.Cancelled, err = s.finish(c)
		case "step":
			o.Key, o.Status, err = s.step(c)
		case "recover":
			o.Status, err = s.recover(c)
		case "compensate":
			o.Status, err = s.compensate(c)
		case "close":
			err = s.close()
		case "wait":
			code := s.wait()
			o.ExitCode = &code
		default:
			if fault == "unknownexit" {
				os.Exit(2)
			}
			err = errors.New("Unsupported")
		}
		if err != nil {
			o.OK, o.Error = false, kind(err)
		}
		o.Payload, o.Status = reported(c.Op, o.Payload), reported(c.Op, o.Status)
		pace(began)
		if err := out.Encode(o); err != nil {
			os.Exit(2)
		}
	}
	if s != nil {
		_, _ = s.proc.Terminate()
	}
}

func start(c command) (*session, error) {
	if len(c.Command) == 0 || c.DeadlineMS <= 0 || (c.Scope != "" && !protocol.IsToken(c.Scope) && fault != "scope-any") {
		return nil, errors.New("BadCommand")
	}
	m, err := protocol.DecodeManifest(c.Manifest)
	if err != nil {
		return nil, errors.New("BadManifest")
	}
	auth, err := authorizer.New(m)
	if err != nil {
		return nil, errors.New("BadManifest")
	}
	args := c.Command[1:]
	if fault == "argv" {
		args = append(args, "--extra")
	}
	cfg := transport.ProcessConfig{Path: c.Command[0], Args: args, SessionID: m.SessionID, Stderr: os.Stderr}
	if fault == "nonportable" || fault == "intsonly" {
		cfg.AuthOptions = []protocol.AuthenticatorOption{protocol.AllowNonPortableNumbers()}
	}
	socketWorker(&cfg)
	proc, err := transport.StartProcess(cfg)
	if err != nil {
		return nil, errors.New("StartFailed")
	}
	s := &session{proc: proc, auth: auth, deadline: time.Duration(c.DeadlineMS) * time.Millisecond}
	s.state, s.inputDir, s.scope = c.State, inputDir(c.Inputs), c.Scope
	if s.plan, err = c.Plan.plan(); err != nil {
		_, _ = proc.Terminate()
		return nil, err
	}
	if s.scope == "" || fault == "tenant" {
		s.scope = defaultScope
	}
	s.ch = transport.NewChannel(workerOutput(proc.Output()), workerInput(proc.Input()), canonjson.Preserve)
	if c.Cancellable {
		s.pending = map[string]*transport.PendingInvocation{}
		s.mux, err = transport.NewMultiplexed(m, proc.HostAuthenticator(), muxOutput(proc.Output()), proc.Input())
		return s, err
	}
	if fault == "manifest" && len(m.Grants) > 1 {
		m.Grants = m.Grants[1:]
	}
	if fault != "noopen" {
		if err := transport.SendOpenSession(proc.HostAuthenticator(), s.ch, m); err != nil {
			_, _ = proc.Terminate()
			return nil, err
		}
	}
	s.frames, err = transport.NewSupervisedFrameTransport(proc.HostAuthenticator(), frameChannel(s.ch, workerOutput(proc.Output())), proc)
	if fault == "nokill" {
		s.frames, err = transport.NewFrameTransport(proc.HostAuthenticator(), s.ch)
	}
	if fault == "nodeadline" {
		s.deadline = time.Hour
	}
	return s, err
}

func (s *session) invoke(c command) (json.RawMessage, error) {
	if s == nil || s.frames == nil {
		return nil, errors.New("NotStarted") // a cancellable session runs begin and finish
	}
	p, err := protocol.DecodeToolPayload(c.Payload, canonjson.Preserve)
	if err != nil {
		return nil, errors.New("BadCommand")
	}
	if s.ops != nil && s.ops.Poisoned() {
		return nil, errors.New("Poisoned") // a failed durable exchange poisoned the shared stream (FRM-036)
	}
	if fault == "reqid" {
		c.RequestID += "x"
	}
	inv, err := protocol.NewToolInvocation(s.auth.SessionID(), c.RequestID, c.Tool, p)
	if err != nil {
		return nil, denied{err}
	}
	if err := s.chargeEarly(inv.Tool); err != nil {
		return nil, denied{err}
	}
	if fault == "authorize-late" {
		_, _ = s.frames.Dispatch(inv, s.deadline)
	}
	authorized, err := s.auth.Authorize(inv)
	if err != nil {
		if res, ok := s.pastLimit(inv, err); ok {
			return res, nil
		}
		return nil, denied{err}
	}
	res, err := s.frames.Dispatch(authorized.Invocation(), s.deadline)
	if err != nil {
		if fault == "nopoison" {
			s.ch = transport.NewChannel(s.proc.Output(), s.proc.Input(), canonjson.Preserve)
			s.frames, _ = transport.NewFrameTransport(s.proc.HostAuthenticator(), s.ch)
		}
		return nil, err
	}
	if fault == "novalidate" {
		return res.Payload.AppendJSON(nil), nil
	}
	if err := s.auth.ValidateResult(authorized, res); err != nil && !fitsInUnits(res.Payload, err) {
		s.frames.Discard()
		_, _ = s.proc.Terminate()
		return nil, invalidResult{err}
	}
	return res.Payload.AppendJSON(nil), nil
}

// close ends the session (HDR-023). A cancellable session is closed with close_session, which
// the worker accepts only there (CAN-009), then its input is closed; an ordinary session ends
// with its input closed at a frame boundary and no frame, since a baseline worker rejects
// close_session (WRK-022, CAN-022) and exits 0 at the end of its input.
func (s *session) close() error {
	if s == nil {
		return errors.New("NotStarted")
	}
	if s.mux != nil {
		if fault == "noclose" {
			return s.proc.CloseInput()
		}
		s.closeWhileActive()
		done := make(chan error, 1)
		go func() { done <- s.mux.Close() }()
		if fault == "close-early" {
			return nil
		}
		select {
		case err := <-done:
			if k, ok := transport.KindOf(err); ok && k == transport.ErrBusy && fault != "close-busy-input" {
				return err // refused while an invocation is active: nothing changes (TRN-043, TRN-086)
			}
			_ = s.proc.CloseInput()
			return err
		case <-time.After(s.deadline):
			return s.contain("close", context.DeadlineExceeded)
		}
	}
	if fault == "closeframe" {
		f, _, err := s.proc.HostAuthenticator().Seal(protocol.CloseSessionMessage{ProtocolVersion: protocol.ProtocolVersion, Session: s.auth.SessionID()})
		if err == nil {
			err = s.ch.Send(f)
		}
		if err != nil {
			return err
		}
	}
	if fault == "close-kills" || fault == "reclose-kills" {
		return s.closeKilling()
	}
	return s.proc.CloseInput()
}

func (s *session) wait() int {
	if s == nil {
		return -1
	}
	limit := s.deadline
	if fault == "wait-nodeadline" {
		limit = time.Hour
	}
	select {
	case <-s.proc.Exited():
	case <-time.After(limit):
		if fault == "wait-nokill" {
			return -1
		}
		_, _ = s.proc.Terminate()
	}
	t := s.proc.Wait()
	if !t.Exited || fault == "exitcode" {
		return -1
	}
	return t.ExitCode
}
