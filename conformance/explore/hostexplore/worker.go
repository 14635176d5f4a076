package hostexplore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/splashv5/conform/conformance/fakeworker"
	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/bootstrap"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/internal/childproc"
)

// lineEvent is a line the host wrote to a fake worker, or the error that ended its input.
type lineEvent struct {
	line []byte
	err  error
}

// worker is the runner's side of one fake worker process: its report, its session as a real
// worker holds it, and the host's lines it relays.
type worker struct {
	index  int
	conn   net.Conn
	enc    *json.Encoder
	hello  fakeworker.Hello
	boot   bootstrap.Bootstrap
	auth   *protocol.Authenticator // worker role
	lines  chan lineEvent
	frames int
	opened bool
	// state decides what a real worker accepts (protocol.WorkerState.Admit).
	state protocol.WorkerState
	// authz is the session's authorizer as the host library keeps it, fed the invocations the
	// commands ask for: what the host must send and must refuse (AUZ-005 to AUZ-011).
	authz *authorizer.SessionAuthorizer
	// tokens are the authorizations of the invocations begun, for their cancellations';
	// slotKept says that the last one kept an identity for its cancellation (TRN-112).
	tokens   map[string]authorizer.AuthorizedInvocation
	slotKept bool
	// durable says that the session's one durable exchange was sent (TRN-113).
	durable bool
	// poisoned names the failed exchange after which the host must send no frame.
	poisoned string
	// ended says that the runner made the fake worker exit, selfExit with which status
	// (nil when it cannot be told, as after a crash in the middle of a line); inputEnded that
	// the host closed its input; waited that a wait reported its end.
	ended, inputEnded, waited bool
	selfExit                  *int
	mu                        sync.Mutex // one relay command at a time
}

// accept reads the fake worker's report and bootstrap from conn.
func accept(conn net.Conn, index int, until time.Time) (*worker, error) {
	w := &worker{index: index, conn: conn, enc: json.NewEncoder(conn), lines: make(chan lineEvent, 64),
		state: protocol.WorkerState{Kind: protocol.BaselineSession}}
	br := bufio.NewReader(conn)
	_ = conn.SetReadDeadline(until)
	line, err := br.ReadBytes('\n')
	if err != nil || json.Unmarshal(line, &w.hello) != nil {
		return w, fmt.Errorf("no report from the fake worker (%v): the driver did not run the given command line", err)
	}
	if w.boot, err = bootstrap.Read(br); err != nil {
		return w, fmt.Errorf("no valid private-pipe bootstrap: %w", err)
	}
	_ = conn.SetReadDeadline(time.Time{})
	if w.auth, err = w.boot.WorkerAuthenticator(canonjson.Preserve); err != nil {
		return w, fmt.Errorf("no usable session key in the bootstrap: %w", err)
	}
	go func() {
		r := jsonline.NewReader(br)
		for {
			line, err := r.ReadLine()
			w.lines <- lineEvent{line: bytes.Clone(line), err: err}
			if err != nil {
				return
			}
		}
	}()
	return w, nil
}

// frameError is a host frame that a real worker refuses, or that breaks an invariant of the
// frames' order: the violation it is and what came.
type frameError struct {
	name, observed string
}

// open verifies a host line as a real worker would (FRM-025, FRM-026, FRM-005, TRN-011,
// WRK-022): under the session's key, in sequence, canonical, and admitted by the worker's
// rule table in its session's kind and state. The rules are protocol.WorkerState's.
func (w *worker) open(line []byte) (protocol.Frame, *frameError) {
	w.frames++
	f, err := w.auth.Open(line)
	switch {
	case errors.Is(err, protocol.ErrUnexpectedSequence):
		return f, &frameError{"frame-verifies", fmt.Sprintf("host frame %d out of sequence: %v", w.frames, err)}
	case err != nil:
		return f, &frameError{"frame-verifies", fmt.Sprintf("host frame %d does not verify: %v", w.frames, err)}
	}
	if !bytes.Equal(f.AppendJSON(nil), line) {
		return f, &frameError{"frame-verifies", fmt.Sprintf("host frame %d is not canonical", w.frames)}
	}
	typ := f.Message.Type()
	if !w.opened {
		if typ != protocol.TypeOpenSession {
			return f, &frameError{"frame-admitted", fmt.Sprintf("%s as the first frame, not open_session", typ)}
		}
		w.opened = true
		return f, nil
	}
	if r := w.state.Admit(typ); r != protocol.Accepted {
		return f, &frameError{"frame-admitted", fmt.Sprintf("%s, which a worker in a %s session rejects with %s", typ, w.state.Kind, r)}
	}
	return f, nil
}

// seal returns the line of m sealed as the worker's next frame.
func (w *worker) seal(m protocol.Message) []byte {
	_, line, err := w.auth.Seal(m)
	if err != nil {
		return nil
	}
	return append(line, '\n')
}

// write relays raw bytes to the host.
func (w *worker) write(p []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.enc.Encode(fakeworker.Relay{Write: p})
}

// exit ends the fake worker with status code and waits, briefly, until its process is gone;
// known says that a wait must report code.
func (w *worker) exit(code int, known bool) {
	w.mu.Lock()
	_ = w.enc.Encode(fakeworker.Relay{Exit: code, Exiting: true})
	w.mu.Unlock()
	w.ended = true
	if known {
		w.selfExit = &code
	}
	until := time.Now().Add(2 * time.Second)
	for !childproc.Ended(w.hello.Pid) && time.Now().Before(until) {
		time.Sleep(2 * time.Millisecond)
	}
}

// gone reports whether the fake worker and the child it started in its process group have
// both ended, waiting at most d: a contained worker's whole group is gone.
func (w *worker) gone(d time.Duration) bool {
	until := time.Now().Add(d)
	for childproc.Alive(w.hello.Pid) || w.hello.Child != 0 && childproc.Alive(w.hello.Child) {
		if time.Now().After(until) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// dying reports whether the fake worker's process ends within d.
func (w *worker) dying(d time.Duration) bool {
	until := time.Now().Add(d)
	for !childproc.Ended(w.hello.Pid) {
		if time.Now().After(until) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
	return true
}

// stop kills the fake worker's process group and hangs up.
func (w *worker) stop() {
	if w.hello.Pgid > 1 && w.hello.Pgid != syscall.Getpgrp() {
		_ = childproc.KillGroup(w.hello.Pgid)
	}
	_ = childproc.Kill(w.hello.Pid)
	_ = childproc.Kill(w.hello.Child)
	_ = w.conn.Close()
}
