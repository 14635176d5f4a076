package model_test

import (
	"strings"
	"testing"

	"github.com/splashv5/conform/model"
)

// ledgerLife is the explored bound: up to three failures along a run (a lost first write, a
// dead worker, a lost answer, a crash while reconciling, in any order).
func ledgerLife(redispatch bool) model.LedgerLife {
	return model.LedgerLife{Faults: 3, Redispatch: redispatch}
}

// With the rule of WFL-043, every run of a durable operation within the bound keeps it to one
// effect, sends the recorded dispatch only after a refused reconciliation, and from every
// reachable state (the lost first write included) the operation settles once failures stop.
//
// Spec: WFL-041, WFL-043, WFL-044
func TestLedgerLifeSettles(t *testing.T) {
	c := ledgerLife(true)
	reportExploration(t, model.Explore(c.System()))
	if v := c.Liveness(); v != nil {
		t.Fatalf("%s", v)
	}
}

// Negative control: without the rule (reconciliation only, as the reference's engine leaves it)
// the explorer finds the stuck operation: its first write was lost, and every reconciliation of
// the key no worker holds is refused, for ever.
//
// Spec: WFL-043
func TestLedgerLifeWithoutTheRuleIsStuck(t *testing.T) {
	c := ledgerLife(false)
	reportExploration(t, model.Explore(c.System()))
	v := c.Liveness()
	if v == nil {
		t.Fatal("no counterexample: the liveness property holds without the rule")
	}
	text := v.String()
	t.Logf("caught as expected:\n%s", text)
	if v.Invariant != model.LedgerSettles || !strings.Contains(text, "first write lost") || !strings.Contains(text, "refused: no answer, exit 5") {
		t.Fatalf("the counterexample is not the lost first write refused for ever:\n%s", text)
	}
	last := v.States[len(v.States)-1]
	if last.Host != "pending" || last.Journal != "absent" || last.Effects != 0 {
		t.Fatalf("the stuck state %+v is not a pending operation no worker admitted", last)
	}
}

// What stays unsafe (WFL-044): a worker journal that goes back loses a key whose effect ran; its
// refusal then looks like a never-admitted key's, and the recorded dispatch runs the effect again.
// The explorer finds it, so the rule's safety rests on the journal's rollback defences.
//
// Spec: WFL-044
func TestLedgerLifeRollbackBreaksTheRule(t *testing.T) {
	c := ledgerLife(true)
	c.Rollback = true
	expectCaught(t, model.Explore(c.System()), "an operation has at most one effect")
}

// Negative control of the safety invariant: a host that sends the recorded dispatch without a
// refused reconciliation is caught.
//
// Spec: WFL-044
func TestLedgerLifeEarlyRedispatchIsCaught(t *testing.T) {
	c := ledgerLife(true)
	sys := broken(c.System(), func(s model.LedgerLifeState, mv model.Move[model.LedgerLifeState, model.LedgerLifeAction]) model.Move[model.LedgerLifeState, model.LedgerLifeAction] {
		if mv.Action.Kind == "recover: reconcile" && mv.Action.Calm() && s.Journal == "absent" {
			mv.Action.Kind = "recover: recorded dispatch"
		}
		return mv
	})
	expectCaught(t, model.Explore(sys), "the recorded dispatch follows a refused reconciliation")
}
