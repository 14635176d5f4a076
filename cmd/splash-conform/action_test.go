package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/host"
	"github.com/splashv5/conform/conformance/worker"
)

// root is the repository root, two levels above this package.
var root = filepath.Join("..", "..")

// runAction runs scripts/conform-action.sh in a fresh working directory with the inputs given
// and returns its exit status, its output and the working directory.
func runAction(t *testing.T, bin string, env map[string]string) (int, string, string) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go tool")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	cmd := exec.Command(bash, filepath.Join(abs, "scripts", "conform-action.sh"))
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "SPLASH_ACTION_PATH="+abs, "SPLASH_BIN="+bin, "GITHUB_STEP_SUMMARY="+filepath.Join(work, "summary.md"))
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, string(out), work
}

// TestActionScriptRunsTheBundledWorker runs the script of action.yml as CI would: it builds
// splash-conform and the bundled worker, runs the worker suite and leaves the three reports,
// which carry the suite version and catalog digest; an expectations file passes through, and
// the suite's exit status is the script's.
func TestActionScriptRunsTheBundledWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("builds splash-conform and runs the worker suite")
	}
	bin := t.TempDir()
	code, out, work := runAction(t, bin, map[string]string{"SPLASH_ARGS": "-run '^CNF-(BOOT|OPEN|FRAME)-' -timeout 20s"})
	if code != 0 || !strings.Contains(out, "splash-conform: CONFORMS") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	reports := filepath.Join(work, "splash-conform-reports")
	for _, name := range []string{"report.html", "report.json", "junit.xml", "output.txt"} {
		data, err := os.ReadFile(filepath.Join(reports, name))
		if err != nil {
			t.Errorf("report %s: %v", name, err)
			continue
		}
		if name != "output.txt" && !strings.Contains(string(data), worker.Suite().CatalogDigest) {
			t.Errorf("%s does not carry the catalog digest", name)
		}
	}
	var report struct {
		Summary conformance.Summary `json:"summary"`
	}
	data, _ := os.ReadFile(filepath.Join(reports, "report.json"))
	if err := json.Unmarshal(data, &report); err != nil || report.Summary.Total < 40 || report.Summary.Passed != report.Summary.Total {
		t.Errorf("JSON report: %v %+v", err, report.Summary)
	}
	if summary, err := os.ReadFile(filepath.Join(work, "summary.md")); err != nil || !strings.Contains(string(summary), "passed, 0 failed") {
		t.Errorf("step summary: %v\n%s", err, summary)
	}

	// A stale entry passes, and fails under expect-strict: the input and the status go through.
	expectations := filepath.Join(t.TempDir(), "expect.json")
	text := `{"format": "splash-conform-expectations", "format_version": 1, "suite": "worker", "expectations": [
  {"id": "CNF-BOOT-01", "outcome": "FAIL", "reason": "fixed since"}]}`
	if err := os.WriteFile(expectations, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SPLASH_ARGS": "-run CNF-BOOT-01", "SPLASH_EXPECT": expectations}
	if code, out, _ := runAction(t, bin, env); code != 0 || !strings.Contains(out, "CNF-BOOT-01 is now PASS: line 2") {
		t.Errorf("a fixed entry: exit %d\n%s", code, out)
	}
	env["SPLASH_EXPECT_STRICT"] = "true"
	if code, out, _ := runAction(t, bin, env); code != 1 {
		t.Errorf("a fixed entry under expect-strict: exit %d, want 1\n%s", code, out)
	}
	// A worker command is split as a shell would and replaces the bundled worker.
	env = map[string]string{"SPLASH_ARGS": "-run CNF-BOOT-01", "SPLASH_COMMAND": "'" + filepath.Join(bin, "no such worker") + "' --journal {journal}"}
	if code, out, _ := runAction(t, bin, env); code != 2 || !strings.Contains(out, "no such worker") {
		t.Errorf("a missing worker command: exit %d, want 2\n%s", code, out)
	}
}

// TestActionScriptRunsTheHostSuite runs the host suite through the same script against the
// bundled reference driver.
func TestActionScriptRunsTheHostSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds splash-conform and the host driver")
	}
	code, out, work := runAction(t, t.TempDir(), map[string]string{"SPLASH_SUITE": "host", "SPLASH_ARGS": "-run CNF-HBOOT-0 -timeout 20s"})
	if code != 0 || !strings.Contains(out, "splash-conform: CONFORMS") || !strings.Contains(out, "host suite") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	data, err := os.ReadFile(filepath.Join(work, "splash-conform-reports", "report.json"))
	if err != nil || !strings.Contains(string(data), host.Suite().CatalogDigest) {
		t.Errorf("host report: %v", err)
	}
}

// TestActionPassesEveryInput checks action.yml against its script: every input the action
// declares reaches the script as the variable the script reads, and the script reads no
// variable the action does not set (but SPLASH_BIN, for tests).
func TestActionPassesEveryInput(t *testing.T) {
	action, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(root, "scripts", "conform-action.sh"))
	if err != nil {
		t.Fatal(err)
	}
	vars := regexp.MustCompile(`\$\{?(SPLASH_[A-Z_]+)`)
	set := regexp.MustCompile(`(?m)^\s+(SPLASH_[A-Z_]+): \$\{\{ (?:inputs\.([a-z-]+)|github\.action_path) \}\}$`)
	declared := regexp.MustCompile(`(?m)^  ([a-z-]+):$`)
	used := regexp.MustCompile(`inputs\.([a-z-]+)`)
	setVars := map[string]bool{}
	for _, m := range set.FindAllStringSubmatch(string(action), -1) {
		setVars[m[1]] = true
	}
	for _, m := range vars.FindAllStringSubmatch(string(script), -1) {
		if !setVars[m[1]] && m[1] != "SPLASH_BIN" {
			t.Errorf("the script reads %s, which action.yml does not set", m[1])
		}
	}
	var inputs []string
	inputsBlock := strings.Split(strings.SplitN(string(action), "\ninputs:\n", 2)[1], "\noutputs:\n")[0]
	for _, m := range declared.FindAllStringSubmatch(inputsBlock, -1) {
		inputs = append(inputs, m[1])
	}
	for _, m := range used.FindAllStringSubmatch(string(action), -1) {
		if !slices.Contains(inputs, m[1]) {
			t.Errorf("action.yml uses inputs.%s, which it does not declare", m[1])
		}
	}
	for _, in := range inputs {
		if !strings.Contains(string(action), "inputs."+in+" ") && !strings.Contains(string(action), "inputs."+in+" }}") {
			t.Errorf("input %s is declared but never used", in)
		}
	}
	if len(inputs) < 6 || len(setVars) < 6 {
		t.Errorf("parsed %d inputs and %d variables from action.yml", len(inputs), len(setVars))
	}
}
