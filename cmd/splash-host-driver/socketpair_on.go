//go:build splashfaults && linux

package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"

	"github.com/splashv5/conform/impl/transport"
)

// The socketpair switch of the test build is no fault: it makes the driver a correct host that
// hands its worker one end of a unix socket pair as standard input, as a Node.js host does,
// so that the host suite's checks are tried on a worker whose input is a socket. The worker
// command runs under a shim, the driver itself started with socketShim, which owns the pair.

// socketPair selects the switch: the fault name socketpair, or SPLASH_HOST_SOCKETPAIR set, which
// combines it with a fault.
var socketPair = fault == "socketpair" || os.Getenv("SPLASH_HOST_SOCKETPAIR") != ""

// socketShim is the first argument that runs the driver as the shim.
const socketShim = "socket-shim"

// fSetPipeSize is Linux's F_SETPIPE_SZ fcntl command.
const fSetPipeSize = 1031

// runShim runs the shim and exits when the driver was started as one.
func runShim() {
	if len(os.Args) > 2 && os.Args[1] == socketShim {
		os.Exit(shim(os.Args[2:]))
	}
}

// socketWorker makes cfg start its command under the shim (socketpair).
func socketWorker(cfg *transport.ProcessConfig) {
	if !socketPair {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	cfg.Args = append([]string{socketShim, cfg.Path}, cfg.Args...)
	cfg.Path = exe
}

// shim runs argv with one end of a socket pair as its standard input and copies its own
// standard input, the host's pipe, into the other end until it ends; it exits with argv's
// status. Its pipe and its end's send buffer are shrunk to about a page, so that the host's
// write blocks once the worker stops reading, as it would on a socket of its own.
func shim(argv []string) int {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return 126
	}
	page := os.Getpagesize()
	_ = syscall.SetsockoptInt(fds[0], syscall.SOL_SOCKET, syscall.SO_SNDBUF, page)
	_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, os.Stdin.Fd(), fSetPipeSize, uintptr(page))
	hostEnd, workerEnd := os.NewFile(uintptr(fds[0]), "host-end"), os.NewFile(uintptr(fds[1]), "worker-end")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = workerEnd, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return 127
	}
	_ = workerEnd.Close()
	_ = os.Stdout.Close() // the worker's output ends when the worker ends it
	go func() {
		_, _ = io.CopyBuffer(struct{ io.Writer }{hostEnd}, struct{ io.Reader }{os.Stdin}, make([]byte, page))
		_ = syscall.Shutdown(fds[0], syscall.SHUT_WR)
	}()
	var exit *exec.ExitError
	if err := cmd.Wait(); errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return exit.ExitCode()
	} else if err != nil {
		return 125
	}
	return 0
}
