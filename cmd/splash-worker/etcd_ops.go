//go:build splashetcd

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/storage/etcdstore"
	"github.com/splashv5/conform/impl/worker"
)

func init() {
	subcommands["etcd-witness"] = etcdWitnessCommand
	subcommands["recovery-fence"] = recoveryFenceCommand
}

// opFlags are the flags of the operator commands: the worker's journal and etcd flags.
type opFlags struct {
	journal, namespace, scope string
	reconciled                bool
	expectFence               uint64
}

// parseOpFlags parses an operator command's flags.
func parseOpFlags(name string, args []string) (opFlags, error) {
	var o opFlags
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.journal, "journal", "", "")
	fs.StringVar(&o.namespace, "namespace", "splash-worker-journal", "")
	fs.StringVar(&o.scope, "scope", "conformance", "")
	fs.BoolVar(&o.reconciled, "reconciled", false, "")
	fs.Uint64Var(&o.expectFence, "expect-fence", 0, "")
	journalFlags(fs)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() != 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.journal == "" {
		return o, errors.New("--journal is required")
	}
	return o, nil
}

// opReport writes an operator command's failure and returns its status.
func opReport(stderr io.Writer, name string, code int, err error) int {
	fmt.Fprintf(stderr, "splash-worker %s: %s: %v\n", name, worker.ExitClassName(code), err)
	return code
}

const etcdWitnessUsage = `usage: splash-worker etcd-witness show|accept --journal etcd://HOST:PORT[,...]/PREFIX
         --etcd-witness FILE [--etcd-config FILE] [--reconciled]
       (or --journal FILE --journal-anchor etcd://... for a journal file anchored on etcd)

show compares the witness with the cluster: exit 0 when the cluster is not below it, 9 when
it is. accept moves the witness to the cluster as it is now; it lowers what the machine
vouches for, so it runs only with --reconciled: every operation the journal holds open was
reconciled against its effect system first (see docs/etcd.md).
`

// etcdWitnessCommand is "splash-worker etcd-witness show|accept".
func etcdWitnessCommand(args []string, stdout, stderr io.Writer) int {
	const name = "etcd-witness"
	if len(args) == 0 || (args[0] != "show" && args[0] != "accept") {
		fmt.Fprint(stderr, etcdWitnessUsage)
		return worker.ExitUsage
	}
	verb := args[0]
	o, err := parseOpFlags(name, args[1:])
	if err != nil {
		return opReport(stderr, name, worker.ExitUsage, err)
	}
	target := o.journal
	if !strings.HasPrefix(target, etcdScheme) {
		target = journalAnchor
	}
	if !strings.HasPrefix(target, etcdScheme) {
		return opReport(stderr, name, worker.ExitUsage, errors.New("--journal etcd://... or --journal-anchor etcd://... is required"))
	}
	if witnessPath == "" || witnessPath == noWitness {
		return opReport(stderr, name, worker.ExitUsage, errors.New("--etcd-witness FILE is required"))
	}
	if verb == "accept" && !o.reconciled {
		return opReport(stderr, name, worker.ExitUsage, errors.New("accept lowers the witness: reconcile every open operation first, then pass --reconciled"))
	}
	b, err := openEtcd(target, true)
	if err != nil {
		return opReport(stderr, name, openFailure(err), err)
	}
	defer b.Close()
	w, err := etcdstore.OpenWitness(witnessPath)
	if err != nil {
		return opReport(stderr, name, openFailure(err), err)
	}
	ctx := context.Background()
	r, err := b.CompareWitness(ctx, w)
	if err != nil {
		return opReport(stderr, name, openFailure(err), err)
	}
	fmt.Fprintf(stdout, "prefix %s\ncluster: witnessed %q, now %q\nrevision: witnessed %d, now %d\n",
		r.Prefix, r.WitnessedCluster, r.CurrentCluster, r.WitnessedRevision, r.CurrentRevision)
	for _, rec := range r.Records {
		mark := ""
		if rec.Current.Fence < rec.Witnessed.Fence || rec.Current.Floor < rec.Witnessed.Floor {
			mark = "  BELOW"
		}
		fmt.Fprintf(stdout, "record %s: witnessed fence %d floor %d, now fence %d floor %d%s\n",
			rec.Record, rec.Witnessed.Fence, rec.Witnessed.Floor, rec.Current.Fence, rec.Current.Floor, mark)
	}
	if verb == "show" {
		if r.Below() {
			fmt.Fprintln(stdout, "the cluster is below the witness")
			return worker.ExitIntegrity
		}
		return worker.ExitClean
	}
	if err := b.AcceptWitness(ctx, w, r); err != nil {
		return opReport(stderr, name, openFailure(err), err)
	}
	fmt.Fprintln(stdout, "the witness now holds the cluster as shown")
	return worker.ExitClean
}

const recoveryFenceUsage = `usage: splash-worker recovery-fence --journal FILE --journal-anchor etcd://HOST:PORT[,...]/PREFIX
         --etcd-witness FILE [--etcd-config FILE] [--namespace NS] [--scope SCOPE] [--expect-fence N]

Recovers a journal file anchored on etcd whose writes fail with TooManyCandidates. Stop
admitting workers for the scope, run it once without --expect-fence: it prints the current
fence. Run it again with --expect-fence N: it refuses unless the fence is still N (no worker
was admitted since), reserves the recovery fence N+1, which shuts out every older writer, and
discards every candidate the anchor does not name, under that fence only.
`

// recoveryFenceCommand is "splash-worker recovery-fence".
func recoveryFenceCommand(args []string, stdout, stderr io.Writer) int {
	const name = "recovery-fence"
	o, err := parseOpFlags(name, args)
	if err != nil || journalAnchor == "" || strings.HasPrefix(o.journal, etcdScheme) {
		fmt.Fprint(stderr, recoveryFenceUsage)
		return worker.ExitUsage
	}
	key, err := storage.NewRecordKey(o.namespace, o.scope)
	if err != nil {
		return opReport(stderr, name, worker.ExitUsage, err)
	}
	j, err := openJournal(o.journal)
	if err != nil {
		return opReport(stderr, name, openFailure(err), err)
	}
	defer j.Close()
	anchored := j.(anchoredJournal)
	ctx := context.Background()
	current, err := anchored.CurrentFence(ctx, key)
	if err != nil {
		return opReport(stderr, name, worker.ExitCode(err), err)
	}
	if o.expectFence == 0 {
		fmt.Fprintf(stdout, "current fence %d; once no worker is admitted for the scope, run again with --expect-fence %d\n", current, current)
		return worker.ExitClean
	}
	if current != o.expectFence {
		return opReport(stderr, name, worker.ExitRejected, fmt.Errorf("the fence is %d, not %d: a worker was admitted since; stop admissions and start again", current, o.expectFence))
	}
	recovery, err := anchored.ReserveFence(ctx, key)
	if err != nil {
		return opReport(stderr, name, worker.ExitCode(err), err)
	}
	if recovery != o.expectFence+1 {
		return opReport(stderr, name, worker.ExitRejected, fmt.Errorf("reserved fence %d, not %d: a worker was admitted meanwhile; nothing was discarded", recovery, o.expectFence+1))
	}
	if err := anchored.DiscardUnanchoredCandidates(ctx, key, recovery); err != nil {
		return opReport(stderr, name, worker.ExitCode(err), err)
	}
	fmt.Fprintf(stdout, "recovery fence %d reserved; unanchored candidates discarded\n", recovery)
	return worker.ExitClean
}
