package host

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/fakeworker"
	"github.com/splashv5/conform/impl/bootstrap"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/internal/childproc"
)

// fakeEvent is a line the host wrote to the fake worker, or the error that ended its input.
type fakeEvent struct {
	line []byte
	err  error
}

// fakeWorker is the runner's side of one fake worker process: what it reported and the host's
// traffic it relays.
type fakeWorker struct {
	t       *T
	index   int
	conn    net.Conn
	enc     *json.Encoder
	hello   fakeworker.Hello
	boot    bootstrap.Bootstrap
	bootRaw []byte
	auth    *protocol.Authenticator // worker role
	lines   chan fakeEvent
	frames  int // host frames received
	// opened says that open_session was received; state is the session as a real worker
	// holds it, which decides what it accepts (protocol.WorkerState.Admit).
	opened bool
	state  protocol.WorkerState
	// watch follows the start of the line being relayed (fed signals new bytes), for a frame
	// the fake worker holds unfinished (fakeworker.HoldFlag).
	watchMu sync.Mutex
	watch   fakeworker.LineWatch
	fed     chan struct{}
}

// captureReader keeps the bytes read through it.
type captureReader struct {
	r   io.Reader
	buf bytes.Buffer
}

func (c *captureReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.buf.Write(p[:n])
	return n, err
}

// tapReader feeds what it reads to the worker's line watch.
type tapReader struct {
	r io.Reader
	w *fakeWorker
}

func (t tapReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.w.watchMu.Lock()
	t.w.watch.Feed(p[:n])
	t.w.watchMu.Unlock()
	select {
	case t.w.fed <- struct{}{}:
	default:
	}
	return n, err
}

// acceptWorker waits for the next fake worker to connect and reads its report and bootstrap.
func (t *T) acceptWorker(why string) *fakeWorker {
	var conn net.Conn
	select {
	case conn = <-t.side.Conns:
	case <-time.After(time.Until(t.Deadline)):
		t.Failf(why, "the driver started no worker within the time limit")
	}
	w := &fakeWorker{t: t, index: len(t.workers) + 1, conn: conn, enc: json.NewEncoder(conn), lines: make(chan fakeEvent, 64),
		fed: make(chan struct{}, 1), state: protocol.WorkerState{Kind: protocol.BaselineSession}}
	t.workers = append(t.workers, w)
	br := bufio.NewReader(conn)
	_ = conn.SetReadDeadline(t.Deadline)
	line, err := br.ReadBytes('\n')
	if err != nil || json.Unmarshal(line, &w.hello) != nil {
		t.Failf("the fake worker's report", fmt.Sprintf("no report (%v): the driver did not run the given command line unchanged"+t.Cite("HDR-020"), err))
	}
	t.Logf("worker %d: started, pid %d, argv %q", w.index, w.hello.Pid, w.hello.Argv)
	capture := &captureReader{r: br}
	w.boot, err = bootstrap.Read(capture)
	w.bootRaw = capture.buf.Bytes()
	if err != nil {
		t.Failf("a valid private-pipe bootstrap on the worker's standard input"+t.Cite("BOOT-001", "BOOT-016"),
			fmt.Sprintf("%v after %d bytes %s", err, len(w.bootRaw), conformance.Clip(hex.EncodeToString(w.bootRaw), 120)))
	}
	_ = conn.SetReadDeadline(time.Time{})
	t.Logf("worker %d: bootstrap of %d bytes for session %s", w.index, len(w.bootRaw), w.boot.SessionID)
	w.auth, err = w.boot.WorkerAuthenticator(canonjson.Preserve)
	if err != nil {
		t.Failf("a usable session key in the bootstrap"+t.Cite("FRM-038", "FRM-039"), err.Error())
	}
	go func() {
		r := jsonline.NewReader(tapReader{br, w})
		for {
			line, err := r.ReadLine()
			line = bytes.Clone(line) // the reader reuses its buffer
			w.lines <- fakeEvent{line: line, err: err}
			if err != nil {
				return
			}
		}
	}()
	return w
}

// next returns the next line the host wrote, or nil with the reason when its input ended or
// wait passed.
func (w *fakeWorker) next(wait time.Duration) ([]byte, string) {
	wait = min(wait, time.Until(w.t.Deadline))
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case ev := <-w.lines:
		if ev.err != nil {
			w.lines <- ev // keep the end for later readers
			return nil, "the host closed the worker's input (" + ev.err.Error() + ")"
		}
		return ev.line, ""
	case <-timer.C:
		return nil, fmt.Sprintf("no frame within %v", wait.Round(time.Millisecond))
	}
}

// recvHeld waits at most wait for a compensate_operation frame of the host. When the fake
// worker holds it unfinished (fakeworker.HoldFlag) it returns the binding the frame's start names; when
// the frame arrives whole it returns it, judged as recv judges it, with held false.
func (w *fakeWorker) recvHeld(wait time.Duration) (b fakeworker.HeldBinding, whole protocol.Message, held bool) {
	t := w.t
	timer := time.NewTimer(min(wait, time.Until(t.Deadline)))
	defer timer.Stop()
	for {
		w.watchMu.Lock()
		start := bytes.Clone(w.watch.Held())
		w.watchMu.Unlock()
		if start != nil {
			b, err := fakeworker.DecodeHeld(start)
			if err != nil {
				t.Failf("a compensate_operation frame that starts as the canonical encoding writes it"+t.Cite("FRM-005"),
					fmt.Sprintf("%v: %s", err, conformance.Clip(string(start), 300)))
			}
			t.Logf("worker %d: stopped reading in a compensate_operation frame: its binding arrived, the host is still writing its payload", w.index)
			return b, nil, true
		}
		select {
		case ev := <-w.lines:
			if ev.err != nil {
				w.lines <- ev
				t.Failf("a "+string(protocol.TypeCompensateOperation)+" frame", "the host closed the worker's input ("+ev.err.Error()+")")
			}
			f := w.open(ev.line)
			if f.Message.Type() != protocol.TypeCompensateOperation {
				t.Failf("a "+string(protocol.TypeCompensateOperation)+" frame", string(f.Message.Type()))
			}
			return fakeworker.HeldBinding{}, f.Message, false
		case <-w.fed:
		case <-timer.C:
			t.Failf("a "+string(protocol.TypeCompensateOperation)+" frame", "no frame within "+wait.Round(time.Millisecond).String())
		}
	}
}

// recv reads the next host frame, which must verify, be canonical and carry a want message.
func (w *fakeWorker) recv(want protocol.MessageType) protocol.Message {
	return w.recvWithin(want, time.Until(w.t.Deadline), nil)
}

// recvWithin is recv that waits at most wait (and never past the check's deadline); when no
// frame comes it calls none (if set) before the check fails.
func (w *fakeWorker) recvWithin(want protocol.MessageType, wait time.Duration, none func()) protocol.Message {
	t := w.t
	wait = min(wait, time.Until(t.Deadline))
	line, why := w.next(wait)
	if line == nil && none != nil {
		none()
	}
	if line == nil {
		t.Failf("a "+string(want)+" frame", why)
	}
	f := w.open(line)
	if f.Message.Type() != want {
		t.Failf("a "+string(want)+" frame", string(f.Message.Type()))
	}
	return f.Message
}

// open verifies a host frame line as a real worker would: it verifies under the session's key,
// is canonical, and carries a message that a worker accepts in its session's kind and state
// (WRK-012, WRK-022, chapter 14) with the tenant scope given in start (HDR-043, JRN-008). The
// rules are protocol.WorkerState's, the reference worker's own.
func (w *fakeWorker) open(line []byte) protocol.Frame {
	t := w.t
	w.frames++
	next := w.auth.NextIncoming()
	f, err := w.auth.Open(line)
	if errors.Is(err, protocol.ErrUnexpectedSequence) {
		t.Failf(fmt.Sprintf("host frame %d at sequence %d: frames in order, and a pre-sealed frame (a step's dispatch, a compensation, "+
			"its recovery) sent as it was sealed, never sealed again"+t.Cite("FRM-026", "TRN-101"), w.frames, next),
			fmt.Sprintf("%v: %s", err, conformance.Clip(string(line), 300)))
	}
	if err != nil {
		t.Failf(fmt.Sprintf("host frame %d verifies under the bootstrap's key"+t.Cite("FRM-025", "TRN-011"), w.frames),
			fmt.Sprintf("%v: %s", err, conformance.Clip(string(line), 300)))
	}
	if canon := f.AppendJSON(nil); !bytes.Equal(canon, line) {
		t.Failf("a canonical host frame"+t.Cite("FRM-005"), fmt.Sprintf("%s\n  canonical: %s", conformance.Clip(string(line), 300), conformance.Clip(string(canon), 300)))
	}
	t.Logf("worker %d: received #%d %s", w.index, f.Sequence, f.Message.Type())
	typ := f.Message.Type()
	if !w.opened {
		if typ != protocol.TypeOpenSession {
			t.Failf("open_session as the first frame"+t.Cite("TRN-011", "WRK-012"), string(typ))
		}
		w.opened = true
		return f
	}
	if r := w.state.Admit(typ); r != protocol.Accepted {
		fix := "send it only where a worker accepts it"
		if typ == protocol.TypeCloseSession && w.state.Kind == protocol.BaselineSession {
			fix = "end an ordinary session by closing the worker's input, with no frame"
		}
		t.Failf(fmt.Sprintf("a frame a worker accepts in a %s session"+t.Cite("WRK-022", "CAN-008", "CAN-010", "CAN-022", "CAN-023"), w.state.Kind),
			fmt.Sprintf("%s, which a worker rejects with %s and ends the session: %s", typ, r, fix))
	}
	switch m := f.Message.(type) {
	case protocol.InvokeMessage:
		w.state.Active = w.state.Kind == protocol.CancellableSession
	case protocol.CompensateOperationMessage:
		if err := protocol.ValidateJournalScope(m.Request.TenantScope, workerScope); err != nil {
			t.Failf("a compensation bound to the worker's journal scope "+workerScope+" given in start"+t.Cite("HDR-043", "JRN-008"), err.Error())
		}
		w.durableRequest(typ, m.Request.RequestID)
	case protocol.DispatchOperationMessage:
		w.durableRequest(typ, m.Request.RequestID)
	case protocol.ReconcileOperationMessage:
		w.durableRequest(typ, m.Request.RequestID)
	}
	return f
}

// durableRequest fails the check when the durable frame of type typ carries a request id other
// than the one of the command that sent it (HDR-026, HDR-027, HDR-041 to HDR-043): a recovery
// sent under an earlier request id (the step's it recovers) is a replay of that request to a
// journal that keys answers by request id, and its answer cannot be told from the earlier one.
func (w *fakeWorker) durableRequest(typ protocol.MessageType, requestID string) {
	t := w.t
	if t.durable.op == "" || requestID == t.durable.requestID {
		return
	}
	t.Failf(fmt.Sprintf("%s with the request id %q of the %s command that sent it: "+
		"a durable frame carries its command's request_id, a recovery the recover's, never the step's it recovers"+
		t.Cite("HDR-026", "HDR-027", "HDR-041", "HDR-042", "HDR-043"), typ, t.durable.requestID, t.durable.op),
		fmt.Sprintf("the request id %q", requestID))
}

// sent keeps the session state of a cancellable session after the worker sent m: a result
// completes the invocation (a later cancel is answered too_late), an acknowledgement ends it
// with no target left (CAN-014 to CAN-016).
func (w *fakeWorker) sent(m protocol.Message) {
	switch m := m.(type) {
	case protocol.ResultMessage:
		w.state.Active, w.state.Target = false, true
	case protocol.CancellationResultMessage:
		if m.Result.Outcome == protocol.OutcomeAcknowledged {
			w.state.Active, w.state.Target = false, false
		}
	}
}

// expectEnd waits for the end of the worker's input at a frame boundary; a frame instead is
// judged as a real worker would judge it, and fails the check.
func (w *fakeWorker) expectEnd(why string) {
	line, reason := w.next(time.Until(w.t.Deadline))
	if line == nil {
		if !strings.Contains(reason, "closed") {
			w.t.Failf("the end of the worker's input: "+why, reason)
		}
		return
	}
	// The frame is named, not judged: whatever it is, the host should have written none.
	w.frames++
	got := fmt.Sprintf("host frame %d, which does not verify: %s", w.frames, conformance.Clip(string(line), 200))
	if f, err := w.auth.Open(line); err == nil {
		got = fmt.Sprintf("host frame %d, a %s frame", w.frames, f.Message.Type())
	}
	w.t.Failf("the end of the worker's input without a frame: "+why, got+"; write no frame here, end the worker's input")
}

// expectSilence fails the check when the host writes another frame within d.
func (w *fakeWorker) expectSilence(d time.Duration, why string) {
	line, _ := w.next(d)
	if line != nil {
		w.t.Failf("no further frame: "+why, "the host sent "+conformance.Clip(string(line), 200))
	}
}

// expectQuiet fails the check when the host writes a frame within d or ends the worker's input
// meanwhile: a refusal that changes nothing leaves the session as it was.
func (w *fakeWorker) expectQuiet(d time.Duration, why string) {
	line, reason := w.next(d)
	switch {
	case line != nil:
		w.t.Failf("no frame, the worker's input left open: "+why, "the host sent "+conformance.Clip(string(line), 200))
	case strings.Contains(reason, "closed"):
		w.t.Failf("no frame, the worker's input left open: "+why, reason)
	}
}

// closeOutput ends the fake worker's output (the host reads the end of its stream); the fake
// worker stays alive.
func (w *fakeWorker) closeOutput() {
	w.t.Logf("worker %d: closes its output", w.index)
	_ = w.enc.Encode(fakeworker.Relay{CloseOutput: true})
}

// write relays raw bytes to the host.
func (w *fakeWorker) write(p []byte) {
	w.t.Logf("worker %d: sends %s", w.index, conformance.Clip(fmt.Sprintf("%q", p), 200))
	if err := w.enc.Encode(fakeworker.Relay{Write: p}); err != nil {
		w.t.Logf("worker %d: gone (%v)", w.index, err)
	}
}

// send seals m as the worker's next frame and writes it as one line.
func (w *fakeWorker) send(m protocol.Message) {
	_, line, err := w.auth.Seal(m)
	if err != nil {
		w.t.Internal(err)
	}
	w.sent(m)
	w.write(append(line, '\n'))
}

// forge returns a frame line for m at seq with a correct tag over role and session sid.
func (w *fakeWorker) forge(seq uint64, role protocol.Role, sid string, m protocol.Message) []byte {
	tag, err := protocol.ComputeTag(w.boot.Key, sid, role, seq, m)
	if err != nil {
		w.t.Internal(err)
	}
	return append(protocol.Frame{Sequence: seq, Message: m, Tag: tag}.AppendJSON(nil), '\n')
}

// exit ends the fake worker with status code.
func (w *fakeWorker) exit(code int) { _ = w.enc.Encode(fakeworker.Relay{Exit: code, Exiting: true}) }

// exitAndEnd is exit followed by waiting, at most exitGrace, until the fake worker's process
// has ended, so that a wait the check sends next judges the driver and not how fast a loaded
// machine runs the fake worker to its exit.
func (w *fakeWorker) exitAndEnd(code int) {
	w.exit(code)
	until := time.Now().Add(min(exitGrace, time.Until(w.t.Deadline)))
	for !childproc.Ended(w.hello.Pid) && time.Now().Before(until) {
		time.Sleep(2 * time.Millisecond)
	}
}

// exitGrace bounds how long exitAndEnd waits for the fake worker's process to end.
const exitGrace = 3 * time.Second

// result is a worker result for the invocation of the host.
func (w *fakeWorker) result(requestID string, p protocol.ToolPayload) protocol.Message {
	return protocol.ResultMessage{Result: protocol.ToolResult{ProtocolVersion: protocol.ProtocolVersion,
		SessionID: w.boot.SessionID, RequestID: requestID, Payload: p}}
}

// stop kills the fake worker's process group and hangs up.
func (w *fakeWorker) stop() {
	if w.hello.Pgid > 1 && w.hello.Pgid != syscall.Getpgrp() {
		_ = childproc.KillGroup(w.hello.Pgid)
	}
	_ = childproc.Kill(w.hello.Child)
	_ = w.conn.Close()
}

// keyEncodings returns the encodings of a session key the runner looks for in output.
func keyEncodings(key *protocol.SessionKey) []string {
	raw, err := key.ExposeSecret()
	if err != nil {
		return nil
	}
	b := raw[:]
	return []string{string(b), hex.EncodeToString(b), strings.ToUpper(hex.EncodeToString(b)),
		base64.StdEncoding.EncodeToString(b), base64.RawStdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b)}
}

// leaks reports where an encoding of the key appears among texts (name → text).
func leaks(key *protocol.SessionKey, texts map[string]string) string {
	for _, enc := range keyEncodings(key) {
		for name, text := range texts {
			if strings.Contains(text, enc) {
				return name
			}
		}
	}
	return ""
}
