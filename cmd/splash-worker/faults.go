//go:build splashfaults

package main

// The faulty build of the worker (go build -tags splashfaults): the same process with the
// --fault and --list-faults flags of the conformance suite's mutation and crash tests. See
// docs/conformance.md. Never ship it: one fault writes the session key to standard error.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/splashv5/conform/impl/bootstrap"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/worker"
)

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

// run is the worker process of the default build (run.go) with the enabled faults.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var names faultNames
	var list bool
	o, err := parseFlags(args, stderr, func(fs *flag.FlagSet) {
		fs.Var(&names, "fault", "")
		fs.BoolVar(&list, "list-faults", false, "")
	})
	if err != nil {
		return report(stderr, worker.ExitUsage, err)
	}
	if list {
		listFaults(stdout)
		return worker.ExitClean
	}
	fault, err := faults(names, stderr)
	if err != nil {
		return report(stderr, worker.ExitUsage, err)
	}
	if fault.Has(worker.FaultStorageKeyInJournal) {
		if raw := rawStorageKey(o.keyFile); len(raw) > 0 {
			o.namespace = hex.EncodeToString(raw) // 64 bytes, the longest namespace
		}
	}
	var storageKeyLeak string // only ever set by the leak-storage-key fault
	o.profileOptions = func(opts profile.Options) profile.Options {
		if fault.Has(worker.FaultStorageKeyInEffectLog) || fault.Has(worker.FaultLeakStorageKey) || fault.Has(worker.FaultStorageKeyInFrame) {
			raw := rawStorageKey(o.keyFile)
			if fault.Has(worker.FaultStorageKeyInFrame) && len(raw) > 0 {
				// Two bytes before the key put it at the third alignment of base32.
				opts = profile.WithEchoLeak(opts, " "+base32.StdEncoding.EncodeToString(append([]byte("kk"), raw...)))
			}
			if fault.Has(worker.FaultLeakStorageKey) {
				storageKeyLeak = fmt.Sprintf("%v", raw)
			}
			if fault.Has(worker.FaultStorageKeyInEffectLog) && len(raw) > 0 {
				// One byte before the key puts it at the second alignment of base64.
				_ = opts.Effects.Append(profile.EffectLine{Kind: profile.KindEffect, Tool: "conf.leak", OperationKey: "storage-key",
					Value: canonjson.String(base64.StdEncoding.EncodeToString(append([]byte{'k'}, raw...)))})
			}
		}
		return profile.WithFaults(opts, fault)
	}
	p, code, err := setUp(o, stderr)
	if err != nil {
		return report(stderr, code, err)
	}
	defer p.close()

	var leakedKey string // only ever set by the leak-key fault
	fail := func(code int, err error) int {
		if leakedKey != "" {
			err = fmt.Errorf("%w (session key %s)", err, leakedKey)
		}
		if storageKeyLeak != "" {
			err = fmt.Errorf("%w (storage key %s)", err, storageKeyLeak)
		}
		return report(stderr, code, err)
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
			return fail(worker.ExitTransport, err)
		}
		return fail(worker.ExitBootstrap, err)
	}
	if fault.NeedsSessionKey() || fault.Has(worker.FaultLeakKey) {
		key, leaked, err := faultKey(boot.Key, fault.Has(worker.FaultLeakKey))
		if err != nil {
			boot.Key.Close()
			return fail(worker.ExitInternal, err)
		}
		defer key.Close()
		fault.SessionKey, leakedKey = key, leaked
	}
	auth, err := p.authenticator(boot)
	if err != nil {
		return fail(worker.ExitBootstrap, err)
	}
	defer auth.Close()

	cfg := p.serve
	cfg.Auth, cfg.Lines, cfg.Output = auth, fault.FrameReader(in), stdout
	err = worker.Serve(context.Background(), p.withWriteTrigger(worker.WithServeFaults(cfg, fault)))
	if code := worker.ExitCode(err); code != worker.ExitClean {
		fail(code, err)
		if fault.Has(worker.FaultExitZeroOnReject) {
			return worker.ExitClean
		}
		return code
	}
	return worker.ExitClean
}

// listFaults writes the fault catalog, one fault per line: its name, the requirement it
// breaks, the checks expected to catch it (comma-separated) and its description, separated by
// tabs. The crash-test pauses come first, with "-" for rule and checks.
func listFaults(w io.Writer) {
	for _, p := range worker.Points() {
		fmt.Fprintf(w, "pause-%s\t-\t-\tannounce the pause on standard error and block forever %s (crash tests)\n", p, strings.ReplaceAll(p.String(), "-", " "))
	}
	for _, info := range worker.FaultInfos() {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", info.Name, info.Rule, strings.Join(info.Checks, ","), info.Description)
	}
}

// faults returns the faults named by --fault; without names it returns nil. A
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

// rawStorageKey returns the storage key of the key file at path as storageKey reads it, for
// the faults that leak it; nil when it cannot be read.
func rawStorageKey(path string) []byte {
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	if trimmed := strings.TrimRight(string(data), "\r\n"); len(trimmed) == 64 {
		raw, err := hex.DecodeString(trimmed)
		if err == nil {
			return raw
		}
	}
	return data
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
