package main

import (
	"slices"
	"strings"
	"testing"
)

// TestParseEtcdJournalRefusesMalformedValues holds the journal URL parser to one accepted
// form: every malformed value is refused with a message naming the bad part, and none is read
// loosely as another endpoint list or prefix.
//
// Spec: STO-089
func TestParseEtcdJournalRefusesMalformedValues(t *testing.T) {
	bad := []struct{ value, names string }{
		{"etcd://", "no endpoint list"},
		{"etcd:///p", "no endpoint list"},
		{"etcd://127.0.0.1:2379", "no endpoint list"},
		{"etcd://127.0.0.1:2379/", "prefix is empty"},
		{"etcd://127.0.0.1:2379//", "prefix is empty"},
		{"etcd://127.0.0.1:2379,h:/x", `endpoint 2 "h:" has an empty port`},
		{"etcd://,:/x", `endpoint 1 "" is empty`},
		{"etcd://127.0.0.1:2379,/x", `endpoint 2 "" is empty`},
		{"etcd://:2379/x", `endpoint 1 ":2379" has no host`},
		{"etcd://no-port/p", `endpoint 1 "no-port" has no port`},
		{"etcd://127.0.0.1:2379,https://127.0.0.1:2380/splash/prod", `endpoint 2 "https:" has an empty port`},
		{"etcd://https://127.0.0.1:2379/x", `endpoint 1 "https:" has an empty port`},
		{"etcd://127.0.0.1:0/x", `port "0"`},
		{"etcd://127.0.0.1:65536/x", `port "65536"`},
		{"etcd://127.0.0.1:+1/x", `port "+1"`},
		{"etcd://127.0.0.1:http/x", `port "http"`},
		{"etcd://h_st:2379/x", `host "h_st"`},
		{"etcd://-h:2379/x", `host "-h"`},
		{"etcd://a..b:2379/x", `host "a..b"`},
		{"etcd://user@h:2379/x", `host "user@h"`},
		{"etcd://[::1:2379/x", "unclosed ["},
		{"etcd://[127.0.0.1]:2379/x", "not an IPv6 address"},
		{"etcd://[fe80::1%eth0]:2379/x", "not an IPv6 address"},
		{"etcd://::1:2379/x", `host "::1"`},
		{"etcd://h:1/a//b", "empty segment"},
		{"etcd://h:1//a", "empty segment"},
		{"etcd://h:1/a/../b", `segment ".."`},
		{"etcd://h:1/a/./b", `segment "."`},
		{"etcd://h:1/a b", "byte 0x20"},
		{"etcd://h:1/caf\xc3\xa9", "byte 0xc3"},
		{"http://h:1/x", "does not start with etcd://"},
	}
	for _, c := range bad {
		eps, prefix, err := parseEtcdJournal(c.value, false)
		if err == nil {
			t.Errorf("%q: accepted as endpoints %q, prefix %q; want a refusal naming %q", c.value, eps, prefix, c.names)
			continue
		}
		if !strings.Contains(err.Error(), c.names) {
			t.Errorf("%q: refused with %q; want the message to name %q", c.value, err, c.names)
		}
	}

	good := []struct {
		value     string
		tls       bool
		endpoints []string
		prefix    string
	}{
		{"etcd://127.0.0.1:2379/splash/prod", false, []string{"http://127.0.0.1:2379"}, "/splash/prod"},
		{"etcd://127.0.0.1:2379/splash/prod/", false, []string{"http://127.0.0.1:2379"}, "/splash/prod"},
		{"etcd://a.example:2379,b.example:2380/p", true, []string{"https://a.example:2379", "https://b.example:2380"}, "/p"},
		{"etcd://[::1]:2379/p-1_x.y", false, []string{"http://[::1]:2379"}, "/p-1_x.y"},
		{"etcd://localhost:65535/p", false, []string{"http://localhost:65535"}, "/p"},
	}
	for _, c := range good {
		eps, prefix, err := parseEtcdJournal(c.value, c.tls)
		if err != nil {
			t.Errorf("%q: refused (%v); want endpoints %q, prefix %q", c.value, err, c.endpoints, c.prefix)
			continue
		}
		if !slices.Equal(eps, c.endpoints) || prefix != c.prefix {
			t.Errorf("%q: got endpoints %q, prefix %q; want %q, %q", c.value, eps, prefix, c.endpoints, c.prefix)
		}
	}
}
