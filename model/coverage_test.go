package model_test

import (
	"fmt"
	"sort"
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
