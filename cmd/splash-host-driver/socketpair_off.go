//go:build !splashfaults

package main

import "github.com/splashv5/conform/impl/transport"

// runShim does nothing; the test build may run as the socket-pair shim.
func runShim() {}

// socketWorker does nothing; the test build may hand the worker a socket pair.
func socketWorker(*transport.ProcessConfig) {}
