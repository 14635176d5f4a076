//go:build splashfaults

package main

import "os"

// fault is the deliberate host fault the mutation harness selects with SPLASH_HOST_FAULT; this
// file exists only in the test build (build tag splashfaults).
var fault = os.Getenv("SPLASH_HOST_FAULT")
