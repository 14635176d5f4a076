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
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/explore/alphabet"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/internal/childproc"
)

// Default bounds of a word.
const (
	// DefaultAnswerWait bounds the wait for what settles a step: the answer naming the step's
	// request, the answer to the probe after the word, or the end of the process. A worker that
	// conforms settles every step long before it, so the bound is paid only by one that hangs,
	// and the step is then "hung".
	DefaultAnswerWait = 2 * time.Second
	// DefaultWordBound bounds one word's run.
	DefaultWordBound = 20 * time.Second
)

// settling says what settles a symbol's step: what proves that the worker processed its frame
// and wrote everything it writes in answer.
type settling int

const (
	// byAnswer: a frame a conforming worker answers with an answer naming its request (the
	// cancellation id of a cancel) or refuses by ending the process; end of input ends it.
	byAnswer settling = iota
	// byLater: a frame a conforming worker may accept without an answer (an opening, a slow
	// invocation). A worker processes its frames in order, so the answer to a later request
	// proves it was processed.
	byLater
	// byNothing: no frame (a store fault, a restart); the worker is sent nothing.
	byNothing
)

// settlingOf returns how the step of symbol n is settled.
func settlingOf(n alphabet.Name) settling {
	switch n {
	case alphabet.OpenBaseline, alphabet.OpenCancellable, alphabet.OpenAgain, alphabet.InvokeSlow:
		return byLater
	case alphabet.StoreFault, alphabet.Restart:
		return byNothing
	}
	return byAnswer
}

// probeFor returns the probe sent after a word whose last step is still unsettled after the
// symbol n: a request a conforming worker answers in the state n leaves it in (a quick invoke
// after an opening, a cancel of the slow invocation after it started). Its answer settles the
// word's steps; the state after the word no longer matters.
func probeFor(n alphabet.Name) alphabet.Name {
	if n == alphabet.InvokeSlow {
		return alphabet.CancelCurrent
	}
	return alphabet.Invoke
}

// Launcher runs abstract words against fresh worker processes: the process oracle of the
// learner (EXP-006). Each word gets its own scratch directory, so its journal, effect log,
// store fault trigger, storage key and secret source are the word's alone, substituted for the
// worker command's placeholders as the worker suite substitutes them.
//
// No step waits for a quiet period (EXP-018): every request the explorer sends carries a
// request id, and every answer names one, so a step whose frame is answered ends at its
// answer; a step whose frame may be accepted silently ends at the answer to a later request
// of the same word, or, at the end of the word, to a probe request sent after it; a process
// that ends while such steps are unsettled is attributed through the outputs of the word's
// prefixes, learned once per prefix (with its probe) and kept. Only a worker that neither
// answers nor ends waits for AnswerWait, and its step is hung.
type Launcher struct {
	// Command is the worker command, with placeholders.
	Command conformance.WorkerCommand
	// Env is the worker's environment (nil: the runner's).
	Env []string
	// Scope is the journal scope substituted for {scope}.
	Scope string
	// TempDir is the parent of the words' scratch directories ("": the worker suite's default,
	// conformance.DefaultScratchDir, memory-backed where it can be).
	TempDir string
	// Needs are the needs the worker declares; they shape the session's grants.
	Needs []alphabet.Need
	// Mode is the number model the host opens the worker's frames in.
	Mode canonjson.Mode
	// Bound bounds a word (0: DefaultWordBound).
	Bound time.Duration
	// AnswerWait bounds the wait for what settles a step (0: DefaultAnswerWait).
	AnswerWait time.Duration

	starts  atomic.Int64
	words   atomic.Int64
	symbols atomic.Int64
	probes  atomic.Int64

	scratch     sync.Once
	scratchPath string

	mu      sync.Mutex
	settled map[string]*settledStep
}

// scratchDir returns the parent of the words' scratch directories.
func (l *Launcher) scratchDir() string {
	l.scratch.Do(func() {
		l.scratchPath = l.TempDir
		if l.scratchPath == "" {
			l.scratchPath = conformance.DefaultScratchDir()
		}
	})
	return l.scratchPath
}

// settledStep is the known output of the last step of a word, once a run of the word settled
// it: done closes when out (or err) is known.
type settledStep struct {
	done chan struct{}
	out  alphabet.Output
	err  error
}

// Counts returns the processes started, the words run and the symbols sent so far.
func (l *Launcher) Counts() (starts, words, symbols int64) {
	return l.starts.Load(), l.words.Load(), l.symbols.Load()
}

// Probes returns the number of prefix runs made to attribute the end of a process (they are
// part of the process starts, not of the words).
func (l *Launcher) Probes() int64 { return l.probes.Load() }

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
	l.words.Add(1)
	l.symbols.Add(int64(len(word)))
	tr, err := l.trace(ctx, word, nil, false)
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

// wordKey is the key of a word in the launcher's settled steps.
func wordKey(word []alphabet.Name) string {
	var b strings.Builder
	for _, n := range word {
		b.WriteString(string(n))
		b.WriteByte(' ')
	}
	return b.String()
}

// settledOutput returns the output of the last step of word, from an earlier run of a word it
// prefixes or from a run of word itself, followed by its probe.
func (l *Launcher) settledOutput(ctx context.Context, word []alphabet.Name) (alphabet.Output, error) {
	key := wordKey(word)
	l.mu.Lock()
	if l.settled == nil {
		l.settled = map[string]*settledStep{}
	}
	if e, ok := l.settled[key]; ok {
		l.mu.Unlock()
		<-e.done
		return e.out, e.err
	}
	e := &settledStep{done: make(chan struct{})}
	l.settled[key] = e
	l.mu.Unlock()
	l.probes.Add(1)
	tr, err := l.trace(ctx, word, nil, false)
	if err == nil {
		e.out = tr.Outputs[len(word)-1]
	} else {
		e.err = err
	}
	if err != nil || ctx.Err() != nil {
		l.mu.Lock()
		delete(l.settled, key) // a later run tries again
		l.mu.Unlock()
	}
	close(e.done)
	return e.out, e.err
}

// maxSettled bounds the settled steps a launcher keeps; past it, prefixes are run again.
const maxSettled = 1 << 16

// remember keeps the settled outputs of the first n steps of word, where they may settle a later
// word: the steps of symbols that a worker may accept without an answer (the only steps left
// unsettled before another is sent).
func (l *Launcher) remember(word []alphabet.Name, outs []alphabet.Output, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.settled == nil {
		l.settled = map[string]*settledStep{}
	}
	for k := range min(n, len(outs)) {
		if settlingOf(word[k]) != byLater || len(l.settled) >= maxSettled {
			continue
		}
		key := wordKey(word[:k+1])
		if _, ok := l.settled[key]; ok {
			continue
		}
		e := &settledStep{done: make(chan struct{}), out: outs[k]}
		close(e.done)
		l.settled[key] = e
	}
}

// Trace runs word as Run does; edit, when set, may change the frame line of step k before it
// is written (the fuzzer's mutations), with the session that sealed it.
func (l *Launcher) Trace(ctx context.Context, word []alphabet.Name, edit func(k int, line []byte, s *alphabet.Session) []byte) (*Trace, error) {
	l.words.Add(1)
	l.symbols.Add(int64(len(word)))
	return l.trace(ctx, word, edit, true)
}

// stepState is what a word's run knows of one step.
type stepState struct {
	request string // the request id the step's frame carries ("" for none)
	answers []string
	invalid bool // an answer did not open: the step's list of answers ended
	exit    alphabet.Exit
}

// wordRun is the run of one word.
type wordRun struct {
	l     *Launcher
	ctx   context.Context // bounded by the word's bound
	outer context.Context // the caller's, for the prefixes' runs, each bounded on its own
	word  []alphabet.Name
	s     *alphabet.Session
	p     *proc
	wait  time.Duration
	steps []stepState // one per step, then the probe's
	// pending are the steps sent and not yet settled, in order.
	pending []int
	// gone is the step at which the process ended (len(word) while it runs).
	gone int
	// edited is the first step whose frame the edit changed (len(word) when none).
	edited int
}

// trace runs word; full asks for the processes' output, the effect log and the files besides
// the abstract outputs.
func (l *Launcher) trace(ctx context.Context, word []alphabet.Name, edit func(k int, line []byte, s *alphabet.Session) []byte, full bool) (*Trace, error) {
	bound := l.Bound
	if bound <= 0 {
		bound = DefaultWordBound
	}
	answerWait := l.AnswerWait
	if answerWait <= 0 {
		answerWait = DefaultAnswerWait
	}
	outer := ctx
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	dir, err := os.MkdirTemp(l.scratchDir(), "explore-")
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
	r := &wordRun{l: l, ctx: ctx, outer: outer, word: word, s: s, p: p, wait: answerWait,
		steps: make([]stepState, len(word)+1), gone: len(word), edited: len(word)}
	for k := range r.steps {
		r.steps[k].exit = alphabet.Running
	}
	defer func() { r.p.stop() }()
	if err := s.WriteBootstrap(p.stdin); err != nil {
		p.stdin.Close() // the worker ended before reading: its end shows at the first step
	}

	for k, sym := range word {
		if r.gone < len(word) {
			break
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
			// The process is replaced: what its unsettled steps did is taken from their
			// prefixes' runs, or, after an edited frame, from a probe.
			if err := r.settleBeforeRestart(); err != nil {
				return nil, err
			}
			if r.gone < len(word) {
				break
			}
			r.p.stop()
			_ = os.Remove(values[conformance.PlaceholderStoreFault])
			key, sid, err := newKey()
			if err != nil {
				return nil, err
			}
			keys = append(keys, key)
			if err := s.Restart(sid, key, l.Mode); err != nil {
				return nil, err
			}
			if r.p, err = l.start(args, &outBuf); err != nil {
				return nil, err
			}
			if err := s.WriteBootstrap(r.p.stdin); err != nil {
				r.p.stdin.Close()
			}
		case a.EndInput:
			r.p.stdin.Close()
			r.pending = append(r.pending, k)
			if err := r.await(); err != nil {
				return nil, err
			}
		default:
			line := a.Line
			if edit != nil {
				line = edit(k, bytes.Clone(line), s)
				if r.edited == len(word) && !bytes.Equal(line, a.Line) {
					r.edited = k
				}
			}
			r.steps[k].request = requestOf(line, l.Mode)
			_, _ = r.p.stdin.Write(append(line, '\n')) // an ended worker refuses it; its end shows
			r.pending = append(r.pending, k)
			if settlingOf(sym) == byAnswer {
				if err := r.await(); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := r.probe(); err != nil {
		return nil, err
	}
	r.p.stop()
	tr.Outputs = r.outputs()
	if ctx.Err() == nil {
		// A word cut short by its bound or the caller says nothing a later word may rely on.
		l.remember(word, tr.Outputs, r.edited)
	}
	if !full {
		return tr, nil
	}
	if outBuf.Len() > maxTraceOutput {
		outBuf.Truncate(maxTraceOutput)
	}
	tr.Output = append(outBuf.Bytes(), []byte(r.p.stderr.Excerpt())...)
	tr.Effects = readEffects(values[conformance.PlaceholderEffects])
	for _, f := range []string{values[conformance.PlaceholderJournal], values[conformance.PlaceholderEffects]} {
		tr.Files = append(tr.Files, readBoundedFile(f, maxTraceOutput)...)
	}
	return tr, nil
}

// outputs returns the abstract output of every step of the word.
func (r *wordRun) outputs() []alphabet.Output {
	out := make([]alphabet.Output, len(r.word))
	for k := range r.word {
		if k > r.gone {
			out[k] = alphabet.Output{Exit: alphabet.Gone}
			continue
		}
		out[k] = alphabet.Output{Answers: strings.Join(r.steps[k].answers, "+"), Exit: r.steps[k].exit}
	}
	return out
}

// requestOf returns the request id a frame line names: the request id of a request or an
// answer, the cancellation id of a cancel or its answer; "" when it names none or does not
// decode.
func requestOf(line []byte, mode canonjson.Mode) string {
	f, err := protocol.DecodeFrame(line, mode)
	if err != nil {
		return ""
	}
	switch m := f.Message.(type) {
	case protocol.InvokeMessage:
		return m.Invocation.RequestID
	case protocol.ResultMessage:
		return m.Result.RequestID
	case protocol.DispatchOperationMessage:
		return m.Request.RequestID
	case protocol.OperationResultMessage:
		return m.Result.RequestID
	case protocol.ReconcileOperationMessage:
		return m.Request.RequestID
	case protocol.ReconciledOperationMessage:
		return m.Result.RequestID
	case protocol.CompensateOperationMessage:
		return m.Request.RequestID
	case protocol.CompensationResultMessage:
		return m.Result.RequestID
	case protocol.CancelMessage:
		return m.Request.CancellationID
	case protocol.CancellationResultMessage:
		return m.Result.CancellationID
	}
	return ""
}

// take attributes one line the worker wrote: to the unsettled step whose request it names,
// else to the last unsettled step. That step and every unsettled step before it are settled:
// the worker processes its frames in order.
func (r *wordRun) take(line []byte) {
	r.p.out.Write(line)
	r.p.out.WriteByte('\n')
	if len(r.pending) == 0 {
		return
	}
	o := r.s.Abstract(alphabet.Observation{Lines: [][]byte{line}, Exit: alphabet.Running})
	at := len(r.pending) - 1
	if !strings.HasPrefix(o.Answers, "invalid:") {
		if id := requestOf(line, r.l.Mode); id != "" {
			if i := slices.IndexFunc(r.pending, func(k int) bool { return r.steps[k].request == id }); i >= 0 {
				at = i
			}
		}
	}
	st := &r.steps[r.pending[at]]
	if !st.invalid {
		st.answers = append(st.answers, o.Answers)
		st.invalid = strings.HasPrefix(o.Answers, "invalid:")
	}
	r.pending = r.pending[at+1:]
}

// await reads the worker's lines until every step sent is settled, the process ends, or the
// wait runs out: the worker hangs at a step, unless a step sent is at or after a mutated
// frame or the wait is the probe's, when the steps count as accepted without an answer.
func (r *wordRun) await() error {
	timer := time.NewTimer(r.wait)
	defer timer.Stop()
	for len(r.pending) > 0 {
		select {
		case line, ok := <-r.p.lines:
			if !ok {
				<-r.p.ended
				return r.end(r.p.exit)
			}
			r.take(line)
		case <-timer.C:
			if slices.ContainsFunc(r.pending, func(k int) bool { return k >= r.edited && k < len(r.word) }) {
				// A mutated frame is no longer its symbol's: a worker may accept it without
				// an answer.
				r.pending = nil
				return nil
			}
			r.p.stop()
			if slices.Contains(r.pending, len(r.word)) {
				// The probe, not a symbol of the word, went unanswered while the process
				// ran on: the word's steps neither answered nor ended it.
				r.pending = nil
				return nil
			}
			return r.end(alphabet.Hung)
		case <-r.ctx.Done():
			r.p.stop()
			return r.end(alphabet.Hung)
		}
	}
	return nil
}

// end attributes the end of the process (or its hang) to one of the unsettled steps: the first
// whose prefix's run shows the process ending there, else the last (a probe that went
// unanswered leaves it to the word's last unsettled step). Steps after it are gone.
func (r *wordRun) end(e alphabet.Exit) error {
	steps := slices.DeleteFunc(slices.Clone(r.pending), func(k int) bool { return k == len(r.word) })
	r.pending = nil
	if len(steps) == 0 {
		return nil // the word's steps were settled; the process ended after them
	}
	at, err := r.firstEnded(steps[:len(steps)-1])
	if err != nil {
		return err
	}
	if at < 0 {
		at = steps[len(steps)-1]
	}
	r.steps[at].exit = e
	r.gone = at
	return nil
}

// firstEnded returns the first of the unsettled steps after which the runs of the word's
// prefixes show the process ended, or -1. A step at or after an edited frame is not run again:
// the first of those is taken.
func (r *wordRun) firstEnded(steps []int) (int, error) {
	for _, k := range steps {
		if k >= r.edited {
			return k, nil
		}
		out, err := r.l.settledOutput(r.outer, r.word[:k+1])
		if err != nil {
			return -1, err
		}
		if out.Exit != alphabet.Running {
			return k, nil
		}
	}
	return -1, nil
}

// probe settles the steps still unsettled while the process runs with a probe request after
// them, the request a conforming worker answers after the last of them.
func (r *wordRun) probe() error {
	if len(r.pending) == 0 || r.gone < len(r.word) {
		return nil
	}
	a, err := r.s.Concretize(probeFor(r.word[r.pending[len(r.pending)-1]]))
	if err != nil {
		return err
	}
	r.steps[len(r.word)].request = requestOf(a.Line, r.l.Mode)
	_, _ = r.p.stdin.Write(append(a.Line, '\n'))
	r.pending = append(r.pending, len(r.word))
	return r.await()
}

// settleBeforeRestart settles the unsettled steps before a restart replaces the process: from
// their prefixes' runs, which leave the session as the word has it, or with a probe when one of
// them is at or after an edited frame.
func (r *wordRun) settleBeforeRestart() error {
	steps := r.pending
	if len(steps) == 0 {
		return nil
	}
	if steps[len(steps)-1] >= r.edited {
		return r.probe()
	}
	r.pending = nil
	for _, k := range steps {
		out, err := r.l.settledOutput(r.outer, r.word[:k+1])
		if err != nil {
			return err
		}
		r.steps[k].answers, r.steps[k].exit = nil, out.Exit
		if out.Answers != "" {
			r.steps[k].answers = []string{out.Answers}
		}
		if out.Exit != alphabet.Running {
			r.gone = k
			return nil
		}
	}
	return nil
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
	size := max
	if info, err := f.Stat(); err == nil && info.Size() < int64(max) {
		size = int(info.Size())
	}
	data := make([]byte, size)
	n, _ := io.ReadFull(f, data)
	return data[:n]
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
