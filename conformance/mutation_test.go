package conformance

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// mutationFault is one deliberate fault the reference worker injects with --fault NAME, and
// the checks that must fail while it is active.
type mutationFault struct {
	Name        string
	Description string
	Killers     []string
}

// faultCatalog lists the faults the mutation harness asks of the reference worker. A listed
// fault must make at least one of its killers fail; a fault the worker lists that is not here
// runs against the whole suite in the full mode.
var faultCatalog = []mutationFault{
	{"accept-replay", "open a frame whose sequence is not the next one (replays and gaps pass)", []string{"CNF-FRAME-06", "CNF-FRAME-07", "CNF-OPEN-04"}},
	{"skip-tag-check", "accept a frame whose tag does not verify", []string{"CNF-FRAME-01", "CNF-FRAME-02", "CNF-FRAME-03", "CNF-OPEN-03", "CNF-FRAME-09"}},
	{"accept-reflected-role", "accept frames tagged with the worker role as sender", []string{"CNF-FRAME-04", "CNF-FRAME-05"}},
	{"reuse-outgoing-sequence", "seal every answer at the same outgoing sequence", []string{"CNF-FRAME-22", "CNF-PROFILE-11", "CNF-PROC-03"}},
	{"ignore-input-limit", "skip the max_input_bytes check", []string{"CNF-AUTHZ-03", "CNF-AUTHZ-05", "CNF-AUTHZ-16", "CNF-COMP-16"}},
	{"ignore-call-budget", "skip the max_calls check", []string{"CNF-AUTHZ-06", "CNF-AUTHZ-13"}},
	{"forget-request-id", "never reserve request ids", []string{"CNF-AUTHZ-07", "CNF-AUTHZ-08", "CNF-CANCEL-18", "CNF-AUTHZ-09", "CNF-AUTHZ-17"}},
	{"rerun-duplicate-dispatch", "run the adapter again for an exact duplicate dispatch", []string{"CNF-DURABLE-04", "CNF-DURABLE-15"}},
	{"persist-after-effect", "run the adapter before the pending record is persisted", []string{"CNF-DURABLE-19"}},
	{"pending-as-success", "answer a stored pending record as succeeded", []string{"CNF-DURABLE-16", "CNF-DURABLE-17"}},
	{"ignore-fence", "persist without the session's fencing lease", []string{"CNF-DURABLE-19"}},
	{"result-after-ack", "write the result of an invocation after acknowledging its cancellation", []string{"CNF-CANCEL-01"}},
	{"too-late-before-result", "write too_late before the result it follows", []string{"CNF-CANCEL-02"}},
	{"no-line-cap", "read input lines of any length", []string{"CNF-FRAME-12", "CNF-FRAME-11"}},
	{"accept-version-4", "accept messages and manifests with protocol_version 4", []string{"CNF-FRAME-17", "CNF-OPEN-15"}},
	{"skip-output-validation", "send adapter output without checking it against the grant", []string{"CNF-OUTPUT-01", "CNF-OUTPUT-03", "CNF-CANCEL-17"}},
	{"skip-session-check", "accept a message that names another session", []string{"CNF-FRAME-10", "CNF-OPEN-05"}},
	{"exit-zero-on-reject", "exit with status 0 after any rejected frame", []string{"CNF-FRAME-02", "CNF-AUTHZ-01", "CNF-OUTPUT-04"}},
	{"continue-after-reject", "skip a rejected frame and keep reading", []string{"CNF-FRAME-14", "CNF-AUTHZ-07"}},
	{"leak-key", "write the session key in the diagnostic line", []string{"CNF-PROC-02", "CNF-PROC-01"}},
	{"ignore-grant", "invoke tools the manifest does not grant", []string{"CNF-AUTHZ-01"}},
	{"no-reconcile-budget", "never exhaust the reconciliation budgets", []string{"CNF-DURABLE-13"}},
	{"no-compensation-budget", "skip the compensation grant and budget checks", []string{"CNF-COMP-03", "CNF-COMP-04"}},
	{"skip-fingerprint-check", "skip the compensation grant-fingerprint check", []string{"CNF-COMP-05"}},
	{"skip-scope-check", "compensate under any tenant scope", []string{"CNF-COMP-11"}},
	{"accept-second-compensation-key", "attach a second compensation to an operation", []string{"CNF-COMP-08"}},
	{"rerun-duplicate-compensation", "run the compensation handler again for an exact duplicate", []string{"CNF-COMP-10"}},
	{"admit-replayed-session", "admit a session id already admitted for the journal", []string{"CNF-DURABLE-18"}},
	{"ignore-cancel", "never set the cancellation token", []string{"CNF-CANCEL-01"}},
	{"detach-on-fatal", "stop without waiting for the running adapter after a fatal error", []string{"CNF-CANCEL-12"}},
	{"accept-scalar-json", "skip the JSON envelope and depth checks of the authorizer", []string{"CNF-AUTHZ-10", "CNF-AUTHZ-11"}},
	{"undeclared-safety-ok", "invoke adapters that declare no invocation safety", []string{"CNF-AUTHZ-12"}},
	{"limit-off-by-one", "compare byte limits with >= instead of >", []string{"CNF-AUTHZ-04", "CNF-OUTPUT-02", "CNF-OUTPUT-05"}},
	{"cancel-in-baseline", "answer cancel and close_session in a baseline session", []string{"CNF-CANCEL-06", "CNF-CANCEL-11"}},
	{"wrong-bootstrap-status", "exit with status 4 (transport), not 3, when the bootstrap is invalid",
		[]string{"CNF-BOOT-01", "CNF-BOOT-02", "CNF-BOOT-03", "CNF-BOOT-04", "CNF-BOOT-05", "CNF-BOOT-06", "CNF-BOOT-07", "CNF-BOOT-08", "CNF-BOOT-09", "CNF-BOOT-10"}},
	{"late-bootstrap-checks", "read the whole bootstrap (42 + L bytes) before checking any part of it",
		[]string{"CNF-BOOT-02", "CNF-BOOT-03", "CNF-BOOT-04", "CNF-BOOT-06"}},
}

// listFaults asks the reference worker for its fault names (one per line, the name first).
// Crash-test hooks (pause-*) are not mutations and are left out.
func listFaults(bin string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "--list-faults")
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%v: %s", err, strings.TrimSpace(errOut.String()))
	}
	var names []string
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") || strings.HasPrefix(fields[0], "pause-") {
			continue
		}
		names = append(names, fields[0])
	}
	return names, sc.Err()
}

func catalogFault(name string) (mutationFault, bool) {
	for _, f := range faultCatalog {
		if f.Name == name {
			return f, true
		}
	}
	return mutationFault{}, false
}

// TestMutationHarness runs the suite against the reference worker once per deliberate fault.
// Every fault must make a check fail (otherwise the suite cannot see that bug). In the full
// mode (SPLASH_MUTATION=full, or SPLASH_SOAK set) every fault runs the whole suite, and every
// check must also be failed by some fault or say why no fault can reach it (Unreachable).
// Otherwise each fault runs only the checks that the catalog says must catch it.
func TestMutationHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the reference worker once per fault")
	}
	bin := referenceWorkerBinary(t)
	faults, err := listFaults(bin)
	if err != nil || len(faults) == 0 {
		var names []string
		for _, f := range faultCatalog {
			names = append(names, f.Name)
		}
		t.Skipf("the reference worker lists no mutation faults (splash-worker --list-faults: %v); "+
			"the harness needs --list-faults and --fault NAME with these faults: %s", err, strings.Join(names, ", "))
	}
	full := os.Getenv("SPLASH_MUTATION") == "full" || os.Getenv("SPLASH_SOAK") != ""

	// The faults run a few at a time: a run spends most of its time waiting for workers.
	type outcome struct {
		name   string
		failed []string
		err    error
	}
	var jobs []string
	for _, name := range faults {
		if _, known := catalogFault(name); !known && !full {
			t.Logf("fault %s is not in the harness catalog; it runs only in the full mode", name)
			continue
		}
		jobs = append(jobs, name)
	}
	results := make([]outcome, len(jobs))
	sem := make(chan struct{}, 3)
	var wg sync.WaitGroup
	for i, name := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			cfg := referenceConfig(t, "--fault", name)
			if f, known := catalogFault(name); known && !full {
				var quoted []string
				for _, id := range f.Killers {
					quoted = append(quoted, regexp.QuoteMeta(id))
				}
				cfg.Run = "^(" + strings.Join(quoted, "|") + ")$"
			}
			cfg.Timeout = 3 * time.Second
			report, err := Run(context.Background(), cfg)
			results[i] = outcome{name: name, err: err}
			if err != nil {
				return
			}
			for _, r := range report.Results {
				if r.Outcome.Failed() {
					results[i].failed = append(results[i].failed, r.ID)
				}
			}
		}()
	}
	wg.Wait()

	killedBy := map[string][]string{} // check ID -> faults that made it fail
	survivors := 0
	ran := 0
	for _, res := range results {
		if res.err != nil {
			t.Errorf("fault %s: %v", res.name, res.err)
			continue
		}
		ran++
		f, known := catalogFault(res.name)
		for _, id := range res.failed {
			killedBy[id] = append(killedBy[id], res.name)
		}
		if len(res.failed) == 0 {
			survivors++
			t.Errorf("fault %s survived: no check failed (%s)", res.name, f.Description)
			continue
		}
		if known && !slices.ContainsFunc(res.failed, func(id string) bool { return slices.Contains(f.Killers, id) }) {
			t.Errorf("fault %s was caught by %v but by none of its expected checks %v", res.name, res.failed, f.Killers)
		}
		t.Logf("fault %-32s killed by %d check(s): %s", res.name, len(res.failed), strings.Join(res.failed, " "))
	}
	if ran == 0 {
		t.Skip("no listed fault is in the harness catalog")
	}
	t.Logf("mutation score: %d of %d faults killed (%.0f%%)", ran-survivors, ran, 100*float64(ran-survivors)/float64(ran))
	if !full {
		return
	}
	var uncovered []string
	unreachable := 0
	for _, c := range Catalog() {
		switch {
		case len(killedBy[c.ID]) > 0:
		case c.Unreachable != "":
			unreachable++
		default:
			uncovered = append(uncovered, c.ID)
		}
	}
	sort.Strings(uncovered)
	t.Logf("checks failed by at least one fault: %d of %d; unreachable by design: %d", len(Catalog())-len(uncovered)-unreachable, len(Catalog()), unreachable)
	if len(uncovered) > 0 {
		t.Errorf("checks that no fault makes fail and that give no Unreachable reason: %s", strings.Join(uncovered, " "))
	}
}

// TestFaultCatalogNamesChecks keeps the fault catalog consistent with the check catalog.
func TestFaultCatalogNamesChecks(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range faultCatalog {
		if seen[f.Name] {
			t.Errorf("fault %s listed twice", f.Name)
		}
		seen[f.Name] = true
		if len(f.Killers) == 0 {
			t.Errorf("fault %s names no check", f.Name)
		}
		for _, id := range f.Killers {
			if _, ok := Lookup(id); !ok {
				t.Errorf("fault %s names unknown check %s", f.Name, id)
			}
		}
	}
	for _, c := range Catalog() {
		if c.Unreachable == "" {
			continue
		}
		for _, f := range faultCatalog {
			if slices.Contains(f.Killers, c.ID) {
				t.Errorf("%s is marked unreachable but fault %s is expected to kill it", c.ID, f.Name)
			}
		}
	}
}

// proxyMutants are mutant workers built without the reference worker's fault hook: a proxy in
// front of the real reference worker changes what reaches it (see runProxy).
var proxyMutants = []mutationFault{
	{"retag", "the worker accepts any tag (a proxy re-tags every frame)",
		[]string{"CNF-FRAME-01", "CNF-FRAME-02", "CNF-FRAME-03", "CNF-FRAME-04", "CNF-OPEN-03", "CNF-FRAME-12"}},
	{"resequence", "the worker accepts any sequence (a proxy renumbers and re-tags every frame)",
		[]string{"CNF-FRAME-05", "CNF-FRAME-06", "CNF-FRAME-07", "CNF-OPEN-04"}},
	{"exit-zero", "the worker exits with status 0 after a rejection",
		[]string{"CNF-FRAME-14", "CNF-AUTHZ-01", "CNF-BOOT-01", "CNF-BOOT-02", "CNF-BOOT-03", "CNF-BOOT-04", "CNF-BOOT-05",
			"CNF-BOOT-06", "CNF-BOOT-07", "CNF-BOOT-08", "CNF-BOOT-09", "CNF-BOOT-10"}},
}

// TestProxyMutants runs the suite against the reference worker behind a proxy: unchanged, the
// bootstrap, opening, framing and authorization checks must all still pass (the proxy is
// faithful); with each mutation, each of its expected checks must fail while checks of valid
// traffic still pass.
func TestProxyMutants(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the reference worker")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	real := referenceWorkerBinary(t)
	run := func(mutation, pattern string, timeout time.Duration) *Report {
		cfg := Config{
			Worker:   append([]string{exe}, ReferenceWorkerArgs...),
			Run:      pattern,
			Timeout:  timeout,
			Parallel: 4,
			Env:      append(os.Environ(), fakeEnv+"=proxy-"+mutation, realWorkerEnv+"="+real),
		}
		report, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return report
	}
	control := run("none", "^CNF-(BOOT|OPEN|FRAME|AUTHZ)-", 10*time.Second)
	for _, r := range control.Results {
		if r.Outcome != Pass {
			t.Errorf("control proxy: %s %s: %s", r.Outcome, r.ID, r.Detail)
		}
	}
	killed := 0
	for _, m := range proxyMutants {
		// Each mutant runs its expected checks plus a few that it must not break.
		pattern := "^(" + strings.Join(append(slices.Clone(m.Killers), "CNF-PROFILE-01", "CNF-FRAME-22"), "|") + ")$"
		report := run(m.Name, pattern, 3*time.Second)
		var failed []string
		for _, r := range report.Results {
			if r.Outcome.Failed() {
				failed = append(failed, r.ID)
			}
		}
		for _, id := range m.Killers {
			if !slices.Contains(failed, id) {
				t.Errorf("mutant %s (%s): %s did not fail", m.Name, m.Description, id)
			}
		}
		for _, id := range []string{"CNF-PROFILE-01", "CNF-FRAME-22"} {
			if slices.Contains(failed, id) {
				t.Errorf("mutant %s broke %s, which only checks valid traffic", m.Name, id)
			}
		}
		if len(failed) > 0 {
			killed++
		}
		t.Logf("mutant %-10s killed by %d of %d checks: %s", m.Name, len(failed), len(report.Results), strings.Join(failed, " "))
	}
	t.Logf("proxy mutation score: %d of %d mutants killed", killed, len(proxyMutants))
}
