package main

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// etcdJournalForm is the one accepted shape of an etcd journal value, named in every refusal.
const etcdJournalForm = "etcd://HOST:PORT[,HOST:PORT...]/PREFIX"

// parseEtcdJournal parses an etcd journal value of the form etcdJournalForm into endpoints
// (with the scheme https:// when tlsOn, else http://) and the key prefix, which starts with a
// slash and has no trailing one. It refuses, naming the bad part, every value that is not of
// that form: a missing endpoint list or prefix, an endpoint that is not a host name or IP
// address followed by a decimal port from 1 to 65535 (so a scheme such as https:// written
// inside the value is refused, never taken for a host), and a prefix with an empty, "." or ".."
// segment or with a character outside printable ASCII.
func parseEtcdJournal(value string, tlsOn bool) ([]string, string, error) {
	rest, ok := strings.CutPrefix(value, etcdScheme)
	if !ok {
		return nil, "", fmt.Errorf("--journal %q does not start with %s; write %s", value, etcdScheme, etcdJournalForm)
	}
	hosts, prefix, ok := strings.Cut(rest, "/")
	if !ok || hosts == "" {
		return nil, "", fmt.Errorf("--journal %s needs %s: no endpoint list before the prefix", etcdScheme, etcdJournalForm)
	}
	prefix = strings.TrimSuffix(prefix, "/")
	if prefix == "" {
		return nil, "", fmt.Errorf("--journal %s needs %s: the key prefix is empty", etcdScheme, etcdJournalForm)
	}
	scheme := "http://"
	if tlsOn {
		scheme = "https://"
	}
	parts := strings.Split(hosts, ",")
	endpoints := make([]string, 0, len(parts))
	for i, h := range parts {
		if err := checkEndpoint(h); err != nil {
			return nil, "", fmt.Errorf("--journal %s: endpoint %d %q %v; write %s", etcdScheme, i+1, h, err, etcdJournalForm)
		}
		endpoints = append(endpoints, scheme+h)
	}
	for _, seg := range strings.Split(prefix, "/") {
		if err := checkPrefixSegment(seg); err != nil {
			return nil, "", fmt.Errorf("--journal %s: key prefix %q %v", etcdScheme, "/"+prefix, err)
		}
	}
	return endpoints, "/" + prefix, nil
}

// checkEndpoint accepts HOST:PORT where HOST is a DNS name, an IPv4 address or a bracketed
// IPv6 address and PORT a decimal number from 1 to 65535.
func checkEndpoint(h string) error {
	if h == "" {
		return fmt.Errorf("is empty")
	}
	i := strings.LastIndexByte(h, ':')
	if i < 0 {
		return fmt.Errorf("has no port")
	}
	host, port := h[:i], h[i+1:]
	if port == "" {
		return fmt.Errorf("has an empty port")
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 || port[0] == '+' {
		return fmt.Errorf("has port %q, not a number from 1 to 65535", port)
	}
	switch {
	case host == "":
		return fmt.Errorf("has no host")
	case host[0] == '[':
		if host[len(host)-1] != ']' {
			return fmt.Errorf("has an unclosed [ in its host")
		}
		addr, err := netip.ParseAddr(host[1 : len(host)-1])
		if err != nil || !addr.Is6() || addr.Zone() != "" {
			return fmt.Errorf("has %s, not an IPv6 address", host)
		}
		return nil
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		if !addr.Is4() {
			return fmt.Errorf("has host %q: write an IPv6 address in brackets, [ADDRESS]:PORT", host)
		}
		return nil
	}
	return checkHostName(host)
}

// checkHostName accepts a DNS name: dot-separated labels of 1 to 63 letters, digits and
// hyphens, neither starting nor ending with a hyphen, 253 bytes at most.
func checkHostName(host string) error {
	if len(host) > 253 {
		return fmt.Errorf("has a host name longer than 253 bytes")
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("has host %q, which is neither an IP address nor a DNS name", host)
		}
		for j := 0; j < len(label); j++ {
			c := label[j]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return fmt.Errorf("has host %q, which is neither an IP address nor a DNS name", host)
			}
		}
	}
	return nil
}

// checkPrefixSegment accepts one segment of the key prefix: non-empty, not "." or "..", and
// printable ASCII other than a space.
func checkPrefixSegment(seg string) error {
	switch seg {
	case "":
		return fmt.Errorf("has an empty segment (a doubled or leading slash)")
	case ".", "..":
		return fmt.Errorf("has the segment %q", seg)
	}
	for j := 0; j < len(seg); j++ {
		if c := seg[j]; c <= ' ' || c > '~' {
			return fmt.Errorf("has byte 0x%02x, outside printable ASCII", c)
		}
	}
	return nil
}
