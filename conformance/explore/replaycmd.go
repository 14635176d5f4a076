package explore

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/explore/alphabet"
	"github.com/splashv5/conform/conformance/explore/mutate"
	"github.com/splashv5/conform/conformance/explore/replay"
	"github.com/splashv5/conform/impl/canonjson"
)

// ReplayMain runs `splash-conform replay FILE -- WORKER...`: it runs the session of a replay
// file again against the worker (the bundled reference worker when none is given) and exits 1
// when the recorded difference is still there, 0 when it is gone, 2 on a usage error.
func ReplayMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("splash-conform replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	scope := fs.String("scope", "explore", "journal `SCOPE` substituted for {scope}")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: splash-conform replay [flags] FILE [-- WORKER-COMMAND [ARGS...]]")
		fs.PrintDefaults()
		fmt.Fprintln(stderr, "\nexit status: 0 the session no longer fails, 1 it still fails, 2 usage error")
	}
	if err := fs.Parse(args); err != nil {
		return conformance.ExitUsage
	}
	rest := fs.Args()
	if len(rest) == 0 {
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
	if len(cmd) == 0 {
		ref, cleanup, err := conformance.ReferenceWorker()
		if err != nil {
			fmt.Fprintln(stderr, "splash-conform replay:", err)
			return conformance.ExitUsage
		}
		defer cleanup()
		cmd = ref
	}
	l := &Launcher{Command: cmd, Scope: *scope, Mode: canonjson.Preserve}
	if f.Numbers == "lossy" {
		l.Mode = canonjson.Lossy
	}
	for _, n := range f.Needs {
		l.Needs = append(l.Needs, alphabet.Need(n))
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
