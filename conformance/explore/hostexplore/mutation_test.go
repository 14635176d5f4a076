package hostexplore

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/splashv5/conform/conformance/conformancetest"
)

// hostFaultNames reads the fault catalog of the reference driver's splashfaults build from the
// host suite's mutation harness, so that this list cannot fall behind it.
func hostFaultNames(t *testing.T) []string {
	src, err := os.ReadFile("../../host/mutation_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^\t\{"([a-z0-9-]+)", "`).FindAllSubmatch(src, -1) {
		names = append(names, string(m[1]))
	}
	if len(names) < 50 {
		t.Fatalf("read %d faults from the host suite's catalog", len(names))
	}
	return names
}

// TestHostExploreMutation explores the splashfaults build of the reference driver once per
// fault, with the budget EXPLORE_HOST_MUTATION names (60s is the command's default) and the
// seed EXPLORE_HOST_SEED names (default 1), and prints which faults explore alone finds and by
// which invariant. It requires that at least
// EXPLORE_HOST_MUTATION_MIN percent (default 90) are found; docs/explore-host.md explains
// every miss. It takes up to the budget per missed fault, so it is opt-in.
func TestHostExploreMutation(t *testing.T) {
	budget, err := time.ParseDuration(os.Getenv("EXPLORE_HOST_MUTATION"))
	if err != nil {
		t.Skip("set EXPLORE_HOST_MUTATION to a budget per fault (60s is the command's default) to run the explorer against every driver fault")
	}
	seed := uint64(1)
	if v := os.Getenv("EXPLORE_HOST_SEED"); v != "" {
		if _, err := fmt.Sscan(v, &seed); err != nil {
			t.Fatalf("EXPLORE_HOST_SEED=%q: %v", v, err)
		}
	}
	names := hostFaultNames(t)
	if only := os.Getenv("EXPLORE_HOST_FAULTS"); only != "" {
		names = strings.Split(only, ",")
	}
	bin := conformancetest.Program(t, conformancetest.DriverPackage, "splashfaults")
	reference := testConfig(t, conformancetest.Program(t, conformancetest.DriverPackage))
	type found struct {
		name, by string
		took     time.Duration
	}
	results := make([]found, len(names))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, name := range names {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			cfg := testConfig(t, bin, "SPLASH_HOST_FAULT="+name)
			cfg.Seed, cfg.Duration, cfg.Parallel, cfg.ShrinkRuns = seed, budget, 2, -1
			started := time.Now()
			res, err := Explore(t.Context(), cfg)
			if err != nil {
				t.Errorf("fault %s: %v", name, err)
				return
			}
			results[i] = found{name: name, took: time.Since(started)}
			if f := res.Failure; f != nil {
				v := f.Run.Violation
				// The control: the same commands against the reference's default build must
				// pass, or the finding is a false alarm and does not count.
				if again, err := Run(reference, f.Shrunk); err != nil || again.Violation != nil {
					t.Errorf("fault %s: false alarm: the reference fails %s too (%v, %v)", name, symbolsText(f.Shrunk), again.Violation, err)
					return
				}
				results[i].by = fmt.Sprintf("%s (sequence %d, command %d)", v.Invariant, f.Walk, v.Step+1)
			}
			fmt.Fprintf(os.Stderr, "fault %s: %q after %v\n", name, results[i].by, results[i].took.Round(time.Second))
		})
	}
	wg.Wait()
	caught := 0
	for _, r := range results {
		if r.by != "" {
			caught++
			fmt.Printf("| %s | found: %s | %v |\n", r.name, r.by, r.took.Round(time.Second))
		} else {
			fmt.Printf("| %s | missed | %v |\n", r.name, r.took.Round(time.Second))
		}
	}
	score := 100 * caught / len(results)
	fmt.Printf("host explore mutation score: %d/%d faults found (%d%%) with a budget of %v each, seed %d\n", caught, len(results), score, budget, seed)
	minimum := 90
	if v := os.Getenv("EXPLORE_HOST_MUTATION_MIN"); v != "" {
		_, _ = fmt.Sscan(v, &minimum)
	}
	if score < minimum {
		t.Errorf("explore found %d%% of the driver's faults, want at least %d%%", score, minimum)
	}
}
