package host

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/conformancetest"
	"github.com/splashv5/conform/conformance/fakeworker"
	"github.com/splashv5/conform/impl/protocol"
)

// lateIntentRuns is how many times TestHCOMP01CatchesLateIntentEveryRun runs the check per
// driver: a race lost once in ten would show.
const lateIntentRuns = 20

// TestHCOMP01CatchesLateIntentEveryRun runs CNF-HCOMP-01 lateIntentRuns times against the test
// build's intent-late fault, a host that records a compensation's intent only once its frame is
// written (WFL-022, HDR-043), and as often against the same build without a fault: the fault
// fails every run and the correct host passes every run. The state directories are on a tmpfs
// where there is one, where the late write, its fsync included, is quickest: a check that only
// raced the host's write lost about one run in five there.
func TestHCOMP01CatchesLateIntentEveryRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the test driver and runs one check forty times")
	}
	bin := conformancetest.Program(t, conformancetest.DriverPackage, "splashfaults")
	tmp := fastTempDir(t)
	for _, c := range []struct {
		fault string
		want  conformance.Outcome
	}{{"intent-late", conformance.Fail}, {"", conformance.Pass}} {
		got := 0
		for range lateIntentRuns {
			report, err := Run(context.Background(), Config{Driver: []string{bin}, FakeWorker: fakeWorkerCommand(t),
				RunConfig: conformance.RunConfig{Run: "CNF-HCOMP-01", Env: append(os.Environ(), "SPLASH_HOST_FAULT="+c.fault), TempDir: tmp}})
			if err != nil {
				t.Fatal(err)
			}
			if len(report.Results) != 1 {
				t.Fatalf("%d results", len(report.Results))
			}
			if r := report.Results[0]; r.Outcome == c.want {
				got++
			} else {
				t.Logf("fault %q: %s: %s", c.fault, r.Outcome, r.Detail)
			}
		}
		t.Logf("fault %q: %s in %d/%d runs", c.fault, c.want, got, lateIntentRuns)
		if got != lateIntentRuns {
			t.Errorf("fault %q: %s in %d/%d runs, want every run", c.fault, c.want, got, lateIntentRuns)
		}
	}
}

// fastTempDir is a fresh directory on the Linux shared-memory tmpfs when there is one, else
// the test's temporary directory.
func fastTempDir(t *testing.T) string {
	if dir, err := os.MkdirTemp("/dev/shm", "hconf-"); err == nil {
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
		return dir
	}
	return t.TempDir()
}

// TestHCOMPLineWatchHoldsTheBinding feeds frame lines to a LineWatch in pieces of every size: a
// compensate_operation is held exactly once its binding, everything before the payload, has
// arrived, and names that binding; another frame, or a compensation whose line ended, is not.
func TestHCOMPLineWatchHoldsTheBinding(t *testing.T) {
	gf, err := ledgerGrant().CompensationFingerprint()
	if err != nil {
		t.Fatal(err)
	}
	b, err := protocol.NewOperationCompensationBinding(durableTool, "op-1", "cmp-2", workerScope, gf)
	if err != nil {
		t.Fatal(err)
	}
	req, err := protocol.NewOperationCompensationRequest("sid", "r-1", b, largeUndoPayload())
	if err != nil {
		t.Fatal(err)
	}
	comp := protocol.Frame{Sequence: 2, Message: protocol.CompensateOperationMessage{Request: req}}.AppendJSON(nil)
	payloadAt := bytes.Index(comp, []byte(`"payload":`)) + len(`"payload":`)
	comp = comp[:payloadAt+2*fakeworker.MaxWatched] // the watch keeps no more of a line
	dispatch, err := protocol.NewOperationDispatchRequest("sid", "r-1", durableTool, "op-1", largeUndoPayload())
	if err != nil {
		t.Fatal(err)
	}
	other := protocol.Frame{Sequence: 2, Message: protocol.DispatchOperationMessage{Request: dispatch}}.AppendJSON(nil)[:2*fakeworker.MaxWatched]
	for _, size := range []int{1, 7, 100, 4096} {
		var w fakeworker.LineWatch
		for i := 0; i < len(comp); i += size {
			w.Feed(comp[i:min(i+size, len(comp))])
			if held := w.Held() != nil; held != (min(i+size, len(comp)) >= payloadAt) {
				t.Fatalf("pieces of %d: held %v after %d bytes, the payload starts at %d", size, held, i+size, payloadAt)
			}
		}
		got, err := fakeworker.DecodeHeld(w.Held())
		if r := got.Message.Request; err != nil || r.OperationKey != "op-1" || r.CompensationKey != "cmp-2" || r.SessionID != "sid" ||
			r.TenantScope != workerScope || r.Tool != durableTool {
			t.Fatalf("pieces of %d: binding %+v, %v", size, r, err)
		}
		w.Feed([]byte("\n"))
		for i := 0; i < len(other); i += size {
			w.Feed(other[i:min(i+size, len(other))])
			if w.Held() != nil {
				t.Fatalf("pieces of %d: a dispatch_operation held", size)
			}
		}
	}
}

// TestHCOMP01HoldsASocketInput runs CNF-HCOMP-01 with the test build's socketpair switch, a
// host that hands its worker one end of a socket pair as standard input (as Node.js does): the
// fake worker tells the socket from a pipe, shrinks what it can, and still holds the host inside
// the write of the compensation frame. The correct host passes, with no transcript line that
// blames it for the socket, and the intent-late host fails, in every one of socketRuns runs.
func TestHCOMP01HoldsASocketInput(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the test driver")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the test build's socketpair switch is Linux's")
	}
	const socketRuns = 5
	bin := conformancetest.Program(t, conformancetest.DriverPackage, "splashfaults")
	tmp := fastTempDir(t)
	for _, c := range []struct {
		fault string
		want  conformance.Outcome
	}{{"", conformance.Pass}, {"intent-late", conformance.Fail}} {
		for range socketRuns {
			report, err := Run(context.Background(), Config{Driver: []string{bin}, FakeWorker: fakeWorkerCommand(t),
				RunConfig: conformance.RunConfig{Verbose: true, Run: "CNF-HCOMP-01", Env: append(os.Environ(), "SPLASH_HOST_SOCKETPAIR=1", "SPLASH_HOST_FAULT="+c.fault), TempDir: tmp}})
			if err != nil {
				t.Fatal(err)
			}
			r := report.Results[0]
			if r.Outcome != c.want {
				t.Fatalf("fault %q: %s: %s, want %s", c.fault, r.Outcome, r.Detail, c.want)
			}
			transcript := strings.Join(r.Transcript, "\n")
			for _, want := range []string{"its standard input is a socket", "stopped reading in a compensate_operation frame"} {
				if !strings.Contains(transcript, want) {
					t.Errorf("fault %q: the transcript lacks %q:\n%s", c.fault, want, transcript)
				}
			}
			if strings.Contains(transcript, "bad file descriptor") {
				t.Errorf("fault %q: the transcript blames the host for the socket:\n%s", c.fault, transcript)
			}
		}
	}
}
