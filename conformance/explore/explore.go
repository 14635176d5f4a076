package explore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/explore/alphabet"
	"github.com/splashv5/conform/conformance/explore/learn"
	"github.com/splashv5/conform/conformance/explore/mealy"
	"github.com/splashv5/conform/conformance/explore/mutate"
	"github.com/splashv5/conform/conformance/explore/replay"
	"github.com/splashv5/conform/conformance/explore/shrink"
	"github.com/splashv5/conform/conformance/explore/walk"
	"github.com/splashv5/conform/impl/canonjson"
)

// Machine is a session machine over the worker alphabet.
type Machine = mealy.Machine[alphabet.Name, alphabet.Output]

// The results an exploration reports: one per method and level, so that expectations files,
// JUnit and the HTML report treat them as they treat the suites' checks.
const (
	IDStateMust   = "CNF-EXP-LEARN-01"
	IDStateShould = "CNF-EXP-LEARN-02"
	IDWalk        = "CNF-EXP-WALK-01"
	IDWalkShould  = "CNF-EXP-WALK-02"
	IDFuzz        = "CNF-EXP-FUZZ-01"
)

// catalog describes the results.
var catalog = []conformance.Result{
	{ID: IDStateMust, Level: conformance.Must, Title: "The learned session machine has no MUST difference from the reference worker's", Requirements: []string{"EXP-004", "EXP-005", "EXP-006", "EXP-007", "EXP-014"}},
	{ID: IDStateShould, Level: conformance.Should, Title: "The learned session machine ends the process in the reference worker's exit classes", Requirements: []string{"EXP-005", "WRK-097"}},
	{ID: IDWalk, Level: conformance.Must, Title: "Long random sessions agree step by step with the reference worker and keep the invariants; probe sessions agree with the reference worker run the same way", Requirements: []string{"EXP-009", "EXP-010", "EXP-019", "WRK-041", "WRK-071", "WRK-093"}},
	{ID: IDWalkShould, Level: conformance.Should, Title: "Random sessions end the process in the reference worker's exit classes", Requirements: []string{"EXP-005", "WRK-097"}},
	{ID: IDFuzz, Level: conformance.Must, Title: "Mutated frames inside live sessions are refused as the reference refuses them, without crash, hang, overlong line or leak", Requirements: []string{"EXP-011", "EXP-012", "EXP-013", "ERR-017"}},
}

// CatalogEntries returns the digest entries of the explorer's results.
func CatalogEntries() []conformance.CatalogEntry {
	out := make([]conformance.CatalogEntry, len(catalog))
	for i, r := range catalog {
		out[i] = conformance.CatalogEntry{ID: r.ID, Level: r.Level, Requirements: r.Requirements}
	}
	return out
}

// Suite describes the explorer as a suite of the framework.
func Suite() conformance.SuiteInfo { return conformance.NewSuiteInfo("explore", CatalogEntries()) }

// Method names an exploration method.
type Method string

// The methods.
const (
	MethodLearn Method = "learn"
	MethodWalk  Method = "walk"
	MethodFuzz  Method = "fuzz"
)

// Config is one exploration.
type Config struct {
	// Port runs words against the worker under test; Reference against the reference worker.
	Port, Reference *Launcher
	// ReferenceMachine, when set, is the reference worker's machine over Alphabet (the committed
	// golden), so that it is not learned again.
	ReferenceMachine *Machine
	// Alphabet is the symbols explored.
	Alphabet []alphabet.Name
	// Methods are the methods run (nil: all).
	Methods []Method
	// Seed makes the run reproducible.
	Seed uint64
	// Duration is the budget of the random methods (walk and fuzz share it).
	Duration time.Duration
	// Parallel is the number of processes run at once.
	Parallel int
	// WalkLength is the number of steps of a random session.
	WalkLength int
	// ReplayDir, when set, receives the replay file of each shrunk failure.
	ReplayDir string
	// Corpus, when set, is the corpus directory fuzzing keeps new behaviour in.
	Corpus string
	// Progress, when set, receives a progress line per phase.
	Progress io.Writer
}

// Artifacts are what an exploration produced besides its report.
type Artifacts struct {
	Reference, Port *Machine
	Differences     []mealy.Difference[alphabet.Name, alphabet.Output]
	Replays         []replay.File
	ReplayFiles     []string
	Kept            int
	Stats           learn.Stats
	Starts          int64
}

func (c Config) has(m Method) bool { return len(c.Methods) == 0 || slices.Contains(c.Methods, m) }

func (c Config) progress(format string, args ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, "explore: "+format+"\n", args...)
	}
}

// Learn learns the machine of the worker behind l over names (EXP-006, EXP-007).
func Learn(ctx context.Context, l *Launcher, names []alphabet.Name, parallel int, seed uint64) (*Machine, learn.Stats, error) {
	oracle := learn.Parallel(parallel, l.Run)
	eq := learn.Chain[alphabet.Name, alphabet.Output]{
		learn.WpMethod[alphabet.Name, alphabet.Output]{Extra: 1},
		learn.RandomWalks[alphabet.Name, alphabet.Output]{Walks: 50, MaxLength: 12, Seed: seed},
	}
	m, stats, err := learn.LearnLSharp(ctx, oracle, learn.Config[alphabet.Name, alphabet.Output]{
		Inputs: names, Sink: alphabet.Sink, Equivalence: eq, Batch: 4 * max(parallel, 1),
	})
	if err != nil {
		return nil, stats, err
	}
	c, err := mealy.Minimize(m)
	return c, stats, err
}

// result returns the catalog entry id as a result with outcome o.
func result(id string, o conformance.Outcome, d time.Duration) conformance.Result {
	i := slices.IndexFunc(catalog, func(r conformance.Result) bool { return r.ID == id })
	r := catalog[i]
	r.Requirements = slices.Clone(r.Requirements)
	r.Outcome, r.Duration = o, d
	return r
}

// Run explores the port and returns the results (in catalog order) and the artifacts.
func Run(ctx context.Context, cfg Config) ([]conformance.Result, *Artifacts, error) {
	art := &Artifacts{}
	var results []conformance.Result
	ref := cfg.ReferenceMachine
	if ref == nil {
		start := time.Now()
		cfg.progress("learning the reference worker over %d symbols", len(cfg.Alphabet))
		m, _, err := Learn(ctx, cfg.Reference, cfg.Alphabet, cfg.Parallel, cfg.Seed)
		if err != nil {
			return nil, nil, fmt.Errorf("learning the reference worker: %w", err)
		}
		ref = m
		cfg.progress("reference machine: %d states in %s", m.States(), conformance.FormatDuration(time.Since(start)))
	}
	art.Reference = ref

	if cfg.has(MethodLearn) {
		results = append(results, learnPort(ctx, cfg, art)...)
	}
	var walkBudget, fuzzBudget time.Duration
	switch {
	case cfg.has(MethodWalk) && cfg.has(MethodFuzz):
		walkBudget, fuzzBudget = cfg.Duration/2, cfg.Duration/2
	case cfg.has(MethodWalk):
		walkBudget = cfg.Duration
	case cfg.has(MethodFuzz):
		fuzzBudget = cfg.Duration
	}
	if cfg.has(MethodWalk) {
		results = append(results, walkPort(ctx, cfg, art, walkBudget)...)
	}
	if cfg.has(MethodFuzz) {
		results = append(results, fuzzPort(ctx, cfg, art, fuzzBudget))
	}
	art.Starts, _, _ = cfg.Port.Counts()
	return results, art, ctx.Err()
}

// learnPort learns the port and compares its machine with the reference's (EXP-004, EXP-005).
func learnPort(ctx context.Context, cfg Config, art *Artifacts) []conformance.Result {
	start := time.Now()
	cfg.progress("learning the port over %d symbols", len(cfg.Alphabet))
	must, should := result(IDStateMust, conformance.Pass, 0), result(IDStateShould, conformance.Pass, 0)
	m, stats, err := Learn(ctx, cfg.Port, cfg.Alphabet, cfg.Parallel, cfg.Seed)
	art.Stats = stats
	d := time.Since(start)
	must.Duration, should.Duration = d, d
	method := fmt.Sprintf("L# over %d symbols, equivalence by the Wp-method with 1 extra state and 50 random walks of 12 steps (seed %d); %d queries, %d symbols", len(cfg.Alphabet), cfg.Seed, stats.Queries, stats.Symbols)
	if err != nil {
		must.Outcome = conformance.Fail
		var nd *learn.NondeterminismError[alphabet.Name, alphabet.Output]
		if errors.As(err, &nd) {
			must.Expected = "the same answers to the same inputs in every fresh process (EXP-006)"
			must.Actual = fmt.Sprintf("input word %s was answered %s, then %s", words(nd.Word), outputs(nd.First), outputs(nd.Second))
		} else {
			must.Expected, must.Actual = "a learnable worker", err.Error()
		}
		must.Detail = "expected " + must.Expected + "; got " + must.Actual
		should.Outcome = conformance.Skip
		should.Detail = "the port's machine could not be learned"
		return []conformance.Result{must, should}
	}
	art.Port = m
	cfg.progress("port machine: %d states in %s", m.States(), conformance.FormatDuration(d))
	diffs, err := mealy.Differences(art.Reference, m, 50)
	if err != nil {
		must.Outcome, must.Detail = conformance.Fail, err.Error()
		return []conformance.Result{must, should}
	}
	art.Differences = diffs
	var mustText, shouldText []string
	for _, df := range diffs {
		last := len(df.Word) - 1
		line := fmt.Sprintf("after %s: expected %s, observed %s", words(df.Word), outputs(df.Expected), outputs(df.Observed))
		if alphabet.Compare(df.Expected[last], df.Observed[last]) == alphabet.Advice {
			shouldText = append(shouldText, line)
		} else {
			mustText = append(mustText, line)
		}
	}
	must.Transcript = []string{method, fmt.Sprintf("reference machine: %d states; port machine: %d states", art.Reference.States(), m.States())}
	if len(mustText) > 0 {
		must.Outcome = conformance.Fail
		must.Expected = "the reference worker's answers to every input word"
		must.Actual = fmt.Sprintf("%d difference(s), each shown by its shortest input word:\n%s", len(mustText), strings.Join(mustText, "\n"))
		must.Detail = "expected " + must.Expected + "; got " + must.Actual
	}
	if len(shouldText) > 0 {
		should.Outcome = conformance.Fail
		should.Expected = "the reference worker's exit classes (WRK-097)"
		should.Actual = strings.Join(shouldText, "\n")
		should.Detail = "expected " + should.Expected + "; got " + should.Actual
	}
	return []conformance.Result{must, should}
}

// words renders an input word.
func words(w []alphabet.Name) string {
	s := make([]string, len(w))
	for i, n := range w {
		s[i] = string(n)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// outputs renders an output word.
func outputs(o []alphabet.Output) string {
	s := make([]string, len(o))
	for i, x := range o {
		s[i] = x.String()
	}
	return "[" + strings.Join(s, " | ") + "]"
}

// walkStep is one step of a random session, for shrinking.
type walkStep = alphabet.Name

// walkPort runs random sessions guided by the reference machine, checks each step against the
// reference machine (confirmed on the live reference worker) and the invariants, and shrinks
// the first failure into a replay file.
func walkPort(ctx context.Context, cfg Config, art *Artifacts, budget time.Duration) []conformance.Result {
	start := time.Now()
	res := result(IDWalk, conformance.Pass, 0)
	resShould := result(IDWalkShould, conformance.Pass, 0)
	r := rand.New(rand.NewPCG(cfg.Seed, 0x77616c6b))
	length := cfg.WalkLength
	if length <= 0 {
		length = 16
	}
	ends := func(o alphabet.Output) bool { return o.Exit != alphabet.Running }
	var (
		mu      sync.Mutex
		failing []alphabet.Name
		problem string
		advice  string
		runs    int
	)
	deadline := start.Add(budget)
	batch := max(cfg.Parallel, 1)
	// The transition cover of the reference machine first: every transition taken once from
	// the shortest word that reaches its state, so that each answer and each end the reference
	// gives is checked; then random sessions.
	cover := transitionCover(art.Reference)
	symbols := probeSymbols(cfg)
	probes := probeCover(symbols)
	pr := rand.New(rand.NewPCG(cfg.Seed, 0x70726f62))
	var probeFailing []alphabet.Name
	var probeProblem string
	probeRuns := 0
	// Probe sessions (EXP-019) run alongside, as many at once as the walk's: the probe cover
	// first, then random probe sessions. Their processes mostly wait, for answers and quiet
	// periods, so running both at once costs little more than either.
	nextProbe := func() []alphabet.Name {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case failing != nil || probeFailing != nil:
			return nil
		case len(probes) > 0:
			w := probes[0]
			probes = probes[1:]
			return w
		}
		return probeWord(pr, symbols)
	}
	var probeWG sync.WaitGroup
	for range batch {
		if cfg.Reference == nil {
			break
		}
		probeWG.Add(1)
		go func() {
			defer probeWG.Done()
			for time.Now().Before(deadline) && ctx.Err() == nil {
				w := nextProbe()
				if w == nil {
					return
				}
				p, adv := checkProbe(ctx, cfg, w)
				mu.Lock()
				probeRuns++
				if adv != "" && advice == "" {
					advice = fmt.Sprintf("after probe session %s: %s", words(w), adv)
				}
				if p != "" && probeFailing == nil {
					probeFailing, probeProblem = w, p
				}
				mu.Unlock()
			}
		}()
	}
	for time.Now().Before(deadline) && ctx.Err() == nil {
		mu.Lock()
		stop := probeFailing != nil
		mu.Unlock()
		if stop {
			break
		}
		ws := make([][]alphabet.Name, batch)
		for i := range ws {
			if len(cover) > 0 {
				ws[i], cover = cover[0], cover[1:]
				continue
			}
			ws[i] = walk.Word(r, art.Reference, walk.Config[alphabet.Output]{Length: length, Ends: ends, EndChance: 20})
		}
		var wg sync.WaitGroup
		for _, w := range ws {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p, adv := checkWalkLevels(ctx, cfg, art.Reference, w)
				mu.Lock()
				defer mu.Unlock()
				runs++
				if adv != "" && advice == "" {
					advice = adv
				}
				if p != "" && failing == nil {
					failing, problem = w, p
				}
			}()
		}
		wg.Wait()
		if failing != nil {
			break
		}
	}
	probeWG.Wait()
	res.Transcript = []string{fmt.Sprintf("%d sessions: the %d words of the reference machine's transition cover, then random sessions of up to %d steps (seed %d)", runs, len(transitionCover(art.Reference)), length, cfg.Seed),
		fmt.Sprintf("%d probe sessions judged against the reference worker run the same way: the %d words of the probe cover, then random probe sessions", probeRuns, len(probeCover(symbols)))}
	switch {
	case failing != nil:
		cfg.progress("walk: a session fails; shrinking %d steps", len(failing))
		sr, _ := shrink.Shrink(failing, func(w []walkStep) bool { return checkWalk(ctx, cfg, art.Reference, w) != "" }, shrink.Config[walkStep]{MaxCalls: 200})
		shrunk := sr.Steps
		p := checkWalk(ctx, cfg, art.Reference, shrunk)
		if p == "" {
			shrunk, p = failing, problem
		}
		res.Outcome = conformance.Fail
		res.Expected = "the reference worker's answers and the session invariants"
		res.Actual = fmt.Sprintf("after %s (shrunk from %d steps): %s", words(shrunk), len(failing), p)
		res.Detail = "expected " + res.Expected + "; got " + res.Actual
		if f, ok := replayFile(ctx, cfg, art.Reference, shrunk); ok {
			art.Replays = append(art.Replays, f)
			if path, err := writeReplay(cfg.ReplayDir, f); err == nil && path != "" {
				art.ReplayFiles = append(art.ReplayFiles, path)
				res.Detail += "; replay file: " + path
			}
		}
	case probeFailing != nil:
		probeFailure(ctx, cfg, art, &res, probeFailing, probeProblem)
	}
	res.Duration = time.Since(start)
	resShould.Duration = res.Duration
	if advice != "" {
		resShould.Outcome = conformance.Fail
		resShould.Expected = "the reference worker's exit classes (WRK-097)"
		resShould.Actual = advice
		resShould.Detail = "expected " + resShould.Expected + "; got " + resShould.Actual
	}
	return []conformance.Result{res, resShould}
}

// probeFailure shrinks a failing probe session, reports it in res and writes its replay file
// into cfg.ReplayDir (EXP-009, EXP-010, EXP-019).
func probeFailure(ctx context.Context, cfg Config, art *Artifacts, res *conformance.Result, failing []alphabet.Name, problem string) {
	cfg.progress("walk: a probe session fails; shrinking %d steps", len(failing))
	sr, _ := shrink.Shrink(failing, func(w []walkStep) bool {
		m, _ := checkProbe(ctx, cfg, w)
		return m != ""
	}, shrink.Config[walkStep]{MaxCalls: 24})
	shrunk, v := sr.Steps, probeVerdict{}
	if len(shrunk) > 0 {
		v, _ = judgeProbeWord(ctx, cfg, shrunk)
	}
	p := v.must
	if p == "" {
		shrunk, p = failing, problem
		v, _ = judgeProbeWord(ctx, cfg, shrunk)
	}
	res.Outcome = conformance.Fail
	res.Expected = "what the reference worker does in the same probe session, and the session invariants"
	res.Actual = fmt.Sprintf("in probe session %s (shrunk from %d steps): %s", words(shrunk), len(failing), p)
	res.Detail = "expected " + res.Expected + "; got " + res.Actual
	if f, ok := probeReplayFile(cfg, shrunk, v); ok {
		art.Replays = append(art.Replays, f)
		if path, err := writeReplay(cfg.ReplayDir, f); err == nil && path != "" {
			art.ReplayFiles = append(art.ReplayFiles, path)
			res.Detail += "; replay file: " + path
		}
	}
}

// transitionCover returns, for every state of m reached by an access word and every input,
// the access word followed by the input.
func transitionCover(m *Machine) [][]alphabet.Name {
	access, reached := m.AccessWords()
	var out [][]alphabet.Name
	for s, a := range access {
		if !reached[s] {
			continue
		}
		for _, in := range m.Inputs {
			out = append(out, append(slices.Clone(a), in))
		}
	}
	return out
}

// checkWalk runs w on the port and returns the first problem, or "".
func checkWalk(ctx context.Context, cfg Config, ref *Machine, w []alphabet.Name) string {
	p, _ := checkWalkLevels(ctx, cfg, ref, w)
	return p
}

// checkWalkLevels runs w on the port and returns the first MUST problem and the first
// difference in the exit class only (WRK-097), or "".
func checkWalkLevels(ctx context.Context, cfg Config, ref *Machine, w []alphabet.Name) (must, should string) {
	tr, err := cfg.Port.Trace(ctx, w, nil)
	if err != nil {
		return "", ""
	}
	want, _ := ref.Run(w)
	for i := range w {
		if should == "" && alphabet.Compare(want[i], tr.Outputs[i]) == alphabet.Advice {
			should = fmt.Sprintf("after %s: step %d (%s): expected %s, observed %s", words(w[:i+1]), i+1, w[i], want[i], tr.Outputs[i])
		}
		if v := alphabet.Compare(want[i], tr.Outputs[i]); v == alphabet.Violation {
			// Confirm on the live reference worker: the golden machine may be inexact.
			if cfg.Reference != nil {
				if live, err := cfg.Reference.Run(ctx, w[:i+1]); err == nil && alphabet.Compare(live[i], tr.Outputs[i]) != alphabet.Violation {
					return "", should
				}
			}
			// And on the port: an answer or an end that missed its step's quiet period once,
			// under load, is not a difference.
			if again, err := cfg.Port.Run(ctx, w[:i+1]); err == nil && alphabet.Compare(want[i], again[i]) != alphabet.Violation {
				return "", should
			}
			return fmt.Sprintf("step %d (%s): expected %s, observed %s", i+1, w[i], want[i], tr.Outputs[i]), should
		}
	}
	return invariants(tr), should
}

// invariants checks what every session must keep whatever the machine says: no
// crash or hang, no overlong line, no key in any output (WRK-093), and one effect per
// operation (WRK-041).
func invariants(tr *Trace) string {
	final := alphabet.Silent
	for _, o := range tr.Outputs {
		if o.Exit != alphabet.Gone {
			final = o
		}
	}
	if ps := alphabet.JudgeMutated(alphabet.MutatedStep{Reference: final, Port: final, PortOutput: tr.Output}, tr.Secrets...); len(ps) > 0 {
		return strings.Join(ps, "; ")
	}
	for i, secret := range tr.Secrets {
		if form := alphabet.LeakForm(tr.Files, secret); form != "" {
			return fmt.Sprintf("secret %d appears in the journal or the effect log (%s)", i+1, form)
		}
	}
	seen := map[string]bool{}
	for _, line := range tr.Effects {
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		if seen[line] {
			return "the effect log holds the same effect twice: " + conformance.Clip(line, 120)
		}
		seen[line] = true
	}
	return ""
}

// replayFile builds the replay file of a failing word (EXP-010): the outputs up to the first
// differing step, expected from the reference machine.
func replayFile(ctx context.Context, cfg Config, ref *Machine, w []alphabet.Name) (replay.File, bool) {
	tr, err := cfg.Port.Trace(ctx, w, nil)
	if err != nil {
		return replay.File{}, false
	}
	want, _ := ref.Run(w)
	k := walk.FirstDifference(want, tr.Outputs, func(a, b alphabet.Output) bool { return alphabet.Compare(a, b) != alphabet.Violation })
	if k < 0 {
		return replay.File{}, false
	}
	f := replay.File{Version: replay.Version, Suite: "worker", Numbers: numberModel(cfg.Port.Mode), Seed: cfg.Seed, Level: "MUST"}
	for _, n := range cfg.Port.Needs {
		f.Needs = append(f.Needs, string(n))
	}
	slices.Sort(f.Needs)
	sym, _ := alphabet.Lookup(w[k])
	f.Spec = slices.Sorted(slices.Values(sym.Spec))
	for i := 0; i <= k; i++ {
		f.Steps = append(f.Steps, replay.Step{Symbol: string(w[i]), Expected: want[i].String(), Observed: tr.Outputs[i].String()})
	}
	if f.Steps[k].Expected == f.Steps[k].Observed {
		return replay.File{}, false
	}
	return f, f.Validate() == nil
}

// numberModel names a number mode as a replay file does.
func numberModel(m canonjson.Mode) string {
	if m == canonjson.Lossy {
		return "lossy"
	}
	return "preserve"
}

// fuzzPort mutates one frame of random sessions and judges the mutated step (EXP-011); inputs
// that reach a new coverage signature are kept in the corpus (EXP-013).
func fuzzPort(ctx context.Context, cfg Config, art *Artifacts, budget time.Duration) conformance.Result {
	start := time.Now()
	res := result(IDFuzz, conformance.Pass, 0)
	r := rand.New(rand.NewPCG(cfg.Seed, 0x66757a7a))
	corpus := mutate.NewCorpus()
	ends := func(o alphabet.Output) bool { return o.Exit != alphabet.Running }
	var problems []string
	runs := 0
	deadline := start.Add(budget)
	symbols := probeSymbols(cfg)
	for time.Now().Before(deadline) && ctx.Err() == nil && len(problems) == 0 {
		w := walk.Word(r, art.Reference, walk.Config[alphabet.Output]{Length: 6, Ends: ends, EndChance: 0})
		// Every other session is a random probe session (EXP-019), so that mutations reach
		// the frames only probes send: numbers, JSON inputs, secrets, compensations.
		probe := cfg.Reference != nil && runs%2 == 1
		if probe {
			if pw := probeWord(r, symbols); len(pw) > 0 {
				w = pw
			} else {
				probe = false
			}
		}
		at := r.IntN(len(w))
		seed := r.Uint64()
		// Even seeds mutate the message and tag it again, so the worker judges the message;
		// odd seeds mutate the whole line, tag included.
		retag := seed%2 == 0
		var kind mutate.Kind
		mutateLine := func(line []byte, s *alphabet.Session) (mutate.Kind, []byte) {
			if !retag {
				return mutate.Mutate(seed, line, nil)
			}
			var k mutate.Kind
			out, err := s.Retag(line, func(m []byte) []byte {
				var o []byte
				k, o = mutate.Mutate(seed, m, nil)
				return o
			})
			if err != nil {
				return mutate.Mutate(seed, line, nil)
			}
			return k, out
		}
		edit := func(k int, line []byte, s *alphabet.Session) []byte {
			if k != at {
				return line
			}
			var out []byte
			kind, out = mutateLine(line, s)
			return out
		}
		var port, refTr *Trace
		var wg sync.WaitGroup
		wg.Add(2)
		refEdit := func(k int, line []byte, s *alphabet.Session) []byte {
			if k != at {
				return line
			}
			_, out := mutateLine(line, s)
			return out
		}
		trace := func(l *Launcher, e func(int, []byte, *alphabet.Session) []byte) (*Trace, error) {
			if probe {
				return l.probeTrace(ctx, w, e)
			}
			return l.Trace(ctx, w, e)
		}
		go func() { defer wg.Done(); port, _ = trace(cfg.Port, edit) }()
		go func() { defer wg.Done(); refTr, _ = trace(cfg.Reference, refEdit) }()
		wg.Wait()
		runs++
		if port == nil || refTr == nil || kind == "" {
			continue
		}
		step := alphabet.MutatedStep{Reference: refTr.Outputs[at], Port: port.Outputs[at], PortOutput: port.Output}
		if probe {
			// A probe session's step is judged with what its process did from the step on.
			step.Reference, step.Port = fromStep(w, refTr.Outputs, at), fromStep(w, port.Outputs, at)
		}
		ps := alphabet.JudgeMutated(step, port.Secrets...)
		if len(ps) > 0 {
			problems = append(problems, fmt.Sprintf("after %s, the frame of step %d (%s) mutated by %s (seed %d, retagged %v): %s", words(w[:at]), at+1, w[at], kind, seed, retag, strings.Join(ps, "; ")))
		}
		texts := make([]string, len(port.Outputs))
		for i, o := range port.Outputs {
			texts[i] = o.String()
		}
		e := mutate.Entry{Version: mutate.EntryVersion, Mutations: []mutate.Step{{At: at, Kind: kind, Seed: seed}}, Signature: mutate.Signature(texts)}
		for _, n := range w {
			e.Symbols = append(e.Symbols, string(n))
		}
		if kept, err := corpus.Offer(e); err == nil && kept {
			art.Kept++
			if cfg.Corpus != "" {
				_, _ = mutate.Save(cfg.Corpus, e)
			}
		}
	}
	res.Transcript = []string{fmt.Sprintf("%d sessions with one mutated frame, every other one a probe session (seed %d); %d inputs reached a new signature", runs, cfg.Seed, art.Kept)}
	if len(problems) > 0 {
		res.Outcome = conformance.Fail
		res.Expected = "the reference worker's refusals, no crash, hang, overlong line or leak (EXP-011)"
		res.Actual = strings.Join(problems, "\n")
		res.Detail = "expected " + res.Expected + "; got " + res.Actual
	}
	res.Duration = time.Since(start)
	return res
}
