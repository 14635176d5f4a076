//go:build unix

package childproc

import (
	"errors"
	"os/exec"
	"syscall"
)

// SetGroup makes cmd start as the leader of a process group of its own, so that killing the
// group ends the child together with everything it started. It keeps the other attributes
// already set on cmd.
func SetGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// KillGroup sends SIGKILL to the process group led by pid. A group that no longer exists, and
// a pid of zero or less, are not errors.
func KillGroup(pid int) error {
	if pid <= 0 {
		return nil
	}
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// Kill sends SIGKILL to process pid alone. A process that no longer exists, and a pid of zero
// or less, are not errors.
func Kill(pid int) error {
	if pid <= 0 {
		return nil
	}
	err := syscall.Kill(pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// Exists reports whether process pid exists, a zombie included.
func Exists(pid int) bool { return pid > 0 && syscall.Kill(pid, 0) == nil }

// GroupExists reports whether any process of the group led by pid exists, zombies included.
func GroupExists(pid int) bool { return pid > 0 && syscall.Kill(-pid, 0) == nil }
