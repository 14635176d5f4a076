package host

import "github.com/splashv5/conform/conformance/fakeworker"

// FakeWorkerCommand is the argument that selects the fake-worker mode of splash-conform.
const FakeWorkerCommand = fakeworker.Command

// FakeWorkerMain is the fake worker (HDR-030), run with the arguments after FakeWorkerCommand
// (fakeworker.Main).
func FakeWorkerMain(args []string) int { return fakeworker.Main(args) }
