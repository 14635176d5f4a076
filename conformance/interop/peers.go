package interop

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/splashv5/conform/internal/childproc"
)

// PeerCommand is the argument that selects the misbehaving peers of splash-conform: the hosts
// and workers of the self-test corpus (selftest.json, docs/interop.md), with which a runner
// proves that it blames the right side.
const PeerCommand = "peer"

// Peer modes. A worker mode runs as a worker command; a host mode as a host driver; a proxy
// mode wraps the real program given after "--".
const (
	// PeerWorkerFlood writes one endless line.
	PeerWorkerFlood = "flood"
	// PeerWorkerGarbage writes a line that is no frame, then hangs.
	PeerWorkerGarbage = "garbage"
	// PeerWorkerHang reads nothing and never answers.
	PeerWorkerHang = "hang"
	// PeerWorkerExit exits with status 3 before reading anything.
	PeerWorkerExit = "exit"
	// PeerWorkerRefuseNumbers wraps a worker and exits with status 1 and a diagnostic as soon
	// as its input holds the smallest subnormal or the largest finite double, both portable.
	PeerWorkerRefuseNumbers = "refuse-numbers"

	// PeerHostHang starts the worker command without a bootstrap and never answers start.
	PeerHostHang = "hang"
	// PeerHostFlood answers start with endless output.
	PeerHostFlood = "flood"
	// PeerHostExit exits with status 4 on start.
	PeerHostExit = "exit"
	// PeerHostKeepInput wraps a host driver whose sessions never end the worker's input.
	PeerHostKeepInput = "keep-input"
	// PeerHostKillAtEnd wraps a host driver that kills the worker's process group the moment
	// the worker's output ends (TRN-087 and TRN-096 allow it).
	PeerHostKillAtEnd = "kill-at-end"
)

// refusedNumbers are the portable numbers the refuse-numbers worker will not echo.
var refusedNumbers = []string{"5e-324", "1.7976931348623157e+308"}

// PeerMain runs a misbehaving peer (args after "peer"):
//
//	worker MODE [-- WORKER-COMMAND...]   a worker (refuse-numbers wraps WORKER-COMMAND)
//	host MODE [-- DRIVER-COMMAND...]     a host driver (keep-input, kill-at-end wrap DRIVER-COMMAND)
//	shim MODE -- COMMAND...              what a wrapping host starts in place of the worker
//
// It returns the exit status.
func PeerMain(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: splash-conform peer worker|host|shim MODE [-- COMMAND...]")
		return 2
	}
	role, mode, wrapped := args[0], args[1], []string(nil)
	if len(args) > 2 {
		if args[2] != "--" || len(args) < 4 {
			fmt.Fprintln(os.Stderr, "splash-conform peer: the wrapped command follows --")
			return 2
		}
		wrapped = args[3:]
	}
	switch role {
	case "worker":
		return peerWorker(mode, wrapped)
	case "host":
		return peerHost(mode, wrapped)
	case "shim":
		return peerShim(mode, wrapped)
	}
	fmt.Fprintf(os.Stderr, "splash-conform peer: unknown role %q\n", role)
	return 2
}

// peerWorker runs the worker mode.
func peerWorker(mode string, wrapped []string) int {
	switch mode {
	case PeerWorkerFlood:
		line := []byte(strings.Repeat("x", 1<<16))
		for {
			if _, err := os.Stdout.Write(line); err != nil {
				return 0
			}
		}
	case PeerWorkerGarbage:
		fmt.Println("not a frame at all")
	case PeerWorkerHang:
	case PeerWorkerExit:
		return 3
	case PeerWorkerRefuseNumbers:
		return refuseNumbers(wrapped)
	default:
		fmt.Fprintf(os.Stderr, "splash-conform peer: unknown worker mode %q\n", mode)
		return 2
	}
	time.Sleep(time.Hour)
	return 0
}

// refuseNumbers runs the wrapped worker and passes its input on until the input holds a
// refused number: then it stops the worker, says why on standard error and exits 1.
func refuseNumbers(wrapped []string) int {
	cmd, in := startWrapped(wrapped, "refuse-numbers wraps a worker command")
	if cmd == nil {
		return 2
	}
	refused := make(chan string, 1)
	go func() {
		r := bufio.NewReader(os.Stdin)
		for {
			chunk, err := r.ReadBytes('\n')
			for _, n := range refusedNumbers {
				if bytes.Contains(chunk, []byte(n)) {
					refused <- n
					return
				}
			}
			if _, werr := in.Write(chunk); werr != nil || err != nil {
				_ = in.Close()
				return
			}
		}
	}()
	exited := make(chan int, 1)
	go func() { exited <- exitCode(cmd.Wait()) }()
	select {
	case n := <-refused:
		_ = cmd.Process.Kill()
		<-exited
		fmt.Fprintf(os.Stderr, "worker: refusing the number %s: it cannot be represented here\n", n)
		return 1
	case code := <-exited:
		return code
	}
}

// startWrapped starts the wrapped command with its output passed through and returns it and
// the pipe to its input; it says why on standard error (missing when there is no command) and
// returns nil when it cannot.
func startWrapped(wrapped []string, missing string) (*exec.Cmd, io.WriteCloser) {
	if len(wrapped) == 0 {
		fmt.Fprintln(os.Stderr, "splash-conform peer: "+missing)
		return nil, nil
	}
	cmd := exec.Command(wrapped[0], wrapped[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	in, err := cmd.StdinPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "splash-conform peer:", err)
		return nil, nil
	}
	return cmd, in
}

// exitCode is the status a wrapper exits with for err of a wrapped command's Wait.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return childproc.Classify(ee.ProcessState).ShellStatus()
	}
	return 2
}

// peerCommand is a command line of the host-driver contract as a peer reads it.
type peerCommand struct {
	ID      uint64   `json:"id"`
	Op      string   `json:"op"`
	Command []string `json:"command"`
}

// peerHost runs the host mode.
func peerHost(mode string, wrapped []string) int {
	switch mode {
	case PeerHostKeepInput, PeerHostKillAtEnd:
		return wrapDriver(mode, wrapped)
	case PeerHostHang, PeerHostFlood, PeerHostExit:
	default:
		fmt.Fprintf(os.Stderr, "splash-conform peer: unknown host mode %q\n", mode)
		return 2
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<16), 1<<22)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var c peerCommand
		if json.Unmarshal(in.Bytes(), &c) != nil {
			return 2
		}
		if c.Op == "hello" {
			_ = out.Encode(map[string]any{"id": c.ID, "ok": true, "features": []string{"invoke"}})
			continue
		}
		switch mode {
		case PeerHostHang:
			if c.Op == "start" && len(c.Command) > 0 {
				// The worker command in a group of its own, never fed a bootstrap.
				cmd := exec.Command(c.Command[0], c.Command[1:]...)
				childproc.SetGroup(cmd)
				cmd.Stdin, _ = os.Open(os.DevNull)
				_ = cmd.Start()
			}
			time.Sleep(time.Hour)
		case PeerHostFlood:
			line := []byte(strings.Repeat("y", 1<<16) + "\n")
			for {
				if _, err := os.Stdout.Write(line); err != nil {
					return 0
				}
			}
		case PeerHostExit:
			return 4
		}
	}
	return 0
}

// wrapDriver runs the wrapped host driver with every start command rewritten to run the
// worker command behind a shim of mode, and passes everything else through unchanged.
func wrapDriver(mode string, wrapped []string) int {
	self, err := os.Executable()
	if err != nil {
		return 2
	}
	cmd, in := startWrapped(wrapped, "a wrapping host needs the driver command after --")
	if cmd == nil {
		return 2
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	for sc.Scan() {
		line := sc.Bytes()
		var c map[string]json.RawMessage
		if json.Unmarshal(line, &c) == nil && string(c["op"]) == `"start"` {
			var argv []string
			if json.Unmarshal(c["command"], &argv) == nil && len(argv) > 0 {
				c["command"], _ = json.Marshal(slices.Concat([]string{self, PeerCommand, "shim", mode, "--"}, argv))
				line, _ = json.Marshal(c)
			}
		}
		if _, err := in.Write(append(line, '\n')); err != nil {
			break
		}
	}
	_ = in.Close()
	return exitCode(cmd.Wait())
}

// peerShim runs the wrapped worker command between the host and it, and ends the session as
// mode says: keep-input never ends the worker's input; kill-at-end kills its own process group
// (the host's group of the worker) the moment the worker's output ends.
func peerShim(mode string, wrapped []string) int {
	if len(wrapped) == 0 || mode != PeerHostKeepInput && mode != PeerHostKillAtEnd {
		fmt.Fprintln(os.Stderr, "splash-conform peer: usage: shim keep-input|kill-at-end -- COMMAND...")
		return 2
	}
	signal.Ignore(syscall.SIGPIPE)
	cmd := exec.Command(wrapped[0], wrapped[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return 2
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "splash-conform peer:", err)
		return 2
	}
	go func() {
		_, _ = io.Copy(in, os.Stdin)
		if mode != PeerHostKeepInput {
			_ = in.Close()
		}
	}()
	_, _ = io.Copy(os.Stdout, out)
	if mode == PeerHostKillAtEnd {
		// Only a group the host made for the worker, which the shim leads.
		if pgid, err := syscall.Getpgid(0); err == nil && pgid == os.Getpid() {
			_ = childproc.KillGroup(pgid)
		}
	}
	_ = os.Stdout.Close()
	return exitCode(cmd.Wait())
}
