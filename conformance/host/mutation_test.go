package host

import (
	"context"
	"fmt"
	"github.com/splashv5/conform/conformance"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance/conformancetest"
)

// hostFault is one deliberate fault of the splashfaults build of the reference driver
// (SPLASH_HOST_FAULT) and the checks aimed at it: a run of those checks alone must fail one.
type hostFault struct {
	name, does string
	killers    []string
}

// hostFaults lists the driver's faults (cmd/splash-host-driver: main.go and the files named).
var hostFaults = []hostFault{
	{"argv", "adds an argument to the worker command line", []string{"CNF-HBOOT-04"}},
	{"noopen", "never sends open_session", []string{"CNF-HBOOT-01", "CNF-HOPEN-01"}},
	{"nokill", "an elapsed deadline returns without stopping the worker", []string{"CNF-HDEADLINE-01", "CNF-HDEADLINE-02"}},
	{"nodeadline", "waits an hour instead of the deadline", []string{"CNF-HDEADLINE-01", "CNF-HDEADLINE-02", "CNF-HDEADLINE-03", "CNF-HDEADLINE-04"}},
	{"reqid", "alters the request id of the invoke frame", []string{"CNF-HBOOT-03", "CNF-HBOOT-05", "CNF-HBUDGET-01", "CNF-HBUDGET-02", "CNF-HBUDGET-04", "CNF-HFRAME-08", "CNF-HNUMBER-04", "CNF-HOPEN-02", "CNF-HOPEN-03", "CNF-HOPEN-07", "CNF-HRESULT-05", "CNF-HRESULT-06", "CNF-HRESULT-07"}},
	{"authorize-late", "sends the invoke before authorizing it", []string{"CNF-HBOOT-03", "CNF-HBOOT-05", "CNF-HBUDGET-01", "CNF-HBUDGET-02", "CNF-HBUDGET-04", "CNF-HDEADLINE-01", "CNF-HFRAME-08", "CNF-HNUMBER-04", "CNF-HOPEN-02", "CNF-HOPEN-03", "CNF-HOPEN-07", "CNF-HRESULT-05", "CNF-HRESULT-06", "CNF-HRESULT-07"}},
	{"nopoison", "keeps using the channel after a failed exchange", []string{"CNF-HFRAME-01", "CNF-HFRAME-02", "CNF-HFRAME-03", "CNF-HFRAME-04", "CNF-HFRAME-05", "CNF-HFRAME-06", "CNF-HFRAME-07", "CNF-HFRAME-08", "CNF-HFRAME-10"}},
	{"novalidate", "accepts a result without validating it", []string{"CNF-HRESULT-01", "CNF-HRESULT-02", "CNF-HRESULT-03", "CNF-HRESULT-04", "CNF-HRESULT-05", "CNF-HRESULT-07"}},
	{"noclose", "closes a cancellable session's input without close_session", []string{"CNF-HCANCEL-10", "CNF-HOPEN-05"}},
	{"closeframe", "sends close_session on an ordinary session, which a worker rejects", []string{"CNF-HBUDGET-01", "CNF-HBUDGET-02", "CNF-HOPEN-02", "CNF-HFRAME-11"}},
	{"tenant", "binds compensations to the default tenant, not the scope given in start", []string{"CNF-HCOMP-01", "CNF-HCOMP-02", "CNF-HCOMP-03", "CNF-HCOMP-04"}},
	{"exitcode", "reports -1 for a worker that exited by itself", []string{"CNF-HBOOT-02", "CNF-HOPEN-02"}},
	{"nonportable", "seals payload numbers that the other number model reads differently", []string{"CNF-HNUMBER-01"}},
	{"redispatch", "recovers an operation by dispatching it again instead of reconciling", []string{"CNF-HDURABLE-04", "CNF-HSTATE-01"}},
	{"reuse", "runs a second durable exchange on a session", []string{"CNF-HDURABLE-03"}},
	{"unknownexit", "exits on an unknown command instead of answering Unsupported", []string{"CNF-HOPEN-04"}},
	{"manifest", "opens the session with a manifest that lacks the first grant", []string{"CNF-HOPEN-01"}},
	{"opkey", "alters the operation key of a durable request", []string{"CNF-HDURABLE-01", "CNF-HDURABLE-04", "CNF-HSTATE-01"}},
	{"cancel-id", "alters the cancellation id", []string{"CNF-HCANCEL-01"}},
	{"finish-cancelled", "reports every cancelled-or-not invocation as cancelled", []string{"CNF-HCANCEL-03", "CNF-HCANCEL-06", "CNF-HCANCEL-07", "CNF-HCANCEL-09", "CNF-HCANCEL-12"}},
	{"refusal-contains", "stops the worker when a cancel is refused (cancel.go)", []string{"CNF-HCANCEL-07"}},
	{"state-index", "reads a state tag given as a variant index as garbage (checkfaults_on.go)", []string{"CNF-HFRAME-09", "CNF-HSTATE-01"}},
	{"budget-early", "charges a call before authorizing it (checkfaults_on.go)", []string{"CNF-HBUDGET-01"}},
	{"overlimit", "sends an invocation past the 1,024 identities (checkfaults_on.go)", []string{"CNF-HBUDGET-02"}},
	{"nocontain", "refuses a cancel that has no kept slot without stopping the worker (cancel.go)", []string{"CNF-HCANCEL-08"}},
	{"contain-pid", "contains a cancellable session by killing the worker's process only, not its group (hostfaults_on.go)", []string{"CNF-HCANCEL-08", "CNF-HCANCEL-11"}},
	{"nocontain-cancel", "answers Indeterminate when a cancel's wait passes the deadline without stopping the worker (hostfaults_on.go)", []string{"CNF-HCANCEL-11"}},
	{"nocontain-finish", "answers Indeterminate when a finish's wait passes the deadline without stopping the worker (hostfaults_on.go)", []string{"CNF-HCANCEL-11"}},
	{"nocontain-close", "answers Indeterminate when a close's wait passes the deadline without stopping the worker (hostfaults_on.go)", []string{"CNF-HCANCEL-11", "CNF-HCANCEL-13"}},
	{"refund", "sends a call over max_calls after a cancellation, as if the call were refunded (cancel.go)", []string{"CNF-HBUDGET-03"}},

	// The durable ledger (features recover and compensate, cmd/splash-host-driver/ledger.go).
	{"recover-redispatch", "recovers an interrupted step by dispatching it again instead of reconciling", []string{"CNF-HRECOVER-01", "CNF-HRECOVER-02"}},
	{"memledger", "keeps the ledger in memory only, so a restarted driver has lost it", []string{"CNF-HCOMP-01", "CNF-HRECOVER-02"}},
	{"intent-late", "records a compensation's intent only once its frame is written", []string{"CNF-HCOMP-01", "CNF-HCOMP-02", "CNF-HCOMP-03", "CNF-HCOMP-04"}},
	{"recompensate", "sends a second compensation of the same operation under the recorded intent", []string{"CNF-HCOMP-02"}},
	{"cmp-fresh", "redelivers an ambiguous compensation under a fresh cmp- key", []string{"CNF-HCOMP-01", "CNF-HCOMP-03"}},
	{"recover-reqid", "sends a recovery under the request id of the last step, not the recover's (hostfaults_on.go)", []string{"CNF-HRECOVER-01", "CNF-HCOMP-03"}},
	{"reseal", "seals a pre-sealed step or compensation line again before sending it (hostfaults_on.go)", []string{"CNF-HRECOVER-01", "CNF-HCOMP-03"}},
	{"lostinput-send", "recovers a compensation whose input is lost with an empty input instead of refusing (hostfaults_on.go)", []string{"CNF-HCOMP-05"}},
	{"inputs-here", "keeps its input store in the state directory, whatever start names as inputs (hostfaults_on.go)", []string{"CNF-HCOMP-05"}},
	{"memonce", "keeps the one-approval rule of compensation in memory only (hostfaults_on.go)", []string{"CNF-HCOMP-02"}},

	// Liveness of an undelivered step (cmd/splash-host-driver/redispatch.go).
	{"noredispatch", "never sends the recorded dispatch after a refused reconciliation, so the step never settles", []string{"CNF-HLIVE-01"}},
	{"redispatch-first", "sends a pending operation's recorded dispatch without reconciling it first", []string{"CNF-HLIVE-01"}},
	{"redispatch-newkey", "sends the dispatch after a refused reconciliation under a new key", []string{"CNF-HLIVE-01"}},
	{"refusal-memory", "keeps the refusal of a reconciliation in memory only, so a restarted driver reconciles again", []string{"CNF-HLIVE-01"}},
	{"refusal-any", "takes any failed reconciliation, a crash included, for a refusal", []string{"CNF-HLIVE-01"}},

	// The plan and the start's fields (cmd/splash-host-driver/ledger.go, hostfaults_on.go).
	{"plan-fixed", "keys its ledger by a fixed plan fingerprint instead of the one derived from the steps", []string{"CNF-HCOMP-04", "CNF-HPLAN-01"}},
	{"advance", "takes a succeeded operation for the approval of its step, moving to the plan's next step (ledger.go)", []string{"CNF-HPLAN-03"}},
	{"scope-any", "starts a worker for a scope that is not an identifier token", []string{"CNF-HPLAN-02"}},
	{"rebind", "resends a lost compensation under the current scope's tenant instead of the recorded one", []string{"CNF-HTENANT-01"}},

	// Ports that count, parse, encode or wait differently (cmd/splash-host-driver/hostfaults_on.go).
	{"wait-nodeadline", "wait trusts the worker to exit, with no deadline", []string{"CNF-HDEADLINE-04"}},
	{"wait-nokill", "wait answers -1 at the deadline without killing the worker's group", []string{"CNF-HDEADLINE-04"}},
	{"utf16", "counts sizes in UTF-16 code units instead of UTF-8 bytes", []string{"CNF-HBUDGET-04", "CNF-HRESULT-07"}},
	{"intsonly", "refuses only integers out of the 64-bit ranges, sends every other number as is", []string{"CNF-HNUMBER-01"}},
	{"lossycmd", "reads command payloads through a float-based JSON parser", []string{"CNF-HNUMBER-02", "CNF-HNUMBER-03", "CNF-HNUMBER-05", "CNF-HNUMBER-06"}},
	{"lossy-compensate", "reads compensate's payload through a float-based JSON parser", []string{"CNF-HNUMBER-06"}},
	{"normalize", "reports received payloads and statuses with their numbers normalized", []string{"CNF-HNUMBER-04", "CNF-HNUMBER-05", "CNF-HNUMBER-06"}},
	{"normalize-compensate", "reports compensate's status with its numbers normalized", []string{"CNF-HNUMBER-06"}},
	{"noncanon", "writes upper-case hexadecimal in its escapes", []string{"CNF-HOPEN-06"}},
	{"readall", "reads a whole answer line before the 1 MiB bound applies (checkfaults_on.go)", []string{"CNF-HFRAME-09", "CNF-HSTATE-01"}},
	{"charcount", "bounds an answer line by its characters, not its bytes (checkfaults_on.go)", []string{"CNF-HFRAME-09"}},
	{"keyinputs", "derives keys from its own nonce instead of the one a command gives (wire.go)", []string{"CNF-HCOMP-04"}},
	{"keepold", "leaves the running worker alive when a new start replaces it (replace.go)", []string{"CNF-HOPEN-07"}},
	{"deadline-from-begin", "counts a cancellable invocation's deadline from begin, not from each wait", []string{"CNF-HCANCEL-09"}},
	{"close-early", "answers close on a cancellable session before the worker's output ended", []string{"CNF-HCANCEL-10", "CNF-HOPEN-05"}},

	// Refusals and failures of the one-shot and multiplexed transports (hostfaults_on.go).
	{"refusal-spare", "refuses a dispatch of an ungranted tool before its one-shot transport sees it, so the refusal spends nothing", []string{"CNF-HDURABLE-05"}},
	{"exchange-retry", "runs a later durable exchange on a fresh channel and transport after a failed one", []string{"CNF-HDURABLE-05"}},
	{"busy-send", "writes the invoke of a begin refused while another invocation is active", []string{"CNF-HCANCEL-12"}},
	{"refusal-stops", "stops a cancellable session when its transport refuses a begin", []string{"CNF-HCANCEL-12"}},
	{"close-busy-input", "closes the worker's input when a close is refused while an invocation is active (main.go)", []string{"CNF-HCANCEL-13"}},
	{"close-active", "writes close_session while an invocation is active", []string{"CNF-HCANCEL-13"}},
	{"close-stopped", "writes close_session after a fatal failure stopped the session", []string{"CNF-HCANCEL-17"}},
	{"unsolicited-ignore", "drops a cancellation_result that no cancel waits for instead of stopping the session", []string{"CNF-HCANCEL-14"}},
	{"eof-cancelled", "reports an invocation cancelled when the worker's stream ended while it ran", []string{"CNF-HCANCEL-15"}},
	{"contained-cancelled", "reports an invocation cancelled once its cancel passed the deadline and the worker was stopped", []string{"CNF-HCANCEL-15"}},
	{"kind-ignore", "drops a worker frame of a kind other than result and cancellation_result instead of stopping the session", []string{"CNF-HCANCEL-16"}},
	{"feature-extra", "declares in hello a feature this revision does not define (main.go)", []string{"CNF-HOPEN-08"}},
	{"result-active", "keeps a cancellable session active after a result, refusing every later begin as Busy", []string{"CNF-HCANCEL-12"}},
	{"close-kills", "ends an ordinary session by killing its worker instead of closing its input (main.go)", []string{"CNF-HOPEN-09", "CNF-HOPEN-02"}},
	{"reclose-kills", "kills the worker on a repeated close of an ordinary session (main.go)", []string{"CNF-HOPEN-09"}},
	{"swap-frames", "hands on a result that arrives while a cancel waits for its disposition only after the next frame", []string{"CNF-HCANCEL-03"}},

	// Durable answers the step engine must open and record (steps.go, compensate.go, redispatch.go, hostfaults_on.go).
	{"answer-unapplied", "reports the status a step's answer carries without the step engine opening and recording it", []string{"CNF-HRECOVER-03", "CNF-HRECOVER-04"}},
	{"reconcile-unopened", "takes the status of any reconciliation answer that decodes, unopened and of any kind, and records it", []string{"CNF-HRECOVER-05"}},
	{"compensation-unapplied", "reports the status a compensation's answer carries without the step engine opening and recording it", []string{"CNF-HCOMP-06"}},
}

// catchAll is the fault that fails nearly every check (no open_session); a check it alone fails
// is not counted as killed, so that each check is proved by a fault aimed at it or a reason.
const catchAll = "noopen"

// TestHostMutationHarness runs the driver's faulty build once per fault: every fault must fail
// some check (SHOULD checks count: the run is strict). Each fault runs only the checks aimed at
// it, and every check must be aimed at by some fault other than catchAll or say why none can
// reach it. In the full mode (SPLASH_MUTATION=full, or SPLASH_SOAK set) every fault runs the
// whole suite, and the checks that fail are what counts. It prints the score.
func TestHostMutationHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the faulty driver and runs the suite once per fault")
	}
	full := os.Getenv("SPLASH_MUTATION") == "full" || os.Getenv("SPLASH_SOAK") != ""
	bin := conformancetest.Program(t, conformancetest.DriverPackage, "splashfaults")
	killedBy := map[string][]string{}
	caught, ran := 0, 0
	for _, f := range hostFaults {
		t.Run(f.name, func(t *testing.T) {
			ran++
			if mutate(t, f, bin, full, killedBy) {
				caught++
			}
		})
	}
	if ran < len(hostFaults) {
		return // -run selected some faults: the score and the checks left unkilled need them all
	}
	if !full {
		// The checks aimed at a fault stand for the ones it fails in a full run.
		for _, f := range hostFaults {
			for _, id := range f.killers {
				if f.name != catchAll && len(killedBy[id]) == 0 {
					killedBy[id] = append(killedBy[id], f.name+" (aimed)")
				}
			}
		}
	}
	reasoned := 0
	var unkilled []string
	for _, c := range Catalog() {
		switch {
		case len(killedBy[c.ID]) > 0:
		case c.Unreachable != "":
			reasoned++
		default:
			unkilled = append(unkilled, c.ID)
		}
	}
	if len(unkilled) > 0 {
		t.Errorf("no fault fails %s, and they give no reason", strings.Join(unkilled, " "))
	}
	fmt.Printf("host mutation score: %d/%d faults caught; %d/%d checks failed by a fault other than %s, %d with a written reason\n",
		caught, len(hostFaults), len(Catalog())-reasoned-len(unkilled), len(Catalog()), catchAll, reasoned)
}

// mutate runs the checks aimed at fault f (every check in the full mode) against the faulty
// driver bin, notes in killedBy the checks that fail, and reports whether one aimed at f did.
// Run as a subtest named after the fault, it lets -run select faults
// (-run 'TestHostMutationHarness/^nopoison$').
func mutate(t *testing.T, f hostFault, bin string, full bool, killedBy map[string][]string) bool {
	cfg := Config{Driver: []string{bin}, FakeWorker: fakeWorkerCommand(t), Strict: true,
		RunConfig: conformance.RunConfig{Env: append(os.Environ(), "SPLASH_HOST_FAULT="+f.name), TempDir: t.TempDir()}}
	if !full {
		var quoted []string
		for _, id := range f.killers {
			quoted = append(quoted, regexp.QuoteMeta(id))
		}
		cfg.Run = "^(" + strings.Join(quoted, "|") + ")$"
	}
	report, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	conformancetest.CheckCitations(t, report)
	var failed []string
	for _, r := range report.Results {
		if r.Outcome.Failed() {
			failed = append(failed, r.ID)
			if f.name != catchAll {
				killedBy[r.ID] = append(killedBy[r.ID], f.name)
			}
		}
	}
	t.Logf("fault %-15s caught by %s", f.name, strings.Join(failed, " "))
	switch {
	case len(failed) == 0:
		t.Errorf("fault %s (%s): no check fails", f.name, f.does)
	case !slices.ContainsFunc(failed, func(id string) bool { return slices.Contains(f.killers, id) }):
		t.Errorf("fault %s was caught by %v but by none of the checks aimed at it %v", f.name, failed, f.killers)
	default:
		return true
	}
	return false
}
