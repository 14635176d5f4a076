package hostexplore

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance/conformancetest"
)

// parseAll reads a sequence of symbols written as text.
func parseAll(t *testing.T, text string) []Symbol {
	t.Helper()
	var out []Symbol
	for _, f := range strings.Fields(text) {
		s, ok := ParseSymbol(f)
		if !ok {
			t.Fatalf("%q is not a symbol", f)
		}
		out = append(out, s)
	}
	return out
}

// Spec: EXP-020 — sequence i opens with chain (seed + i) mod n, so that every chain runs within
// the first n sequences; every chain's symbols are in the alphabet and its commands in the
// features it names.
func TestChainsOpenTheFirstSequences(t *testing.T) {
	all := []string{featInvoke, featDurable, featCancel, featRecover, featCompensate}
	admitted := chainsFor(all)
	if len(admitted) != len(chains) {
		t.Fatalf("%d of %d chains for a driver with every feature", len(admitted), len(chains))
	}
	for i, c := range admitted {
		for seed := range uint64(4) {
			body := c.build(rand.New(rand.NewPCG(seed, 99)), nil)
			for _, s := range body {
				if _, ok := ParseSymbol(s.String()); !ok {
					t.Errorf("chain %s: %s is not in the alphabet", c.name, s)
				}
				if need := needOf(s.Op); !strings.Contains(strings.Join(c.needs, ","), need) && need != featInvoke {
					t.Errorf("chain %s needs %v but draws %s (feature %s)", c.name, c.needs, s, need)
				}
			}
			stream := (uint64(i) + uint64(len(admitted)) - seed%uint64(len(admitted))) % uint64(len(admitted))
			seq := Draw(seed, stream, all, 200)
			if seq[0].Op != "start" {
				t.Errorf("seed %d stream %d starts with %s", seed, stream, seq[0])
			}
			// The chain's body with its behaviours drawn from the sequence's own generator.
			want := c.build(rand.New(rand.NewPCG(seed, stream)), nil)
			if want[0].Op != "start" {
				want = append([]Symbol{{Op: "start"}}, want...)
			}
			if got := seq[:len(want)]; symbolsText(got) != symbolsText(want) {
				t.Errorf("seed %d stream %d opens with %s, want chain %s: %s", seed, stream, symbolsText(got), c.name, symbolsText(want))
			}
		}
	}
}

// Spec: EXP-016, EXP-020 — each chain, with each of its behaviours, passes against the
// reference driver: the invariants the chains reach raise no false alarm.
func TestChainsPassAgainstTheReference(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every chain against the reference driver")
	}
	cfg := testConfig(t, conformancetest.Program(t, conformancetest.DriverPackage))
	seen := map[string]bool{}
	for _, c := range chains {
		for seed := range uint64(6) {
			syms := c.build(rand.New(rand.NewPCG(seed, 7)), nil)
			text := symbolsText(syms)
			if seen[text] {
				continue
			}
			seen[text] = true
			seq, err := Run(cfg, syms)
			if err != nil {
				t.Fatal(err)
			}
			if seq.Violation != nil {
				t.Errorf("chain %s (%s): %v\n%s", c.name, text, seq.Violation, strings.Join(seq.Transcript, "\n"))
			}
		}
	}
}

// Spec: EXP-016, EXP-020 — the faults of the reference driver that only a chain reaches are
// found by it, each by the invariant that states the rule it breaks.
func TestChainsFindTheirFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the faulty driver")
	}
	bin := conformancetest.Program(t, conformancetest.DriverPackage, "splashfaults")
	for _, c := range []struct{ fault, syms, invariant string }{
		{"budget-early", "start invoke:toobig invoke:answer invoke:answer invoke:answer invoke:answer", "authorized"},
		{"refund", "start:cancellable begin:answer cancel:ack begin:answer cancel:ack begin:answer cancel:ack begin:answer cancel:ack begin:answer", "authorized"},
		{"overlimit", "start invoke:flood", "authorized"},
		{"nocontain", "start:cancellable begin:flood begin:answer cancel:ack finish:answer begin:answer cancel:ack", "contained"},
		{"refusal-contains", "start:cancellable begin:answer cancel:ack cancel:ack", "cancel"},
		{"nocontain-close", "start:cancellable close:hang", "contained"},
		{"noclose", "start:cancellable close", "cancel"},
		{"charcount", "start:patient invoke:overlong", "line-bound"},
		{"readall", "start:patient invoke:overlong", "line-bound"},
		{"keyinputs", "start step:answer", "keys-derived"},
		{"plan-fixed", "start step:answer", "keys-derived"},
		{"intsonly", "start dispatch:hugenum", "portable-numbers"},
		{"lossycmd", "start dispatch:answer", "request-as-given"},
		{"lossy-compensate", "start step:answer start compensate:answer", "request-as-given"},
		{"rebind", "start step:answer start compensate:silent start:otherscope recover:answer", "compensate-once"},
		{"lostinput-send", "start step:answer start compensate:silent restart:lose start recover:answer", "compensate-once"},
		{"inputs-here", "start step:silent restart:lose start recover:answer", "lost-input"},
		{"memonce", "start step:answer start compensate:answer restart start compensate:answer", "compensate-once"},
		{"recompensate", "start step:answer start compensate:answer start compensate:answer", "compensate-once"},
		{"refusal-memory", "start step:silent start recover:refuse restart start recover:answer", "refusal-honoured"},
	} {
		t.Run(c.fault, func(t *testing.T) {
			cfg := testConfig(t, bin, "SPLASH_HOST_FAULT="+c.fault)
			seq, err := Run(cfg, parseAll(t, c.syms))
			if err != nil {
				t.Fatal(err)
			}
			if v := seq.Violation; v == nil || v.Invariant != c.invariant {
				t.Errorf("%s: %v, want a violation of %s\n%s", c.syms, v, c.invariant, strings.Join(seq.Transcript, "\n"))
			}
		})
	}
}
