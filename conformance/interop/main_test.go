package interop

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/conformancetest"
)

// Modes of the test binary besides the relay.
const (
	hostileWorkerCommand = "hostile-worker"
	hostileDriverCommand = "hostile-driver"
)

// TestMain lets the test binary serve as the relay, as hostile workers and drivers, and as the
// shipped peers.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 {
		switch os.Args[1] {
		case RelayCommand:
			os.Exit(RelayMain(os.Args[2:]))
		case hostileWorkerCommand:
			os.Exit(hostileWorker(os.Args[2]))
		case hostileDriverCommand:
			os.Exit(hostileDriver(os.Args[2]))
		case PeerCommand:
			os.Exit(PeerMain(os.Args[2:]))
		}
	}
	code := m.Run()
	conformancetest.RemovePrograms()
	os.Exit(code)
}

var (
	programsMu             sync.Mutex
	driverBin, workerBin   string
	faultyDriverBin        string
	faultyWorkerBin        string
	referenceWorkerCommand []string
)

// programs builds the reference driver and worker, and their faulty builds, once per test binary.
func programs(t testing.TB) {
	programsMu.Lock()
	defer programsMu.Unlock()
	if referenceWorkerCommand != nil {
		return
	}
	driverBin = conformancetest.Program(t, conformancetest.DriverPackage)
	workerBin = conformancetest.Program(t, conformancetest.WorkerPackage)
	faultyDriverBin = conformancetest.Program(t, conformancetest.DriverPackage, "splashfaults")
	faultyWorkerBin = conformancetest.Program(t, conformancetest.WorkerPackage, "splashfaults")
	referenceWorkerCommand = slices.Concat([]string{workerBin}, conformance.ReferenceWorkerArgs)
}

func relayCommand(t testing.TB) []string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, RelayCommand}
}

// referencePair is the bundled reference host driver and reference worker.
func referencePair(t testing.TB) Pair {
	programs(t)
	return Pair{
		Host:   Implementation{Name: "reference host", Command: []string{driverBin}, Numbers: NumbersPreserve},
		Worker: Implementation{Name: "reference worker", Command: referenceWorkerCommand, Numbers: NumbersPreserve, Features: []string{NeedDurable, NeedCompensation, NeedCancel}},
	}
}

// runPairT runs the pair's scenarios selected by run.
func runPairT(t testing.TB, pair Pair, run string, timeout time.Duration, env []string) *conformance.Report {
	t.Helper()
	report, err := Run(t.Context(), Config{RunConfig: conformance.RunConfig{Run: run, Timeout: timeout, Env: env, Parallel: 2}, Pair: pair, Relay: relayCommand(t)})
	if err != nil {
		t.Fatal(err)
	}
	conformancetest.CheckCitations(t, report)
	return report
}

// hostileWorker is a worker that misbehaves as mode says, after recording its process group
// in IOP_PIDS: the worker modes of the shipped peers (flood, garbage, hang, exit), and child
// (starts a sleeping child and hangs), record (writes its whole input to the file IOP_RECORD),
// diagnose (writes a line on standard error and exits 3) and late-line (writes a line once the
// file IOP_GO exists, and hangs).
func hostileWorker(mode string) int {
	recordGroup()
	switch mode {
	case "child":
		_ = exec.Command("sleep", "3600").Start()
	case "record":
		data, _ := io.ReadAll(os.Stdin)
		_ = os.WriteFile(os.Getenv("IOP_RECORD"), data, 0o600)
		return 0
	case "tee":
		return teeWorker(os.Getenv("IOP_RECORD"), os.Args[4:])
	case "diagnose":
		fmt.Fprintln(os.Stderr, "worker: cannot go on")
		return 3
	case "late-line":
		for {
			if _, err := os.Stat(os.Getenv("IOP_GO")); err == nil {
				fmt.Println("a line the relay must cut")
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	default:
		return peerWorker(mode, nil)
	}
	time.Sleep(time.Hour)
	return 0
}

// hostileDriver is a host driver of the shipped peers (hang, flood, exit) that first records
// its process group in IOP_PIDS.
func hostileDriver(mode string) int {
	recordGroup()
	return peerHost(mode, nil)
}

// teeWorker records, into dir, its own arguments and environment, its parent's (the relay's)
// command line and environment as the system shows them (/proc), and its whole input; it
// passes the input on to the wrapped worker, whose output and status are its own.
func teeWorker(dir string, wrapped []string) int {
	_ = os.WriteFile(filepath.Join(dir, "worker-args"), []byte(strings.Join(os.Args, "\x00")), 0o600)
	_ = os.WriteFile(filepath.Join(dir, "worker-env"), []byte(strings.Join(os.Environ(), "\x00")), 0o600)
	for _, f := range []string{"cmdline", "environ"} {
		data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/%s", os.Getppid(), f))
		_ = os.WriteFile(filepath.Join(dir, "relay-"+f), data, 0o600)
	}
	input, err := os.Create(filepath.Join(dir, "input"))
	if err != nil {
		return 2
	}
	defer input.Close()
	cmd := exec.Command(wrapped[0], wrapped[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = io.TeeReader(os.Stdin, input), os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		return 2
	}
	return 0
}

// recordGroup writes this process's group id into the directory IOP_PIDS names.
func recordGroup() {
	if dir := os.Getenv("IOP_PIDS"); dir != "" {
		pgid, _ := syscall.Getpgid(0)
		_ = os.WriteFile(filepath.Join(dir, fmt.Sprint(pgid)), nil, 0o600)
	}
}
