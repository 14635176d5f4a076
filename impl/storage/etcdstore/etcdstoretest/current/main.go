// Command current is the etcd server of a current release (go.etcd.io/etcd/server/v3), built
// only to run the etcd tests against it: `make etcd-current` builds it as etcd and etcdutl in
// a scratch directory and runs the tests with SPLASH_ETCD pointing at it. It lives in a module
// of its own, so the server never enters the main module's dependencies or default builds.
//
// Run as etcdutl it does only "snapshot restore SNAPSHOT --name --initial-cluster
// --initial-cluster-token --initial-advertise-peer-urls --data-dir [--bump-revision N]"
// (with N > 0 the latest revision is also marked compacted, as etcdutl does); otherwise it is
// the etcd server.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.etcd.io/etcd/server/v3/etcdmain"
	"go.uber.org/zap"
)

func main() {
	if filepath.Base(os.Args[0]) != "etcdutl" {
		etcdmain.Main(os.Args)
		return
	}
	if err := restore(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "etcdutl:", err)
		os.Exit(1)
	}
}

func restore(args []string) error {
	if len(args) < 3 || args[0] != "snapshot" || args[1] != "restore" {
		return fmt.Errorf("only snapshot restore SNAPSHOT [flags] is supported")
	}
	cfg := snapshot.RestoreConfig{SnapshotPath: args[2]}
	var peer string
	fs := flag.NewFlagSet("etcdutl snapshot restore", flag.ContinueOnError)
	fs.StringVar(&cfg.Name, "name", "default", "")
	fs.StringVar(&cfg.InitialCluster, "initial-cluster", "", "")
	fs.StringVar(&cfg.InitialClusterToken, "initial-cluster-token", "", "")
	fs.StringVar(&peer, "initial-advertise-peer-urls", "", "")
	fs.StringVar(&cfg.OutputDataDir, "data-dir", "", "")
	fs.Uint64Var(&cfg.RevisionBump, "bump-revision", 0, "")
	if err := fs.Parse(args[3:]); err != nil {
		return err
	}
	cfg.PeerURLs = []string{peer}
	cfg.MarkCompacted = cfg.RevisionBump > 0
	return snapshot.NewV3(zap.NewNop()).Restore(cfg)
}
