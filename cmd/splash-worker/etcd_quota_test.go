package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/splashv5/conform/impl/storage/etcdstore"
	"github.com/splashv5/conform/impl/storage/etcdstore/etcdstoretest"
	"github.com/splashv5/conform/impl/worker/workertest"
)

// quotaBytes is the small backend quota of the test cluster: 24 MiB.
const quotaBytes = 24 << 20

// A worker on a cluster with a 24 MiB backend quota keeps dispatching: the backend compacts
// the history it no longer needs and writes records compressed, so the database stops
// growing with the number of dispatches and the member never raises its NOSPACE alarm (before
// both, 3 KB results filled the quota after about a hundred dispatches). Values are random
// hex, which compresses to about half. CI runs 400 dispatches of 3 KB; the soak run
// (SPLASH_SOAK=1) runs 10,000 of 300 bytes, whose journals (one per 60 operations, never
// deleted) fit the quota.
//
// Spec: STO-088
func TestEtcdSmallQuotaSurvivesDispatches(t *testing.T) {
	n, size := 400, 3000
	if os.Getenv("SPLASH_SOAK") != "" {
		n, size = 10_000, 300
	}
	if _, err := etcdstoretest.Binary(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	c, err := etcdstoretest.StartArgs(t.TempDir(), 1, "--quota-backend-bytes", strconv.Itoa(quotaBytes))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	bin := binaries.MustWorker(t, "splashetcd")
	dir := t.TempDir()
	args := []string{"--journal", journalURL(c, "splash/quota"), "--etcd-config", etcdConfigFile(t),
		"--etcd-witness", filepath.Join(dir, "witness.json"), "--effect-log", filepath.Join(dir, "effects.log")}
	rnd := rand.New(rand.NewPCG(1, 2))
	raw := make([]byte, size/2)
	const perSession = 60
	var p *proc
	began := time.Now()
	for i := range n {
		if i%perSession == 0 {
			if p != nil {
				p.expectExit(0, "")
			}
			scope := "quota-" + strconv.Itoa(i/perSession)
			p = start(t, bin, mustHost(t, scope), append(args, "--scope", scope)...)
			p.write(p.host.Bootstrap())
			p.open(grant(recordTool, perSession, 0))
		}
		for j := range raw {
			raw[j] = byte(rnd.Uint32())
		}
		value := strconv.Quote(hex.EncodeToString(raw))
		op := "op-" + strconv.Itoa(i)
		p.call(p.host.Dispatch("d-"+op, recordTool, op, workertest.Record("succeed", value)),
			fmt.Sprintf(`operation_result succeeded json:{"operation_key":%q,"value":%s}`, op, value))
	}
	p.expectExit(0, "")
	elapsed := time.Since(began)
	size0, err := c.Metric(0, "etcd_mvcc_db_total_size_in_bytes")
	if err != nil {
		t.Fatal(err)
	}
	inUse, err := c.Metric(0, "etcd_mvcc_db_total_size_in_use_in_bytes")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d dispatches of %d-byte values in %s (%.1f/s); database %d bytes (%d in use) of a %d-byte quota",
		n, size, elapsed.Round(time.Second), float64(n)/elapsed.Seconds(), int64(size0), int64(inUse), quotaBytes)
	if size0 >= quotaBytes {
		t.Fatalf("database of %d bytes reached the quota", int64(size0))
	}
}

// A worker process that serves one session with one dispatch and exits makes about four
// writes, never enough for a compaction counted by the process. The backend decides from the
// cluster's revisions instead, so one-dispatch workers on a 24 MiB quota bound the history
// together: the cluster keeps no more than the retained window plus twice the compaction
// step (the defaults, 100 and 50 revisions) of history, and the member never raises its
// NOSPACE alarm. CI runs 80 processes; the soak run (SPLASH_SOAK=1) runs 10,000 and logs the
// database size every 500 (without the cluster-based decision the quota filled after about
// 1,700). Values are 300 random hex characters; a scope takes 60 dispatches.
//
// Spec: STO-088
func TestEtcdOneDispatchWorkersCompact(t *testing.T) {
	n, every := 80, 20
	if os.Getenv("SPLASH_SOAK") != "" {
		n, every = 10_000, 500
	}
	if _, err := etcdstoretest.Binary(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	c, err := etcdstoretest.StartArgs(t.TempDir(), 1, "--quota-backend-bytes", strconv.Itoa(quotaBytes))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	bin := binaries.MustWorker(t, "splashetcd")
	dir := t.TempDir()
	args := []string{"--journal", journalURL(c, "splash/one"), "--etcd-config", etcdConfigFile(t),
		"--etcd-witness", filepath.Join(dir, "witness.json"), "--effect-log", filepath.Join(dir, "effects.log")}
	metric := func(name string) int64 {
		v, err := c.Metric(0, name)
		if err != nil {
			t.Fatal(err)
		}
		return int64(v)
	}
	rnd := rand.New(rand.NewPCG(3, 4))
	raw := make([]byte, 150)
	const perScope = 60
	began := time.Now()
	for i := range n {
		scope := "one-" + strconv.Itoa(i/perScope)
		p := start(t, bin, mustHost(t, "s-"+strconv.Itoa(i)), append(args, "--scope", scope)...)
		p.write(p.host.Bootstrap())
		p.open(grant(recordTool, 1, 0))
		for j := range raw {
			raw[j] = byte(rnd.Uint32())
		}
		value := strconv.Quote(hex.EncodeToString(raw))
		op := "op-" + strconv.Itoa(i)
		p.call(p.host.Dispatch("d-"+op, recordTool, op, workertest.Record("succeed", value)),
			fmt.Sprintf(`operation_result succeeded json:{"operation_key":%q,"value":%s}`, op, value))
		p.expectExit(0, "")
		if (i+1)%every == 0 || i+1 == n {
			t.Logf("%6d processes, %s: database %d bytes (%d in use), revision %d, compacted to %d",
				i+1, time.Since(began).Round(time.Second), metric("etcd_mvcc_db_total_size_in_bytes"),
				metric("etcd_mvcc_db_total_size_in_use_in_bytes"), metric("etcd_debugging_mvcc_current_revision"),
				metric("etcd_debugging_mvcc_compact_revision"))
		}
	}
	current, compacted := metric("etcd_debugging_mvcc_current_revision"), metric("etcd_debugging_mvcc_compact_revision")
	if kept, bound := current-compacted, int64(etcdstore.DefaultCompactRetain+2*etcdstore.DefaultCompactEvery); kept > bound {
		t.Fatalf("after %d one-dispatch workers the cluster keeps %d revisions of history (revision %d, compacted to %d), want at most %d: the workers must compact from the cluster's revisions, not from a count of their own writes",
			n, kept, current, compacted, bound)
	}
	if size := metric("etcd_mvcc_db_total_size_in_bytes"); size >= quotaBytes {
		t.Fatalf("database of %d bytes reached the quota", size)
	}
}

// A worker warns on stderr, at start, when a member's database reached the configured share of
// the backend quota, and keeps working: here half of a 24 MiB quota, passed by other data
// (to 55 %), far from the NOSPACE alarm. Below it, it says nothing.
//
// Spec: STO-092
func TestEtcdWarnsBeforeTheQuota(t *testing.T) {
	if _, err := etcdstoretest.Binary(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	c, err := etcdstoretest.StartArgs(t.TempDir(), 1, "--quota-backend-bytes", strconv.Itoa(quotaBytes))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	bin := binaries.MustWorker(t, "splashetcd")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "etcd.json")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, `{"dial_timeout_ms": 2000, "op_timeout_ms": 1500, "quota_bytes": %d, "quota_warn_percent": 50}`, quotaBytes), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--journal", journalURL(c, "splash/warn"), "--etcd-config", cfg, "--scope", "warn",
		"--etcd-witness", filepath.Join(dir, "witness.json"), "--effect-log", filepath.Join(dir, "effects.log")}
	session := func(i int) string {
		p := start(t, bin, mustHost(t, "s-"+strconv.Itoa(i)), args...)
		p.write(p.host.Bootstrap())
		p.open(grant(recordTool, 1, 0))
		op := "op-" + strconv.Itoa(i)
		p.call(p.host.Dispatch("d-"+op, recordTool, op, workertest.Record("succeed", `"v"`)),
			fmt.Sprintf(`operation_result succeeded json:{"operation_key":%q,"value":"v"}`, op))
		code, stderr := p.end()
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		return stderr
	}
	if stderr := session(0); strings.Contains(stderr, "warning: etcd member") {
		t.Fatalf("a nearly empty database: %s", stderr)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	filler := make([]byte, 1<<20)
	rnd := rand.New(rand.NewPCG(5, 6))
	for i := 0; ; i++ {
		size, err := c.Metric(0, "etcd_mvcc_db_total_size_in_bytes")
		if err != nil {
			t.Fatal(err)
		}
		if size >= quotaBytes*55/100 {
			break
		}
		for j := range filler {
			filler[j] = byte(rnd.Uint32())
		}
		if _, err := cli.Put(context.Background(), "/other/"+strconv.Itoa(i), string(filler)); err != nil {
			t.Fatal(err)
		}
	}
	stderr := session(1)
	want := fmt.Sprintf("of the %d-byte backend quota (warning at 50%%", quotaBytes)
	if !strings.Contains(stderr, "splash-worker: warning: etcd member "+c.Endpoints()[0]) || !strings.Contains(stderr, want) {
		t.Fatalf("a database past half the quota: stderr %q, want a warning naming the member and %q", stderr, want)
	}
	size, err := c.Metric(0, "etcd_mvcc_db_total_size_in_bytes")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("database %d bytes (%d%% of the quota): %s", int64(size), int64(size)*100/quotaBytes, strings.TrimSpace(stderr))
}
