//go:build race

package host

// raceBuild reports a build with the race detector, whose binaries start and run several
// times slower.
const raceBuild = true
