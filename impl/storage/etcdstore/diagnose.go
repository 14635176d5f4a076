package etcdstore

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"
)

// diagnose adds to err, a failure to reach the cluster, what a TLS handshake with each
// endpoint says: a client without TLS facing a member that speaks it, or a handshake that
// fails (an unknown certificate authority, a name mismatch, a client certificate the member
// refuses). Without it such a misconfiguration shows only as a timeout.
func diagnose(cfg Config, err error) error {
	var notes []error
	for _, e := range cfg.Endpoints {
		u, perr := url.Parse(e)
		if perr != nil {
			continue
		}
		if note := handshake(u, cfg.TLS, cfg.DialTimeout); note != nil {
			notes = append(notes, note)
		}
	}
	if len(notes) == 0 {
		return err
	}
	return fmt.Errorf("%w (%w)", err, errors.Join(notes...))
}

// handshake tries a TLS handshake with the member at u and describes the misconfiguration
// it shows, if any.
func handshake(u *url.URL, cfg *tls.Config, timeout time.Duration) error {
	dialer := &net.Dialer{Timeout: min(timeout, 2*time.Second)}
	if cfg == nil {
		// A member that completes a handshake speaks TLS, which the client does not.
		conn, err := tls.DialWithDialer(dialer, "tcp", u.Host, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only probes whether the member speaks TLS; nothing is sent
		if err != nil {
			return nil
		}
		conn.Close()
		return fmt.Errorf("member %s speaks TLS but the client has no TLS configuration: use https with ca_file", u.Host)
	}
	c := cfg.Clone()
	if c.ServerName == "" {
		c.ServerName = u.Hostname()
	}
	conn, err := tls.DialWithDialer(dialer, "tcp", u.Host, c)
	if err != nil {
		return fmt.Errorf("TLS handshake with %s: %w", u.Host, err)
	}
	defer conn.Close()
	// A member that requires a client certificate may refuse it only after the handshake:
	// a read shows the alert.
	_ = conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := conn.Read(make([]byte, 1)); err != nil {
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			return fmt.Errorf("TLS with %s: %w", u.Host, err)
		}
	}
	return nil
}
