package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/storage/etcdstore/etcdstoretest"
	"github.com/splashv5/conform/impl/worker/workertest"
)

// etcdWorker returns the worker built with tag splashetcd, and starts an etcd cluster of n
// members, stopped when t ends. Without etcd it skips, or fails when CI is set.
func etcdWorker(t *testing.T, n int) (string, *etcdstoretest.Cluster) {
	t.Helper()
	if _, err := etcdstoretest.Binary(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	c, err := etcdstoretest.Start(t.TempDir(), n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return binaries.MustWorker(t, "splashetcd"), c
}

// journalURL is the --journal value naming the cluster's members and prefix.
func journalURL(c *etcdstoretest.Cluster, prefix string) string {
	var hosts []string
	for _, e := range c.Endpoints() {
		hosts = append(hosts, strings.TrimPrefix(e, "http://"))
	}
	return "etcd://" + strings.Join(hosts, ",") + "/" + prefix
}

// etcdConfigFile writes an --etcd-config file with short timeouts.
func etcdConfigFile(t *testing.T) string {
	cfg := filepath.Join(t.TempDir(), "etcd.json")
	if err := os.WriteFile(cfg, []byte(`{"dial_timeout_ms": 2000, "op_timeout_ms": 1500}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Two worker processes (two machines) share one journal in etcd: the second answers the
// first's operation from the journal and never runs it again. While the member is stopped the
// worker fails closed with a persistence error and answers nothing; after the restart the
// operation runs exactly once.
//
// Spec: STO-080
func TestEtcdJournalAcrossProcessesAndOutage(t *testing.T) {
	bin, c := etcdWorker(t, 1)
	effects := filepath.Join(t.TempDir(), "effects.log")
	args := []string{"--journal", journalURL(c, "splash/e2e"), "--etcd-config", etcdConfigFile(t), "--effect-log", effects}
	record := grant(recordTool, 20, 1)

	p := start(t, bin, mustHost(t, "etcd-1"), args...)
	p.write(p.host.Bootstrap())
	p.open(record)
	p.call(p.host.Dispatch("d1", recordTool, "op-1", workertest.Record("succeed", `{"n":1}`)),
		`operation_result succeeded json:{"operation_key":"op-1","value":{"n":1}}`)
	p.expectExit(0, "")

	p = start(t, bin, mustHost(t, "etcd-2"), args...)
	p.write(p.host.Bootstrap())
	p.open(record)
	p.call(p.host.Dispatch("d1", recordTool, "op-1", workertest.Record("succeed", `{"n":1}`)),
		`operation_result succeeded json:{"operation_key":"op-1","value":{"n":1}}`)
	// The store goes away mid-session: the next dispatch is not answered.
	c.StopMember(0)
	p.send(p.host.Dispatch("d2", recordTool, "op-2", workertest.Record("succeed", `{"n":2}`)))
	code, stderr := p.end()
	if code != 7 || !strings.Contains(stderr, "persistence") {
		t.Fatalf("exit %d with %q, want 7 (persistence)", code, stderr)
	}
	if err := c.Restart(0); err != nil {
		t.Fatal(err)
	}
	p = start(t, bin, mustHost(t, "etcd-3"), args...)
	p.write(p.host.Bootstrap())
	p.open(record)
	p.call(p.host.Dispatch("d2", recordTool, "op-2", workertest.Record("succeed", `{"n":2}`)),
		`operation_result succeeded json:{"operation_key":"op-2","value":{"n":2}}`)
	p.expectExit(0, "")
	for _, op := range []string{"op-1", "op-2"} {
		if n := effectLines(t, effects, "effect", op); n != 1 {
			t.Fatalf("%s has %d effects, want exactly 1", op, n)
		}
	}
}

func mustHost(t *testing.T, session string) *workertest.Host {
	t.Helper()
	h, err := workertest.NewHost(session)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
