package worker

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/conformancetest"
	"github.com/splashv5/conform/impl/bootstrap"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// fakeEnv selects a misbehaving fake worker: the test binary re-executes itself with this
// variable set and then plays the named worker instead of running tests.
const fakeEnv = "SPLASH_CONFORM_FAKE"

// fakePIDFile, when set, receives the pid of a grandchild started by the "orphan" fake.
const fakePIDFile = "SPLASH_CONFORM_FAKE_PIDFILE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(runFake(mode))
	}
	code := m.Run()
	conformancetest.RemovePrograms()
	os.Exit(code)
}

// runFake plays one misbehaving worker.
func runFake(mode string) int {
	in := bufio.NewReader(os.Stdin)
	switch mode {
	case "flood": // one endless line on standard output
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for {
			if _, err := os.Stdout.Write(chunk); err != nil {
				return 1
			}
		}
	case "garbage": // lines that are not frames, while reading its input
		go io.Copy(io.Discard, in)
		for range 100 {
			fmt.Println("garbage, not a frame")
		}
		time.Sleep(time.Hour)
	case "hang": // reads nothing, answers nothing, never exits
		time.Sleep(time.Hour)
	case "exit-early":
		fmt.Fprintln(os.Stderr, "fake: giving up at once")
		return 1
	case "panic":
		if _, err := bootstrap.Read(in); err != nil {
			return 3
		}
		panic("fake worker panics on purpose")
	case "killed": // dies of a signal nobody else sent
		_, _ = bootstrap.Read(in)
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			_ = p.Kill()
		}
		time.Sleep(time.Hour)
	case "echo": // sends every input line back, unauthenticated
		if _, err := bootstrap.Read(in); err != nil {
			return 3
		}
		for {
			line, err := in.ReadBytes('\n')
			if len(line) > 0 {
				os.Stdout.Write(line)
			}
			if err != nil {
				return 0
			}
		}
	case "leak-key": // prints its session key on standard error, then rejects everything
		b, err := bootstrap.Read(in)
		if err != nil {
			return 3
		}
		raw, _ := b.Key.ExposeSecret()
		fmt.Fprintf(os.Stderr, "debug: key=%s\n", hex.EncodeToString(raw[:]))
		return 4
	case "stderr-flood": // 8 MiB of diagnostics, then silence
		line := bytes.Repeat([]byte("e"), 1023)
		line = append(line, '\n')
		for range 8 << 10 {
			os.Stderr.Write(line)
		}
		time.Sleep(time.Hour)
	case "orphan": // starts a grandchild in its process group, then hangs
		cmd := exec.Command("sleep", "3600")
		if err := cmd.Start(); err != nil {
			return 1
		}
		if f := os.Getenv(fakePIDFile); f != "" {
			_ = os.WriteFile(f, []byte(strconv.Itoa(cmd.Process.Pid)), 0o600)
		}
		time.Sleep(time.Hour)
	case "ignore": // reads and discards everything, never answers, never exits
		_, _ = io.Copy(io.Discard, in)
		time.Sleep(time.Hour)
	case "exit-zero": // exits 0 at once without reading or answering anything
		return 0
	case "inspect": // records what it received: the key from the bootstrap, its arguments and environment
		b, err := bootstrap.Read(in)
		if err != nil {
			return 3
		}
		raw, _ := b.Key.ExposeSecret()
		record := hex.EncodeToString(raw[:]) + "\n" + strings.Join(os.Args, "\x00") + "\n" + strings.Join(os.Environ(), "\x00") + "\n"
		f, err := os.OpenFile(os.Getenv(fakePIDFile), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return 1
		}
		f.WriteString(record)
		f.Close()
		return 4
	}
	if mutation, ok := strings.CutPrefix(mode, "proxy-"); ok {
		return runProxy(in, mutation)
	}
	fmt.Fprintf(os.Stderr, "fake: unknown mode %q\n", mode)
	return 2
}

// realWorkerEnv names the worker that a proxy fake runs behind itself.
const realWorkerEnv = "SPLASH_CONFORM_REAL_WORKER"

// runProxy plays a mutant worker: it reads the bootstrap, starts the real worker with the same
// session (and its own arguments), and forwards every input line to it after applying the
// mutation; the real worker's output and standard error pass through unchanged.
//
//	none        forward unchanged (the control: must conform exactly like the real worker)
//	retag       give every frame a correct host tag for its own sequence (no tag check);
//	            lines are read whole, so there is no line cap either
//	resequence  renumber every frame to the next expected sequence and retag it (no replay
//	            or gap check)
//	exit-zero   forward unchanged, but always exit with status 0
//	exit-one    forward unchanged, but exit with status 1 instead of any non-zero status
func runProxy(in *bufio.Reader, mutation string) int {
	status := func(code int) int {
		switch {
		case mutation == "exit-zero":
			return 0
		case mutation == "exit-one" && code != 0:
			return 1
		}
		return code
	}
	b, err := bootstrap.Read(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "proxy: bootstrap:", err)
		return status(3)
	}
	cmd := exec.Command(os.Getenv(realWorkerEnv), os.Args[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	child, err := cmd.StdinPipe()
	if err != nil {
		return 8
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "proxy:", err)
		return 8
	}
	if err := bootstrap.Write(child, b.SessionID, b.Key); err != nil {
		return 8
	}
	plant, planted := plantedBugs[mutation]
	go func() {
		defer child.Close()
		if planted {
			forwardPlanted(in, child, b, plant)
			return
		}
		if mutation != "retag" && mutation != "resequence" {
			_, _ = io.Copy(child, in) // byte for byte, so line limits stay the real worker's
			return
		}
		next := uint64(1)
		for {
			line, err := in.ReadBytes('\n')
			if len(line) > 0 {
				if body, ok := bytes.CutSuffix(line, []byte("\n")); ok {
					if f, derr := protocol.DecodeFrame(body, canonjson.Preserve); derr == nil {
						if mutation == "resequence" {
							f.Sequence = next
						}
						if tag, terr := protocol.ComputeTag(b.Key, b.SessionID, protocol.RoleHost, f.Sequence, f.Message); terr == nil {
							f.Tag = tag
							line = append(f.AppendJSON(nil), '\n')
						}
					}
					next++
				}
				if _, werr := child.Write(line); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	// The proxy ends with the real worker, whatever is left of its own input.
	if err := cmd.Wait(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return status(ee.ExitCode())
		}
		return 8
	}
	return status(0)
}

// runFakeSuite runs the checks selected by pattern against the fake worker mode.
func runFakeSuite(t *testing.T, mode, pattern string, timeout time.Duration, env ...string) *conformance.Report {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Worker: []string{exe},
		RunConfig: conformance.RunConfig{Run: pattern, Timeout: timeout, Parallel: 4, Env: append(append(os.Environ(), fakeEnv+"="+mode), env...), TempDir: t.TempDir()}}
	report, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	conformancetest.CheckCitations(t, report)
	return report
}

func resultOf(t *testing.T, r *conformance.Report, id string) conformance.Result {
	t.Helper()
	for _, res := range r.Results {
		if res.ID == id {
			return res
		}
	}
	t.Fatalf("no result for %s", id)
	return conformance.Result{}
}

// Spec: BOOT-022
// TestFakeWorkers runs a check that expects an answer (CNF-PROFILE-01) and a check that
// expects a rejection (CNF-FRAME-02) against workers that misbehave in every way a process
// can, and requires the right outcome within the time limit and bounded memory.
func TestFakeWorkers(t *testing.T) {
	// Workers that never answer must cost the time limit, which is kept short; every other
	// failure must show at once, well within a generous limit that a slow machine cannot hit.
	const short, long = 1500 * time.Millisecond, 10 * time.Second
	cases := []struct {
		mode             string
		answer, reject   conformance.Outcome
		detail           string // substring of the answer check's detail
		slowAnswerReject bool   // whether the answer check may use its whole time limit
	}{
		{mode: "flood", answer: conformance.Fail, reject: conformance.Fail, detail: "longer than 1 MiB"},
		{mode: "garbage", answer: conformance.Fail, reject: conformance.Fail, detail: "cannot open"},
		{mode: "hang", answer: conformance.Timeout, reject: conformance.Timeout, detail: "waiting for a result", slowAnswerReject: true},
		// A worker that exits 1 at once meets the MUST part of a rejection check (no answer, a
		// non-zero exit); only the status class, a SHOULD, tells it apart (WRK-096, WRK-097).
		{mode: "exit-early", answer: conformance.Fail, reject: conformance.Info, detail: "exited with status 1 (not a documented exit status); stderr: fake: giving up at once"},
		{mode: "panic", answer: conformance.Crash, reject: conformance.Crash, detail: "runtime crash report"},
		{mode: "killed", answer: conformance.Crash, reject: conformance.Crash, detail: "killed by signal killed"},
		{mode: "echo", answer: conformance.Fail, reject: conformance.Fail, detail: "cannot open"},
		{mode: "leak-key", answer: conformance.Fail, reject: conformance.Fail, detail: "session key"},
		{mode: "ignore", answer: conformance.Timeout, reject: conformance.Timeout, detail: "waiting for", slowAnswerReject: true},
		{mode: "exit-zero", answer: conformance.Fail, reject: conformance.Fail, detail: "exited with status 0"},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			limit := long
			if tc.slowAnswerReject {
				limit = short
			}
			start := time.Now()
			r := runFakeSuite(t, tc.mode, "^CNF-(PROFILE-01|FRAME-02)$", limit)
			took := time.Since(start)
			answer, reject := resultOf(t, r, "CNF-PROFILE-01"), resultOf(t, r, "CNF-FRAME-02")
			if answer.Outcome != tc.answer || !strings.Contains(answer.Detail, tc.detail) {
				t.Errorf("answer check: %s %q; want %s containing %q", answer.Outcome, answer.Detail, tc.answer, tc.detail)
			}
			if reject.Outcome != tc.reject {
				t.Errorf("rejection check: %s %q; want %s", reject.Outcome, reject.Detail, tc.reject)
			}
			if r.ExitCode() != 1 {
				t.Errorf("exit code %d; want 1", r.ExitCode())
			}
			if bound := limit + 3*time.Second; took > bound {
				t.Errorf("the two checks took %v; a misbehaving worker must cost at most about the time limit", took)
			}
			if !tc.slowAnswerReject && answer.Duration >= limit {
				t.Errorf("the answer check used its whole time limit (%v) although the failure is visible at once", answer.Duration)
			}
		})
	}
}

// TestBootstrapChecksAgainstFakes checks that a rejection check does not pass for a worker
// that exits with the wrong status or ignores its input.
func TestBootstrapChecksAgainstFakes(t *testing.T) {
	r := runFakeSuite(t, "exit-zero", "^CNF-BOOT-0[1-3]$", 10*time.Second)
	for _, res := range r.Results {
		if res.Outcome != conformance.Fail || !strings.Contains(res.Actual, "status 0") {
			t.Errorf("%s: %s %q; want FAIL naming status 0", res.ID, res.Outcome, res.Detail)
		}
	}
}

// TestStderrIsBounded floods standard error and checks the excerpt stays small.
func TestStderrIsBounded(t *testing.T) {
	r := runFakeSuite(t, "stderr-flood", "^CNF-PROFILE-01$", 3*time.Second)
	res := resultOf(t, r, "CNF-PROFILE-01")
	if res.Outcome != conformance.Timeout {
		t.Errorf("outcome %s; want TIMEOUT", res.Outcome)
	}
	if n := len(res.Stderr); n == 0 || n > stderrHeadBytes+stderrTailBytes+200 {
		t.Errorf("stderr excerpt of %d bytes; want a non-empty excerpt of at most %d", n, stderrHeadBytes+stderrTailBytes+200)
	}
	if !strings.Contains(res.Stderr, "bytes left out") {
		t.Error("the excerpt does not say that bytes were left out")
	}
}

// TestFloodMemoryIsBounded measures the heap growth of a check against a worker that writes
// an endless line: the runner keeps at most one line of 1 MiB and a small buffer.
func TestFloodMemoryIsBounded(t *testing.T) {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	runFakeSuite(t, "flood", "^CNF-PROFILE-01$", 10*time.Second)
	runtime.ReadMemStats(&after)
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 48<<20 {
		t.Errorf("a flooding worker cost %d MiB of allocation; want a bounded few MiB", grown>>20)
	}
}

// TestProcessGroupIsKilled checks that a grandchild the worker started dies with it.
func TestProcessGroupIsKilled(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("uses /proc")
	}
	pidFile := t.TempDir() + "/grandchild.pid"
	runFakeSuite(t, "orphan", "^CNF-PROFILE-01$", 3*time.Second, fakePIDFile+"="+pidFile)
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the fake did not record its grandchild: %v", err)
	}
	pid, _ := strconv.Atoi(string(data))
	deadline := time.Now().Add(2 * time.Second)
	for {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		// Gone, or a zombie waiting for init to reap it: either way it no longer runs.
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d still runs after the check ended", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Spec: FRM-041, FRM-043, BOOT-016, BOOT-017
// TestKeysTravelOnlyInTheBootstrap has a fake worker record the key it read from its
// bootstrap, its arguments and its environment: every launch must get a different key, and
// no key may appear in any argument or environment variable.
func TestKeysTravelOnlyInTheBootstrap(t *testing.T) {
	record := t.TempDir() + "/received"
	runFakeSuite(t, "inspect", "^CNF-(PROFILE-0[1-4]|FRAME-0[1-4])$", 10*time.Second, fakePIDFile+"="+record)
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 8*3 {
		t.Fatalf("%d record lines; want 3 per launch for 8 launches", len(lines))
	}
	keys := map[string]bool{}
	for i := 0; i < len(lines); i += 3 {
		key, args, env := lines[i], lines[i+1], lines[i+2]
		if len(key) != 64 || keys[key] {
			t.Errorf("launch %d: key %q is malformed or was used before", i/3, key[:min(8, len(key))])
		}
		keys[key] = true
		for _, form := range []string{key, strings.ToUpper(key)} {
			if strings.Contains(args, form) || strings.Contains(env, form) {
				t.Errorf("launch %d: the session key appears in the arguments or the environment", i/3)
			}
		}
	}
}

// TestLaunchError checks that a worker command that cannot start is a launch error.
func TestLaunchError(t *testing.T) {
	_, err := Run(context.Background(), Config{RunConfig: conformance.RunConfig{TempDir: t.TempDir()}, Worker: []string{"/nonexistent/splash-worker"}})
	if _, ok := err.(*conformance.LaunchError); !ok {
		t.Fatalf("err = %v; want a *LaunchError", err)
	}
	var out, errOut bytes.Buffer
	if code := Main([]string{"--", "/nonexistent/splash-worker"}, &out, &errOut); code != conformance.ExitUsage {
		t.Errorf("Main exit %d; want %d", code, conformance.ExitUsage)
	}
}

// TestMainExitCodes checks the exit statuses and the closing line of the command.
func TestMainExitCodes(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(fakeEnv, "exit-early")
	var out, errOut bytes.Buffer
	code := Main([]string{"-run", "^CNF-PROFILE-0[1-3]$", "-timeout", "10s", "--", exe}, &out, &errOut)
	if code != conformance.ExitFailures {
		t.Errorf("exit %d; want %d\n%s%s", code, conformance.ExitFailures, out.String(), errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; last != "0 passed, 3 failed, 0 skipped" {
		t.Errorf("closing line %q", last)
	}
	for _, bad := range [][]string{{"-bogus"}, {"-run", "CNF-("}, {"-run", "NOTHING-MATCHES"}, {"-timeout", "0s", "--", exe}, {"-without", "teleport", "--", exe}} {
		out.Reset()
		errOut.Reset()
		if code := Main(bad, &out, &errOut); code != conformance.ExitUsage {
			t.Errorf("Main(%q) exit %d; want %d", bad, code, conformance.ExitUsage)
		}
	}
	out.Reset()
	if code := Main([]string{"-list", "-run", "CNF-BOOT"}, &out, &errOut); code != conformance.ExitOK || !strings.Contains(out.String(), "CNF-BOOT-01") {
		t.Errorf("-list exit %d, output:\n%s", code, out.String())
	}
}

// TestSkipWithoutPlaceholders checks that checks needing a journal or an effect log are
// skipped for a worker command that declares neither, and that -without skips more.
func TestSkipWithoutPlaceholders(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	report, err := Run(context.Background(), Config{Worker: []string{exe}, Without: []Need{NeedCancel},
		RunConfig: conformance.RunConfig{Run: "^CNF-(DURABLE-1[45]|CANCEL-01)$", Env: append(os.Environ(), fakeEnv+"=exit-early"), TempDir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range report.Results {
		if res.Outcome != conformance.Skip {
			t.Errorf("%s: %s; want SKIP", res.ID, res.Outcome)
		}
	}
	if report.ExitCode() != 0 {
		t.Error("skipped checks failed the run")
	}
}

// TestNoCheckPassesVacuously runs the whole catalog against workers that do nothing (exit 0
// at once) and that exit with a status outside WRK-092: no check may pass against them.
func TestNoCheckPassesVacuously(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"exit-zero", "exit-early"} {
		report, err := Run(context.Background(), Config{
			RunConfig: conformance.RunConfig{Timeout: 10 * time.Second, Parallel: 8, Env: append(os.Environ(), fakeEnv+"="+mode), TempDir: t.TempDir()},
			Worker: []string{exe, "--journal", conformance.PlaceholderJournal, "--effects", conformance.PlaceholderEffects, "--write-trigger", conformance.PlaceholderStoreFault,
				"--storage-key-file", conformance.PlaceholderStorageKey, "--secret-source", conformance.PlaceholderSecretSource, "--scope", conformance.PlaceholderScope},
			Strict: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range report.Results {
			if r.Outcome == conformance.Pass || r.Outcome == conformance.Skip {
				t.Errorf("%s: %s against a worker that does nothing (%s)", r.ID, r.Outcome, mode)
			}
		}
	}
}

// plantedBug is a decoding or validation bug that a proxy plants in front of the real worker:
// reject makes the proxy end the session with status 4 at the first line holding it (a worker
// whose decoder or canonical form differs fails that frame), and rewrite turns a line the real
// worker rejects into one it accepts (a worker too lenient to see the difference), re-tagged
// as the host would tag what the lenient worker reads.
type plantedBug struct {
	reject  []string
	rewrite func(line []byte) []byte
}

// replaceAll returns a rewrite that replaces old by new.
func replaceAll(old, new string) func([]byte) []byte {
	return func(line []byte) []byte { return bytes.ReplaceAll(line, []byte(old), []byte(new)) }
}

// plantedBugs are the proxy mutants that plant one bug each (see proxyMutants).
var plantedBugs = map[string]plantedBug{
	"utf16-key-order":            {reject: []string{"\ue000"}},
	"hash-wire-numbers":          {reject: []string{"1E2"}},
	"no-private-number":          {reject: []string{"$serde_json::private::Number"}},
	"reject-body-minus-zero":     {reject: []string{":-0,", ":-0}"}},
	"reject-positional":          {reject: []string{`"invocation":[`}},
	"reject-positional-payload":  {reject: []string{`"payload":["`}},
	"reject-positional-manifest": {reject: []string{`"manifest":[`}},
	"require-sorted-resources":   {reject: []string{`"secret-01"},{"kind":"secret","id":"secret-00"`}},
	"refuse-mixed-manifest":      {reject: []string{`"tool":"conf.slow.cancellable"`}},
	"accept-unknown-members":     {rewrite: replaceAll(`"x_extra":true,`, "")},
	"accept-repeated-field":      {rewrite: replaceAll(`"tool":"conf.text.echo","tool":"conf.text.echo"`, `"tool":"conf.text.echo"`)},
	"accept-float-integer":       {rewrite: replaceAll(`"protocol_version":5.0,`, `"protocol_version":5,`)},
	"no-depth-limit":             {rewrite: func(line []byte) []byte { return cutMember(line, `"x_deep":`) }},
	"no-tag-input-check":         {rewrite: func(line []byte) []byte { return shrinkRun(line, 'x', 1<<20-4096) }},
	"accept-unknown-format":      {rewrite: replaceAll(`"format":"xml"`, `"format":"text"`)},
	"accept-unknown-kind":        {rewrite: replaceAll(`"kind":"database"`, `"kind":"secret"`)},
	"accept-compensation-key":    {rewrite: replaceAll(`"compensation_key":"undo-1"`, `"compensation_key":"cmp-undo-1"`)},
}

// cutMember removes the member whose key is key (its value being nested arrays) and the comma
// after it.
func cutMember(line []byte, key string) []byte {
	i := bytes.Index(line, []byte(key))
	if i < 0 {
		return line
	}
	j := i + len(key)
	for j < len(line) && (line[j] == '[' || line[j] == ']') {
		j++
	}
	if j < len(line) && line[j] == ',' {
		j++
	}
	return append(bytes.Clone(line[:i]), line[j:]...)
}

// shrinkRun shortens the first run of c longer than n to n bytes.
func shrinkRun(line []byte, c byte, n int) []byte {
	run := bytes.Repeat([]byte{c}, n+1)
	i := bytes.Index(line, run)
	if i < 0 {
		return line
	}
	j := i
	for j < len(line) && line[j] == c {
		j++
	}
	return append(bytes.Clone(line[:i+n]), line[j:]...)
}

// forwardPlanted forwards the proxy's input line by line with the bug planted.
func forwardPlanted(in *bufio.Reader, child io.Writer, b bootstrap.Bootstrap, plant plantedBug) {
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			for _, r := range plant.reject {
				if bytes.Contains(line, []byte(r)) {
					fmt.Fprintf(os.Stderr, "proxy: planted bug: rejecting a frame holding %q\n", r)
					os.Exit(4)
				}
			}
			if plant.rewrite != nil {
				if body, ok := bytes.CutSuffix(line, []byte("\n")); ok {
					if changed := plant.rewrite(body); !bytes.Equal(changed, body) {
						line = append(retagged(changed, b), '\n')
					}
				}
			}
			if _, werr := child.Write(line); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// retagged returns the frame line with the tag the host computes for its decoded message, or
// the line unchanged when it does not decode.
func retagged(line []byte, b bootstrap.Bootstrap) []byte {
	f, err := protocol.DecodeFrame(line, canonjson.Preserve)
	if err != nil {
		return line
	}
	tag, err := protocol.ComputeTag(b.Key, b.SessionID, protocol.RoleHost, f.Sequence, f.Message)
	if err != nil {
		return line
	}
	f.Tag = tag
	return f.AppendJSON(nil)
}
