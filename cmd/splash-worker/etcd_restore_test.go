package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/splashv5/conform/impl/storage/etcdstore/etcdstoretest"
	"github.com/splashv5/conform/impl/worker/workertest"
)

// operator runs an operator command of the worker binary and returns its status and output.
func operator(t *testing.T, bin string, args ...string) (int, string) {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &exit):
		return exit.ExitCode(), string(out)
	}
	t.Fatal(err)
	return 0, ""
}

// revision returns the cluster's current revision; bump first writes n keys outside the
// worker's prefix, pushing the revision up the way other users of the cluster (or
// etcdutl --bump-revision) do.
func revision(t *testing.T, c *etcdstoretest.Cluster, bump int) int64 {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	for i := range bump {
		if _, err := cli.Put(context.Background(), fmt.Sprintf("/elsewhere/%d", i), "x"); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := cli.Get(context.Background(), "/elsewhere/")
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

// The cluster is restored from a real snapshot (etcdctl snapshot save, then snapshot restore
// with the same member name, peer URLs and token, so it keeps its cluster id), and its
// revision is pushed past the one before the restore. A freshly started worker on the same
// machine refuses it (status 9, integrity) through its witness: it neither runs an answered
// operation again nor admits a session id the lost state had admitted. Without the witness
// the same worker runs the operation a second time, which is what the witness prevents. The
// operator's show reports the cluster below the witness; accept needs --reconciled, then
// moves the witness on and workers run again.
//
// Spec: STO-087, WRK-092
func TestEtcdRestoredSnapshotIsRefused(t *testing.T) {
	bin, c := etcdWorker(t, 1)
	dir := t.TempDir()
	effects := filepath.Join(dir, "effects.log")
	witness := filepath.Join(dir, "witness.json")
	journal := journalURL(c, "splash/restore")
	base := []string{"--journal", journal, "--etcd-config", etcdConfigFile(t), "--effect-log", effects}
	withWitness := append(append([]string{}, base...), "--etcd-witness", witness)
	record := grant(recordTool, 20, 1)
	answer := func(op string) string {
		return fmt.Sprintf(`operation_result succeeded json:{"operation_key":%q,"value":"v"}`, op)
	}
	session := func(name string, args []string, ops ...string) {
		p := start(t, bin, mustHost(t, name), args...)
		p.write(p.host.Bootstrap())
		p.open(record)
		for _, op := range ops {
			p.call(p.host.Dispatch("d-"+op, recordTool, op, workertest.Record("succeed", `"v"`)), answer(op))
		}
		p.expectExit(0, "")
	}
	session("restore-1", withWitness, "op-1")
	snap := filepath.Join(dir, "snapshot.db")
	if err := c.SaveSnapshot(0, snap); errors.Is(err, etcdstoretest.ErrNoCtl) && os.Getenv("CI") == "" {
		t.Skip(err)
	} else if err != nil {
		t.Fatal(err)
	}
	session("restore-2", withWitness, "op-2")
	before := revision(t, c, 0)
	if err := c.RestoreSnapshot(snap); err != nil {
		t.Fatal(err)
	}
	if after := revision(t, c, 50); after <= before {
		t.Fatalf("revision %d after the restore, %d before: not pushed past", after, before)
	}

	refused := func(name string, op string) {
		p := start(t, bin, mustHost(t, name), withWitness...)
		p.write(p.host.Bootstrap())
		p.open(record)
		p.send(p.host.Dispatch("d-"+op, recordTool, op, workertest.Record("succeed", `"v"`)))
		code, stderr := p.end()
		if code != 9 || !strings.Contains(stderr, "integrity") || !strings.Contains(stderr, "below the witness") {
			t.Fatalf("%s on the restored cluster: exit %d with %q, want 9 (integrity) naming the witness", name, code, stderr)
		}
	}
	refused("restore-3", "op-2")
	refused("restore-2", "op-2") // the session id the lost state had admitted
	if n := effectLines(t, effects, "effect", "op-2"); n != 1 {
		t.Fatalf("op-2 has %d effects after the refusals, want 1", n)
	}

	witnessArgs := []string{"--journal", journal, "--etcd-config", etcdConfigFile(t), "--etcd-witness", witness}
	code, out := operator(t, bin, append([]string{"etcd-witness", "show"}, witnessArgs...)...)
	if code != 9 || !strings.Contains(out, "BELOW") {
		t.Fatalf("show: exit %d: %s", code, out)
	}
	if code, out := operator(t, bin, append([]string{"etcd-witness", "accept"}, witnessArgs...)...); code != 2 || !strings.Contains(out, "--reconciled") {
		t.Fatalf("accept without --reconciled: exit %d: %s", code, out)
	}

	// What the witness prevents: without it the restored journal has op-2 unanswered, and the
	// same worker runs it again.
	session("restore-4", append(append([]string{}, base...), "--etcd-witness", "none"), "op-2")
	if n := effectLines(t, effects, "effect", "op-2"); n != 2 {
		t.Fatalf("op-2 has %d effects without the witness, want 2 (the restore's double effect)", n)
	}

	if code, out := operator(t, bin, append([]string{"etcd-witness", "accept", "--reconciled"}, witnessArgs...)...); code != 0 {
		t.Fatalf("accept: exit %d: %s", code, out)
	}
	if code, out := operator(t, bin, append([]string{"etcd-witness", "show"}, witnessArgs...)...); code != 0 {
		t.Fatalf("show after accept: exit %d: %s", code, out)
	}
	session("restore-5", withWitness, "op-3")
}

// The recovery fence as an operator command: without --expect-fence it only reports the
// fence; it refuses when the fence is not the one the operator saw (a worker was admitted
// since), and otherwise reserves the next fence and discards the unanchored candidates. A
// worker admitted afterwards runs normally.
//
// Spec: STO-085
func TestRecoveryFenceCommand(t *testing.T) {
	bin, c := etcdWorker(t, 1)
	dir := t.TempDir()
	db := filepath.Join(dir, "journal.db")
	args := []string{"--journal", db, "--journal-anchor", journalURL(c, "splash/recovery"), "--etcd-config", etcdConfigFile(t),
		"--etcd-witness", filepath.Join(dir, "witness.json")}
	session := func(name, op string) {
		p := start(t, bin, mustHost(t, name), append(args, "--effect-log", filepath.Join(dir, "effects.log"))...)
		p.write(p.host.Bootstrap())
		p.open(grant(recordTool, 20, 1))
		p.call(p.host.Dispatch("d-"+op, recordTool, op, workertest.Record("succeed", `"v"`)),
			fmt.Sprintf(`operation_result succeeded json:{"operation_key":%q,"value":"v"}`, op))
		p.expectExit(0, "")
	}
	session("rf-1", "op-1")
	cmd := append([]string{"recovery-fence"}, args...)
	code, out := operator(t, bin, cmd...)
	if code != 0 || !strings.Contains(out, "current fence 1;") || !strings.Contains(out, "--expect-fence 1") {
		t.Fatalf("report: exit %d: %s", code, out)
	}
	session("rf-2", "op-2") // a worker admitted after the operator looked
	if code, out := operator(t, bin, append(cmd, "--expect-fence", "1")...); code != 5 || !strings.Contains(out, "the fence is 2, not 1") {
		t.Fatalf("stale --expect-fence: exit %d: %s", code, out)
	}
	if code, out := operator(t, bin, append(cmd, "--expect-fence", "2")...); code != 0 || !strings.Contains(out, "recovery fence 3 reserved") {
		t.Fatalf("recovery: exit %d: %s", code, out)
	}
	if code, out := operator(t, bin, "recovery-fence", "--journal", journalURL(c, "splash/recovery"), "--etcd-witness", "none"); code != 2 || !strings.Contains(out, "usage") {
		t.Fatalf("recovery fence on an etcd journal: exit %d: %s", code, out)
	}
	session("rf-3", "op-3")
}
