package hostexplore

import (
	"math/rand/v2"
	"slices"
	"strings"
)

// Driver features (HDR-010).
const (
	featInvoke     = "invoke"
	featDurable    = "durable"
	featRecover    = "recover"
	featCompensate = "compensate"
	featCancel     = "cancel"
)

// Worker behaviours: how the fake worker answers the request a command makes the host send.
const (
	howAnswer   = "answer"      // the correct answer at once
	howLate     = "late"        // the correct answer after the exchange deadline
	howSilent   = "silent"      // no answer
	howExit     = "exit3"       // exit with status 3, no answer
	howCrash    = "crash"       // half an answer line, then exit
	howForged   = "forged"      // an answer whose tag does not verify
	howWrongSeq = "wrongseq"    // an answer sealed one sequence number ahead
	howRefuse   = "refuse"      // exit with status 5 (a refused reconciliation, HDR-055)
	howInvalid  = "invalid"     // a well-sealed answer that fails validation
	howDenied   = "denied"      // (invoke) a tool the manifest does not grant: the host must refuse it unsent
	howBadScope = "badscope"    // (start) a scope that is not an identifier token: nothing may start
	howLose     = "lose"        // (restart) the input store emptied while no driver runs (HDR-056)
	howCancel   = "cancellable" // (start) a cancellable session (HDR-028)
	howAck      = "ack"         // (cancel) the running invocation acknowledged as cancelled
	howTooLate  = "toolate"     // (cancel) the result first, then too_late
	howBigNum   = "bignum"      // (dispatch, step) an input holding 2^64, which a binary64 reader changes
	howHugeNum  = "hugenum"     // (dispatch) an input holding 1e400, past binary64 and no integer
	howIndex    = "index"       // (dispatch, step, reconcile) the answer's state tag as its variant index (ENC-051)
	howTooBig   = "toobig"      // (invoke) an input over the grant's max_input_bytes: refused unsent
	howOverlong = "overlong"    // (invoke) an answer line that passes 1 MiB in bytes and never ends
	howHang     = "hang"        // (close) the worker never ends its output after close_session
	howOther    = "otherscope"  // (start) a second journal scope
	howPatient  = "patient"     // (start) a long exchange deadline, for an answer line that takes time to judge
	howFlood    = "flood"       // (invoke, begin) the session's identities filled in one step (AUZ-006, TRN-112)
)

// Symbol is one abstract command of a host-exploration sequence: a driver command (or
// "restart", the driver process killed and started again on the same state directory) and
// the fake worker's behaviour for the request it leads to. Its text form is "op" or "op:how".
type Symbol struct{ Op, How string }

// String returns the text form of s.
func (s Symbol) String() string {
	if s.How == "" {
		return s.Op
	}
	return s.Op + ":" + s.How
}

// ParseSymbol reads the text form of a symbol; ok is false for a symbol outside the alphabet.
func ParseSymbol(text string) (Symbol, bool) {
	op, how, _ := strings.Cut(text, ":")
	s := Symbol{op, how}
	for _, e := range entries {
		if e.op == op && (slices.Contains(e.hows, how) || slices.Contains(e.rare, how)) {
			return s, true
		}
	}
	return Symbol{}, false
}

// entry is one command of the alphabet: its weight, the feature it needs, the behaviours the
// random draw chooses from and those only chains (see chains) use.
type entry struct {
	op     string
	need   string
	weight int
	hows   []string
	rare   []string
}

var exchangeHows = []string{howAnswer, howAnswer, howAnswer, howAnswer, howAnswer, howAnswer, howLate, howSilent, howExit, howCrash, howForged, howWrongSeq, howInvalid}

// entries is the alphabet (EXP-015), in its order.
var entries = []entry{
	{"start", featInvoke, 3, []string{"", "", "", "", howBadScope, howOther}, []string{howPatient}},
	{"invoke", featInvoke, 3, append(slices.Clone(exchangeHows), howDenied, howTooBig), []string{howOverlong, howFlood}},
	{"close", featInvoke, 2, []string{""}, []string{howHang}},
	{"wait", featInvoke, 1, []string{""}, nil},
	{"bogus", featInvoke, 1, []string{""}, nil},
	{"dispatch", featDurable, 2, append(slices.Clone(exchangeHows), howBigNum, howHugeNum, howIndex), nil},
	{"reconcile", featDurable, 1, []string{howAnswer, howRefuse, howSilent, howIndex}, nil},
	{"step", featRecover, 4, append(slices.Clone(exchangeHows), howBigNum, howIndex), nil},
	{"recover", featRecover, 4, []string{howAnswer, howAnswer, howRefuse, howSilent, howExit}, nil},
	{"restart", featRecover, 2, []string{"", "", howLose}, nil},
	{"compensate", featCompensate, 3, []string{howAnswer, howAnswer, howSilent, howExit}, nil},
	{"start", featCancel, 2, []string{howCancel}, nil},
	{"begin", featCancel, 2, []string{howAnswer}, []string{howFlood}},
	{"cancel", featCancel, 2, []string{howAck, howAck, howTooLate, howSilent}, nil},
	{"finish", featCancel, 2, []string{howAnswer, howAnswer, howAnswer, howSilent}, nil},
}

// Alphabet returns the commands a driver with features may be sent (EXP-015, HDR-011).
func Alphabet(features []string) []string {
	var out []string
	for _, e := range entries {
		if slices.Contains(features, e.need) {
			out = append(out, e.op)
		}
	}
	return out
}

// Draw returns a sequence of n symbols drawn from seed over the commands features admit. It
// always starts with a start, follows every restart with a start, gives most durable commands
// and begins a fresh session first, and the same arguments give the same sequence. Sequence
// stream opens with the chain stream picks in turn (see chains), so that every chain the
// features admit runs within the first sequences of a run; further chains come at random
// among the single commands.
func Draw(seed uint64, stream uint64, features []string, n int) []Symbol {
	rng := rand.New(rand.NewPCG(seed, stream))
	var pool []entry
	total := 0
	for _, e := range entries {
		if slices.Contains(features, e.need) {
			pool = append(pool, e)
			total += e.weight
		}
	}
	out := []Symbol{{Op: "start"}}
	admitted := chainsFor(features)
	if len(admitted) > 0 {
		// The chain's own start, when it opens with one, is the sequence's.
		if first := admitted[(seed+stream)%uint64(len(admitted))].build(rng, nil); first[0].Op == "start" {
			out = first
		} else {
			out = append(out, first...)
		}
	}
	cancellable := slices.Contains(features, featCancel)
	for len(out) < n && total > 0 {
		if len(admitted) > 0 && rng.IntN(8) == 0 {
			out = admitted[rng.IntN(len(admitted))].build(rng, out)
			continue
		}
		x := rng.IntN(total)
		for _, e := range pool {
			if x < e.weight {
				s := Symbol{e.op, e.hows[rng.IntN(len(e.hows))]}
				// A session carries one durable exchange (TRN-113) and only a cancellable one
				// runs begin: most such commands get a fresh session of their own first, so
				// that sequences reach deep ledger and cancellation states; the rest test the
				// refusals.
				switch {
				case durableOps[s.Op] && rng.IntN(5) > 0:
					out = append(out, Symbol{Op: "start"})
				case s.Op == "begin" && cancellable && rng.IntN(4) > 0:
					out = append(out, Symbol{Op: "start", How: howCancel})
				}
				out = append(out, s)
				if s.Op == "restart" {
					// A restarted driver has no session: the next command starts one.
					out = append(out, Symbol{Op: "start"})
				}
				break
			}
			x -= e.weight
		}
	}
	return out[:min(len(out), n)]
}

// chain is a short command chain that reaches a deep state of the host's ledger, transport or
// cancellation machine, which single commands drawn at random reach too rarely within a run's
// budget: a session poisoned and used again, an uncertain step whose input is lost across a
// restart, a compensation approved twice, a refusal remembered over a restart, a budget spent.
type chain struct {
	name  string
	needs []string
	// build appends the chain's commands to out, its behaviours drawn from rng.
	build func(rng *rand.Rand, out []Symbol) []Symbol
}

// one returns one of hows, drawn from rng.
func one(rng *rand.Rand, hows ...string) string { return hows[rng.IntN(len(hows))] }

// syms reads symbols from their text forms; it is for the chains' constant parts.
func syms(texts ...string) []Symbol {
	out := make([]Symbol, len(texts))
	for i, t := range texts {
		op, how, _ := strings.Cut(t, ":")
		out[i] = Symbol{op, how}
	}
	return out
}

// repeat returns n copies of the symbols of texts, in order.
func repeat(n int, texts ...string) []Symbol {
	var out []Symbol
	for range n {
		out = append(out, syms(texts...)...)
	}
	return out
}

// chains are the command chains of the draw (EXP-020), in a fixed order.
var chains = []chain{
	{"cancel-unanswered", []string{featCancel}, func(rng *rand.Rand, out []Symbol) []Symbol {
		// A cancel or finish whose worker never answers: the wait passes the deadline and the
		// worker's whole group must be stopped (HDR-045, HDR-051).
		return append(out, syms("start:cancellable", "begin:answer", "cancel:silent", "start:cancellable", "begin:answer", "finish:silent")...)
	}},
	{"close-cancellable", []string{featCancel}, func(rng *rand.Rand, out []Symbol) []Symbol {
		// close_session whose output never ends: the close answers an error within the
		// deadline with the worker's group stopped; then a close after a finished invocation,
		// answered once the output ended (HDR-023, HDR-052).
		return append(out, syms("start:cancellable", "close:hang", "start:cancellable", "begin:answer", "finish:answer", "close")...)
	}},
	{"ordinary-ends", []string{featInvoke}, func(rng *rand.Rand, out []Symbol) []Symbol {
		// An ordinary session's ends: an exchange the worker never answers in time, stopped at
		// the deadline (RUN-200); a worker that exits by itself, or at the end of its input,
		// whose status wait reports (HDR-024).
		out = append(out, Symbol{Op: "start"}, Symbol{"invoke", one(rng, howSilent, howLate)})
		return append(out, syms("start", "invoke:exit3", "wait", "start", "close", "wait")...)
	}},
	{"second-durable", []string{featDurable, featRecover}, func(rng *rand.Rand, out []Symbol) []Symbol {
		// Two durable commands on one session: the second is refused unsent (TRN-113).
		return append(out, Symbol{Op: "start"}, Symbol{one(rng, "dispatch", "step"), howAnswer}, Symbol{one(rng, "dispatch", "reconcile", "step"), howAnswer})
	}},
	{"poisoned-reuse", []string{featInvoke}, func(rng *rand.Rand, out []Symbol) []Symbol {
		// A failed exchange whose worker the host need not stop (a forged or out-of-sequence
		// answer), then more requests on the session (FRM-036, TRN-003).
		return append(out, Symbol{Op: "start"}, Symbol{"invoke", one(rng, howForged, howWrongSeq)}, Symbol{"invoke", howAnswer}, Symbol{"invoke", howAnswer})
	}},
	{"budget", []string{featInvoke}, func(rng *rand.Rand, out []Symbol) []Symbol {
		// An invocation of a granted tool refused for its size spends no call; max_calls is
		// enforced before sending (AUZ-007, AUZ-008, AUZ-010).
		out = append(out, syms("start", "invoke:toobig")...)
		return append(out, repeat(echoMaxCalls+1, "invoke:answer")...)
	}},
	{"overlong-line", []string{featInvoke}, func(rng *rand.Rand, out []Symbol) []Symbol {
		// An answer line past 1 MiB is refused at the bound, counted in bytes (FRM-003).
		return append(out, syms("start:patient", "invoke:overlong")...)
	}},
	{"numbers", []string{featDurable}, func(rng *rand.Rand, out []Symbol) []Symbol {
		// Inputs with numbers a reformatting host changes or must refuse (ENC-034, HDR-047),
		// and an answer whose state tag is its variant index (ENC-051).
		return append(out, syms("start", "dispatch:hugenum", "start", "dispatch:bignum", "start", "dispatch:index")...)
	}},
	{"lost-step", []string{featRecover}, func(rng *rand.Rand, out []Symbol) []Symbol {
		// An uncertain step whose kept input is lost over a restart: its recovery sends
		// nothing (HDR-050, HDR-056).
		return append(out, append(syms("start"), append([]Symbol{{"step", one(rng, howSilent, howExit, howCrash)}}, syms("restart:lose", "start", "recover:answer")...)...)...)
	}},
	{"refusal-restart", []string{featRecover}, func(rng *rand.Rand, out []Symbol) []Symbol {
		// A refused reconciliation remembered over a restart: the next recover sends the
		// recorded dispatch (WFL-043, HDR-055).
		return append(out, append([]Symbol{{Op: "start"}, {"step", one(rng, howSilent, howExit)}}, syms("start", "recover:refuse", "restart", "start", "recover:answer")...)...)
	}},
	{"reconcile-failed", []string{featRecover}, func(rng *rand.Rand, out []Symbol) []Symbol {
		// A reconciliation that failed without a refusal (no answer, or an exit with another
		// status): the next recover reconciles again (WFL-043, HDR-055).
		out = append(out, Symbol{Op: "start"}, Symbol{"step", one(rng, howSilent, howExit)}, Symbol{Op: "start"}, Symbol{"recover", one(rng, howSilent, howExit)})
		return append(out, syms("start", "recover:answer")...)
	}},
	{"step-index", []string{featRecover}, func(rng *rand.Rand, out []Symbol) []Symbol {
		// A step answered with a variant-index state tag, reported as its status (ENC-051).
		return append(out, syms("start", "step:index")...)
	}},
	{"compensate-twice", []string{featCompensate, featRecover}, func(rng *rand.Rand, out []Symbol) []Symbol {
		// One compensation per operation (WFL-011, HDR-044).
		return append(out, syms("start", "step:answer", "start", "compensate:answer", "start", "compensate:answer")...)
	}},
	{"compensate-after-restart", []string{featCompensate, featRecover}, func(rng *rand.Rand, out []Symbol) []Symbol {
		// One compensation per operation, even from a restarted driver (WFL-011, HDR-044).
		return append(out, syms("start", "step:answer", "start", "compensate:answer", "restart", "start", "compensate:answer")...)
	}},
	{"compensate-input-lost", []string{featCompensate, featRecover}, func(rng *rand.Rand, out []Symbol) []Symbol {
		// A compensation whose answer was lost, and its input lost over a restart: its
		// recovery sends nothing (HDR-050, HDR-056).
		out = append(out, syms("start", "step:answer", "start")...)
		out = append(out, Symbol{"compensate", one(rng, howSilent, howExit)})
		return append(out, syms("restart:lose", "start", "recover:answer")...)
	}},
	{"compensate-other-scope", []string{featCompensate, featRecover}, func(rng *rand.Rand, out []Symbol) []Symbol {
		// A compensation whose answer was lost, recovered on a session of another scope: it
		// keeps its key and tenant (WFL-026, HDR-043).
		out = append(out, syms("start", "step:answer", "start")...)
		out = append(out, Symbol{"compensate", one(rng, howSilent, howExit)})
		return append(out, syms("start:otherscope", "recover:answer")...)
	}},
	{"refund", []string{featCancel}, func(rng *rand.Rand, out []Symbol) []Symbol {
		// A cancelled call stays charged: the call over max_calls is refused (AUZ-011).
		out = append(out, Symbol{"start", howCancel})
		return append(out, repeat(echoMaxCalls+1, "begin:answer", "cancel:ack")...)
	}},
	{"identities", []string{featInvoke}, func(rng *rand.Rand, out []Symbol) []Symbol {
		// The session's identities filled: the invocation past them refused unsent (AUZ-006).
		return append(out, syms("start", "invoke:flood")...)
	}},
	{"identities-cancellable", []string{featCancel}, func(rng *rand.Rand, out []Symbol) []Symbol {
		// On a cancellable session the invocation begun on the last free identity has no slot
		// for its cancellation, which is refused and the worker contained (TRN-112, HDR-045).
		return append(out, syms("start:cancellable", "begin:flood", "begin:answer", "cancel:ack", "finish:answer", "begin:answer", "cancel:ack")...)
	}},
	{"second-cancel", []string{featCancel}, func(rng *rand.Rand, out []Symbol) []Symbol {
		// A second cancel of one target is refused without a frame and leaves the worker
		// running (AUZ-016, HDR-045).
		return append(out, append(syms("start:cancellable", "begin:answer"), Symbol{"cancel", one(rng, howAck, howTooLate)}, Symbol{"cancel", howAck})...)
	}},
}

// chainsFor returns the chains whose commands features admit.
func chainsFor(features []string) []chain {
	var out []chain
	for _, c := range chains {
		if !slices.ContainsFunc(c.needs, func(f string) bool { return !slices.Contains(features, f) }) {
			out = append(out, c)
		}
	}
	return out
}

// durableOps are the commands that use a session's durable exchange.
var durableOps = map[string]bool{"dispatch": true, "reconcile": true, "step": true, "recover": true, "compensate": true}

// simpler returns the simpler variants of a symbol, for shrinking: the correct answer first.
func simpler(s Symbol) []Symbol {
	switch s.How {
	case "", howAnswer:
		return nil
	case howBadScope, howLose, howCancel:
		return []Symbol{{Op: s.Op}}
	case howOther, howPatient, howHang:
		return []Symbol{{Op: s.Op}}
	case howDenied, howAck, howTooLate, howBigNum, howHugeNum, howIndex, howTooBig, howOverlong, howFlood:
		return []Symbol{{s.Op, howAnswer}}
	}
	if s.Op == "restart" || s.Op == "start" {
		return nil
	}
	return []Symbol{{s.Op, howAnswer}}
}
