package main

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

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
