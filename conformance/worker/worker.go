package worker

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/impl/bootstrap"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/internal/childproc"
)

// Exit statuses of a worker process, as spec/13-worker.md (WRK-092) defines them.
const (
	exitClean       = 0
	exitUsage       = 2
	exitBootstrap   = 3
	exitTransport   = 4
	exitRejected    = 5
	exitAdapter     = 6
	exitPersistence = 7
	exitInternal    = 8
	exitIntegrity   = 9
)

// exitClasses names each WRK-092 status.
var exitClasses = map[int]string{
	exitClean:       "clean",
	exitUsage:       "usage",
	exitBootstrap:   "bootstrap",
	exitTransport:   "transport",
	exitRejected:    "rejected",
	exitAdapter:     "adapter",
	exitPersistence: "persistence",
	exitInternal:    "internal",
	exitIntegrity:   "integrity",
}

// exitClass names a WRK-092 status.
func exitClass(code int) string {
	if name, ok := exitClasses[code]; ok {
		return name
	}
	return "not a documented exit status"
}

// describeExit writes "status 4 (transport)".
func describeExit(code int) string {
	return fmt.Sprintf("status %d (%s)", code, exitClass(code))
}

// lineEvent is one complete line the worker wrote on its standard output, or the error that
// ended its output.
type lineEvent struct {
	line []byte
	err  error
}

// Worker is one launched worker process seen from the host side: its pipes, its exit status,
// and the host end of its session (session id, key and host-role authenticator).
type Worker struct {
	t     *T
	index int // 1-based position among the check's workers
	cmd   *exec.Cmd

	stdin   *os.File // the runner's write end of the worker's standard input
	stdout  *os.File // the runner's read end of the worker's standard output
	stderrR *os.File
	lines   chan lineEvent
	done    chan struct{} // closed when the check is over, releasing the reader goroutines
	stderr  *stderrTail
	// keys finds the encodings of the session key and the storage key; keyInFrame is set
	// when a line of standard output held one.
	keys       *leakMatcher
	keyInFrame atomic.Bool

	exited     chan struct{}
	state      *os.ProcessState
	killedByUs atomic.Bool
	exitedAt   time.Time

	// SessionID is the session delivered by the bootstrap.
	SessionID string
	key       *protocol.SessionKey
	host      *protocol.Authenticator

	requests    int
	outputEnded bool
	endErr      error
	writeErr    error
	inputClosed bool
	answers     int
}

// launch starts the worker command with the check's placeholders substituted. It fails the
// run (not the check) when the command cannot be started.
func (t *T) launch() *Worker { return t.launchAs("") }

// launchAs is launch with a given session id; an empty id means a fresh random one.
func (t *T) launchAs(sid string) *Worker {
	w := &Worker{t: t, index: len(t.workers) + 1, lines: make(chan lineEvent, 4), done: make(chan struct{}), exited: make(chan struct{})}
	var err error
	if sid == "" {
		if sid, err = randomToken("conf-"); err != nil {
			t.Internal(err)
		}
	}
	key, err := protocol.GenerateSessionKey()
	if err != nil {
		t.Internal(err)
	}
	host, err := protocol.NewAuthenticator(sid, key, protocol.RoleHost, canonjson.Preserve, protocol.AllowNonPortableNumbers())
	if err != nil {
		t.Internal(err)
	}
	w.SessionID, w.key, w.host = sid, key, host
	raw, err := key.ExposeSecret()
	if err != nil {
		t.Internal(err)
	}
	args := t.run.command.Expand(t.placeholders()) // makes the storage key first
	w.keys = t.keyMatcher(raw[:])
	w.stderr = newStderrTail(w.keys)
	clear(raw[:])

	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = t.run.Env
	childproc.SetGroup(cmd)
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Internal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Internal(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Internal(err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	startErr := cmd.Start()
	inR.Close()
	outW.Close()
	errW.Close()
	if startErr != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		t.launchFailed(fmt.Errorf("cannot start worker %q: %w", args[0], startErr))
	}
	w.cmd, w.stdin, w.stdout, w.stderrR = cmd, inW, outR, errR
	t.workers = append(t.workers, w)
	t.Logf("worker %d started (pid %d): %s", w.index, cmd.Process.Pid, strings.Join(args, " "))
	if w.index > 1 {
		// Each start after the first gets the whole limit: a start opens the journal, reads the
		// effect log and answers open_session, which a loaded machine or a slower language
		// makes take a good part of it (CNF-COMP-21 starts four workers).
		t.RenewDeadline()
	}

	go w.readStdout()
	go w.stderr.Consume(errR)
	go func() {
		_ = cmd.Wait()
		w.state = cmd.ProcessState
		w.exitedAt = time.Now()
		// End anything the worker left behind in its process group.
		_ = childproc.KillGroup(cmd.Process.Pid)
		close(w.exited)
	}()
	return w
}

// readStdout splits the worker's standard output into bounded lines (at most 1 MiB each, as a
// host reader must enforce) and hands them to the check. It stops at the first error.
func (w *Worker) readStdout() {
	r := jsonline.NewReader(w.stdout)
	for {
		line, err := r.ReadLine()
		ev := lineEvent{err: err}
		if err == nil {
			ev.line = bytes.Clone(line)
			if w.keys.match(line) {
				w.keyInFrame.Store(true)
			}
		}
		select {
		case w.lines <- ev:
		case <-w.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// randomToken returns prefix followed by 16 random hex digits.
func randomToken(prefix string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return prefix + hex.EncodeToString(b[:]), nil
}

// bootstrap writes the valid private-pipe bootstrap of the worker's session on its input.
func (w *Worker) bootstrap() {
	var buf bytes.Buffer
	if err := bootstrap.Write(&buf, w.SessionID, w.key); err != nil {
		w.t.Internal(err)
	}
	w.t.Logf("→ worker %d: bootstrap for session %s (%d bytes; the key is not shown)", w.index, w.SessionID, buf.Len())
	w.write(buf.Bytes())
}

// bootstrapBytes returns the valid bootstrap of the worker's session without writing it.
func (w *Worker) bootstrapBytes() []byte {
	var buf bytes.Buffer
	if err := bootstrap.Write(&buf, w.SessionID, w.key); err != nil {
		w.t.Internal(err)
	}
	return buf.Bytes()
}

// writeRaw writes bytes that hold no session key and shows them in the transcript.
func (w *Worker) writeRaw(p []byte) {
	w.t.Logf("→ worker %d: %d bytes: %s", w.index, len(p), w.t.clipFrame(fmt.Sprintf("%q", p), 200))
	w.t.recordFrame(w, true, conformance.FrameBytes, p)
	w.write(p)
}

// write writes raw bytes on the worker's input without showing them in the transcript. A worker that closed its input is not an
// error here (the next expectation observes the exit); a worker that stops reading makes the
// check time out.
func (w *Worker) write(p []byte) {
	if w.writeErr != nil || w.inputClosed {
		return
	}
	_ = w.stdin.SetWriteDeadline(w.t.Deadline)
	_, err := w.stdin.Write(p)
	if err == nil {
		return
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		w.t.timeoutf("writing %d bytes to worker %d: it stopped reading its input", len(p), w.index)
	}
	w.writeErr = err
	w.t.Logf("worker %d: write failed: %v", w.index, err)
}

// writeLine writes line and a line feed in one write. Lines never hold key material, so the
// transcript shows them.
func (w *Worker) writeLine(line []byte) {
	w.t.Logf("→ worker %d: %s", w.index, w.t.clipFrame(strings.ToValidUTF8(string(line), "\uFFFD"), 300))
	w.t.recordFrame(w, true, conformance.FrameLine, line)
	buf := make([]byte, 0, len(line)+1)
	buf = append(buf, line...)
	w.write(append(buf, '\n'))
}

// closeInput closes the worker's standard input, so it reads end of file.
func (w *Worker) closeInput() {
	if !w.inputClosed {
		w.inputClosed = true
		_ = w.stdin.Close()
	}
}

// seal authenticates m as the next host frame and returns the line without sending it.
func (w *Worker) seal(m protocol.Message) []byte {
	_, line, err := w.host.Seal(m)
	if err != nil {
		w.t.Internal(fmt.Errorf("sealing %s: %w", m.Type(), err))
	}
	return line
}

// send seals m and writes it as one line.
func (w *Worker) send(m protocol.Message) {
	line := w.seal(m)
	w.writeLine(line)
}

// forge returns a frame line for m at sequence seq with a correct tag computed over the host
// role and the worker's session, without validating m and without advancing the host's
// sequence. It builds frames that a conforming sealer refuses to produce.
func (w *Worker) forge(seq uint64, m protocol.Message) []byte {
	tag, err := protocol.ComputeTag(w.key, w.SessionID, protocol.RoleHost, seq, m)
	if err != nil {
		w.t.Internal(err)
	}
	return protocol.Frame{Sequence: seq, Message: m, Tag: tag}.AppendJSON(nil)
}

// nextRequestID returns a fresh request id for this worker's session.
func (w *Worker) nextRequestID() string {
	w.requests++
	return "req-" + strconv.Itoa(w.requests)
}

// next waits for the next line of output, the end of output, or the check's deadline.
func (w *Worker) next(waitingFor string) lineEvent {
	if w.outputEnded {
		return lineEvent{err: w.endErr}
	}
	timer := time.NewTimer(time.Until(w.t.Deadline))
	defer timer.Stop()
	select {
	case ev := <-w.lines:
		if ev.err != nil {
			w.outputEnded, w.endErr = true, ev.err
		} else {
			w.logReceived(ev.line)
		}
		return ev
	case <-timer.C:
		w.t.timeoutf("waiting for %s from worker %d", waitingFor, w.index)
		panic("unreachable")
	}
}

// recv waits for the next frame and opens it with the host authenticator: the tag must verify
// for the worker role, the session must match and the sequence must be the next one. want
// describes the expected answer for messages.
func (w *Worker) recv(want string) protocol.Message {
	ev := w.next(want)
	if ev.err != nil {
		w.t.Failf(want, w.describeEnd(ev.err))
	}
	return w.openAnswer(want, ev.line)
}

// logReceived reports a line the worker wrote in the transcript and keeps it in full.
func (w *Worker) logReceived(line []byte) {
	w.t.Logf("← worker %d: %s", w.index, w.t.clipFrame(strings.ToValidUTF8(string(line), "\uFFFD"), 300))
	w.t.recordFrame(w, false, conformance.FrameLine, line)
}

// openAnswer opens one received frame line as recv does.
func (w *Worker) openAnswer(want string, line []byte) protocol.Message {
	w.answers++
	f, err := w.host.Open(line)
	if err != nil {
		w.t.Failf(want, fmt.Sprintf("a frame that the host cannot open (%s): %s%s", errorKind(err), conformance.Clip(string(line), 200), w.hashedTagInput(err, line)))
	}
	return f.Message
}

// maxShownTagInput bounds the tag input quoted in a failure message; the frame records of the
// -json and HTML reports keep it whole.
const maxShownTagInput = 8 << 10

// hashedTagInput returns, for a frame whose tag does not verify, the tag input the runner
// hashed (FRM-007) to say what the worker should have tagged, or "" for any other error.
func (w *Worker) hashedTagInput(err error, line []byte) string {
	if k, ok := protocol.KindOf(err); !ok || k != protocol.ErrInvalidAuthenticationTag {
		return ""
	}
	f, derr := protocol.DecodeFrame(line, canonjson.Preserve)
	if derr != nil {
		return ""
	}
	input := protocol.TagInput(w.SessionID, protocol.RoleWorker, f.Sequence, f.Message)
	return "; the runner hashed this tag input: " + conformance.Clip(string(input), maxShownTagInput)
}

// describeEnd explains why the output ended, waiting briefly for the exit status.
func (w *Worker) describeEnd(err error) string {
	switch {
	case errors.Is(err, protocol.ErrWireFrameTooLarge):
		return "an output line longer than 1 MiB (WireFrameTooLarge)"
	case errors.Is(err, jsonline.ErrInvalidUTF8):
		return "an output line that is not UTF-8"
	case errors.Is(err, jsonline.ErrUnexpectedEndOfStream):
		if w.waitExit(time.Second) {
			w.checkCrash()
			return "end of output without an answer; the worker exited with " + w.exitText() + conformance.LastStderrLine(w.stderr.Excerpt())
		}
		return "end of output without an answer; the worker is still running"
	}
	return "an output error: " + err.Error()
}

// waitExit waits up to d (and never past the deadline) for the process to exit.
func (w *Worker) waitExit(d time.Duration) bool {
	if until := time.Until(w.t.Deadline); until < d {
		d = until
	}
	if d < 0 {
		d = 0
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-w.exited:
		return true
	case <-timer.C:
		return false
	}
}

// expectRunning fails the check unless the worker reads everything written to it so far and
// then stays alive, silent, for grace: a session that is open and idle waits for its input.
// Where the unread bytes of a pipe cannot be queried, it only waits for grace.
func (w *Worker) expectRunning(grace time.Duration, state string) {
	for {
		n, ok := unreadInput(w.stdin)
		if !ok || n == 0 {
			break
		}
		select {
		case <-w.exited:
			w.checkCrash()
			w.t.Failf(state, fmt.Sprintf("the worker exited with %s leaving %d bytes of its input unread%s", w.exitText(), n, conformance.LastStderrLine(w.stderr.Excerpt())))
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(w.t.Deadline) {
			w.t.timeoutf("waiting for worker %d to read its input", w.index)
		}
	}
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-w.exited:
		w.checkCrash()
		w.t.Failf(state, "the worker exited with "+w.exitText()+" before its input ended"+conformance.LastStderrLine(w.stderr.Excerpt()))
	case ev := <-w.lines:
		if ev.err != nil {
			w.outputEnded, w.endErr = true, ev.err
			w.t.Failf(state, w.describeEnd(ev.err))
		}
		w.logReceived(ev.line)
		w.t.Failf(state, "the worker wrote a frame nobody asked for: "+describeLine(w.host, ev.line))
	case <-timer.C:
	}
}

// exitCode returns the exit status, or -1 when the process was ended by a signal.
func (w *Worker) exitCode() int {
	if w.state == nil {
		return -1
	}
	return w.state.ExitCode()
}

// exitText describes how the process ended.
func (w *Worker) exitText() string {
	if exit := childproc.Classify(w.state); exit.Signaled {
		return "signal " + exit.Signal
	}
	return describeExit(w.exitCode())
}

// checkCrash ends the check with CRASH when the exited worker died of a signal the runner did
// not send, exited with a shell's signal status, or printed a runtime crash report.
func (w *Worker) checkCrash() {
	select {
	case <-w.exited:
	default:
		return
	}
	// Let the stderr reader finish so the excerpt is complete.
	select {
	case <-w.stderr.Done():
	case <-time.After(200 * time.Millisecond):
	}
	if exit := childproc.Classify(w.state); exit.Signaled && !w.killedByUs.Load() {
		w.t.crashf("worker %d was killed by signal %s", w.index, exit.Signal)
	}
	if code := w.exitCode(); code > 128 {
		w.t.crashf("worker %d exited with status %d, which shells use for death by a signal", w.index, code)
	}
	if looksLikeCrash(w.stderr.Excerpt()) {
		w.t.crashf("worker %d printed a runtime crash report and exited with %s", w.index, w.exitText())
	}
}

// expectExit expects that the worker writes nothing more, ends its output and exits with the
// given status. why says what the worker is reacting to.
func (w *Worker) expectExit(code int, why string) {
	want := fmt.Sprintf("no answer to %s, end of output and exit %s", why, describeExit(code))
	if code == exitClean {
		want = fmt.Sprintf("end of output and exit %s after %s", describeExit(code), why)
	}
	w.expectEndOfOutput(want)
	w.t.Logf("worker %d: end of output", w.index)
	if !w.waitExit(time.Until(w.t.Deadline)) {
		w.t.timeoutf("worker %d ended its output but did not exit (expected exit %s)", w.index, describeExit(code))
	}
	w.t.Logf("worker %d: exited with %s", w.index, w.exitText())
	w.checkCrash()
	got := w.exitCode()
	switch {
	case got == code:
	case code != exitClean && got != exitClean:
		// The protocol demands only that a rejected session ends; the status classes of
		// WRK-092 are this project's convention, so another non-zero status is a SHOULD
		// deviation (WRK-096).
		w.t.shouldf(fmt.Sprintf("exit %s after %s", describeExit(code), why), "exit "+w.exitText()+conformance.LastStderrLine(w.stderr.Excerpt()))
	default:
		w.t.Failf(want, "exit "+w.exitText()+conformance.LastStderrLine(w.stderr.Excerpt()))
	}
}

// expectRefused expects that the worker ends the session without an answer and with a
// non-zero status, whatever its class (WRK-096).
func (w *Worker) expectRefused(why string) {
	want := "no answer to " + why + ", end of output and a non-zero exit"
	w.expectEndOfOutput(want)
	if !w.waitExit(time.Until(w.t.Deadline)) {
		w.t.timeoutf("worker %d ended its output but did not exit", w.index)
	}
	w.t.Logf("worker %d: exited with %s", w.index, w.exitText())
	w.checkCrash()
	if w.exitCode() == exitClean {
		w.t.Failf(want, "exit "+w.exitText())
	}
}

// expectEndOfOutput fails the check unless the worker ends its output without writing another
// frame; want describes the expectation for messages.
func (w *Worker) expectEndOfOutput(want string) {
	for {
		ev := w.next(want)
		if ev.err != nil {
			if !errors.Is(ev.err, jsonline.ErrUnexpectedEndOfStream) {
				w.t.Failf(want, w.describeEnd(ev.err))
			}
			return
		}
		w.answers++
		w.t.Failf(want, "the worker wrote a frame: "+describeLine(w.host, ev.line))
	}
}

// expectExitAfter expects the worker to exit with code, like expectExit, and to have run for
// at least min after start.
func (w *Worker) expectExitNotBefore(code int, why string, start time.Time, minimum time.Duration) {
	w.expectExit(code, why)
	if elapsed := w.exitedAt.Sub(start); elapsed < minimum {
		w.t.Failf(fmt.Sprintf("exit only after the running adapter returned (at least %v)", minimum),
			fmt.Sprintf("exit after %v", elapsed.Round(time.Millisecond)))
	}
}

// describeLine summarises a line the worker wrote: its message type when it opens, else the
// reason it does not.
func describeLine(host *protocol.Authenticator, line []byte) string {
	f, err := host.Open(line)
	if err != nil {
		return fmt.Sprintf("%s (which the host cannot open: %s)", conformance.Clip(string(line), 160), errorKind(err))
	}
	return fmt.Sprintf("a %s frame: %s", f.Message.Type(), conformance.Clip(string(line), 160))
}

// errorKind names the protocol error kind of err, or its text.
func errorKind(err error) string {
	if k, ok := protocol.KindOf(err); ok {
		return k.String()
	}
	return err.Error()
}

// stop ends the worker: kills its process group unless it already exited, closes the pipes
// and releases the reader goroutines.
func (w *Worker) stop() {
	select {
	case <-w.exited:
	default:
		w.killedByUs.Store(true)
		_ = childproc.KillGroup(w.cmd.Process.Pid)
		childproc.AwaitEnd(0, w.exited, time.Now().Add(5*time.Second)) // the reaper closes exited
	}
	w.closeInput()
	close(w.done)
	_ = w.stdout.Close()
	select {
	case <-w.stderr.Done():
	case <-time.After(time.Second):
	}
	_ = w.stderrR.Close()
	_ = w.host.Close()
	_ = w.key.Close()
}
