package explore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync/atomic"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/explore/alphabet"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/internal/childproc"
)

// Default timing of one step.
const (
	// DefaultQuiet is how long a step waits for the worker's first answer before it counts the
	// step as silent.
	DefaultQuiet = 60 * time.Millisecond
	// StartQuiet is the least wait for the first answer to the first frame after a process
	// started.
	StartQuiet = 150 * time.Millisecond
	// DefaultAnswerWait bounds the wait for the answer to a symbol that the reference worker
	// always answers or ends the process on: such a step ends as soon as the answer or the end
	// comes, so the bound is paid only by a worker that stays silent.
	DefaultAnswerWait = 2 * time.Second
	// DefaultWordBound bounds one word's run.
	DefaultWordBound = 20 * time.Second
)

// quietSymbols are the symbols the reference worker answers with nothing when they are
// accepted: their step ends after the quiet period. Every other symbol is answered or ends the
// process, and its step ends at the answer.
var quietSymbols = map[alphabet.Name]bool{
	alphabet.OpenBaseline: true, alphabet.OpenCancellable: true, alphabet.OpenAgain: true,
	alphabet.InvokeSlow: true, alphabet.StoreFault: true, alphabet.Restart: true,
}

// opening are the symbols that open a session in a fresh process.
var opening = map[alphabet.Name]bool{alphabet.OpenBaseline: true, alphabet.OpenCancellable: true, alphabet.OpenAgain: true}

// Launcher runs abstract words against fresh worker processes: the process oracle of the
// learner (EXP-006). Each word gets its own scratch directory, so its journal, effect log,
// store fault trigger, storage key and secret source are the word's alone, substituted for the
// worker command's placeholders as the worker suite substitutes them.
type Launcher struct {
	// Command is the worker command, with placeholders.
	Command conformance.WorkerCommand
	// Env is the worker's environment (nil: the runner's).
	Env []string
	// Scope is the journal scope substituted for {scope}.
	Scope string
	// TempDir is the parent of the words' scratch directories ("" : the system's).
	TempDir string
	// Needs are the needs the worker declares; they shape the session's grants.
	Needs []alphabet.Need
	// Mode is the number model the host opens the worker's frames in.
	Mode canonjson.Mode
	// Quiet is how long a step waits for a first answer (0: DefaultQuiet); once a line came, a
	// quarter of it for more lines.
	Quiet time.Duration
	// Bound bounds a word (0: DefaultWordBound).
	Bound time.Duration
	// AnswerWait bounds the wait for an answer (0: DefaultAnswerWait).
	AnswerWait time.Duration

	starts  atomic.Int64
	words   atomic.Int64
	symbols atomic.Int64
}

// Counts returns the processes started, the words run and the symbols sent so far.
func (l *Launcher) Counts() (starts, words, symbols int64) {
	return l.starts.Load(), l.words.Load(), l.symbols.Load()
}

// Trace is what one word did: the abstract output of each step and, for the invariants, the
// bytes every process of the word wrote (standard output and error) and its effect log.
type Trace struct {
	Outputs []alphabet.Output
	// Output is everything the word's processes wrote, bounded.
	Output []byte
	// Effects are the lines of the effect log the word left.
	Effects []string
	// Files are the journal and the effect log the word left, bounded, for the leak judgement.
	Files []byte
	// Secrets are the session and storage keys of the word, for the leak judgement; they never
	// enter a report.
	Secrets [][]byte
}

// maxTraceOutput bounds Trace.Output.
const maxTraceOutput = 4 << 20

// Run runs word in fresh processes and returns the abstract output of each step.
func (l *Launcher) Run(ctx context.Context, word []alphabet.Name) ([]alphabet.Output, error) {
	tr, err := l.Trace(ctx, word, nil)
	if err != nil {
		return nil, err
	}
	return tr.Outputs, nil
}

// proc is one running worker process of a word.
type proc struct {
	cmd    *exec.Cmd
	stdin  *os.File
	lines  chan []byte
	ended  chan struct{} // closed once the output ended and the process was reaped
	exit   alphabet.Exit
	stderr *childproc.Capture
	out    *bytes.Buffer
}

// Trace runs word as Run does; edit, when set, may change the frame line of step k before it
// is written (the fuzzer's mutations), with the session that sealed it.
func (l *Launcher) Trace(ctx context.Context, word []alphabet.Name, edit func(k int, line []byte, s *alphabet.Session) []byte) (*Trace, error) {
	l.words.Add(1)
	l.symbols.Add(int64(len(word)))
	bound := l.Bound
	if bound <= 0 {
		bound = DefaultWordBound
	}
	quiet := l.Quiet
	if quiet <= 0 {
		quiet = DefaultQuiet
	}
	answerWait := l.AnswerWait
	if answerWait <= 0 {
		answerWait = DefaultAnswerWait
	}
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	dir, err := os.MkdirTemp(l.TempDir, "explore-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	values := conformance.PlaceholderValues(dir, l.Scope)
	tr := &Trace{}
	if l.Command.Has(conformance.PlaceholderStorageKey) {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		if err := os.WriteFile(values[conformance.PlaceholderStorageKey], []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
			return nil, err
		}
		tr.Secrets = append(tr.Secrets, key)
	}
	args := l.Command.Expand(values)
	var outBuf bytes.Buffer

	newKey := func() (*protocol.SessionKey, string, error) {
		key, err := protocol.GenerateSessionKey()
		if err != nil {
			return nil, "", err
		}
		raw, err := key.ExposeSecret()
		if err != nil {
			key.Close()
			return nil, "", err
		}
		tr.Secrets = append(tr.Secrets, bytes.Clone(raw[:]))
		clear(raw[:])
		var b [6]byte
		_, _ = rand.Read(b[:])
		return key, "explore-" + hex.EncodeToString(b[:]), nil
	}
	var keys []*protocol.SessionKey
	defer func() {
		for _, k := range keys {
			k.Close()
		}
	}()
	key, sid, err := newKey()
	if err != nil {
		return nil, err
	}
	keys = append(keys, key)
	s, err := alphabet.NewSession(sid, key, l.Mode, l.Needs...)
	if err != nil {
		return nil, err
	}
	p, err := l.start(args, &outBuf)
	if err != nil {
		return nil, err
	}
	defer func() { p.stop() }()
	if err := s.WriteBootstrap(p.stdin); err != nil {
		p.stdin.Close() // the worker ended before reading: its exit shows at the first step
	}

	gone := false
	fresh := true // the next step is the first after a process started
	for k, sym := range word {
		if gone {
			tr.Outputs = append(tr.Outputs, alphabet.Output{Exit: alphabet.Gone})
			continue
		}
		a, err := s.Concretize(sym)
		if err != nil {
			return nil, err
		}
		switch {
		case a.Fault == alphabet.StoreFault:
			// Every journal write of the process fails from now on (PRF-021).
			if err := os.WriteFile(values[conformance.PlaceholderStoreFault], []byte("0\n"), 0o600); err != nil {
				return nil, err
			}
		case a.Fault == alphabet.Restart:
			if p.running() {
				p.stop()
			}
			_ = os.Remove(values[conformance.PlaceholderStoreFault])
			key, sid, err := newKey()
			if err != nil {
				return nil, err
			}
			keys = append(keys, key)
			if err := s.Restart(sid, key, l.Mode); err != nil {
				return nil, err
			}
			if p, err = l.start(args, &outBuf); err != nil {
				return nil, err
			}
			fresh = true
			if err := s.WriteBootstrap(p.stdin); err != nil {
				p.stdin.Close()
			}
		case a.EndInput:
			p.stdin.Close()
		default:
			line := a.Line
			if edit != nil {
				line = edit(k, bytes.Clone(line), s)
			}
			_, _ = p.stdin.Write(append(line, '\n')) // an ended worker refuses it; its exit shows
		}
		wait := quiet
		if !quietSymbols[sym] {
			wait = answerWait
		}
		if fresh && a.Fault != alphabet.Restart && a.Fault != alphabet.StoreFault {
			// A process that just started may take a while to reach its input: a quiet symbol
			// that a fresh worker refuses (anything but an opening) waits long enough for the
			// refusal. An opening is silent in every conforming worker, so it waits only the
			// quiet period; a worker that refuses it after a slow start may see the refusal
			// counted at the next step, which the learner reports as nondeterminism.
			if !opening[sym] {
				wait = max(StartQuiet, wait)
			}
			fresh = false
		}
		obs := p.observe(ctx, wait, quiet/4)
		if a.Fault == alphabet.Restart && obs.Exit == alphabet.Running && len(obs.Lines) == 0 {
			obs = alphabet.Observation{Exit: alphabet.Running}
		}
		out := s.Abstract(obs)
		tr.Outputs = append(tr.Outputs, out)
		gone = out.Exit != alphabet.Running
	}
	if !gone {
		p.stop()
	}
	if outBuf.Len() > maxTraceOutput {
		outBuf.Truncate(maxTraceOutput)
	}
	tr.Output = append(outBuf.Bytes(), []byte(p.stderr.Excerpt())...)
	tr.Effects = readEffects(values[conformance.PlaceholderEffects])
	for _, f := range []string{values[conformance.PlaceholderJournal], values[conformance.PlaceholderEffects]} {
		tr.Files = append(tr.Files, readBoundedFile(f, maxTraceOutput)...)
	}
	return tr, nil
}

// start launches one worker process in its own process group.
func (l *Launcher) start(args []string, out *bytes.Buffer) (*proc, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = l.Env
	childproc.SetGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, lines: make(chan []byte, 64), ended: make(chan struct{}), stderr: childproc.NewCapture(4<<10, 4<<10), out: out}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, &conformance.LaunchError{Err: fmt.Errorf("cannot start worker %q: %w", args[0], err)}
	}
	l.starts.Add(1)
	p.stdin = stdin.(*os.File)
	go func() {
		r := jsonline.NewReader(stdout)
		for {
			line, err := r.ReadLine()
			if err != nil {
				break
			}
			p.lines <- bytes.Clone(line)
		}
		close(p.lines)
		_ = cmd.Wait()
		_ = childproc.KillGroup(cmd.Process.Pid)
		e := childproc.Classify(cmd.ProcessState)
		switch {
		case e.Exited:
			p.exit = alphabet.Exit(e.Code)
		default:
			p.exit = alphabet.Killed
		}
		close(p.ended)
	}()
	return p, nil
}

// running reports whether the process's output is still open.
func (p *proc) running() bool {
	select {
	case <-p.ended:
		return false
	default:
		return true
	}
}

// observe collects what the process does after one input: lines until it is quiet (no first
// line within first, or no further line within settle), or the end of its output and its exit.
func (p *proc) observe(ctx context.Context, first, settle time.Duration) alphabet.Observation {
	obs := alphabet.Observation{Exit: alphabet.Running}
	timer := time.NewTimer(first)
	defer timer.Stop()
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				<-p.ended
				obs.Exit = p.exit
				return obs
			}
			p.out.Write(line)
			p.out.WriteByte('\n')
			obs.Lines = append(obs.Lines, line)
			timer.Reset(settle)
		case <-timer.C:
			return obs
		case <-ctx.Done():
			obs.Exit = alphabet.Hung
			return obs
		}
	}
}

// stop kills the process's group (a restart replaces a process as a crash would, and a word
// whose outputs are all known needs nothing more from it) and drains its output.
func (p *proc) stop() {
	p.stdin.Close()
	if p.running() {
		_ = childproc.KillGroup(p.cmd.Process.Pid)
	}
	for line := range p.lines {
		p.out.Write(line)
		p.out.WriteByte('\n')
	}
	<-p.ended
}

// maxEffectBytes bounds the effect log read.
const maxEffectBytes = 1 << 20

// readBoundedFile returns the first max bytes of path, or nothing when it cannot be read.
func readBoundedFile(path string, max int) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, _ := io.ReadAll(io.LimitReader(f, int64(max)))
	return data
}

// readEffects returns the complete lines of an effect log.
func readEffects(path string) []string {
	data, err := os.ReadFile(path)
	if err != nil || len(data) == 0 {
		return nil
	}
	if len(data) > maxEffectBytes {
		data = data[:maxEffectBytes]
	}
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		return nil
	}
	var out []string
	for _, l := range bytes.Split(data[:end], []byte{'\n'}) {
		out = append(out, string(l))
	}
	return out
}
