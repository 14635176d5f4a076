//go:build !splashfaults || !linux

package main

import "github.com/splashv5/conform/impl/transport"

// runShim does nothing; the test build on Linux may run as the socket-pair shim.
func runShim() {}

// socketWorker does nothing; the test build on Linux may hand the worker a socket pair.
func socketWorker(*transport.ProcessConfig) {}
