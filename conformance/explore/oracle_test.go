package explore

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/explore/alphabet"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/internal/childproc"
	"github.com/splashv5/conform/spec"
)

var builds childproc.Builds

func TestMain(m *testing.M) {
	code := m.Run()
	builds.Remove()
	os.Exit(code)
}

// referenceCommand builds the reference worker (with tags) and returns its command.
func referenceCommand(t testing.TB, tags ...string) conformance.WorkerCommand {
	t.Helper()
	bin, err := builds.Build(conformance.ReferenceWorkerPackage, tags...)
	if err != nil {
		t.Fatal(err)
	}
	return append(conformance.WorkerCommand{bin}, conformance.ReferenceWorkerArgs...)
}

var _ = spec.FindModuleRoot

// Spec: EXP-006 — each word runs in a fresh process, answered step by step.
func TestLauncherRunsAWord(t *testing.T) {
	l := &Launcher{Command: referenceCommand(t), Scope: "explore", Needs: allNeeds, Mode: canonjson.Preserve}
	A := alphabet.OpenBaseline
	start := time.Now()
	got, err := l.Run(context.Background(), []alphabet.Name{A, alphabet.Invoke, alphabet.Dispatch, alphabet.Reconcile, alphabet.Restart, alphabet.OpenBaseline, alphabet.Reconcile, alphabet.StoreFault, alphabet.Dispatch, alphabet.Invoke})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%v in %v", got, time.Since(start))
}

// delayed returns cmd started through a shell that first sleeps for d: every frame of a word
// is written before the worker reads any.
func delayed(t *testing.T, cmd conformance.WorkerCommand, d time.Duration) conformance.WorkerCommand {
	t.Helper()
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("needs /bin/sh")
	}
	script := fmt.Sprintf(`sleep %.3f; exec "$0" "$@"`, d.Seconds())
	return append(conformance.WorkerCommand{"/bin/sh", "-c", script}, cmd...)
}

// Spec: EXP-018, EXP-006 — a step ends at what settles it, never after a quiet period: a
// worker that reads its first frame only after every frame of the word was written still
// gets each answer, and each end of the process, attributed to the step that caused it (an
// opening accepted silently, then a refused frame; a slow invocation; end of input; a
// restart), so its outputs are the committed reference machine's.
func TestLauncherAttributesWithoutTiming(t *testing.T) {
	ref, err := ReferenceMachine()
	if err != nil {
		t.Fatal(err)
	}
	l := referenceLauncher(t)
	l.Command = delayed(t, l.Command, 300*time.Millisecond)
	for _, w := range [][]alphabet.Name{
		{alphabet.OpenBaseline},
		{alphabet.OpenBaseline, alphabet.OpenAgain},
		{alphabet.OpenBaseline, alphabet.InvokeBadTag},
		{alphabet.OpenBaseline, alphabet.EndOfInput},
		{alphabet.OpenCancellable, alphabet.InvokeSlow},
		{alphabet.OpenCancellable, alphabet.InvokeSlow, alphabet.InvokeSlow},
		{alphabet.OpenCancellable, alphabet.InvokeSlow, alphabet.EndOfInput},
		{alphabet.OpenCancellable, alphabet.InvokeSlow, alphabet.CancelCurrent, alphabet.CloseSession},
		{alphabet.StoreFault, alphabet.OpenBaseline, alphabet.Dispatch, alphabet.Invoke},
		{alphabet.OpenBaseline, alphabet.Restart, alphabet.OpenCancellable, alphabet.InvokeSlow, alphabet.Restart, alphabet.OpenAgain, alphabet.OpenAgain},
	} {
		got, err := l.Run(context.Background(), w)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := ref.Run(w)
		if !slices.Equal(got, want) {
			t.Errorf("after %s (worker started 300 ms late) the oracle answered %s; the reference machine says %s: a step was settled by time, not by what the worker wrote", words(w), outputs(got), outputs(want))
		}
	}
}

// Spec: EXP-018, EXP-003 — a worker that neither answers nor ends is reported as hung, after
// the answer wait, at the first step that requires an answer or an end, and the rest of the
// word is gone; an opening (which needs neither) is not hung because the probe after it went
// unanswered.
func TestLauncherReportsAHang(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("needs /bin/sh")
	}
	l := &Launcher{Command: conformance.WorkerCommand{"/bin/sh", "-c", "exec sleep 30"}, Scope: "explore",
		Needs: allNeeds, Mode: canonjson.Preserve, AnswerWait: 200 * time.Millisecond}
	hung, gone := alphabet.Output{Exit: alphabet.Hung}, alphabet.Output{Exit: alphabet.Gone}
	for _, c := range []struct {
		word []alphabet.Name
		want []alphabet.Output
	}{
		{[]alphabet.Name{alphabet.Invoke, alphabet.Invoke}, []alphabet.Output{hung, gone}},
		{[]alphabet.Name{alphabet.OpenBaseline, alphabet.Invoke}, []alphabet.Output{alphabet.Silent, hung}},
		{[]alphabet.Name{alphabet.OpenCancellable, alphabet.InvokeSlow}, []alphabet.Output{alphabet.Silent, alphabet.Silent}},
		{[]alphabet.Name{alphabet.StoreFault, alphabet.EndOfInput}, []alphabet.Output{alphabet.Silent, hung}},
	} {
		start := time.Now()
		got, err := l.Run(context.Background(), c.word)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("after %s a silent, never-ending worker was answered %s, want %s", words(c.word), outputs(got), outputs(c.want))
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("after %s the hang took %v to report; the answer wait is 200 ms a step", words(c.word), took)
		}
	}
}

// Spec: EXP-018, EXP-011 — in a session with a mutated frame, a step the worker leaves
// unanswered is taken as accepted without an answer (the mutated frame is no longer its
// symbol's), and the session goes on; without the mutation the same silence is a hang.
func TestLauncherMutatedFrameMayGoUnanswered(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("needs /bin/sh")
	}
	l := &Launcher{Command: conformance.WorkerCommand{"/bin/sh", "-c", "exec sleep 30"}, Scope: "explore",
		Needs: allNeeds, Mode: canonjson.Preserve, AnswerWait: 200 * time.Millisecond}
	w := []alphabet.Name{alphabet.Invoke, alphabet.Invoke, alphabet.EndOfInput}
	tr, err := l.Trace(context.Background(), w, func(k int, line []byte, _ *alphabet.Session) []byte {
		if k == 1 {
			return append(line, ' ')
		}
		return line
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []alphabet.Output{{Exit: alphabet.Hung}, {Exit: alphabet.Gone}, {Exit: alphabet.Gone}}
	if !slices.Equal(tr.Outputs, want) {
		t.Errorf("a silent worker, the second frame mutated: got %s, want %s (the hang comes before the mutated frame)", outputs(tr.Outputs), outputs(want))
	}
	w = []alphabet.Name{alphabet.OpenBaseline, alphabet.Invoke, alphabet.Invoke}
	tr, err = l.Trace(context.Background(), w, func(k int, line []byte, _ *alphabet.Session) []byte {
		if k == 1 {
			return append(line, ' ')
		}
		return line
	})
	if err != nil {
		t.Fatal(err)
	}
	want = []alphabet.Output{alphabet.Silent, alphabet.Silent, alphabet.Silent}
	if !slices.Equal(tr.Outputs, want) {
		t.Errorf("a silent worker, the invoke after the opening mutated: got %s, want %s", outputs(tr.Outputs), outputs(want))
	}
}
