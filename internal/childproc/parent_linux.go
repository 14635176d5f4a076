package childproc

import (
	"os/exec"
	"syscall"
)

// DieWithParent makes cmd's process get SIGKILL when the thread that started it ends, so that
// a child its starter cannot stop (a test that failed half-way) does not outlive it. It keeps
// the other attributes already set on cmd.
func DieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
