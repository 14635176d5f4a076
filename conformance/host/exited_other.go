//go:build !linux

package host

import "syscall"

// exited reports whether process pid is gone. Without /proc a zombie cannot be told from a
// running process, so it counts as running until its parent reaps it.
func exited(pid int) bool { return syscall.Kill(pid, 0) == syscall.ESRCH }
