package worker

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/splashv5/conform/conformance"
)

// T is the context of one running check: its deadline, its scratch directory, the workers it
// launched and its verdict. Checks are defined inside this package.
type T struct {
	check   *Check
	run     *runState
	started time.Time
	dir     string
	workers []*Worker

	conformance.T
	frames     []conformance.FrameRecord // the frames the transcript reports, in full
	frameBytes int                       // bytes kept in frames (bounded by maxCheckFrameBytes)
	storageKey []byte                    // the check's storage key, once made (PlaceholderStorageKey)
	// startScope, when not empty, replaces the run's journal scope for {scope} in the next
	// starts (launchInScope).
	startScope string
}

// shouldf records a deviation from the SHOULD part of a check and lets the check go on.
func (t *T) shouldf(expected, actual string) {
	t.Logf("SHOULD deviation: expected %s; got %s", expected, actual)
	t.Deviations = append(t.Deviations, "expected "+expected+"; got "+actual)
	if t.Expected == "" {
		t.Expected, t.Actual = expected, actual
	}
}

// clipFrame returns the text of a frame for a transcript line: whole when the run keeps full
// frames and the check's frame records are within their bound, else its first n bytes.
func (t *T) clipFrame(s string, n int) string {
	if t.run.fullFrames && t.frameBytes+len(s) <= maxCheckFrameBytes {
		return s
	}
	return conformance.Clip(s, n)
}

// timeoutf ends the check with TIMEOUT.
func (t *T) timeoutf(format string, args ...any) {
	limit := fmt.Sprintf("time limit of %v reached: ", t.Limit)
	if n := len(t.workers); n > 1 {
		limit = fmt.Sprintf("time limit of %v since the start of worker %d reached (each start renews it): ", t.Limit, n)
	}
	t.End(conformance.Timeout, limit+fmt.Sprintf(format, args...))
}

// crashf ends the check with CRASH.
func (t *T) crashf(format string, args ...any) {
	t.End(conformance.Crash, fmt.Sprintf(format, args...))
}

// launchFailed ends the check and the run: the worker command cannot be started.
func (t *T) launchFailed(err error) {
	t.LaunchErr = err
	t.End(conformance.Fail, err.Error())
}

// scratch returns the check's scratch directory, creating it on first use.
func (t *T) scratch() string {
	if t.dir == "" {
		dir, err := os.MkdirTemp(t.run.Dir, strings.ToLower(t.check.ID)+"-")
		if err != nil {
			t.Internal(err)
		}
		t.dir = dir
	}
	return t.dir
}

// journalPath is the file substituted for {journal}.
func (t *T) journalPath() string { return filepath.Join(t.scratch(), conformance.JournalFile) }

// effectsPath is the file substituted for {effects}.
func (t *T) effectsPath() string { return filepath.Join(t.scratch(), conformance.EffectsFile) }

// appendEffectLog appends text to the check's effect log, as a crash or a damaged disk
// would leave it, while no worker runs.
func (t *T) appendEffectLog(text string) {
	f, err := os.OpenFile(t.effectsPath(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Internal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		t.Internal(err)
	}
	if err := f.Close(); err != nil {
		t.Internal(err)
	}
	t.Logf("runner: appended %d bytes to the effect log: %s", len(text), conformance.Clip(fmt.Sprintf("%q", text), 200))
}

// placeholders returns the values of the placeholders for this check.
func (t *T) placeholders() map[string]string {
	t.storageKeyPath() // makes the storage key when the command asks for one
	return conformance.PlaceholderValues(t.scratch(), cmp.Or(t.startScope, t.run.scope))
}

// launchInScope starts a worker whose {scope} is scope instead of the run's journal scope.
func (t *T) launchInScope(scope string) *Worker {
	t.startScope = scope
	defer func() { t.startScope = "" }()
	return t.launch()
}

// storeFaultPath is the file substituted for {store-fault}.
func (t *T) storeFaultPath() string { return filepath.Join(t.scratch(), conformance.StoreFaultFile) }

// armStoreFault creates the store fault trigger: after the worker's first allowed journal
// writes (counted per process, opening a session not being one; -1 for none), every journal
// write fails (PRF-021).
func (t *T) armStoreFault(allowed int) {
	content := ""
	if allowed >= 0 {
		content = strconv.Itoa(allowed) + "\n" // as echo N > FILE writes it (PRF-021)
	}
	if err := os.WriteFile(t.storeFaultPath(), []byte(content), 0o600); err != nil {
		t.Internal(err)
	}
	if allowed < 0 {
		t.Logf("runner: store fault armed: every journal write fails")
	} else {
		t.Logf("runner: store fault armed: journal writes after the first %d of a process fail", allowed)
	}
}

// disarmStoreFault removes the store fault trigger.
func (t *T) disarmStoreFault() {
	if err := os.Remove(t.storeFaultPath()); err != nil {
		t.Internal(err)
	}
	t.Logf("runner: store fault disarmed")
}

// scope is the journal scope of the worker under test.
func (t *T) scope() string { return t.run.scope }

// maxEffectLogBytes bounds how much of an effect log the runner reads.
const maxEffectLogBytes = 16 << 20

// effectLines returns the complete lines of the check's effect log (a torn final line is
// left out) or fails the check when it cannot be read.
func (t *T) effectLines() []string {
	f, err := os.Open(t.effectsPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Failf("a readable effect log", err.Error())
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxEffectLogBytes+1))
	if err != nil {
		t.Failf("a readable effect log", err.Error())
	}
	if len(data) > maxEffectLogBytes {
		t.Failf("an effect log of a few lines", "an effect log over 16 MiB")
	}
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		return nil
	}
	return withoutFenceLines(strings.Split(string(data[:end]), "\n"))
}

// expectEffects compares the effect log with the exact lines want (PRF-018).
func (t *T) expectEffects(why string, want ...string) {
	got := t.effectLines()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Failf(fmt.Sprintf("effect log after %s:\n  %s", why, orNone(want)), fmt.Sprintf("effect log:\n  %s", orNone(got)))
	}
}

func orNone(lines []string) string {
	if len(lines) == 0 {
		return "(no line)"
	}
	return strings.Join(lines, "\n  ")
}

// stderrExcerpt combines the kept standard error of every worker of the check.
func (t *T) stderrExcerpt() string {
	var b strings.Builder
	for _, w := range t.workers {
		ex := w.stderr.Excerpt()
		if ex == "" {
			continue
		}
		if len(t.workers) > 1 {
			fmt.Fprintf(&b, "[worker %d]\n", w.index)
		}
		b.WriteString(ex)
		if !strings.HasSuffix(ex, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
