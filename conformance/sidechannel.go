package conformance

import (
	"net"
	"os"
	"path/filepath"
)

// SideChannel is the unix socket on which the programs a check has a host start (the host
// suite's fake worker, the interop relay) report to the runner, in a scratch directory of the
// check's own. Its path names no key material (HDR-030).
type SideChannel struct {
	// Dir is the check's scratch directory, which holds the socket.
	Dir string
	// Sock is the socket's path, the argument the started program is given.
	Sock string
	// Conns delivers the connections accepted, at most as many as its buffer holds at once;
	// more are refused, so a host that starts programs in a loop costs nothing unbounded.
	Conns    <-chan net.Conn
	listener net.Listener
}

// OpenSideChannel makes a scratch directory under parent (its name starts with prefix; keep
// it short, since a socket path is limited), listens on name inside it and accepts up to
// backlog connections that nobody has taken yet.
func OpenSideChannel(parent, prefix, name string, backlog int) (*SideChannel, error) {
	dir, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return nil, err
	}
	s := &SideChannel{Dir: dir, Sock: filepath.Join(dir, name)}
	if s.listener, err = net.Listen("unix", s.Sock); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	conns := make(chan net.Conn, backlog)
	s.Conns = conns
	go func() {
		for {
			c, err := s.listener.Accept()
			if err != nil {
				return
			}
			select {
			case conns <- c:
			default:
				c.Close()
			}
		}
	}()
	return s, nil
}

// Close stops listening, closes the connections nobody took and removes the directory. It
// may be called on a nil SideChannel.
func (s *SideChannel) Close() {
	if s == nil {
		return
	}
	s.listener.Close()
	for {
		select {
		case c := <-s.Conns:
			c.Close()
			continue
		default:
		}
		break
	}
	_ = os.RemoveAll(s.Dir)
}
