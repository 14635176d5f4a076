// Command splash-worker is the reference worker of Splash worker protocol v5. It serves one
// session over its standard streams with the conformance adapter profile registered:
//
//	standard input:  the private-pipe bootstrap, then one authenticated frame per line
//	standard output: one authenticated answer frame per line
//	standard error:  diagnostics (never key material)
//
// It ends the session at the first frame it rejects, writes nothing for that frame, and exits
// with a status that names the class of the error (see docs/worker.md).
package main

import (
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"lukechampine.com/blake3"

	"github.com/splashv5/conform/impl/bootstrap"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/worker"
)

// testStorageKeyLabel is hashed with BLAKE3-256 into the storage key used when no key file is
// given. It is public, so that key protects nothing: it exists only for tests.
const testStorageKeyLabel = "splash-worker test storage key v1"

const usageText = `usage: splash-worker [flags] < bootstrap-and-frames > frames

Serves one Splash worker protocol v5 session with the conformance adapter profile.

flags:
  --journal FILE            journal file, a storage log; a bbolt database an earlier release
                            wrote there is still opened as one (default: in memory, lost at exit)
  --journal etcd://HOST:PORT[,HOST:PORT...]/PREFIX
                            journal in an etcd cluster under PREFIX (builds with tag splashetcd)
  --journal-anchor etcd://HOST:PORT[,HOST:PORT...]/PREFIX
                            anchor the journal file on etcd: an older copy of the file is
                            refused (builds with tag splashetcd)
  --etcd-config FILE        etcd credentials and TLS, a JSON file (builds with tag splashetcd)
  --etcd-witness FILE|none  required with etcd: this machine's witness of what it saw, which
                            refuses a cluster restored from an older snapshot (builds with tag
                            splashetcd)
  --namespace NS            journal record namespace (default "splash-worker-journal")
  --admission-namespace NS  namespace of the admitted-session list (default "splash-worker-admission")
  --scope SCOPE             journal scope (default "conformance")
  --effect-log FILE         profile effect log (default: in memory)
  --storage-key-file FILE   storage key: 32 raw bytes or 64 hex digits (default: the public test key)
  --storage-key-id ID       storage key id (default "storage-v1")
  --number-mode MODE        "preserve" or "lossy" (default "preserve")
  --write-trigger FILE      tests only: while FILE exists, journal writes fail (FILE may hold
                            a count of writes that still succeed first); see docs/conformance.md
  --secret-source FILE      tests only: the secret tool's provider reads its value, or a failure,
                            from FILE while it exists (PRF-033); see docs/conformance.md
  --max-reconciliations-per-tool N     (default 16)
  --max-reconciliations-per-session N  (default 64)

operator commands (builds with tag splashetcd; see docs/etcd.md):
  splash-worker etcd-witness show|accept --journal ... --etcd-witness FILE [--etcd-config FILE]
  splash-worker recovery-fence --journal FILE --journal-anchor etcd://... --etcd-witness FILE

exit status: 0 clean, 2 usage, 3 bootstrap, 4 transport, 5 rejected, 6 adapter,
7 persistence, 8 internal, 9 integrity.
`

type options struct {
	journalPath, namespace, admissionNamespace, scope string
	effectLog, keyFile, keyID, numberMode             string
	writeTrigger, secretSource                        string
	perTool, perSession                               uint
	// profileOptions, when set, adjusts the profile's options (the faulty build's faults).
	profileOptions func(profile.Options) profile.Options
}

func main() {
	// A host that stops reading must make a write fail (exit status 4), not kill the process.
	signal.Ignore(syscall.SIGPIPE)
	if len(os.Args) > 1 {
		if cmd, ok := subcommands[os.Args[1]]; ok {
			os.Exit(cmd(os.Args[2:], os.Stdout, os.Stderr))
		}
	}
	code := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stopProfiles()
	os.Exit(code)
}

// stopProfiles ends the profiles of the profiling build (profile.go); it does nothing in
// the released build.
var stopProfiles = func() {}

// parseFlags parses the command line; more, when set, defines further flags.
func parseFlags(args []string, stderr io.Writer, more func(*flag.FlagSet)) (options, error) {
	var o options
	fs := flag.NewFlagSet("splash-worker", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.StringVar(&o.journalPath, "journal", "", "")
	fs.StringVar(&o.namespace, "namespace", "splash-worker-journal", "")
	fs.StringVar(&o.admissionNamespace, "admission-namespace", "splash-worker-admission", "")
	fs.StringVar(&o.scope, "scope", "conformance", "")
	fs.StringVar(&o.effectLog, "effect-log", "", "")
	fs.StringVar(&o.keyFile, "storage-key-file", "", "")
	fs.StringVar(&o.keyID, "storage-key-id", "storage-v1", "")
	fs.StringVar(&o.numberMode, "number-mode", "preserve", "")
	fs.StringVar(&o.writeTrigger, "write-trigger", "", "")
	fs.StringVar(&o.secretSource, "secret-source", "", "")
	fs.UintVar(&o.perTool, "max-reconciliations-per-tool", uint(worker.DefaultMaxReconciliationsPerTool), "")
	fs.UintVar(&o.perSession, "max-reconciliations-per-session", uint(worker.DefaultMaxReconciliationsPerSession), "")
	journalFlags(fs)
	if more != nil {
		more(fs)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stderr, usageText)
		}
		return o, err
	}
	if fs.NArg() != 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return o, nil
}

func storageKey(path string) (storage.Key, bool, error) {
	if path == "" {
		return storage.NewKey(blake3.Sum256([]byte(testStorageKeyLabel))), true, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return storage.Key{}, false, err
	}
	var raw [storage.KeyBytes]byte
	defer clear(raw[:])
	defer clear(data)
	switch trimmed := strings.TrimRight(string(data), "\r\n"); {
	case len(data) == storage.KeyBytes:
		copy(raw[:], data)
	case len(trimmed) == 2*storage.KeyBytes:
		if _, err := hex.Decode(raw[:], []byte(trimmed)); err != nil {
			return storage.Key{}, false, errors.New("storage key file is not 64 hex digits")
		}
	default:
		return storage.Key{}, false, errors.New("storage key file must hold 32 raw bytes or 64 hex digits")
	}
	return storage.NewKey(raw), false, nil
}

// report writes the diagnostic line of a failed process and returns its exit status.
func report(stderr io.Writer, code int, err error) int {
	fmt.Fprintf(stderr, "splash-worker: %s: %v\n", worker.ExitClassName(code), err)
	return code
}

// process is the worker process once its flags are parsed and its stores are open, before it
// reads standard input.
type process struct {
	mode canonjson.Mode
	// serve is the session's configuration without Auth, Lines and Output.
	serve   worker.ServeConfig
	closers []func()
	// writeTrigger is the profile's store fault trigger (--write-trigger), or nil.
	writeTrigger *profile.WriteTrigger
}

// withWriteTrigger returns cfg with its journal store subject to the store fault trigger, when
// --write-trigger was given. It is applied last, around whatever store cfg holds.
func (p *process) withWriteTrigger(cfg worker.ServeConfig) worker.ServeConfig {
	if p.writeTrigger != nil {
		cfg.Store = p.writeTrigger.Wrap(cfg.Store)
	}
	return cfg
}

// close releases what setUp opened.
func (p *process) close() {
	for i := len(p.closers) - 1; i >= 0; i-- {
		p.closers[i]()
	}
}

// setUp opens the journal store and the effect log and registers the profile, as o says. On
// error it returns the exit status.
func setUp(o options, stderr io.Writer) (p *process, code int, err error) {
	p = &process{}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	mode, err := canonjson.ParseMode(o.numberMode)
	if err != nil {
		return p, worker.ExitUsage, err
	}
	p.mode = mode
	limits, err := worker.NewLimits(uint32(min(o.perTool, 1<<32-1)), uint32(min(o.perSession, 1<<32-1)))
	if err != nil {
		return p, worker.ExitUsage, err
	}
	key, testKey, err := storageKey(o.keyFile)
	if err != nil {
		return p, worker.ExitUsage, err
	}
	p.closers = append(p.closers, key.Wipe)
	keyID := storage.KeyID(o.keyID)
	if testKey && o.keyID == "storage-v1" {
		keyID = "test-only"
	}
	keyring, err := storage.NewKeyring(keyID, key)
	if err != nil {
		return p, worker.ExitUsage, err
	}
	if testKey && o.journalPath != "" {
		fmt.Fprintln(stderr, "splash-worker: warning: the journal is protected by the public test storage key; use --storage-key-file outside tests")
	}

	// The journal's record keys are checked before any store is opened, so that a refused
	// scope or namespace leaves no journal file behind (WRK-080).
	for _, ns := range []string{o.namespace, o.admissionNamespace} {
		if _, err := worker.JournalRecordKey(ns, o.scope); err != nil {
			return p, worker.ExitUsage, err
		}
	}
	var backend storage.Backend = storage.NewMemoryBackend()
	if o.journalPath != "" {
		durable, err := openJournal(o.journalPath)
		if err != nil {
			return p, openFailure(err), err
		}
		p.closers = append(p.closers, func() { durable.Close() })
		backend = durable
	}
	store := storage.NewAuthenticatedStore(backend, keyring)
	journalStore, err := worker.NewStorageJournalStore(store, o.namespace, o.scope, mode)
	if err != nil {
		return p, worker.ExitUsage, err
	}
	if o.writeTrigger != "" {
		p.writeTrigger = profile.NewWriteTrigger(o.writeTrigger)
	}
	admission, err := worker.NewStoreAdmission(store, journalStore, o.admissionNamespace)
	if err != nil {
		return p, worker.ExitUsage, err
	}
	effects := profile.NewEffectLog(nil, nil)
	if o.effectLog != "" {
		var f *os.File
		effects, f, err = profile.OpenEffectLogFile(o.effectLog, mode)
		if err != nil {
			return p, worker.ExitPersistence, err
		}
		p.closers = append(p.closers, func() { f.Close() })
	}
	registry := worker.NewRegistry()
	popts := profile.Options{Effects: effects, SecretSource: o.secretSource}
	if o.profileOptions != nil {
		popts = o.profileOptions(popts)
	}
	if err := profile.Register(registry, popts); err != nil {
		return p, worker.ExitInternal, err
	}
	p.serve = worker.ServeConfig{Store: journalStore, Registry: registry, Limits: limits, Admission: admission}
	return p, worker.ExitClean, nil
}

// authenticator builds the worker-role authenticator from the bootstrap and closes the
// bootstrap's key.
func (p *process) authenticator(boot bootstrap.Bootstrap) (*protocol.Authenticator, error) {
	defer boot.Key.Close()
	return boot.WorkerAuthenticator(p.mode)
}
