package hostexplore

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/explore/replay"
)

const usageText = `usage: splash-conform explore host [flags] [-- DRIVER-COMMAND [ARGS...]]

Explores a host driver (spec/30-host-driver.md) with seeded random command sequences: starts,
invocations, durable dispatches, reconciliations, steps, recoveries, compensations, closes,
waits and driver restarts, each answered by the fake worker correctly, late, never, by exiting,
by crashing mid-line or with a forged or out-of-sequence frame. The run is judged by the
invariants of spec chapter 32.5 over what reached the fake worker. A failure is shrunk and
written as a replay file; -replay FILE runs one again (docs/explore-host.md).

Without a driver command, the bundled reference driver (cmd/splash-host-driver) is explored.

flags:
`

// Main is the command-line front end of "splash-conform explore host": it parses args (after
// "host"), explores or replays, and returns the exit status (conformance.ExitOK, ExitFailures
// or ExitUsage).
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("splash-conform explore host", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		run     conformance.RunFlags
		expects conformance.ExpectFlags
	)
	run.Register(fs, "command", conformance.DefaultTimeout, true)
	seed := fs.Uint64("seed", 0, "the seed of every sequence (0: a random one, printed)")
	duration := fs.Duration("duration", DefaultDuration, "how long new sequences are started")
	length := fs.Int("length", DefaultLength, "commands per sequence")
	shrinkRuns := fs.Int("shrink-runs", DefaultShrinkRuns, "at most `N` sequences run while shrinking a failure")
	replayPath := fs.String("replay", "", "run the replay `FILE` again instead of exploring")
	out := fs.String("out", ".", "write the replay file of a failure into `DIR`")
	if code, done := conformance.ParseCommandLine(fs, args, stdout, stderr, usageText, "command", Suite(), &expects); done {
		return code
	}
	expected, err := expects.Load(Suite(), CatalogEntries())
	if err != nil {
		fmt.Fprintln(stderr, "splash-conform explore host:", err)
		return conformance.ExitUsage
	}
	if run.List {
		for _, iv := range invariants {
			fmt.Fprintf(stdout, "%-28s %-6s %-40s %s\n", checkID(iv.Name), iv.Level, strings.Join(iv.Requirements, ","), iv.Title)
		}
		return conformance.ExitOK
	}
	if run.Timeout <= 0 || run.Parallel <= 0 || *length <= 0 || *duration <= 0 {
		fmt.Fprintln(stderr, "splash-conform explore host: -timeout, -parallel, -length and -duration must be positive")
		return conformance.ExitUsage
	}
	cfg := &Config{Driver: fs.Args(), Seed: *seed, Duration: *duration, Parallel: run.Parallel, Length: *length,
		Limit: run.Timeout, ShrinkRuns: *shrinkRuns}
	if cfg.ShrinkRuns == 0 {
		cfg.ShrinkRuns = -1
	}
	if len(cfg.Driver) == 0 {
		fmt.Fprintln(stdout, "splash-conform explore host: no driver command given; using the bundled reference driver")
		bin, cleanup, err := conformance.ReferenceDriver()
		if err != nil {
			fmt.Fprintln(stderr, "splash-conform explore host:", err)
			return conformance.ExitUsage
		}
		defer cleanup()
		cfg.Driver = []string{bin}
	}
	if *replayPath != "" {
		return replayMain(cfg, *replayPath, stdout, stderr)
	}
	if cfg.Seed == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		cfg.Seed = binary.BigEndian.Uint64(b[:]) | 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fmt.Fprintf(stdout, "splash-conform explore host: driver: %s\n", strings.Join(cfg.Driver, " "))
	fmt.Fprintf(stdout, "splash-conform explore host: seed %d; duration %v; parallel %d; length %d\n\n", cfg.Seed, cfg.Duration, cfg.Parallel, cfg.Length)
	if run.Verbose {
		cfg.Progress = stdout
	}
	started := time.Now()
	res, err := Explore(ctx, cfg)
	if res == nil {
		fmt.Fprintln(stderr, "splash-conform explore host:", err)
		return conformance.ExitUsage
	}
	fmt.Fprintf(stdout, "%d sequences, %d commands, features %s, in %v\n", res.Walks, res.Steps, strings.Join(res.Features, ","), res.Duration.Round(time.Millisecond))
	if f := res.Failure; f != nil {
		fmt.Fprintf(stdout, "FAIL %s at command %d of sequence %d (shrunk from %d to %d commands)\n  expected: %s\n  observed: %s\n",
			f.Run.Violation.Invariant, f.Run.Violation.Step+1, f.Walk, len(f.Drawn), len(f.Shrunk), f.Run.Violation.Expected, f.Run.Violation.Observed)
		if path, err := writeReplay(cfg, res, *out); err != nil {
			fmt.Fprintln(stderr, "splash-conform explore host: the replay file:", err)
		} else {
			fmt.Fprintf(stdout, "replay: splash-conform explore host -replay %s -- %s\n", path, strings.Join(cfg.Driver, " "))
		}
	}
	report := Report(cfg, res, started, run.Strict)
	return conformance.FinishRun("splash-conform explore host", report, err, &expects, expected,
		conformance.RunOutputs{JSON: run.JSON, JUnit: run.JUnit, HTML: run.HTML, SpecBase: conformance.DefaultSpecBase}, stdout, stderr)
}

// writeReplay writes the failure's replay file into dir and returns its path.
func writeReplay(cfg *Config, res *Result, dir string) (string, error) {
	file, err := ReplayFile(cfg, res.Features, res.Failure)
	if err != nil {
		return "", err
	}
	b, err := file.Encode()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("explore-host-%d-%d.json", cfg.Seed, res.Failure.Walk))
	return path, os.WriteFile(path, b, 0o644)
}

// replayMain runs a replay file once and says whether its failure shows again.
func replayMain(cfg *Config, path string, stdout, stderr io.Writer) int {
	data, err := readBounded(path)
	if err == nil {
		var f replay.File
		if f, err = replay.Decode(data); err == nil {
			var syms []Symbol
			if syms, err = Symbols(f); err == nil {
				return replayRun(cfg, f, syms, stdout, stderr)
			}
		}
	}
	fmt.Fprintln(stderr, "splash-conform explore host:", err)
	return conformance.ExitUsage
}

func replayRun(cfg *Config, f replay.File, syms []Symbol, stdout, stderr io.Writer) int {
	seq, err := Run(cfg, syms)
	if err != nil {
		fmt.Fprintln(stderr, "splash-conform explore host:", err)
		return conformance.ExitUsage
	}
	for i, out := range seq.Outputs {
		fmt.Fprintf(stdout, "%3d %-22s %s\n", i+1, syms[i], out)
	}
	want := f.Steps[len(f.Steps)-1].Expected
	if v := seq.Violation; v != nil {
		fmt.Fprintf(stdout, "FAIL %s at command %d\n  expected: %s\n  observed: %s\n", v.Invariant, v.Step+1, v.Expected, v.Observed)
		if invariant(v.Invariant).Level == conformance.Should {
			return conformance.ExitOK
		}
		return conformance.ExitFailures
	}
	fmt.Fprintf(stdout, "PASS: every invariant held (the file expected %q)\n", want)
	return conformance.ExitOK
}

// readBounded reads at most replay.MaxBytes+1 bytes of path, so that Decode refuses a larger
// file without the whole of it in memory.
func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, replay.MaxBytes+1))
}
