package etcdstore

import (
	"os"
	"syscall"
)

// flock takes or releases the lock of f, retrying an interrupted call.
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}
