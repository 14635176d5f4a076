// Package conformancetest holds what the tests of the conformance suites share: the reference
// programs, built once per test binary, a misbehaving driver's command loop, and the process
// groups a run left behind. It is imported by tests only.
package conformancetest

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/splashv5/conform/internal/childproc"
)

// Survivors returns the process groups recorded in dir (one file a leader, named by its
// pid) that still have a live process once grace has passed. A group killed a moment ago may
// take a little while to die, so it polls until none is left or grace is over.
func Survivors(t testing.TB, dir string, grace time.Duration) []int {
	t.Helper()
	deadline := time.Now().Add(grace)
	for {
		left := alive(t, dir)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive returns the process groups recorded in dir that have a live process now.
func alive(t testing.TB, dir string) []int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err == nil && childproc.GroupAlive(pid) {
			out = append(out, pid)
		}
	}
	return out
}
