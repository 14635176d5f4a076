package storage

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// childRoleEnv, when set, turns the test binary into a child process that
// plays one role against a shared SQLite database instead of running tests.
const childRoleEnv = "SPLASH_STORAGE_TEST_CHILD"

func TestMain(m *testing.M) {
	switch role := os.Getenv(childRoleEnv); role {
	case "":
		os.Exit(m.Run())
	case "crash-writer":
		os.Exit(runCrashWriter())
	case "linearizability-client":
		os.Exit(runLinearizabilityChild())
	default:
		fmt.Fprintf(os.Stderr, "unknown child role %q\n", role)
		os.Exit(2)
	}
}

// childCommand re-executes the test binary in the given role.
func childCommand(t testing.TB, role string, env ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), append([]string{childRoleEnv + "=" + role}, env...)...)
	cmd.Stderr = os.Stderr
	return cmd
}
