package explore

import (
	"context"
	"os"
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
