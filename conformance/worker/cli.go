package worker

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/splashv5/conform/conformance"
)

const usageText = `usage: splash-conform [flags] [-- WORKER-COMMAND [ARGS...]]
       splash-conform host [flags] [-- DRIVER-COMMAND [ARGS...]]   (the host suite; see host -h)

Runs the Splash worker protocol v5 conformance suite against a worker executable. The runner
starts the worker once per check, writes the private-pipe bootstrap (with a fresh key) on its
standard input, then speaks authenticated JSON lines on its standard input and output.

Without a worker command, the suite runs against the bundled reference worker
(cmd/splash-worker), built from this module when needed.

The worker command may contain placeholders, replaced per check:
  {journal}  a journal file; enables the restart, fencing and recovery checks
  {effects}  the profile's effect log (spec/15-profile.md); enables the effect-counting checks
  {scope}    the journal scope used for compensation (default "conformance", see -scope)
  {store-fault}    the store fault trigger of PRF-021, a path the runner creates to make
                   journal writes fail; enables the crash-safety checks
  {storage-key}    a file holding a fresh storage key (64 hex digits) the worker must use;
                   the runner then looks for that key in every output too
  {secret-source}  the secret source of the profile's secret tool (PRF-033); enables the
                   secret-value and provider-failure checks

With -expect FILE, a failure the expectations file lists does not fail the run; an unlisted
one does. -write-expectations FILE writes today's failures as such a file (docs/porting.md).

flags:
`

// Main is the command-line front end: it parses args (without the program name), runs the
// suite and returns the exit status (ExitOK, ExitFailures or ExitUsage).
func Main(args []string, stdout, stderr io.Writer) int {
	var (
		specBase, without, scope, scratch string
		cfg                               Config
	)
	return conformance.Main(conformance.Command[*T]{
		Prog: "splash-conform", Usage: usageText, Suite: "worker", Unit: "check", Timeout: conformance.DefaultTimeout, Strict: true,
		Catalog: Catalog,
		Flags: []conformance.StringFlag{
			{Value: &specBase, Name: "spec-base", Default: conformance.DefaultSpecBase, Usage: "`URL` prefix of the specification chapters that the HTML report links requirement IDs to (\"-\": no links)"},
			{Value: &without, Name: "without", Usage: "comma-separated `NEEDS` the worker does not offer (durable, compensation, cancel, typed-json, secret, effect-fence); their checks are skipped"},
			{Value: &scope, Name: "scope", Default: DefaultScope, Usage: "journal `SCOPE` of the worker (substituted for {scope})"},
			{Value: &scratch, Name: "scratch", Usage: "parent `DIR` of the per-check journals and effect logs (default $TMPDIR, else /dev/shm, else the system temporary directory)"},
		},
		List: writeList,
		Prepare: func(inv *conformance.Invocation) error {
			run := inv.Flags
			cfg = Config{RunConfig: run.Config(), Worker: inv.Args, Strict: run.Strict, Scope: scope,
				FullFrames: run.Verbose || run.JSON != ""}
			cfg.TempDir = scratch
			if err := conformance.CheckSpecBase(specBase); err != nil {
				return fmt.Errorf("-spec-base: %w", err)
			}
			inv.Outputs.SpecBase = specBase
			if without == "" {
				return nil
			}
			for _, name := range strings.Split(without, ",") {
				n, ok := ParseNeed(strings.TrimSpace(name))
				if !ok {
					return fmt.Errorf("-without: unknown need %q (known: %s)", name, needNames())
				}
				cfg.Without = append(cfg.Without, n)
			}
			return nil
		},
		Start: func(ctx context.Context, inv *conformance.Invocation) int {
			command, cleanup, err := inv.Peer("worker", conformance.ReferenceWorker)
			if err != nil {
				return inv.Failed(err)
			}
			defer cleanup()
			cfg.Worker = command
			offered := cfg.Offered()
			var offers []string
			for _, n := range AllNeeds {
				if offered[n] {
					offers = append(offers, string(n))
				}
			}
			inv.Printf("worker: %s", strings.Join(cfg.Worker, " "))
			inv.Printf("offers: %s; strict: %v; timeout: %v; parallel: %d\n", conformance.OrDash(strings.Join(offers, ", ")), cfg.Strict, cfg.Timeout, cfg.Parallel)
			cfg.Progress = inv.Stdout
			return inv.Finish(Run(ctx, cfg))
		},
	}, args, stdout, stderr)
}

func needNames() string {
	var names []string
	for _, n := range AllNeeds {
		names = append(names, string(n))
	}
	return strings.Join(names, ", ")
}

// writeList prints the catalog.
func writeList(w io.Writer, checks conformance.Catalog[*T]) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tLEVEL\tNEEDS\tREQUIREMENTS\tDESCRIPTION")
	for _, c := range checks {
		var needs []string
		for _, n := range c.Needs {
			needs = append(needs, string(n))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.ID, c.Level, conformance.OrDash(strings.Join(needs, ",")), strings.Join(c.Requirements, ","), c.Title)
	}
	tw.Flush()
	fmt.Fprintf(w, "%d checks\n", len(checks))
}
