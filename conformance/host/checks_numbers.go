package host

import (
	"bytes"
	"fmt"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/driver"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// disputedNumbers are number spellings that the two number models read differently (ENC-034):
// exponents in every spelling, trailing zeros, a negative zero, a magnitude past binary64,
// integers past 64 bits. A host that reads commands with a JSON library holding numbers in
// floats rewrites them; one that checks only integer ranges sends the others as they are.
var disputedNumbers = []string{"1e2", "1E2", "1e02", "0.10", "-0", "1e400", "99999999999999999999", "18446744073709551616"}

// portableNumbers is a payload of numbers both models read and write identically (ENC-035),
// which a host must send exactly as given.
const portableNumbers = `{"a":[0,-1,1.5,0.1,1.0,100,2.5e-7,18446744073709551615,-9223372036854775808],"b":"1e2"}`

// numberProbe is what a host did with a payload holding one disputed number: the payload of
// the frame it sent (nil when none) and the expected payload, the command's in its Preserve
// canonical form (ENC-024, ENC-025).
type numberProbe struct {
	token      string
	sent, want []byte
	outcome    driver.Outcome
}

// probeNumber invokes conf.json with {"n":token} on a fresh session and reports what reached
// the worker; a frame is answered so that the command ends either way.
func probeNumber(t *T, token string) numberProbe {
	t.RenewDeadline() // each probe starts a worker of its own
	w := t.session(jsonGrant())
	raw := `{"format":"json","value":{"n":` + token + `}}`
	want, err := protocol.DecodeToolPayload([]byte(raw), canonjson.Preserve)
	if err != nil {
		t.Internal(err)
	}
	pr := numberProbe{token: token, want: want.AppendJSON(nil)}
	id := t.sendCommand(map[string]any{"op": "invoke", "request_id": "req-1", "tool": jsonTool, "payload": rawJSON(raw)})
	line, o, done := t.frameOrOutcome(w, id, time.Until(t.Deadline))
	if !done {
		w.frames++
		f, err := w.auth.Open(line)
		if err != nil {
			t.Failf("the frame for "+token+" verifies under the session key"+t.Cite("FRM-025"), fmt.Sprintf("%v: %s", err, conformance.Clip(string(line), 200)))
		}
		inv, ok := f.Message.(protocol.InvokeMessage)
		if !ok {
			t.Failf("an invoke frame", string(f.Message.Type()))
		}
		pr.sent = inv.Invocation.Payload.AppendJSON(nil)
		w.send(w.result("req-1", jsonPayload(`{}`)))
		o = t.await(id)
	}
	pr.outcome = o
	t.Logf("%s: sent %s, outcome %s", token, pr.sent, conformance.Clip(string(o.Raw()), 100))
	return pr
}

// frameOrOutcome waits at most wait for the next line the host writes to w or for the outcome
// of command id, whichever comes first; done says that the outcome came.
func (t *T) frameOrOutcome(w *fakeWorker, id uint64, wait time.Duration) ([]byte, driver.Outcome, bool) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case ev := <-w.lines:
		if ev.err != nil {
			w.lines <- ev
			return nil, t.await(id), true
		}
		return ev.line, driver.Outcome{}, false
	case ev := <-t.drv.Lines():
		o, err := ev.Outcome(id)
		return nil, t.accept(id, o, err), true
	case <-timer.C:
		t.End(conformance.Timeout, fmt.Sprintf("neither a frame nor the outcome of command %d in time", id))
	}
	return nil, driver.Outcome{}, true
}

func numberChecks() []*Check {
	return []*Check{
		{ID: "CNF-HNUMBER-01", Level: should, Requirements: []string{"ENC-034", "ENC-037", "ENC-039", "FRM-022"}, Features: []string{FeatureInvoke},
			Title: "the host sends only portable numbers: a payload number the other number model reads differently, in any spelling, is refused or never sent as is",
			Run: func(t *T) {
				for _, tok := range disputedNumbers {
					pr := probeNumber(t, tok)
					if pr.sent == nil {
						continue
					}
					if bad, ok := canonjson.FirstNonPortableNumber(string(pr.sent)); ok {
						t.Failf("no frame with a non-portable number (ENC-037, ENC-039)", fmt.Sprintf("the host sent %s for %s: %s", bad, tok, pr.sent))
					}
				}
			}},
		{ID: "CNF-HNUMBER-02", Level: must, Requirements: []string{"ENC-024", "ENC-025", "ENC-037", "HDR-021", "HDR-047"}, Features: []string{FeatureInvoke},
			Title: "the host never rewrites a payload number: each disputed spelling is refused or sent exactly as the Preserve rules write it (1e2 never becomes 100)",
			Run: func(t *T) {
				for _, tok := range disputedNumbers {
					if pr := probeNumber(t, tok); pr.sent != nil && !bytes.Equal(pr.sent, pr.want) {
						t.Failf(fmt.Sprintf("for %s a refusal or the payload %s (HDR-047)", tok, pr.want), "the host sent "+string(pr.sent))
					}
				}
			}},
		{ID: "CNF-HNUMBER-03", Level: must, Requirements: []string{"ENC-035", "HDR-021", "HDR-047"}, Features: []string{FeatureInvoke},
			Title: "a payload of portable numbers given in a command reaches the worker byte for byte",
			Run: func(t *T) {
				p := jsonPayload(portableNumbers)
				if tok, bad := canonjson.FirstNonPortableNumber(string(p.AppendJSON(nil))); bad {
					t.Internal(fmt.Errorf("the runner's portable payload holds %s", tok))
				}
				w := t.session(jsonGrant())
				id := t.invoke("req-1", jsonTool, p)
				inv := w.recvWithin(protocol.TypeInvoke, time.Second, func() {
					t.Failf("the invoke of the portable payload "+string(p.AppendJSON(nil)), "no frame; the outcome "+string(t.await(id).Raw()))
				}).(protocol.InvokeMessage).Invocation
				if got := inv.Payload.AppendJSON(nil); !bytes.Equal(got, p.AppendJSON(nil)) {
					t.Failf("the payload "+string(p.AppendJSON(nil))+" (HDR-047)", string(got))
				}
				w.send(w.result("req-1", jsonPayload(`{}`)))
				t.await(id)
			}},
		{ID: "CNF-HNUMBER-04", Level: must, Requirements: []string{"ENC-036", "ENC-039", "HDR-021", "HDR-047"}, Features: []string{FeatureInvoke},
			Title: "received numbers are reported as received: a result holding 0.10 and 1e+2 comes back in the outcome unchanged",
			Run: func(t *T) {
				w := t.session(jsonGrant())
				id := t.invoke("req-1", jsonTool, jsonPayload(`{}`))
				w.recv(protocol.TypeInvoke)
				kept := keptNumbers()
				// Sealed by hand: the runner's own sealer refuses non-portable numbers (ENC-037).
				w.write(w.forge(1, protocol.RoleWorker, w.boot.SessionID, w.result("req-1", kept)))
				if o := t.await(id); !o.OK || !bytes.Equal(o.Payload, kept.AppendJSON(nil)) {
					t.Failf("ok with the payload "+string(kept.AppendJSON(nil))+" as received (ENC-036, HDR-021, HDR-047)", string(o.Raw()))
				}
			}},
		{ID: "CNF-HNUMBER-05", Level: must, Requirements: []string{"ENC-035", "ENC-036", "HDR-028", "HDR-047"}, Features: []string{FeatureInvoke, FeatureCancel},
			Title: "begin's payload of portable numbers reaches the worker byte for byte, and finish reports a result holding 0.10 and 1e+2 as received",
			Run: func(t *T) {
				w := cancellableSession(t, jsonGrant())
				p := portablePayload(t)
				id := t.sendCommand(map[string]any{"op": "begin", "request_id": "req-1", "tool": jsonTool, "payload": rawJSON(p.AppendJSON(nil))})
				inv := w.recvWithin(protocol.TypeInvoke, time.Second, func() {
					t.Failf("the invoke of the portable payload "+string(p.AppendJSON(nil)), "no frame; the outcome "+string(t.await(id).Raw()))
				}).(protocol.InvokeMessage).Invocation
				samePayload(t, "begin", p, inv.Payload)
				if o := t.await(id); !o.OK {
					t.Failf("begin answered with ok (HDR-028)", string(o.Raw()))
				}
				kept := keptNumbers()
				id = t.sendCommand(map[string]any{"op": "finish", "request_id": "req-1"})
				w.write(w.forge(1, protocol.RoleWorker, w.boot.SessionID, w.result("req-1", kept)))
				if o := t.await(id); !o.OK || !bytes.Equal(o.Payload, kept.AppendJSON(nil)) {
					t.Failf("finish with the payload "+string(kept.AppendJSON(nil))+" as received (ENC-036, HDR-047)", string(o.Raw()))
				}
			}},
		{ID: "CNF-HNUMBER-06", Level: must, Requirements: []string{"ENC-035", "ENC-036", "HDR-041", "HDR-043", "HDR-047"},
			Features: []string{FeatureInvoke, FeatureRecover, FeatureCompensate},
			Title:    "step's and compensate's payloads of portable numbers reach the worker byte for byte, and the statuses they report keep 0.10 and 1e+2 as received",
			Run: func(t *T) {
				p, kept := portablePayload(t), protocol.Succeeded(keptNumbers())
				w := t.ledgerSession()
				id := t.stepCommand("req-1", p)
				req := w.recvWithin(protocol.TypeDispatchOperation, recoverWait, func() {
					t.Failf("the dispatch of the portable payload "+string(p.AppendJSON(nil)), "no frame; the outcome "+string(t.await(id).Raw()))
				}).(protocol.DispatchOperationMessage).Request
				samePayload(t, "step", p, req.Payload)
				w.write(w.forge(1, protocol.RoleWorker, w.boot.SessionID, w.operationResult(req, req.OperationKey, kept)))
				if o := t.await(id); !o.OK || string(o.Status) != string(kept.AppendJSON(nil)) {
					t.Failf("step with the status "+string(kept.AppendJSON(nil))+" as received (ENC-036, HDR-041, HDR-047)", string(o.Raw()))
				}
				second := t.ledgerSession()
				id = t.compensateWith("cmp-req-1", req.OperationKey, p)
				m := second.recvWithin(protocol.TypeCompensateOperation, recoverWait, func() {
					t.Failf("the compensation with the portable payload "+string(p.AppendJSON(nil)), "no frame; the outcome "+string(t.await(id).Raw()))
				})
				creq := checkCompensation(t, second, req.OperationKey, p, m)
				answer := second.compensated(creq).(protocol.CompensationResultMessage)
				answer.Result.Status = kept
				second.write(second.forge(1, protocol.RoleWorker, second.boot.SessionID, answer))
				if o := t.await(id); !o.OK || string(o.Status) != string(kept.AppendJSON(nil)) {
					t.Failf("compensate with the status "+string(kept.AppendJSON(nil))+" as received (ENC-036, HDR-043, HDR-047)", string(o.Raw()))
				}
			}},
	}
}

// keptNumbers is a worker's payload of numbers that only the Preserve model keeps as written
// (ENC-036): a host must report it as received.
func keptNumbers() protocol.ToolPayload { return jsonPayload(`{"a":0.10,"b":1e+2,"c":[1.50,-0.0]}`) }

// portablePayload is the payload of portableNumbers, which a host must send byte for byte.
func portablePayload(t *T) protocol.ToolPayload {
	p := jsonPayload(portableNumbers)
	if tok, bad := canonjson.FirstNonPortableNumber(string(p.AppendJSON(nil))); bad {
		t.Internal(fmt.Errorf("the runner's portable payload holds %s", tok))
	}
	return p
}

// samePayload fails the check unless the payload a frame carried is want, given in command op.
func samePayload(t *T, op string, want, got protocol.ToolPayload) {
	if !bytes.Equal(got.AppendJSON(nil), want.AppendJSON(nil)) {
		t.Failf("the "+op+" payload "+string(want.AppendJSON(nil))+" byte for byte (HDR-047)", string(got.AppendJSON(nil)))
	}
}
