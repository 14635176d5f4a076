package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"time"

	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/internal/childproc"
)

// maxDriverStderr bounds the driver's standard error kept for the report and the key scan.
const maxDriverStderr = 64 << 10

// outcomeLine is one outcome of the driver (HDR-003).
type outcomeLine struct {
	ID      uint64          `json:"id"`
	OK      bool            `json:"ok"`
	Error   string          `json:"error,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
	Status  json.RawMessage `json:"status,omitempty"`
	// Disposition and Cancelled are the outcomes of cancel and finish (feature cancel).
	Disposition string   `json:"disposition,omitempty"`
	Cancelled   bool     `json:"cancelled,omitempty"`
	Features    []string `json:"features,omitempty"`
	ExitCode    *int     `json:"exit_code,omitempty"`
	raw         []byte
}

// driverEvent is a line of the driver's output, or the error that ended it.
type driverEvent struct {
	line []byte
	err  error
}

// driver is one running host driver process, the leader of its own process group.
type driver struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan driverEvent
	nextID uint64
	exited chan struct{}

	stderr *childproc.Capture // the first maxDriverStderr bytes
	output *childproc.Capture // every outcome line read, bounded like stderr, for the key scan
}

// driverWaitDelay bounds how long reaping a dead driver waits for its standard error to end.
const driverWaitDelay = 2 * time.Second

// startDriver starts the driver command in its own process group.
func startDriver(argv []string, env []string) (*driver, error) { return startDriverIn(argv, env, "") }

// startDriverIn is startDriver with working directory dir ("" is the runner's).
func startDriverIn(argv []string, env []string, dir string) (*driver, error) {
	d := &driver{lines: make(chan driverEvent, 16), exited: make(chan struct{}),
		stderr: childproc.NewCapture(maxDriverStderr, 0), output: childproc.NewCapture(maxDriverStderr, 0)}
	d.cmd = exec.Command(argv[0], argv[1:]...)
	d.cmd.Env = env
	d.cmd.Dir = dir
	childproc.SetGroup(d.cmd)
	d.cmd.Stderr = d.stderr
	// A worker the driver started, in a process group of its own, may still hold the driver's
	// standard error once the driver is dead; reaping the driver then waits at most this long
	// for it before it closes the pipe (HDR-031).
	d.cmd.WaitDelay = driverWaitDelay
	var err error
	if d.stdin, err = d.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := d.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		r := jsonline.NewReader(out)
		for {
			line, err := r.ReadLine()
			line = bytes.Clone(line) // the reader reuses its buffer
			if err == nil {
				_, _ = d.output.Write(append(line, '\n'))
			}
			d.lines <- driverEvent{line: line, err: err}
			if err != nil {
				// Drain the rest so that a flooding driver never blocks on a full pipe.
				_, _ = io.Copy(io.Discard, out)
				return
			}
		}
	}()
	go func() { _ = d.cmd.Wait(); close(d.exited) }()
	return d, nil
}

// send writes one command line and returns its id.
func (d *driver) send(c map[string]any) (uint64, error) {
	d.nextID++
	c["id"] = d.nextID
	line, err := encodeCommand(c)
	if err != nil {
		return 0, err
	}
	_, err = d.stdin.Write(line)
	return d.nextID, err
}

// encodeCommand returns the command line of c, ended by a line feed. Payloads stay canonical
// text (HDR-047): nothing is escaped that the canonical encoding leaves as it is.
func encodeCommand(c map[string]any) ([]byte, error) {
	var line bytes.Buffer
	enc := json.NewEncoder(&line)
	enc.SetEscapeHTML(false)
	err := enc.Encode(c)
	return line.Bytes(), err
}

// errDriverSilent reports that no outcome came before the deadline.
var errDriverSilent = errors.New("no outcome line")

// await returns the outcome of command id, waiting until deadline.
func (d *driver) await(id uint64, deadline time.Time) (outcomeLine, error) {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		select {
		case ev := <-d.lines:
			return ev.outcome(id)
		case <-timer.C:
			return outcomeLine{}, errDriverSilent
		}
	}
}

// outcome decodes the event as the outcome of command id.
func (ev driverEvent) outcome(id uint64) (outcomeLine, error) {
	if ev.err != nil {
		return outcomeLine{}, fmt.Errorf("the driver's output ended: %w", ev.err)
	}
	var o outcomeLine
	if err := json.Unmarshal(ev.line, &o); err != nil {
		return outcomeLine{}, fmt.Errorf("the driver wrote a line that is not an outcome: %q", clip(string(ev.line), 200))
	}
	o.raw = ev.line
	if o.ID != id {
		return outcomeLine{}, fmt.Errorf("the driver answered command %d while command %d was pending", o.ID, id)
	}
	return o, nil
}

// kill kills the driver's whole process group and reaps the driver.
func (d *driver) kill() {
	d.killGroup(time.Time{})
	<-d.exited
}

// killGroup kills the driver's whole process group and waits, at most until deadline, for the
// driver itself to be dead, not reaped: the workers it started may hold its standard error
// open, and reaping waits for that to end.
func (d *driver) killGroup(deadline time.Time) {
	_ = d.stdin.Close()
	_, _ = childproc.KillGroupAndWait(d.cmd.Process.Pid, d.exited, deadline)
}

// texts returns the kept standard error and output of the driver.
func (d *driver) texts() (stderr, output string) {
	return d.stderr.Head(), d.output.Head()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
