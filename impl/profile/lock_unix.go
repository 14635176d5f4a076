//go:build unix

package profile

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on f that other processes honour, waiting for it, and
// returns its release.
func lockFile(f *os.File) (unlock func(), err error) {
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }, nil
}
