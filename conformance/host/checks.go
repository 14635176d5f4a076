package host

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/driver"
	"github.com/splashv5/conform/conformance/fakeworker"
	"github.com/splashv5/conform/impl/bootstrap"
	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/internal/childproc"
)

const unreachableBootstrap = "the bootstrap is written by impl/transport.StartProcess with impl/bootstrap, which the " +
	"driver's fault switch does not alter; impl/bootstrap has its own tests and vectors"

const (
	must   = conformance.Must
	should = conformance.Should
)

func bootChecks() []*Check {
	return []*Check{
		{ID: "CNF-HBOOT-01", Level: must, Requirements: []string{"BOOT-001", "BOOT-016", "BOOT-024", "HDR-020"}, Features: []string{FeatureInvoke},
			Title:       "the worker's standard input starts with the exact bootstrap for the manifest's session",
			Unreachable: unreachableBootstrap,
			Run: func(t *T) {
				m := t.manifest(echoGrant())
				w, id := t.startWorker(m)
				want := bootstrap.Size(len(m.SessionID))
				raw := w.bootRaw
				if len(raw) != want || string(raw[:8]) != bootstrap.Magic || raw[8] != bootstrap.Version ||
					int(raw[9]) != len(m.SessionID) || string(raw[10:10+len(m.SessionID)]) != m.SessionID {
					t.Failf(fmt.Sprintf("%d bootstrap bytes SPLPBOOT 01 %02x %s KEY", want, len(m.SessionID), m.SessionID),
						fmt.Sprintf("%d bytes %q", len(raw), conformance.Clip(string(raw), 80)))
				}
				w.recv(protocol.TypeOpenSession)
				t.await(id)
			}},
		{ID: "CNF-HBOOT-02", Level: must, Requirements: []string{"FRM-041", "TRN-093", "HDR-024"}, Features: []string{FeatureInvoke},
			Title: "every launch gets a fresh session key", Unreachable: unreachableKey,
			Run: func(t *T) {
				first := t.session(echoGrant())
				t.call(map[string]any{"op": "close"})
				first.exit(3)
				if o := t.call(map[string]any{"op": "wait"}); !o.OK || o.ExitCode == nil || *o.ExitCode != 3 {
					t.Failf(`{"ok":true,"exit_code":3} after the worker exited with 3`+t.Cite("HDR-024"), string(o.Raw()))
				}
				second := t.session(echoGrant())
				if first.boot.Key.Equal(second.boot.Key) {
					t.Failf("two launches with two different keys", "the same key twice")
				}
			}},
		{ID: "CNF-HBOOT-03", Level: must, Requirements: []string{"FRM-040", "FRM-043", "BOOT-017", "HDR-025"}, Features: []string{FeatureInvoke},
			Title:       "the key never appears in the worker's argv or environment, nor in the driver's output",
			Unreachable: unreachableKey,
			Run: func(t *T) {
				w := t.session(echoGrant())
				roundTrip(t, w, "req-1")
				t.call(map[string]any{"op": "close"})
				w.exitAndEnd(0)
				t.call(map[string]any{"op": "wait"})
				stderr, output := t.drv.Texts()
				where := leaks(w.boot.Key, map[string]string{
					"the worker's argv": strings.Join(w.hello.Argv, "\x00"), "the worker's environment": strings.Join(w.hello.Env, "\x00"),
					"the driver's standard error": stderr, "the driver's outcome lines": output,
				})
				if where != "" {
					t.Failf("no encoding of the session key outside the bootstrap", "the key in "+where)
				}
			}},
		{ID: "CNF-HBOOT-04", Level: must, Requirements: []string{"HDR-020"}, Features: []string{FeatureInvoke},
			Title: "the driver runs the given worker command line unchanged, once per start",
			Run: func(t *T) {
				m := t.manifest(echoGrant())
				w, id := t.startWorker(m)
				want := append(slices.Clone(t.run.fake), t.side.Sock)
				if !slices.Equal(w.hello.Argv[1:], want[1:]) {
					t.Failf(fmt.Sprintf("argv %q", want), fmt.Sprintf("%q", w.hello.Argv))
				}
				w.recv(protocol.TypeOpenSession)
				t.await(id)
				select {
				case <-t.side.Conns:
					t.Failf("one worker per start command", "a second worker")
				case <-time.After(100 * time.Millisecond):
				}
			}},
	}
}

func openChecks() []*Check {
	return []*Check{
		{ID: "CNF-HOPEN-04", Level: must, Requirements: []string{"HDR-012", "HDR-002", "HDR-054"},
			Title: "the driver answers an unknown command with Unsupported and keeps serving",
			Run: func(t *T) {
				if o := t.call(map[string]any{"op": "conformance.unknown", "extra": 1}); o.OK || o.Error != "Unsupported" {
					t.Failf(`{"ok":false,"error":"Unsupported"}`, string(o.Raw()))
				}
				if o := t.call(map[string]any{"op": "hello"}); !o.OK {
					t.Failf("hello answered with ok after the unknown command", string(o.Raw()))
				}
			}},
		{ID: "CNF-HOPEN-08", Level: must, Requirements: []string{"HDR-010"},
			Title: "hello, the first command, lists in features only this revision's five, each once: invoke, durable, cancel, recover, compensate (compensate only with recover)",
			Run: func(t *T) {
				// Open sent hello as the driver's first command and kept its features.
				known := []string{FeatureInvoke, FeatureDurable, FeatureCancel, FeatureRecover, FeatureCompensate}
				for i, f := range t.features {
					switch {
					case !slices.Contains(known, f):
						t.Failf(fmt.Sprintf("features among %q", known), fmt.Sprintf("%q in %q: declare only the features this revision defines", f, t.features))
					case slices.Contains(t.features[:i], f):
						t.Failf("each feature once", fmt.Sprintf("%q twice in %q", f, t.features))
					}
				}
				if slices.Contains(t.features, FeatureCompensate) && !slices.Contains(t.features, FeatureRecover) {
					t.Failf(`"recover" declared with "compensate", which needs it`, fmt.Sprintf("%q", t.features))
				}
				t.Logf("features %q", t.features)
			}},
		{ID: "CNF-HOPEN-01", Level: must, Requirements: []string{"TRN-011", "FRM-019", "HDR-020"}, Features: []string{FeatureInvoke},
			Title: "the first frame is open_session, sequence 1, with the manifest given",
			Run: func(t *T) {
				m := t.manifest(echoGrant(), jsonGrant())
				w, id := t.startWorker(m)
				got := w.recv(protocol.TypeOpenSession).(protocol.OpenSessionMessage)
				if w.auth.NextIncoming() != 2 {
					t.Failf("open_session at sequence 1", fmt.Sprintf("next incoming %d", w.auth.NextIncoming()))
				}
				if !bytes.Equal(got.Manifest.AppendJSON(nil), m.AppendJSON(nil)) {
					t.Failf("the manifest "+string(m.AppendJSON(nil)), string(got.Manifest.AppendJSON(nil)))
				}
				if o := t.await(id); !o.OK {
					t.Failf("start answered with ok", string(o.Raw()))
				}
			}},
		{ID: "CNF-HOPEN-02", Level: must, Requirements: []string{"FRM-019", "FRM-021", "HDR-023", "CAN-022", "WRK-022"}, Features: []string{FeatureInvoke},
			Title: "host sequences run 1, 2, 3 … through invocations; close ends an ordinary session by ending the input, with no close_session",
			Run: func(t *T) {
				w := t.session(echoGrant())
				roundTrip(t, w, "req-1")
				roundTrip(t, w, "req-2")
				if w.auth.NextIncoming() != 4 {
					t.Failf("the invokes at sequences 2 and 3", fmt.Sprintf("next incoming %d", w.auth.NextIncoming()))
				}
				id := t.sendCommand(map[string]any{"op": "close"})
				w.expectEnd("close ends an ordinary session at a frame boundary (HDR-023)")
				if o := t.await(id); !o.OK {
					t.Failf("close answered with ok (HDR-023)", string(o.Raw()))
				}
				w.exitAndEnd(0)
				if o := t.call(map[string]any{"op": "wait"}); !o.OK || o.ExitCode == nil || *o.ExitCode != 0 {
					t.Failf(`{"ok":true,"exit_code":0}: the worker ended cleanly`+t.Cite("HDR-024"), string(o.Raw()))
				}
			}},
		{ID: "CNF-HOPEN-09", Level: must, Requirements: []string{"TRN-097", "HDR-023", "HDR-024"}, Features: []string{FeatureInvoke},
			Title: "close ends an ordinary session's input after every frame written, without killing the worker; a repeated close writes nothing and kills nothing; the worker exits by itself and wait reports its status 0",
			Run: func(t *T) {
				w := t.session(echoGrant())
				roundTrip(t, w, "req-1")
				alive := func(after string) {
					time.Sleep(100 * time.Millisecond)
					if childproc.Ended(w.hello.Pid) {
						t.Failf("the worker still running "+after+": closing its input ends the session without killing it; a repeated close does nothing"+t.Cite("TRN-097"),
							"the worker ended before it was told to exit; close the worker's standard input only, never signal it")
					}
				}
				id := t.sendCommand(map[string]any{"op": "close"})
				w.expectEnd("close ends an ordinary session at a frame boundary, once the frames written before it are delivered" + t.Cite("TRN-097", "HDR-023"))
				if o := t.await(id); !o.OK {
					t.Failf("close answered with ok"+t.Cite("HDR-023"), string(o.Raw()))
				}
				alive("after close")
				t.call(map[string]any{"op": "close"}) // its outcome is the driver's: the input is already closed
				alive("after a second close")
				w.exitAndEnd(0)
				if o := t.call(map[string]any{"op": "wait"}); !o.OK || o.ExitCode == nil || *o.ExitCode != 0 {
					t.Failf(`{"ok":true,"exit_code":0}: the worker exited by itself with status 0`+t.Cite("TRN-097", "HDR-024"), string(o.Raw()))
				}
			}},
		{ID: "CNF-HOPEN-05", Level: must, Requirements: []string{"HDR-023", "CAN-009", "TRN-043"}, Features: []string{FeatureInvoke, FeatureCancel},
			Title: "close ends a cancellable session with close_session, then ends the input",
			Run: func(t *T) {
				w := cancellableSession(t, echoGrant())
				id := t.sendCommand(map[string]any{"op": "close"})
				w.recv(protocol.TypeCloseSession)
				_ = w.enc.Encode(fakeworker.Relay{CloseOutput: true}) // the worker ends its output (CAN-009)
				w.expectEnd("the input ends after close_session (HDR-023)")
				if o := t.await(id); !o.OK {
					t.Failf("close answered with ok (HDR-023)", string(o.Raw()))
				}
			}},
		{ID: "CNF-HOPEN-03", Level: must, Requirements: []string{"HDR-021", "FRM-005"}, Features: []string{FeatureInvoke},
			Title: "an invoke frame carries the session, request id, tool and payload given",
			Run: func(t *T) {
				w := t.session(echoGrant(), jsonGrant())
				p := jsonPayload(`{"b":[1,2.5,"x"],"a":null}`)
				id := t.invoke("req-7", jsonTool, p)
				inv := w.recv(protocol.TypeInvoke).(protocol.InvokeMessage).Invocation
				if inv.SessionID != w.boot.SessionID || inv.RequestID != "req-7" || inv.Tool != jsonTool ||
					!bytes.Equal(inv.Payload.AppendJSON(nil), p.AppendJSON(nil)) {
					t.Failf(fmt.Sprintf("invoke %s req-7 %s %s", w.boot.SessionID, jsonTool, p.AppendJSON(nil)),
						fmt.Sprintf("invoke %s %s %s %s", inv.SessionID, inv.RequestID, inv.Tool, inv.Payload.AppendJSON(nil)))
				}
				w.send(w.result("req-7", jsonPayload(`{"ok":true}`)))
				if o := t.await(id); !o.OK || string(o.Payload) != `{"format":"json","value":{"ok":true}}` {
					t.Failf(`ok with the payload {"format":"json","value":{"ok":true}}`, string(o.Raw()))
				}
			}},
	}
}

func frameChecks() []*Check {
	seal := func(w *fakeWorker, inv protocol.InvokeMessage) protocol.Message {
		return w.result(inv.Invocation.RequestID, text("pong"))
	}
	c := func(id, title string, reqs []string, answer func(w *fakeWorker, inv protocol.InvokeMessage) []byte) *Check {
		return &Check{ID: id, Level: must, Requirements: append(reqs, "FRM-036", "TRN-003", "TRN-012"), Features: []string{FeatureInvoke},
			Title: title, Run: func(t *T) { hostile(t, title, answer) }}
	}
	return []*Check{
		c("CNF-HFRAME-01", "an answer with a tampered tag is rejected and poisons the session", []string{"FRM-025", "FRM-017", "TRN-013"},
			func(w *fakeWorker, inv protocol.InvokeMessage) []byte {
				return tamper(w.forge(1, protocol.RoleWorker, w.boot.SessionID, seal(w, inv)))
			}),
		c("CNF-HFRAME-02", "an answer sealed under the host's role is rejected", []string{"FRM-008"},
			func(w *fakeWorker, inv protocol.InvokeMessage) []byte {
				return w.forge(1, protocol.RoleHost, w.boot.SessionID, seal(w, inv))
			}),
		c("CNF-HFRAME-03", "an answer with an out-of-order sequence is rejected", []string{"FRM-026"},
			func(w *fakeWorker, inv protocol.InvokeMessage) []byte {
				return w.forge(2, protocol.RoleWorker, w.boot.SessionID, seal(w, inv))
			}),
		c("CNF-HFRAME-04", "an answer for another session is rejected", []string{"FRM-027"},
			func(w *fakeWorker, inv protocol.InvokeMessage) []byte {
				m := protocol.ResultMessage{Result: protocol.ToolResult{ProtocolVersion: protocol.ProtocolVersion,
					SessionID: "other-session", RequestID: inv.Invocation.RequestID, Payload: text("pong")}}
				return w.forge(1, protocol.RoleWorker, "other-session", m)
			}),
		withReason(c("CNF-HFRAME-05", "an answer line over 1 MiB in bytes, though of fewer than 1 Mi characters, is rejected", []string{"FRM-003", "FRM-032"},
			func(w *fakeWorker, inv protocol.InvokeMessage) []byte {
				return append(overLongText(jsonline.MaxLineBytes+1), '\n')
			}), "the 1 MiB cap is enforced by impl/jsonline, which the driver's fault switch does not alter; the nopoison "+
			"fault fails this check only when its second invoke wins the race against the supervised transport's kill "+
			"of the worker, so it cannot be relied on"),
		c("CNF-HFRAME-06", "an answer without a line feed before the end of the stream is rejected", []string{"FRM-034"},
			func(w *fakeWorker, inv protocol.InvokeMessage) []byte {
				line := w.forge(1, protocol.RoleWorker, w.boot.SessionID, seal(w, inv))
				_ = w.enc.Encode(fakeworker.Relay{Write: line[:len(line)-1], CloseOutput: true})
				return nil
			}),
		c("CNF-HFRAME-07", "a garbage answer line is rejected", []string{"FRM-002"},
			func(w *fakeWorker, inv protocol.InvokeMessage) []byte { return []byte("not json at all\n") }),
		c("CNF-HFRAME-10", "an authentic answer of another kind than result is rejected and poisons the session", []string{"TRN-013"},
			func(w *fakeWorker, inv protocol.InvokeMessage) []byte {
				m := protocol.CancellationResultMessage{Result: protocol.WorkerCancellationResult{ProtocolVersion: protocol.ProtocolVersion,
					SessionID: w.boot.SessionID, CancellationID: "cancel-1", RequestID: inv.Invocation.RequestID, Tool: inv.Invocation.Tool,
					Outcome: protocol.OutcomeAcknowledged}}
				return w.forge(1, protocol.RoleWorker, w.boot.SessionID, m)
			}),
		{ID: "CNF-HFRAME-11", Level: must, Requirements: []string{"TRN-014", "HDR-023"}, Features: []string{FeatureInvoke},
			Title: "close after a failed exchange (an answer with a tampered tag) writes no frame: it ends the worker's input",
			Run: func(t *T) {
				w := t.session(echoGrant())
				id := t.invoke("req-1", echoTool, text("ping"))
				w.recv(protocol.TypeInvoke)
				w.write(tamper(w.forge(1, protocol.RoleWorker, w.boot.SessionID, w.result("req-1", text("pong")))))
				t.expectError(id, "the host rejects an answer with a tampered tag"+t.Cite("FRM-025"))
				id = t.sendCommand(map[string]any{"op": "close"})
				w.expectEnd("close discards the failed session's transport, writing nothing" + t.Cite("TRN-014", "HDR-023"))
				t.await(id)
			}},
		{ID: "CNF-HFRAME-08", Level: must, Requirements: []string{"FRM-026", "FRM-036"}, Features: []string{FeatureInvoke},
			Title: "a replayed sequence is rejected and poisons the session, even when the rest of the answer is right for the request",
			Run: func(t *T) {
				w := t.session(echoGrant())
				id := t.invoke("req-1", echoTool, text("ping"))
				w.recv(protocol.TypeInvoke)
				line := w.forge(1, protocol.RoleWorker, w.boot.SessionID, w.result("req-1", text("pong")))
				w.write(line)
				if o := t.await(id); !o.OK {
					t.Failf("the first answer accepted", string(o.Raw()))
				}
				id = t.invoke("req-2", echoTool, text("ping"))
				w.recv(protocol.TypeInvoke)
				// Sequence 1 again, correctly tagged, answering req-2: only the sequence rule refuses it.
				w.write(w.forge(1, protocol.RoleWorker, w.boot.SessionID, w.result("req-2", text("pong"))))
				t.expectError(id, "the host rejects a second answer at sequence 1")
				id = t.invoke("req-3", echoTool, text("ping"))
				t.expectError(id, "an invocation on the poisoned session fails"+t.Cite("TRN-012"))
				w.expectSilence(150*time.Millisecond, "the channel is poisoned after the replay")
			}},
	}
}

// tamper changes one hex digit of the tag of a frame line into another one.
func tamper(line []byte) []byte {
	i := bytes.LastIndex(line, []byte(`"`)) - 1
	line[i] ^= 1 // a hex digit becomes another one
	if line[i] > 'f' || (line[i] > '9' && line[i] < 'a') {
		line[i] = '0'
	}
	return line
}

// withReason sets the reason why no fault of the reference driver reliably fails c.
func withReason(c *Check, reason string) *Check {
	c.Unreachable = reason
	return c
}

func resultChecks() []*Check {
	c := func(id, title string, reqs []string, grant protocol.CapabilityGrant, input protocol.ToolPayload,
		answer func(w *fakeWorker, inv protocol.InvokeMessage) protocol.Message) *Check {
		return &Check{ID: id, Level: must, Requirements: append(reqs, "AUZ-021"), Features: []string{FeatureInvoke}, Title: title,
			Run: func(t *T) {
				w := t.session(grant)
				id := t.invoke("req-1", grant.Tool, input)
				inv := w.recv(protocol.TypeInvoke).(protocol.InvokeMessage)
				w.send(answer(w, inv))
				t.expectError(id, "the host validates the result against the invocation")
			}}
	}
	return []*Check{
		c("CNF-HRESULT-01", "a result for an unknown request id is rejected", nil, echoGrant(), text("ping"),
			func(w *fakeWorker, inv protocol.InvokeMessage) protocol.Message {
				return w.result("req-99", text("pong"))
			}),
		c("CNF-HRESULT-02", "a text result for a JSON grant is rejected", nil, jsonGrant(), jsonPayload(`{}`),
			func(w *fakeWorker, inv protocol.InvokeMessage) protocol.Message { return w.result("req-1", text("{}")) }),
		c("CNF-HRESULT-03", "a result over the grant's max_output_bytes is rejected", nil, echoGrant(), text("ping"),
			func(w *fakeWorker, inv protocol.InvokeMessage) protocol.Message {
				return w.result("req-1", text(strings.Repeat("x", 65)))
			}),
		c("CNF-HRESULT-04", "a JSON result nested deeper than allowed is rejected", []string{"ENC-021"}, jsonGrant(), jsonPayload(`{}`),
			func(w *fakeWorker, inv protocol.InvokeMessage) protocol.Message {
				return w.result("req-1", jsonPayload(strings.Repeat("[", 70)+strings.Repeat("]", 70)))
			}),
		{ID: "CNF-HRESULT-05", Level: must, Requirements: []string{"AUZ-023"}, Features: []string{FeatureInvoke},
			Title: "a second result for an answered request id is rejected",
			Run: func(t *T) {
				w := t.session(echoGrant())
				roundTrip(t, w, "req-1")
				w.send(w.result("req-1", text("again")))
				// The host may stop the worker before the fake worker relays the invoke for req-2.
				id := t.invoke("req-2", echoTool, text("ping"))
				t.expectError(id, "the host refuses the repeated result for req-1")
			}},
		{ID: "CNF-HRESULT-06", Level: must, Requirements: []string{"HDR-021", "HDR-022"}, Features: []string{FeatureInvoke},
			Title: "an invocation the manifest does not grant fails with Denied and sends no frame",
			Run: func(t *T) {
				w := t.session(echoGrant())
				id := t.invoke("req-1", "conf.unknown", text("x"))
				if o := t.expectError(id, "the host refuses the ungranted tool"); o.Error != "Denied" {
					t.Failf(`error kind "Denied" (HDR-022)`, o.Error)
				}
				w.expectSilence(150*time.Millisecond, "the host authorizes before it sends")
				roundTrip(t, w, "req-2")
			}},
	}
}

// durableTool is the tool of the durable checks.
const durableTool = "conf.durable.record"

func durableGrant() protocol.CapabilityGrant { return protocol.JSONGrant(durableTool) }

// dispatchCommand sends a dispatch command without waiting.
func (t *T) dispatch(requestID, key string, p protocol.ToolPayload) uint64 {
	return t.sendCommand(map[string]any{"op": "dispatch", "request_id": requestID, "tool": durableTool, "key": key,
		"payload": rawJSON(p.AppendJSON(nil))})
}

// operationResult answers a dispatch with status.
func (w *fakeWorker) operationResult(req protocol.OperationDispatchRequest, key string, status protocol.OperationStatus) protocol.Message {
	return protocol.OperationResultMessage{Result: protocol.OperationReconcileResult{ProtocolVersion: protocol.ProtocolVersion,
		SessionID: w.boot.SessionID, RequestID: req.RequestID, Tool: req.Tool, OperationKey: key, Status: status}}
}

const unreachableOpValidation = "the operation result is validated by impl/transport's one-shot transport and impl/authorizer, " +
	"which the driver's fault switch does not alter; they have their own tests"

func durableChecks() []*Check {
	done := protocol.Succeeded(jsonPayload(`{"value":1}`))
	return []*Check{
		{ID: "CNF-HDURABLE-01", Level: must, Requirements: []string{"HDR-026"}, Features: []string{FeatureInvoke, FeatureDurable},
			Title: "a dispatch carries the operation key, tool and payload given, and the worker's status is the outcome",
			Run: func(t *T) {
				w := t.session(durableGrant())
				id := t.dispatch("req-1", "op-1", jsonPayload(`{"value":1}`))
				req := w.recv(protocol.TypeDispatchOperation).(protocol.DispatchOperationMessage).Request
				if req.OperationKey != "op-1" || req.Tool != durableTool || req.RequestID != "req-1" || req.SessionID != w.boot.SessionID ||
					string(req.Payload.AppendJSON(nil)) != `{"format":"json","value":{"value":1}}` {
					t.Failf("dispatch_operation req-1 op-1 "+durableTool, conformance.Clip(string(protocol.DispatchOperationMessage{Request: req}.AppendJSON(nil)), 300))
				}
				w.send(w.operationResult(req, "op-1", done))
				if o := t.await(id); !o.OK || string(o.Status) != string(done.AppendJSON(nil)) {
					t.Failf("ok with the status "+string(done.AppendJSON(nil)), string(o.Raw()))
				}
			}},
		{ID: "CNF-HDURABLE-02", Level: must, Requirements: []string{"AUZ-022"}, Features: []string{FeatureInvoke, FeatureDurable},
			Title: "an operation result bound to another operation key is rejected", Unreachable: unreachableOpValidation,
			Run: func(t *T) {
				w := t.session(durableGrant())
				id := t.dispatch("req-1", "op-1", jsonPayload(`{"value":1}`))
				req := w.recv(protocol.TypeDispatchOperation).(protocol.DispatchOperationMessage).Request
				w.send(w.operationResult(req, "op-2", done))
				t.expectError(id, "the host refuses a result for another operation")
			}},
		{ID: "CNF-HDURABLE-03", Level: must, Requirements: []string{"TRN-113", "TRN-022"}, Features: []string{FeatureInvoke, FeatureDurable},
			Title: "a session carries one durable exchange: a second dispatch on it fails without a frame",
			Run: func(t *T) {
				w := t.session(durableGrant())
				id := t.dispatch("req-1", "op-1", jsonPayload(`{"value":1}`))
				req := w.recv(protocol.TypeDispatchOperation).(protocol.DispatchOperationMessage).Request
				w.send(w.operationResult(req, "op-1", done))
				t.await(id)
				id = t.dispatch("req-2", "op-2", jsonPayload(`{"value":2}`))
				t.expectError(id, "the second exchange is refused")
				w.expectSilence(150*time.Millisecond, "the one-shot session is consumed")
			}},
		{ID: "CNF-HDURABLE-05", Level: must, Requirements: []string{"TRN-023", "HDR-026"}, Features: []string{FeatureInvoke, FeatureDurable},
			Title: "a durable exchange the host refuses itself, or one whose answer does not open (sealed under the host's role), spends the session's exchange: a later dispatch on it fails without a frame",
			Run: func(t *T) {
				w := t.session(durableGrant())
				id := t.sendCommand(map[string]any{"op": "dispatch", "request_id": "req-1", "tool": "conf.unknown", "key": "op-1",
					"payload": rawJSON(jsonPayload(`{"value":1}`).AppendJSON(nil))})
				t.expectError(id, "the host refuses a dispatch of a tool the manifest does not grant"+t.Cite("TRN-113"))
				w.expectSilence(100*time.Millisecond, "a dispatch the host refuses is refused before any frame"+t.Cite("TRN-113"))
				id = t.dispatch("req-2", "op-2", jsonPayload(`{"value":2}`))
				t.expectError(id, "a dispatch after the host refused one on the session fails: the refusal poisoned the one-shot transport"+t.Cite("TRN-023"))
				w.expectSilence(150*time.Millisecond, "no dispatch_operation after a host-side refusal: the session's one exchange is spent"+t.Cite("TRN-023", "HDR-026"))
				t.RenewDeadline()
				w = t.session(durableGrant())
				id = t.dispatch("req-1", "op-1", jsonPayload(`{"value":1}`))
				req := w.recv(protocol.TypeDispatchOperation).(protocol.DispatchOperationMessage).Request
				w.write(w.forge(1, protocol.RoleHost, w.boot.SessionID, w.operationResult(req, "op-1", done)))
				t.expectError(id, "the host rejects an answer sealed under its own role"+t.Cite("FRM-008"))
				id = t.dispatch("req-2", "op-2", jsonPayload(`{"value":2}`))
				t.expectError(id, "a dispatch after a failed exchange on the session fails: the failure poisoned the one-shot transport"+t.Cite("TRN-023"))
				w.expectSilence(150*time.Millisecond, "no dispatch_operation after a failed exchange: the session's one exchange is spent"+t.Cite("TRN-023", "HDR-026"))
			}},
		{ID: "CNF-HDURABLE-04", Level: must, Requirements: []string{"RUN-187", "TRN-113", "HDR-027", "FRM-041"}, Features: []string{FeatureInvoke, FeatureDurable},
			Title: "after a worker dies mid-dispatch, recovery reconciles the same operation key under a fresh session, never dispatching again",
			Run: func(t *T) {
				first := t.session(durableGrant())
				id := t.dispatch("req-1", "op-1", jsonPayload(`{"value":1}`))
				first.recv(protocol.TypeDispatchOperation)
				first.exit(1)
				if o := t.await(id); o.OK {
					t.Failf("an error: the worker died without answering", string(o.Raw()))
				}
				second := t.session(durableGrant())
				if second.boot.SessionID == first.boot.SessionID || second.boot.Key.Equal(first.boot.Key) {
					t.Failf("a fresh session and key for the recovery", "the dead session's")
				}
				id = t.sendCommand(map[string]any{"op": "reconcile", "request_id": "req-2", "tool": durableTool, "key": "op-1"})
				req := second.recv(protocol.TypeReconcileOperation).(protocol.ReconcileOperationMessage).Request
				if req.OperationKey != "op-1" || req.Tool != durableTool {
					t.Failf("reconcile_operation of op-1", req.OperationKey+" "+req.Tool)
				}
				second.send(protocol.ReconciledOperationMessage{Result: protocol.OperationReconcileResult{ProtocolVersion: protocol.ProtocolVersion,
					SessionID: req.SessionID, RequestID: req.RequestID, Tool: req.Tool, OperationKey: req.OperationKey, Status: done}})
				if o := t.await(id); !o.OK || string(o.Status) != string(done.AppendJSON(nil)) {
					t.Failf("ok with the reconciled status", string(o.Raw()))
				}
			}},
	}
}

const unreachableCoordinator = "the rule is enforced by impl/transport's cancellation coordinator and impl/authorizer, " +
	"which the driver's fault switch does not alter; they have their own tests, one per state and message"

// cancellable starts a multiplexed session for the slow tool and begins req-1 on it; it returns
// the worker and the invoke it saw.
func cancellable(t *T) (*fakeWorker, protocol.ToolInvocation) {
	w := cancellableSession(t, echoGrant())
	id := t.sendCommand(map[string]any{"op": "begin", "request_id": "req-1", "tool": echoTool, "payload": rawJSON(text("slow").AppendJSON(nil))})
	inv := w.recv(protocol.TypeInvoke).(protocol.InvokeMessage).Invocation
	if o := t.await(id); !o.OK {
		t.Failf("begin answered with ok"+t.Cite("HDR-028"), string(o.Raw()))
	}
	return w, inv
}

// cancellableSession starts a multiplexed session with grants and returns its worker once the
// session is open.
func cancellableSession(t *T, grants ...protocol.CapabilityGrant) *fakeWorker {
	return cancellableSessionWith(t, nil, grants...)
}

// cancellableSessionWith is cancellableSession with the fake-worker arguments extra; with
// "--child" it checks that the fake worker started its child.
func cancellableSessionWith(t *T, extra []string, grants ...protocol.CapabilityGrant) *fakeWorker {
	m := t.manifest(grants...)
	id := t.sendCommand(t.startCommand(m, map[string]any{"cancellable": true}, extra...))
	w := t.acceptWorker("the driver starts the given worker command" + t.Cite("HDR-020"))
	if slices.Contains(extra, "--child") && w.hello.Child == 0 {
		t.Internal(fmt.Errorf("the fake worker could not start its child"))
	}
	w.state.Kind = protocol.CancellableSession
	w.recv(protocol.TypeOpenSession)
	if o := t.await(id); !o.OK {
		t.Failf("start answered with ok", string(o.Raw()))
	}
	return w
}

// cancelRequest sends a cancel command for req-1 and returns the cancel frame the worker saw.
func cancelRequest(t *T, w *fakeWorker, cancellationID string) (uint64, protocol.WorkerCancellationRequest) {
	id := t.sendCommand(map[string]any{"op": "cancel", "request_id": "req-1", "cancellation_id": cancellationID})
	req := w.recv(protocol.TypeCancel).(protocol.CancelMessage).Request
	return id, req
}

// disposition answers a cancel.
func (w *fakeWorker) disposition(req protocol.WorkerCancellationRequest, o protocol.WorkerCancellationOutcome) protocol.Message {
	return protocol.CancellationResultMessage{Result: protocol.WorkerCancellationResult{ProtocolVersion: protocol.ProtocolVersion,
		SessionID: req.SessionID, CancellationID: req.CancellationID, RequestID: req.RequestID, Tool: req.Tool, Outcome: o}}
}

func (t *T) finish() driver.Outcome {
	return t.call(map[string]any{"op": "finish", "request_id": "req-1"})
}

func cancelChecks() []*Check {
	needs := []string{FeatureInvoke, FeatureCancel}
	return []*Check{
		{ID: "CNF-HCANCEL-01", Level: must, Requirements: []string{"TRN-042", "TRN-046", "TRN-052", "HDR-028"}, Features: needs,
			Title: "a cancel names the running invocation and the cancellation id given; an acknowledgement cancels it",
			Run: func(t *T) {
				w, inv := cancellable(t)
				id, req := cancelRequest(t, w, "cancel-1")
				if req.CancellationID != "cancel-1" || req.RequestID != inv.RequestID || req.Tool != inv.Tool || req.SessionID != inv.SessionID {
					t.Failf("cancel cancel-1 of req-1 "+echoTool, fmt.Sprintf("cancel %s of %s %s", req.CancellationID, req.RequestID, req.Tool))
				}
				w.send(w.disposition(req, protocol.OutcomeAcknowledged))
				if o := t.await(id); !o.OK || o.Disposition != "acknowledged" {
					t.Failf(`disposition "acknowledged"`, string(o.Raw()))
				}
				if o := t.finish(); !o.OK || !o.Cancelled {
					t.Failf(`finish {"ok":true,"cancelled":true}`, string(o.Raw()))
				}
			}},
		{ID: "CNF-HCANCEL-02", Level: must, Requirements: []string{"AUZ-016", "TRN-042"}, Features: needs, Unreachable: unreachableCoordinator,
			Title: "one cancel per target: a second cancel of the same invocation fails without a frame",
			Run: func(t *T) {
				w, _ := cancellable(t)
				id, req := cancelRequest(t, w, "cancel-1")
				w.send(w.disposition(req, protocol.OutcomeUnsupported))
				t.await(id)
				id = t.sendCommand(map[string]any{"op": "cancel", "request_id": "req-1", "cancellation_id": "cancel-2"})
				t.expectError(id, "a second cancel of req-1 is refused")
				w.expectSilence(150*time.Millisecond, "one cancel per target (AUZ-016)")
			}},
		{ID: "CNF-HCANCEL-03", Level: must, Requirements: []string{"AUZ-019", "TRN-045", "TRN-051", "TRN-053", "TRN-075"}, Features: needs,
			Title: "a result that wins the race is kept: too_late, and the result is the outcome",
			Run: func(t *T) {
				w, _ := cancellable(t)
				id, req := cancelRequest(t, w, "cancel-1")
				w.send(w.result("req-1", text("done")))
				w.send(w.disposition(req, protocol.OutcomeTooLate))
				if o := t.await(id); !o.OK || o.Disposition != "too_late" {
					t.Failf(`disposition "too_late"`, string(o.Raw()))
				}
				if o := t.finish(); !o.OK || o.Cancelled || string(o.Payload) != string(text("done").AppendJSON(nil)) {
					t.Failf(`finish with the result "done"`, string(o.Raw()))
				}
			}},
		{ID: "CNF-HCANCEL-04", Level: must, Requirements: []string{"AUZ-019", "TRN-057"}, Features: needs, Unreachable: unreachableCoordinator,
			Title: "an acknowledgement after the result is rejected",
			Run: func(t *T) {
				w, _ := cancellable(t)
				id, req := cancelRequest(t, w, "cancel-1")
				w.send(w.result("req-1", text("done")))
				w.send(w.disposition(req, protocol.OutcomeAcknowledged))
				t.expectError(id, "the host refuses an acknowledgement that follows the result")
			}},
		{ID: "CNF-HCANCEL-05", Level: must, Requirements: []string{"AUZ-020", "TRN-055"}, Features: needs, Unreachable: unreachableCoordinator,
			Title: "a result after an acknowledgement is rejected and stops the session",
			Run: func(t *T) {
				w, _ := cancellable(t)
				id, req := cancelRequest(t, w, "cancel-1")
				w.send(w.disposition(req, protocol.OutcomeAcknowledged))
				t.await(id)
				t.finish()
				w.send(w.result("req-1", text("late")))
				time.Sleep(100 * time.Millisecond)
				id = t.sendCommand(map[string]any{"op": "begin", "request_id": "req-2", "tool": echoTool, "payload": rawJSON(text("x").AppendJSON(nil))})
				t.expectError(id, "the session stopped at the late result")
				w.expectSilence(150*time.Millisecond, "no invoke on a stopped session")
			}},
		{ID: "CNF-HCANCEL-06", Level: must, Requirements: []string{"TRN-054", "AUZ-019"}, Features: needs,
			Title: "unsupported leaves the invocation running: its later result is the outcome",
			Run:   func(t *T) { afterUnsupported(t, nil) }},
	}
}

func deadlineChecks() []*Check {
	return []*Check{
		{ID: "CNF-HDEADLINE-01", Level: must, Requirements: []string{"RUN-200", "TRN-110", "TRN-094", "TRN-095", "HDR-022", "HDR-054"}, Features: []string{FeatureInvoke},
			Title: "a worker that never answers is contained within the deadline, reported Indeterminate: its whole process group is gone when the outcome comes",
			Run: func(t *T) {
				w := t.childSession()
				start := time.Now()
				id := t.invoke("req-1", echoTool, text("ping"))
				w.recv(protocol.TypeInvoke)
				o := t.awaitUntil(id, start.Add(deadlineMS*time.Millisecond+time.Second))
				if o.OK || o.Error != "Indeterminate" {
					t.Failf(`error "Indeterminate" within the deadline`, string(o.Raw()))
				}
				w.expectGone("the worker and its child gone once the deadline's outcome came: contained, not only reported (RUN-200, TRN-094)")
			}},
		{ID: "CNF-HDEADLINE-02", Level: must, Requirements: []string{"TRN-094", "TRN-096"}, Features: []string{FeatureInvoke},
			Title: "an elapsed deadline kills the worker's whole process group",
			Run: func(t *T) {
				w := t.childSession()
				id := t.invoke("req-1", echoTool, text("ping"))
				w.recv(protocol.TypeInvoke)
				t.expectError(id, "the deadline elapses")
				w.expectGone("the worker and its child gone after the deadline")
			}},
		{ID: "CNF-HDEADLINE-03", Level: must, Requirements: []string{"TRN-110", "TRN-012"}, Features: []string{FeatureInvoke},
			Title: "after an elapsed deadline the session is unusable: a late answer is never accepted",
			Run: func(t *T) {
				w := t.session(echoGrant())
				id := t.invoke("req-1", echoTool, text("ping"))
				w.recv(protocol.TypeInvoke)
				t.expectError(id, "the deadline elapses")
				w.send(w.result("req-1", text("late")))
				id = t.invoke("req-2", echoTool, text("ping"))
				t.expectError(id, "an invocation after the deadline fails")
				w.expectSilence(150*time.Millisecond, "the session ended with the deadline")
			}},
	}
}
