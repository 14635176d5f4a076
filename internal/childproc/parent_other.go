//go:build !linux

package childproc

import "os/exec"

// DieWithParent does nothing where the system cannot tie a child's life to its parent's.
func DieWithParent(*exec.Cmd) {}
