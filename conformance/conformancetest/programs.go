package conformancetest

import (
	"testing"

	"github.com/splashv5/conform/internal/childproc"
)

// Packages of the module's reference programs, relative to the module root.
const (
	WorkerPackage = "./cmd/splash-worker"
	DriverPackage = "./cmd/splash-host-driver"
)

// programs holds the programs built for this test binary.
var programs childproc.Builds

// Program returns the path of pkg built with tags ("splashfaults": the faulty build of the
// mutation tests), building it on first use in this test binary; it fails t when the build
// does. TestMain calls RemovePrograms after the tests.
func Program(t testing.TB, pkg string, tags ...string) string {
	t.Helper()
	path, err := programs.Build(pkg, tags...)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// RemovePrograms deletes every program Program built.
func RemovePrograms() { programs.Remove() }
