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
	"os"
	"strings"
	"time"

	"github.com/splashv5/conform/impl/storage/boltstore"
	"github.com/splashv5/conform/impl/storage/etcdstore"
)

// etcdConfigPath, journalAnchor and witnessPath are the --etcd-config, --journal-anchor and
// --etcd-witness flags.
var etcdConfigPath, journalAnchor, witnessPath string

// noWitness is the --etcd-witness value that runs without a witness.
const noWitness = "none"

// journalFlags defines --etcd-config, --journal-anchor and --etcd-witness.
func journalFlags(fs *flag.FlagSet) {
	fs.StringVar(&etcdConfigPath, "etcd-config", "", "")
	fs.StringVar(&journalAnchor, "journal-anchor", "", "")
	fs.StringVar(&witnessPath, "etcd-witness", "", "")
}

// etcdFile is the --etcd-config file: credentials, TLS and operating settings, never taken
// from a frame.
type etcdFile struct {
	Username      string `json:"username"`
	PasswordFile  string `json:"password_file"`
	CAFile        string `json:"ca_file"`
	CertFile      string `json:"cert_file"`
	KeyFile       string `json:"key_file"`
	DialTimeoutMS int    `json:"dial_timeout_ms"`
	OpTimeoutMS   int    `json:"op_timeout_ms"`
	DeadlineMS    int    `json:"deadline_ms"`
	KeepAliveMS   int    `json:"keepalive_ms"`
	// Compaction is "self" (the default: the worker compacts the cluster's history) or
	// "server" (the members run with --auto-compaction-*).
	Compaction             string `json:"compaction"`
	CompactRetainRevisions int64  `json:"compact_retain_revisions"`
	CompactEveryWrites     int64  `json:"compact_every_writes"`
	// QuotaBytes is the members' --quota-backend-bytes (0: as the member reports it, else
	// etcd's default); QuotaWarnPercent the share of it at which the worker warns on stderr.
	QuotaBytes       int64 `json:"quota_bytes"`
	QuotaWarnPercent int   `json:"quota_warn_percent"`
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

// tlsConfig builds the TLS settings of the config file, or nil when it names no certificate.
func tlsConfig(file etcdFile) (*tls.Config, error) {
	switch {
	case file.KeyFile != "" && file.CertFile == "":
		return nil, errors.New("--etcd-config: key_file without cert_file")
	case file.CertFile != "" && file.KeyFile == "":
		return nil, errors.New("--etcd-config: cert_file without key_file")
	case file.CAFile == "" && file.CertFile == "":
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if file.CAFile != "" {
		pem, err := readBounded(file.CAFile)
		if err != nil {
			return nil, fmt.Errorf("--etcd-config: ca_file: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, errors.New("--etcd-config: ca_file holds no certificate")
		}
	}
	if file.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(file.CertFile, file.KeyFile)
		if err != nil {
			return nil, errors.New("--etcd-config: cert_file and key_file do not load as a certificate and its key")
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// etcdConfig builds the client configuration from the journal value and the config file.
// Every refusal is a usageError.
func etcdConfig(value, configPath string) (etcdstore.Config, error) {
	cfg, err := parseEtcdConfig(value, configPath)
	if err != nil {
		return etcdstore.Config{}, usageError{err}
	}
	return cfg, nil
}

func parseEtcdConfig(value, configPath string) (etcdstore.Config, error) {
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
	tlsCfg, err := tlsConfig(file)
	if err != nil {
		return etcdstore.Config{}, err
	}
	endpoints, prefix, err := parseEtcdJournal(value, tlsCfg != nil)
	if err != nil {
		return etcdstore.Config{}, err
	}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	cfg := etcdstore.Config{
		Endpoints: endpoints, Prefix: prefix, Username: file.Username, TLS: tlsCfg,
		DialTimeout: ms(file.DialTimeoutMS), OpTimeout: ms(file.OpTimeoutMS), Deadline: ms(file.DeadlineMS),
		KeepAliveTime: ms(file.KeepAliveMS),
		Compaction:    etcdstore.Compaction{Retain: file.CompactRetainRevisions, Every: file.CompactEveryWrites},
		QuotaBytes:    file.QuotaBytes, QuotaWarnPercent: file.QuotaWarnPercent,
		Warn: func(msg string) { fmt.Fprintf(os.Stderr, "splash-worker: warning: %s\n", msg) },
	}
	switch file.Compaction {
	case "", "self":
	case "server":
		cfg.Compaction.Server = true
	default:
		return etcdstore.Config{}, fmt.Errorf("--etcd-config: compaction %q is neither \"self\" nor \"server\"", file.Compaction)
	}
	if (file.Username == "") != (file.PasswordFile == "") {
		return etcdstore.Config{}, errors.New("--etcd-config: username and password_file go together")
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

// openEtcd opens the etcd backend value names, with the witness --etcd-witness names unless
// bare is set. A refused setting is a usageError.
func openEtcd(value string, bare bool) (*etcdstore.Backend, error) {
	cfg, err := etcdConfig(value, etcdConfigPath)
	if err != nil {
		return nil, err
	}
	switch {
	case witnessPath == "":
		return nil, usageError{errors.New("an etcd journal or anchor needs --etcd-witness FILE, a file on this machine that outlives the worker (or --etcd-witness none to run without detecting a restored cluster)")}
	case witnessPath != noWitness && !bare:
		if cfg.Witness, err = etcdstore.OpenWitness(witnessPath); err != nil {
			return nil, err
		}
	}
	b, err := etcdstore.Open(cfg)
	if errors.Is(err, etcdstore.ErrConfig) {
		return nil, usageError{err}
	}
	return b, err
}

// openJournal opens an etcd journal for an etcd:// value, else the journal file at path
// (openJournalFile), or, when --journal-anchor is set, the bbolt file at path anchored on
// the cluster it names.
func openJournal(path string) (durableBackend, error) {
	if strings.HasPrefix(path, etcdScheme) {
		if journalAnchor != "" {
			return nil, usageError{errors.New("--journal-anchor applies to a journal file, not to an etcd journal")}
		}
		return openEtcd(path, false)
	}
	if journalAnchor == "" {
		return openJournalFile(path)
	}
	if !strings.HasPrefix(journalAnchor, etcdScheme) {
		return nil, usageError{errors.New("--journal-anchor needs etcd://HOST:PORT[,HOST:PORT...]/PREFIX")}
	}
	anchor, err := openEtcd(journalAnchor, false)
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
