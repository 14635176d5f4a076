package model_test

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/splashv5/conform/model"
)

// coverageTable is, per model, every kind of transition the model defines, named by the
// model's label function: each must be taken by the CI explorations.
var coverageTable = map[string][]string{
	// A worker or adapter step that stops the driver is labelled with its fatal error; an
	// adapter step without one returns into a driver already stopping. The driver's refusals of
	// a host that breaks the protocol (an invoke while active, a cancel of the wrong target)
	// are not reachable with the model's correct host and are left to impl/worker's tests.
	"cancellation": {
		"host start", "host cancel", "host close", "worker invoke", "worker cancel", "worker close_session",
		"worker tampered -> Protocol:InvalidAuthenticationTag", "worker cancel -> CancellationWithoutTarget",
		"adapter complete", "adapter acknowledge", "adapter fail", "adapter fail -> Adapter",
		"adapter acknowledge -> UnrequestedAcknowledgement", "net result",
		"net cancellation_result", "net end", "peer duplicate_result", "peer unrequested_ack",
		"peer forged_cancel",
	},
	"fencing": {
		"start -> ok", "admit -> ok", "crash -> ok",
		"dispatch -> ok", "dispatch -> PendingOperation", "dispatch -> succeeded", "dispatch -> failed",
		"reconcile -> ok", "reconcile -> Protocol",
		"compensate -> ok", "compensate -> PendingCompensation", "compensate -> compensated", "compensate -> Protocol",
		"persist -> ok", "persist -> FencingTokenRejected", "persist -> WriteConflict", "persist -> retry",
		"persist -> indeterminate", "effect -> ok", "effect -> EffectRefused", "undo -> ok", "undo -> EffectRefused",
		"answer -> succeeded", "answer -> failed", "answer -> compensated",
	},
	"lifecycle": {
		"start", "claimNext", "advance", "expire", "await", "release", "collect",
		"retry", "retry NotClaimed", "retry RetryLimitReached", "retry DeadlineElapsed", "retry CancellationRequested", "retry AlreadyCompleted",
		"requestCancel", "requestCancel NotClaimed", "requestCancel AlreadyCompleted",
		"confirm", "confirm NotClaimed", "confirm CancellationNotRequested", "confirm AlreadyCompleted",
		"cancel", "cancel NotClaimed", "cancel AlreadyCompleted", "complete", "complete NotClaimed", "complete AlreadyCompleted",
		"reconcile", "reconcile DeadlineElapsed", "reconcile AlreadyCompleted", "reconcile NotClaimed",
	},
	"supervised": {
		"start", "cancel", "worker result", "worker acknowledged", "worker unsupported", "worker too_late",
		"worker tampered", "deadline", "poll completed", "poll cancelled", "poll unsupported",
		"poll indeterminate", "poll transport",
	},
}

// Coverage labels of each model: the action and, where it has branches, their outcome.
func cancelLabel(a model.CancelAction) string {
	if a.Err != "" {
		return a.Actor + " " + a.Kind + " -> " + a.Err
	}
	return a.Actor + " " + a.Kind
}

func lifeLabel(a model.LifeAction) string { return strings.TrimSpace(a.Kind + " " + a.Result.Err) }

func supLabel(a model.SupAction) string {
	return strings.Join(strings.Fields(a.Kind+" "+a.Frame+" "+a.Outcome), " ")
}

// ciCoverage explores every model at its CI bounds and returns, per model, the number of
// explored transitions of each label.
func ciCoverage() map[string]map[string]int {
	out := map[string]map[string]int{
		"cancellation": explore("cancellation hostile", hostileBound().System).Coverage(cancelLabel),
		"lifecycle":    explore("lifecycle", lifecycleBound().System).Coverage(lifeLabel),
		"supervised":   explore("supervised", supervisedBound().System).Coverage(supLabel),
		"fencing":      {},
	}
	// The fencing model's bounds, and the effect system without fencing that its replay uses.
	cover := func(r *model.Exploration[model.FenceState, model.FenceAction]) {
		for k, v := range r.Coverage(fenceLabel) {
			out["fencing"][k] += v
		}
	}
	for _, c := range fencingBounds() {
		cover(explore(c.String(), c.System))
	}
	plain := model.Fencing{Workers: 2, Keys: 1, Lives: 2}
	cover(explore(plain.String()+" replay", func() model.System[model.FenceState, model.FenceAction] {
		return withoutInvariant(plain.System(), model.InvFailureNoEffect)
	}))
	return out
}

// Every kind of transition of every model is taken by the CI explorations; the test reports
// how often each was taken. A branch no exploration reaches (a transport failure before the
// deadline, a write the fence refuses) is a branch whose mutation no exploration or replay
// would notice.
func TestEveryTransitionReachable(t *testing.T) {
	t.Parallel()
	got := ciCoverage()
	models := make([]string, 0, len(coverageTable))
	for m := range coverageTable {
		models = append(models, m)
	}
	sort.Strings(models)
	for _, m := range models {
		var b strings.Builder
		for _, label := range coverageTable[m] {
			n := got[m][label]
			fmt.Fprintf(&b, "\n  %-40s %d", label, n)
			if n == 0 {
				t.Errorf("%s: no explored transition %q", m, label)
			}
		}
		for label := range got[m] {
			if !contains(coverageTable[m], label) {
				t.Errorf("%s: transition %q is missing from the coverage table", m, label)
			}
		}
		t.Logf("%s: transitions per kind:%s", m, b.String())
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// countedBound is one row of the state-count tables of docs/models.md and the exploration
// it reports.
type countedBound struct {
	model, bound string
	soak         bool
	explore      func() (states, transitions, depth int)
}

func counted[S, A any](r *model.Exploration[S, A]) (int, int, int) {
	return r.States, r.Transitions, r.Depth
}

func fencingCounted(c model.Fencing) func() (int, int, int) {
	return func() (int, int, int) { return counted(explore(c.String(), c.System)) }
}

// countedBounds lists every row of the tables; the explorations share the cache of the tests
// that explore the same bounds.
func countedBounds() []countedBound {
	fine := func() (int, int, int) {
		c := lifecycleBound()
		c.Tool.MaxCalls, c.StepMs, c.MaxMs = 2, 15, 45
		return counted(explore("lifecycle fine clock", c.System))
	}
	return []countedBound{
		{"Cancellation", "3 invocations, 1 corrupted frame, a faulty adapter", false,
			func() (int, int, int) { return counted(explore("cancellation", cancellationBound().System)) }},
		{"Cancellation", "the same with a hostile peer (1 frame)", false,
			func() (int, int, int) { return counted(explore("cancellation hostile", hostileBound().System)) }},
		{"Fencing", "2 workers, 1 key, 2 processes per worker, effect fencing", false,
			fencingCounted(model.Fencing{Workers: 2, Keys: 1, Lives: 2, EffectFencing: true})},
		{"Fencing", "2 workers, 2 keys, 1 process per worker, effect fencing", false,
			fencingCounted(model.Fencing{Workers: 2, Keys: 2, Lives: 1, EffectFencing: true})},
		{"Fencing", "2 workers, 3 keys, 1 process per worker, effect fencing", false,
			fencingCounted(model.Fencing{Workers: 2, Keys: 3, Lives: 1, EffectFencing: true})},
		{"Fencing", "3 workers, 1 key, 1 process per worker, effect fencing", false,
			fencingCounted(model.Fencing{Workers: 3, Keys: 1, Lives: 1, EffectFencing: true})},
		{"Fencing", "2 workers, 1 key, 2 processes, retrying writer (1 indeterminate write), effect fencing", false,
			fencingCounted(model.Fencing{Workers: 2, Keys: 1, Lives: 2, Retry: true, Timeouts: 1, EffectFencing: true})},
		{"Lifecycle", "2 calls, 2 attempts, 2 pending, 30 ms deadline, clock up to 30 ms in one step", false,
			func() (int, int, int) { return counted(explore("lifecycle", lifecycleBound().System)) }},
		{"Supervised", "3 invocations", false,
			func() (int, int, int) { return counted(explore("supervised", supervisedBound().System)) }},

		{"Cancellation", "5 invocations, 2 corrupted frames, a faulty adapter, a hostile peer", true,
			func() (int, int, int) { return counted(explore("cancellation hostile", hostileBound().System)) }},
		{"Fencing", "2 workers, 2 keys, 2 processes per worker, effect fencing", true,
			fencingCounted(model.Fencing{Workers: 2, Keys: 2, Lives: 2, EffectFencing: true})},
		{"Fencing", "3 workers, 2 keys, 1 process per worker, effect fencing", true,
			fencingCounted(model.Fencing{Workers: 3, Keys: 2, Lives: 1, EffectFencing: true})},
		{"Fencing", "2 workers, 2 keys, 2 processes, retrying writer, effect fencing", true,
			fencingCounted(model.Fencing{Workers: 2, Keys: 2, Lives: 2, Retry: true, Timeouts: 1, EffectFencing: true})},
		{"Lifecycle", "3 calls, otherwise as in CI", true,
			func() (int, int, int) { return counted(explore("lifecycle", lifecycleBound().System)) }},
		{"Lifecycle", "2 calls, a clock of four instants (steps of 15 ms up to 45 ms)", true, fine},
		{"Supervised", "6 invocations", true,
			func() (int, int, int) { return counted(explore("supervised", supervisedBound().System)) }},
	}
}

// documentedCount is one row of a state-count table of docs/models.md.
type documentedCount struct {
	model, bound               string
	soak                       bool
	states, transitions, depth int
}

// documentedCounts reads the state-count tables of docs/models.md.
func documentedCounts(t *testing.T) []documentedCount {
	t.Helper()
	doc, err := os.ReadFile("../docs/models.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Bounds and state counts\n")
	if !ok {
		t.Fatal("docs/models.md has no section \"Bounds and state counts\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var out []documentedCount
	soakTable, current := false, ""
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 9 || !strings.HasPrefix(line, "|") {
			continue
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case cells[1] == "Model":
			soakTable = cells[2] == "Soak bound"
			continue
		case strings.HasPrefix(cells[1], "---"):
			continue
		case cells[1] != "":
			current = cells[1]
		}
		num := func(s string) int {
			n, err := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
			if err != nil {
				t.Fatalf("docs/models.md: %q in the row %q is not a count", s, line)
			}
			return n
		}
		out = append(out, documentedCount{current, cells[2], soakTable, num(cells[3]), num(cells[4]), num(cells[5])})
	}
	return out
}

// The state counts docs/models.md lists are the counts of the explorations: a change of a
// model's key or transitions that changes what is explored must change the document too.
// The soak rows are compared under SPLASH_SOAK=1.
func TestDocumentedStateCounts(t *testing.T) {
	t.Parallel()
	bounds := countedBounds()
	docs := documentedCounts(t)
	if len(docs) == 0 {
		t.Fatal("docs/models.md lists no state counts")
	}
	for _, d := range docs {
		i := slices.IndexFunc(bounds, func(b countedBound) bool { return b.model == d.model && b.bound == d.bound && b.soak == d.soak })
		if i < 0 {
			t.Errorf("docs/models.md lists %s %q (soak %t), which this test does not explore; add it to countedBounds", d.model, d.bound, d.soak)
			continue
		}
		if d.soak != soak() {
			continue
		}
		states, transitions, depth := bounds[i].explore()
		if states != d.states || transitions != d.transitions || depth != d.depth {
			t.Errorf("%s %q: explored %d states, %d transitions, depth %d; docs/models.md says %d, %d, %d: update the document",
				d.model, d.bound, states, transitions, depth, d.states, d.transitions, d.depth)
		}
	}
	for _, b := range bounds {
		if !slices.ContainsFunc(docs, func(d documentedCount) bool { return b.model == d.model && b.bound == d.bound && b.soak == d.soak }) {
			t.Errorf("docs/models.md does not list %s %q (soak %t)", b.model, b.bound, b.soak)
		}
	}
}
