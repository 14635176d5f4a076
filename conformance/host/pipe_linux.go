package host

import (
	"errors"
	"os"
	"syscall"
)

// fSetPipeSize is Linux's F_SETPIPE_SZ fcntl command.
const fSetPipeSize = 1031

// shrinkInput shrinks the pipe of in to one page, so that a host writing a larger frame blocks
// as soon as the fake worker stops reading. It returns the pipe's capacity and what it had to
// read first: Linux refuses (EBUSY) to shrink a pipe below what it holds.
func shrinkInput(in *os.File) (capacity int, pending []byte, err error) {
	page := os.Getpagesize()
	buf := make([]byte, 64<<10)
	for range 8 {
		r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, in.Fd(), fSetPipeSize, uintptr(page))
		if errno != syscall.EBUSY {
			if errno != 0 {
				return 0, pending, errno
			}
			return int(r), pending, nil
		}
		n, err := in.Read(buf)
		pending = append(pending, buf[:n]...)
		if err != nil {
			return 0, pending, err
		}
	}
	return 0, pending, errors.New("the pipe stays fuller than a page")
}
