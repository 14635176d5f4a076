package main

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
)

// begin starts a cancellable invocation on a multiplexed session and returns at once.
func (s *session) begin(c command) error {
	if s == nil || s.mux == nil {
		return errors.New("NotStarted")
	}
	p, err := protocol.DecodeToolPayload(c.Payload, canonjson.Preserve)
	if err != nil {
		return errors.New("BadCommand")
	}
	inv, err := protocol.NewToolInvocation(s.auth.SessionID(), c.RequestID, c.Tool, p)
	if err != nil {
		return denied{err}
	}
	if s.stillActive() {
		return errors.New("Busy")
	}
	h, err := s.mux.Start(inv)
	if err == nil {
		s.pending[c.RequestID] = h
		began(c.RequestID)
	} else {
		s.beginRefused(inv, err)
	}
	if fault == "refund" && errors.Is(err, protocol.ErrCallBudgetExhausted) {
		// A host that refunded a cancelled call sends the next one anyway.
		if _, line, serr := s.proc.HostAuthenticator().Seal(protocol.InvokeMessage{Invocation: inv}); serr == nil {
			_, _ = s.proc.Input().Write(append(line, '\n'))
		}
	}
	return err
}

// cancel requests the cancellation of a begun invocation and waits for its disposition.
func (s *session) cancel(c command) (string, error) {
	if s == nil || s.pending[c.RequestID] == nil {
		return "", errors.New("NotStarted")
	}
	if fault == "cancel-id" {
		c.CancellationID += "x"
	}
	cancelling(true)
	defer cancelling(false)
	h, err := s.pending[c.RequestID].RequestCancellation(c.CancellationID)
	if err != nil {
		if (errors.Is(err, transport.ErrCancelSlotUnavailable) && fault != "nocontain") || fault == "refusal-contains" {
			// No identity slot was kept for this cancellation (TRN-112): contain the worker
			// instead; whether the work happened is unknown (HDR-045).
			s.stop("refusal")
			return "", errors.New("Indeterminate")
		}
		return "", err
	}
	ctx, stop := context.WithTimeout(context.Background(), s.deadline)
	defer stop()
	res, err := h.Wait(ctx)
	if err != nil {
		s.cancelContained(c.RequestID, err)
		return "", s.contain("cancel", err)
	}
	return res.Outcome.String(), nil
}

// finish waits for the outcome of a begun invocation.
func (s *session) finish(c command) (json.RawMessage, bool, error) {
	if s == nil || s.pending[c.RequestID] == nil {
		return nil, false, errors.New("NotStarted")
	}
	ctx, stop := context.WithTimeout(context.Background(), finishWait(c.RequestID, s.deadline))
	defer stop()
	out, err := s.pending[c.RequestID].Wait(ctx)
	if err != nil && s.endTakenForCancel(c.RequestID, err) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, s.contain("finish", err)
	}
	if out.Cancelled || fault == "finish-cancelled" {
		return nil, true, nil
	}
	s.resulted()
	return out.Result.Payload.AppendJSON(nil), false, nil
}

// contain stops the worker after a failed or timed-out wait (of the command op) on a
// multiplexed session.
func (s *session) contain(op string, err error) error {
	s.stop(op)
	if errors.Is(err, context.DeadlineExceeded) {
		return errors.New("Indeterminate")
	}
	return err
}
