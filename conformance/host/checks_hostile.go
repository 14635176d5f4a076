package host

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/internal/childproc"
)

// hostileChecks catch host bugs that a cooperative worker never shows: a wait that trusts the
// worker to exit, sizes counted in the wrong unit, non-canonical output, and a line limit
// applied only after the whole line was read.
func hostileChecks() []*Check {
	return []*Check{
		{ID: "CNF-HDEADLINE-04", Level: must, Requirements: []string{"HDR-024", "TRN-094", "TRN-096"}, Features: []string{FeatureInvoke},
			Title: "a worker that ignores the end of its input is waited for at most the deadline, then its whole process group is killed",
			Run: func(t *T) {
				w := t.childSession()
				t.call(map[string]any{"op": "close"}) // the fake worker reads the end of its input and stays
				start := time.Now()
				o := t.awaitUntil(t.sendCommand(map[string]any{"op": "wait"}), start.Add(deadlineMS*time.Millisecond+1500*time.Millisecond))
				if !o.OK || o.ExitCode == nil || *o.ExitCode != -1 {
					t.Failf(`{"ok":true,"exit_code":-1} once the deadline passed`+t.Cite("HDR-024"), string(o.Raw()))
				}
				t.Logf("wait answered after %v", time.Since(start).Round(time.Millisecond))
				w.expectGone("the worker and its child gone when wait answered -1 (TRN-094, TRN-096)")
			}},
		{ID: "CNF-HRESULT-07", Level: must, Requirements: []string{"AUZ-021", "AUZ-010", "HDR-021", "HDR-048"}, Features: []string{FeatureInvoke},
			Title: "max_output_bytes counts UTF-8 bytes: a text result of 33 two-byte characters (66 bytes) is rejected under a limit of 64",
			Run: func(t *T) {
				w := t.session(echoGrant()) // max_output_bytes 64
				exact := text(strings.Repeat("é", 32))
				id := t.invoke("req-1", echoTool, text("ping"))
				w.recv(protocol.TypeInvoke)
				w.send(w.result("req-1", exact))
				if o := t.await(id); !o.OK || !bytes.Equal(o.Payload, exact.AppendJSON(nil)) {
					t.Failf("ok for a result of exactly 64 UTF-8 bytes (AUZ-010)", string(o.Raw()))
				}
				id = t.invoke("req-2", echoTool, text("ping"))
				w.recv(protocol.TypeInvoke)
				w.send(w.result("req-2", text(strings.Repeat("é", 33))))
				t.expectError(id, "the host refuses a result of 66 UTF-8 bytes (33 characters, 33 UTF-16 code units) under max_output_bytes 64")
			}},
		{ID: "CNF-HBUDGET-04", Level: must, Requirements: []string{"AUZ-005", "AUZ-010", "HDR-048", "HDR-022"}, Features: []string{FeatureInvoke},
			Title: "max_input_bytes counts UTF-8 bytes: a text of 5 two-byte characters (10 bytes) is Denied without a frame under a limit of 8",
			Run: func(t *T) {
				g := echoGrant()
				g.MaxInputBytes = 8
				w := t.session(g)
				id := t.invoke("req-1", echoTool, text("éééé"))
				if inv := w.recv(protocol.TypeInvoke).(protocol.InvokeMessage).Invocation; inv.RequestID != "req-1" {
					t.Failf("the invoke of req-1", inv.RequestID)
				}
				w.send(w.result("req-1", text("ok")))
				if o := t.await(id); !o.OK {
					t.Failf("ok for an input of exactly 8 UTF-8 bytes (AUZ-010)", string(o.Raw()))
				}
				id = t.invoke("req-2", echoTool, text("ééééé"))
				if o := t.expectError(id, "the host refuses 10 UTF-8 bytes (5 characters, 5 UTF-16 code units) under max_input_bytes 8"); o.Error != "Denied" {
					t.Failf(`error kind "Denied" (HDR-022)`, string(o.Raw()))
				}
				w.expectSilence(150*time.Millisecond, "a refused invocation sends no frame")
			}},
		{ID: "CNF-HOPEN-06", Level: must, Requirements: []string{"FRM-005", "ENC-003", "ENC-005", "ENC-006", "ENC-007", "HDR-021"}, Features: []string{FeatureInvoke},
			Title: "the host seals canonically: keys in code point order (an astral key after U+FF61), lower-case \\u00XX escapes, U+2028 and DEL unescaped",
			Run: func(t *T) {
				w := t.session(jsonGrant())
				p := jsonPayload(`{"\ud83d\ude00":1,"\uff61":2,"a\u001fb":"x\u2028y\u007f\u0000\/\"\\\n"}`)
				id := t.invoke("req-1", jsonTool, p)
				inv := w.recv(protocol.TypeInvoke).(protocol.InvokeMessage).Invocation // recv requires canonical bytes
				if got := inv.Payload.AppendJSON(nil); !bytes.Equal(got, p.AppendJSON(nil)) {
					t.Failf("the payload "+string(p.AppendJSON(nil)), string(got))
				}
				w.send(w.result("req-1", jsonPayload(`{}`)))
				t.await(id)
			}},
		{ID: "CNF-HOPEN-07", Level: must, Requirements: []string{"HDR-053", "HDR-020"}, Features: []string{FeatureInvoke},
			Title: "a new start stops the running worker's process group first, writing it no frame, and the new session works",
			Run: func(t *T) {
				first := t.childSession()
				second := t.session(echoGrant())
				if line, why := first.next(time.Second); line != nil || !strings.Contains(why, "closed") {
					t.Failf("no frame to the replaced worker, then the end of its input (HDR-053)", why+conformance.Clip(string(line), 200))
				}
				first.expectGone("the replaced worker and its child gone once the new start answered (HDR-053)")
				roundTrip(t, second, "req-1")
			}},
		{ID: "CNF-HFRAME-09", Level: must, Requirements: []string{"FRM-003", "FRM-032", "TRN-098"}, Features: []string{FeatureInvoke},
			Title: "an answer line that never ends is refused once it passes 1 MiB, counted in bytes (its text is three-byte characters, fewer than 1 Mi of them), long before the deadline, and the driver stays alive",
			Run: func(t *T) {
				const ms = 6000
				m := t.manifest(echoGrant())
				w, id := t.startWorkerWithin(m, ms)
				w.recv(protocol.TypeOpenSession)
				t.await(id)
				id = t.invoke("req-1", echoTool, text("ping"))
				w.recv(protocol.TypeInvoke)
				start := time.Now()
				// No line feed, and the stream stays open. The line passes 1 MiB by 64 KiB in bytes but
				// holds about a third as many characters: a host that counts characters (or UTF-16
				// code units) never reaches its limit.
				w.write(overLongText(jsonline.MaxLineBytes + 64<<10))
				o := t.awaitUntil(id, start.Add(ms/2*time.Millisecond))
				if o.OK {
					t.Failf("an error: the line passed 1 MiB (FRM-003)", string(o.Raw()))
				}
				t.Logf("refused after %v with %s", time.Since(start).Round(time.Millisecond), o.Error)
				if o := t.call(map[string]any{"op": "hello"}); !o.OK {
					t.Failf("the driver alive and answering after the refusal", string(o.Raw()))
				}
			}},
	}
}

// childSession starts a worker that first starts a child in its process group, and checks its
// open_session and the start outcome.
func (t *T) childSession() *fakeWorker {
	w, id := t.startWorker(t.manifest(echoGrant()), "--child")
	w.recv(protocol.TypeOpenSession)
	if o := t.await(id); !o.OK {
		t.Failf("start answered with ok"+t.Cite("HDR-020"), string(o.Raw()))
	}
	if w.hello.Child == 0 {
		t.Internal(fmt.Errorf("the fake worker could not start its child"))
	}
	return w
}

// expectGone fails the check unless the worker and its child are gone within a second.
func (w *fakeWorker) expectGone(expected string) {
	until := time.Now().Add(time.Second)
	for childproc.Alive(w.hello.Pid) || childproc.Alive(w.hello.Child) {
		if time.Now().After(until) {
			w.t.Failf(expected, fmt.Sprintf("worker alive %v, child alive %v", childproc.Alive(w.hello.Pid), childproc.Alive(w.hello.Child)))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// wideRune is the character of the over-long lines: three UTF-8 bytes, one character, one UTF-16
// code unit, so that a line limit counted in anything but bytes is not reached (FRM-003).
const wideRune = "€"

// overLongText returns at least n bytes of wideRune: a line over the limit in bytes whose
// character count is a third of it.
func overLongText(n int) []byte {
	return bytes.Repeat([]byte(wideRune), (n+len(wideRune)-1)/len(wideRune))
}
