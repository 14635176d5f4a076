// Package driver is the client of the host-driver contract (spec chapter 30) that the host
// and interop suites share: it starts a host driver as the leader of a process group of its
// own, writes command lines, reads outcome lines and keeps bounded excerpts of what the
// driver wrote.
package driver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/internal/childproc"
)

// maxStderr bounds the driver's standard error kept for the report and the key scan.
const maxStderr = 64 << 10

// Outcome is one outcome line of the driver (HDR-003).
type Outcome struct {
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

// Raw returns the outcome line as the driver wrote it.
func (o Outcome) Raw() []byte { return o.raw }

// Event is a line of the driver's output, or the error that ended it.
type Event struct {
	Line []byte
	Err  error
}

// Process is one running host driver, the leader of its own process group.
type Process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan Event
	lastID uint64
	exited chan struct{}

	stderr *childproc.Capture // the first maxStderr bytes
	output *childproc.Capture // every outcome line read, bounded like stderr, for the key scan
}

// waitDelay bounds how long reaping a dead driver waits for its standard error to end.
const waitDelay = 2 * time.Second

// Start starts the driver command argv with environment env in working directory dir ("" is
// the caller's), as the leader of its own process group.
func Start(argv []string, env []string, dir string) (*Process, error) {
	d := &Process{lines: make(chan Event, 16), exited: make(chan struct{}),
		stderr: childproc.NewCapture(maxStderr, 0), output: childproc.NewCapture(maxStderr, 0)}
	d.cmd = exec.Command(argv[0], argv[1:]...)
	d.cmd.Env = env
	d.cmd.Dir = dir
	childproc.SetGroup(d.cmd)
	d.cmd.Stderr = d.stderr
	// A worker the driver started, in a process group of its own, may still hold the driver's
	// standard error once the driver is dead; reaping the driver then waits at most this long
	// for it before it closes the pipe (HDR-031).
	d.cmd.WaitDelay = waitDelay
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
			d.lines <- Event{Line: line, Err: err}
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

// Send writes one command line, setting its id, and returns the id.
func (d *Process) Send(c map[string]any) (uint64, error) {
	d.lastID++
	c["id"] = d.lastID
	line, err := EncodeCommand(c)
	if err != nil {
		return 0, err
	}
	_, err = d.stdin.Write(line)
	return d.lastID, err
}

// SendFor sends command c for the running check v and logs it in v's transcript, each value cut
// at conformance.CommandValueBytes (far more when verbose); a driver that stopped reading
// commands ends the check with CRASH. name names the driver in the verdict ("driver", "host
// driver").
func (d *Process) SendFor(v *conformance.T, name string, c map[string]any, verbose bool) uint64 {
	id, err := d.Send(c)
	if err != nil {
		v.End(conformance.Crash, fmt.Sprintf("the %s stopped reading commands: %v", name, err))
	}
	v.Logf("driver: command %s", conformance.CommandTranscript(c, ValueBound(conformance.CommandValueBytes, verbose)))
	return id
}

// Opened returns d for the running check v, or ends v with FAIL when starting the driver
// (named name, as in SendFor) failed with err.
func Opened(v *conformance.T, name string, d *Process, err error) *Process {
	if err != nil {
		v.End(conformance.Fail, "the "+name+" cannot be started: "+err.Error())
	}
	return d
}

// Hello says hello through call, which sends a command and awaits its outcome, and returns the
// features the driver declares; a hello not answered with ok fails the running check v
// (HDR-010).
func Hello(v *conformance.T, call func(map[string]any) Outcome) []string {
	o := call(map[string]any{"op": "hello"})
	if !o.OK {
		v.Failf("hello answered with ok"+v.Cite("HDR-010"), string(o.Raw()))
	}
	return o.Features
}

// RequireFeatures makes the running check v SKIP (HDR-011) when declared lacks a feature of
// needed; who names the driver in the reason.
func RequireFeatures(v *conformance.T, who string, declared, needed []string) {
	for _, n := range needed {
		if !slices.Contains(declared, n) {
			v.Skipf("%s does not declare the feature %q", who, n)
		}
	}
}

// ValueBound is how many bytes of one value a transcript line shows: n, or far more when
// verbose.
func ValueBound(n int, verbose bool) int {
	if verbose {
		return conformance.CommandValueBytesVerbose
	}
	return n
}

// AcceptFor judges, for the running check v, the outcome of command id that Await returned with
// err: a silent driver ends the check with TIMEOUT, one that exited with CRASH, any other error
// fails it as not what expected says; an outcome is logged, cut at 200 bytes (far more when
// verbose, conformance.OutcomeTranscript).
func (d *Process) AcceptFor(v *conformance.T, name string, id uint64, o Outcome, err error, expected string, verbose bool) Outcome {
	switch {
	case err == ErrSilent:
		v.End(conformance.Timeout, fmt.Sprintf("the %s wrote no outcome for command %d in time", name, id))
	case err != nil:
		select {
		case <-d.Exited():
			v.End(conformance.Crash, "the "+name+" exited: "+err.Error())
		case <-time.After(50 * time.Millisecond):
		}
		v.Failf(expected, err.Error())
	}
	v.Logf("driver: outcome %s", conformance.OutcomeTranscript(o.Raw(), ValueBound(200, verbose)))
	return o
}

// LastID is the id of the last command sent (0 before the first).
func (d *Process) LastID() uint64 { return d.lastID }

// EncodeCommand returns the command line of c, ended by a line feed. Payloads stay canonical
// text (HDR-047): nothing is escaped that the canonical encoding leaves as it is.
func EncodeCommand(c map[string]any) ([]byte, error) {
	var line bytes.Buffer
	enc := json.NewEncoder(&line)
	enc.SetEscapeHTML(false)
	err := enc.Encode(c)
	return line.Bytes(), err
}

// ErrSilent reports that no outcome came before the deadline.
var ErrSilent = errors.New("no outcome line")

// Await returns the outcome of command id, waiting until deadline (ErrSilent when none came);
// an outcome for another command, a line that is not an outcome or the end of the driver's
// output is an error.
func (d *Process) Await(id uint64, deadline time.Time) (Outcome, error) {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		select {
		case ev := <-d.lines:
			return ev.Outcome(id)
		case <-timer.C:
			return Outcome{}, ErrSilent
		}
	}
}

// Lines delivers the driver's output lines, for a caller that reads them along with other
// events; Await reads from the same channel.
func (d *Process) Lines() <-chan Event { return d.lines }

// Outcome decodes the event as the outcome of command id.
func (ev Event) Outcome(id uint64) (Outcome, error) {
	if ev.Err != nil {
		return Outcome{}, fmt.Errorf("the driver's output ended: %w", ev.Err)
	}
	var o Outcome
	if err := json.Unmarshal(ev.Line, &o); err != nil {
		return Outcome{}, fmt.Errorf("the driver wrote a line that is not an outcome: %q", conformance.Clip(string(ev.Line), 200))
	}
	o.raw = ev.Line
	if o.ID != id {
		return Outcome{}, fmt.Errorf("the driver answered command %d while command %d was pending", o.ID, id)
	}
	return o, nil
}

// Exited is closed once the driver process has exited.
func (d *Process) Exited() <-chan struct{} { return d.exited }

// Kill kills the driver's whole process group and reaps the driver.
func (d *Process) Kill() {
	d.KillGroup(time.Time{})
	<-d.exited
}

// KillGroup kills the driver's whole process group and waits, at most until deadline, for the
// driver itself to be dead, not reaped: the workers it started may hold its standard error
// open, and reaping waits for that to end.
func (d *Process) KillGroup(deadline time.Time) {
	_ = d.stdin.Close()
	_, _ = childproc.KillGroupAndWait(d.cmd.Process.Pid, d.exited, deadline)
}

// Texts returns the kept standard error and outcome lines of the driver (each bounded).
func (d *Process) Texts() (stderr, output string) {
	return d.stderr.Head(), d.output.Head()
}

// Pid returns the driver's process id, which is also its process group id.
func (d *Process) Pid() int { return d.cmd.Process.Pid }
