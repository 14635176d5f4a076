//go:build linux

package etcdstore

import (
	"os"
	"syscall"
)

// datasync makes the witness file's data durable, with the metadata needed to read it back.
func datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}
