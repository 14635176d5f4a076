//go:build splashetcd

package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/splashv5/conform/impl/storage/boltstore"
	"github.com/splashv5/conform/impl/storage/etcdstore"
)

// etcdConfigPath and journalAnchor are the --etcd-config and --journal-anchor flags.
var etcdConfigPath, journalAnchor string

// journalFlags defines --etcd-config and --journal-anchor.
func journalFlags(fs *flag.FlagSet) {
	fs.StringVar(&etcdConfigPath, "etcd-config", "", "")
	fs.StringVar(&journalAnchor, "journal-anchor", "", "")
}

// etcdFile is the --etcd-config file: credentials and TLS settings, never taken from a frame.
type etcdFile struct {
	Username      string `json:"username"`
	PasswordFile  string `json:"password_file"`
	CAFile        string `json:"ca_file"`
	CertFile      string `json:"cert_file"`
	KeyFile       string `json:"key_file"`
	DialTimeoutMS int    `json:"dial_timeout_ms"`
	OpTimeoutMS   int    `json:"op_timeout_ms"`
}

// maxConfigBytes bounds the --etcd-config file and the password file.
const maxConfigBytes = 64 << 10

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxConfigBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxConfigBytes)
	}
	return data, nil
}

// parseEtcdJournal parses etcd://HOST:PORT[,HOST:PORT...]/PREFIX into endpoints (with
// scheme, https when tlsOn) and the key prefix.
func parseEtcdJournal(value string, tlsOn bool) ([]string, string, error) {
	rest := strings.TrimPrefix(value, etcdScheme)
	hosts, prefix, ok := strings.Cut(rest, "/")
	if !ok || hosts == "" || strings.Trim(prefix, "/") == "" {
		return nil, "", errors.New("--journal etcd:// needs HOST:PORT[,HOST:PORT...]/PREFIX")
	}
	scheme := "http://"
	if tlsOn {
		scheme = "https://"
	}
	var endpoints []string
	for _, h := range strings.Split(hosts, ",") {
		if _, _, err := net.SplitHostPort(h); err != nil {
			return nil, "", fmt.Errorf("--journal etcd://: endpoint %q is not HOST:PORT", h)
		}
		endpoints = append(endpoints, scheme+h)
	}
	return endpoints, "/" + strings.Trim(prefix, "/"), nil
}

// etcdConfig builds the client configuration from the journal value and the config file.
func etcdConfig(value, configPath string) (etcdstore.Config, error) {
	var file etcdFile
	if configPath != "" {
		data, err := readBounded(configPath)
		if err != nil {
			return etcdstore.Config{}, err
		}
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&file); err != nil {
			return etcdstore.Config{}, fmt.Errorf("--etcd-config: %w", err)
		}
	}
	var tlsCfg *tls.Config
	if file.CAFile != "" || file.CertFile != "" {
		tlsCfg = &tls.Config{MinVersion: tls.VersionTLS12}
		if file.CAFile != "" {
			pem, err := readBounded(file.CAFile)
			if err != nil {
				return etcdstore.Config{}, err
			}
			tlsCfg.RootCAs = x509.NewCertPool()
			if !tlsCfg.RootCAs.AppendCertsFromPEM(pem) {
				return etcdstore.Config{}, errors.New("--etcd-config: ca_file holds no certificate")
			}
		}
		if file.CertFile != "" {
			cert, err := tls.LoadX509KeyPair(file.CertFile, file.KeyFile)
			if err != nil {
				return etcdstore.Config{}, errors.New("--etcd-config: cert_file and key_file do not load")
			}
			tlsCfg.Certificates = []tls.Certificate{cert}
		}
	}
	endpoints, prefix, err := parseEtcdJournal(value, tlsCfg != nil)
	if err != nil {
		return etcdstore.Config{}, err
	}
	cfg := etcdstore.Config{
		Endpoints: endpoints, Prefix: prefix, Username: file.Username, TLS: tlsCfg,
		DialTimeout: time.Duration(file.DialTimeoutMS) * time.Millisecond,
		OpTimeout:   time.Duration(file.OpTimeoutMS) * time.Millisecond,
	}
	if file.PasswordFile != "" {
		pw, err := readBounded(file.PasswordFile)
		if err != nil {
			return etcdstore.Config{}, errors.New("--etcd-config: password_file does not read")
		}
		cfg.Password = strings.TrimRight(string(pw), "\r\n")
		clear(pw)
	}
	return cfg, nil
}

// openJournal opens an etcd journal for an etcd:// value, else the bbolt file at path,
// anchored on the cluster --journal-anchor names when it is set.
func openJournal(path string) (durableBackend, error) {
	if strings.HasPrefix(path, etcdScheme) {
		if journalAnchor != "" {
			return nil, errors.New("--journal-anchor applies to a journal file, not to an etcd journal")
		}
		cfg, err := etcdConfig(path, etcdConfigPath)
		if err != nil {
			return nil, err
		}
		return etcdstore.Open(cfg)
	}
	if journalAnchor == "" {
		return boltstore.Open(path, nil)
	}
	if !strings.HasPrefix(journalAnchor, etcdScheme) {
		return nil, errors.New("--journal-anchor needs etcd://HOST:PORT[,HOST:PORT...]/PREFIX")
	}
	cfg, err := etcdConfig(journalAnchor, etcdConfigPath)
	if err != nil {
		return nil, err
	}
	anchor, err := etcdstore.Open(cfg)
	if err != nil {
		return nil, err
	}
	file, err := boltstore.OpenAnchored(path, nil, anchor)
	if err != nil {
		anchor.Close()
		return nil, err
	}
	return anchoredJournal{file, anchor}, nil
}

// anchoredJournal closes the anchored file and its etcd anchor together.
type anchoredJournal struct {
	*boltstore.Anchored
	anchor *etcdstore.Backend
}

// Close closes the file, then the connection to the anchor.
func (j anchoredJournal) Close() error {
	err := j.Anchored.Close()
	if aerr := j.anchor.Close(); err == nil {
		err = aerr
	}
	return err
}
