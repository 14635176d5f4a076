package fakeworker

import (
	"errors"
	"os"
	"syscall"
)

// fSetPipeSize is Linux's F_SETPIPE_SZ fcntl command.
const fSetPipeSize = 1031

// shrinkInput shrinks the buffer of in, the fake worker's standard input, to about one page,
// so that a host writing a larger frame blocks soon after the fake worker stops reading. It
// returns the kind of in (InputPipe, InputSocket or the file mode), the capacity it got and
// what it had to read first. A pipe is shrunk with F_SETPIPE_SZ, which Linux refuses (EBUSY)
// below what the pipe holds. A socket (a host may hand its worker one end of a socket pair)
// has its receive buffer shrunk with SO_RCVBUF; on Linux a unix stream socket's writer is
// bounded by its own send buffer, which only the host can set, so there the frame must outgrow
// it by its size (socketUndoBytes).
func shrinkInput(in *os.File) (kind string, capacity int, pending []byte, err error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(in.Fd()), &st); err != nil {
		return "unknown", 0, nil, err
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFIFO:
	case syscall.S_IFSOCK:
		fd := int(in.Fd())
		if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVBUF, os.Getpagesize()); err != nil {
			return InputSocket, 0, nil, err
		}
		capacity, err := syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVBUF)
		return InputSocket, capacity, nil, err
	default:
		return os.FileMode(st.Mode).String(), 0, nil, errors.New("standard input is neither a pipe nor a socket")
	}
	page := os.Getpagesize()
	buf := make([]byte, 64<<10)
	for range 8 {
		r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, in.Fd(), fSetPipeSize, uintptr(page))
		if errno != syscall.EBUSY {
			if errno != 0 {
				return InputPipe, 0, pending, errno
			}
			return InputPipe, int(r), pending, nil
		}
		n, err := in.Read(buf)
		pending = append(pending, buf[:n]...)
		if err != nil {
			return InputPipe, 0, pending, err
		}
	}
	return InputPipe, 0, pending, errors.New("the pipe stays fuller than a page")
}
