package worker

import (
	"bufio"
	"bytes"
	"context"
	"errors"
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

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/conformancetest"
	"github.com/splashv5/conform/spec"
)

// mutationFault is one deliberate fault of the faulty reference worker (--fault NAME), the
// rule it breaks and the checks of which at least one must fail while it is active.
type mutationFault struct {
	Name        string
	Rule        string
	Description string
	Killers     []string
}

// faultCatalog asks the faulty build of the reference worker for its fault catalog
// (--list-faults: one fault per line, with name, rule, checks and description separated by
// tabs). Crash-test pauses (pause-*) are not mutations and are left out.
func faultCatalog(bin string) ([]mutationFault, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "--list-faults")
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%v: %s", err, strings.TrimSpace(errOut.String()))
	}
	var faults []mutationFault
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) != 4 {
			return nil, fmt.Errorf("--list-faults line %q: want four tab-separated fields", sc.Text())
		}
		if strings.HasPrefix(fields[0], "pause-") {
			continue
		}
		faults = append(faults, mutationFault{Name: fields[0], Rule: fields[1], Killers: strings.Split(fields[2], ","), Description: fields[3]})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(faults) == 0 {
		return nil, errors.New("--list-faults lists no fault")
	}
	return faults, nil
}

// TestMutationHarness runs the suite against the faulty build of the reference worker once
// per deliberate fault of its catalog.
// Every fault must make a check fail (otherwise the suite cannot see that bug). In the full
// mode (SPLASH_MUTATION=full, or SPLASH_SOAK set) every fault runs the whole suite, and every
// check must also be failed by some fault or say why no fault can reach it (Unreachable).
// Otherwise each fault runs only the checks that the catalog says must catch it.
func TestMutationHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the reference worker once per fault")
	}
	faults, err := faultCatalog(faultyWorkerBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	full := os.Getenv("SPLASH_MUTATION") == "full" || os.Getenv("SPLASH_SOAK") != ""

	// The faults run a few at a time: a run spends most of its time waiting for workers.
	type outcome struct {
		fault  mutationFault
		failed []string
		err    error
	}
	results := make([]outcome, len(faults))
	sem := make(chan struct{}, 3)
	var wg sync.WaitGroup
	for i, f := range faults {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			cfg := faultyConfig(t, "--fault", f.Name)
			if !full {
				var quoted []string
				for _, id := range f.Killers {
					quoted = append(quoted, regexp.QuoteMeta(id))
				}
				cfg.Run = "^(" + strings.Join(quoted, "|") + ")$"
			}
			cfg.Timeout = 3 * time.Second
			report, err := Run(context.Background(), cfg)
			results[i] = outcome{fault: f, err: err}
			if err != nil {
				return
			}
			conformancetest.CheckCitations(t, report)
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
		f := res.fault
		if res.err != nil {
			t.Errorf("fault %s: %v", f.Name, res.err)
			continue
		}
		ran++
		for _, id := range res.failed {
			killedBy[id] = append(killedBy[id], f.Name)
		}
		if len(res.failed) == 0 {
			survivors++
			t.Errorf("fault %s survived: no check failed (%s, breaks %s)", f.Name, f.Description, f.Rule)
			continue
		}
		if !slices.ContainsFunc(res.failed, func(id string) bool { return slices.Contains(f.Killers, id) }) {
			t.Errorf("fault %s was caught by %v but by none of its expected checks %v", f.Name, res.failed, f.Killers)
		}
		t.Logf("fault %-32s killed by %d check(s): %s", f.Name, len(res.failed), strings.Join(res.failed, " "))
	}
	t.Logf("mutation score: %d of %d faults killed (%.0f%%)", ran-survivors, ran, 100*float64(ran-survivors)/float64(ran))
	if !full {
		return
	}
	// A check that a proxy mutant must fail (TestProxyMutants) is accounted for too: the
	// mutant plants a bug no fault of the runtime can (a decoding bug of the shared library).
	proxyKilled := map[string]bool{}
	for _, m := range proxyMutants {
		for _, id := range m.Killers {
			proxyKilled[id] = true
		}
	}
	var uncovered []string
	unreachable := 0
	for _, c := range Catalog() {
		switch {
		case len(killedBy[c.ID]) > 0, proxyKilled[c.ID]:
		case c.Unreachable != "":
			unreachable++
		default:
			uncovered = append(uncovered, c.ID)
		}
	}
	sort.Strings(uncovered)
	t.Logf("checks failed by at least one fault or proxy mutant: %d of %d; unreachable by design: %d", len(Catalog())-len(uncovered)-unreachable, len(Catalog()), unreachable)
	if len(uncovered) > 0 {
		t.Errorf("checks that no fault makes fail and that give no Unreachable reason: %s", strings.Join(uncovered, " "))
	}
}

// TestFaultCatalogNamesChecks keeps the fault catalog of the faulty reference worker
// consistent with the check catalog and the specification.
func TestFaultCatalogNamesChecks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the faulty reference worker")
	}
	faults, err := faultCatalog(faultyWorkerBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range faults {
		if seen[f.Name] {
			t.Errorf("fault %s listed twice", f.Name)
		}
		seen[f.Name] = true
		if _, ok := spec.Find(f.Rule); !ok {
			t.Errorf("fault %s breaks %q, which the specification does not define", f.Name, f.Rule)
		}
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
		for _, f := range faults {
			if slices.Contains(f.Killers, c.ID) {
				t.Errorf("%s is marked unreachable but fault %s is expected to kill it", c.ID, f.Name)
			}
		}
	}
}

// proxyMutants are mutant workers that need no faulty build: a proxy in front of the real
// reference worker changes what reaches it (see runProxy).
var proxyMutants = []mutationFault{
	{Name: "retag", Description: "the worker accepts any tag (a proxy re-tags every frame)",
		Killers: []string{"CNF-FRAME-01", "CNF-FRAME-02", "CNF-FRAME-03", "CNF-FRAME-04", "CNF-OPEN-03", "CNF-FRAME-12"}},
	{Name: "resequence", Description: "the worker accepts any sequence (a proxy renumbers and re-tags every frame)",
		Killers: []string{"CNF-FRAME-05", "CNF-FRAME-06", "CNF-FRAME-07", "CNF-OPEN-04"}},
	{Name: "utf16-key-order", Description: "object keys are sorted by UTF-16 code units, so the tag over a U+E000 and U+1F600 object fails",
		Killers: []string{"CNF-DECODE-01"}},
	{Name: "hash-wire-numbers", Description: "numbers are hashed as received (1E2), not normalized", Killers: []string{"CNF-DECODE-02"}},
	{Name: "no-private-number", Description: "the $serde_json::private::Number key is an ordinary key", Killers: []string{"CNF-DECODE-03"}},
	{Name: "accept-unknown-members", Description: "structures that deny unknown members (dispatch_operation, cancel) ignore them",
		Killers: []string{"CNF-DECODE-04", "CNF-CANCEL-20"}},
	{Name: "accept-repeated-field", Description: "a repeated structure field is accepted", Killers: []string{"CNF-DECODE-05"}},
	{Name: "accept-float-integer", Description: "5.0 is accepted as an integer", Killers: []string{"CNF-DECODE-06"}},
	{Name: "reject-body-minus-zero", Description: "the integer -0 is rejected inside a message body", Killers: []string{"CNF-DECODE-07"}},
	{Name: "reject-positional", Description: "structures in positional (array) form are rejected", Killers: []string{"CNF-DECODE-08"}},
	{Name: "reject-positional-payload", Description: "a tool payload in positional form [format, value] is rejected", Killers: []string{"CNF-DECODE-12"}},
	{Name: "reject-positional-manifest", Description: "a manifest in positional form is rejected", Killers: []string{"CNF-DECODE-13"}},
	{Name: "no-depth-limit", Description: "nesting beyond 128 levels in an ignored member is accepted", Killers: []string{"CNF-DECODE-09"}},
	{Name: "require-sorted-resources", Description: "an open_session whose selectors arrive unsorted is rejected", Killers: []string{"CNF-DECODE-10"}},
	{Name: "no-tag-input-check", Description: "a tag input over 1 MiB is hashed, not refused", Killers: []string{"CNF-DECODE-11"}},
	{Name: "accept-unknown-format", Description: "a grant format other than text and json is read as text", Killers: []string{"CNF-OPEN-16"}},
	{Name: "accept-unknown-kind", Description: "a selector kind outside the four is read as secret", Killers: []string{"CNF-OPEN-17"}},
	{Name: "refuse-mixed-manifest", Description: "a manifest granting a cancellable tool beside others is refused, as the reference's driver does",
		Killers: []string{"CNF-OPEN-18"}},
	{Name: "accept-compensation-key", Description: "a compensation key without cmp- is accepted", Killers: []string{"CNF-COMP-17"}},
	{Name: "exit-zero", Description: "the worker exits with status 0 after a rejection",
		Killers: []string{"CNF-FRAME-14", "CNF-AUTHZ-01", "CNF-BOOT-01", "CNF-BOOT-02", "CNF-BOOT-03", "CNF-BOOT-04", "CNF-BOOT-05",
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
	run := func(mutation, pattern string, timeout time.Duration) *conformance.Report {
		cfg := proxyConfig(t, mutation)
		cfg.Run, cfg.Timeout, cfg.Parallel = pattern, timeout, 4
		cfg.Strict = true // a SHOULD check or the status class may be what catches a mutant
		report, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return report
	}
	control := run("none", "^CNF-(BOOT|OPEN|FRAME|AUTHZ|DECODE)-", 10*time.Second)
	for _, r := range control.Results {
		if r.Outcome != conformance.Pass {
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

// Spec: WRK-096, WRK-097
// TestExitStatusClassIsAdvice runs the whole suite against the reference worker behind a proxy
// that turns every non-zero exit status into 1, as a worker without the project's status
// classes would: every MUST check must still pass, the class mismatches are INFO, and under
// --strict they fail.
func TestExitStatusClassIsAdvice(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the reference worker")
	}
	run := func(strict bool) *conformance.Report {
		cfg := proxyConfig(t, "exit-one")
		cfg.Strict, cfg.Timeout = strict, 10*time.Second
		report, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return report
	}
	lenient := run(false)
	infos := 0
	for _, r := range lenient.Results {
		switch {
		case r.Outcome == conformance.Info && r.Level == conformance.Must:
			infos++
			if !strings.Contains(r.Detail, "status 1") {
				t.Errorf("%s: INFO %q does not name status 1", r.ID, r.Detail)
			}
		case r.Outcome == conformance.Info && strings.Contains(r.Detail, "status 1"):
			// A SHOULD check whose only deviation is the status class (CNF-NUMBER-05).
			infos++
		case r.Outcome != conformance.Pass && r.Outcome != conformance.Info:
			t.Errorf("%s %s with exit statuses rewritten to 1: %s", r.Outcome, r.ID, r.Detail)
		}
	}
	if infos < 20 {
		t.Errorf("%d checks reported a status-class deviation; want every rejection check", infos)
	}
	if lenient.ExitCode() != 0 {
		t.Errorf("the lenient run exits %d; want 0", lenient.ExitCode())
	}
	strict := run(true)
	failed := 0
	for _, r := range strict.Results {
		if r.Outcome == conformance.Fail {
			failed++
		}
	}
	if failed != infos {
		t.Errorf("under --strict %d checks fail; want the %d deviations", failed, infos)
	}
	t.Logf("%d of %d checks report only a status-class deviation", infos, len(lenient.Results))
}

// proxyConfig runs the reference worker behind the proxy fake with the given mutation.
func proxyConfig(t *testing.T, mutation string) Config {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Config{Worker: append([]string{exe}, conformance.ReferenceWorkerArgs...),
		RunConfig: conformance.RunConfig{Env: append(os.Environ(), fakeEnv+"=proxy-"+mutation, realWorkerEnv+"="+referenceWorkerBinary(t))}}
}
