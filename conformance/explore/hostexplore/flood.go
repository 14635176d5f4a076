package hostexplore

import (
	"fmt"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/protocol"
)

// floodTool is the tool of the flood behaviour, granted twice the session's identities in calls
// so that only the bound of 1,024 identities limits it (AUZ-006).
const floodTool = "conf.flood"

// floodLimit bounds one flood: a thousand round trips, with a slow driver under load.
const floodLimit = 60 * time.Second

// floodGrant is the flood tool's grant.
func floodGrant() protocol.CapabilityGrant {
	g := protocol.TextGrant(floodTool)
	g.MaxCalls, g.MaxInputBytes, g.MaxOutputBytes = 2*protocol.MaxSessionRequestIDs, echoMaxInput, 64
	return g
}

// flood fills the session's identities in one step (AUZ-006, TRN-112): on an ordinary session
// it invokes the flood tool until one invocation past the 1,024 identities, which the host must
// refuse unsent; on a cancellable one it begins and finishes invocations until three
// identities are left, so that the next begin keeps a slot for its cancellation and the one
// after it does not. The commands are written ahead and every invoke frame is answered at
// once; each frame is judged as any other and charged to the session's authorizer, and on an
// ordinary session every invocation the authorizer admits must be sent.
func (m *machine) flood(s Symbol, req string) (string, *Violation) {
	w := m.w
	cancellable := s.Op == "begin"
	kind := protocol.BaselineSession
	if cancellable {
		kind = protocol.CancellableSession
	}
	if w == nil || w.authz == nil || w.state.Kind != kind || w.state.Active || w.poisoned != "" || w.ended || w.inputEnded {
		return "skipped", nil
	}
	payload := rawJSON(protocol.TextPayload("x").AppendJSON(nil))
	var cmds []map[string]any
	admitted := map[string]bool{}
	n := protocol.MaxSessionRequestIDs + 1 - w.authz.ReservedRequestIDs()
	if cancellable {
		n = protocol.MaxSessionRequestIDs - 3 - w.authz.ReservedRequestIDs()
	}
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("%s-f%04d", req, i)
		if cancellable {
			cmds = append(cmds, map[string]any{"op": "begin", "request_id": id, "tool": floodTool, "payload": payload},
				map[string]any{"op": "finish", "request_id": id})
			continue
		}
		cmds = append(cmds, map[string]any{"op": "invoke", "request_id": id, "tool": floodTool, "payload": payload})
		inv, err := protocol.NewToolInvocation(w.boot.SessionID, id, floodTool, protocol.TextPayload("x"))
		if err == nil {
			_, err = w.authz.Authorize(inv)
		}
		admitted[id] = err == nil
	}
	if len(cmds) == 0 {
		return "skipped", nil
	}
	first := m.drv.LastID() + 1
	m.logf("driver: commands %d to %d written ahead: %d × %s of %s", first, first+uint64(len(cmds))-1, n, s.Op, floodTool)
	written := make(chan struct{})
	go func() {
		defer close(written)
		for _, c := range cmds {
			if _, err := m.drv.Send(c); err != nil {
				return
			}
		}
	}()
	// The driver is killed when the run ends, which ends a writer still blocked.
	defer func() {
		select {
		case <-written:
		case <-time.After(m.cfg.grace()):
		}
	}()
	timer := time.NewTimer(floodLimit)
	defer timer.Stop()
	frames, outcomes, failed := 0, 0, 0
	sent := map[string]bool{}
	for outcomes < len(cmds) {
		select {
		case ev := <-w.lines:
			if ev.err != nil {
				w.inputEnded = true
				return fmt.Sprintf("%d×invoke input-ended", frames), violation("authorized", fmt.Sprintf("%d invocations the authorizer admits, sent", n),
					fmt.Sprintf("the worker's input ended after %d frames", frames))
			}
			if w.poisoned != "" {
				return fmt.Sprintf("%d×invoke", frames), violation("poisoned-silent", "no frame after the failed "+w.poisoned, "host frame: "+conformance.Clip(string(ev.line), 120))
			}
			f, fe := w.open(ev.line)
			if fe != nil {
				return fmt.Sprintf("%d×invoke", frames), violation(fe.name, "a frame a worker accepts", fe.observed)
			}
			inv, ok := f.Message.(protocol.InvokeMessage)
			if !ok {
				return fmt.Sprintf("%d×invoke", frames), violation("request-as-given", s.Op+" sends invoke", fmt.Sprintf("%s during %s", f.Message.Type(), s.Op))
			}
			frames++
			id := inv.Invocation.RequestID
			if cancellable {
				w.state.Active = true
				ex := &exchangeState{m: m, sym: s}
				if v := ex.authorizeFrame(w, inv.Invocation); v != nil {
					return fmt.Sprintf("%d×invoke", frames), v
				}
			} else if !admitted[id] || sent[id] {
				return fmt.Sprintf("%d×invoke", frames), violation("authorized", "no frame: the session's authorizer refuses "+id+" (every identity used, AUZ-006)", "invoke of "+id)
			}
			sent[id] = true
			w.write(w.seal(pongResult(w.boot.SessionID, id)))
			if cancellable {
				w.state.Active, w.state.Target = false, true
			}
		case ev := <-m.drv.Lines():
			o, err := ev.Outcome(first + uint64(outcomes))
			if err != nil {
				return fmt.Sprintf("%d×invoke", frames), violation("driver-lines", fmt.Sprintf("the outcome of command %d", first+uint64(outcomes)), err.Error())
			}
			if !o.OK {
				failed++
			}
			outcomes++
		case <-timer.C:
			return fmt.Sprintf("%d×invoke none", frames), violation("driver-lines", fmt.Sprintf("%d outcomes within %v", len(cmds), floodLimit), fmt.Sprintf("%d outcomes, %d frames", outcomes, frames))
		}
	}
	m.logf("driver: %d outcomes (%d errors), %d invoke frames answered", outcomes, failed, frames)
	out := fmt.Sprintf("%d×invoke ok", frames)
	if !cancellable {
		for id, ok := range admitted {
			if ok && !sent[id] {
				return out, violation("authorized", "the invoke of "+id+": the session's authorizer admits it", "no frame")
			}
		}
	}
	return out, nil
}

// keepToken remembers the authorization of an invocation, for its cancellation's.
func (w *worker) keepToken(a authorizer.AuthorizedInvocation) {
	if w.tokens == nil {
		w.tokens = map[string]authorizer.AuthorizedInvocation{}
	}
	w.tokens[a.Invocation().RequestID] = a
}
