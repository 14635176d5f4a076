//go:build unix

package conformance

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// prepareProcess puts the child in a process group of its own, so that the runner can end the
// worker together with everything it started.
func prepareProcess(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup sends SIGKILL to the process group led by pid. A group that no longer exists is
// not an error.
func killGroup(pid int) error {
	if pid <= 0 {
		return nil
	}
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// exitSignal reports the signal that ended the process, if one did.
func exitSignal(state *os.ProcessState) (string, bool) {
	if state == nil {
		return "", false
	}
	ws, ok := state.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return "", false
	}
	return ws.Signal().String(), true
}
