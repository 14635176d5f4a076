// Package etcdstoretest starts real etcd members (the etcd binary on PATH or in SPLASH_ETCD) on
// loopback ports in a temporary directory, for tests: one member, or a cluster of several
// that tests stop, restart and kill. It is imported only by tests.
package etcdstoretest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/splashv5/conform/internal/childproc"
)

// ErrMissing is returned by Binary when no etcd binary is found.
var ErrMissing = errors.New("etcd not found: install it (Debian: apt-get install etcd-server) or set SPLASH_ETCD to the binary")

// Binary returns the path of the etcd binary: $SPLASH_ETCD, else etcd on PATH.
func Binary() (string, error) {
	if p := os.Getenv("SPLASH_ETCD"); p != "" {
		return p, nil
	}
	p, err := exec.LookPath("etcd")
	if err != nil {
		return "", ErrMissing
	}
	return p, nil
}

// Member is one etcd member of a Cluster.
type Member struct {
	Name      string
	ClientURL string
	peerURL   string
	dataDir   string
	cmd       *exec.Cmd
	exited    chan struct{}
}

// Cluster is a set of etcd members started together.
type Cluster struct {
	bin     string
	dir     string
	token   string
	initial string
	extra   []string
	tls     *TLSFiles
	http    *http.Client
	Members []*Member
}

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start starts n members in dir and waits until every one reports healthy.
func Start(dir string, n int) (*Cluster, error) { return StartWith(dir, n, Options{}) }

// StartArgs is Start with further etcd flags for every member, such as
// "--quota-backend-bytes", "25165824".
func StartArgs(dir string, n int, args ...string) (*Cluster, error) {
	return StartWith(dir, n, Options{Args: args})
}

// Options are further settings of the members of a Cluster.
type Options struct {
	// Args are further etcd flags for every member.
	Args []string
	// TLS, when not nil, serves the client URLs over https with these files and requires
	// client certificates signed by its CA.
	TLS *TLSFiles
}

// StartWith is Start with options.
func StartWith(dir string, n int, o Options) (*Cluster, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin, dir: dir, token: fmt.Sprintf("splash-test-%d", time.Now().UnixNano()), extra: o.Args, tls: o.TLS,
		http: &http.Client{Timeout: 5 * time.Second}}
	scheme := "http"
	if o.TLS != nil {
		scheme = "https"
		cfg, err := o.TLS.ClientConfig()
		if err != nil {
			return nil, err
		}
		c.http.Transport = &http.Transport{TLSClientConfig: cfg}
		c.extra = append(c.extra, "--cert-file", o.TLS.Cert, "--key-file", o.TLS.Key,
			"--client-cert-auth", "--trusted-ca-file", o.TLS.CA)
	}
	var initial []string
	for i := range n {
		cp, err := freePort()
		if err != nil {
			return nil, err
		}
		pp, err := freePort()
		if err != nil {
			return nil, err
		}
		m := &Member{
			Name:      fmt.Sprintf("m%d", i),
			ClientURL: fmt.Sprintf("%s://127.0.0.1:%d", scheme, cp),
			peerURL:   fmt.Sprintf("http://127.0.0.1:%d", pp),
			dataDir:   filepath.Join(dir, fmt.Sprintf("m%d", i)),
		}
		c.Members = append(c.Members, m)
		initial = append(initial, m.Name+"="+m.peerURL)
	}
	c.initial = strings.Join(initial, ",")
	for i := range c.Members {
		if err := c.start(i, "new"); err != nil {
			c.Stop()
			return nil, err
		}
	}
	for i := range c.Members {
		if err := c.WaitHealthy(i, 30*time.Second); err != nil {
			c.Stop()
			return nil, err
		}
	}
	return c, nil
}

// Endpoints returns the client URLs of all members.
func (c *Cluster) Endpoints() []string {
	out := make([]string, len(c.Members))
	for i, m := range c.Members {
		out[i] = m.ClientURL
	}
	return out
}

// start launches member i's process.
func (c *Cluster) start(i int, state string) error {
	m := c.Members[i]
	logf, err := os.OpenFile(filepath.Join(c.dir, m.Name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(c.bin, append([]string{
		"--name", m.Name, "--data-dir", m.dataDir,
		"--listen-client-urls", m.ClientURL, "--advertise-client-urls", m.ClientURL,
		"--listen-peer-urls", m.peerURL, "--initial-advertise-peer-urls", m.peerURL,
		"--initial-cluster", c.initial, "--initial-cluster-state", state,
		"--initial-cluster-token", c.token,
		"--heartbeat-interval", "50", "--election-timeout", "500",
		"--logger", "zap", "--log-outputs", "stderr"}, c.extra...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// The member dies with the test process even if the test cannot stop it.
	childproc.DieWithParent(cmd)
	childproc.SetGroup(cmd)
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start etcd member %s: %w", m.Name, err)
	}
	m.cmd = cmd
	m.exited = make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(m.exited)
	}()
	return nil
}

// WaitHealthy waits until member i answers its health endpoint with a healthy status.
func (c *Cluster) WaitHealthy(i int, limit time.Duration) error {
	m := c.Members[i]
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case <-m.exited:
			return fmt.Errorf("etcd member %s exited; see %s.log", m.Name, m.Name)
		default:
		}
		resp, err := c.http.Get(m.ClientURL + "/health")
		if err == nil {
			var buf [256]byte
			n, _ := resp.Body.Read(buf[:])
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.Contains(string(buf[:n]), `"true"`) {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("etcd member %s not healthy after %s", m.Name, limit)
}

// Leader returns the index of the member that reports itself leader (its metric
// etcd_server_is_leader is 1), waiting up to limit for one to be elected.
func (c *Cluster) Leader(limit time.Duration) (int, error) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		for i, m := range c.Members {
			if m.cmd == nil {
				continue
			}
			resp, err := c.http.Get(m.ClientURL + "/metrics")
			if err != nil {
				continue
			}
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
			resp.Body.Close()
			if strings.Contains(string(body), "\netcd_server_is_leader 1\n") {
				return i, nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return 0, fmt.Errorf("no etcd leader after %s", limit)
}

// PID returns the process id of member i, or 0 when it is not running.
func (c *Cluster) PID(i int) int {
	if m := c.Members[i]; m.cmd != nil {
		return m.cmd.Process.Pid
	}
	return 0
}

// Metric returns the value of the metric named name (a sample without labels) that member i
// exposes on its metrics endpoint.
func (c *Cluster) Metric(i int, name string) (float64, error) {
	resp, err := c.http.Get(c.Members[i].ClientURL + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, fmt.Errorf("member %s has no metric %s", c.Members[i].Name, name)
}

// ErrNoCtl is returned by the snapshot helpers when neither etcdctl nor etcdutl is found.
var ErrNoCtl = errors.New("etcdctl not found: install it (Debian: apt-get install etcd-client)")

// tool returns the path of an etcd command-line tool, next to the etcd binary or on PATH.
func (c *Cluster) tool(name string) (string, error) {
	if p := filepath.Join(filepath.Dir(c.bin), name); fileExists(p) {
		return p, nil
	}
	return exec.LookPath(name)
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// SaveSnapshot writes a snapshot of member i's data to path (etcdctl snapshot save).
func (c *Cluster) SaveSnapshot(i int, path string) error {
	ctl, err := c.tool("etcdctl")
	if err != nil {
		return ErrNoCtl
	}
	cmd := exec.Command(ctl, "--endpoints", c.Members[i].ClientURL, "snapshot", "save", path)
	cmd.Env = append(os.Environ(), "ETCDCTL_API=3")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("etcdctl snapshot save: %v: %s", err, out)
	}
	return nil
}

// RestoreSnapshot stops every member and replaces each one's data with the snapshot at path,
// restored with the same member names, peer URLs and cluster token (so the cluster keeps its
// id), then starts them again: the cluster as an operator restoring a backup leaves it. It
// uses etcdutl when present (etcd 3.5 and later), else etcdctl.
func (c *Cluster) RestoreSnapshot(path string) error {
	c.Stop()
	restore := []string{"snapshot", "restore", path}
	tool, err := c.tool("etcdutl")
	if err != nil {
		if tool, err = c.tool("etcdctl"); err != nil {
			return ErrNoCtl
		}
	}
	for _, m := range c.Members {
		if err := os.RemoveAll(m.dataDir); err != nil {
			return err
		}
		args := append(restore, "--name", m.Name, "--initial-cluster", c.initial,
			"--initial-cluster-token", c.token, "--initial-advertise-peer-urls", m.peerURL, "--data-dir", m.dataDir)
		cmd := exec.Command(tool, args...)
		cmd.Env = append(os.Environ(), "ETCDCTL_API=3")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s snapshot restore: %v: %s", filepath.Base(tool), err, out)
		}
	}
	for i := range c.Members {
		if err := c.start(i, "existing"); err != nil {
			return err
		}
	}
	for i := range c.Members {
		if err := c.WaitHealthy(i, 30*time.Second); err != nil {
			return err
		}
	}
	return nil
}

// Kill kills member i's process group and waits for the member to exit.
func (c *Cluster) Kill(i int) {
	c.stop(i, func(p *os.Process) { _ = childproc.KillGroup(p.Pid) })
}

// StopMember stops member i with SIGTERM and waits for it to exit.
func (c *Cluster) StopMember(i int) {
	c.stop(i, func(p *os.Process) { _ = p.Signal(syscall.SIGTERM) })
}

func (c *Cluster) stop(i int, end func(*os.Process)) {
	m := c.Members[i]
	if m.cmd == nil {
		return
	}
	end(m.cmd.Process)
	<-m.exited
	m.cmd = nil
}

// Restart starts a stopped member i again on its data directory and waits for it to be
// healthy.
func (c *Cluster) Restart(i int) error {
	if err := c.start(i, "existing"); err != nil {
		return err
	}
	return c.WaitHealthy(i, 30*time.Second)
}

// Stop stops every member that is still running.
func (c *Cluster) Stop() {
	for i := range c.Members {
		c.StopMember(i)
	}
}
