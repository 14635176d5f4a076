package workertest_test

import (
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/splashv5/conform/impl/worker/workertest"
)

func TestOutputCollectsConcurrentWrites(t *testing.T) {
	var out workertest.Output
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				_, _ = out.Write([]byte("ab"))
			}
		})
	}
	wg.Go(func() { _, _ = out.Write([]byte("\nready\n")) })
	out.WaitFor(t, "ready")
	wg.Wait()
	if got := out.String(); len(got) != 8*100*2+len("\nready\n") || strings.Count(got, "ab") < 8*100-1 {
		t.Fatalf("collected %d bytes", len(got))
	}
}

// Binaries builds each package and tag set once: the released and the faulty worker are two
// different executables, and asking again returns the same one.
func TestBinariesBuildOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the reference worker twice")
	}
	var b workertest.Binaries
	defer b.Remove()
	released := b.MustWorker(t)
	faulty := b.MustWorker(t, "splashfaults")
	if again := b.MustWorker(t); again != released || faulty == released {
		t.Fatalf("released %s, again %s, faulty %s", released, again, faulty)
	}
	var exit *exec.ExitError
	if err := exec.Command(released, "--list-faults").Run(); !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("released build --list-faults: %v; want status 2", err)
	}
	if out, err := exec.Command(faulty, "--list-faults").Output(); err != nil || !strings.Contains(string(out), "leak-key\t") {
		t.Fatalf("faulty build --list-faults: %v", err)
	}
	b.Remove()
	if _, err := exec.LookPath(released); err == nil {
		t.Fatal("Remove left the binary")
	}
}
