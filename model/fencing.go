package model

import (
	"fmt"
	"strings"
)

// This file models journal admission and fencing across several worker processes that share
// one journal (chapters 10, 12 and 13), and the effect system their adapters act on. Each
// process loads the journal, is admitted with a freshly reserved fencing token, dispatches,
// reconciles and compensates operations through the persistence points of flows B, C and D,
// and may crash between any two atomic steps. The store is the fenced compare-and-swap of the
// storage chapter. The effect system is the outside world: it survives every crash, and with
// effect fencing (STO-072, STO-073) it keeps, per operation key, the highest fencing token it
// was shown and refuses a lower one. A process exits after any error it reports (WRK-091), and
// a restart is a new process with a new session and a new lease.
//
// Two writers are modelled. The protocol's writer (WRK-071) ends the process on any failed
// write, so its revision check alone already orders it against every other writer. A retrying
// writer re-reads the record after a failed or indeterminate write (STO-080) and writes its own
// operation record again over what it read: its revision no longer orders it against a newer
// writer, and only the fence keeps a superseded retrying writer out. Such a writer loads its
// journal after its fence is reserved, so that no older writer can change the record under it.
//
// The host is modelled by what it was told: it compensates only an operation it was answered
// "succeeded", and the answers it received are the protocol's promises that the journal must
// never contradict.

// Limits of the fencing model's arrays.
const (
	FenceMaxWorkers = 3
	FenceMaxKeys    = 3
)

// FenceNoKey is the Key of a worker with no flow in progress. It is no key's number, so that
// renaming the keys leaves it alone: a stale key number would make a down or idle worker
// differ from a renaming of it (a state the model's symmetry reduction must not merge with it).
const FenceNoKey uint8 = FenceMaxKeys

// Record states of the fencing model's journals: the operation's state, and for a succeeded
// operation its compensation's.
const (
	FenceAbsent      uint8 = iota
	FencePending           // the operation is pending
	FenceSucceeded         // the operation succeeded; no compensation
	FenceFailed            // the operation failed
	FenceCompPending       // the operation succeeded; its compensation is pending
	FenceCompensated       // the operation succeeded; its compensation succeeded
)

// Phases of one worker process.
const (
	FenceDown      uint8 = iota // no process
	FenceLoaded                 // the journal and its revision were loaded; not admitted yet
	FenceIdle                   // an open session with a lease, between frames
	FencePersist1               // a dispatch added a pending record in memory; its persist is next
	FenceEffect                 // the pending record is durable; the adapter acts next
	FencePersist2               // the adapter's status is observed in memory; its persist is next
	FencePersistR               // a reconciliation observed a status in memory; its persist is next
	FencePersistC1              // a compensation was admitted in memory; its persist is next
	FenceUndo                   // the pending compensation is durable; the adapter undoes next
	FencePersistC2              // the compensation's status is observed; its persist is next
	FenceAnswer                 // the flow's last persist succeeded; the answer is not sent yet
)

// Flows of a worker process (FenceWorker.Flow).
const (
	FlowDispatch uint8 = iota + 1
	FlowReconcile
	FlowCompensate
)

// Kinds of FenceAction.
const (
	FenceStart      = "start"      // a new process loads the journal and its revision
	FenceAdmit      = "admit"      // admission reserves a fencing token; the session opens
	FenceDispatch   = "dispatch"   // the host sends dispatch_operation for Key
	FenceReconcile  = "reconcile"  // the host sends reconcile_operation for Key
	FenceCompensate = "compensate" // the host sends compensate_operation for Key
	FencePersist    = "persist"    // the session's next persist reaches the store
	FenceRunEffect  = "effect"     // the adapter performs the operation's effect
	FenceRunUndo    = "undo"       // the adapter performs the compensation's effect
	FenceSend       = "answer"     // the session sends the answer of a flow whose journal is durable
	FenceCrash      = "crash"      // the process dies
)

// Outcomes of FenceAction besides the answers ("succeeded", "failed", "compensated").
const (
	FenceOK            = "ok"
	FenceRetried       = "retry"         // the retrying writer re-read the record after a conflict
	FenceIndeterminate = "indeterminate" // the write took effect, but the writer was not told
	FenceRefused       = "EffectRefused" // the effect system refused a superseded token
	FenceRejected      = "FencingTokenRejected"
	FenceConflict      = "WriteConflict"
	FenceProtocol      = "Protocol"
	FencePendingOp     = "PendingOperation"
	FencePendingComp   = "PendingCompensation"
	FenceAnsCompensate = "compensated"
)

// FenceWorker is one worker process.
type FenceWorker struct {
	Phase uint8
	Lives uint8 // processes started in this slot
	Lease uint8
	Rev   uint8
	Key   uint8 // the key of the flow in progress, or FenceNoKey
	Flow  uint8
	Recs  uint8 // reconciliations this session ran
	J     [FenceMaxKeys]uint8
}

// FenceState is one state of the fencing model.
type FenceState struct {
	// The store: the journal record's revision, its current fence and its payload.
	Rev, Fence uint8
	J          [FenceMaxKeys]uint8
	// The effect system, which survives every crash: effects and compensating effects per
	// key, and with effect fencing the highest token it was shown per key.
	Effects, Undos, Sink [FenceMaxKeys]uint8
	// Answered holds, per key, one bit (1 << record state) for every terminal status the host
	// was answered.
	Answered [FenceMaxKeys]uint8
	// Timeouts counts the indeterminate writes so far.
	Timeouts uint8
	W        [FenceMaxWorkers]FenceWorker
}

// FenceAction is one transition of the fencing model. Outcome is what the model predicts:
// "ok" for a step without an answer, the answer sent to the host ("succeeded", "failed",
// "compensated"), or the error that ends the process.
type FenceAction struct {
	Worker  int
	Kind    string
	Key     int
	Outcome string
}

// String renders the action as "w1 persist -> WriteConflict".
func (a FenceAction) String() string {
	s := fmt.Sprintf("w%d %s", a.Worker, a.Kind)
	switch a.Kind {
	case FenceDispatch, FenceReconcile, FenceCompensate:
		s += fmt.Sprintf(" k%d", a.Key)
	}
	return s + " -> " + a.Outcome
}

// Input is the action without its prediction.
func (a FenceAction) Input() string {
	s := a.String()
	return s[:strings.Index(s, " -> ")]
}

// Answer reports the record state a terminal answer tells the host, or FenceAbsent.
func (a FenceAction) Answer() uint8 {
	switch a.Outcome {
	case "succeeded":
		return FenceSucceeded
	case "failed":
		return FenceFailed
	case FenceAnsCompensate:
		return FenceCompensated
	}
	return FenceAbsent
}

// Fencing is the configuration of the fencing model: Workers process slots (1 to 3), Keys
// operation keys (1 to 3), at most Lives processes per slot, and Reconciles reconciliations per
// session (its budget, WRK-061; 0 means 1), which bounds the revisions. Retry selects the retrying
// writer, with at most Timeouts indeterminate writes; EffectFencing the effect system that
// refuses a superseded token (STO-072, STO-073).
type Fencing struct {
	Workers, Keys, Lives int
	Reconciles           int
	Retry                bool
	Timeouts             int
	EffectFencing        bool
}

func (c Fencing) reconciles() int { return max(c.Reconciles, 1) }

// FenceStateName names a record state.
func FenceStateName(s uint8) string {
	return [...]string{"absent", "pending", "succeeded", "failed", "compensation-pending", "compensated"}[s]
}

// FenceReaches reports whether record state from is to or precedes it: a record only moves
// from absent to pending, to succeeded or failed, and from succeeded through a pending
// compensation to compensated.
func FenceReaches(from, to uint8) bool {
	if from == to || from == FenceAbsent {
		return true
	}
	switch from {
	case FencePending:
		return to != FenceAbsent
	case FenceSucceeded:
		return to == FenceCompPending || to == FenceCompensated
	case FenceCompPending:
		return to == FenceCompensated
	}
	return false
}

// opStatus is the operation's own status in a record state, as a reconciliation reports it.
func opStatus(s uint8) uint8 {
	if s == FenceCompPending || s == FenceCompensated {
		return FenceSucceeded
	}
	return s
}

// keyPerms lists the permutations of 1, 2 and 3 keys.
var keyPerms = [...][][FenceMaxKeys]uint8{
	1: {{0, 1, 2}},
	2: {{0, 1, 2}, {1, 0, 2}},
	3: {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}},
}

// Key is the canonical encoding of a state. Worker slots are interchangeable, and so are
// operation keys, so the key is the least encoding over every permutation of the keys with
// the slots sorted: states that differ only by renaming slots or keys share one key (symmetry
// reduction). Every invariant is symmetric in slots and keys.
func (c Fencing) Key(s FenceState) string {
	best := ""
	for i, p := range keyPerms[c.Keys] {
		if k := c.encode(s, p); i == 0 || k < best {
			best = k
		}
	}
	return best
}

// encode is the encoding of s with key k renamed p[k] and the slots sorted.
func (c Fencing) encode(s FenceState, p [FenceMaxKeys]uint8) string {
	const wlen = 7 + FenceMaxKeys
	perm := func(b []byte, a [FenceMaxKeys]uint8) []byte {
		var out [FenceMaxKeys]uint8
		for k := 0; k < c.Keys; k++ {
			out[p[k]] = a[k]
		}
		return append(b, out[:c.Keys]...)
	}
	b := make([]byte, 0, 3+5*FenceMaxKeys+FenceMaxWorkers*wlen)
	b = append(b, s.Rev, s.Fence, s.Timeouts)
	b = perm(b, s.J)
	b = perm(b, s.Effects)
	b = perm(b, s.Undos)
	b = perm(b, s.Sink)
	b = perm(b, s.Answered)
	var ws [FenceMaxWorkers][wlen]byte
	for i, w := range s.W {
		key := w.Key
		if key != FenceNoKey {
			key = p[key]
		}
		ws[i] = [wlen]byte{w.Phase, w.Lives, w.Lease, w.Rev, key, w.Flow, w.Recs}
		perm(ws[i][7:7], w.J)
	}
	// Insertion sort of at most three slots.
	for i := 1; i < c.Workers; i++ {
		for j := i; j > 0 && string(ws[j][:]) < string(ws[j-1][:]); j-- {
			ws[j], ws[j-1] = ws[j-1], ws[j]
		}
	}
	for i := 0; i < c.Workers; i++ {
		b = append(b, ws[i][:]...)
	}
	return string(b)
}

// Describe renders a state for a counterexample.
func (c Fencing) Describe(s FenceState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "store rev %d fence %d %s effects %v undos %v", s.Rev, s.Fence, c.journal(s.J), s.Effects[:c.Keys], s.Undos[:c.Keys])
	if c.EffectFencing {
		fmt.Fprintf(&b, " sink %v", s.Sink[:c.Keys])
	}
	b.WriteString(" answered [")
	for k := 0; k < c.Keys; k++ {
		var names []string
		for st := FenceSucceeded; st <= FenceCompensated; st++ {
			if s.Answered[k]&(1<<st) != 0 {
				names = append(names, FenceStateName(st))
			}
		}
		if k > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "k%d=%s", k, strings.Join(names, ","))
	}
	b.WriteString("] |")
	phases := [...]string{"down", "loaded", "idle", "persist1", "effect", "persist2", "persistR", "persistC1", "undo", "persistC2", "answer"}
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
		if t := a.Answer(); t != FenceAbsent {
			n.Answered[a.Key] |= 1 << t
		}
		out = append(out, Move[FenceState, FenceAction]{Action: a, Next: n})
	}
	for i := 0; i < c.Workers; i++ {
		w := s.W[i]
		if w.Phase == FenceDown {
			if int(w.Lives) < c.Lives {
				n := s
				n.W[i] = FenceWorker{Phase: FenceLoaded, Lives: w.Lives + 1, Rev: s.Rev, Key: FenceNoKey, J: s.J}
				emit(n, FenceAction{Worker: i, Kind: FenceStart, Outcome: FenceOK})
			}
			continue
		}
		// A crash is possible between any two atomic steps.
		emit(exit(s, i), FenceAction{Worker: i, Kind: FenceCrash, Outcome: FenceOK})
		switch w.Phase {
		case FenceLoaded:
			n := s
			n.Fence++ // STO-026: a fresh token strictly greater than the current one
			n.W[i].Lease, n.W[i].Phase = n.Fence, FenceIdle
			if c.Retry { // the retrying writer reads after its fence is reserved
				n.W[i].Rev, n.W[i].J = s.Rev, s.J
			}
			emit(n, FenceAction{Worker: i, Kind: FenceAdmit, Outcome: FenceOK})
		case FenceIdle:
			for k := 0; k < c.Keys; k++ {
				emit(c.dispatch(s, i, k))
				if w.J[k] != FenceAbsent && int(w.Recs) < c.reconciles() {
					emit(c.reconcile(s, i, k))
				}
				if s.Answered[k]&(1<<FenceSucceeded) != 0 {
					emit(c.compensate(s, i, k))
				}
			}
		case FenceEffect, FenceUndo:
			emit(c.act(s, i))
		case FencePersist1, FencePersist2, FencePersistR, FencePersistC1, FencePersistC2:
			emit(c.PersistStep(s, i, false))
			if c.Retry && int(s.Timeouts) < c.Timeouts && w.Lease == s.Fence && w.Rev == s.Rev {
				emit(c.PersistStep(s, i, true))
			}
		case FenceAnswer:
			n := s
			n.W[i].Phase, n.W[i].Key = FenceIdle, FenceNoKey
			answer := FenceAnsCompensate
			switch w.Flow {
			case FlowDispatch:
				answer = FenceStateName(w.J[w.Key])
			case FlowReconcile:
				answer = FenceStateName(opStatus(w.J[w.Key]))
			}
			emit(n, FenceAction{Worker: i, Kind: FenceSend, Key: int(w.Key), Outcome: answer})
		}
	}
	return out
}

// exit ends worker i's process.
func exit(s FenceState, i int) FenceState {
	s.W[i] = FenceWorker{Lives: s.W[i].Lives, Key: FenceNoKey}
	return s
}

// begin starts flow f on key k in worker i's memory with the record in state rec.
func begin(s FenceState, i, k int, f, phase, rec uint8) FenceState {
	w := &s.W[i]
	w.Key, w.Flow, w.Phase = uint8(k), f, phase
	w.J[k] = rec
	return s
}

// dispatch is the session's admission of a dispatch for key k (WRK-040, WRK-041).
func (c Fencing) dispatch(s FenceState, i, k int) (FenceState, FenceAction) {
	a := FenceAction{Worker: i, Kind: FenceDispatch, Key: k, Outcome: FenceOK}
	switch rec := s.W[i].J[k]; rec {
	case FenceAbsent:
		return begin(s, i, k, FlowDispatch, FencePersist1, FencePending), a
	case FencePending:
		a.Outcome = FencePendingOp // the error ends the process
		return exit(s, i), a
	default:
		a.Outcome = FenceStateName(opStatus(rec)) // the stored status, answered again
		return s, a
	}
}

// reconcile is flow D for a key in the session's journal (WRK-060): the adapter reports the
// operation's status from the effect system, which with effect fencing first records the
// session's token (STO-073); the journal observes it (JRN-017, JRN-018).
func (c Fencing) reconcile(s FenceState, i, k int) (FenceState, FenceAction) {
	a := FenceAction{Worker: i, Kind: FenceReconcile, Key: k, Outcome: FenceOK}
	n := s
	n.W[i].Recs++ // spent before the adapter runs (WRK-061)
	if c.EffectFencing && n.Sink[k] < s.W[i].Lease {
		n.Sink[k] = s.W[i].Lease
	}
	observed := FenceFailed // the profile reports the absence of an effect as failed
	if s.Effects[k] > 0 {
		observed = FenceSucceeded
	}
	rec := s.W[i].J[k]
	switch {
	case rec == FencePending:
		rec = observed
	case opStatus(rec) != observed:
		a.Outcome = FenceProtocol // a terminal record never changes (JRN-018)
		return exit(n, i), a
	}
	return begin(n, i, k, FlowReconcile, FencePersistR, rec), a
}

// compensate is flow C's admission (WRK-050, WRK-051, JRN-020).
func (c Fencing) compensate(s FenceState, i, k int) (FenceState, FenceAction) {
	a := FenceAction{Worker: i, Kind: FenceCompensate, Key: k, Outcome: FenceOK}
	switch s.W[i].J[k] {
	case FenceSucceeded:
		return begin(s, i, k, FlowCompensate, FencePersistC1, FenceCompPending), a
	case FenceCompPending:
		a.Outcome = FencePendingComp
	case FenceCompensated:
		a.Outcome = FenceAnsCompensate
		return s, a
	default: // the session's journal does not hold a succeeded operation
		a.Outcome = FenceProtocol
	}
	return exit(s, i), a
}

// act is the adapter acting on the effect system: the operation's effect or its
// compensation's. With effect fencing a token lower than one the effect system was shown for
// the key is refused, and the adapter's error ends the process.
func (c Fencing) act(s FenceState, i int) (FenceState, FenceAction) {
	w := s.W[i]
	k := w.Key
	a := FenceAction{Worker: i, Kind: FenceRunEffect, Key: int(k), Outcome: FenceOK}
	if w.Phase == FenceUndo {
		a.Kind = FenceRunUndo
	}
	if c.EffectFencing && w.Lease < s.Sink[k] {
		a.Outcome = FenceRefused
		return exit(s, i), a
	}
	n := s
	if c.EffectFencing {
		n.Sink[k] = w.Lease
	}
	nw := &n.W[i]
	if w.Phase == FenceEffect {
		n.Effects[k]++
		nw.J[k], nw.Phase = FenceSucceeded, FencePersist2
	} else {
		n.Undos[k]++
		nw.J[k], nw.Phase = FenceCompensated, FencePersistC2
	}
	return n, a
}

// PersistStep is worker i's persist reaching the store: a fenced compare-and-swap under its
// lease expecting its revision (STO-028, WRK-082). On success the flow moves on to the
// adapter or to its answer, which a crash may still prevent; with timeout the write takes
// effect but the writer is not told. The protocol's writer ends its process on any failure;
// the retrying writer re-reads the record after a conflict and writes its operation record
// again over what it read.
func (c Fencing) PersistStep(s FenceState, i int, timeout bool) (FenceState, FenceAction) {
	w := s.W[i]
	a := FenceAction{Worker: i, Kind: FencePersist, Key: int(w.Key)}
	n := s
	switch {
	case w.Lease != s.Fence:
		a.Outcome = FenceRejected
		return exit(n, i), a
	case w.Rev != s.Rev && c.Retry:
		nw := &n.W[i]
		nw.Rev, nw.J = s.Rev, s.J
		nw.J[w.Key] = w.J[w.Key]
		a.Outcome = FenceRetried
		return n, a
	case w.Rev != s.Rev:
		a.Outcome = FenceConflict
		return exit(n, i), a
	}
	n.J, n.Rev = w.J, s.Rev+1
	if timeout {
		n.Timeouts++
		a.Outcome = FenceIndeterminate
		return n, a
	}
	nw := &n.W[i]
	nw.Rev = n.Rev
	a.Outcome = FenceOK
	switch w.Phase {
	case FencePersist1:
		nw.Phase = FenceEffect
	case FencePersistC1:
		nw.Phase = FenceUndo
	default:
		nw.Phase = FenceAnswer
	}
	return n, a
}

// Initial is the initial state: an empty store and effect system, every worker down.
func (c Fencing) Initial() FenceState {
	var s FenceState
	for i := range s.W {
		s.W[i].Key = FenceNoKey
	}
	return s
}

// System returns the explorable system with its invariants.
func (c Fencing) System() System[FenceState, FenceAction] {
	return System[FenceState, FenceAction]{
		Name:       c.String(),
		Init:       []FenceState{c.Initial()},
		Next:       c.Next,
		Key:        c.Key,
		Describe:   c.Describe,
		Invariants: FencingInvariants(c.Keys),
	}
}

// String names the configuration.
func (c Fencing) String() string {
	s := fmt.Sprintf("fencing(workers=%d keys=%d lives=%d", c.Workers, c.Keys, c.Lives)
	if c.Retry {
		s += fmt.Sprintf(" retrying-writer timeouts=%d", c.Timeouts)
	}
	if c.EffectFencing {
		s += " fenced-effects"
	}
	return s + ")"
}

// Names of the fencing model's invariants.
const (
	InvOneEffect       = "every effect happens at most once"
	InvUndoAfterEffect = "a compensation undoes an effect that happened"
	InvSuccessEffect   = "a durable success has its effect"
	InvFailureNoEffect = "a durable failure has no effect"
	InvAnswers         = "no answer contradicts the journal"
	InvLeases          = "live leases are distinct and never above the fence"
)

// FencingInvariants are the safety properties of the fencing model over keys operation keys,
// stated in the protocol's terms: effects happen exactly once and only as the journal says,
// and no status the host was answered is ever contradicted by the durable journal.
func FencingInvariants(keys int) []Invariant[FenceState, FenceAction] {
	perKey := func(ok func(s FenceState, k int) bool) func(FenceState) bool {
		return func(s FenceState) bool {
			for k := 0; k < keys; k++ {
				if !ok(s, k) {
					return false
				}
			}
			return true
		}
	}
	return []Invariant[FenceState, FenceAction]{
		{
			Name: InvOneEffect, Spec: "WRK-041, WRK-042, WRK-051, WRK-052, WRK-083",
			State: perKey(func(s FenceState, k int) bool { return s.Effects[k] <= 1 && s.Undos[k] <= 1 }),
		},
		{
			Name: InvUndoAfterEffect, Spec: "WRK-050, JRN-020",
			State: perKey(func(s FenceState, k int) bool { return s.Undos[k] <= s.Effects[k] }),
		},
		{
			Name: InvSuccessEffect, Spec: "WRK-045, WRK-052, WRK-060",
			State: perKey(func(s FenceState, k int) bool {
				return opStatus(s.J[k]) != FenceSucceeded || s.Effects[k] > 0 && (s.J[k] != FenceCompensated || s.Undos[k] > 0)
			}),
		},
		{
			Name: InvFailureNoEffect, Spec: "STO-072, STO-073, WRK-060",
			State: perKey(func(s FenceState, k int) bool { return s.J[k] != FenceFailed || s.Effects[k] == 0 }),
		},
		{
			Name: InvAnswers, Spec: "WRK-042, WRK-046, WRK-052, WRK-071, WRK-083, WRK-091",
			State: perKey(func(s FenceState, k int) bool {
				for st := FenceSucceeded; st <= FenceCompensated; st++ {
					if s.Answered[k]&(1<<st) != 0 && !FenceReaches(st, s.J[k]) {
						return false
					}
				}
				return true
			}),
		},
		{
			Name: InvLeases, Spec: "STO-026, WRK-015, WRK-073",
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
