package explore

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/explore/alphabet"
	"github.com/splashv5/conform/conformance/explore/replay"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// Probe sessions (EXP-019): words over the alphabet and the probe symbols, run against the
// port and against the live reference worker alike and judged against each other, process by
// process: the answers in order, how each process ended, the effect log, and the invariants.

// probeDetail is the detail the secret source's failure carries: a provider's detail, which no
// broker error may keep (SEC-007), so it is looked for as a secret.
const probeDetail = "explore-provider-detail-5e1f"

// The secret source probes: they live here, not in the alphabet, because only a driver that
// writes the source file can run them.
const (
	sourceEmpty alphabet.Name = "secret_source_empty" // the provider returns no bytes
	sourceLong  alphabet.Name = "secret_source_long"  // the provider returns 65,537 bytes
	sourceFail  alphabet.Name = "secret_source_fail"  // the provider fails with a detail
)

// maxSecretBytes is the longest secret value a broker takes (SEC-005).
const maxSecretBytes = 65536

// sourceAction returns the file write of a secret source probe.
func sourceAction(n alphabet.Name) (alphabet.Action, bool) {
	var data []byte
	switch n {
	case sourceEmpty:
		data = []byte("value:")
	case sourceLong:
		data = append([]byte("value:"), bytes.Repeat([]byte{'s'}, maxSecretBytes+1)...)
	case sourceFail:
		data = []byte("fail:" + probeDetail)
	default:
		return alphabet.Action{}, false
	}
	return alphabet.Action{Write: &alphabet.FileWrite{File: alphabet.FileSecretSource, Data: data}}, true
}

// probeNeeds returns the needs of the port that probes may use: the declared ones and those
// its command's placeholders declare.
func probeNeeds(l *Launcher) []alphabet.Need {
	ns := slices.Clone(l.Needs)
	if l.Command.Has(conformance.PlaceholderEffects) {
		ns = append(ns, alphabet.NeedEffects)
	}
	if l.Command.Has(conformance.PlaceholderSecretSource) {
		ns = append(ns, alphabet.NeedSecretSource)
	}
	return ns
}

// isRestart reports whether the symbol starts a fresh process.
func isRestart(n alphabet.Name) bool {
	switch n {
	case alphabet.Restart, alphabet.RestartSameSession, alphabet.RestartBadVersion, alphabet.RestartBadHeader:
		return true
	}
	return false
}

// probeTrace runs a probe word in fresh processes, as Trace runs a word, with what probes add:
// a restart starts a fresh process even after the last one ended, a probe may have a file
// written first, write a line without its line feed or only wait. edit, when set, may change
// the frame line of step k before it is written, as in Trace.
func (l *Launcher) probeTrace(ctx context.Context, word []alphabet.Name, edit func(k int, line []byte, s *alphabet.Session) []byte) (*Trace, error) {
	l.words.Add(1)
	l.symbols.Add(int64(len(word)))
	bound := orDefault(l.Bound, DefaultWordBound)
	quiet := probePace
	answerWait := orDefault(l.AnswerWait, DefaultAnswerWait)
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	dir, err := os.MkdirTemp(l.TempDir, "explore-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	values := conformance.PlaceholderValues(dir, l.Scope)
	tr := &Trace{Secrets: [][]byte{[]byte(alphabet.StubSecret), []byte(probeDetail)}}
	if l.Command.Has(conformance.PlaceholderStorageKey) {
		key := make([]byte, 32)
		if _, err := crand.Read(key); err != nil {
			return nil, err
		}
		if err := os.WriteFile(values[conformance.PlaceholderStorageKey], []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
			return nil, err
		}
		tr.Secrets = append(tr.Secrets, key)
	}
	args := l.Command.Expand(values)
	var outBuf bytes.Buffer
	var keys []*protocol.SessionKey
	defer func() {
		for _, k := range keys {
			k.Close()
		}
	}()
	newKey := func() (*protocol.SessionKey, string, error) {
		key, err := protocol.GenerateSessionKey()
		if err != nil {
			return nil, "", err
		}
		raw, err := key.ExposeSecret()
		if err != nil {
			key.Close()
			return nil, "", err
		}
		tr.Secrets = append(tr.Secrets, bytes.Clone(raw[:]))
		clear(raw[:])
		keys = append(keys, key)
		var b [6]byte
		_, _ = crand.Read(b[:])
		return key, "explore-" + hex.EncodeToString(b[:]), nil
	}
	key, sid, err := newKey()
	if err != nil {
		return nil, err
	}
	s, err := alphabet.NewSession(sid, key, l.Mode, l.Needs...)
	if err != nil {
		return nil, err
	}
	s.SetScope(l.Scope)
	var procs []*proc
	defer func() {
		for _, p := range procs {
			p.stop()
		}
	}()
	startProc := func() (*proc, error) {
		p, err := l.start(args, &outBuf)
		if err != nil {
			return nil, err
		}
		procs = append(procs, p)
		if err := s.WriteBootstrap(p.stdin); err != nil {
			p.stdin.Close()
		}
		return p, nil
	}
	p, err := startProc()
	if err != nil {
		return nil, err
	}
	files := map[string]string{
		alphabet.FileStoreFault:   values[conformance.PlaceholderStoreFault],
		alphabet.FileSecretSource: values[conformance.PlaceholderSecretSource],
	}
	gone, fresh := false, true
	for k, sym := range word {
		a, isSource := sourceAction(sym)
		if !isSource {
			if a, err = s.Concretize(sym); err != nil {
				return nil, err
			}
		}
		if a.Fault == alphabet.Restart {
			if p.running() {
				p.stop()
			}
			_ = os.Remove(values[conformance.PlaceholderStoreFault])
			key, sid, err := newKey()
			if err != nil {
				return nil, err
			}
			if err := s.Restart(sid, key, l.Mode); err != nil {
				return nil, err
			}
			if p, err = startProc(); err != nil {
				return nil, err
			}
			gone, fresh = false, true
		}
		if gone {
			tr.Outputs = append(tr.Outputs, alphabet.Output{Exit: alphabet.Gone})
			continue
		}
		if a.Write != nil {
			if err := os.WriteFile(files[a.Write.File], a.Write.Data, 0o600); err != nil {
				return nil, err
			}
		}
		if len(a.Supersede) > 0 {
			newer, err := l.supersede(ctx, s, a.Supersede, args, &outBuf, newKey, &procs)
			if err != nil {
				return nil, err
			}
			obs := p.observe(ctx, max(a.Pause, quiet), quiet/4)
			out := s.Abstract(obs)
			out.Answers = strings.Trim(newer+"+"+out.Answers, "+")
			tr.Outputs = append(tr.Outputs, out)
			gone = out.Exit != alphabet.Running
			continue
		}
		switch {
		case a.Fault == alphabet.StoreFault && a.Write == nil:
			if err := os.WriteFile(values[conformance.PlaceholderStoreFault], []byte("0\n"), 0o600); err != nil {
				return nil, err
			}
		case a.EndInput:
			p.stdin.Close()
		case a.Line != nil:
			line := a.Line
			if edit != nil {
				line = edit(k, bytes.Clone(line), s)
			}
			if !a.NoNewline {
				line = append(line, '\n')
			}
			_, _ = p.stdin.Write(line)
		}
		wait := answerWait
		if alphabet.Quiet(sym) || isSource {
			wait = quiet
		}
		if a.Pause > 0 {
			wait = a.Pause
		}
		if fresh && a.Fault != alphabet.Restart && a.Fault != alphabet.StoreFault && a.Write == nil {
			if !alphabet.Opening(sym) {
				wait = max(probeStartPace, wait)
			}
			fresh = false
		}
		settle := quiet / 4
		if a.Pause > 0 {
			settle = a.Pause
		}
		obs := p.observe(ctx, wait, settle)
		if a.Fault == alphabet.Restart && obs.Exit == alphabet.Running && len(obs.Lines) == 0 {
			obs = alphabet.Observation{Exit: alphabet.Running}
		}
		out := s.Abstract(obs)
		tr.Outputs = append(tr.Outputs, out)
		gone = out.Exit != alphabet.Running
	}
	for k := len(tr.Outputs) - 1; k >= 0 && !gone; {
		// The tail: whatever the last process still does about the last step, and its end,
		// within the answer wait, so that an answer or an end late for its step still counts.
		obs := p.observe(ctx, answerWait, quiet)
		if len(obs.Lines) == 0 && obs.Exit == alphabet.Running {
			break
		}
		tail := s.Abstract(obs)
		last := &tr.Outputs[k]
		last.Answers = strings.Trim(last.Answers+"+"+tail.Answers, "+")
		last.Exit = tail.Exit
		gone = tail.Exit != alphabet.Running
	}
	for _, p := range procs {
		p.stop()
	}
	if outBuf.Len() > maxTraceOutput {
		outBuf.Truncate(maxTraceOutput)
	}
	tr.Output = outBuf.Bytes()
	for _, p := range procs {
		tr.Output = append(tr.Output, p.stderr.Excerpt()...)
	}
	procs = nil
	tr.Effects = readEffects(values[conformance.PlaceholderEffects])
	for _, f := range []string{values[conformance.PlaceholderJournal], values[conformance.PlaceholderEffects]} {
		tr.Files = append(tr.Files, readBoundedFile(f, maxTraceOutput)...)
	}
	return tr, nil
}

// supersede runs names on a newer worker process on the same journal, in a session forked
// from s, while the older process keeps running; it ends the newer one's input and returns what
// it did, as "newer[answers end]".
func (l *Launcher) supersede(ctx context.Context, s *alphabet.Session, names []alphabet.Name, args []string, out *bytes.Buffer,
	newKey func() (*protocol.SessionKey, string, error), procs *[]*proc) (string, error) {
	key, sid, err := newKey()
	if err != nil {
		return "", err
	}
	f, err := s.Fork(sid, key, l.Mode)
	if err != nil {
		return "", err
	}
	q, err := l.start(args, out)
	if err != nil {
		return "", err
	}
	*procs = append(*procs, q)
	if err := f.WriteBootstrap(q.stdin); err != nil {
		q.stdin.Close()
	}
	quiet := probePace
	answerWait := orDefault(l.AnswerWait, DefaultAnswerWait)
	var parts []string
	end := alphabet.Running
	for i, n := range names {
		a, err := f.Concretize(n)
		if err != nil {
			return "", err
		}
		_, _ = q.stdin.Write(append(a.Line, '\n'))
		wait := answerWait
		if alphabet.Quiet(n) {
			wait = quiet
		}
		if i == 0 && !alphabet.Opening(n) {
			wait = max(probeStartPace, wait)
		}
		o := f.Abstract(q.observe(ctx, wait, quiet/4))
		if o.Answers != "" {
			parts = append(parts, o.Answers)
		}
		if end = o.Exit; end != alphabet.Running {
			break
		}
	}
	if end == alphabet.Running {
		q.stdin.Close()
		o := f.Abstract(q.observe(ctx, answerWait, quiet/4))
		if o.Answers != "" {
			parts = append(parts, o.Answers)
		}
		end = o.Exit
	}
	if end != alphabet.Running {
		parts = append(parts, end.String())
	}
	return "newer[" + strings.Join(parts, " ") + "]", nil
}

// orDefault returns d, or def when d is not positive.
func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// segment is what one process of a probe word did: its answers in order, however they fell
// into steps, and how it ended within the word (Running when it did not).
type segment struct {
	answers string
	exit    alphabet.Exit
}

// segments splits the outputs of a probe word at its restarts.
func segments(word []alphabet.Name, outs []alphabet.Output) []segment {
	var out []segment
	cur := segment{exit: alphabet.Running}
	var answers []string
	flush := func() {
		cur.answers = strings.Join(answers, "+")
		out = append(out, cur)
		cur, answers = segment{exit: alphabet.Running}, nil
	}
	for i, o := range outs {
		if i > 0 && isRestart(word[i]) {
			flush()
		}
		if o.Answers != "" {
			answers = append(answers, o.Answers)
		}
		if cur.exit == alphabet.Running && o.Exit != alphabet.Running && o.Exit != alphabet.Gone {
			cur.exit = o.Exit
		}
	}
	flush()
	return out
}

// judgeSegments compares the processes of a probe word on the port with the reference's and
// returns the verdict and the first difference.
func judgeSegments(word []alphabet.Name, ref, port []alphabet.Output) (alphabet.Verdict, string) {
	rs, ps := segments(word, ref), segments(word, port)
	verdict, first := alphabet.Same, ""
	for i := range min(len(rs), len(ps)) {
		v := alphabet.Compare(alphabet.Output{Answers: rs[i].answers, Exit: rs[i].exit}, alphabet.Output{Answers: ps[i].answers, Exit: ps[i].exit})
		if v > verdict {
			verdict = v
			first = fmt.Sprintf("process %d: expected %s, observed %s", i+1, segText(rs[i]), segText(ps[i]))
		}
	}
	return verdict, first
}

// segText renders a segment.
func segText(s segment) string {
	o := alphabet.Output{Answers: s.answers, Exit: s.exit}
	if s.exit == alphabet.Running {
		return o.String() + " (still running)"
	}
	return o.String()
}

// effectLines returns the effect and compensation lines of a trace: comments and fence lines
// (which a worker without the effect fence need does not write) left out.
func effectLines(tr *Trace) []string {
	var out []string
	for _, l := range tr.Effects {
		if l != "" && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, `{"kind":"fence"`) {
			out = append(out, l)
		}
	}
	return out
}

// judgeProbe judges a probe word run on the port against the same word run on the reference:
// a MUST difference, or else a difference in failure classes only (WRK-097).
func judgeProbe(word []alphabet.Name, ref, port *Trace, effects bool) (must, should string) {
	v, d := judgeSegments(word, ref.Outputs, port.Outputs)
	switch v {
	case alphabet.Violation:
		return d, ""
	case alphabet.Advice:
		should = d
	}
	if effects {
		if re, pe := effectLines(ref), effectLines(port); !slices.Equal(re, pe) {
			return fmt.Sprintf("the effect log: expected %d line(s) %s, observed %d line(s) %s",
				len(re), conformance.Clip(strings.Join(re, " "), 300), len(pe), conformance.Clip(strings.Join(pe, " "), 300)), should
		}
	}
	// The invariants hold on the port wherever they hold on the reference run the same way.
	if p := invariants(port); p != "" && invariants(ref) == "" {
		return p, should
	}
	if bytes.Contains(port.Output, []byte(alphabet.SecretID)) && !bytes.Contains(ref.Output, []byte(alphabet.SecretID)) {
		return "an output names the secret's identifier " + alphabet.SecretID + " (SEC-007: a broker error gives its kind only)", should
	}
	return "", should
}

// probeRun runs word on the port and the reference at once.
func probeRun(ctx context.Context, cfg Config, word []alphabet.Name) (ref, port *Trace, err error) {
	done := make(chan error, 1)
	go func() {
		var e error
		ref, e = cfg.Reference.probeTrace(ctx, word, nil)
		done <- e
	}()
	port, err = cfg.Port.probeTrace(ctx, word, nil)
	if e := <-done; err == nil {
		err = e
	}
	return ref, port, err
}

// checkProbe runs word and judges it; a difference counts only when a second run of both
// shows a difference again and the reference answered the same both times (a word whose
// outcome depends on timing proves nothing).
func checkProbe(ctx context.Context, cfg Config, word []alphabet.Name) (must, should string) {
	v, err := judgeProbeWord(ctx, cfg, word)
	if err != nil {
		return "", ""
	}
	return v.must, v.should
}

// probeVerdict is the judgement of a probe word: its confirmed MUST and SHOULD differences,
// the traces of the last run of both workers, and whether the reference answered the word two
// ways (so that it proves nothing).
type probeVerdict struct {
	must, should string
	ref, port    *Trace
	unstable     bool
}

// judgeProbeWord is checkProbe with the traces, and the error of a run that could not be made.
func judgeProbeWord(ctx context.Context, cfg Config, word []alphabet.Name) (probeVerdict, error) {
	effects := cfg.Port.Command.Has(conformance.PlaceholderEffects) && cfg.Reference.Command.Has(conformance.PlaceholderEffects)
	ref, port, err := probeRun(ctx, cfg, word)
	if err != nil {
		return probeVerdict{}, err
	}
	v := probeVerdict{ref: ref, port: port}
	v.must, v.should = judgeProbe(word, ref, port, effects)
	if v.must == "" && v.should == "" {
		return v, nil
	}
	ref2, port2, err := probeRun(ctx, cfg, word)
	if err != nil {
		return probeVerdict{}, err
	}
	v.ref, v.port = ref2, port2
	if d, _ := judgeSegments(word, ref.Outputs, ref2.Outputs); d != alphabet.Same {
		v.must, v.should, v.unstable = "", "", true
		return v, nil
	}
	must2, should2 := judgeProbe(word, ref2, port2, effects)
	if must2 == "" {
		v.must = ""
	}
	if should2 == "" {
		v.should = ""
	}
	return v, nil
}

// probeReplayFile builds the replay file of a probe word whose MUST difference v confirmed
// (EXP-010, EXP-019): each step's output on the reference worker as expected and on the port
// as observed, from the run that confirmed it, and the difference as the problem, its text
// withheld if it holds a key or secret of the run.
func probeReplayFile(cfg Config, w []alphabet.Name, v probeVerdict) (replay.File, bool) {
	if v.must == "" || v.ref == nil || v.port == nil || len(v.ref.Outputs) != len(w) || len(v.port.Outputs) != len(w) {
		return replay.File{}, false
	}
	f := replay.File{Version: replay.Version, Suite: "worker", Session: replay.SessionProbe, Numbers: numberModel(cfg.Port.Mode), Seed: cfg.Seed, Level: "MUST"}
	for _, n := range cfg.Port.Needs {
		f.Needs = append(f.Needs, string(n))
	}
	spec := map[string]bool{"EXP-019": true}
	for i, n := range w {
		if sym, ok := alphabet.Lookup(n); ok {
			for _, id := range sym.Spec {
				spec[id] = true
			}
		}
		if p, ok := alphabet.LookupProbe(n); ok {
			for _, id := range p.Spec {
				spec[id] = true
			}
		}
		f.Steps = append(f.Steps, replay.Step{Symbol: string(n), Expected: v.ref.Outputs[i].String(), Observed: v.port.Outputs[i].String()})
	}
	f.Spec = slices.Sorted(maps.Keys(spec))
	f.Problem = withheld(v.must, append(slices.Clone(v.port.Secrets), v.ref.Secrets...))
	return f, f.Validate() == nil
}

// withheld returns text, or, when any of secrets appears in it in a form LeakForm knows, the
// text before its first colon with the rest withheld: a replay file holds no key or secret.
func withheld(text string, secrets [][]byte) string {
	for _, s := range secrets {
		if alphabet.LeakForm([]byte(text), s) != "" {
			if head, _, _ := strings.Cut(text, ":"); head != text && withheld(head, secrets) == head {
				return head + ": (the rest withheld: it holds a key or a secret of the run)"
			}
			return "(withheld: the difference's text holds a key or a secret of the run)"
		}
	}
	return text
}

// probeCover returns the probe sessions run first: each probe in the shortest session that
// gives it its meaning, kept when the port admits every symbol in it.
func probeCover(symbols map[alphabet.Name]bool) [][]alphabet.Name {
	const (
		O  = alphabet.OpenProbe
		E  = alphabet.EndOfInput
		D  = alphabet.Dispatch
		C  = alphabet.Compensate
		R  = alphabet.Restart
		SF = alphabet.StoreFaultAfterOne
	)
	all := [][]alphabet.Name{
		// The longest sessions first, so that they run while the short ones do.
		{alphabet.OpenProbeCancel, alphabet.InvokeSlowShort, alphabet.CancelCurrent, alphabet.Pause, E},
		{alphabet.OpenProbeCancel, alphabet.InvokeUncoopShort, alphabet.CancelCurrent, alphabet.Pause, E},
		{O, alphabet.DispatchHeld, alphabet.SupersedeReconcile, E},
		{O, alphabet.InvokeAtLimit, E},
		{O, alphabet.InvokeReflected},
		{O, alphabet.InvokeVersion4},
		{alphabet.OpenVersion4, alphabet.Invoke, E},
		{O, alphabet.InvokeJSON, alphabet.InvokeJSONOver},
		{O, alphabet.InvokeJSONScalar},
		{O, alphabet.InvokeJSONDeep},
		{O, alphabet.InvokeUndeclared},
		{O, alphabet.InvokeTyped, alphabet.InvokeTypedBad},
		{O, alphabet.InvokeTypedZero},
		{O, alphabet.InvokeTypedBurst},
		{O, alphabet.DispatchTyped},
		{O, alphabet.InvokeSecret, E},
		{alphabet.OpenSecretBare, alphabet.InvokeSecret},
		{alphabet.OpenSecretOtherKind, alphabet.InvokeSecret},
		{alphabet.OpenSecretOtherID, alphabet.InvokeSecret},
		{alphabet.OpenSecretElsewhere, alphabet.InvokeSecret},
		{O, sourceEmpty, alphabet.InvokeSecret},
		{O, sourceLong, alphabet.InvokeSecret},
		{O, sourceFail, alphabet.InvokeSecret},
		{O, alphabet.InvokeNumbers, alphabet.InvokeLossyNumber, E},
		{O, alphabet.InvokeLossyNumber},
		{O, alphabet.DispatchNumbers, R, O, alphabet.DispatchAgain, alphabet.Reconcile, E},
		{O, D, alphabet.DispatchAgain, E},
		{O, D, alphabet.ReconcileBurst},
		{O, D, C, alphabet.CompensateAgain, E},
		{O, D, C, C},
		{O, D, C, D, C},
		{alphabet.OpenNoCompensation, D, C},
		{O, D, alphabet.CompensateBadFP},
		{O, alphabet.StoreFault, D},
		{O, SF, D, R, O, alphabet.DispatchAgain, E},
		{O, D, R, SF, O, C, E},
		{O, D, R, SF, O, C, R, O, alphabet.CompensateAgain, E},
		{O, D, R, SF, O, C, R, O, C, E},
		{O, D, R, alphabet.OpenSmallOutput, alphabet.DispatchAgain, E},
		{O, D, alphabet.RestartSameSession, O, E},
		{O, alphabet.RestartBadVersion, O},
		{O, alphabet.RestartBadHeader},
		{O, alphabet.LineOverCap},
		{O, alphabet.Invoke, alphabet.Supersede, D, E},
	}
	var out [][]alphabet.Name
	for _, w := range all {
		if !slices.ContainsFunc(w, func(n alphabet.Name) bool { return !symbols[n] }) {
			out = append(out, w)
		}
	}
	return out
}

// probeSymbols returns the symbols a port's probe sessions may use: the alphabet's, the probes
// its needs admit, and the secret source probes when it offers the source.
func probeSymbols(cfg Config) map[alphabet.Name]bool {
	needs := probeNeeds(cfg.Port)
	set := map[alphabet.Name]bool{}
	for _, n := range cfg.Alphabet {
		set[n] = true
	}
	for _, p := range alphabet.ProbesFor(cfg.Port.Mode != canonjson.Lossy, needs...) {
		set[p.Name] = true
	}
	if slices.Contains(needs, alphabet.NeedSecret) && slices.Contains(needs, alphabet.NeedSecretSource) {
		set[sourceEmpty], set[sourceLong], set[sourceFail] = true, true, true
	}
	return set
}

// probeWord draws a random probe session: an opening, up to five steps that keep the session
// alive in the reference worker (a restart is followed by an opening), perhaps one that ends
// it, and the end of input unless the last step must stay the last.
func probeWord(r *rand.Rand, symbols map[alphabet.Name]bool) []alphabet.Name {
	var openings, alive, ends []alphabet.Name
	for _, p := range alphabet.Probes {
		if !symbols[p.Name] {
			continue
		}
		switch {
		case p.Opening && !p.Ends:
			openings = append(openings, p.Name)
		case p.Ends:
			ends = append(ends, p.Name)
		case !p.Opening:
			alive = append(alive, p.Name)
		}
	}
	for _, n := range []alphabet.Name{alphabet.Invoke, alphabet.Dispatch, alphabet.Reconcile, alphabet.Restart, alphabet.StoreFault, alphabet.InvokeBadTag, alphabet.InvokeReusedID} {
		if !symbols[n] {
			continue
		}
		if n == alphabet.InvokeBadTag || n == alphabet.InvokeReusedID {
			ends = append(ends, n)
		} else {
			alive = append(alive, n)
		}
	}
	pick := func(ns []alphabet.Name) alphabet.Name { return ns[r.IntN(len(ns))] }
	open := func() alphabet.Name {
		if r.IntN(2) == 0 && symbols[alphabet.OpenProbe] {
			return alphabet.OpenProbe
		}
		return pick(openings)
	}
	if len(openings) == 0 {
		return nil
	}
	w := []alphabet.Name{open()}
	for range r.IntN(6) {
		if len(alive) == 0 {
			break
		}
		n := pick(alive)
		w = append(w, n)
		if isRestart(n) {
			w = append(w, open())
		}
	}
	if len(ends) > 0 && r.IntN(2) == 0 {
		n := pick(ends)
		w = append(w, n)
		if p, _ := alphabet.LookupProbe(n); p.Terminal {
			return w
		}
	}
	return append(w, alphabet.EndOfInput)
}

// fromStep returns what the process running at step k did from that step on: its answers and
// its end, however they fall into steps.
func fromStep(word []alphabet.Name, outs []alphabet.Output, k int) alphabet.Output {
	o := alphabet.Output{Exit: alphabet.Running}
	var answers []string
	for i := k; i < len(outs); i++ {
		if i > k && isRestart(word[i]) {
			break
		}
		if outs[i].Answers != "" {
			answers = append(answers, outs[i].Answers)
		}
		if outs[i].Exit != alphabet.Running && outs[i].Exit != alphabet.Gone {
			o.Exit = outs[i].Exit
			break
		}
	}
	o.Answers = strings.Join(answers, "+")
	return o
}

// Probe sessions are judged process by process, not step by step (EXP-019), so their steps are
// paced rather than settled: a step waits for the worker's lines until probePace passes without
// one, and the first frame after a start waits at least probeStartPace.
const (
	probePace      = 60 * time.Millisecond
	probeStartPace = 150 * time.Millisecond
)

// observe collects the process's lines until first passes without one, then until settle
// passes after the last; it returns early when the process ends or ctx is done (hung).
func (p *proc) observe(ctx context.Context, first, settle time.Duration) alphabet.Observation {
	obs := alphabet.Observation{Exit: alphabet.Running}
	timer := time.NewTimer(first)
	defer timer.Stop()
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				<-p.ended
				obs.Exit = p.exit
				return obs
			}
			p.out.Write(line)
			p.out.WriteByte('\n')
			obs.Lines = append(obs.Lines, line)
			timer.Reset(settle)
		case <-timer.C:
			return obs
		case <-ctx.Done():
			obs.Exit = alphabet.Hung
			return obs
		}
	}
}
