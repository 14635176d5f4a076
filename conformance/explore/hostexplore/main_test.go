package hostexplore

import (
	"os"
	"testing"

	"github.com/splashv5/conform/conformance/conformancetest"
	"github.com/splashv5/conform/conformance/fakeworker"
)

// TestMain lets the test binary serve as the fake worker.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == fakeworker.Command {
		os.Exit(fakeworker.Main(os.Args[2:]))
	}
	code := m.Run()
	conformancetest.RemovePrograms()
	os.Exit(code)
}

// testConfig explores driver with this test binary as the fake worker.
func testConfig(t testing.TB, driver string, env ...string) *Config {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &Config{Driver: []string{driver}, FakeWorker: []string{exe, fakeworker.Command}, TempDir: t.TempDir(),
		Env: append(os.Environ(), env...)}
}
