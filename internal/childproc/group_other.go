//go:build !unix

package childproc

import (
	"os"
	"os/exec"
)

// SetGroup does nothing where process groups are not available.
func SetGroup(*exec.Cmd) {}

// KillGroup kills only process pid where process groups are not available.
func KillGroup(pid int) error { return Kill(pid) }

// Kill kills process pid. A process that cannot be found is not an error.
func Kill(pid int) error {
	if pid <= 0 {
		return nil
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil
	}
	return p.Kill()
}

// Exists reports whether process pid can be found.
func Exists(pid int) bool {
	if pid <= 0 {
		return false
	}
	_, err := os.FindProcess(pid)
	return err == nil
}

// GroupExists reports whether process pid can be found where process groups are not available.
func GroupExists(pid int) bool { return Exists(pid) }
