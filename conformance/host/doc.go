// Package host is the host conformance suite: it judges a host port by playing its worker.
//
// The runner starts the port's host driver (spec/30-host-driver.md), tells it to start the
// runner's own fake worker (a mode of the splash-conform binary, conformance/fakeworker), and checks
// what the fake worker saw (its argv, environment, bootstrap bytes and every frame) and how the
// host treated the answers the check scripted, correct or hostile. Its checks, run loop and
// command line are the framework's (package conformance); it drives the driver through
// conformance/driver. Like the worker suite,
// it links the wire core only.
package host
