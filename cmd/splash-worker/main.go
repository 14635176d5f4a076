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
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"lukechampine.com/blake3"

	"github.com/splashv5/conform/impl/bootstrap"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/storage/boltstore"
	"github.com/splashv5/conform/impl/worker"
)

// testStorageKeyLabel is hashed with BLAKE3-256 into the storage key used when no key file is
// given. It is public, so that key protects nothing: it exists only for tests.
const testStorageKeyLabel = "splash-worker test storage key v1"

const usageText = `usage: splash-worker [flags] < bootstrap-and-frames > frames

Serves one Splash worker protocol v5 session with the conformance adapter profile.

flags:
  --journal FILE            journal file, a bbolt database (default: in memory, lost at exit)
  --namespace NS            journal record namespace (default "splash-worker-journal")
  --admission-namespace NS  namespace of the admitted-session list (default "splash-worker-admission")
  --scope SCOPE             journal scope (default "conformance")
  --effect-log FILE         profile effect log (default: in memory)
  --storage-key-file FILE   storage key: 32 raw bytes or 64 hex digits (default: the public test key)
  --storage-key-id ID       storage key id (default "storage-v1")
  --number-mode MODE        "preserve" or "lossy" (default "preserve")
  --max-reconciliations-per-tool N     (default 16)
  --max-reconciliations-per-session N  (default 64)

exit status: 0 clean, 2 usage, 3 bootstrap, 4 transport, 5 rejected, 6 adapter,
7 persistence, 8 internal.

Deliberate faults for the conformance suite's tests also exist; see docs/worker.md.
`

type options struct {
	journalPath, namespace, admissionNamespace, scope string
	effectLog, keyFile, keyID, numberMode             string
	faults                                            faultNames
	listFaults                                        bool
	perTool, perSession                               uint
}

// faultNames collects the names given to --fault, which may be repeated and may hold several
// comma-separated names.
type faultNames []string

func (f *faultNames) String() string { return strings.Join(*f, ",") }

func (f *faultNames) Set(value string) error {
	for name := range strings.SplitSeq(value, ",") {
		if name = strings.TrimSpace(name); name != "" {
			*f = append(*f, name)
		}
	}
	return nil
}

func main() {
	// A host that stops reading must make a write fail (exit status 4), not kill the process.
	signal.Ignore(syscall.SIGPIPE)
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
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
	fs.UintVar(&o.perTool, "max-reconciliations-per-tool", uint(worker.DefaultMaxReconciliationsPerTool), "")
	fs.UintVar(&o.perSession, "max-reconciliations-per-session", uint(worker.DefaultMaxReconciliationsPerSession), "")
	// Reserved for the conformance suite's crash and mutation tests; not in the usage text.
	fs.Var(&o.faults, "fault", "")
	fs.BoolVar(&o.listFaults, "list-faults", false, "")
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

// listFaults writes one line per fault: its name, a tab and its description.
func listFaults(w io.Writer) {
	for _, p := range worker.Points() {
		fmt.Fprintf(w, "pause-%s\tannounce the pause on standard error and block forever %s (crash tests)\n", p, strings.ReplaceAll(p.String(), "-", " "))
	}
	for _, info := range worker.FaultInfos() {
		fmt.Fprintf(w, "%s\t%s\n", info.Name, info.Description)
	}
}

// faults returns the faults named by --fault (WRK-095); without names it returns nil. A
// "pause-<point>" fault announces the pause on stderr and then blocks forever at that point,
// so a test can kill the process there; every other name is a deliberate bug of the runtime
// or the process.
func faults(names []string, stderr io.Writer) (*worker.Faults, error) {
	if len(names) == 0 {
		return nil, nil
	}
	f := &worker.Faults{}
	var pauses []worker.Point
	for _, name := range names {
		if pointName, ok := strings.CutPrefix(name, "pause-"); ok {
			point, known := worker.ParsePoint(pointName)
			if !known {
				return nil, fmt.Errorf("unknown fault %q", name)
			}
			pauses = append(pauses, point)
			continue
		}
		fault, known := worker.ParseFault(name)
		if !known {
			return nil, fmt.Errorf("unknown fault %q (--list-faults lists them)", name)
		}
		f.Enabled = f.Enabled.With(fault)
	}
	if len(pauses) > 0 {
		f.At = func(p worker.Point) {
			if !slices.Contains(pauses, p) {
				return
			}
			fmt.Fprintf(stderr, "splash-worker: fault: paused %s\n", p)
			for {
				time.Sleep(time.Hour)
			}
		}
	}
	return f, nil
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

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var leakedKey string // only ever set by the leak-key fault
	report := func(code int, err error) int {
		if leakedKey != "" {
			fmt.Fprintf(stderr, "splash-worker: %s: %v (session key %s)\n", worker.ExitClassName(code), err, leakedKey)
			return code
		}
		fmt.Fprintf(stderr, "splash-worker: %s: %v\n", worker.ExitClassName(code), err)
		return code
	}
	o, err := parseFlags(args, stderr)
	if err != nil {
		return report(worker.ExitUsage, err)
	}
	if o.listFaults {
		listFaults(stdout)
		return worker.ExitClean
	}
	mode, err := canonjson.ParseMode(o.numberMode)
	if err != nil {
		return report(worker.ExitUsage, err)
	}
	limits, err := worker.NewLimits(uint32(min(o.perTool, 1<<32-1)), uint32(min(o.perSession, 1<<32-1)))
	if err != nil {
		return report(worker.ExitUsage, err)
	}
	fault, err := faults(o.faults, stderr)
	if err != nil {
		return report(worker.ExitUsage, err)
	}
	key, testKey, err := storageKey(o.keyFile)
	if err != nil {
		return report(worker.ExitUsage, err)
	}
	defer key.Wipe()
	keyID := storage.KeyID(o.keyID)
	if testKey && o.keyID == "storage-v1" {
		keyID = "test-only"
	}
	keyring, err := storage.NewKeyring(keyID, key)
	if err != nil {
		return report(worker.ExitUsage, err)
	}
	if testKey && o.journalPath != "" {
		fmt.Fprintln(stderr, "splash-worker: warning: the journal is protected by the public test storage key; use --storage-key-file outside tests")
	}

	ctx := context.Background()
	var backend storage.Backend = storage.NewMemoryBackend()
	if o.journalPath != "" {
		file, err := boltstore.Open(o.journalPath, nil)
		if err != nil {
			return report(worker.ExitPersistence, err)
		}
		defer file.Close()
		backend = file
	}
	store := storage.NewAuthenticatedStore(backend, keyring)
	journalStore, err := worker.NewStorageJournalStore(store, o.namespace, o.scope, mode)
	if err != nil {
		return report(worker.ExitUsage, err)
	}
	admission, err := worker.NewStoreAdmission(store, journalStore, o.admissionNamespace)
	if err != nil {
		return report(worker.ExitUsage, err)
	}
	effects := profile.NewEffectLog(nil, nil)
	if o.effectLog != "" {
		var f *os.File
		effects, f, err = profile.OpenEffectLogFile(o.effectLog, mode)
		if err != nil {
			return report(worker.ExitPersistence, err)
		}
		defer f.Close()
	}
	registry := worker.NewRegistry()
	if err := profile.Register(registry, profile.Options{Effects: effects}); err != nil {
		return report(worker.ExitInternal, err)
	}

	in := bufio.NewReaderSize(stdin, 64<<10)
	var bootIn io.Reader = in
	if fault.Has(worker.FaultLateBootstrapChecks) {
		whole := readWholeBootstrap(in)
		defer clear(whole)
		bootIn = bytes.NewReader(whole)
	}
	boot, err := bootstrap.Read(bootIn)
	if err != nil {
		if fault.Has(worker.FaultWrongBootstrapStatus) {
			return report(worker.ExitTransport, err)
		}
		return report(worker.ExitBootstrap, err)
	}
	if fault.NeedsSessionKey() || fault.Has(worker.FaultLeakKey) {
		key, leaked, err := faultKey(boot.Key, fault.Has(worker.FaultLeakKey))
		if err != nil {
			boot.Key.Close()
			return report(worker.ExitInternal, err)
		}
		defer key.Close()
		fault.SessionKey, leakedKey = key, leaked
	}
	auth, err := boot.WorkerAuthenticator(mode)
	boot.Key.Close()
	if err != nil {
		return report(worker.ExitBootstrap, err)
	}
	defer auth.Close()

	err = worker.Serve(ctx, worker.ServeConfig{
		Auth:      auth,
		Lines:     fault.FrameReader(in),
		Output:    stdout,
		Store:     journalStore,
		Registry:  registry,
		Limits:    limits,
		Admission: admission,
		Faults:    fault,
	})
	code := worker.ExitCode(err)
	if code != worker.ExitClean {
		report(code, err)
		if fault.Has(worker.FaultExitZeroOnReject) {
			return worker.ExitClean
		}
	}
	return code
}

// bootstrapHeaderBytes is the length of the bootstrap before the session id: the magic, the
// version and the length byte.
const bootstrapHeaderBytes = 10

// readWholeBootstrap reads a bootstrap's 42 + L bytes, or as many as the input holds, without
// checking any of them (the late-bootstrap-checks fault). The caller clears the result, which
// holds the key.
func readWholeBootstrap(r io.Reader) []byte {
	buf := make([]byte, bootstrapHeaderBytes, bootstrapHeaderBytes+255+protocol.SessionKeyBytes)
	n, err := io.ReadFull(r, buf)
	if err != nil {
		return buf[:n]
	}
	rest := buf[n : n+int(buf[n-1])+protocol.SessionKeyBytes]
	m, _ := io.ReadFull(r, rest)
	return buf[:n+m]
}

// faultKey returns a copy of the session key for the faults that authenticate or seal frames
// themselves and, only for the leak-key fault, its hexadecimal encoding.
func faultKey(k *protocol.SessionKey, leak bool) (*protocol.SessionKey, string, error) {
	raw, err := k.ExposeSecret()
	defer clear(raw[:])
	if err != nil {
		return nil, "", err
	}
	key, err := protocol.NewSessionKey(raw[:])
	if err != nil {
		return nil, "", err
	}
	if leak {
		return key, hex.EncodeToString(raw[:]), nil
	}
	return key, "", nil
}
