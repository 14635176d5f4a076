package fakeworker

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"time"
)

// Command is the argument that selects the fake-worker mode of splash-conform.
const Command = "fake-worker"

// Hello is the first line the fake worker sends to the runner: what it was started with.
type Hello struct {
	Argv  []string `json:"argv"`
	Env   []string `json:"env"`
	Pid   int      `json:"pid"`
	Pgid  int      `json:"pgid"`
	Child int      `json:"child,omitempty"`
	// Input is the kind of its standard input under HoldFlag (InputPipe or InputSocket), Pipe
	// the capacity of its buffer after HoldFlag shrank it, and PipeError why it could not.
	Input     string `json:"input,omitempty"`
	Pipe      int    `json:"pipe,omitempty"`
	PipeError string `json:"pipe_error,omitempty"`
}

// Kinds of the fake worker's standard input (hello.Input).
const (
	InputPipe   = "pipe"
	InputSocket = "socket"
)

// Relay is one instruction of the runner to the fake worker.
type Relay struct {
	// Write is written to the fake worker's standard output as is.
	Write []byte `json:"write,omitempty"`
	// CloseOutput closes its standard output.
	CloseOutput bool `json:"close_output,omitempty"`
	// Exit ends the fake worker with this status (when Exiting).
	Exit    int  `json:"exit,omitempty"`
	Exiting bool `json:"exiting,omitempty"`
}

// Main is the fake worker (HDR-030) (args after "fake-worker"): SOCKET [--child]
// [--hold-compensation]. It connects to the runner's unix socket SOCKET, reports its argv,
// environment and process identity, then relays every byte of its standard input to the runner
// and writes to its standard output what the runner tells it to. With --child it first starts a
// child in its process group that only sleeps, so that the runner can tell whether the host
// killed the whole group. With --hold-compensation it shrinks its input's buffer (a pipe's or a
// socket's) before it reports and stops reading in the middle of a compensate_operation frame (holdInput). It
// exits when the runner says so or hangs up. The session key never passes through its arguments.
func Main(args []string) int {
	if len(args) == 1 && args[0] == "--sleep" {
		time.Sleep(time.Hour)
		return 0
	}
	if len(args) < 1 {
		fmt.Fprintln(os.Stderr, "usage: splash-conform fake-worker SOCKET [--child]")
		return 2
	}
	conn, err := net.Dial("unix", args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake-worker:", err)
		return 2
	}
	h := Hello{Argv: os.Args, Env: os.Environ(), Pid: os.Getpid()}
	h.Pgid, _ = syscall.Getpgid(0)
	hold := slices.Contains(args[1:], HoldFlag)
	var pending []byte
	if hold {
		var err error
		if h.Input, h.Pipe, pending, err = shrinkInput(os.Stdin); err != nil {
			h.PipeError = err.Error()
		}
	}
	if slices.Contains(args[1:], "--child") {
		if exe, err := os.Executable(); err == nil {
			child := exec.Command(exe, Command, "--sleep")
			if child.Start() == nil {
				h.Child = child.Process.Pid
			}
		}
	}
	line, _ := json.Marshal(h)
	if _, err := conn.Write(append(line, '\n')); err != nil {
		return 2
	}
	go func() {
		if hold {
			if holdInput(conn, os.Stdin, pending) {
				return // the host stays blocked in its write until the runner kills it
			}
		} else {
			_, _ = io.Copy(conn, os.Stdin)
		}
		if uc, ok := conn.(*net.UnixConn); ok {
			_ = uc.CloseWrite()
		}
	}()
	in := bufio.NewReader(conn)
	dec := json.NewDecoder(in)
	for {
		var c Relay
		if err := dec.Decode(&c); err != nil {
			return 0
		}
		if c.Exiting {
			return c.Exit
		}
		if len(c.Write) > 0 {
			_, _ = os.Stdout.Write(c.Write)
		}
		if c.CloseOutput {
			_ = os.Stdout.Close()
		}
	}
}
