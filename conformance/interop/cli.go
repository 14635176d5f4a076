package interop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/splashv5/conform/conformance"
)

const usageText = `usage: splash-conform interop [flags] [-- WORKER-COMMAND [ARGS...]]
       splash-conform interop -matrix FILE [flags]

Runs the interop scenarios: the runner tells a host driver (spec/30-host-driver.md) to start a
relay in place of the worker; the relay starts the real worker, passes everything through
unchanged and verifies every frame of both directions, naming the side that broke a rule
(spec/31-interop.md, docs/interop.md). Without -host, the host is the bundled reference driver;
without a worker command, the worker is the bundled reference worker. The worker command may
hold the worker suite's placeholders: {journal} and {effects} (one file each per scenario,
shared by its sessions), {scope} (see -scope) and {store-fault}, which becomes a path that never
exists, so a worker's store fault trigger never fires.

With -matrix, every host × worker pair of the implementations file is run, and the matrix is
written as text (and with -json, -html as JSON and an HTML page).

With -expect FILE, a failure the expectations file lists does not fail the run; an unlisted one
does. A matrix run names a cell's scenario HOST/WORKER/ID; a plain ID names the scenario in
every cell. -write-expectations FILE writes today's failures as such a file (docs/interop.md).

flags:
`

// Main is the front end of "splash-conform interop": it parses args (after "interop"), runs
// one pair or a matrix and returns the exit status (conformance.ExitOK, ExitFailures or
// ExitUsage).
func Main(args []string, stdout, stderr io.Writer) int {
	var (
		matrixPath, hostCmd, hostNums, workerNums, workerFeats, scope string
		m                                                             *Matrix
	)
	return conformance.Main(conformance.Command[*T]{
		Prog: "splash-conform interop", Usage: usageText, Suite: "interop", Unit: "scenario", Timeout: DefaultTimeout,
		Catalog: Catalog,
		Flags: []conformance.StringFlag{
			{Value: &matrixPath, Name: "matrix", Usage: "run every host × worker pair of the implementations `FILE` (docs/interop.md)"},
			{Value: &hostCmd, Name: "host", Usage: "the host driver `COMMAND` (split at spaces; default: the bundled reference driver)"},
			{Value: &hostNums, Name: "host-numbers", Default: NumbersPreserve, Usage: "the host's number `MODEL`: preserve or lossy"},
			{Value: &workerNums, Name: "worker-numbers", Default: NumbersPreserve, Usage: "the worker's number `MODEL`: preserve or lossy"},
			{Value: &workerFeats, Name: "worker-features", Default: strings.Join([]string{NeedDurable, NeedCompensation, NeedCancel}, ","), Usage: "comma-separated `FEATURES` the worker offers"},
			{Value: &scope, Name: "scope", Default: DefaultScope, Usage: "journal `SCOPE` of the worker (substituted for {scope}, given to the host in start)"},
		},
		List: func(w io.Writer, scenarios conformance.Catalog[*T]) {
			for _, s := range scenarios {
				fmt.Fprintf(w, "%-19s %-40s %s\n", s.ID, strings.Join(s.Requirements, ","), s.Title)
			}
			fmt.Fprintf(w, "%d scenarios\n", len(scenarios))
		},
		Prepare: func(inv *conformance.Invocation) (err error) {
			if matrixPath != "" {
				if len(inv.Args) > 0 || hostCmd != "" {
					return errors.New("-matrix takes neither -host nor a worker command")
				}
				if m, err = loadMatrixFile(matrixPath); err != nil {
					return err
				}
				inv.Catalog = MatrixEntries(m)
				return nil
			}
			m = &Matrix{
				Hosts:   []Implementation{{Name: "host", Command: strings.Fields(hostCmd), Numbers: hostNums}},
				Workers: []Implementation{{Name: "worker", Command: inv.Args, Numbers: workerNums, Features: strings.Split(workerFeats, ",")}},
			}
			if len(m.Hosts[0].Command) == 0 {
				m.Hosts[0].Command = []string{TokenReferenceHost}
			}
			if len(m.Workers[0].Command) == 0 {
				m.Workers[0].Command = slices.Concat([]string{TokenReferenceWorker}, conformance.ReferenceWorkerArgs)
			}
			for _, impl := range slices.Concat(m.Hosts, m.Workers) {
				if impl.Numbers != NumbersPreserve && impl.Numbers != NumbersLossy {
					return fmt.Errorf("number models are %q or %q", NumbersPreserve, NumbersLossy)
				}
			}
			return nil
		},
		Start: func(ctx context.Context, inv *conformance.Invocation) int {
			cleanup, err := resolveTokens(m)
			defer cleanup()
			if err != nil {
				return inv.Failed(err)
			}
			run := inv.Flags
			cfg := Config{RunConfig: run.Config(), Scope: scope}
			cfg.Progress = inv.Stdout
			if matrixPath == "" {
				cfg.Pair = Pair{Host: m.Hosts[0], Worker: m.Workers[0]}
				inv.Printf("host: %s", strings.Join(cfg.Pair.Host.Command, " "))
				inv.Printf("worker: %s\n", strings.Join(cfg.Pair.Worker.Command, " "))
				return inv.Finish(Run(ctx, cfg))
			}
			return runMatrix(ctx, inv, m, cfg)
		},
	}, args, stdout, stderr)
}

// runMatrix runs every pair of m, prints the matrix and writes its reports.
func runMatrix(ctx context.Context, inv *conformance.Invocation, m *Matrix, cfg Config) int {
	res, err := RunMatrix(ctx, m, cfg)
	judged, jerr := res.Judge(&inv.Expects, inv.Expected)
	if jerr != nil {
		return inv.Failed(fmt.Errorf("writing the expectations: %w", jerr))
	}
	fmt.Fprintln(inv.Stdout)
	res.WriteText(inv.Stdout)
	conformance.WriteExpectationSummary(inv.Stdout, judged)
	status := judged.ExitCode()
	if res.Failing() {
		status = conformance.ExitFailures
	}
	if err != nil {
		fmt.Fprintln(inv.Stderr, "splash-conform interop: interrupted:", err)
		status = conformance.ExitUsage
	}
	for path, write := range map[string]func(io.Writer) error{inv.Outputs.JSON: res.WriteJSON, inv.Outputs.HTML: res.WriteHTML} {
		if path == "" {
			continue
		}
		if err := conformance.WriteReportFile(path, write); err != nil {
			fmt.Fprintln(inv.Stderr, "splash-conform interop: writing a report:", err)
			status = conformance.ExitUsage
		}
	}
	return status
}

// resolveTokens replaces the bundled-program tokens of every command of m with the programs,
// built when needed; cleanup removes what was built.
func resolveTokens(m *Matrix) (cleanup func(), err error) {
	var cleanups []func()
	cleanup = func() {
		for _, c := range cleanups {
			c()
		}
	}
	programs := map[string]string{}
	resolve := func(token string) (string, error) {
		if p, ok := programs[token]; ok {
			return p, nil
		}
		var (
			bin  string
			done func()
			err  error
		)
		switch token {
		case TokenReferenceHost:
			bin, done, err = conformance.ReferenceDriver()
		case TokenReferenceWorker:
			var cmd []string
			cmd, done, err = conformance.ReferenceWorker()
			if err == nil {
				bin = cmd[0]
			}
		}
		if err != nil {
			return "", missingProgram(token, err)
		}
		cleanups = append(cleanups, done)
		programs[token] = bin
		return bin, nil
	}
	for _, list := range [][]Implementation{m.Hosts, m.Workers} {
		for i := range list {
			cmd := slices.Clone(list[i].Command)
			for j, a := range cmd {
				if a == TokenReferenceHost || a == TokenReferenceWorker {
					if cmd[j], err = resolve(a); err != nil {
						return cleanup, err
					}
				}
			}
			list[i].Command = cmd
		}
	}
	return cleanup, nil
}

// Programs names the three programs of a release, which sit side by side: the runner finds the
// reference worker and host driver next to its own executable (docs/interop.md).
var Programs = []string{"splash-conform", "splash-worker", "splash-host-driver"}

// InstallCommand installs the three programs side by side.
const InstallCommand = "go install " + conformance.ModulePath + "/cmd/splash-conform@latest " +
	conformance.ModulePath + "/cmd/splash-worker@latest " + conformance.ModulePath + "/cmd/splash-host-driver@latest"

// missingProgram explains that the bundled program token stands for is neither next to the
// runner nor buildable here (outside this module's source), and how to supply it.
func missingProgram(token string, cause error) error {
	what, name, flag := "worker", "splash-worker", "a worker command after --"
	if token == TokenReferenceHost {
		what, name, flag = "host driver", "splash-host-driver", "-host COMMAND"
	}
	dir := "the runner's directory"
	if exe, err := os.Executable(); err == nil {
		dir = filepath.Dir(exe)
	}
	return fmt.Errorf("the reference %s is missing: there is no %s in %s, next to splash-conform, and it could not be built from source here (%v); "+
		"install the three programs side by side (%s), or give %s", what, name, dir, firstLine(cause), InstallCommand, flag)
}

// firstLine is the first line of err's text.
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
