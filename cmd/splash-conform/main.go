// Command splash-conform runs the Splash worker protocol v5 conformance suite.
//
//	splash-conform [flags] [-- WORKER-COMMAND [ARGS...]]
//	splash-conform host [flags] [-- DRIVER-COMMAND [ARGS...]]
//	splash-conform interop [flags] [-- WORKER-COMMAND [ARGS...]] | -matrix FILE
//	splash-conform report [flags] [NAME=]REPORT.json...
//	splash-conform explore [flags] [-- WORKER-COMMAND [ARGS...]]
//	splash-conform explore host [flags] [-- DRIVER-COMMAND [ARGS...]]
//	splash-conform replay FILE [-- WORKER-COMMAND [ARGS...]]
//
// It launches a worker executable once per check and reports, check by check, what conforms
// (see docs/conformance.md and package conformance/worker, the worker suite on the framework of
// package conformance). Without a worker command it runs against
// the bundled reference worker, cmd/splash-worker. The host subcommand runs the host suite
// (package conformance/host) against a host driver; fake-worker is the worker it plays. The
// interop subcommand (package conformance/interop) drives real workers through real host
// drivers; relay is the mode the host starts in place of the worker, and peer runs the
// misbehaving hosts and workers of the interop self-test corpus. The report subcommand
// (package conformance/implreport) merges the JSON reports of any number of implementations
// into one implementation report. The explore subcommand (package conformance/explore) learns
// a worker's session machine and compares it with the reference worker's, runs long random
// sessions and mutates frames inside them; explore host (package
// conformance/explore/hostexplore) drives a host driver with random command sequences; replay
// runs a replay file the worker explorer wrote again.
//
// splash-conform -version prints the suite version, the protocol version and the digest of
// each suite's check catalog (conformance/CHANGELOG.md). With -expect FILE a run fails only on
// failures the expectations file does not list (docs/porting.md).
//
// It exits with status 0 when every counted check passed, 1 on a failure and 2 on a usage or
// launch error. It links the wire core only (docs/architecture.md); the golden vectors are
// replayed by splash-vectors check.
package main

import (
	"os"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/explore"
	"github.com/splashv5/conform/conformance/explore/hostexplore"
	"github.com/splashv5/conform/conformance/host"
	"github.com/splashv5/conform/conformance/implreport"
	"github.com/splashv5/conform/conformance/interop"
	"github.com/splashv5/conform/conformance/worker"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "host":
			os.Exit(host.Main(os.Args[2:], os.Stdout, os.Stderr))
		case host.FakeWorkerCommand:
			os.Exit(host.FakeWorkerMain(os.Args[2:]))
		case "explore":
			if len(os.Args) > 2 && os.Args[2] == "host" {
				os.Exit(hostexplore.Main(os.Args[3:], os.Stdout, os.Stderr))
			}
			os.Exit(explore.Main(os.Args[2:], os.Stdout, os.Stderr))
		case "replay":
			os.Exit(explore.ReplayMain(os.Args[2:], os.Stdout, os.Stderr))
		case "interop":
			os.Exit(interop.Main(os.Args[2:], os.Stdout, os.Stderr))
		case "report":
			catalogs := implreport.Catalogs{"worker": worker.CatalogEntries(), "host": host.CatalogEntries(), "interop": interop.CatalogEntries()}
			os.Exit(implreport.Main(os.Args[2:], os.Stdout, os.Stderr, catalogs))
		case interop.RelayCommand:
			os.Exit(interop.RelayMain(os.Args[2:]))
		case interop.PeerCommand:
			os.Exit(interop.PeerMain(os.Args[2:]))
		case "-version", "--version":
			// Every suite of this executable: the version, protocol and catalog digests.
			conformance.WriteVersion(os.Stdout, worker.Suite(), host.Suite(), interop.Suite())
			os.Exit(conformance.ExitOK)
		}
	}
	os.Exit(worker.Main(os.Args[1:], os.Stdout, os.Stderr))
}
