//go:build !splashfaults

package main

// fault is the deliberate host fault of a test build (build tag splashfaults); a default build
// has none, and the compiler removes every faulty branch.
const fault = ""
