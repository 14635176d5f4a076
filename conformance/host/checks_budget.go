package host

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/driver"
	"github.com/splashv5/conform/conformance/fakeworker"
	"github.com/splashv5/conform/impl/protocol"
)

// budgetChecks judge the host's own authorizer: it applies the call budget, the input limit and
// the 1,024-identity bound before it sends, and a refusal spends nothing. A worker ends the
// session at a frame it rejects, so only the host suite can show what a refusal did not spend.
func budgetChecks() []*Check {
	return []*Check{
		{ID: "CNF-HBUDGET-01", Level: must, Requirements: []string{"AUZ-005", "AUZ-007", "AUZ-008", "AUZ-010", "HDR-021", "HDR-022", "HDR-023"},
			Features: []string{FeatureInvoke},
			Title:    "an invocation the host refuses (input too large, wrong format, ungranted tool, duplicate id) sends no frame, reserves no id and spends no call; max_calls is enforced before sending",
			Run: func(t *T) {
				g := echoGrant()
				g.MaxCalls, g.MaxInputBytes = 2, 8
				w := t.session(g)
				refuse := func(requestID, tool string, p protocol.ToolPayload, why string) {
					if o := t.expectError(t.invoke(requestID, tool, p), "the host refuses "+why); o.Error != "Denied" {
						t.Failf(`error kind "Denied" for `+why+` (HDR-022)`, string(o.Raw()))
					}
				}
				accept := func(requestID string, p protocol.ToolPayload, why string) {
					id := t.invoke(requestID, echoTool, p)
					inv := w.recvWithin(protocol.TypeInvoke, time.Second, func() {
						t.Failf("the invoke of "+requestID+": "+why, "no frame; the outcome "+string(t.await(id).Raw()))
					}).(protocol.InvokeMessage).Invocation
					if inv.RequestID != requestID {
						t.Failf("the invoke of "+requestID+", no frame for a refused invocation", "the invoke of "+inv.RequestID)
					}
					w.send(w.result(requestID, text("pong")))
					if o := t.await(id); !o.OK {
						t.Failf("ok: "+why, string(o.Raw()))
					}
				}
				refuse("req-1", echoTool, text("123456789"), "a payload over max_input_bytes 8")
				refuse("req-2", "conf.unknown", text("x"), "an ungranted tool")
				refuse("req-3", echoTool, jsonPayload(`{}`), "a JSON payload for a text grant")
				accept("req-1", text("12345678"), "a payload of exactly max_input_bytes (AUZ-010), under the id a refusal did not reserve (AUZ-007)")
				refuse("req-1", echoTool, text("x"), "a duplicate request id (AUZ-005)")
				accept("req-4", text("ping"), "the second of max_calls 2: the four refusals spent no call (AUZ-008)")
				refuse("req-5", echoTool, text("ping"), "a third call over max_calls 2")
				id := t.sendCommand(map[string]any{"op": "close"})
				w.expectEnd("close ends an ordinary session (HDR-023); a frame sent for a refusal would arrive first")
				t.await(id)
			}},
		{ID: "CNF-HBUDGET-02", Level: must, Requirements: []string{"AUZ-006", "AUZ-007", "AUZ-024", "HDR-022", "HDR-023"},
			Features: []string{FeatureInvoke},
			Title:    "the host reserves at most 1,024 identities: the 1,025th distinct request id is Denied without a frame",
			Run: func(t *T) {
				g := echoGrant()
				g.MaxCalls = 2 * protocol.MaxSessionRequestIDs
				w := t.session(g)
				fill(t, w, protocol.MaxSessionRequestIDs, func(i int) []map[string]any {
					return []map[string]any{{"op": "invoke", "request_id": fillID(i), "tool": echoTool, "payload": rawJSON(text("x").AppendJSON(nil))}}
				})
				t.Logf("%d invocations answered and accepted, the last at full capacity (AUZ-024)", protocol.MaxSessionRequestIDs)
				for _, req := range []string{fillID(protocol.MaxSessionRequestIDs + 1), fillID(1)} {
					if o := t.expectError(t.invoke(req, echoTool, text("x")), "the host refuses "+req+" with every identity used"); o.Error != "Denied" {
						t.Failf(`error kind "Denied" (HDR-022)`, string(o.Raw()))
					}
				}
				id := t.sendCommand(map[string]any{"op": "close"})
				w.expectEnd("close ends an ordinary session (HDR-023)")
				t.await(id)
			}},
		{ID: "CNF-HBUDGET-03", Level: must, Requirements: []string{"AUZ-011", "AUZ-008", "HDR-028"},
			Features: []string{FeatureInvoke, FeatureCancel},
			Title:    "a charged call is never refunded: after its invocation was cancelled, a call over max_calls fails without a frame",
			Run: func(t *T) {
				g := echoGrant()
				g.MaxCalls = 1
				w := cancellableSession(t, g)
				id := t.sendCommand(map[string]any{"op": "begin", "request_id": "req-1", "tool": echoTool, "payload": rawJSON(text("slow").AppendJSON(nil))})
				w.recv(protocol.TypeInvoke)
				t.await(id)
				id, req := cancelRequest(t, w, "cancel-1")
				w.send(w.disposition(req, protocol.OutcomeAcknowledged))
				if o := t.await(id); !o.OK || o.Disposition != "acknowledged" {
					t.Failf(`disposition "acknowledged"`, string(o.Raw()))
				}
				if o := t.finish(); !o.OK || !o.Cancelled {
					t.Failf(`finish {"ok":true,"cancelled":true}`, string(o.Raw()))
				}
				id = t.sendCommand(map[string]any{"op": "begin", "request_id": "req-2", "tool": echoTool, "payload": rawJSON(text("x").AppendJSON(nil))})
				t.expectError(id, "the host refuses a second call with max_calls 1: the cancelled call stays charged (AUZ-011)")
				w.expectSilence(100*time.Millisecond, "a refused call is refused before any frame")
			}},
	}
}

// fillID is the request id of the i-th filler invocation (1-based).
func fillID(i int) string { return fmt.Sprintf("fill-%04d", i) }

// Pace-sized limits of fill: the driver's pace is measured over the first paceSample outcomes,
// and the limit becomes paceMargin times the projected time, plus a second, when that is later
// than the check's own limit, but never more than maxPacedLimit from the start of the fill.
const (
	paceSample    = 32
	paceMargin    = 4
	maxPacedLimit = 90 * time.Second
)

// fill runs n invocations fill-0001 … on w's session: commands(i) are the driver commands of the
// i-th (each answered ok), its one invoke frame is answered with a text result. The commands are
// written ahead, and neither frames nor outcomes are logged one by one, so that a thousand round
// trips cost well under a second with a fast driver. A slower driver is given the time its own
// pace needs: once paceSample outcomes came, the check's limit is sized from their rate, and the
// transcript says so.
func fill(t *T, w *fakeWorker, n int, commands func(i int) []map[string]any) {
	var cmds []map[string]any
	for i := 1; i <= n; i++ {
		cmds = append(cmds, commands(i)...)
	}
	first := t.drv.LastID() + 1
	t.Logf("driver: commands %d to %d written ahead: %d × %v, the first %s", first, first+uint64(len(cmds))-1, n,
		opsOf(commands(1)), t.commandText(cmds[0]))
	begun := time.Now()
	limitNote := fmt.Sprintf("the check's limit of %v", t.run.Timeout)
	written := make(chan struct{})
	go func() {
		defer close(written)
		for _, c := range cmds {
			if _, err := t.drv.Send(c); err != nil {
				return
			}
		}
	}()
	timer := time.NewTimer(time.Until(t.Deadline))
	defer timer.Stop()
	frames, outcomes := 0, 0
	for frames < n || outcomes < len(cmds) {
		select {
		case ev := <-w.lines:
			if ev.err != nil {
				w.lines <- ev
				t.Failf(fmt.Sprintf("the invoke of %s", fillID(frames+1)), "the host closed the worker's input ("+ev.err.Error()+")")
			}
			f := w.open(ev.line)
			inv, ok := f.Message.(protocol.InvokeMessage)
			if frames++; !ok || inv.Invocation.RequestID != fillID(frames) {
				t.Failf("the invoke of "+fillID(frames), conformance.Clip(string(ev.line), 300))
			}
			result := w.result(fillID(frames), text("ok"))
			_, line, err := w.auth.Seal(result)
			if err != nil {
				t.Internal(err)
			}
			w.sent(result)
			if err := w.enc.Encode(fakeworker.Relay{Write: append(line, '\n')}); err != nil {
				t.Failf("the fake worker reachable", err.Error())
			}
		case ev := <-t.drv.Lines():
			var o driver.Outcome
			if ev.Err != nil || json.Unmarshal(ev.Line, &o) != nil {
				t.Failf("one outcome line per command"+t.Cite("HDR-001"), fmt.Sprintf("%v %s", ev.Err, conformance.Clip(string(ev.Line), 200)))
			}
			if o.ID != first+uint64(outcomes) || !o.OK {
				t.Failf(fmt.Sprintf("ok for command %d, %v", first+uint64(outcomes), cmds[outcomes]["op"]), conformance.Clip(string(ev.Line), 200))
			}
			if outcomes++; outcomes == min(paceSample, len(cmds)) {
				pace := time.Since(begun) / time.Duration(outcomes)
				limit := begun.Add(min(paceMargin*pace*time.Duration(len(cmds))+time.Second, maxPacedLimit))
				if limit.After(t.Deadline) {
					t.Deadline = limit
					timer.Reset(time.Until(limit))
				}
				limitNote = fmt.Sprintf("a limit of %v sized from the driver's measured pace of %v per command over the first %d (%d× margin)",
					t.Deadline.Sub(begun).Round(time.Millisecond), pace.Round(time.Microsecond), outcomes, paceMargin)
				t.Logf("fill: %s", limitNote)
			}
		case <-timer.C:
			t.Failf(fmt.Sprintf("%d invocations answered within %s", n, limitNote), fmt.Sprintf("%d frames, %d outcomes", frames, outcomes))
		}
	}
	t.Logf("driver: commands %d to %d answered ok, %d invoke frames answered, in %v", first, first+uint64(len(cmds))-1, frames,
		time.Since(begun).Round(time.Millisecond))
	// Every command was answered, so the writer is done. A failed check does not wait for it:
	// the driver is killed when the check ends, which ends its writes.
	<-written
}

// opsOf lists the ops of commands.
func opsOf(commands []map[string]any) []any {
	var ops []any
	for _, c := range commands {
		ops = append(ops, c["op"])
	}
	return ops
}
