//go:build linux

package transport

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/splashv5/conform/impl/bootstrap"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/internal/childproc"
)

// Process is a Supervisor that runs a worker command as the leader of its own process group
// (TRN-093 to TRN-096). StartProcess generates a fresh session key from crypto/rand, starts
// the worker and writes the private-pipe bootstrap on its standard input; the key never
// appears in arguments, environment, output or errors. An armed invocation deadline that
// elapses kills the whole process group with SIGKILL; the process is then reaped, and the
// invocation is reported as DeadlineElapsed, which a SupervisedSession turns into an
// indeterminate outcome, never a cancellation.
//
// The group is only ever signalled while its leader has not been reaped, so a recycled
// process id is never hit. A Process is safe for concurrent use.
type Process struct {
	sessionID string
	clock     Clock
	cmd       *exec.Cmd
	pid       int
	stdin     *os.File // host's write end of the worker's standard input
	stdout    *os.File // host's read end of the worker's standard output
	auth      *protocol.Authenticator
	exited    chan struct{} // closed once the worker has been reaped
	state     *os.ProcessState

	mu           sync.Mutex
	gone         bool // the leader exited; the group must not be signalled any more
	forced       bool // this supervisor killed the group
	armed        SupervisionToken
	last         SupervisionToken
	timer        Timer
	deadlineHit  bool
	sessionTimer Timer
	sessionHit   bool
	released     bool
	inputClosed  bool // CloseInput closed the host's write end of the worker's standard input
}

// StartProcess starts the worker of cfg and writes its bootstrap (TRN-093). On any failure
// after the process started, the process group is killed and reaped before the error is
// returned.
func StartProcess(cfg ProcessConfig) (*Process, error) {
	if err := protocol.ValidateToken(protocol.FieldSessionID, cfg.SessionID); err != nil {
		return nil, err
	}
	mode := cfg.Mode
	if mode == 0 {
		mode = canonjson.Preserve
	}
	clock := cfg.Clock
	if clock == nil {
		clock = SystemClock{}
	}
	key, err := protocol.GenerateSessionKey()
	if err != nil {
		return nil, err
	}
	defer key.Close()
	auth, err := protocol.NewAuthenticator(cfg.SessionID, key, protocol.RoleHost, mode, cfg.AuthOptions...)
	if err != nil {
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		auth.Close()
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		auth.Close()
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd := exec.Command(cfg.Path, cfg.Args...)
	cmd.Env, cmd.Dir = cfg.Env, cfg.Dir
	cmd.Stdin, cmd.Stdout = inR, outW
	if cfg.Stderr != nil {
		cmd.Stderr = cfg.Stderr
	}
	childproc.SetGroup(cmd)
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		auth.Close()
		inW.Close()
		outR.Close()
		return nil, err
	}
	p := &Process{sessionID: cfg.SessionID, clock: clock, cmd: cmd, pid: cmd.Process.Pid,
		stdin: inW, stdout: outR, auth: auth, exited: make(chan struct{})}
	go p.reap()
	if cfg.SessionDeadline > 0 {
		p.mu.Lock()
		p.sessionTimer = clock.AfterFunc(cfg.SessionDeadline, p.sessionExpired)
		p.mu.Unlock()
	}
	if err := bootstrap.Write(inW, cfg.SessionID, key); err != nil {
		auth.Close()
		_, _ = p.Terminate()
		return nil, err
	}
	return p, nil
}

// SessionID returns the session the worker serves.
func (p *Process) SessionID() string { return p.sessionID }

// Pid returns the worker's process id, which is also its process group id.
func (p *Process) Pid() int { return p.pid }

// HostAuthenticator returns the host-role authenticator for the worker's session, built from
// the same key as the bootstrap. The caller takes it over (for example by passing it to
// NewMultiplexed) and closes it when the session ends.
func (p *Process) HostAuthenticator() *protocol.Authenticator { return p.auth }

// Output returns the worker's standard output, from which the host reads worker frames.
func (p *Process) Output() io.Reader { return p.stdout }

// Input returns the worker's standard input, to which the host writes host frames; the
// bootstrap has already been written.
func (p *Process) Input() io.Writer { return p.stdin }

// CloseInput closes the host's write end of the worker's standard input, so that the worker
// reads end of input (TRN-097). Closed at a frame boundary, this is how a worker session that
// cannot be cancelled, such as a durable operation session, ends cleanly. Frames already
// written stay readable by the worker. It is idempotent: later calls, and calls after Terminate
// or Wait released the pipes, do nothing and return nil. Writing to Input afterwards fails.
func (p *Process) CloseInput() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inputClosed || p.released {
		return nil
	}
	p.inputClosed = true
	return p.stdin.Close()
}

// Exited returns a channel that is closed once the worker has been reaped.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// BeginInvocation arms an invocation deadline of d (TRN-094). Errors: ErrInvalidDeadline for
// d ≤ 0; ErrSupervisionArmed while another invocation is armed.
func (p *Process) BeginInvocation(d time.Duration) (SupervisionToken, error) {
	if d <= 0 {
		return 0, &Error{Kind: ErrInvalidDeadline}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.armed != 0 {
		return 0, ErrSupervisionArmed
	}
	p.last++
	token := p.last
	p.armed, p.deadlineHit = token, false
	p.timer = p.clock.AfterFunc(d, func() { p.invocationExpired(token) })
	return token, nil
}

// FinishInvocation disarms the deadline of t and reports who won (TRN-095): the invocation
// deadline elapsed (the group was killed; the worker is reaped before this returns), the
// session deadline elapsed, the worker ended for another reason, or none of these
// (FinishCompleted). Error: ErrUnknownSupervision when t is not the armed token.
func (p *Process) FinishInvocation(t SupervisionToken) (Finish, error) {
	p.mu.Lock()
	if t == 0 || t != p.armed {
		p.mu.Unlock()
		return Finish{}, ErrUnknownSupervision
	}
	p.armed = 0
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	hit, sessionHit, ended := p.deadlineHit, p.sessionHit, p.gone || p.forced
	p.mu.Unlock()
	switch {
	case hit:
		return Finish{Verdict: FinishDeadlineElapsed, Termination: p.await()}, nil
	case sessionHit:
		return Finish{Verdict: FinishSessionDeadlineElapsed, Termination: p.await()}, nil
	case ended:
		return Finish{Verdict: FinishTerminated, Termination: p.await()}, nil
	}
	return Finish{Verdict: FinishCompleted}, nil
}

// Terminate kills the worker's process group (unless the worker already ended), reaps it,
// closes the host's ends of its pipes and reports how it ended (TRN-096). It may be called more
// than once.
func (p *Process) Terminate() (Termination, error) {
	p.mu.Lock()
	p.stopTimersLocked()
	err := p.killLocked()
	p.mu.Unlock()
	t := p.await()
	p.release()
	return t, err
}

// Wait waits until the worker ends by itself (after a graceful close), reaps it, closes the
// host's ends of its pipes and reports how it ended.
func (p *Process) Wait() Termination {
	t := p.await()
	p.mu.Lock()
	p.stopTimersLocked()
	p.mu.Unlock()
	p.release()
	return t
}

// invocationExpired is the invocation deadline's timer callback.
func (p *Process) invocationExpired(token SupervisionToken) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.armed != token {
		return // disarmed first: the invocation won
	}
	p.deadlineHit = true
	_ = p.killLocked()
}

// sessionExpired is the session deadline's timer callback.
func (p *Process) sessionExpired() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gone {
		return
	}
	p.sessionHit = true
	_ = p.killLocked()
}

// killLocked sends SIGKILL to the worker's process group while its leader is unreaped.
func (p *Process) killLocked() error {
	if p.gone {
		return nil
	}
	p.forced = true
	return childproc.KillGroup(p.pid)
}

func (p *Process) stopTimersLocked() {
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	if p.sessionTimer != nil {
		p.sessionTimer.Stop()
		p.sessionTimer = nil
	}
}

// reap waits for the leader to exit without reaping it, forbids further group signals, and
// only then reaps it, so a signal can never reach a recycled process id.
func (p *Process) reap() {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, p.pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	p.mu.Lock()
	p.gone = true
	p.mu.Unlock()
	_ = p.cmd.Wait()
	p.state = p.cmd.ProcessState
	close(p.exited)
}

// await waits for the reaper and reports the termination.
func (p *Process) await() Termination {
	<-p.exited
	p.mu.Lock()
	t := Termination{Forced: p.forced}
	p.mu.Unlock()
	exit := childproc.Classify(p.state)
	switch {
	case exit.Exited:
		t.Exited, t.ExitCode = true, exit.Code
	case exit.Signaled:
		t.Signal = exit.Signal
	}
	return t
}

// release closes the host's pipe ends once.
func (p *Process) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.released {
		return
	}
	p.released = true
	if !p.inputClosed {
		p.inputClosed = true
		p.stdin.Close()
	}
	p.stdout.Close()
}
