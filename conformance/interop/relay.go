package interop

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/splashv5/conform/impl/bootstrap"
	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/internal/childproc"
)

// RelayCommand is the argument that selects the relay mode of splash-conform.
const RelayCommand = "relay"

// relayHello is the relay's first report: its process identity and the worker's.
type relayHello struct {
	Pid       int    `json:"pid"`
	Pgid      int    `json:"pgid"`
	WorkerPid int    `json:"worker_pid,omitempty"`
	Session   string `json:"session,omitempty"`
}

// relayEvent is one report of the relay to the runner, one JSON line on the side channel.
type relayEvent struct {
	Hello  *relayHello `json:"hello,omitempty"`
	Record *Record     `json:"record,omitempty"`
	// Stream is a deviation of a stream rather than of a frame (bootstrap, line bounds).
	Stream *Deviation `json:"stream,omitempty"`
	// Ended names the side whose stream ended cleanly at a line boundary.
	Ended Side `json:"ended,omitempty"`
	// Cut says that the relay killed the worker instead of relaying its answer.
	Cut bool `json:"cut,omitempty"`
	// Dropped says that the relay kept a host line from the worker and ended its input
	// (relayOrder.Drop).
	Dropped bool `json:"dropped,omitempty"`
	// Armed acknowledges an order (Cut or Drop): the relay will act on the next answer or host
	// line. The runner waits for it before it lets the host send the line the order is about.
	Armed bool `json:"armed,omitempty"`
	// Exit is the worker's exit status (-1 when a signal ended it). The relay reports it before
	// its own output ends, so that a host that kills the relay's group as soon as the output
	// ends (TRN-087, TRN-096) cannot lose it.
	Exit *int `json:"exit,omitempty"`
	// Signal names the signal that ended the worker, with Exit -1.
	Signal string `json:"signal,omitempty"`
	// Diagnostic is the end of the worker's standard error, at most maxDiagnostic bytes, with
	// Exit.
	Diagnostic string `json:"diagnostic,omitempty"`
	// Error is a failure of the relay itself.
	Error string `json:"error,omitempty"`
}

// relayOrder is an instruction of the runner to the relay.
type relayOrder struct {
	// Cut kills the worker at its next answer line, which is then not relayed: the host loses
	// an answer whose effect happened.
	Cut bool `json:"cut,omitempty"`
	// Drop keeps the host's next line from the worker and ends the worker's input instead: the
	// worker ends its session cleanly, never having seen the frame the host wrote.
	Drop bool `json:"drop,omitempty"`
}

// reporter writes events to the runner; a lost runner is ignored (the relay goes on relaying,
// and the runner's teardown ends it).
type reporter struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func (r *reporter) send(ev relayEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_ = r.enc.Encode(ev)
}

// RelayMain is the relay (args after "relay"): SOCKET KIND SCOPE -- WORKER-COMMAND [ARGS...]
// (IOP-001). The host starts it in place of the worker. It reads the private-pipe bootstrap
// from its standard input, starts the worker command in its own process group (so that a host
// that kills the relay's group kills the worker too), writes the bootstrap to it, then relays
// every line both ways unchanged, judging each with the wire core and reporting each to the
// runner on the unix socket SOCKET. KIND is the session kind the runner asked for (baseline or
// cancellable), SCOPE the worker's journal scope. The session key is kept in memory only; it
// is never written anywhere but the worker's standard input. The relay exits with the worker's
// status.
func RelayMain(args []string) int {
	if len(args) < 5 || args[3] != "--" {
		fmt.Fprintln(os.Stderr, "usage: splash-conform relay SOCKET KIND SCOPE -- WORKER-COMMAND [ARGS...]")
		return 2
	}
	// A host that stops reading must make a write fail, not kill the relay.
	signal.Ignore(syscall.SIGPIPE)
	sock, scope, worker := args[0], args[2], args[4:]
	kind := protocol.BaselineSession
	if args[1] == protocol.CancellableSession.String() {
		kind = protocol.CancellableSession
	}
	conn, err := net.Dial("unix", sock)
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 2
	}
	rep := &reporter{enc: json.NewEncoder(conn)}
	hello := relayHello{Pid: os.Getpid()}
	hello.Pgid, _ = syscall.Getpgid(0)

	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	var raw bytes.Buffer
	boot, err := bootstrap.Read(io.TeeReader(in, &raw))
	if err != nil {
		rep.send(relayEvent{Hello: &hello})
		rep.send(relayEvent{Stream: &Deviation{Side: HostSide, Rule: "BOOT-001", Detail: "no valid private-pipe bootstrap: " + err.Error()}})
		return 3
	}
	hello.Session = boot.SessionID
	j, err := newJudge(boot.SessionID, boot.Key, scope, kind)
	if err != nil {
		rep.send(relayEvent{Hello: &hello, Error: err.Error()})
		return 3
	}
	defer j.close()

	cmd := exec.Command(worker[0], worker[1:]...)
	toWorker, err := cmd.StdinPipe()
	if err != nil {
		rep.send(relayEvent{Hello: &hello, Error: err.Error()})
		return 2
	}
	fromWorker, err := cmd.StdoutPipe()
	if err != nil {
		rep.send(relayEvent{Hello: &hello, Error: err.Error()})
		return 2
	}
	diag, err := newDiagnostic(cmd)
	if err != nil {
		rep.send(relayEvent{Hello: &hello, Error: err.Error()})
		return 2
	}
	if err := cmd.Start(); err != nil {
		diag.abandon()
		rep.send(relayEvent{Hello: &hello, Error: "the worker command cannot be started: " + err.Error()})
		return 2
	}
	diag.started()
	hello.WorkerPid = cmd.Process.Pid
	rep.send(relayEvent{Hello: &hello})
	_, _ = toWorker.Write(raw.Bytes())
	clear(raw.Bytes())

	var cut sync.Mutex
	cutNext, dropNext := false, false
	go func() { // the runner's orders
		dec := json.NewDecoder(bufio.NewReader(conn))
		for {
			var o relayOrder
			if dec.Decode(&o) != nil {
				return
			}
			cut.Lock()
			cutNext = cutNext || o.Cut
			dropNext = dropNext || o.Drop
			cut.Unlock()
			if o.Cut || o.Drop {
				// The runner waits for this before it lets the host send the line the order is
				// about, so the order cannot lose a race with it.
				rep.send(relayEvent{Armed: true})
			}
		}
	}()

	var mu sync.Mutex // the judge is shared by both directions
	judged := func(side Side, line []byte) {
		mu.Lock()
		rec := j.line(side, line)
		mu.Unlock()
		rep.send(relayEvent{Record: &rec})
	}
	hostDone := make(chan struct{})
	go func() {
		pump(in, toWorker, HostSide, rep, func(line []byte) bool {
			cut.Lock()
			drop := dropNext
			dropNext = false
			cut.Unlock()
			if drop {
				rep.send(relayEvent{Dropped: true})
				return false
			}
			judged(HostSide, line)
			return true
		})
		close(hostDone)
		_ = toWorker.Close()
		_, _ = io.Copy(io.Discard, in) // a host that writes on is not blocked
	}()
	pump(fromWorker, os.Stdout, WorkerSide, rep, func(line []byte) bool {
		cut.Lock()
		drop := cutNext
		cutNext = false
		cut.Unlock()
		if drop {
			_ = cmd.Process.Kill()
			rep.send(relayEvent{Cut: true})
			return false
		}
		judged(WorkerSide, line)
		return true
	})
	// The worker's output ended. Its status is reported before the relay's own output ends: a
	// host may kill the relay's group as soon as it sees that end (TRN-087, TRN-096).
	state, _ := cmd.Process.Wait()
	exit := childproc.Classify(state)
	code, sig := exit.Code, exit.Signal
	rep.send(relayEvent{Exit: &code, Signal: sig, Diagnostic: j.redact(diag.tail())})
	_ = os.Stdout.Close()
	// A host ends the input after the output ended (HDR-023): wait a while for that end, so
	// that the runner learns whether it came.
	select {
	case <-hostDone:
	case <-time.After(hostEndGrace):
	}
	if code < 0 {
		return 128 + int(syscall.SIGKILL)
	}
	return code
}

// hostEndGrace bounds how long the relay waits, once the worker's output ended and its status
// is reported, for the host to end its input before the relay exits.
const hostEndGrace = 1500 * time.Millisecond

// maxDiagnostic bounds the end of the worker's standard error a relay reports.
const maxDiagnostic = 2048

// diagnostic passes the worker's standard error on to the relay's and keeps its last
// maxDiagnostic bytes.
type diagnostic struct {
	r, w *os.File
	kept *childproc.Capture
}

// newDiagnostic gives cmd a standard error pipe whose end the diagnostic keeps.
func newDiagnostic(cmd *exec.Cmd) (*diagnostic, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = w
	kept := childproc.NewCapture(0, maxDiagnostic)
	kept.Tee = os.Stderr
	return &diagnostic{r: r, w: w, kept: kept}, nil
}

// started closes the relay's copy of the write end and copies the pipe until it ends.
func (d *diagnostic) started() {
	_ = d.w.Close()
	go d.kept.Consume(d.r)
}

// abandon closes both ends of a pipe whose worker never started.
func (d *diagnostic) abandon() {
	_ = d.w.Close()
	_ = d.r.Close()
}

// tail returns what the worker wrote last, waiting briefly for a pipe that a child of the
// worker may still hold open.
func (d *diagnostic) tail() string {
	select {
	case <-d.kept.Done():
	case <-time.After(200 * time.Millisecond):
	}
	return d.kept.Tail()
}

// pump relays the lines of src to dst as they are, calling judged for each first (false drops
// the line and ends the pump). It reports a clean end at a line boundary, or a stream
// deviation blamed on side (a line over 1 MiB, not UTF-8 or torn at the end), after which
// that direction ends.
func pump(src io.Reader, dst io.Writer, side Side, rep *reporter, judged func(line []byte) bool) {
	counted := &countingReader{r: src}
	r := jsonline.NewReader(counted)
	var consumed int64
	for {
		line, err := r.ReadLine()
		if err != nil {
			switch {
			case errors.Is(err, jsonline.ErrUnexpectedEndOfStream) && counted.n == consumed:
				rep.send(relayEvent{Ended: side})
			case errors.Is(err, jsonline.ErrUnexpectedEndOfStream):
				rep.send(relayEvent{Stream: &Deviation{Side: side, Rule: "FRM-034", Detail: "the stream ended inside a line"}})
			default:
				rep.send(relayEvent{Stream: &Deviation{Side: side, Rule: "FRM-003", Detail: "a line the relay cannot pass on: " + err.Error()}})
			}
			return
		}
		consumed += int64(len(line)) + 1
		if !judged(line) {
			return
		}
		if _, err := dst.Write(append(line, '\n')); err != nil {
			return
		}
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
