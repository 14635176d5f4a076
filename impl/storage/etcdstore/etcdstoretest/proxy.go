package etcdstoretest

import (
	"net"
	"sync"
	"sync/atomic"
)

// Proxy forwards TCP connections from a loopback port to a member's client port. Blackhole
// makes it a partition that never heals: it keeps every connection open and accepts new
// ones, but forwards no byte in either direction from then on.
type Proxy struct {
	ln         net.Listener
	target     string
	blackholed atomic.Bool

	mu    sync.Mutex
	conns []net.Conn
}

// NewProxy listens on a free loopback port and forwards to target (HOST:PORT).
func NewProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target}
	go p.serve()
	return p, nil
}

// Addr returns the proxy's HOST:PORT.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Blackhole stops all forwarding for good.
func (p *Proxy) Blackhole() { p.blackholed.Store(true) }

// Close stops the proxy and closes every connection.
func (p *Proxy) Close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

func (p *Proxy) track(c net.Conn) {
	p.mu.Lock()
	p.conns = append(p.conns, c)
	p.mu.Unlock()
}

func (p *Proxy) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.track(in)
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			in.Close()
			continue
		}
		p.track(out)
		go p.pipe(in, out)
		go p.pipe(out, in)
	}
}

// pipe copies from src to dst until either closes, dropping what it reads while
// blackholed.
func (p *Proxy) pipe(src, dst net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !p.blackholed.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
