//go:build !unix

package conformance

import (
	"os"
	"os/exec"
)

// prepareProcess does nothing where process groups are not available.
func prepareProcess(*exec.Cmd) {}

// killGroup kills only the worker process itself where process groups are not available.
func killGroup(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil
	}
	return p.Kill()
}

// exitSignal reports no signal where signals are not available.
func exitSignal(*os.ProcessState) (string, bool) { return "", false }
