package explore

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/explore/alphabet"
	"github.com/splashv5/conform/conformance/explore/mutate"
	"github.com/splashv5/conform/conformance/explore/replay"
	"github.com/splashv5/conform/impl/canonjson"
)

// ReplayMain runs `splash-conform replay FILE -- WORKER...`: it runs the session of a replay
// file again against the worker (the bundled reference worker when none is given) and exits 1
// when the recorded difference is still there, 0 when it is gone, 2 on a usage error. A probe
// session's file (EXP-019) runs on the worker and on the bundled reference worker alike and is
// judged as the explorer judges probe sessions.
func ReplayMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("splash-conform replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	scope := fs.String("scope", "explore", "journal `SCOPE` substituted for {scope}")
	timeout := fs.Duration("timeout", DefaultAnswerWait, "how long a step waits for an answer or an end before the worker counts as hung (explore's -timeout)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: splash-conform replay [flags] FILE [-- WORKER-COMMAND [ARGS...]]")
		fs.PrintDefaults()
		fmt.Fprintln(stderr, "\nexit status: 0 the session no longer fails, 1 it still fails, 2 usage error")
	}
	if err := fs.Parse(args); err != nil {
		return conformance.ExitUsage
	}
	rest := fs.Args()
	if len(rest) == 0 || *timeout <= 0 {
		fs.Usage()
		return conformance.ExitUsage
	}
	file, worker := rest[0], rest[1:]
	if len(worker) > 0 && worker[0] == "--" {
		worker = worker[1:]
	}
	data, err := readBounded(file, replay.MaxBytes)
	if err != nil {
		fmt.Fprintln(stderr, "splash-conform replay:", err)
		return conformance.ExitUsage
	}
	f, err := replay.Decode(data)
	if err != nil {
		fmt.Fprintln(stderr, "splash-conform replay:", err)
		return conformance.ExitUsage
	}
	if f.Suite != "worker" {
		fmt.Fprintf(stderr, "splash-conform replay: a %s replay file; this command replays worker sessions\n", f.Suite)
		return conformance.ExitUsage
	}
	cmd := conformance.WorkerCommand(worker)
	var refCmd conformance.WorkerCommand
	if len(cmd) == 0 || f.Probe() {
		ref, cleanup, err := conformance.ReferenceWorker()
		if err != nil {
			fmt.Fprintln(stderr, "splash-conform replay:", err)
			return conformance.ExitUsage
		}
		defer cleanup()
		refCmd = ref
		if len(cmd) == 0 {
			cmd = ref
		}
	}
	l := &Launcher{Command: cmd, Scope: *scope, Mode: canonjson.Preserve, AnswerWait: *timeout}
	if f.Numbers == "lossy" {
		l.Mode = canonjson.Lossy
	}
	for _, n := range f.Needs {
		l.Needs = append(l.Needs, alphabet.Need(n))
	}
	if f.Probe() {
		// The reference worker runs the session as the explorer runs it: the port's needs, the
		// preserve number model.
		ref := &Launcher{Command: refCmd, Scope: *scope, Needs: l.Needs, Mode: canonjson.Preserve, AnswerWait: *timeout}
		return replayProbe(context.Background(), f, Config{Port: l, Reference: ref, Alphabet: alphabet.For(l.Needs...)}, stdout, stderr)
	}
	word := make([]alphabet.Name, len(f.Steps))
	for i, s := range f.Steps {
		word[i] = alphabet.Name(s.Symbol)
		if _, ok := alphabet.Lookup(word[i]); !ok {
			fmt.Fprintf(stderr, "splash-conform replay: step %d: unknown symbol %q\n", i+1, s.Symbol)
			return conformance.ExitUsage
		}
	}
	edit := func(k int, line []byte, _ *alphabet.Session) []byte {
		if m := f.Steps[k].Mutation; m != nil {
			if out, err := mutate.Apply(mutate.Kind(m.Kind), m.Seed, line, nil); err == nil {
				return out
			}
		}
		return line
	}
	tr, err := l.Trace(context.Background(), word, edit)
	if err != nil {
		fmt.Fprintln(stderr, "splash-conform replay:", err)
		return conformance.ExitUsage
	}
	still := false
	for i, s := range f.Steps {
		got := tr.Outputs[i].String()
		mark := "  "
		if got != s.Expected {
			mark = "≠ "
		}
		fmt.Fprintf(stdout, "%s%2d %-24s expected %-40s observed %s (recorded %s)\n", mark, i+1, s.Symbol, s.Expected, got, s.Observed)
		if i == len(f.Steps)-1 {
			still = got != s.Expected
		}
	}
	if still {
		fmt.Fprintln(stdout, "splash-conform replay: the session still fails at its last step")
		return conformance.ExitFailures
	}
	fmt.Fprintln(stdout, "splash-conform replay: the session no longer fails")
	return conformance.ExitOK
}

// replayProbe runs a probe session's replay file on cfg.Port and cfg.Reference and judges it
// as the explorer does (EXP-019): process by process, the effect logs, the invariants and the
// secret's identifier, a difference counting only when a second run shows it again. It prints
// each step, the reference's output as expected and the port's as observed, and the problem.
func replayProbe(ctx context.Context, f replay.File, cfg Config, stdout, stderr io.Writer) int {
	for _, n := range cfg.Port.Needs {
		if !slices.Contains(allNeeds, n) {
			fmt.Fprintf(stderr, "splash-conform replay: the file's need %q is unknown\n", n)
			return conformance.ExitUsage
		}
	}
	_, dropped := servableNeeds(cfg.Port.Needs, cfg.Port.Command)
	for _, n := range allNeeds {
		if p, ok := dropped[n]; ok {
			fmt.Fprintf(stderr, "splash-conform replay: the file's need %s cannot be served: the worker command has no %s placeholder\n", n, p)
			return conformance.ExitUsage
		}
	}
	symbols := probeSymbols(cfg)
	word := make([]alphabet.Name, len(f.Steps))
	for i, s := range f.Steps {
		word[i] = alphabet.Name(s.Symbol)
		if !symbols[word[i]] {
			fmt.Fprintf(stderr, "splash-conform replay: step %d: %q is no symbol or probe that the file's needs and number model and the worker command's placeholders admit\n", i+1, s.Symbol)
			return conformance.ExitUsage
		}
	}
	v, err := judgeProbeWord(ctx, cfg, word)
	if err != nil {
		fmt.Fprintln(stderr, "splash-conform replay:", err)
		return conformance.ExitUsage
	}
	secrets := append(slices.Clone(v.port.Secrets), v.ref.Secrets...)
	for i, s := range f.Steps {
		want, got := v.ref.Outputs[i].String(), v.port.Outputs[i].String()
		mark := "  "
		if got != want {
			mark = "≠ "
		}
		fmt.Fprintf(stdout, "%s%2d %-24s expected %-40s observed %s (recorded %s, %s)\n", mark, i+1, s.Symbol, want, got, s.Expected, s.Observed)
	}
	fmt.Fprintf(stdout, "recorded problem: %s\n", f.Problem)
	problem := v.must
	if f.Level == string(conformance.Should) && problem == "" {
		problem = v.should
	}
	switch {
	case problem != "":
		fmt.Fprintf(stdout, "splash-conform replay: the probe session still fails, shown by two runs: %s\n", withheld(problem, secrets))
		return conformance.ExitFailures
	case v.unstable:
		fmt.Fprintln(stdout, "splash-conform replay: the reference worker answered the probe session two ways, so it proves nothing; it no longer fails")
	default:
		fmt.Fprintln(stdout, "splash-conform replay: the probe session no longer fails")
	}
	return conformance.ExitOK
}

// readBounded reads at most max bytes of path, and fails for a longer file.
func readBounded(path string, max int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > max {
		return nil, fmt.Errorf("%s: over %d bytes", path, max)
	}
	return data, nil
}
