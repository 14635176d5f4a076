//go:build race

package worker_test

// raceBuild reports a build with the race detector, which allocates on its own.
const raceBuild = true
