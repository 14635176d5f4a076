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
		if e.op == op && slices.Contains(e.hows, how) {
			return s, true
		}
	}
	return Symbol{}, false
}

// entry is one command of the alphabet: its weight, the feature it needs and its behaviours.
type entry struct {
	op     string
	need   string
	weight int
	hows   []string
}

var exchangeHows = []string{howAnswer, howAnswer, howAnswer, howAnswer, howAnswer, howAnswer, howLate, howSilent, howExit, howCrash, howForged, howWrongSeq, howInvalid}

// entries is the alphabet (EXP-015), in its order.
var entries = []entry{
	{"start", featInvoke, 3, []string{"", "", "", "", howBadScope}},
	{"invoke", featInvoke, 3, append(slices.Clone(exchangeHows), howDenied)},
	{"close", featInvoke, 2, []string{""}},
	{"wait", featInvoke, 1, []string{""}},
	{"bogus", featInvoke, 1, []string{""}},
	{"dispatch", featDurable, 2, append(slices.Clone(exchangeHows), howBigNum)},
	{"reconcile", featDurable, 1, []string{howAnswer, howRefuse, howSilent}},
	{"step", featRecover, 4, append(slices.Clone(exchangeHows), howBigNum)},
	{"recover", featRecover, 4, []string{howAnswer, howAnswer, howRefuse, howSilent, howExit}},
	{"restart", featRecover, 2, []string{"", "", howLose}},
	{"compensate", featCompensate, 3, []string{howAnswer, howAnswer, howSilent, howExit}},
	{"start", featCancel, 2, []string{howCancel}},
	{"begin", featCancel, 2, []string{howAnswer}},
	{"cancel", featCancel, 2, []string{howAck, howAck, howTooLate, howSilent}},
	{"finish", featCancel, 2, []string{howAnswer, howAnswer, howAnswer, howSilent}},
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
// and begins a fresh session first, and the same arguments give the same sequence.
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
	cancellable := slices.Contains(features, featCancel)
	for len(out) < n && total > 0 {
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

// durableOps are the commands that use a session's durable exchange.
var durableOps = map[string]bool{"dispatch": true, "reconcile": true, "step": true, "recover": true, "compensate": true}

// simpler returns the simpler variants of a symbol, for shrinking: the correct answer first.
func simpler(s Symbol) []Symbol {
	switch s.How {
	case "", howAnswer:
		return nil
	case howBadScope, howLose, howCancel:
		return []Symbol{{Op: s.Op}}
	case howDenied, howAck, howTooLate, howBigNum:
		return []Symbol{{s.Op, howAnswer}}
	}
	if s.Op == "restart" || s.Op == "start" {
		return nil
	}
	return []Symbol{{s.Op, howAnswer}}
}
