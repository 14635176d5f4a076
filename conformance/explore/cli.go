package explore

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/explore/alphabet"
	"github.com/splashv5/conform/impl/canonjson"
)

// DefaultDuration is the default budget of the random methods: with learning against the
// committed reference machine, a run fits in a minute on two cores.
const DefaultDuration = 30 * time.Second

const usageText = `usage: splash-conform explore [flags] [-- WORKER-COMMAND [ARGS...]]
       splash-conform explore host [flags] ...   (the host side)

Explores a worker generatively (spec/32-explore.md): it learns the worker's session machine
black-box over the abstract alphabet, one fresh process per query, and compares it with the
reference worker's; it runs long random sessions checked step by step against the reference
and the session invariants, shrinking a failure into a replay file; and it mutates frames
inside live sessions. Findings are results CNF-EXP-*, reported as the suites report checks.

Without a worker command, the bundled reference worker is explored. The worker command takes
the placeholders of the worker suite ({journal}, {effects}, {scope}, {store-fault},
{storage-key}, {secret-source}).

flags:
`

// Main runs the explore command line and returns the exit status.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("splash-conform explore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		run       conformance.RunFlags
		expects   conformance.ExpectFlags
		duration  = fs.Duration("duration", DefaultDuration, "time budget of the random sessions and the fuzzing together")
		seed      = fs.Uint64("seed", 1, "`SEED` of the run: the same seed, worker and budget explore the same sessions")
		corpus    = fs.String("corpus", "", "keep the fuzzing inputs that reached new behaviour in `DIR`")
		replayDir = fs.String("replay", "", "write the replay file of each shrunk failure into `DIR`")
		dotDir    = fs.String("dot", "", "write both machines as DOT and SVG into `DIR` (default: next to the HTML report)")
		methods   = fs.String("methods", "learn,walk,fuzz", "comma-separated `METHODS` to run")
		liveRef   = fs.Bool("learn-reference", false, "learn the reference worker's machine live instead of using the committed one")
		needs     = fs.String("needs", "durable,cancel,compensation,store-fault,typed-json,secret,effect-fence", "comma-separated `NEEDS` the worker declares (durable, cancel, compensation, store-fault, typed-json, secret, effect-fence)")
		lossy     = fs.Bool("lossy-numbers", false, "open the worker's frames in the lossy number model")
		scope     = fs.String("scope", "explore", "journal `SCOPE` substituted for {scope}")
		scratch   = fs.String("scratch", "", "parent `DIR` of the words' scratch directories")
		specBase  = fs.String("spec-base", conformance.DefaultSpecBase, "`URL` prefix of the specification chapters the HTML report links to (\"-\": no links)")
	)
	run.Register(fs, "result", DefaultAnswerWait, true)
	if code, done := conformance.ParseCommandLine(fs, args, stdout, stderr, usageText, "result", Suite(), &expects); done {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "splash-conform explore: "+format+"\n", a...)
		return conformance.ExitUsage
	}
	expected, err := expects.Load(Suite(), CatalogEntries())
	if err != nil {
		return fail("%v", err)
	}
	if err := conformance.CheckSpecBase(*specBase); err != nil {
		return fail("-spec-base: %v", err)
	}
	if run.Parallel <= 0 || run.Timeout <= 0 || *duration < 0 {
		return fail("-parallel and -timeout must be positive, -duration not negative")
	}
	var ms []Method
	for _, m := range strings.Split(*methods, ",") {
		m := Method(strings.TrimSpace(m))
		if m != MethodLearn && m != MethodWalk && m != MethodFuzz {
			return fail("-methods: unknown method %q (learn, walk, fuzz)", m)
		}
		ms = append(ms, m)
	}
	if run.Run != "" {
		re, err := regexp.Compile(run.Run)
		if err != nil {
			return fail("-run: %v", err)
		}
		keep := map[Method]bool{}
		for _, r := range catalog {
			if strings.HasPrefix(r.ID, run.Run) || re.MatchString(r.ID) || slices.Contains(r.Requirements, run.Run) {
				keep[methodOf(r.ID)] = true
			}
		}
		ms = slices.DeleteFunc(ms, func(m Method) bool { return !keep[m] })
		if len(ms) == 0 {
			return fail("-run %q selects no result", run.Run)
		}
	}
	if run.List {
		for _, r := range catalog {
			if slices.Contains(ms, methodOf(r.ID)) {
				fmt.Fprintf(stdout, "%s\t%s\t%s\n", r.ID, r.Level, r.Title)
			}
		}
		return conformance.ExitOK
	}
	var ns []alphabet.Need
	for _, n := range strings.Split(*needs, ",") {
		n := alphabet.Need(strings.TrimSpace(n))
		if n == "" {
			continue
		}
		if !slices.Contains(allNeeds, n) {
			return fail("-needs: unknown need %q", n)
		}
		ns = append(ns, n)
	}
	refCmd, cleanup, err := conformance.ReferenceWorker()
	if err != nil {
		return fail("%v", err)
	}
	defer cleanup()
	port := conformance.WorkerCommand(fs.Args())
	if len(port) == 0 {
		fmt.Fprintln(stdout, "splash-conform explore: no worker command given; exploring the bundled reference worker")
		port = refCmd
	}
	ns, dropped := servableNeeds(ns, port)
	for _, n := range allNeeds {
		if p, ok := dropped[n]; ok {
			fmt.Fprintf(stdout, "splash-conform explore: need %s left out: the worker command has no %s placeholder\n", n, p)
		}
	}
	mode := canonjson.Preserve
	if *lossy {
		mode = canonjson.Lossy
	}
	launcher := func(c conformance.WorkerCommand, m canonjson.Mode) *Launcher {
		return &Launcher{Command: c, Scope: *scope, TempDir: *scratch, Needs: ns, Mode: m, AnswerWait: run.Timeout}
	}
	cfg := Config{
		Port: launcher(port, mode), Reference: launcher(refCmd, canonjson.Preserve),
		Alphabet: alphabet.For(ns...), Methods: ms, Seed: *seed, Duration: *duration,
		Parallel: run.Parallel, ReplayDir: *replayDir, Corpus: *corpus, Progress: stdout,
	}
	if !*liveRef && slices.Equal(alphabet.For(ns...), alphabet.For(allNeeds...)) {
		if cfg.ReferenceMachine, err = ReferenceMachine(); err != nil {
			return fail("the committed reference machine: %v", err)
		}
	}
	fmt.Fprintf(stdout, "splash-conform explore: worker: %s\n", strings.Join(port, " "))
	fmt.Fprintf(stdout, "splash-conform explore: methods: %s; seed: %d; duration: %v; parallel: %d\n\n", *methods, *seed, *duration, run.Parallel)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	started := time.Now()
	results, art, runErr := Run(ctx, cfg)
	if results == nil {
		return fail("%v", runErr)
	}
	for i := range results {
		results[i].Settle(run.Strict, nil)
		conformance.WriteProgress(stdout, results[i], run.Verbose)
	}
	dir := *dotDir
	if dir == "" && run.HTML != "" {
		dir = filepath.Dir(run.HTML)
	}
	if dir != "" {
		paths, err := WriteDrawings(dir, art)
		if err != nil {
			return fail("writing the drawings: %v", err)
		}
		fmt.Fprintf(stdout, "splash-conform explore: machines drawn: %s\n", strings.Join(paths, ", "))
	}
	figures, err := Figures(art)
	if err != nil {
		return fail("drawing the machines: %v", err)
	}
	report := conformance.NewReport(Suite(), port, run.Strict, started, results)
	return conformance.FinishRun("splash-conform explore", report, runErr, &expects, expected,
		conformance.RunOutputs{JSON: run.JSON, JUnit: run.JUnit, HTML: run.HTML, SpecBase: *specBase, Figures: figures}, stdout, stderr)
}

// methodOf returns the method that produces the result id.
func methodOf(id string) Method {
	switch id {
	case IDWalk, IDWalkShould:
		return MethodWalk
	case IDFuzz:
		return MethodFuzz
	}
	return MethodLearn
}
