package host

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

// hostFaults lists the deliberate faults of the splashfaults build of the reference driver
// (cmd/splash-host-driver/main.go, SPLASH_HOST_FAULT).
var hostFaults = []string{
	"argv",             // adds an argument to the worker command line
	"noopen",           // never sends open_session
	"nokill",           // an elapsed deadline returns without stopping the worker
	"nodeadline",       // waits an hour instead of the deadline
	"reqid",            // alters the request id of the invoke frame
	"authorize-late",   // sends the invoke before authorizing it
	"nopoison",         // keeps using the channel after a failed exchange
	"novalidate",       // accepts a result without validating it
	"noclose",          // closes a cancellable session's input without close_session
	"closeframe",       // sends close_session on an ordinary session, which a worker rejects
	"tenant",           // binds compensations to the default tenant, not the scope given in start
	"exitcode",         // reports -1 for a worker that exited by itself
	"nonportable",      // seals payload numbers that the other number model reads differently
	"redispatch",       // recovers an operation by dispatching it again instead of reconciling
	"reuse",            // runs a second durable exchange on a session
	"unknownexit",      // exits on an unknown command instead of answering Unsupported
	"manifest",         // opens the session with a manifest that lacks the first grant
	"opkey",            // alters the operation key of a durable request
	"cancel-id",        // alters the cancellation id
	"finish-cancelled", // reports every cancelled-or-not invocation as cancelled
	"refusal-contains", // stops the worker when a cancel is refused (cancel.go)
	"state-index",      // reads a state tag given as a variant index as garbage (checkfaults_on.go)
	"budget-early",     // charges a call before authorizing it (checkfaults_on.go)
	"overlimit",        // sends an invocation past the 1,024 identities (checkfaults_on.go)
	"nocontain",        // refuses a cancel that has no kept slot without stopping the worker (cancel.go)
	"refund",           // sends a call over max_calls after a cancellation, as if the call were refunded (cancel.go)

	// The durable ledger (features recover and compensate, cmd/splash-host-driver/ledger.go).
	"recover-redispatch", // recovers an interrupted step by dispatching it again instead of reconciling
	"memledger",          // keeps the ledger in memory only, so a restarted driver has lost it
	"intent-late",        // records a compensation's intent only once its frame is written
	"recompensate",       // sends a second compensation of the same operation under the recorded intent
	"cmp-fresh",          // redelivers an ambiguous compensation under a fresh cmp- key
	"memonce",            // keeps the one-approval rule of compensation in memory only (hostfaults_on.go)

	// Ports that count, parse, encode or wait differently (cmd/splash-host-driver/hostfaults_on.go).
	"wait-nodeadline",     // wait trusts the worker to exit, with no deadline
	"wait-nokill",         // wait answers -1 at the deadline without killing the worker's group
	"utf16",               // counts sizes in UTF-16 code units instead of UTF-8 bytes
	"intsonly",            // refuses only integers out of the 64-bit ranges, sends every other number as is
	"lossycmd",            // reads command payloads through a float-based JSON parser
	"normalize",           // reports received payloads with their numbers normalized
	"noncanon",            // writes upper-case \u00XX escapes
	"readall",             // reads a whole answer line before the 1 MiB bound applies (checkfaults_on.go)
	"keyinputs",           // derives keys from its own nonce instead of the one a command gives (wire.go)
	"keepold",             // leaves the running worker alive when a new start replaces it (replace.go)
	"deadline-from-begin", // counts a cancellable invocation's deadline from begin, not from each wait
	"close-early",         // answers close on a cancellable session before the worker's output ended
}

// catchAll is the fault that fails nearly every check (no open_session); a check it alone fails
// is not counted as killed, so that each check is proved by a fault aimed at it or a reason.
const catchAll = "noopen"

// TestHostMutationHarness runs the suite against the driver once per fault: every fault must
// fail some check (SHOULD checks count: the run is strict), and every check must be failed by some fault or say why none can. It prints
// the score.
func TestHostMutationHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the faulty driver and runs the suite once per fault")
	}
	bin, cleanup, err := BuildDriver("splashfaults")
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	killedBy := map[string][]string{}
	caught := 0
	for _, f := range hostFaults {
		report, err := Run(context.Background(), Config{Driver: []string{bin}, FakeWorker: fakeWorkerCommand(t), Strict: true,
			Env: append(os.Environ(), "SPLASH_HOST_FAULT="+f), TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		var failed []string
		for _, r := range report.Results {
			if r.Outcome.Failed() {
				failed = append(failed, r.ID)
				if f != catchAll {
					killedBy[r.ID] = append(killedBy[r.ID], f)
				}
			}
		}
		if len(failed) == 0 {
			t.Errorf("fault %s: no check fails", f)
		} else {
			caught++
		}
		t.Logf("fault %-15s caught by %s", f, strings.Join(failed, " "))
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
