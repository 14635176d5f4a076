package model

import (
	"fmt"
	"strings"
)

// This file models journal admission and fencing across several worker processes that share
// one journal record (chapters 10 and 13): each process loads the journal, is admitted with a
// freshly reserved fencing token, dispatches and reconciles operations through the two
// persistence points of flow B and the one of flow D, and may crash between any two atomic
// steps. The store is the fenced compare-and-swap of the storage chapter; the adapter's effects
// are the outside world, which survives every crash. A process exits after any error it
// reports (WRK-091), and a restart is a new process with a new session and a new lease.

// Limits of the fencing model's arrays.
const (
	FenceMaxWorkers = 3
	FenceMaxKeys    = 2
)

// Record states of the fencing model's journals.
const (
	FenceAbsent uint8 = iota
	FencePending
	FenceSucceeded
	FenceFailed
)

// Phases of one worker process.
const (
	FenceDown     uint8 = iota // no process
	FenceLoaded                // the journal and its revision were loaded; not admitted yet
	FenceIdle                  // an open session with a lease, between frames
	FencePersist1              // a dispatch added a pending record in memory; persist 1 is next
	FenceEffect                // the pending record is durable; the adapter runs next
	FencePersist2              // the adapter's status is observed in memory; persist 2 is next
	FencePersistR              // a reconciliation observed a status in memory; its persist is next
	FenceAnswer                // the flow's last persist succeeded; the answer is not sent yet
)

// Kinds of FenceAction.
const (
	FenceStart     = "start"     // a new process loads the journal and its revision
	FenceAdmit     = "admit"     // admission reserves a fencing token; the session opens
	FenceDispatch  = "dispatch"  // the host sends dispatch_operation for Key
	FenceReconcile = "reconcile" // the host sends reconcile_operation for Key (a pending record)
	FencePersist   = "persist"   // the session's next persist reaches the store
	FenceRunEffect = "effect"    // the adapter performs the operation's effect
	FenceSend      = "answer"    // the session sends the answer of a flow whose journal is durable
	FenceCrash     = "crash"     // the process dies
)

// FenceWorker is one worker process.
type FenceWorker struct {
	Phase uint8
	Lives uint8 // processes started in this slot
	Lease uint8
	Rev   uint8
	Key   uint8 // the key of the flow in progress
	J     [FenceMaxKeys]uint8
}

// FenceState is one state of the fencing model.
type FenceState struct {
	// The store: the journal record's revision, its current fence and its payload.
	Rev, Fence uint8
	J          [FenceMaxKeys]uint8
	// Effects counts the adapter's effects per key; they survive every crash.
	Effects [FenceMaxKeys]uint8
	W       [FenceMaxWorkers]FenceWorker
}

// FenceAction is one transition of the fencing model. Outcome is what the model predicts:
// "ok" for a step without an answer, the answer sent to the host ("succeeded", "failed"), or the
// error that ends the process ("PendingOperation", "FencingTokenRejected", "WriteConflict").
type FenceAction struct {
	Worker  int
	Kind    string
	Key     int
	Outcome string
}

// String renders the action as "w1 persist -> WriteConflict".
func (a FenceAction) String() string {
	s := fmt.Sprintf("w%d %s", a.Worker, a.Kind)
	if a.Kind == FenceDispatch || a.Kind == FenceReconcile {
		s += fmt.Sprintf(" k%d", a.Key)
	}
	return s + " -> " + a.Outcome
}

// Terminal reports whether the action answered the host with a terminal status.
func (a FenceAction) Terminal() bool { return a.Outcome == "succeeded" || a.Outcome == "failed" }

// Fencing is the configuration of the fencing model: Workers process slots (1 to 3), Keys
// operation keys (1 or 2), and at most Lives processes per slot.
type Fencing struct {
	Workers, Keys, Lives int
}

// FenceStateName names a record state.
func FenceStateName(s uint8) string {
	return [...]string{"absent", "pending", "succeeded", "failed"}[s]
}

// Key is the canonical encoding of a state.
func (c Fencing) Key(s FenceState) string {
	b := make([]byte, 0, 4+2*FenceMaxKeys+FenceMaxWorkers*(5+FenceMaxKeys))
	b = append(b, s.Rev, s.Fence)
	b = append(b, s.J[:]...)
	b = append(b, s.Effects[:]...)
	for _, w := range s.W {
		b = append(b, w.Phase, w.Lives, w.Lease, w.Rev, w.Key)
		b = append(b, w.J[:]...)
	}
	return string(b)
}

// Describe renders a state for a counterexample.
func (c Fencing) Describe(s FenceState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "store rev %d fence %d %s effects %v |", s.Rev, s.Fence, c.journal(s.J), s.Effects[:c.Keys])
	phases := [...]string{"down", "loaded", "idle", "persist1", "effect", "persist2", "persistR", "answer"}
	for i := 0; i < c.Workers; i++ {
		w := s.W[i]
		fmt.Fprintf(&b, " w%d %s", i, phases[w.Phase])
		if w.Phase != FenceDown {
			fmt.Fprintf(&b, " lease %d rev %d %s", w.Lease, w.Rev, c.journal(w.J))
		}
		b.WriteString(";")
	}
	return b.String()
}

func (c Fencing) journal(j [FenceMaxKeys]uint8) string {
	parts := make([]string, c.Keys)
	for k := range parts {
		parts[k] = fmt.Sprintf("k%d=%s", k, FenceStateName(j[k]))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// Next returns every transition enabled in s.
func (c Fencing) Next(s FenceState) []Move[FenceState, FenceAction] {
	var out []Move[FenceState, FenceAction]
	emit := func(n FenceState, a FenceAction) {
		out = append(out, Move[FenceState, FenceAction]{Action: a, Next: n})
	}
	for i := 0; i < c.Workers; i++ {
		w := s.W[i]
		if w.Phase == FenceDown {
			if int(w.Lives) < c.Lives {
				n := s
				n.W[i] = FenceWorker{Phase: FenceLoaded, Lives: w.Lives + 1, Rev: s.Rev, J: s.J}
				emit(n, FenceAction{Worker: i, Kind: FenceStart, Outcome: "ok"})
			}
			continue
		}
		// A crash is possible between any two atomic steps.
		n := s
		n.W[i] = FenceWorker{Lives: w.Lives}
		emit(n, FenceAction{Worker: i, Kind: FenceCrash, Outcome: "ok"})
		switch w.Phase {
		case FenceLoaded:
			n := s
			n.Fence++ // STO-026: a fresh token strictly greater than the current one
			n.W[i].Lease, n.W[i].Phase = n.Fence, FenceIdle
			emit(n, FenceAction{Worker: i, Kind: FenceAdmit, Outcome: "ok"})
		case FenceIdle:
			for k := 0; k < c.Keys; k++ {
				n, a := c.dispatch(s, i, k)
				emit(n, a)
				if w.J[k] == FencePending {
					n := s
					nw := &n.W[i]
					nw.Key, nw.Phase = uint8(k), FencePersistR
					nw.J[k] = FenceFailed // the profile reports the absence of an effect as failed
					if s.Effects[k] > 0 {
						nw.J[k] = FenceSucceeded
					}
					emit(n, FenceAction{Worker: i, Kind: FenceReconcile, Key: k, Outcome: "ok"})
				}
			}
		case FenceEffect:
			n := s
			n.Effects[w.Key]++
			n.W[i].J[w.Key] = FenceSucceeded
			n.W[i].Phase = FencePersist2
			emit(n, FenceAction{Worker: i, Kind: FenceRunEffect, Key: int(w.Key), Outcome: "ok"})
		case FencePersist1, FencePersist2, FencePersistR:
			n, a := FencePersistStep(s, i)
			emit(n, a)
		case FenceAnswer:
			n := s
			n.W[i].Phase = FenceIdle
			emit(n, FenceAction{Worker: i, Kind: FenceSend, Key: int(w.Key), Outcome: FenceStateName(w.J[w.Key])})
		}
	}
	return out
}

// dispatch is the session's admission of a dispatch for key k (WRK-040, WRK-041).
func (c Fencing) dispatch(s FenceState, i, k int) (FenceState, FenceAction) {
	w := s.W[i]
	a := FenceAction{Worker: i, Kind: FenceDispatch, Key: k}
	n := s
	switch w.J[k] {
	case FenceAbsent:
		nw := &n.W[i]
		nw.Key, nw.Phase = uint8(k), FencePersist1
		nw.J[k] = FencePending
		a.Outcome = "ok"
	case FencePending:
		n.W[i] = FenceWorker{Lives: w.Lives} // the error ends the process
		a.Outcome = "PendingOperation"
	default:
		a.Outcome = FenceStateName(w.J[k]) // the stored status, answered again
	}
	return n, a
}

// FencePersistStep is worker i's persist reaching the store: a fenced compare-and-swap under
// its lease expecting its revision (STO-028, WRK-082). On success the flow moves on to the
// adapter or to its answer, which a crash may still prevent. On failure the process ends.
func FencePersistStep(s FenceState, i int) (FenceState, FenceAction) {
	w := s.W[i]
	a := FenceAction{Worker: i, Kind: FencePersist, Key: int(w.Key)}
	n := s
	switch {
	case w.Lease != s.Fence:
		a.Outcome = "FencingTokenRejected"
	case w.Rev != s.Rev:
		a.Outcome = "WriteConflict"
	}
	if a.Outcome != "" {
		n.W[i] = FenceWorker{Lives: w.Lives}
		return n, a
	}
	n.J, n.Rev = w.J, s.Rev+1
	nw := &n.W[i]
	nw.Rev = n.Rev
	switch w.Phase {
	case FencePersist1:
		nw.Phase, a.Outcome = FenceEffect, "ok"
	default:
		nw.Phase, a.Outcome = FenceAnswer, "ok"
	}
	return n, a
}

// System returns the explorable system with its invariants.
func (c Fencing) System() System[FenceState, FenceAction] {
	return System[FenceState, FenceAction]{
		Name:       fmt.Sprintf("fencing(workers=%d keys=%d lives=%d)", c.Workers, c.Keys, c.Lives),
		Init:       []FenceState{{}},
		Next:       c.Next,
		Key:        c.Key,
		Describe:   c.Describe,
		Invariants: FencingInvariants(c.Keys),
	}
}

// FencingInvariants are the safety properties of the fencing model over keys operation keys.
func FencingInvariants(keys int) []Invariant[FenceState, FenceAction] {
	return []Invariant[FenceState, FenceAction]{
		{
			Name: "at most one effect per operation key", Spec: "WRK-041, WRK-042, WRK-083",
			State: func(s FenceState) bool {
				for k := 0; k < keys; k++ {
					if s.Effects[k] > 1 {
						return false
					}
				}
				return true
			},
		},
		{
			Name: "no write under a superseded lease", Spec: "WRK-083, STO-026, STO-028",
			Step: func(from FenceState, a FenceAction, to FenceState) bool {
				return a.Kind != FencePersist || to.Rev == from.Rev || from.W[a.Worker].Lease == from.Fence
			},
		},
		{
			Name: "a terminal answer is durable (none after a failed write)", Spec: "WRK-042, WRK-046, WRK-071, WRK-091",
			Step: func(from FenceState, a FenceAction, to FenceState) bool {
				return !a.Terminal() || FenceStateName(to.J[a.Key]) == a.Outcome
			},
		},
		{
			Name: "a durable success has its effect", Spec: "WRK-045, WRK-060",
			State: func(s FenceState) bool {
				for k := 0; k < keys; k++ {
					if s.J[k] == FenceSucceeded && s.Effects[k] == 0 {
						return false
					}
				}
				return true
			},
		},
		{
			Name: "live leases are distinct and never above the fence", Spec: "STO-026, WRK-015, WRK-073",
			State: func(s FenceState) bool {
				seen := map[uint8]bool{}
				for _, w := range s.W {
					if w.Phase < FenceIdle {
						continue
					}
					if seen[w.Lease] || w.Lease > s.Fence || w.Lease == 0 {
						return false
					}
					seen[w.Lease] = true
				}
				return true
			},
		},
	}
}
